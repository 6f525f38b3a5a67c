/* Importance sampling (paper Section 3.1 and Appendix A): the texturedness importance map, the
 * O(n + m) histogram remapping that scales it to the sample budget, and the two together with
 * the dithering of rt_dither.c. */
#include "reconstruct/runtime.h"

#include "base/gauss.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Appendix A's "small machine epsilon" on the split-point constraints. */
#define REMAP_EPS 1e-9
/* Bisection steps of the fallback solver (double precision is exhausted well before). */
#define REMAP_BISECT_STEPS 200

/* Non-finite and negative importance counts as none. */
static inline double importance_value(float v)
{
    return v > 0.0f && v <= FLT_MAX ? (double)v : 0.0;
}

/* ---- passes over the map in fixed chunks: maxima, integer counts and elementwise writes do
 * not depend on how the chunks are split across threads, so the results are bit-identical at
 * any thread count; the sums (the mean, the polishing's) stay serial, in index order. ---- */
#define MAP_CHUNKS 64

typedef struct map_pass {
    const float *map;
    size_t n;
    float *out;                     /* the elementwise passes' output */
    double s;                       /* the remap's scale, the floor, or the fill value */
    double bins_per_unit;           /* the histogram's */
    float vmax[MAP_CHUNKS];
    bool any[MAP_CHUNKS];           /* some positive value in the chunk */
    uint32_t (*count)[PF_RT_REMAP_BINS + 1];  /* per chunk */
} map_pass;

static size_t chunk_start(size_t n, int32_t c)
{
    return n / MAP_CHUNKS * (size_t)c + (n % MAP_CHUNKS) * (size_t)c / MAP_CHUNKS;
}

/* A loop over the elements i of chunks [begin, end) of p's map (chunk c: elements
 * [chunk_start(n, c), chunk_start(n, c + 1))). */
#define FOR_CHUNKS(p, begin, end, i)                                                           \
    for (int32_t c_ = (begin); c_ < (end); c_++)                                               \
        for (size_t i = chunk_start((p)->n, c_), e_ = chunk_start((p)->n, c_ + 1); i < e_; i++)

static int32_t floor_task(void *closure, int32_t begin, int32_t end)
{
    const map_pass *p = closure;
    float lo = (float)p->s, *map = p->out;
    FOR_CHUNKS(p, begin, end, i)
        if (!(map[i] >= lo) || !(map[i] <= FLT_MAX))
            map[i] = map[i] > FLT_MAX ? FLT_MAX : lo;
    return 0;
}

static int32_t fill_task(void *closure, int32_t begin, int32_t end)
{
    const map_pass *p = closure;
    FOR_CHUNKS(p, begin, end, i)
        p->out[i] = (float)p->s;
    return 0;
}

/* Floors the map at PF_RT_IMPORTANCE_FLOOR times its mean; a map without positive finite values
 * becomes uniform. */
static void floor_map(float *map, size_t n, pf_par_for par)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += importance_value(map[i]);
    map_pass p = { .map = map, .n = n, .out = map, .s = 1.0 };
    if (!(sum > 0.0)) {
        pf_par_run(par, fill_task, &p, MAP_CHUNKS);
        return;
    }
    float lo = (float)(PF_RT_IMPORTANCE_FLOOR * sum / (double)n);
    if (!(lo > 0.0f)) /* the mean underflowed float: any positive floor will do */
        lo = 1e-38f;
    p.s = lo;
    pf_par_run(par, floor_task, &p, MAP_CHUNKS);
}

/* The rows of the importance map's passes: the reference copied densely, then |blur - ref|. */
typedef struct detail_rows {
    const float *ref;
    float *blur, *map;
    int w;
    size_t stride;
} detail_rows;

static int32_t map_copy_rows(void *closure, int32_t begin, int32_t end)
{
    const detail_rows *j = closure;
    for (int32_t y = begin; y < end; y++)
        memcpy(j->blur + (size_t)y * (size_t)j->w, j->ref + (size_t)y * j->stride,
               (size_t)j->w * sizeof *j->blur);
    return 0;
}

static int32_t map_detail_rows(void *closure, int32_t begin, int32_t end)
{
    const detail_rows *j = closure;
    for (int32_t y = begin; y < end; y++) {
        const float *in = j->ref + (size_t)y * j->stride;
        const float *b = j->blur + (size_t)y * (size_t)j->w;
        float *o = j->map + (size_t)y * (size_t)j->w;
        for (int x = 0; x < j->w; x++)
            o[x] = fabsf(b[x] - in[x]);
    }
    return 0;
}

int pf_rt_importance_map(const float *ref, int w, int h, size_t stride, double sigma, float *map)
{
    return pf_rt_importance_map_par(ref, w, h, stride, sigma, map, NULL);
}

int pf_rt_importance_map_par(const float *ref, int w, int h, size_t stride, double sigma,
                             float *map, pf_par_for par)
{
    if (!ref || !map || w <= 0 || h <= 0 || stride < (size_t)w || !(sigma > 0.0) ||
        !isfinite(sigma))
        return PF_RT_EINVAL;
    size_t n = (size_t)w * (size_t)h;
    float *blur = pf_rt_scratch(n * sizeof *blur);
    if (!blur)
        return PF_RT_ENOMEM;
    detail_rows j = { ref, blur, map, w, stride };
    pf_par_run(par, map_copy_rows, &j, h);
    pf_gauss_iir_2d_par(blur, w, h, (size_t)w, sigma, sigma, par);
    pf_par_run(par, map_detail_rows, &j, h);
    pf_rt_scratch_free(blur);
    pf_gauss_iir_2d_par(map, w, h, (size_t)w, sigma, sigma, par);
    floor_map(map, n, par);
    return PF_RT_OK;
}

/* The histogram of Appendix A over (0, vmax]: counts h_k and centres x_k. Zeros are left out
 * (they get no samples at any scale, so counting them at bin 0's centre would only add error);
 * their number is returned in *zeros. */
typedef struct remap_hist {
    double h[PF_RT_REMAP_BINS], x[PF_RT_REMAP_BINS];
    /* Integer counts first (zeros in the last slot): a run of equal values would otherwise
     * chain floating-point adds through one memory cell. */
    uint32_t count[PF_RT_REMAP_BINS + 1];
    double vmax;
    size_t zeros;
} remap_hist;

static int32_t max_task(void *closure, int32_t begin, int32_t end)
{
    map_pass *p = closure;
    for (int32_t c = begin; c < end; c++) {
        float vmax = 0.0f;
        FOR_CHUNKS(p, c, c + 1, i) {
            float v = (float)importance_value(p->map[i]);
            vmax = v > vmax ? v : vmax;
        }
        p->vmax[c] = vmax;
    }
    return 0;
}

static int32_t count_task(void *closure, int32_t begin, int32_t end)
{
    map_pass *p = closure;
    for (int32_t c = begin; c < end; c++) {
        uint32_t *count = p->count[c];
        FOR_CHUNKS(p, c, c + 1, i) {
            double v = importance_value(p->map[i]);
            size_t b = (size_t)(v * p->bins_per_unit);
            count[v == 0.0 ? PF_RT_REMAP_BINS : b < PF_RT_REMAP_BINS ? b : PF_RT_REMAP_BINS - 1]++;
        }
    }
    return 0;
}

/* Returns PF_RT_OK or PF_RT_ENOMEM. */
static int remap_histogram(const float *map, size_t n, remap_hist *hg, pf_par_for par)
{
    map_pass p = { .map = map, .n = n };
    pf_par_run(par, max_task, &p, MAP_CHUNKS);
    float vmax = 0.0f;
    for (int c = 0; c < MAP_CHUNKS; c++)
        vmax = p.vmax[c] > vmax ? p.vmax[c] : vmax;
    memset(hg, 0, sizeof *hg);
    hg->vmax = vmax;
    double width = vmax / PF_RT_REMAP_BINS;
    for (int k = 0; k < PF_RT_REMAP_BINS; k++)
        hg->x[k] = (k + 0.5) * width;
    if (vmax == 0.0f) {
        hg->zeros = n;
        return PF_RT_OK;
    }
    p.bins_per_unit = PF_RT_REMAP_BINS / (double)vmax;
    p.count = pf_rt_scratch_zero(sizeof *p.count * MAP_CHUNKS);
    if (!p.count)
        return PF_RT_ENOMEM;
    pf_par_run(par, count_task, &p, MAP_CHUNKS);
    for (int c = 0; c < MAP_CHUNKS; c++)
        for (int k = 0; k <= PF_RT_REMAP_BINS; k++)
            hg->count[k] += p.count[c][k];
    pf_rt_scratch_free(p.count);
    for (int k = 0; k < PF_RT_REMAP_BINS; k++)
        hg->h[k] = hg->count[k];
    hg->zeros = hg->count[PF_RT_REMAP_BINS];
    return PF_RT_OK;
}

/* Equation (3): the histogram's estimate of sum_i min(s v_i, 1). */
static double hist_total(const remap_hist *hg, double s)
{
    double t = 0.0;
    for (int k = 0; k < PF_RT_REMAP_BINS; k++) {
        double v = s * hg->x[k];
        t += hg->h[k] * (v < 1.0 ? v : 1.0);
    }
    return t;
}

/* Equation (3) solved by bisection: only if round-off defeats the split-point search. */
static double remap_bisect(const remap_hist *hg, double want)
{
    double lo = 0.0, hi = 1.0 / hg->x[0];
    for (int i = 0; i < REMAP_BISECT_STEPS && hi > lo; i++) {
        double mid = 0.5 * (lo + hi);
        if (hist_total(hg, mid) < want)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* Appendix A's scale: the first split point k whose s_k satisfies s_k x_k < 1 + eps and
 * (k = m - 1 or s_k x_{k+1} >= 1 - eps), with n counting the nonzero values only. */
static double remap_scale(const remap_hist *hg, double fn)
{
    double npos = 0.0;
    for (int k = 0; k < PF_RT_REMAP_BINS; k++)
        npos += hg->h[k];
    if (npos <= fn)
        return INFINITY; /* even every nonzero value saturated is not too many */
    double H = 0.0, X = 0.0;
    for (int k = 0; k < PF_RT_REMAP_BINS; k++) {
        H += hg->h[k];
        X += hg->h[k] * hg->x[k];
        double num = H - (npos - fn);
        if (!(num > 0.0) || X == 0.0)
            continue;
        double s = num / X;
        int last = k == PF_RT_REMAP_BINS - 1;
        if (s * hg->x[k] < 1.0 + REMAP_EPS && (last || s * hg->x[k + 1] >= 1.0 - REMAP_EPS))
            return s;
    }
    return remap_bisect(hg, fn);
}

/* Polishing of the histogram's scale on the data. With the set of saturated values frozen,
 * eq. (2) is linear: s = (fn - #saturated) / (sum of the others). From below (total < fn) that
 * step never overshoots, so iterating it climbs monotonically to the exact solution and stops
 * when the saturated set no longer changes. A guess from above is first brought below: by the
 * linear step when it is defined, else (everything that matters saturated) by fn / sum(v), the
 * scale that would be right if nothing saturated. Each step is one O(n) pass; from Appendix A's
 * estimate it takes one or two, and REMAP_POLISH_STEPS bounds the cost on pathological maps. */
#define REMAP_POLISH_STEPS 16

/* Over the map: how many values reach t, and the sum of the others. Two interleaved partial
 * sums keep the adds from waiting on each other. */
static void split_at(const float *map, size_t n, double t, double *sat, double *rest)
{
    double r0 = 0.0, r1 = 0.0;
    size_t c0 = 0, c1 = 0, i = 0;
    for (; i + 2 <= n; i += 2) {
        double v0 = importance_value(map[i]), v1 = importance_value(map[i + 1]);
        c0 += v0 >= t;
        c1 += v1 >= t;
        r0 += v0 >= t ? 0.0 : v0;
        r1 += v1 >= t ? 0.0 : v1;
    }
    if (i < n) {
        double v = importance_value(map[i]);
        c0 += v >= t;
        r0 += v >= t ? 0.0 : v;
    }
    *sat = (double)(c0 + c1);
    *rest = r0 + r1;
}

static double remap_polish(const float *map, size_t n, double fn, double s)
{
    double prev_sat = -1.0;
    for (int it = 0; it < REMAP_POLISH_STEPS && isfinite(s); it++) {
        double sat, rest, t = 1.0 / s, next;
        split_at(map, n, t, &sat, &rest);
        /* Below the solution the set only grows: the count the last linear step froze means
         * the same set, for which that step's s was already the exact solution. */
        if (sat == prev_sat)
            break;
        prev_sat = -1.0;
        if (fn > sat && rest > 0.0) {
            next = (fn - sat) / rest;
            prev_sat = sat;
        } else if (fn < sat) {
            next = fn / (rest + sat * t); /* sat * t <= the saturated values' sum */
        } else {
            break; /* exactly fn saturated */
        }
        if (next == s)
            break;
        s = next;
    }
    return s;
}

static double scale_appendix_a(const float *map, size_t n, double frac, pf_par_for par)
{
    if (!map || n == 0 || !(frac > 0.0 && frac <= 1.0))
        return NAN;
    remap_hist *hg = malloc(sizeof *hg);
    if (!hg || remap_histogram(map, n, hg, par) != PF_RT_OK) {
        free(hg);
        return NAN;
    }
    double s = hg->vmax == 0.0 ? frac : remap_scale(hg, frac * (double)n);
    free(hg);
    return s;
}

double pf_rt_importance_scale_appendix_a(const float *map, size_t n, double frac)
{
    return scale_appendix_a(map, n, frac, NULL);
}

static int32_t any_task(void *closure, int32_t begin, int32_t end)
{
    map_pass *p = closure;
    for (int32_t c = begin; c < end; c++) {
        p->any[c] = false;
        FOR_CHUNKS(p, c, c + 1, i)
            if (importance_value(p->map[i]) != 0.0) {
                p->any[c] = true;
                break;
            }
    }
    return 0;
}

/* v' = min(s v, 1); v == 0 stays 0 even for s = inf (which would give NaN). */
static int32_t remap_task(void *closure, int32_t begin, int32_t end)
{
    const map_pass *p = closure;
    double s = p->s;
    FOR_CHUNKS(p, begin, end, i) {
        double v = importance_value(p->map[i]);
        p->out[i] = v == 0.0 ? 0.0f : (float)(s * v < 1.0 ? s * v : 1.0);
    }
    return 0;
}

int pf_rt_importance_remap_par(const float *map, size_t n, double frac, float *remapped,
                               double *scale, pf_par_for par)
{
    if (!map || !remapped || n == 0 || !(frac > 0.0 && frac <= 1.0))
        return PF_RT_EINVAL;
    double s = scale_appendix_a(map, n, frac, par);
    if (isnan(s))
        return PF_RT_ENOMEM;
    map_pass p = { .map = map, .n = n, .out = remapped };
    pf_par_run(par, any_task, &p, MAP_CHUNKS);
    bool empty = true;
    for (int c = 0; c < MAP_CHUNKS; c++)
        empty = empty && !p.any[c];
    if (empty) { /* no information: a uniform density, as if every value were 1 */
        p.s = frac;
        pf_par_run(par, fill_task, &p, MAP_CHUNKS);
        if (scale)
            *scale = frac;
        return PF_RT_OK;
    }
    p.s = s = remap_polish(map, n, frac * (double)n, s);
    pf_par_run(par, remap_task, &p, MAP_CHUNKS);
    if (scale)
        *scale = s;
    return PF_RT_OK;
}

int pf_rt_importance_remap(const float *map, size_t n, double frac, float *remapped,
                           double *scale)
{
    return pf_rt_importance_remap_par(map, n, frac, remapped, scale, NULL);
}

int pf_rt_importance_mask_par(const float *map, int w, int h, double frac,
                              pf_rt_dither_method method, uint8_t *mask, float *remapped,
                              size_t *count, pf_par_for par)
{
    if (!map || !mask || w <= 0 || h <= 0 || !(frac > 0.0 && frac <= 1.0))
        return PF_RT_EINVAL;
    size_t n = (size_t)w * (size_t)h;
    float *m = remapped ? remapped : pf_rt_scratch(n * sizeof *m);
    if (!m)
        return PF_RT_ENOMEM;
    int rc = pf_rt_importance_remap_par(map, n, frac, m, NULL, par);
    if (rc == PF_RT_OK)
        rc = pf_rt_dither(m, w, h, method, mask, count);
    if (m != remapped)
        pf_rt_scratch_free(m);
    return rc;
}

int pf_rt_importance_mask(const float *map, int w, int h, double frac, pf_rt_dither_method method,
                          uint8_t *mask, float *remapped, size_t *count)
{
    return pf_rt_importance_mask_par(map, w, h, frac, method, mask, remapped, count, NULL);
}
