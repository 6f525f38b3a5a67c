/* Separable Lanczos-3 resampling (see resample.h): per axis, a table of taps for every output
 * sample, then a horizontal and a vertical pass. */
#include "dataset/resample.h"

#include "base/arena.h"
#include "dataset/colour.h"

#include <math.h>
#include <stdlib.h>

#define PF_LANCZOS_LOBES 3.0

double pf_lanczos3(double x)
{
    x = fabs(x);
    if (x < 1e-12)
        return 1.0;
    if (x >= PF_LANCZOS_LOBES)
        return 0.0;
    double px = M_PI * x;
    return PF_LANCZOS_LOBES * sin(px) * sin(px / PF_LANCZOS_LOBES) / (px * px);
}

/* The taps of one axis: output sample i reads source samples index[i*width + t] with weights
 * weight[i*width + t], t < width (unused taps have weight 0 and index 0). */
typedef struct taps {
    int n_out, width;
    int *index;
    double *weight;
} taps;

static void taps_free(taps *t)
{
    free(t->index);
    free(t->weight);
}

/* Taps for n_out samples over [x0, x0 + len) of an axis of n_src samples. When downscaling the
 * kernel is stretched by the scale so its cutoff falls at the output's Nyquist rate. */
static taps taps_build(int n_src, double x0, double len, int n_out)
{
    double scale = len / n_out;
    double fs = scale > 1.0 ? scale : 1.0;
    double radius = PF_LANCZOS_LOBES * fs;
    taps t = { n_out, (int)ceil(2.0 * radius) + 2, NULL, NULL };
    t.index = pf_xcalloc((size_t)n_out * (size_t)t.width, sizeof *t.index);
    t.weight = pf_xcalloc((size_t)n_out * (size_t)t.width, sizeof *t.weight);
    for (int i = 0; i < n_out; i++) {
        double c = x0 + (i + 0.5) * scale;
        int j0 = (int)ceil(c - radius - 0.5), j1 = (int)floor(c + radius - 0.5);
        int *idx = t.index + (size_t)i * (size_t)t.width;
        double *w = t.weight + (size_t)i * (size_t)t.width, sum = 0.0;
        for (int j = j0, n = 0; j <= j1 && n < t.width; j++, n++) {
            w[n] = pf_lanczos3((j + 0.5 - c) / fs);
            idx[n] = j < 0 ? 0 : j >= n_src ? n_src - 1 : j;
            sum += w[n];
        }
        for (int n = 0; n < t.width; n++)
            w[n] /= sum;
    }
    return t;
}

/* dst row (length t->n_out) from a src row read with element step `step`. */
static void apply_taps(const taps *t, const float *src, size_t step, float *dst, size_t dstep)
{
    for (int i = 0; i < t->n_out; i++) {
        const int *idx = t->index + (size_t)i * (size_t)t->width;
        const double *w = t->weight + (size_t)i * (size_t)t->width;
        double acc = 0.0;
        for (int n = 0; n < t->width; n++)
            acc += w[n] * src[(size_t)idx[n] * step];
        dst[(size_t)i * dstep] = (float)acc;
    }
}

pf_image *pf_resample_window(const pf_image *img, pf_window win, int out_w, int out_h,
                             pf_error *err)
{
    if (out_w <= 0 || out_h <= 0 || !(win.w > 0.0) || !(win.h > 0.0)) {
        pf_fail(err, "resample: empty source window or output size %dx%d", out_w, out_h);
        return NULL;
    }
    pf_image *mid = pf_image_new(out_w, img->height, img->channels, err);
    pf_image *out = mid ? pf_image_new(out_w, out_h, img->channels, err) : NULL;
    if (!out) {
        pf_image_free(mid);
        return NULL;
    }
    taps tx = taps_build(img->width, win.x0, win.w, out_w);
    taps ty = taps_build(img->height, win.y0, win.h, out_h);
    for (int c = 0; c < img->channels; c++) {
        for (int y = 0; y < img->height; y++)
            apply_taps(&tx, pf_image_at(img, 0, y, c), 1, pf_image_at(mid, 0, y, c), 1);
        for (int x = 0; x < out_w; x++)
            apply_taps(&ty, pf_image_at(mid, x, 0, c), mid->stride, pf_image_at(out, x, 0, c),
                       out->stride);
    }
    taps_free(&tx);
    taps_free(&ty);
    pf_image_free(mid);
    return out;
}

pf_image *pf_resample(const pf_image *img, int out_w, int out_h, pf_error *err)
{
    pf_window all = { 0.0, 0.0, img->width, img->height };
    return pf_resample_window(img, all, out_w, out_h, err);
}

pf_window pf_crop_window(int width, int height, int out_w, int out_h, double anchor)
{
    double aspect = (double)out_w / out_h;
    pf_window win = { 0.0, 0.0, width, height };
    anchor = anchor < 0.0 ? 0.0 : anchor > 1.0 ? 1.0 : anchor;
    if ((double)width / height > aspect) {
        win.w = height * aspect;
        win.x0 = (width - win.w) * anchor;
    } else {
        win.h = width / aspect;
        win.y0 = (height - win.h) * anchor;
    }
    return win;
}

/* Clamp to [0,1] and round to the 8-bit grid the way pf_image_save writes it. */
static void quantize8_round(pf_image *img)
{
    for (int c = 0; c < img->channels; c++)
        for (int y = 0; y < img->height; y++) {
            float *row = pf_image_at(img, 0, y, c);
            for (int x = 0; x < img->width; x++) {
                float v = row[x] > 0.0f ? row[x] : 0.0f; /* NaN -> 0 as well */
                v = v < 1.0f ? v : 1.0f;
                row[x] = floorf(v * 255.0f + 0.5f) / 255.0f;
            }
        }
}

pf_image *pf_resample_photo(const pf_image *img, int out_w, int out_h, double anchor,
                            pf_error *err)
{
    pf_image *rgb = pf_image_to_rgb(img, err);
    if (!rgb || pf_image_convert_colour(rgb, PF_SRGB_TO_LINEAR, err) != 0) {
        pf_image_free(rgb);
        return NULL;
    }
    pf_window win = pf_crop_window(img->width, img->height, out_w, out_h, anchor);
    pf_image *out = pf_resample_window(rgb, win, out_w, out_h, err);
    pf_image_free(rgb);
    if (!out)
        return NULL;
    if (pf_image_convert_colour(out, PF_LINEAR_TO_SRGB, err) != 0) {
        pf_image_free(out);
        return NULL;
    }
    quantize8_round(out);
    return out;
}
