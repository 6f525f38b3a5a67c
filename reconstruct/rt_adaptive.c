/* Adaptive sampling as the paper describes it (Section 3.1): a coarse grid of spacing k is
 * computed first; each coarse sample's refinement priority is its summed absolute difference to
 * its 8 coarse neighbours; k-hat x k-hat blocks (k-hat = k rounded up to odd) centred on the
 * highest-priority coarse samples become fine samples until the sample budget frac*n is reached.
 *
 * The order comes from histograms, not a sort: tiles are bucketed by priority into as many bins
 * as there are tiles (at most AD_MAX_BINS); bins are taken whole from the top while even their
 * largest possible contribution cannot reach the budget (the union of blocks does not depend on
 * the order in which they are marked), and only the bin where the budget may be reached is
 * ordered further, by the same method. That is O(n) for any ordinary distribution; a
 * pathological one (priorities spread geometrically) is cut off after a few levels by a
 * comparison sort of the remaining bin. */
#include "reconstruct/runtime.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Below this many tiles a bin is ordered by insertion sort. */
#define AD_SMALL 16
/* Histogram levels before a bin is handed to qsort. */
#define AD_MAX_DEPTH 8
/* Bins of one level at most. */
#define AD_MAX_BINS ((size_t)1 << 16)

/* Sample state while refining. */
enum { AD_COARSE = 1, AD_FINE = 2 };

typedef struct ad_sel {
    uint8_t *state; /* w*h: AD_COARSE | AD_FINE bits */
    int w, h, k, half, nx;
    size_t count, target;
    const double *prio; /* per tile, finite and >= 0 */
} ad_sel;

static void coarse_line(int extent, int k, uint8_t *line)
{
    memset(line, 0, (size_t)extent);
    for (int i = 0, n = (extent + k - 1) / k; i < n; i++)
        line[pf_rt_adaptive_coarse_pos(i, k, extent)] = 1;
}

uint8_t *pf_rt_adaptive_coarse_lines(int w, int h, int k)
{
    uint8_t *lines = malloc((size_t)w + (size_t)h);
    if (lines) {
        coarse_line(w, k, lines);
        coarse_line(h, k, lines + w);
    }
    return lines;
}

/* The coarse mask by rows: a coarse row is the coarse columns, any other row is empty. */
typedef struct coarse_job {
    uint8_t *mask;
    const uint8_t *cols, *rows;
    int w;
} coarse_job;

static int32_t coarse_rows(void *closure, int32_t begin, int32_t end)
{
    const coarse_job *j = closure;
    for (int32_t y = begin; y < end; y++) {
        uint8_t *row = j->mask + (size_t)y * (size_t)j->w;
        if (j->rows[y])
            memcpy(row, j->cols, (size_t)j->w);
        else
            memset(row, 0, (size_t)j->w);
    }
    return 0;
}

int pf_rt_adaptive_coarse_par(int w, int h, int k, uint8_t *mask, size_t *count, pf_par_for par)
{
    if (!mask || w <= 0 || h <= 0 || k < 1)
        return PF_RT_EINVAL;
    uint8_t *lines = pf_rt_adaptive_coarse_lines(w, h, k);
    if (!lines)
        return PF_RT_ENOMEM;
    coarse_job j = { mask, lines, lines + w, w };
    pf_par_run(par, coarse_rows, &j, h);
    free(lines);
    if (count)
        *count = (size_t)((w + k - 1) / k) * (size_t)((h + k - 1) / k);
    return PF_RT_OK;
}

int pf_rt_adaptive_coarse(int w, int h, int k, uint8_t *mask, size_t *count)
{
    return pf_rt_adaptive_coarse_par(w, h, k, mask, count, NULL);
}

/* The coarse samples' values of tile row j, channel-major: cv[c*T + tile]. */
static void gather_coarse_row(const float *data, int w, int h, int channels, size_t stride,
                              size_t plane, int k, int j, float *cv)
{
    int nx = (w + k - 1) / k, ny = (h + k - 1) / k;
    size_t T = (size_t)nx * (size_t)ny;
    for (int c = 0; c < channels; c++) {
        const float *row =
            data + (size_t)c * plane + (size_t)pf_rt_adaptive_coarse_pos(j, k, h) * stride;
        for (int i = 0; i < nx; i++)
            cv[(size_t)c * T + (size_t)j * (size_t)nx + (size_t)i] =
                row[pf_rt_adaptive_coarse_pos(i, k, w)];
    }
}

/* The 8 neighbours in summation order (row above, left and right, row below); the interior and
 * border paths add in this same order, so a tile's priority does not depend on the path. */
static const int nb_di[8] = { -1, 0, 1, -1, 1, -1, 0, 1 };
static const int nb_dj[8] = { -1, -1, -1, 0, 0, 1, 1, 1 };

/* A priority made safe to bin: NaN (broken data) counts as 0, infinity as the largest double. */
static double finite_priority(double p)
{
    if (isnan(p))
        return 0.0;
    return p > DBL_MAX ? DBL_MAX : p;
}

/* Sum over channels and the 8 neighbouring tiles of |difference|, scaled by 8/present at the
 * border. */
static double tile_priority(const float *cv, int nx, int ny, int channels, int i, int j)
{
    size_t T = (size_t)nx * (size_t)ny, t = (size_t)j * (size_t)nx + (size_t)i;
    double sum = 0.0;
    int present = 0;
    for (int e = 0; e < 8; e++) {
        int ni = i + nb_di[e], nj = j + nb_dj[e];
        if (ni < 0 || nj < 0 || ni >= nx || nj >= ny)
            continue;
        size_t u = (size_t)nj * (size_t)nx + (size_t)ni;
        present++;
        for (int c = 0; c < channels; c++)
            sum += fabs((double)cv[(size_t)c * T + t] - (double)cv[(size_t)c * T + u]);
    }
    return finite_priority(present ? sum * 8.0 / present : 0.0);
}

/* The priorities of one row of tiles; interior tiles skip the bounds checks. */
static void row_priorities(const float *cv, int nx, int ny, int channels, int j, double *prio)
{
    size_t T = (size_t)nx * (size_t)ny;
    ptrdiff_t off[8];
    for (int e = 0; e < 8; e++)
        off[e] = (ptrdiff_t)nb_dj[e] * nx + nb_di[e];
    for (int i = 0; i < nx; i++) {
        if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
            prio[i] = tile_priority(cv, nx, ny, channels, i, j);
            continue;
        }
        size_t t = (size_t)j * (size_t)nx + (size_t)i;
        double sum = 0.0;
        for (int e = 0; e < 8; e++)
            for (int c = 0; c < channels; c++) {
                const float *p = cv + (size_t)c * T + t;
                sum += fabs((double)p[0] - (double)p[off[e]]);
            }
        prio[i] = finite_priority(sum * 8.0 / 8);
    }
}

/* Marks the block of tile t; returns whether the budget is now reached. */
static int mark_block(ad_sel *s, uint32_t t)
{
    int cx = pf_rt_adaptive_coarse_pos((int)(t % (uint32_t)s->nx), s->k, s->w);
    int cy = pf_rt_adaptive_coarse_pos((int)(t / (uint32_t)s->nx), s->k, s->h);
    int x0 = cx - s->half > 0 ? cx - s->half : 0;
    int x1 = cx + s->half < s->w ? cx + s->half : s->w - 1;
    int y0 = cy - s->half > 0 ? cy - s->half : 0;
    int y1 = cy + s->half < s->h ? cy + s->half : s->h - 1;
    for (int y = y0; y <= y1; y++) {
        uint8_t *row = s->state + (size_t)y * (size_t)s->w;
        for (int x = x0; x <= x1; x++) {
            s->count += row[x] == 0;
            row[x] |= AD_FINE;
        }
    }
    return s->count >= s->target;
}

/* Priority order: higher first, then lower tile index. */
static int before(const ad_sel *s, uint32_t a, uint32_t b)
{
    return s->prio[a] > s->prio[b] || (s->prio[a] == s->prio[b] && a < b);
}

static int mark_sorted_small(ad_sel *s, uint32_t *idx, size_t len)
{
    for (size_t i = 1; i < len; i++) {
        uint32_t v = idx[i];
        size_t j = i;
        for (; j > 0 && before(s, v, idx[j - 1]); j--)
            idx[j] = idx[j - 1];
        idx[j] = v;
    }
    for (size_t i = 0; i < len; i++)
        if (mark_block(s, idx[i]))
            return 1;
    return 0;
}

typedef struct ad_key {
    double p;
    uint32_t t;
} ad_key;

static int key_cmp(const void *a, const void *b)
{
    const ad_key *x = a, *y = b;
    if (x->p != y->p)
        return x->p > y->p ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* The deep-recursion escape: a comparison sort of one bin. Returns -1 if out of memory. */
static int mark_sorted_qsort(ad_sel *s, const uint32_t *idx, size_t len)
{
    ad_key *keys = pf_rt_scratch(len * sizeof *keys);
    if (!keys)
        return -1;
    for (size_t i = 0; i < len; i++)
        keys[i] = (ad_key){ s->prio[idx[i]], idx[i] };
    qsort(keys, len, sizeof *keys, key_cmp);
    int done = 0;
    for (size_t i = 0; i < len && !done; i++)
        done = mark_block(s, keys[i].t);
    pf_rt_scratch_free(keys);
    return done;
}

static int select_range(ad_sel *s, uint32_t *idx, size_t len, uint32_t *scratch, int depth);

/* Walks the bins (starts in bins[0..nb)) from the top: a bin is marked whole while even its
 * largest contribution cannot reach the budget, else ordered further. */
static int walk_bins(ad_sel *s, uint32_t *idx, uint32_t *scratch, const size_t *bins, size_t nb,
                     int depth)
{
    size_t block = (size_t)(2 * s->half + 1) * (size_t)(2 * s->half + 1);
    for (size_t b = nb; b-- > 0;) {
        size_t start = b ? bins[b - 1] : 0, m = bins[b] - start;
        if (m == 0)
            continue;
        if (s->count + m * block < s->target) {
            for (size_t i = 0; i < m; i++)
                mark_block(s, scratch[start + i]);
            continue;
        }
        /* The budget may be reached inside this bin: order it. idx's slots are free now. */
        int r = select_range(s, scratch + start, m, idx + start, depth + 1);
        if (r != 0)
            return r;
    }
    return 0;
}

/* Buckets idx (in increasing tile order) stably into len bins over [lo, hi], in scratch. */
static int select_binned(ad_sel *s, uint32_t *idx, size_t len, uint32_t *scratch, double lo,
                         double hi, int depth)
{
    /* At most AD_MAX_BINS bins: the counts stay in cache (a bin per tile at 2048x1536, k = 2,
     * was 6.3 MB written at random; the selection took 8.7 ms, 6.8 with 64 Ki bins). Any number
     * of bins gives the same marks: bins only decide what is taken whole. */
    size_t nb = len < AD_MAX_BINS ? len : AD_MAX_BINS;
    double scale = (double)nb / (hi - lo);
    if (!(scale <= DBL_MAX)) /* a denormal range: too narrow to bin */
        return mark_sorted_qsort(s, idx, len);
    size_t *bins = pf_rt_scratch_zero((nb + 1) * sizeof *bins);
    if (!bins)
        return -1;
    for (size_t i = 0; i < len; i++) {
        size_t b = (size_t)((s->prio[idx[i]] - lo) * scale);
        bins[(b < nb ? b : nb - 1) + 1]++;
    }
    for (size_t b = 0; b < nb; b++)
        bins[b + 1] += bins[b];
    /* bins[b] is now the start of bin b; fill advances it to the start of bin b+1. */
    for (size_t i = 0; i < len; i++) {
        size_t b = (size_t)((s->prio[idx[i]] - lo) * scale);
        scratch[bins[b < nb ? b : nb - 1]++] = idx[i];
    }
    int r = walk_bins(s, idx, scratch, bins, nb, depth);
    pf_rt_scratch_free(bins);
    return r;
}

/* Marks tiles idx[0..len) in priority order until the budget is reached: 1 if reached, 0 if
 * not, -1 if out of memory. */
static int select_range(ad_sel *s, uint32_t *idx, size_t len, uint32_t *scratch, int depth)
{
    if (len <= AD_SMALL)
        return mark_sorted_small(s, idx, len);
    double lo = s->prio[idx[0]], hi = lo;
    for (size_t i = 1; i < len; i++) {
        double p = s->prio[idx[i]];
        lo = p < lo ? p : lo;
        hi = p > hi ? p : hi;
    }
    if (lo == hi) { /* all equal: already in tile order */
        for (size_t i = 0; i < len; i++)
            if (mark_block(s, idx[i]))
                return 1;
        return 0;
    }
    if (depth >= AD_MAX_DEPTH || !(hi - lo <= DBL_MAX))
        return mark_sorted_qsort(s, idx, len);
    return select_binned(s, idx, len, scratch, lo, hi, depth);
}

static int refine_select(ad_sel *s, size_t T)
{
    uint32_t *idx = pf_rt_scratch(T * sizeof *idx), *scratch = pf_rt_scratch(T * sizeof *scratch);
    int rc = PF_RT_ENOMEM;
    if (idx && scratch) {
        for (size_t t = 0; t < T; t++)
            idx[t] = (uint32_t)t;
        rc = select_range(s, idx, T, scratch, 0) < 0 ? PF_RT_ENOMEM : PF_RT_OK;
    }
    pf_rt_scratch_free(idx);
    pf_rt_scratch_free(scratch);
    return rc;
}

static int refine_args_ok(const float *data, int w, int h, int channels, size_t stride,
                          size_t plane, int k, double frac, const uint8_t *fine_mask)
{
    return data && fine_mask && w > 0 && h > 0 && channels >= 1 && k >= 1 &&
           stride >= (size_t)w && (channels == 1 || plane >= stride * (size_t)h) &&
           frac > 0.0 && frac <= 1.0 && (uint64_t)w * (uint64_t)h < UINT32_MAX;
}

/* The coarse values of tile rows [begin, end), or (second) their priorities, which read the
 * rows around them: two loops over tile rows, so the first is complete before the second. */
typedef struct prio_job {
    const float *data;
    size_t stride, plane;
    int w, h, k, channels, nx, ny;
    float *cv;
    double *prio;
} prio_job;

static int32_t gather_rows(void *closure, int32_t begin, int32_t end)
{
    const prio_job *p = closure;
    for (int32_t j = begin; j < end; j++)
        gather_coarse_row(p->data, p->w, p->h, p->channels, p->stride, p->plane, p->k, j, p->cv);
    return 0;
}

static int32_t priority_rows(void *closure, int32_t begin, int32_t end)
{
    const prio_job *p = closure;
    for (int32_t j = begin; j < end; j++)
        row_priorities(p->cv, p->nx, p->ny, p->channels, j, p->prio + (size_t)j * (size_t)p->nx);
    return 0;
}

/* Priorities of every tile, then the marking (serial: the budget is reached in priority
 * order); fills s->state and s->count. */
static int refine_run(ad_sel *s, const float *data, int channels, size_t stride, size_t plane,
                      pf_par_for par)
{
    int nx = s->nx, ny = (s->h + s->k - 1) / s->k;
    size_t T = (size_t)nx * (size_t)ny;
    float *cv = pf_rt_scratch(T * (size_t)channels * sizeof *cv);
    double *prio = pf_rt_scratch(T * sizeof *prio);
    int rc = PF_RT_ENOMEM;
    if (cv && prio) {
        prio_job p = { data, stride, plane, s->w, s->h, s->k, channels, nx, ny, cv, prio };
        pf_par_run(par, gather_rows, &p, ny);
        pf_par_run(par, priority_rows, &p, ny);
        s->prio = prio;
        rc = s->count < s->target ? refine_select(s, T) : PF_RT_OK;
    }
    pf_rt_scratch_free(cv);
    pf_rt_scratch_free(prio);
    return rc;
}

/* The marking's state bits become the outputs, by rows. */
typedef struct state_job {
    uint8_t *fine_mask, *is_fine;
    size_t w;
} state_job;

static int32_t state_rows(void *closure, int32_t begin, int32_t end)
{
    const state_job *j = closure;
    for (size_t i = (size_t)begin * j->w; i < (size_t)end * j->w; i++) {
        uint8_t st = j->fine_mask[i];
        if (j->is_fine)
            j->is_fine[i] = (st & AD_FINE) != 0;
        j->fine_mask[i] = st == AD_FINE;
    }
    return 0;
}

int pf_rt_adaptive_refine_par(const float *data, int w, int h, int channels, size_t stride,
                              size_t plane, int k, double frac, uint8_t *fine_mask,
                              uint8_t *is_fine, size_t *count, pf_par_for par)
{
    if (!refine_args_ok(data, w, h, channels, stride, plane, k, frac, fine_mask))
        return PF_RT_EINVAL;
    size_t n = (size_t)w * (size_t)h;
    ad_sel s = { .w = w, .h = h, .k = k, .half = k / 2, .nx = (w + k - 1) / k };
    s.state = fine_mask; /* built in place: the state bits become the mask at the end */
    int rc = pf_rt_adaptive_coarse_par(w, h, k, s.state, &s.count, par);
    if (rc != PF_RT_OK)
        return rc;
    double want = floor(frac * (double)n + 0.5);
    s.target = want < (double)n ? (size_t)want : n;
    rc = refine_run(&s, data, channels, stride, plane, par);
    if (rc != PF_RT_OK)
        return rc;
    state_job j = { fine_mask, is_fine, (size_t)w };
    pf_par_run(par, state_rows, &j, h);
    if (count)
        *count = s.count;
    return PF_RT_OK;
}

int pf_rt_adaptive_refine(const float *data, int w, int h, int channels, size_t stride,
                          size_t plane, int k, double frac, uint8_t *fine_mask, uint8_t *is_fine,
                          size_t *count)
{
    return pf_rt_adaptive_refine_par(data, w, h, channels, stride, plane, k, frac, fine_mask,
                                     is_fine, count, NULL);
}
