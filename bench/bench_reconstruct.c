/* bench_reconstruct: the cost of every reconstruction-runtime kernel at the paper's training size
 * (820x614x3, the photo natural_0) and at 2048x1536x3 (the same photo upscaled bilinearly), as
 * the median of several runs, in milliseconds and as a ratio to one memcpy of the image (a
 * machine-independent unit: "how many passes over the image is this kernel worth"). The masks
 * and sigma maps are the ones the tuner would build: importance f = 0.25 (sigma_imp = h/64),
 * adaptive k = 3, f = 0.25 (and k = 2, f = 0.4, bench_scaling's), grid 4x4.
 * Usage: bench_reconstruct [repetitions]. */
#include "base/clock.h"
#include "dataset/image.h"
#include "reconstruct/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPS 64

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Everything one size needs: the photo, a scratch copy, masks and maps. */
typedef struct bench_ctx {
    pf_image *img, *work;
    int w, h;
    size_t n;
    float *map, *rem, *sig_imp, *sig_ad;
    uint8_t *imp_mask, *ad_coarse, *ad_fine, *ad_all, *ad_isfine, *grid_mask, *mask_out;
    int32_t *index;
    int reps;
} bench_ctx;

typedef void (*kernel_fn)(bench_ctx *c);

/* Fastest of c->reps runs of fn (seconds), each after restoring the work image. */
static double time_kernel(bench_ctx *c, kernel_fn fn)
{
    double t[MAX_REPS];
    size_t bytes = c->img->plane * (size_t)c->img->channels * sizeof(float);
    for (int r = 0; r < c->reps; r++) {
        memcpy(c->work->data, c->img->data, bytes);
        double t0 = pf_now_ms();
        fn(c);
        t[r] = (pf_now_ms() - t0) / 1e3;
    }
    qsort(t, (size_t)c->reps, sizeof t[0], cmp_double);
    return t[0];
}

/* ---- the kernels ---- */

#define IMG(c) (c)->work->data, (c)->w, (c)->h, (c)->work->channels, (c)->work->stride, \
               (c)->work->plane

static void k_memcpy(bench_ctx *c)
{
    memcpy(c->work->data, c->img->data, c->img->plane * (size_t)c->img->channels * 4);
}
static void k_grid_mask(bench_ctx *c)
{
    pf_rt_grid_mask(c->w, c->h, 0, 0, 4, 4, c->mask_out, NULL);
}
static void k_importance_map(bench_ctx *c)
{
    pf_rt_importance_map(c->img->data, c->w, c->h, c->img->stride, c->h / 64.0, c->map);
}
static void k_remap(bench_ctx *c)
{
    pf_rt_importance_remap(c->map, c->n, 0.25, c->rem, NULL);
}
static void k_dither_ostro(bench_ctx *c)
{
    pf_rt_dither(c->rem, c->w, c->h, PF_RT_DITHER_OSTROMOUKHOV, c->mask_out, NULL);
}
static void k_dither_fs(bench_ctx *c)
{
    pf_rt_dither(c->rem, c->w, c->h, PF_RT_DITHER_FLOYD_STEINBERG, c->mask_out, NULL);
}
static void k_importance_all(bench_ctx *c)
{
    k_importance_map(c);
    pf_rt_importance_mask(c->map, c->w, c->h, 0.25, PF_RT_DITHER_OSTROMOUKHOV, c->mask_out,
                          c->rem, NULL);
}
static void k_adaptive_coarse(bench_ctx *c)
{
    pf_rt_adaptive_coarse(c->w, c->h, 3, c->mask_out, NULL);
}
static void k_adaptive_refine(bench_ctx *c)
{
    pf_rt_adaptive_refine(IMG(c), 3, 0.25, c->mask_out, c->ad_isfine, NULL);
}
static void k_adaptive_refine_k2(bench_ctx *c)
{
    pf_rt_adaptive_refine(IMG(c), 2, 0.4, c->mask_out, c->ad_isfine, NULL);
}
static void k_nearest_index(bench_ctx *c)
{
    pf_rt_nearest_index(c->imp_mask, c->w, c->h, c->index, NULL);
}
static void k_recon_nearest(bench_ctx *c)
{
    pf_rt_recon_nearest(IMG(c), c->imp_mask);
}
static void k_recon_gauss(bench_ctx *c)
{
    pf_rt_recon_gaussian(IMG(c), c->imp_mask, pf_rt_sigma_irregular(0.5, 0.25));
}
static void k_recon_gauss_grid(bench_ctx *c)
{
    int64_t sp[2] = { 4, 4 };
    pf_rt_recon_gaussian(IMG(c), c->grid_mask, pf_rt_sigma_grid(0.5, 2, sp));
}
static void k_sigma_importance(bench_ctx *c)
{
    pf_rt_sigma_importance(c->rem, c->n, 0.73, 0.25, c->sig_imp);
}
static void k_recon_sv_importance(bench_ctx *c)
{
    pf_rt_recon_gaussian_sv(IMG(c), c->imp_mask, c->sig_imp);
}
static void k_recon_sv_adaptive(bench_ctx *c)
{
    pf_rt_recon_gaussian_sv(IMG(c), c->ad_all, c->sig_ad);
}
static void k_grid_view(bench_ctx *c, int nearest)
{
    int64_t ext[3] = { c->w, c->h, c->work->channels };
    int64_t st[3] = { 1, (int64_t)c->work->stride, (int64_t)c->work->plane };
    int64_t org[3] = { 0, 0, 0 }, sp[3] = { 4, 4, 1 };
    if (nearest)
        pf_rt_grid_nearest(c->work->data, 3, ext, st, org, sp);
    else
        pf_rt_grid_multilinear(c->work->data, 3, ext, st, org, sp);
}
static void k_grid_linear(bench_ctx *c)
{
    k_grid_view(c, 0);
}
static void k_grid_nearest(bench_ctx *c)
{
    k_grid_view(c, 1);
}

typedef struct kernel {
    const char *name;
    kernel_fn fn;
} kernel;

static const kernel kernels[] = {
    { "memcpy of the image (unit)", k_memcpy },
    { "grid mask 4x4", k_grid_mask },
    { "importance map (2 IIR blurs)", k_importance_map },
    { "importance remap (App. A)", k_remap },
    { "dither Ostromoukhov", k_dither_ostro },
    { "dither Floyd-Steinberg", k_dither_fs },
    { "importance mask, all steps", k_importance_all },
    { "adaptive coarse mask k=3", k_adaptive_coarse },
    { "adaptive refine k=3 f=.25", k_adaptive_refine },
    { "adaptive refine k=2 f=.4", k_adaptive_refine_k2 },
    { "nearest index (Manhattan)", k_nearest_index },
    { "recon nearest (importance)", k_recon_nearest },
    { "recon gaussian (importance)", k_recon_gauss },
    { "recon gaussian (grid 4x4)", k_recon_gauss_grid },
    { "sigma map (importance)", k_sigma_importance },
    { "recon gaussian-sv (importance)", k_recon_sv_importance },
    { "recon gaussian-sv (adaptive)", k_recon_sv_adaptive },
    { "grid multilinear 4x4 (store)", k_grid_linear },
    { "grid nearest 4x4 (store)", k_grid_nearest },
};
#define NKERNELS (sizeof kernels / sizeof kernels[0])

/* Bilinear resize of a planar RGB image (for the large size). */
static pf_image *resize(const pf_image *src, int w, int h)
{
    pf_image *dst = pf_image_new(w, h, src->channels, NULL);
    for (int c = 0; c < src->channels; c++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double sx = (x + 0.5) * src->width / w - 0.5;
                double sy = (y + 0.5) * src->height / h - 0.5;
                int x0 = sx < 0 ? 0 : (int)sx, y0 = sy < 0 ? 0 : (int)sy;
                int x1 = x0 + 1 < src->width ? x0 + 1 : x0, y1 = y0 + 1 < src->height ? y0 + 1 : y0;
                double fx = sx - x0 < 0 ? 0 : sx - x0, fy = sy - y0 < 0 ? 0 : sy - y0;
                double v = (1 - fx) * (1 - fy) * *pf_image_at(src, x0, y0, c) +
                           fx * (1 - fy) * *pf_image_at(src, x1, y0, c) +
                           (1 - fx) * fy * *pf_image_at(src, x0, y1, c) +
                           fx * fy * *pf_image_at(src, x1, y1, c);
                *pf_image_at(dst, x, y, c) = (float)v;
            }
    return dst;
}

/* Builds the masks and maps once (the kernels that make them are timed separately). */
static void ctx_prepare(bench_ctx *c, pf_image *img, int reps)
{
    c->img = img;
    c->work = pf_image_clone(img);
    c->w = img->width;
    c->h = img->height;
    c->n = (size_t)c->w * (size_t)c->h;
    c->reps = reps;
    c->map = malloc(c->n * sizeof(float));
    c->rem = malloc(c->n * sizeof(float));
    c->sig_imp = malloc(c->n * sizeof(float));
    c->sig_ad = malloc(c->n * sizeof(float));
    c->index = malloc(c->n * sizeof(int32_t));
    c->imp_mask = malloc(c->n);
    c->ad_coarse = malloc(c->n);
    c->ad_fine = malloc(c->n);
    c->ad_all = malloc(c->n);
    c->ad_isfine = malloc(c->n);
    c->grid_mask = malloc(c->n);
    c->mask_out = malloc(c->n);
    pf_rt_importance_map(img->data, c->w, c->h, img->stride, c->h / 64.0, c->map);
    pf_rt_importance_mask(c->map, c->w, c->h, 0.25, PF_RT_DITHER_OSTROMOUKHOV, c->imp_mask,
                          c->rem, NULL);
    pf_rt_sigma_importance(c->rem, c->n, 0.73, 0.25, c->sig_imp);
    pf_rt_adaptive_coarse(c->w, c->h, 3, c->ad_coarse, NULL);
    pf_rt_adaptive_refine(img->data, c->w, c->h, img->channels, img->stride, img->plane, 3, 0.25,
                          c->ad_fine, c->ad_isfine, NULL);
    for (size_t i = 0; i < c->n; i++)
        c->ad_all[i] = c->ad_coarse[i] | c->ad_fine[i];
    pf_rt_sigma_adaptive(c->ad_isfine, c->n, 0.9, 3, c->sig_ad);
    pf_rt_grid_mask(c->w, c->h, 0, 0, 4, 4, c->grid_mask, NULL);
}

static void ctx_free(bench_ctx *c)
{
    pf_image_free(c->work);
    free(c->map);
    free(c->rem);
    free(c->sig_imp);
    free(c->sig_ad);
    free(c->index);
    free(c->imp_mask);
    free(c->ad_coarse);
    free(c->ad_fine);
    free(c->ad_all);
    free(c->ad_isfine);
    free(c->grid_mask);
    free(c->mask_out);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 9;
    reps = reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps;
    pf_error err;
    pf_image *photo = pf_image_load(PF_SOURCE_DIR "/data/images/train/natural_0_820x614.png", &err);
    if (!photo) {
        fprintf(stderr, "bench_reconstruct: %s\n", err.msg);
        return 1;
    }
    pf_image *small = pf_image_to_rgb(photo, &err), *big = resize(small, 2048, 1536);
    pf_image_free(photo);
    bench_ctx cs, cb;
    ctx_prepare(&cs, small, reps);
    ctx_prepare(&cb, big, reps);
    double ts[NKERNELS], tb[NKERNELS];
    for (size_t k = 0; k < NKERNELS; k++) {
        ts[k] = time_kernel(&cs, kernels[k].fn);
        tb[k] = time_kernel(&cb, kernels[k].fn);
    }
    printf("reconstruction runtime, fastest of %d runs, thread CPU time (x memcpy = time / one "
           "image memcpy)\n", reps);
    printf("%-32s %22s %24s\n", "kernel", "820x614x3", "2048x1536x3");
    for (size_t k = 0; k < NKERNELS; k++)
        printf("%-32s %9.3f ms %7.1fx memcpy %9.3f ms %7.1fx memcpy\n", kernels[k].name,
               1e3 * ts[k], ts[k] / ts[0], 1e3 * tb[k], tb[k] / tb[0]);
    ctx_free(&cs);
    ctx_free(&cb);
    pf_image_free(small);
    pf_image_free(big);
    return 0;
}
