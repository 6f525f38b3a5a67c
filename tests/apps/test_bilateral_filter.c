/* apps/bilateral_filter.pf against a plain-C reference written from
 * ../shared/docs/paper-apps.md, section 3 (not from the .pf): 9x9 window, sigma_spatial 4 px,
 * sigma_range 0.08 on the signed luma difference, the un-centred spatial table (bug kept),
 * out-of-image taps skipped. */
#include "tests/apps/apps_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BF_PI 3.14159265358979f

/* K[i][j] = exp(-(i^2 + j^2) / (2 * 4^2)) / (2 pi 4^2), i, j = 0..8 — indexed from its corner. */
static void spatial_table(float K[9][9])
{
    const float ss = 4.0f;
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 9; j++)
            K[i][j] = expf(-(float)(i * i + j * j) / (2.0f * ss * ss)) / (2.0f * BF_PI * ss * ss);
}

static float luma_diff(const pf_image *in, int x, int y, int xx, int yy)
{
    return 0.299f * (*pf_image_at(in, x, y, 0) - *pf_image_at(in, xx, yy, 0)) +
           0.587f * (*pf_image_at(in, x, y, 1) - *pf_image_at(in, xx, yy, 1)) +
           0.114f * (*pf_image_at(in, x, y, 2) - *pf_image_at(in, xx, yy, 2));
}

/* One output pixel: rows r outer, columns c inner; the tap at (r, c) weighs K[r + 4][c + 4]. */
static void filter_pixel(const pf_image *in, float K[9][9], int x, int y, pf_image *out)
{
    const float sr = 0.08f;
    float wsum = 0.0f, acc[3] = { 0.0f, 0.0f, 0.0f };
    for (int r = -4; r <= 4; r++)
        for (int c = -4; c <= 4; c++) {
            int xx = x + c, yy = y + r;
            if (xx < 0 || xx >= in->width || yy < 0 || yy >= in->height)
                continue; /* out-of-image taps are skipped */
            float d = luma_diff(in, x, y, xx, yy);
            float w = K[r + 4][c + 4] * expf(-(d * d) / (2.0f * sr * sr)) /
                      (sr * sqrtf(2.0f * BF_PI));
            wsum += w;
            for (int k = 0; k < 3; k++)
                acc[k] += w * *pf_image_at(in, xx, yy, k);
        }
    for (int k = 0; k < 3; k++)
        *pf_image_at(out, x, y, k) = acc[k] / wsum;
}

static pf_image *bilateral_reference(const pf_image *in)
{
    float K[9][9];
    spatial_table(K);
    pf_error err;
    pf_image *out = pf_image_new(in->width, in->height, 3, &err);
    for (int y = 0; y < in->height; y++)
        for (int x = 0; x < in->width; x++)
            filter_pixel(in, K, x, y, out);
    return out;
}

static void check_one(const pf_program *prog, const pf_image *in, const char *label)
{
    double secs = 0.0;
    pf_image *got = apps_run(prog, in, NULL, &secs);
    pf_image *want = bilateral_reference(in);
    apps_expect_match("bilateral_filter", label, got, want, secs);
    pf_image_free(got);
    pf_image_free(want);
}

/* All six photos (about 1 s per 256x192 photo and 10-20 s per 820x614 one). */
static void test_bilateral_filter_photos(void)
{
    pf_program *prog = apps_load("bilateral_filter");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (int i = 0; i < APPS_N_PHOTOS; i++) {
        pf_image *in = apps_photo(apps_photos[i]);
        if (in)
            check_one(prog, in, apps_photos[i]);
        pf_image_free(in);
    }
    pf_program_free(prog);
}

static void test_bilateral_filter_shapes(void)
{
    static const int shapes[][2] = { { 1, 1 }, { 7, 3 }, { 1000, 1 }, { 1, 9 }, { 31, 23 } };
    pf_program *prog = apps_load("bilateral_filter");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char label[64];
        snprintf(label, sizeof label, "noise_%dx%d", shapes[i][0], shapes[i][1]);
        pf_image *in = apps_noise_image(shapes[i][0], shapes[i][1], 3, (unsigned)i + 11);
        check_one(prog, in, label);
        pf_image_free(in);
    }
    pf_program_free(prog);
}

/* The skew of the un-centred table, seen on a vertical edge: a flat pixel just left of the
 * edge sees only its right neighbours' (different) values with the small weights of the
 * table's far side, a pixel just right of it the left neighbours with the large weights, so
 * the right side bleeds far more than the left. Here the luma step is small (0.04) so the
 * range term lets both through. */
static void test_bilateral_filter_skew(void)
{
    pf_program *prog = apps_load("bilateral_filter");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_error err;
    pf_image *in = pf_image_new(20, 9, 3, &err);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 9; y++)
            for (int x = 0; x < 20; x++)
                *pf_image_at(in, x, y, c) = x < 10 ? 0.50f : 0.54f;
    pf_image *out = apps_run(prog, in, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    float left_shift = *pf_image_at(out, 9, 4, 0) - 0.50f;
    float right_shift = 0.54f - *pf_image_at(out, 10, 4, 0);
    CU_ASSERT(left_shift > 0.0f);
    CU_ASSERT(right_shift > 2.0f * left_shift); /* about 3.3x; a centred filter gives 1x */
    pf_image_free(out);
    pf_image_free(in);
    pf_program_free(prog);
}

/* An RGB app refuses a 1-channel input with a message naming the mismatch. */
static void test_bilateral_filter_needs_rgb(void)
{
    pf_program *prog = apps_load("bilateral_filter");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    int64_t ext[1][PF_MAX_DIMS] = { { 10, 10, 1, 1 } };
    pf_binding b;
    pf_error err;
    CU_ASSERT_EQUAL(pf_bind(prog, &pv, (const int64_t(*)[PF_MAX_DIMS])ext, &b, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'in'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "3"));
    pf_params_free(&pv);
    pf_program_free(prog);
}

PF_TEST_SUITE(apps_bilateral_filter,
              PF_TEST(test_bilateral_filter_photos),
              PF_TEST(test_bilateral_filter_shapes),
              PF_TEST(test_bilateral_filter_skew),
              PF_TEST(test_bilateral_filter_needs_rgb))
