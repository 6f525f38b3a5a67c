/* Tests for dataset/colour.h against published reference values (Lab of the sRGB primaries and
 * secondaries, D65 as tabulated by Lindbloom and EasyRGB; D50 Bradford values as Photoshop and
 * Lindbloom give them) and round trips. */
#include "dataset/colour.h"
#include "tests/dataset/dataset_test_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <string.h>

typedef struct {
    float rgb[3];
    double lab[3];
} pf_t_lab_ref;

/* sRGB -> CIE Lab (D65, 2 degree observer): the standard table. */
static const pf_t_lab_ref d65_refs[] = {
    { { 1, 1, 1 }, { 100.0, 0.0, 0.0 } },
    { { 0, 0, 0 }, { 0.0, 0.0, 0.0 } },
    { { 1, 0, 0 }, { 53.2408, 80.0925, 67.2032 } },
    { { 0, 1, 0 }, { 87.7347, -86.1827, 83.1793 } },
    { { 0, 0, 1 }, { 32.2970, 79.1875, -107.8602 } },
    { { 0, 1, 1 }, { 91.1132, -48.0875, -14.1312 } },
    { { 1, 0, 1 }, { 60.3242, 98.2343, -60.8249 } },
    { { 1, 1, 0 }, { 97.1393, -21.5537, 94.4780 } },
    { { 0.5f, 0.5f, 0.5f }, { 53.3890, 0.0, 0.0 } },
};

static void test_colour_lab_d65_reference_values(void)
{
    for (size_t i = 0; i < sizeof d65_refs / sizeof d65_refs[0]; i++) {
        float lab[3];
        pf_srgb_to_lab(d65_refs[i].rgb, lab);
        for (int c = 0; c < 3; c++)
            PF_ASSERT_NEAR(lab[c], d65_refs[i].lab[c], 2e-3);
    }
}

/* The XYZ of the primaries are the matrix columns, and white is the D65 white point. */
static void test_colour_xyz_of_primaries(void)
{
    const float red[3] = { 1, 0, 0 }, white[3] = { 1, 1, 1 };
    float xyz[3];
    pf_linear_rgb_to_xyz(red, xyz);
    PF_ASSERT_NEAR(xyz[0], 0.4124564, 1e-7);
    PF_ASSERT_NEAR(xyz[1], 0.2126729, 1e-7);
    PF_ASSERT_NEAR(xyz[2], 0.0193339, 1e-7);
    pf_linear_rgb_to_xyz(white, xyz);
    PF_ASSERT_NEAR(xyz[0], 0.95047, 1e-6);
    PF_ASSERT_NEAR(xyz[1], 1.0, 1e-6);
    PF_ASSERT_NEAR(xyz[2], 1.08883, 1e-6);
}

/* The sRGB curve: its two published anchors, continuity at the knee, and monotonicity. */
static void test_colour_srgb_curve(void)
{
    PF_ASSERT_NEAR(pf_srgb_to_linear(0.5f), 0.2140411, 1e-6);
    PF_ASSERT_NEAR(pf_srgb_to_linear(0.04045f), 0.04045 / 12.92, 1e-7);
    PF_ASSERT_NEAR(pf_srgb_to_linear(1.0f), 1.0, 1e-7);
    PF_ASSERT_NEAR(pf_linear_to_srgb(0.0031308f), 0.0404500, 1e-6);
    PF_ASSERT_NEAR(pf_linear_to_srgb(0.2140411f), 0.5, 1e-6);
    PF_ASSERT_NEAR(pf_srgb_to_linear(-0.5f), -pf_srgb_to_linear(0.5f), 1e-7);
    float prev = -1.0f;
    for (int k = 0; k <= 1000; k++) {
        float v = pf_srgb_to_linear((float)k / 1000.0f);
        CU_ASSERT(v > prev);
        prev = v;
    }
}

/* The prototype's D50 path: Photoshop's Lab of the primaries (Bradford-adapted sRGB), within the
 * small offsets its rounded constants (white Z 0.8249, epsilon, kappa) cause. */
static void test_colour_lab_proto_reference_values(void)
{
    static const pf_t_lab_ref d50_refs[] = {
        { { 1, 0, 0 }, { 54.29, 80.80, 69.89 } },
        { { 0, 1, 0 }, { 87.82, -79.29, 80.99 } },
        { { 0, 0, 1 }, { 29.57, 68.29, -112.03 } },
        { { 1, 1, 1 }, { 100.0, 0.0, 0.0 } },
    };
    for (size_t i = 0; i < 4; i++) {
        float lab[3];
        pf_srgb_to_lab_proto(d50_refs[i].rgb, lab);
        for (int c = 0; c < 3; c++)
            PF_ASSERT_NEAR(lab[c], d50_refs[i].lab[c], 0.05);
    }
    /* The white's residual chroma is exactly what the rounded D50 white implies. */
    const float w[3] = { 1, 1, 1 };
    float lab[3];
    pf_srgb_to_lab_proto(w, lab);
    PF_ASSERT_NEAR(lab[1], 500.0 * (cbrt(0.9642200 / 0.9642) - 1.0), 1e-4);
    PF_ASSERT_NEAR(lab[2], 200.0 * (1.0 - cbrt(0.8252100 / 0.8249)), 1e-4);
}

/* imdist.py's rgb2lab written out in the test, step by step in double: the library must agree. */
static void proto_lab_reference(const float rgb[3], double lab[3])
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

static void test_colour_lab_proto_matches_imdist(void)
{
    uint64_t seed = 11;
    for (int i = 0; i < 2000; i++) {
        float rgb[3], lab[3];
        double want[3];
        for (int c = 0; c < 3; c++)
            rgb[c] = (float)pf_t_uniform(&seed) * (i % 10 == 0 ? 0.02f : 1.0f);
        pf_srgb_to_lab_proto(rgb, lab);
        proto_lab_reference(rgb, want);
        for (int c = 0; c < 3; c++)
            PF_ASSERT_NEAR(lab[c], want[c], 1e-4);
    }
}

typedef void (*pf_t_conv)(const float in[3], float out[3]);

/* Max component error of to(from(x)) over an 11^3 grid of [0,1]^3. */
static double round_trip_error(pf_t_conv fwd, pf_t_conv inv)
{
    double worst = 0.0;
    for (int r = 0; r <= 10; r++)
        for (int g = 0; g <= 10; g++)
            for (int b = 0; b <= 10; b++) {
                float in[3] = { r / 10.0f, g / 10.0f, b / 10.0f }, mid[3], out[3];
                fwd(in, mid);
                inv(mid, out);
                for (int c = 0; c < 3; c++)
                    worst = fmax(worst, fabs((double)out[c] - in[c]));
            }
    return worst;
}

static void xyz_lab_d65(const float in[3], float out[3])
{
    pf_xyz_to_lab(in, pf_white_d65, out);
}

static void lab_xyz_d65(const float in[3], float out[3])
{
    pf_lab_to_xyz(in, pf_white_d65, out);
}

static void test_colour_round_trips(void)
{
    struct {
        const char *name;
        pf_t_conv fwd, inv;
    } pairs[] = {
        { "linear<->xyz", pf_linear_rgb_to_xyz, pf_xyz_to_linear_rgb },
        { "xyz<->lab", xyz_lab_d65, lab_xyz_d65 },
        { "srgb<->lab", pf_srgb_to_lab, pf_lab_to_srgb },
        { "srgb<->lab (proto)", pf_srgb_to_lab_proto, pf_lab_proto_to_srgb },
        { "rgb<->yuv", pf_rgb_to_yuv, pf_yuv_to_rgb },
        { "rgb<->ycbcr", pf_rgb_to_ycbcr, pf_ycbcr_to_rgb },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        double e = round_trip_error(pairs[i].fwd, pairs[i].inv);
        printf("\n    %s: max round-trip error %.2e", pairs[i].name, e);
        CU_ASSERT(e < 1e-4);
    }
    for (int k = -50; k <= 150; k++) {
        float v = (float)k / 100.0f;
        PF_ASSERT_NEAR(pf_linear_to_srgb(pf_srgb_to_linear(v)), v, 1e-6);
    }
}

static void test_colour_yuv_and_ycbcr_values(void)
{
    const float white[3] = { 1, 1, 1 }, red[3] = { 1, 0, 0 }, blue[3] = { 0, 0, 1 };
    float o[3];
    pf_rgb_to_yuv(white, o);
    PF_ASSERT_NEAR(o[0], 1.0, 1e-6);
    PF_ASSERT_NEAR(o[1], 0.0, 2e-5);
    PF_ASSERT_NEAR(o[2], 0.0, 2e-5);
    pf_rgb_to_yuv(red, o);
    PF_ASSERT_NEAR(o[0], 0.299, 1e-6);
    PF_ASSERT_NEAR(o[1], -0.14713, 1e-6);
    PF_ASSERT_NEAR(o[2], 0.615, 1e-6);
    pf_rgb_to_ycbcr(white, o);
    PF_ASSERT_NEAR(o[0], 1.0, 1e-6);
    PF_ASSERT_NEAR(o[1], 0.5, 1e-6);
    PF_ASSERT_NEAR(o[2], 0.5, 1e-6);
    pf_rgb_to_ycbcr(red, o); /* JFIF: Cr of pure red is the maximum, 255 on 0..255 */
    PF_ASSERT_NEAR(o[0], 0.299, 1e-6);
    PF_ASSERT_NEAR(o[2], 1.0, 1e-6);
    pf_rgb_to_ycbcr(blue, o); /* and Cb of pure blue */
    PF_ASSERT_NEAR(o[0], 0.114, 1e-6);
    PF_ASSERT_NEAR(o[1], 1.0, 1e-6);
}

/* Whole-image conversion equals the per-pixel function, leaves alpha alone, refuses gray. */
static void test_colour_image_conversion(void)
{
    pf_image *img = pf_t_noise_image(21, 13, 4, 31);
    pf_image *orig = pf_image_clone(img);
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_image_convert_colour(img, PF_SRGB_TO_LAB_PROTO, &err), 0);
    for (int y = 0; y < 13; y++)
        for (int x = 0; x < 21; x++) {
            float in[3], want[3];
            for (int c = 0; c < 3; c++)
                in[c] = *pf_image_at(orig, x, y, c);
            pf_srgb_to_lab_proto(in, want);
            for (int c = 0; c < 3; c++)
                CU_ASSERT_EQUAL(*pf_image_at(img, x, y, c), want[c]);
            CU_ASSERT_EQUAL(*pf_image_at(img, x, y, 3), *pf_image_at(orig, x, y, 3));
        }
    CU_ASSERT_EQUAL(pf_image_convert_colour(img, PF_LAB_PROTO_TO_SRGB, &err), 0);
    CU_ASSERT(pf_t_max_abs_diff(img, orig) < 1e-4);
    static const pf_colour_conv pairs[][2] = {
        { PF_SRGB_TO_LINEAR, PF_LINEAR_TO_SRGB }, { PF_LINEAR_TO_XYZ, PF_XYZ_TO_LINEAR },
        { PF_XYZ_TO_LAB, PF_LAB_TO_XYZ },         { PF_SRGB_TO_LAB, PF_LAB_TO_SRGB },
        { PF_RGB_TO_YUV, PF_YUV_TO_RGB },         { PF_RGB_TO_YCBCR, PF_YCBCR_TO_RGB },
    };
    for (int i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(pf_image_convert_colour(img, pairs[i][0], &err), 0);
        CU_ASSERT(pf_t_max_abs_diff(img, orig) > 1e-3);
        CU_ASSERT_EQUAL(pf_image_convert_colour(img, pairs[i][1], &err), 0);
        CU_ASSERT(pf_t_max_abs_diff(img, orig) < 1e-4);
    }
    pf_image *gray = pf_t_noise_image(4, 4, 1, 1);
    CU_ASSERT_EQUAL(pf_image_convert_colour(gray, PF_RGB_TO_YUV, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "3 or 4 channels"));
    CU_ASSERT_EQUAL(pf_image_convert_colour(img, (pf_colour_conv)99, &err), -1);
    pf_image_free(gray);
    pf_image_free(img);
    pf_image_free(orig);
}

PF_TEST_SUITE(dataset_colour, PF_TEST(test_colour_lab_d65_reference_values),
              PF_TEST(test_colour_xyz_of_primaries), PF_TEST(test_colour_srgb_curve),
              PF_TEST(test_colour_lab_proto_reference_values),
              PF_TEST(test_colour_lab_proto_matches_imdist), PF_TEST(test_colour_round_trips),
              PF_TEST(test_colour_yuv_and_ycbcr_values), PF_TEST(test_colour_image_conversion))
