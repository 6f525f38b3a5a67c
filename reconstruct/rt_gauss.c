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

/* den = G * S, as floats in a w*h plane. */
static void filter_mask(const uint8_t *mask, int w, int h, double sigma, float *den)
{
    size_t n = (size_t)w * (size_t)h;
    for (size_t i = 0; i < n; i++)
        den[i] = mask[i] ? 1.0f : 0.0f;
    pf_gauss_iir_2d(den, w, h, (size_t)w, sigma, sigma);
}

/* One channel: num = G * (I.S), then I = num/den at skipped pixels whose weight is trusted. */
static void filter_channel(float *pl, int w, int h, size_t stride, const uint8_t *mask,
                           const float *den, float min_den, double sigma, float *num)
{
    for (int y = 0; y < h; y++) {
        const uint8_t *m = mask + (size_t)y * (size_t)w;
        const float *in = pl + (size_t)y * stride;
        float *o = num + (size_t)y * (size_t)w;
        for (int x = 0; x < w; x++)
            o[x] = m[x] ? in[x] : 0.0f;
    }
    pf_gauss_iir_2d(num, w, h, (size_t)w, sigma, sigma);
    for (int y = 0; y < h; y++) {
        const uint8_t *m = mask + (size_t)y * (size_t)w;
        const float *nr = num + (size_t)y * (size_t)w, *dr = den + (size_t)y * (size_t)w;
        float *out = pl + (size_t)y * stride;
        for (int x = 0; x < w; x++)
            if (!m[x] && dr[x] >= min_den)
                out[x] = nr[x] / dr[x];
    }
}

/* Marks the skipped pixels whose weight is below min_den; returns whether there are any. */
static int mark_fallback(const uint8_t *mask, const float *den, size_t n, float min_den,
                         uint8_t *where)
{
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        /* `!(den >= min)` also catches a NaN weight. */
        where[i] = !mask[i] && !(den[i] >= min_den);
        any |= where[i];
    }
    return any;
}

int pf_rt_recon_gaussian(float *data, int w, int h, int channels, size_t stride, size_t plane,
                         const uint8_t *mask, double sigma)
{
    if (!image_args_ok(data, w, h, channels, stride, plane, mask) || !(sigma > 0.0) ||
        !isfinite(sigma))
        return PF_RT_EINVAL;
    size_t n = (size_t)w * (size_t)h;
    float *den = malloc(n * sizeof *den);
    float *num = malloc(n * sizeof *num);
    uint8_t *where = malloc(n);
    int rc = PF_RT_ENOMEM;
    if (den && num && where) {
        double s = sigma < RT_IIR_MIN_SIGMA ? RT_IIR_MIN_SIGMA : sigma;
        float min_den = (float)(PF_RT_GAUSS_MIN_WEIGHT / (2.0 * RT_PI * s * s));
        filter_mask(mask, w, h, sigma, den);
        for (int c = 0; c < channels; c++)
            filter_channel(data + (size_t)c * plane, w, h, stride, mask, den, min_den, sigma,
                           num);
        rc = PF_RT_OK;
        if (mark_fallback(mask, den, n, min_den, where))
            rc = pf_rt_recon_nearest_at(data, w, h, channels, stride, plane, mask, where);
    }
    free(den);
    free(num);
    free(where);
    return rc;
}
