/* End-to-end use of the runtime as generated code will use it: a photo stands for a stage's
 * output, a strategy picks the samples, the rest are thrown away (set to NaN, so that any pixel a
 * kernel forgets shows), and a reconstruction fills them back. The mean absolute error against
 * the photo must be modest (the photo is a dense forest, the hardest of the six), denser sampling
 * must not be worse, and the Gaussians must beat nearest. */
#include "reconstruct/runtime.h"
#include "tests/reconstruct/test_rt_util.h"

#include <string.h>

typedef enum recon_kind { R_NEAREST, R_GAUSS, R_GAUSS_SV } recon_kind;
typedef enum sampling_kind { S_IMPORTANCE, S_ADAPTIVE } sampling_kind;

/* Samples the photo with the strategy at fraction f; fills mask and, for gaussian-sv, sigma. */
static void sample(const pf_image *img, sampling_kind s, double f, uint8_t *mask, float *sigma)
{
    int w = img->width, h = img->height, k = 3;
    size_t n = (size_t)w * h;
    if (s == S_IMPORTANCE) {
        float *map = malloc(n * sizeof *map), *rem = malloc(n * sizeof *rem);
        pf_rt_importance_map(img->data, w, h, img->stride, h / 64.0, map);
        pf_rt_importance_mask(map, w, h, f, PF_RT_DITHER_OSTROMOUKHOV, mask, rem, NULL);
        pf_rt_sigma_importance(rem, n, 0.73, f, sigma);
        free(map);
        free(rem);
        return;
    }
    uint8_t *fine = malloc(n), *isf = malloc(n);
    pf_rt_adaptive_coarse(w, h, k, mask, NULL);
    pf_rt_adaptive_refine(img->data, w, h, img->channels, img->stride, img->plane, k, f, fine,
                          isf, NULL);
    for (size_t i = 0; i < n; i++)
        mask[i] |= fine[i];
    pf_rt_sigma_adaptive(isf, n, 0.64, k, sigma);
    free(fine);
    free(isf);
}

/* Mean |reconstruction - photo| over all samples of all channels (NaN if any pixel is left). */
static double recon_error(const pf_image *img, sampling_kind s, recon_kind r, double f)
{
    int w = img->width, h = img->height;
    size_t n = (size_t)w * h;
    uint8_t *mask = malloc(n);
    float *sigma = malloc(n * sizeof *sigma);
    sample(img, s, f, mask, sigma);
    pf_image *work = pf_image_clone(img);
    for (int c = 0; c < img->channels; c++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (!mask[y * w + x])
                    *pf_image_at(work, x, y, c) = NAN;
    int rc = r == R_NEAREST ? pf_rt_recon_nearest(work->data, w, h, 3, work->stride, work->plane,
                                                  mask)
             : r == R_GAUSS ? pf_rt_recon_gaussian(work->data, w, h, 3, work->stride, work->plane,
                                                   mask, pf_rt_sigma_irregular(0.5, f))
                            : pf_rt_recon_gaussian_sv(work->data, w, h, 3, work->stride,
                                                      work->plane, mask, sigma);
    CU_ASSERT_EQUAL(rc, PF_RT_OK);
    double err = 0;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                err += fabs(*pf_image_at(work, x, y, c) - *pf_image_at(img, x, y, c));
    pf_image_free(work);
    free(mask);
    free(sigma);
    return err / (3.0 * n);
}

static void test_strategies_reconstruct_a_photo(void)
{
    static const char *const sname[] = { "importance", "adaptive" };
    static const char *const rname[] = { "nearest", "gaussian", "gaussian-sv" };
    pf_image *img = rt_load_photo(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    for (int s = 0; s < 2; s++) {
        double nearest = 0;
        for (int r = 0; r < 3; r++) {
            double lo = recon_error(img, (sampling_kind)s, (recon_kind)r, 0.25);
            double hi = recon_error(img, (sampling_kind)s, (recon_kind)r, 0.6);
            rt_report("%s + %s on natural_29: mean |error| %.4f at f=0.25, %.4f at f=0.6\n",
                      sname[s], rname[r], lo, hi);
            CU_ASSERT(isfinite(lo) && isfinite(hi)); /* no pixel left unreconstructed */
            CU_ASSERT(lo < 0.1);
            CU_ASSERT(hi <= lo);
            if (r == R_NEAREST)
                nearest = lo;
            else
                CU_ASSERT(lo < nearest);
        }
    }
    pf_image_free(img);
}

/* Grid sampling in store mode: the multilinear fill of a 4x4 grid against nearest. */
static void test_grid_store_reconstructs_a_photo(void)
{
    pf_image *img = rt_load_photo(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    int64_t ext[3] = { img->width, img->height, 3 };
    int64_t st[3] = { 1, (int64_t)img->stride, (int64_t)img->plane };
    int64_t org[3] = { 0, 0, 0 }, sp[3] = { 4, 4, 1 };
    double err[2];
    for (int k = 0; k < 2; k++) {
        pf_image *work = pf_image_clone(img);
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < img->height; y++)
                for (int x = 0; x < img->width; x++)
                    if (x % 4 || y % 4)
                        *pf_image_at(work, x, y, c) = NAN;
        CU_ASSERT_EQUAL(k ? pf_rt_grid_nearest(work->data, 3, ext, st, org, sp)
                          : pf_rt_grid_multilinear(work->data, 3, ext, st, org, sp),
                        PF_RT_OK);
        double e = 0;
        for (size_t i = 0; i < img->plane * 3; i++)
            e += fabs(work->data[i] - img->data[i]);
        err[k] = e / (3.0 * img->width * img->height);
        pf_image_free(work);
    }
    rt_report("grid 4x4 on natural_29: mean |error| multilinear %.4f, nearest %.4f\n", err[0],
              err[1]);
    CU_ASSERT(isfinite(err[0]) && isfinite(err[1]));
    CU_ASSERT(err[0] < err[1]);
    pf_image_free(img);
}

PF_TEST_SUITE(rt_pipeline, PF_TEST(test_strategies_reconstruct_a_photo),
              PF_TEST(test_grid_store_reconstructs_a_photo))
