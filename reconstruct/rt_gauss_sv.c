/* Spatially varying Gaussian reconstruction by repeated integration (Heckbert 1986): the data
 * (S, S.I_0, S.I_1, ...) is integrated twice along x and twice along y; a second difference with
 * taps at -r-1, -1, r-1 per axis then yields the tent of half-width r centred on the pixel, for a
 * width chosen per pixel at constant cost. A fractional r = r0 + a interpolates the tables between
 * integer taps, which is the (1-a, a) blend of the tents of r0 and r0 + 1: 5 taps per axis.
 *
 * Precision: a table of four integrations grows like (W^2/2)(H^2/2) times the data, ~1e11 for
 * 820x614 and ~2e12 at 2048x1536, where a double's ulp (up to 4e-4) would swamp the small weights
 * at the edge of a tent. So the tables are built per tile of T x T output pixels, over the tile
 * plus a halo of the tile's largest radius, and restart from zero there. That is exact, not an
 * approximation: the second difference annihilates functions linear in either coordinate, which
 * is all a restart changes, as long as every tap lies in the table (the halo makes sure). The
 * halo may reach past the image, where the data is zero: samples outside the image are absent,
 * and no tap ever needs a special case. */
#include "reconstruct/runtime.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SV_TILE 64
/* Channels filtered together with the denominator: the table holds 1 + SV_GROUP doubles per
 * entry, so one tap reads them from one or two cache lines. */
#define SV_GROUP 7

double pf_rt_tent_radius(double sigma)
{
    if (!(sigma > 0.0))
        return 1.0;
    double r = sqrt(6.0 * sigma * sigma + 1.0);
    return r < PF_RT_SV_MAX_RADIUS ? r : PF_RT_SV_MAX_RADIUS;
}

/* What every tile shares. */
typedef struct sv_job {
    float *data;
    int w, h;
    size_t stride, plane;
    const uint8_t *mask;
    const float *sigma;
    int c0, nc; /* channels c0 .. c0 + nc - 2; nc doubles per table entry (denominator first) */
    uint8_t *where; /* skipped pixels whose weight is too small: nearest instead */
    int any_where;  /* this task marked some */
    int *where_any; /* some task did (shared) */
    double *tab, *acc, *xrow;  /* the task's own tables */
} sv_job;

/* A tile's output pixels [x0, x1) x [y0, y1) and its table, which covers the integer positions
 * kx in [X0 - 1, X1], ky in [Y0 - 1, Y1] (index 0 of each axis is the all-zero X0 - 1). */
typedef struct sv_tile {
    int x0, x1, y0, y1;
    int X0, X1, Y0, Y1;
    int tw, th;
} sv_tile;

/* The 5 taps of one axis for radius r: offsets from the pixel and their weights. */
typedef struct sv_taps {
    int off[5];
    double wt[5];
} sv_taps;

static void sv_make_taps(double r, sv_taps *t)
{
    int r0 = (int)r;
    double a = r - r0;
    t->off[0] = r0 - 1, t->wt[0] = 1.0 - a;
    t->off[1] = r0, t->wt[1] = a;
    t->off[2] = -1, t->wt[2] = -2.0;
    t->off[3] = -r0 - 1, t->wt[3] = 1.0 - a;
    t->off[4] = -r0 - 2, t->wt[4] = a;
}

/* Integrates one row ky twice along x over [X0, X1] into xrow, entry 0 being X0 - 1 (zero).
 * Outside the image the data is zero. nc is a constant where this is expanded. */
#define SV_XINTEGRATE(NC)                                                                        \
    static void sv_xintegrate_##NC(const sv_job *j, const sv_tile *t, int ky, int nc)           \
    {                                                                                            \
        double s1[1 + SV_GROUP] = { 0 }, s2[1 + SV_GROUP] = { 0 }, *o = j->xrow;                 \
        int inside = ky >= 0 && ky < j->h;                                                       \
        const uint8_t *m = inside ? j->mask + (size_t)ky * (size_t)j->w : NULL;                  \
        const float *src = j->data + (size_t)j->c0 * j->plane + (size_t)(inside ? ky : 0) *      \
                                                                 j->stride;                      \
        (void)nc;                                                                                \
        for (int c = 0; c < NC; c++)                                                             \
            o[c] = 0.0;                                                                          \
        for (int kx = t->X0; kx <= t->X1; kx++) {                                                \
            o += NC;                                                                             \
            if (inside && kx >= 0 && kx < j->w && m[kx]) {                                       \
                s1[0] += 1.0;                                                                    \
                for (int c = 1; c < NC; c++)                                                     \
                    s1[c] += src[(size_t)(c - 1) * j->plane + (size_t)kx];                       \
            }                                                                                    \
            for (int c = 0; c < NC; c++) {                                                       \
                s2[c] += s1[c];                                                                  \
                o[c] = s2[c];                                                                    \
            }                                                                                    \
        }                                                                                        \
    }

/* The 25-tap sum at table entry base: ox/oy are the taps' offsets in doubles. */
#define SV_SUM(NC)                                                                               \
    static void sv_sum_##NC(const double *base, const ptrdiff_t *ox, const ptrdiff_t *oy,        \
                            const double *wt, int nc, double *acc)                               \
    {                                                                                            \
        (void)nc;                                                                                \
        for (int c = 0; c < NC; c++)                                                             \
            acc[c] = 0.0;                                                                        \
        for (int b = 0; b < 5; b++) {                                                            \
            const double *row = base + oy[b];                                                    \
            const double *t0 = row + ox[0], *t1 = row + ox[1], *t2 = row + ox[2];                \
            const double *t3 = row + ox[3], *t4 = row + ox[4];                                   \
            for (int c = 0; c < NC; c++)                                                         \
                acc[c] += wt[b] * (wt[0] * t0[c] + wt[1] * t1[c] + wt[2] * t2[c] +               \
                                   wt[3] * t3[c] + wt[4] * t4[c]);                               \
        }                                                                                        \
    }

/* One channel plus the denominator, three channels (RGB) plus it, a full group, and any other
 * count: constant trip counts let the compiler unroll and vectorise the channel loops. */
SV_XINTEGRATE(2)
SV_XINTEGRATE(4)
SV_XINTEGRATE(8)
SV_XINTEGRATE(nc)
SV_SUM(2)
SV_SUM(4)
SV_SUM(8)
SV_SUM(nc)

static void sv_xintegrate(const sv_job *j, const sv_tile *t, int ky)
{
    switch (j->nc) {
    case 2: sv_xintegrate_2(j, t, ky, 2); break;
    case 4: sv_xintegrate_4(j, t, ky, 4); break;
    case 8: sv_xintegrate_8(j, t, ky, 8); break;
    default: sv_xintegrate_nc(j, t, ky, j->nc); break;
    }
}

static void sv_sum(const double *base, const ptrdiff_t *ox, const ptrdiff_t *oy,
                   const double *wt, int nc, double *acc)
{
    switch (nc) {
    case 2: sv_sum_2(base, ox, oy, wt, 2, acc); break;
    case 4: sv_sum_4(base, ox, oy, wt, 4, acc); break;
    case 8: sv_sum_8(base, ox, oy, wt, 8, acc); break;
    default: sv_sum_nc(base, ox, oy, wt, nc, acc); break;
    }
}

/* Builds the tile's table: rows integrated twice along x, then twice along y. */
static void sv_build(const sv_job *j, const sv_tile *t)
{
    size_t row = (size_t)t->tw * (size_t)j->nc;
    memset(j->tab, 0, row * sizeof(double));
    memset(j->acc, 0, row * sizeof(double));
    for (int ly = 1; ly < t->th; ly++) {
        sv_xintegrate(j, t, t->Y0 - 1 + ly);
        const double *prev = j->tab + (size_t)(ly - 1) * row;
        double *cur = j->tab + (size_t)ly * row;
        for (size_t i = 0; i < row; i++) {
            j->acc[i] += j->xrow[i];
            cur[i] = prev[i] + j->acc[i];
        }
    }
}

/* Largest tent radius over the skipped pixels of [x0,x1) x [y0,y1); 0 if none is skipped.
 * The radius grows with sigma, so one square root of the largest sigma suffices. */
static double sv_max_radius(const uint8_t *mask, const float *sigma, int w, int x0, int x1,
                            int y0, int y1)
{
    float smax = 0.0f;
    int any = 0;
    for (int y = y0; y < y1; y++) {
        const uint8_t *m = mask + (size_t)y * (size_t)w;
        const float *sr = sigma + (size_t)y * (size_t)w;
        for (int x = x0; x < x1; x++)
            if (!m[x]) {
                float sg = sr[x];
                smax = sg > smax ? sg : smax; /* NaN and negatives stay out */
                any = 1;
            }
    }
    return any ? pf_rt_tent_radius(smax) : 0.0;
}

/* Normalises one pixel's sums into the data, or marks it for the nearest fallback. */
static void sv_store(sv_job *j, int x, int y, double r, const double *acc)
{
    if (!(acc[0] >= PF_RT_SV_MIN_WEIGHT * r * r)) {
        j->where[(size_t)y * (size_t)j->w + (size_t)x] = 1;
        j->any_where = 1;
        return;
    }
    size_t at = (size_t)y * j->stride + (size_t)x;
    double inv = 1.0 / acc[0];
    for (int c = 1; c < j->nc; c++)
        j->data[(size_t)(j->c0 + c - 1) * j->plane + at] = (float)(acc[c] * inv);
}

static void sv_tile_run(sv_job *j, sv_tile *t)
{
    double rmax = sv_max_radius(j->mask, j->sigma, j->w, t->x0, t->x1, t->y0, t->y1);
    if (rmax == 0.0)
        return;
    /* Taps reach from -r0-2 to r0 <= halo-1 around the pixel (see sv_make_taps). */
    int halo = (int)rmax + 1;
    t->X0 = t->x0 - halo;
    t->Y0 = t->y0 - halo;
    t->X1 = t->x1 - 2 + halo;
    t->Y1 = t->y1 - 2 + halo;
    t->tw = t->X1 - t->X0 + 2;
    t->th = t->Y1 - t->Y0 + 2;
    sv_build(j, t);
    ptrdiff_t nc = j->nc, row = (ptrdiff_t)t->tw * nc;
    for (int y = t->y0; y < t->y1; y++) {
        size_t o = (size_t)y * (size_t)j->w;
        const double *rowbase = j->tab + (ptrdiff_t)(y - t->Y0 + 1) * row;
        const uint8_t *m = j->mask + o;
        const float *sr = j->sigma + o;
        for (int x = t->x0; x < t->x1; x++) {
            if (m[x])
                continue;
            /* acc[0] set for GCC -O3, which cannot see that nc >= 1 entries are summed */
            double r = pf_rt_tent_radius(sr[x]), acc[1 + SV_GROUP];
            acc[0] = 0.0;
            sv_taps tp;
            sv_make_taps(r, &tp);
            ptrdiff_t ox[5], oy[5];
            for (int a = 0; a < 5; a++) {
                ox[a] = tp.off[a] * nc;
                oy[a] = tp.off[a] * row;
            }
            sv_sum(rowbase + (ptrdiff_t)(x - t->X0 + 1) * nc, ox, oy, tp.wt, (int)nc, acc);
            sv_store(j, x, y, r, acc);
        }
    }
}

/* What a task of sv_group needs beyond the job: the tile size and the tables' size. */
typedef struct sv_rows {
    const sv_job *j;
    int tile;
    size_t row, span;  /* doubles per table row, table rows */
} sv_rows;

/* Tile rows [begin, end) of one group of channels, with tables of the task's own (the tiles
 * write disjoint pixels of data and where). */
static int32_t sv_tile_rows(void *closure, int32_t begin, int32_t end)
{
    const sv_rows *r = closure;
    sv_job j = *r->j;
    j.any_where = 0;
    j.tab = malloc(r->row * r->span * sizeof(double));
    j.acc = malloc(r->row * sizeof(double));
    j.xrow = malloc(r->row * sizeof(double));
    int32_t rc = j.tab && j.acc && j.xrow ? PF_RT_OK : PF_RT_ENOMEM;
    for (int32_t ty = begin; rc == PF_RT_OK && ty < end; ty++) {
        int y0 = ty * r->tile;
        for (int x0 = 0; x0 < j.w; x0 += r->tile) {
            sv_tile t = { .x0 = x0, .y0 = y0 };
            t.x1 = x0 + r->tile < j.w ? x0 + r->tile : j.w;
            t.y1 = y0 + r->tile < j.h ? y0 + r->tile : j.h;
            sv_tile_run(&j, &t);
        }
    }
    if (j.any_where)
        __atomic_store_n(&r->j->where_any[0], 1, __ATOMIC_RELAXED);
    free(j.tab);
    free(j.acc);
    free(j.xrow);
    return rc;
}

static int sv_args_ok(const float *data, int w, int h, int channels, size_t stride, size_t plane,
                      const uint8_t *mask, const float *sigma)
{
    return data && mask && sigma && w > 0 && h > 0 && channels >= 1 && stride >= (size_t)w &&
           (channels == 1 || plane >= stride * (size_t)h);
}

/* Every channel group (its rows of tiles split across threads), then the nearest fallback. */
static int sv_run(sv_job *j, int channels, int tile, size_t span, pf_par_for par)
{
    int ncmax = 1 + (channels < SV_GROUP ? channels : SV_GROUP);
    sv_rows r = { j, tile, span * (size_t)ncmax, span };
    for (j->c0 = 0; j->c0 < channels; j->c0 += SV_GROUP) {
        j->nc = 1 + (channels - j->c0 < SV_GROUP ? channels - j->c0 : SV_GROUP);
        int rc = pf_par_run(par, sv_tile_rows, &r, (j->h + tile - 1) / tile);
        if (rc != PF_RT_OK)
            return rc;
    }
    if (!j->where_any[0])
        return PF_RT_OK;
    return pf_rt_recon_nearest_at_par(j->data, j->w, j->h, channels, j->stride, j->plane,
                                      j->mask, j->where, par);
}

int pf_rt_recon_gaussian_sv_par(float *data, int w, int h, int channels, size_t stride,
                                size_t plane, const uint8_t *mask, const float *sigma_map,
                                pf_par_for par)
{
    if (!sv_args_ok(data, w, h, channels, stride, plane, mask, sigma_map))
        return PF_RT_EINVAL;
    double rmax = sv_max_radius(mask, sigma_map, w, 0, w, 0, h);
    if (rmax == 0.0)
        return PF_RT_OK; /* nothing skipped */
    int halo = (int)rmax + 1;
    /* Tiles grow with the largest radius so that the halo costs at most ~4x the tile. */
    int tile = 2 * halo > SV_TILE ? 2 * halo : SV_TILE;
    size_t span = (size_t)tile + 2 * (size_t)halo + 2;
    int any = 0;
    sv_job j = { .data = data, .w = w, .h = h, .stride = stride, .plane = plane, .mask = mask,
                 .sigma = sigma_map, .where_any = &any };
    j.where = pf_rt_scratch_zero((size_t)w * (size_t)h);
    int rc = j.where ? sv_run(&j, channels, tile, span, par) : PF_RT_ENOMEM;
    pf_rt_scratch_free(j.where);
    return rc;
}

int pf_rt_recon_gaussian_sv(float *data, int w, int h, int channels, size_t stride, size_t plane,
                            const uint8_t *mask, const float *sigma_map)
{
    return pf_rt_recon_gaussian_sv_par(data, w, h, channels, stride, plane, mask, sigma_map,
                                       NULL);
}
