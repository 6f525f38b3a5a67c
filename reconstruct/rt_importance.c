/* Importance sampling (paper Section 3.1 and Appendix A): the texturedness importance map, the
 * O(n + m) histogram remapping that scales it to the sample budget, and the two together with
 * the dithering of rt_dither.c. */
#include "reconstruct/runtime.h"

#include "base/gauss.h"

#include <float.h>
#include <math.h>
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

/* Floors the map at PF_RT_IMPORTANCE_FLOOR times its mean; a map without positive finite values
 * becomes uniform. */
static void floor_map(float *map, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += importance_value(map[i]);
    if (!(sum > 0.0)) {
        for (size_t i = 0; i < n; i++)
            map[i] = 1.0f;
        return;
    }
    float lo = (float)(PF_RT_IMPORTANCE_FLOOR * sum / (double)n);
    if (!(lo > 0.0f)) /* the mean underflowed float: any positive floor will do */
        lo = 1e-38f;
    for (size_t i = 0; i < n; i++)
        if (!(map[i] >= lo) || !(map[i] <= FLT_MAX))
            map[i] = map[i] > FLT_MAX ? FLT_MAX : lo;
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
    for (int y = 0; y < h; y++)
        memcpy(blur + (size_t)y * (size_t)w, ref + (size_t)y * stride, (size_t)w * sizeof *blur);
    pf_gauss_iir_2d_par(blur, w, h, (size_t)w, sigma, sigma, par);
    for (int y = 0; y < h; y++) {
        const float *in = ref + (size_t)y * stride;
        const float *b = blur + (size_t)y * (size_t)w;
        float *o = map + (size_t)y * (size_t)w;
        for (int x = 0; x < w; x++)
            o[x] = fabsf(b[x] - in[x]);
    }
    pf_rt_scratch_free(blur);
    pf_gauss_iir_2d_par(map, w, h, (size_t)w, sigma, sigma, par);
    floor_map(map, n);
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

static void remap_histogram(const float *map, size_t n, remap_hist *hg)
{
    float vmax = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = (float)importance_value(map[i]);
        vmax = v > vmax ? v : vmax;
    }
    memset(hg, 0, sizeof *hg);
    hg->vmax = vmax;
    double width = vmax / PF_RT_REMAP_BINS;
    for (int k = 0; k < PF_RT_REMAP_BINS; k++)
        hg->x[k] = (k + 0.5) * width;
    if (vmax == 0.0f) {
        hg->zeros = n;
        return;
    }
    double scale = PF_RT_REMAP_BINS / (double)vmax;
    for (size_t i = 0; i < n; i++) {
        double v = importance_value(map[i]);
        size_t b = (size_t)(v * scale);
        hg->count[v == 0.0 ? PF_RT_REMAP_BINS : b < PF_RT_REMAP_BINS ? b : PF_RT_REMAP_BINS - 1]++;
    }
    for (int k = 0; k < PF_RT_REMAP_BINS; k++)
        hg->h[k] = hg->count[k];
    hg->zeros = hg->count[PF_RT_REMAP_BINS];
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

double pf_rt_importance_scale_appendix_a(const float *map, size_t n, double frac)
{
    if (!map || n == 0 || !(frac > 0.0 && frac <= 1.0))
        return NAN;
    remap_hist *hg = malloc(sizeof *hg);
    if (!hg)
        return NAN;
    remap_histogram(map, n, hg);
    double s = hg->vmax == 0.0 ? frac : remap_scale(hg, frac * (double)n);
    free(hg);
    return s;
}

int pf_rt_importance_remap(const float *map, size_t n, double frac, float *remapped,
                           double *scale)
{
    if (!map || !remapped || n == 0 || !(frac > 0.0 && frac <= 1.0))
        return PF_RT_EINVAL;
    double s = pf_rt_importance_scale_appendix_a(map, n, frac);
    if (isnan(s))
        return PF_RT_ENOMEM;
    int empty = 1;
    for (size_t i = 0; i < n && empty; i++)
        empty = importance_value(map[i]) == 0.0;
    if (empty) { /* no information: a uniform density, as if every value were 1 */
        for (size_t i = 0; i < n; i++)
            remapped[i] = (float)frac;
        if (scale)
            *scale = frac;
        return PF_RT_OK;
    }
    s = remap_polish(map, n, frac * (double)n, s);
    for (size_t i = 0; i < n; i++) {
        double v = importance_value(map[i]);
        /* v == 0 stays 0 even for s = inf (which would give NaN). */
        remapped[i] = v == 0.0 ? 0.0f : (float)(s * v < 1.0 ? s * v : 1.0);
    }
    if (scale)
        *scale = s;
    return PF_RT_OK;
}

int pf_rt_importance_mask(const float *map, int w, int h, double frac, pf_rt_dither_method method,
                          uint8_t *mask, float *remapped, size_t *count)
{
    if (!map || !mask || w <= 0 || h <= 0 || !(frac > 0.0 && frac <= 1.0))
        return PF_RT_EINVAL;
    size_t n = (size_t)w * (size_t)h;
    float *m = remapped ? remapped : pf_rt_scratch(n * sizeof *m);
    if (!m)
        return PF_RT_ENOMEM;
    int rc = pf_rt_importance_remap(map, n, frac, m, NULL);
    if (rc == PF_RT_OK)
        rc = pf_rt_dither(m, w, h, method, mask, count);
    if (m != remapped)
        pf_rt_scratch_free(m);
    return rc;
}
