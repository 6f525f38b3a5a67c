/* Gaussian reconstruction of skipped samples as a normalised convolution, I' = (G*(I.S))/(G*S)
 * (the paper's eq. (1)), with the Young-van Vliet recursive Gaussian of base/gauss.h so the cost
 * does not depend on sigma. The denominator is filtered once and shared by every channel.
 *
 * Why the fallback threshold is relative: the recursive filter's tail decays exponentially, not
 * like a Gaussian (about 1e-5 of the peak at 10 sigma), and for large sigma it rings below zero by
 * ~1e-15 of the peak. A denominator that small is all tail and rounding, so where G*S is below
 * PF_RT_GAUSS_MIN_WEIGHT times the filter's peak (one isolated sample's weight at its own
 * position, 1/(2 pi sigma^2)) the pixel takes its nearest sample instead. In practice that is
 * only more than ~12 sigma away from every sample. */
#include "reconstruct/runtime.h"

#include "base/gauss.h"

#include <math.h>
#include <stdlib.h>

/* The smallest sigma base/gauss.h filters with (it raises smaller ones). */
#define RT_IIR_MIN_SIGMA 0.5
/* M_PI is not in C11, and this file must build in a user's project as plain C11. */
#define RT_PI 3.14159265358979323846

static int image_args_ok(const float *data, int w, int h, int channels, size_t stride,
                         size_t plane, const uint8_t *mask)
{
    return data && mask && w > 0 && h > 0 && channels >= 1 && stride >= (size_t)w &&
           (channels == 1 || plane >= stride * (size_t)h);
}

/* One reconstruction: what its row tasks share (channel c is the one being filtered). */
typedef struct gauss_recon {
    float *data;
    int w, h;
    size_t stride, plane;
    const uint8_t *mask;
    float *den, *num;
    float min_den;
    uint8_t *where;
    int any_where;
    int c;
} gauss_recon;

/* den = S on rows [begin, end) (filtered afterwards). */
static int32_t mask_rows(void *closure, int32_t begin, int32_t end)
{
    const gauss_recon *r = closure;
    for (size_t i = (size_t)begin * (size_t)r->w; i < (size_t)end * (size_t)r->w; i++)
        r->den[i] = r->mask[i] ? 1.0f : 0.0f;
    return 0;
}

/* num = I.S of channel c on rows [begin, end). */
static int32_t numerator_rows(void *closure, int32_t begin, int32_t end)
{
    const gauss_recon *r = closure;
    const float *pl = r->data + (size_t)r->c * r->plane;
    for (int32_t y = begin; y < end; y++) {
        const uint8_t *m = r->mask + (size_t)y * (size_t)r->w;
        const float *in = pl + (size_t)y * r->stride;
        float *o = r->num + (size_t)y * (size_t)r->w;
        for (int x = 0; x < r->w; x++)
            o[x] = m[x] ? in[x] : 0.0f;
    }
    return 0;
}

/* I = num/den of channel c at the skipped pixels of rows [begin, end) whose weight is trusted. */
static int32_t divide_rows(void *closure, int32_t begin, int32_t end)
{
    const gauss_recon *r = closure;
    float *pl = r->data + (size_t)r->c * r->plane;
    for (int32_t y = begin; y < end; y++) {
        const uint8_t *m = r->mask + (size_t)y * (size_t)r->w;
        const float *nr = r->num + (size_t)y * (size_t)r->w, *dr = r->den + (size_t)y * (size_t)r->w;
        float *out = pl + (size_t)y * r->stride;
        for (int x = 0; x < r->w; x++)
            if (!m[x] && dr[x] >= r->min_den)
                out[x] = nr[x] / dr[x];
    }
    return 0;
}

/* Marks the skipped pixels of rows [begin, end) whose weight is below min_den, and notes
 * whether there are any. */
static int32_t fallback_rows(void *closure, int32_t begin, int32_t end)
{
    gauss_recon *r = closure;
    int any = 0;
    for (size_t i = (size_t)begin * (size_t)r->w; i < (size_t)end * (size_t)r->w; i++) {
        /* `!(den >= min)` also catches a NaN weight. */
        r->where[i] = !r->mask[i] && !(r->den[i] >= r->min_den);
        any |= r->where[i];
    }
    if (any)
        __atomic_store_n(&r->any_where, 1, __ATOMIC_RELAXED);
    return 0;
}

/* den = G * S, then per channel num = G * (I.S) and the division. */
static int gauss_filter(gauss_recon *r, int channels, double sigma, pf_par_for par)
{
    pf_par_run(par, mask_rows, r, r->h);
    if (pf_gauss_iir_2d_par(r->den, r->w, r->h, (size_t)r->w, sigma, sigma, par) != 0)
        return PF_RT_ENOMEM;
    for (r->c = 0; r->c < channels; r->c++) {
        pf_par_run(par, numerator_rows, r, r->h);
        if (pf_gauss_iir_2d_par(r->num, r->w, r->h, (size_t)r->w, sigma, sigma, par) != 0)
            return PF_RT_ENOMEM;
        pf_par_run(par, divide_rows, r, r->h);
    }
    pf_par_run(par, fallback_rows, r, r->h);
    return PF_RT_OK;
}

int pf_rt_recon_gaussian_par(float *data, int w, int h, int channels, size_t stride,
                             size_t plane, const uint8_t *mask, double sigma, pf_par_for par)
{
    if (!image_args_ok(data, w, h, channels, stride, plane, mask) || !(sigma > 0.0) ||
        !isfinite(sigma))
        return PF_RT_EINVAL;
    size_t n = (size_t)w * (size_t)h;
    double s = sigma < RT_IIR_MIN_SIGMA ? RT_IIR_MIN_SIGMA : sigma;
    gauss_recon r = { .data = data, .w = w, .h = h, .stride = stride, .plane = plane,
                      .mask = mask, .den = pf_rt_scratch(n * sizeof(float)),
                      .num = pf_rt_scratch(n * sizeof(float)), .where = pf_rt_scratch(n),
                      .min_den = (float)(PF_RT_GAUSS_MIN_WEIGHT / (2.0 * RT_PI * s * s)) };
    int rc = PF_RT_ENOMEM;
    if (r.den && r.num && r.where)
        rc = gauss_filter(&r, channels, sigma, par);
    if (rc == PF_RT_OK && r.any_where)
        rc = pf_rt_recon_nearest_at_par(data, w, h, channels, stride, plane, mask, r.where, par);
    pf_rt_scratch_free(r.den);
    pf_rt_scratch_free(r.num);
    pf_rt_scratch_free(r.where);
    return rc;
}

int pf_rt_recon_gaussian(float *data, int w, int h, int channels, size_t stride, size_t plane,
                         const uint8_t *mask, double sigma)
{
    return pf_rt_recon_gaussian_par(data, w, h, channels, stride, plane, mask, sigma, NULL);
}
