/* apps/blur.pf and apps/unsharp_mask.pf against plain-C references written from
 * ../shared/docs/paper-apps.md, sections 1 and 2 (not from the .pf files): the sigma = 4,
 * 17-tap Gaussian; blur's bounds-check variant (8-pixel black frame); unsharp mask's
 * interior-only blur with s = 3 (3 * in in the frame, bright bands next to it). */
#include "tests/apps/apps_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdio.h>

#define TAPS 8 /* h: the kernel is 2h + 1 = 17 taps */

/* A[k + 8] = exp(-k^2 / (2 sigma^2)) / sum_j exp(-j^2 / (2 sigma^2)), sigma = 4, in float. */
static void gauss17(float A[2 * TAPS + 1])
{
    const float sigma = 4.0f;
    float g[2 * TAPS + 1], norm = 0.0f;
    for (int k = -TAPS; k <= TAPS; k++) {
        g[k + TAPS] = expf(-(float)(k * k) / (2.0f * sigma * sigma));
        norm += g[k + TAPS];
    }
    for (int k = 0; k <= 2 * TAPS; k++)
        A[k] = g[k] / norm;
}

/* One 17-tap pass at (x, y, c) along x (dir 0) or y (dir 1); the caller keeps it in the image. */
static float pass(const pf_image *src, const float *A, int x, int y, int c, int dir)
{
    float acc = 0.0f;
    for (int k = -TAPS; k <= TAPS; k++)
        acc += A[k + TAPS] * *pf_image_at(src, dir ? x : x + k, dir ? y + k : y, c);
    return acc;
}

/* blur.py, bounds_check = True: each pass computes the whole image, 0 where its window leaves
 * the image (columns for the first pass, rows for the second). */
static pf_image *blur_reference(const pf_image *in)
{
    float A[2 * TAPS + 1];
    gauss17(A);
    pf_error err;
    int W = in->width, H = in->height;
    pf_image *temp = pf_image_new(W, H, in->channels, &err);
    pf_image *out = pf_image_new(W, H, in->channels, &err);
    for (int c = 0; c < in->channels; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                *pf_image_at(temp, x, y, c) =
                    (x >= TAPS && x < W - TAPS) ? pass(in, A, x, y, c, 0) : 0.0f;
    for (int c = 0; c < in->channels; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                *pf_image_at(out, x, y, c) =
                    (y >= TAPS && y < H - TAPS) ? pass(temp, A, x, y, c, 1) : 0.0f;
    pf_image_free(temp);
    return out;
}

/* unsharp_mask.py, bounds_check = False: both blur passes over the interior only (the rest of
 * temp and mask stays 0), then out = s in + (1 - s) mask over the whole image, s = 3. */
static pf_image *unsharp_reference(const pf_image *in)
{
    const float s = 3.0f;
    float A[2 * TAPS + 1];
    gauss17(A);
    pf_error err;
    int W = in->width, H = in->height, C = in->channels;
    pf_image *temp = pf_image_new(W, H, C, &err);
    pf_image *mask = pf_image_new(W, H, C, &err);
    pf_image *out = pf_image_new(W, H, C, &err);
    for (int c = 0; c < C; c++)
        for (int y = TAPS; y < H - TAPS; y++)
            for (int x = TAPS; x < W - TAPS; x++)
                *pf_image_at(temp, x, y, c) = pass(in, A, x, y, c, 0);
    for (int c = 0; c < C; c++)
        for (int y = TAPS; y < H - TAPS; y++)
            for (int x = TAPS; x < W - TAPS; x++)
                *pf_image_at(mask, x, y, c) = pass(temp, A, x, y, c, 1);
    for (int c = 0; c < C; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                *pf_image_at(out, x, y, c) =
                    s * *pf_image_at(in, x, y, c) + (1.0f - s) * *pf_image_at(mask, x, y, c);
    pf_image_free(temp);
    pf_image_free(mask);
    return out;
}

typedef pf_image *(*reference_fn)(const pf_image *in);

/* Runs app on `in`, compares with its reference, and returns the output (for extra checks). */
static pf_image *check_one(const char *app, const pf_program *prog, reference_fn ref,
                           const pf_image *in, const char *label)
{
    double secs = 0.0;
    pf_image *got = apps_run(prog, in, NULL, &secs);
    pf_image *want = ref(in);
    apps_expect_match(app, label, got, want, secs);
    pf_image_free(want);
    return got;
}

static void check_photos(const char *app, reference_fn ref)
{
    pf_program *prog = apps_load(app);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (int i = 0; i < APPS_N_PHOTOS; i++) {
        pf_image *in = apps_photo(apps_photos[i]);
        if (in)
            pf_image_free(check_one(app, prog, ref, in, apps_photos[i]));
        pf_image_free(in);
    }
    pf_program_free(prog);
}

/* 1- and 4-channel inputs and sizes down to 1x1 (below 17 pixels no pass writes anything). */
static void check_shapes(const char *app, reference_fn ref)
{
    static const int shapes[][3] = { { 40, 30, 1 }, { 37, 29, 4 }, { 1, 1, 3 }, { 7, 3, 3 },
                                     { 1000, 1, 3 }, { 1, 200, 2 }, { 17, 17, 3 }, { 18, 33, 3 } };
    pf_program *prog = apps_load(app);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int *s = shapes[i];
        char label[64];
        snprintf(label, sizeof label, "noise_%dx%dx%d", s[0], s[1], s[2]);
        pf_image *in = apps_noise_image(s[0], s[1], s[2], (unsigned)i + 1);
        pf_image_free(check_one(app, prog, ref, in, label));
        pf_image_free(in);
    }
    pf_program_free(prog);
}

static void test_blur_photos(void)
{
    check_photos("blur", blur_reference);
}

static void test_blur_shapes(void)
{
    check_shapes("blur", blur_reference);
}

/* The 8-pixel frame is exactly black and the inside is not (a property of the spec itself, so
 * an error shared by the reference and the app cannot hide it). */
static void test_blur_black_frame(void)
{
    pf_program *prog = apps_load("blur");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_image *in = apps_noise_image(30, 25, 3, 7);
    pf_image *out = apps_run(prog, in, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    for (int y = 0; y < 25; y++)
        for (int x = 0; x < 30; x++) {
            int frame = x < 8 || x >= 22 || y < 8 || y >= 17;
            float v = *pf_image_at(out, x, y, 1);
            CU_ASSERT(frame ? v == 0.0f : v > 0.0f);
        }
    pf_image_free(out);
    pf_image_free(in);
    pf_program_free(prog);
}

static void test_unsharp_photos(void)
{
    check_photos("unsharp_mask", unsharp_reference);
}

static void test_unsharp_shapes(void)
{
    check_shapes("unsharp_mask", unsharp_reference);
}

/* In the frame out = 3 in exactly; on a flat grey image the attenuated rows 8..15 come out
 * brighter than the centre. */
static void test_unsharp_frame_and_bands(void)
{
    pf_program *prog = apps_load("unsharp_mask");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_error err;
    pf_image *in = pf_image_new(40, 48, 1, &err);
    for (int y = 0; y < 48; y++)
        for (int x = 0; x < 40; x++)
            *pf_image_at(in, x, y, 0) = 0.25f;
    pf_image *out = apps_run(prog, in, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(*pf_image_at(out, 3, 20, 0), 0.75f);
    CU_ASSERT_EQUAL(*pf_image_at(out, 20, 47, 0), 0.75f);
    float centre = *pf_image_at(out, 20, 24, 0), band = *pf_image_at(out, 20, 9, 0);
    PF_ASSERT_NEAR(centre, 0.25, 1e-5);
    CU_ASSERT(band > centre + 0.1f);
    pf_image_free(out);
    pf_image_free(in);
    pf_program_free(prog);
}

/* --param s=2 is honoured (the unused bounds-check branch's s, applied to this variant). */
static void test_unsharp_param(void)
{
    pf_program *prog = apps_load("unsharp_mask");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_image *in = apps_noise_image(20, 20, 1, 3);
    static const char *const params[] = { "s=2", NULL };
    pf_image *out = apps_run(prog, in, params, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(*pf_image_at(out, 0, 0, 0), 2.0f * *pf_image_at(in, 0, 0, 0));
    pf_image_free(out);
    pf_image_free(in);
    pf_program_free(prog);
}

PF_TEST_SUITE(apps_blur,
              PF_TEST(test_blur_photos),
              PF_TEST(test_blur_shapes),
              PF_TEST(test_blur_black_frame),
              PF_TEST(test_unsharp_photos),
              PF_TEST(test_unsharp_shapes),
              PF_TEST(test_unsharp_frame_and_bands),
              PF_TEST(test_unsharp_param))
