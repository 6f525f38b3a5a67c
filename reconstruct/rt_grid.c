/* Grid sampling in store mode: the 2-D grid mask, and N-D multilinear and nearest-grid-point
 * filling of a full-size array whose computed samples sit on a grid anchored at the loop start.
 * Both fills are separable, one pass per dimension with spacing > 1: pass d fills the positions
 * of dimension d between samples, on every line whose coordinates in dimensions > d are sample
 * coordinates (dimensions < d were filled by earlier passes). The inner loops run along dimension
 * 0 so that they stream through contiguous memory. */
#include "reconstruct/runtime.h"

#include <stdlib.h>
#include <string.h>

#define RT_MAX_DIMS 4
#define RT_MAX_SPACING 65  /* fill_row0's weight tables; larger spacings take the general path */

int pf_rt_grid_mask(int w, int h, int ox, int oy, int sx, int sy, uint8_t *mask, size_t *count)
{
    if (!mask || w <= 0 || h <= 0 || sx < 1 || sy < 1 || ox < 0 || ox >= w || oy < 0 || oy >= h)
        return PF_RT_EINVAL;
    memset(mask, 0, (size_t)w * (size_t)h);
    size_t n = 0;
    for (int y = oy; y < h; y += sy) {
        uint8_t *row = mask + (size_t)y * (size_t)w;
        for (int x = ox; x < w; x += sx, n++)
            row[x] = 1;
    }
    if (count)
        *count = n;
    return PF_RT_OK;
}

/* One dimension of the grid: where its samples are and, per position, what fills it. */
typedef struct grid_dim {
    int64_t extent, stride, origin, spacing;
    int64_t last;    /* index of the last sample: origin + last*spacing < extent */
    int64_t *lo, *hi; /* per position: the samples (positions) it is filled from */
    float *t;         /* per position: the weight of hi; < 0 marks a sample (left alone) */
} grid_dim;

typedef enum fill_kind { FILL_LINEAR, FILL_NEAREST } fill_kind;

static int grid_dims_check(int ndims, const int64_t *extent, const int64_t *stride,
                           const int64_t *origin, const int64_t *spacing)
{
    if (ndims < 1 || ndims > RT_MAX_DIMS || !extent || !stride || !origin || !spacing)
        return 0;
    for (int d = 0; d < ndims; d++)
        if (extent[d] < 1 || spacing[d] < 1 || origin[d] < 0 || origin[d] >= extent[d])
            return 0;
    return 1;
}

/* The fill rule of position p: before the origin both sources are the first sample, past the
 * last sample both are the last one (the upper neighbour clamped), else the enclosing pair;
 * nearest picks one of them, halfway going to the lower. */
static void grid_rule(grid_dim *g, int64_t p, fill_kind kind)
{
    int64_t q = p - g->origin, i = q < 0 ? 0 : q / g->spacing;
    if (q >= 0 && q % g->spacing == 0) {
        g->t[p] = -1.0f;
        return;
    }
    int64_t lo = g->origin + (i < g->last ? i : g->last) * g->spacing;
    int64_t hi = q < 0 || i >= g->last ? lo : lo + g->spacing;
    float t = hi == lo ? 0.0f : (float)(p - lo) / (float)g->spacing;
    if (kind == FILL_NEAREST) {
        lo = 2 * (p - lo) > hi - lo ? hi : lo;
        hi = lo;
        t = 0.0f;
    }
    g->lo[p] = lo;
    g->hi[p] = hi;
    g->t[p] = t;
}

static int grid_dim_init(grid_dim *g, int64_t extent, int64_t stride, int64_t origin,
                         int64_t spacing, fill_kind kind)
{
    *g = (grid_dim){ extent, stride, origin, spacing, (extent - 1 - origin) / spacing, NULL,
                     NULL, NULL };
    g->lo = malloc((size_t)extent * sizeof *g->lo);
    g->hi = malloc((size_t)extent * sizeof *g->hi);
    g->t = malloc((size_t)extent * sizeof *g->t);
    if (!g->lo || !g->hi || !g->t)
        return PF_RT_ENOMEM;
    for (int64_t p = 0; p < extent; p++)
        grid_rule(g, p, kind);
    return PF_RT_OK;
}

static void grid_dim_free(grid_dim *g)
{
    free(g->lo);
    free(g->hi);
    free(g->t);
}

/* dst = (1-t) a + t b along one contiguous row; t = 0 copies. The rows are distinct lines of
 * one array, so they never overlap (restrict lets the compiler vectorize). */
static void row_lerp(float *restrict dst, const float *restrict a, const float *restrict b,
                     int64_t n, float t)
{
    if (t == 0.0f) {
        memcpy(dst, a, (size_t)n * sizeof(float));
        return;
    }
    float u = 1.0f - t;
    for (int64_t i = 0; i < n; i++)
        dst[i] = u * a[i] + t * b[i];
}

/* dst = (1-t) a + t b over the block of dimensions 0..nd-1 (all positions). t = 0 copies. */
static void block_lerp(const grid_dim *g, int nd, float *dst, const float *a, const float *b,
                       float t)
{
    if (nd == 1 && g[0].stride == 1) {
        row_lerp(dst, a, b, g[0].extent, t);
        return;
    }
    const grid_dim *o = &g[nd - 1];
    for (int64_t i = 0; i < o->extent; i++) {
        int64_t off = i * o->stride;
        if (nd == 1)
            dst[off] = t == 0.0f ? a[off] : (1.0f - t) * a[off] + t * b[off];
        else
            block_lerp(g, nd - 1, dst + off, a + off, b + off, t);
    }
}

/* Dimension 0 with stride 1, by runs: the positions between two samples share their sources,
 * and position lo + k has the weight k / spacing (the same value grid_rule computes). */
static void fill_row0(const grid_dim *gd, float *row, fill_kind kind)
{
    int64_t o = gd->origin, s = gd->spacing, end = o + gd->last * s;
    float t[RT_MAX_SPACING], u[RT_MAX_SPACING];
    for (int64_t k = 1; k < s && k < RT_MAX_SPACING; k++) {
        t[k] = kind == FILL_NEAREST ? (2 * k > s) : (float)k / (float)s;
        u[k] = 1.0f - t[k];
    }
    for (int64_t p = 0; p < o; p++)
        row[p] = row[o];
    for (int64_t lo = o; lo < end; lo += s) {
        float a = row[lo], b = row[lo + s];
        for (int64_t k = 1; k < s; k++)
            row[lo + k] = kind == FILL_NEAREST ? (t[k] != 0.0f ? b : a) : u[k] * a + t[k] * b;
    }
    for (int64_t p = end + 1; p < gd->extent; p++)
        row[p] = row[end];
}

/* Fills dimension d along one line at `base` (dimensions > d fixed on sample coordinates). */
static void fill_line(const grid_dim *g, int d, float *base, fill_kind kind)
{
    const grid_dim *gd = &g[d];
    int64_t s = gd->stride;
    if (d == 0 && s == 1 && gd->spacing < RT_MAX_SPACING) {
        fill_row0(gd, base, kind);
        return;
    }
    for (int64_t p = 0; p < gd->extent; p++) {
        float t = gd->t[p];
        if (t < 0.0f)
            continue;
        if (d == 0) /* one element per position: no block to recurse into */
            base[p * s] = t == 0.0f ? base[gd->lo[p] * s]
                                    : (1.0f - t) * base[gd->lo[p] * s] + t * base[gd->hi[p] * s];
        else
            block_lerp(g, d, base + p * s, base + gd->lo[p] * s, base + gd->hi[p] * s, t);
    }
}

/* Visits every line of pass d: dimensions e > d range over their sample coordinates. */
static void fill_pass(const grid_dim *g, int d, int e, float *base, fill_kind kind)
{
    if (e == d) {
        fill_line(g, d, base, kind);
        return;
    }
    const grid_dim *ge = &g[e];
    for (int64_t p = ge->origin; p < ge->extent; p += ge->spacing)
        fill_pass(g, d, e - 1, base + p * ge->stride, kind);
}

static int grid_fill(float *data, int ndims, const int64_t *extent, const int64_t *stride,
                     const int64_t *origin, const int64_t *spacing, fill_kind kind)
{
    if (!data || !grid_dims_check(ndims, extent, stride, origin, spacing))
        return PF_RT_EINVAL;
    grid_dim g[RT_MAX_DIMS] = { 0 };
    int rc = PF_RT_OK;
    for (int d = 0; d < ndims && rc == PF_RT_OK; d++)
        rc = grid_dim_init(&g[d], extent[d], stride[d], origin[d], spacing[d], kind);
    for (int d = 0; d < ndims && rc == PF_RT_OK; d++)
        if (g[d].spacing > 1 || g[d].origin > 0)
            fill_pass(g, d, ndims - 1, data, kind);
    for (int d = 0; d < ndims; d++)
        grid_dim_free(&g[d]);
    return rc;
}

int pf_rt_grid_multilinear(float *data, int ndims, const int64_t *extent, const int64_t *stride,
                           const int64_t *origin, const int64_t *spacing)
{
    return grid_fill(data, ndims, extent, stride, origin, spacing, FILL_LINEAR);
}

int pf_rt_grid_nearest(float *data, int ndims, const int64_t *extent, const int64_t *stride,
                       const int64_t *origin, const int64_t *spacing)
{
    return grid_fill(data, ndims, extent, stride, origin, spacing, FILL_NEAREST);
}
