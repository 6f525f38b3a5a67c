/* Tests for dataset/metrics.h: hand-checkable cases (identical images, black vs white, constant
 * offsets, 8-bit quantisation), values computed independently in the test (imdist.py's Lab
 * written out, PSNR of a known noise level, SSIM by a direct double loop over every window). */
#include "dataset/metrics.h"
#include "tests/dataset/dataset_test_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <string.h>

static pf_image *constant_image(int w, int h, int c, const float *values)
{
    pf_image *img = pf_image_new(w, h, c, NULL);
    for (int k = 0; k < c; k++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                *pf_image_at(img, x, y, k) = values[k];
    return img;
}

/* imdist.py: rgb2lab of one pixel in double. */
static void imdist_lab(const double rgb[3], double lab[3])
{
    static const double m[3][3] = { { 0.4360747, 0.3850649, 0.1430804 },
                                    { 0.2225045, 0.7168786, 0.0606169 },
                                    { 0.0139322, 0.0971045, 0.7141733 } };
    static const double white[3] = { 0.9642, 1.0, 0.8249 };
    double lin[3], f[3];
    for (int i = 0; i < 3; i++)
        lin[i] = rgb[i] <= 0.04045 ? rgb[i] / 12.92 : pow((rgb[i] + 0.055) / 1.055, 2.4);
    for (int i = 0; i < 3; i++) {
        double t = (m[i][0] * lin[0] + m[i][1] * lin[1] + m[i][2] * lin[2]) / white[i];
        f[i] = t > 0.008856 ? pow(t, 1.0 / 3.0) : (903.3 * t + 16.0) / 116.0;
    }
    lab[0] = 116.0 * f[1] - 16.0;
    lab[1] = 500.0 * (f[0] - f[1]);
    lab[2] = 200.0 * (f[1] - f[2]);
}

static double imdist_de(const double a[3], const double b[3])
{
    double la[3], lb[3];
    imdist_lab(a, la);
    imdist_lab(b, lb);
    return sqrt((la[0] - lb[0]) * (la[0] - lb[0]) + (la[1] - lb[1]) * (la[1] - lb[1]) +
                (la[2] - lb[2]) * (la[2] - lb[2]));
}

static void test_metrics_identical_images(void)
{
    pf_image *a = pf_t_noise_image(40, 30, 3, 1);
    pf_image *b = pf_image_clone(a);
    pf_error err;
    double v;
    CU_ASSERT_EQUAL(pf_metric_lab_de76(a, b, &v, &err), 0);
    CU_ASSERT_EQUAL(v, 0.0);
    CU_ASSERT_EQUAL(pf_metric_lab_de76_paper(a, b, &v, &err), 0);
    CU_ASSERT_EQUAL(v, 0.0);
    CU_ASSERT_EQUAL(pf_metric_psnr(a, b, &v, &err), 0);
    CU_ASSERT(isinf(v) && v > 0);
    CU_ASSERT_EQUAL(pf_metric_ssim(a, b, &v, &err), 0);
    PF_ASSERT_NEAR(v, 1.0, 1e-12);
    pf_image_free(a);
    pf_image_free(b);
}

/* Black against white: Delta E is the L* range, 100, plus the tiny chroma the prototype's
 * rounded D50 white leaves on white. */
static void test_metrics_black_white(void)
{
    const float k[3] = { 0, 0, 0 }, w[3] = { 1, 1, 1 };
    pf_image *a = constant_image(16, 16, 3, k), *b = constant_image(16, 16, 3, w);
    pf_error err;
    double v;
    CU_ASSERT_EQUAL(pf_metric_lab_de76(a, b, &v, &err), 0);
    PF_ASSERT_NEAR(v, 100.0, 1e-3);
    CU_ASSERT_EQUAL(pf_metric_psnr(a, b, &v, &err), 0);
    PF_ASSERT_NEAR(v, 0.0, 1e-12);
    pf_image_free(a);
    pf_image_free(b);
}

/* A constant offset d on every channel: Delta E as imdist.py computes it, and
 * PSNR = -10 log10(d^2) (18.0618 dB for d = 1/8, exact in float). */
static void test_metrics_constant_offset(void)
{
    const float va[3] = { 0.5f, 0.25f, 0.75f }, vb[3] = { 0.625f, 0.375f, 0.875f };
    pf_image *a = constant_image(20, 12, 3, va), *b = constant_image(20, 12, 3, vb);
    pf_error err;
    double v;
    CU_ASSERT_EQUAL(pf_metric_psnr(a, b, &v, &err), 0);
    PF_ASSERT_NEAR(v, -10.0 * log10(0.125 * 0.125), 1e-9);
    const double da[3] = { 0.5, 0.25, 0.75 }, db[3] = { 0.625, 0.375, 0.875 };
    CU_ASSERT_EQUAL(pf_metric_lab_de76(a, b, &v, &err), 0);
    PF_ASSERT_NEAR(v, imdist_de(da, db), 1e-9);
    /* In paper mode both go through trunc(v * 255) first: 127, 63, 191 against 159, 95, 223. */
    const double qa[3] = { 127 / 255.0, 63 / 255.0, 191 / 255.0 };
    const double qb[3] = { 159 / 255.0, 95 / 255.0, 223 / 255.0 };
    CU_ASSERT_EQUAL(pf_metric_lab_de76_paper(a, b, &v, &err), 0);
    PF_ASSERT_NEAR(v, imdist_de(qa, qb), 1e-9);
    printf("\n    offset 1/8: Delta E %.4f (paper mode %.4f), PSNR %.4f dB", imdist_de(da, db),
           v, -10.0 * log10(1.0 / 64));
    /* SSIM of two constant images reduces to the luminance term. */
    CU_ASSERT_EQUAL(pf_metric_ssim(a, b, &v, &err), 0);
    double want = 0.0;
    for (int c = 0; c < 3; c++)
        want += (2 * da[c] * db[c] + 1e-4) / (da[c] * da[c] + db[c] * db[c] + 1e-4) / 3.0;
    PF_ASSERT_NEAR(v, want, 1e-9);
    pf_image_free(a);
    pf_image_free(b);
}

/* Paper mode sees what the prototype's 8-bit PNGs hold: differences inside one 8-bit step
 * vanish, out-of-range values clamp, NaN saves as 0. Raw mode sees them. */
static void test_metrics_paper_mode_quantises(void)
{
    const float va[3] = { 0.5f + 0.001f, 1.7f, 0.3f }, vb[3] = { 0.5f - 0.0005f, 1.0f, 0.3f };
    pf_image *a = constant_image(8, 8, 3, va), *b = constant_image(8, 8, 3, vb);
    pf_error err;
    double v;
    CU_ASSERT_EQUAL(pf_metric_lab_de76_paper(a, b, &v, &err), 0);
    CU_ASSERT_EQUAL(v, 0.0);
    CU_ASSERT_EQUAL(pf_metric_lab_de76(a, b, &v, &err), 0);
    CU_ASSERT(v > 0.1);
    *pf_image_at(a, 3, 3, 1) = NAN;
    *pf_image_at(b, 3, 3, 1) = 0.0f;
    CU_ASSERT_EQUAL(pf_metric_lab_de76(a, b, &v, &err), 0);
    CU_ASSERT(isnan(v));
    CU_ASSERT_EQUAL(pf_metric_lab_de76_paper(a, b, &v, &err), 0);
    CU_ASSERT_EQUAL(v, 0.0);
    pf_image_free(a);
    pf_image_free(b);
}

/* The mean of random per-pixel Delta E equals imdist.py's, pixel by pixel; the map agrees. */
static void test_metrics_lab_matches_imdist_on_noise(void)
{
    pf_image *a = pf_t_noise_image(23, 17, 3, 5), *b = pf_t_noise_image(23, 17, 3, 6);
    double sum = 0.0;
    for (int y = 0; y < 17; y++)
        for (int x = 0; x < 23; x++) {
            double pa[3], pb[3];
            for (int c = 0; c < 3; c++) {
                pa[c] = *pf_image_at(a, x, y, c);
                pb[c] = *pf_image_at(b, x, y, c);
            }
            sum += imdist_de(pa, pb);
        }
    pf_error err;
    double v;
    CU_ASSERT_EQUAL(pf_metric_lab_de76(a, b, &v, &err), 0);
    PF_ASSERT_NEAR(v, sum / (23 * 17), 1e-9);
    pf_image *map = pf_metric_lab_de76_map(a, b, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(map);
    double msum = 0.0;
    for (int y = 0; y < 17; y++)
        for (int x = 0; x < 23; x++)
            msum += *pf_image_at(map, x, y, 0);
    PF_ASSERT_NEAR(msum / (23 * 17), v, 1e-4);
    pf_image_free(map);
    pf_image_free(a);
    pf_image_free(b);
}

/* Paper mode where most pixels have the same 8-bit codes (they are skipped as exactly 0) and a
 * few do not: the mean is those few pixels' imdist Delta E of the quantised values over all
 * pixels, and the map is 0 everywhere else. */
static void test_metrics_paper_mode_mostly_equal(void)
{
    pf_image *a = pf_t_noise_image(19, 13, 3, 7), *b = pf_image_new(19, 13, 3, NULL);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 13; y++)
            for (int x = 0; x < 19; x++)  /* below one 8-bit step: same codes */
                *pf_image_at(b, x, y, c) = floorf(*pf_image_at(a, x, y, c) * 255.0f) / 255.0f +
                                           0.1f / 255.0f;
    const int px[3][2] = { { 0, 0 }, { 7, 4 }, { 18, 12 } };
    double sum = 0.0;
    for (int k = 0; k < 3; k++) {
        float *g = pf_image_at(b, px[k][0], px[k][1], k);
        *g = *g > 0.5f ? *g - 0.25f : *g + 0.25f;
        double qa[3], qb[3];
        for (int c = 0; c < 3; c++) {
            qa[c] = floor(*pf_image_at(a, px[k][0], px[k][1], c) * 255.0f) / 255.0;
            qb[c] = floor(*pf_image_at(b, px[k][0], px[k][1], c) * 255.0f) / 255.0;
        }
        sum += imdist_de(qa, qb);
    }
    pf_error err;
    double v;
    CU_ASSERT_EQUAL(pf_metric_lab_de76_paper(a, b, &v, &err), 0);
    PF_ASSERT_NEAR(v, sum / (19 * 13), 1e-9);
    CU_ASSERT(v > 0.0);
    pf_image *map = pf_metric_lab_de76_map(a, b, 1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(map);
    int nonzero = 0;
    for (int y = 0; y < 13; y++)
        for (int x = 0; x < 19; x++)
            nonzero += *pf_image_at(map, x, y, 0) != 0.0f;
    CU_ASSERT_EQUAL(nonzero, 3);
    pf_image_free(map);
    pf_image_free(a);
    pf_image_free(b);
}

/* Gray images are R = G = B, so a gray image and its RGB copy are 0 apart. */
static void test_metrics_gray_as_rgb(void)
{
    pf_image *g = pf_t_noise_image(12, 9, 1, 2);
    pf_error err;
    pf_image *rgb = pf_image_to_rgb(g, &err);
    double v;
    CU_ASSERT_EQUAL(pf_metric_lab_de76(g, rgb, &v, &err), 0);
    CU_ASSERT_EQUAL(v, 0.0);
    pf_image *ga = pf_t_noise_image(12, 9, 2, 2); /* same channel 0 as g */
    CU_ASSERT_EQUAL(pf_metric_lab_de76_paper(ga, rgb, &v, &err), 0);
    CU_ASSERT_EQUAL(v, 0.0);
    /* PSNR and SSIM compare channel by channel: counts must match. */
    CU_ASSERT_EQUAL(pf_metric_psnr(g, rgb, &v, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "channel"));
    CU_ASSERT_EQUAL(pf_metric_ssim(g, rgb, &v, &err), -1);
    pf_image_free(g);
    pf_image_free(ga);
    pf_image_free(rgb);
}

static void test_metrics_size_mismatch(void)
{
    pf_image *a = pf_t_noise_image(12, 9, 3, 2), *b = pf_t_noise_image(12, 10, 3, 2);
    pf_error err;
    double v = 42.0;
    CU_ASSERT_EQUAL(pf_metric_lab_de76(a, b, &v, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "12x9"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "12x10"));
    CU_ASSERT_EQUAL(pf_metric_lab_de76_paper(a, b, &v, &err), -1);
    CU_ASSERT_PTR_NULL(pf_metric_lab_de76_map(a, b, 1, &err));
    CU_ASSERT_EQUAL(pf_metric_psnr(a, b, &v, &err), -1);
    CU_ASSERT_EQUAL(pf_metric_ssim(a, b, &v, &err), -1);
    CU_ASSERT_EQUAL(v, 42.0);
    pf_image *small = pf_t_noise_image(10, 30, 1, 2);
    CU_ASSERT_EQUAL(pf_metric_ssim(small, small, &v, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "11x11"));
    pf_image_free(small);
    pf_image_free(a);
    pf_image_free(b);
}

/* Gaussian noise of sigma 0.05 on mid-gray (no clipping within 8 sigma): PSNR is
 * -10 log10(0.05^2) = 26.02 dB up to the sampling error of 196608 samples. */
static void test_metrics_psnr_known_noise(void)
{
    const float mid[3] = { 0.5f, 0.5f, 0.5f };
    pf_image *a = constant_image(256, 256, 3, mid), *b = pf_image_clone(a);
    uint64_t seed = 2024;
    double sq = 0.0;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 256; y++)
            for (int x = 0; x < 256; x++) {
                double u1 = pf_t_uniform(&seed) + 1e-12, u2 = pf_t_uniform(&seed);
                double n = 0.05 * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
                float *p = pf_image_at(b, x, y, c);
                *p += (float)n;
                double d = (double)*p - 0.5;
                sq += d * d;
            }
    pf_error err;
    double v;
    CU_ASSERT_EQUAL(pf_metric_psnr(a, b, &v, &err), 0);
    PF_ASSERT_NEAR(v, -10.0 * log10(sq / (3.0 * 256 * 256)), 1e-9);
    PF_ASSERT_NEAR(v, -10.0 * log10(0.05 * 0.05), 0.05);
    printf("\n    noise sigma 0.05: PSNR %.3f dB (theory 26.021)", v);
    pf_image_free(a);
    pf_image_free(b);
}

/* SSIM by definition: for every window position, weighted statistics over the 11x11 window
 * directly (no separable passes, no reuse), then the mean; channels averaged. */
static double ssim_direct(const pf_image *a, const pf_image *b)
{
    double w[11][11], wsum = 0.0;
    for (int i = 0; i < 11; i++)
        for (int j = 0; j < 11; j++)
            wsum += w[i][j] = exp(-((i - 5) * (i - 5) + (j - 5) * (j - 5)) / (2.0 * 1.5 * 1.5));
    double total = 0.0;
    for (int c = 0; c < a->channels; c++) {
        double sum = 0.0;
        for (int y = 5; y < a->height - 5; y++)
            for (int x = 5; x < a->width - 5; x++) {
                double ma = 0, mb = 0, saa = 0, sbb = 0, sab = 0;
                for (int i = 0; i < 11; i++)
                    for (int j = 0; j < 11; j++) {
                        double k = w[i][j] / wsum;
                        double pa = *pf_image_at(a, x + j - 5, y + i - 5, c);
                        double pb = *pf_image_at(b, x + j - 5, y + i - 5, c);
                        ma += k * pa;
                        mb += k * pb;
                        saa += k * pa * pa;
                        sbb += k * pb * pb;
                        sab += k * pa * pb;
                    }
                double va = saa - ma * ma, vb = sbb - mb * mb, cov = sab - ma * mb;
                sum += (2 * ma * mb + 1e-4) * (2 * cov + 9e-4) /
                       ((ma * ma + mb * mb + 1e-4) * (va + vb + 9e-4));
            }
        total += sum / ((a->width - 10.0) * (a->height - 10.0));
    }
    return total / a->channels;
}

static void test_metrics_ssim_matches_direct(void)
{
    pf_image *a = pf_t_smooth_image(41, 29, 3);
    pf_image *b = pf_image_clone(a);
    uint64_t seed = 9;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 29; y++)
            for (int x = 0; x < 41; x++)
                *pf_image_at(b, x, y, c) += (float)(0.1 * (pf_t_uniform(&seed) - 0.5));
    double want = ssim_direct(a, b), v;
    pf_error err;
    CU_ASSERT_EQUAL(pf_metric_ssim(a, b, &v, &err), 0);
    printf("\n    SSIM %.6f, direct %.6f", v, want);
    PF_ASSERT_NEAR(v, want, 1e-9);
    CU_ASSERT(v < 0.95 && v > 0.0);
    /* Exactly 11x11: one window. */
    pf_image *sa = pf_t_noise_image(11, 11, 1, 1), *sb = pf_t_noise_image(11, 11, 1, 2);
    CU_ASSERT_EQUAL(pf_metric_ssim(sa, sb, &v, &err), 0);
    PF_ASSERT_NEAR(v, ssim_direct(sa, sb), 1e-9);
    CU_ASSERT(fabs(v) < 0.5);
    pf_image_free(sa);
    pf_image_free(sb);
    pf_image_free(a);
    pf_image_free(b);
}

PF_TEST_SUITE(dataset_metrics, PF_TEST(test_metrics_identical_images),
              PF_TEST(test_metrics_paper_mode_mostly_equal),
              PF_TEST(test_metrics_black_white), PF_TEST(test_metrics_constant_offset),
              PF_TEST(test_metrics_paper_mode_quantises),
              PF_TEST(test_metrics_lab_matches_imdist_on_noise), PF_TEST(test_metrics_gray_as_rgb),
              PF_TEST(test_metrics_size_mismatch), PF_TEST(test_metrics_psnr_known_noise),
              PF_TEST(test_metrics_ssim_matches_direct))
