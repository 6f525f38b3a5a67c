/* Tests for dataset/texture.h: flat and smooth images are untextured, noise and checkerboards
 * strongly textured, a single edge stays low (the cross-bilateral step's purpose), and the
 * bilateral-grid evaluation agrees with a brute-force cross-bilateral filter. Prints the
 * measure of the six bundled training photos. */
#include "dataset/texture.h"
#include "base/gauss.h"
#include "tests/dataset/dataset_test_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <string.h>

static double mean_of(const pf_image *img)
{
    pf_error err;
    double t = pf_texture_mean(img, &err);
    CU_ASSERT(isfinite(t));
    return t;
}

static void test_texture_flat_is_zero(void)
{
    pf_image *img = pf_image_new(820, 614, 3, NULL);
    for (size_t i = 0; i < img->plane * 3; i++)
        img->data[i] = 0.4f;
    double t = mean_of(img);
    printf("\n    flat: %.6f", t);
    CU_ASSERT(t < 0.01);
    pf_image_free(img);
}

static void test_texture_smooth_ramp_is_low(void)
{
    pf_image *img = pf_image_new(820, 614, 1, NULL);
    for (int y = 0; y < 614; y++)
        for (int x = 0; x < 820; x++)
            *pf_image_at(img, x, y, 0) = (float)x / 819.0f * 0.7f + (float)y / 613.0f * 0.3f;
    double t = mean_of(img);
    printf("\n    ramp: %.4f", t);
    CU_ASSERT(t < 2.0);
    pf_image_free(img);
}

/* One strong vertical edge: the high-pass is large next to it, but the cross-bilateral average
 * keeps that response on each side of the edge, so the image as a whole stays "low". */
static void test_texture_single_edge_is_low(void)
{
    pf_image *img = pf_image_new(820, 614, 3, NULL);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 614; y++)
            for (int x = 410; x < 820; x++)
                *pf_image_at(img, x, y, c) = 1.0f;
    double t = mean_of(img);
    printf("\n    edge: %.4f", t);
    CU_ASSERT(t < 12.0);
    pf_image_free(img);
}

static void test_texture_noise_and_checkerboard_are_high(void)
{
    pf_image *noise = pf_t_noise_image(820, 614, 3, 17);
    double tn = mean_of(noise);
    pf_image *check = pf_image_new(820, 614, 1, NULL);
    for (int y = 0; y < 614; y++)
        for (int x = 0; x < 820; x++)
            *pf_image_at(check, x, y, 0) = (float)(((x / 2) + (y / 2)) & 1);
    double tc = mean_of(check);
    /* Mild noise (+-5 of 255) on mid-gray: textured, but far less than the above. */
    pf_image *mild = pf_image_new(820, 614, 1, NULL);
    uint64_t seed = 4;
    for (int y = 0; y < 614; y++)
        for (int x = 0; x < 820; x++)
            *pf_image_at(mild, x, y, 0) = 0.5f + (float)((pf_t_uniform(&seed) - 0.5) * 10 / 255);
    double tm = mean_of(mild);
    printf("\n    noise %.2f, checkerboard %.2f, mild noise %.2f", tn, tc, tm);
    CU_ASSERT(tn > 15.0);
    CU_ASSERT(tc > 15.0);
    CU_ASSERT(tm > 1.0 && tm < 12.0);
    pf_image_free(noise);
    pf_image_free(check);
    pf_image_free(mild);
}

/* A gray image and its RGB copy have the same intensity, hence the same map. */
static void test_texture_gray_equals_rgb(void)
{
    pf_image *g = pf_t_noise_image(64, 48, 1, 3);
    pf_error err;
    pf_image *rgb = pf_image_to_rgb(g, &err);
    pf_image *mg = pf_texture_map(g, &err), *mr = pf_texture_map(rgb, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mr);
    CU_ASSERT_EQUAL(mg->channels, 1);
    CU_ASSERT_EQUAL(mg->width, 64);
    CU_ASSERT(pf_t_max_abs_diff(mg, mr) < 1e-3);
    pf_image_free(g);
    pf_image_free(rgb);
    pf_image_free(mg);
    pf_image_free(mr);
}

/* texture.c's definition evaluated by brute force: the same intensity and high-pass, then the
 * cross-bilateral sum over a 3-sigma window (the Gaussian beyond is below 1.2%). */
static pf_image *texture_brute_force(const pf_image *img)
{
    int w = img->width, h = img->height;
    double ss = (w > h ? w : h) / 64.0, sr = 25.5;
    pf_image *lum = pf_image_new(w, h, 1, NULL), *out = pf_image_new(w, h, 1, NULL);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float v[3];
            for (int c = 0; c < 3; c++)
                v[c] = fminf(1.0f, fmaxf(0.0f, *pf_image_at(img, x, y, c)));
            *pf_image_at(lum, x, y, 0) = 255.0f * (0.299f * v[0] + 0.587f * v[1] + 0.114f * v[2]);
        }
    pf_image *hp = pf_image_clone(lum);
    pf_gauss_iir_2d(hp->data, w, h, hp->stride, ss, ss);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float *p = pf_image_at(hp, x, y, 0);
            *p = fabsf(*pf_image_at(lum, x, y, 0) - *p);
        }
    int r = (int)ceil(3 * ss);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double num = 0, den = 0, lp = *pf_image_at(lum, x, y, 0);
            for (int qy = y - r; qy <= y + r; qy++)
                for (int qx = x - r; qx <= x + r; qx++) {
                    if (qx < 0 || qy < 0 || qx >= w || qy >= h)
                        continue;
                    double dl = lp - *pf_image_at(lum, qx, qy, 0);
                    double d2 = (double)(qx - x) * (qx - x) + (double)(qy - y) * (qy - y);
                    double wt = exp(-d2 / (2 * ss * ss) - dl * dl / (2 * sr * sr));
                    num += wt * *pf_image_at(hp, qx, qy, 0);
                    den += wt;
                }
            *pf_image_at(out, x, y, 0) = (float)(num / den);
        }
    pf_image_free(lum);
    pf_image_free(hp);
    return out;
}

static void test_texture_grid_matches_brute_force(void)
{
    pf_error err;
    pf_image *img = pf_image_load(pf_test_src("data/images/train/natural_29_256x192.png"), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    pf_image *fast = pf_texture_map(img, &err), *slow = texture_brute_force(img);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fast);
    double sum_abs = 0, sum_slow = 0, sum_fast = 0;
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++) {
            double f = *pf_image_at(fast, x, y, 0), s = *pf_image_at(slow, x, y, 0);
            sum_abs += fabs(f - s);
            sum_slow += s;
            sum_fast += f;
        }
    double n = (double)img->width * img->height;
    printf("\n    grid mean %.3f, brute force %.3f, mean |diff| %.3f", sum_fast / n,
           sum_slow / n, sum_abs / n);
    CU_ASSERT(fabs(sum_fast - sum_slow) < 0.03 * sum_slow);
    CU_ASSERT(sum_abs < 0.10 * sum_slow);
    pf_image_free(img);
    pf_image_free(fast);
    pf_image_free(slow);
}

static void test_texture_training_photos(void)
{
    static const char *names[6] = {
        "man_made_1_256x192.png", "man_made_55_820x614.png", "natural_0_820x614.png",
        "natural_29_256x192.png", "people_0_256x192.png",    "people_56_820x614.png",
    };
    for (int i = 0; i < 6; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "data/images/train/%s", names[i]);
        pf_error err;
        pf_image *img = pf_image_load(pf_test_src(rel), &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(img);
        double t = mean_of(img);
        printf("\n    %-26s texture %.2f", names[i], t);
        CU_ASSERT(t > 0.5 && t < 60.0);
        pf_image_free(img);
    }
}

PF_TEST_SUITE(dataset_texture, PF_TEST(test_texture_flat_is_zero),
              PF_TEST(test_texture_smooth_ramp_is_low), PF_TEST(test_texture_single_edge_is_low),
              PF_TEST(test_texture_noise_and_checkerboard_are_high),
              PF_TEST(test_texture_gray_equals_rgb), PF_TEST(test_texture_grid_matches_brute_force),
              PF_TEST(test_texture_training_photos))
