/* apps/median.pf against a plain-C reference written from ../shared/docs/paper-apps.md,
 * section 6 (not from the .pf): a 9x9 window truncated at the borders (outside neighbours
 * skipped), sorted(list)[n / 2] per channel. */
#include "tests/apps/apps_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median_at(const pf_image *in, int x, int y, int c)
{
    float list[81];
    int n = 0;
    for (int r = -4; r <= 4; r++)
        for (int k = -4; k <= 4; k++) {
            int xx = x + k, yy = y + r;
            if (xx >= 0 && xx < in->width && yy >= 0 && yy < in->height)
                list[n++] = *pf_image_at(in, xx, yy, c);
        }
    qsort(list, (size_t)n, sizeof list[0], cmp_float);
    return list[n / 2];
}

static pf_image *median_reference(const pf_image *in)
{
    pf_error err;
    pf_image *out = pf_image_new(in->width, in->height, in->channels, &err);
    for (int c = 0; c < in->channels; c++)
        for (int y = 0; y < in->height; y++)
            for (int x = 0; x < in->width; x++)
                *pf_image_at(out, x, y, c) = median_at(in, x, y, c);
    return out;
}

static void check_one(const pf_program *prog, const pf_image *in, const char *label)
{
    double secs = 0.0;
    pf_image *got = apps_run(prog, in, NULL, &secs);
    pf_image *want = median_reference(in);
    apps_expect_match("median", label, got, want, secs);
    pf_image_free(got);
    pf_image_free(want);
}

/* All six photos (about 1 s per 256x192 photo and 10-20 s per 820x614 one). */
static void test_median_photos(void)
{
    pf_program *prog = apps_load("median");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (int i = 0; i < APPS_N_PHOTOS; i++) {
        pf_image *in = apps_photo(apps_photos[i]);
        if (in)
            check_one(prog, in, apps_photos[i]);
        pf_image_free(in);
    }
    pf_program_free(prog);
}

static void test_median_shapes(void)
{
    static const int shapes[][3] = { { 40, 30, 1 }, { 37, 29, 4 }, { 1, 1, 3 }, { 7, 3, 3 },
                                     { 1000, 1, 3 }, { 2, 2, 2 }, { 1, 12, 1 } };
    pf_program *prog = apps_load("median");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int *s = shapes[i];
        char label[64];
        snprintf(label, sizeof label, "noise_%dx%dx%d", s[0], s[1], s[2]);
        pf_image *in = apps_noise_image(s[0], s[1], s[2], (unsigned)i + 51);
        check_one(prog, in, label);
        pf_image_free(in);
    }
    pf_program_free(prog);
}

/* The even-n rule picks the UPPER middle: a 2x1 image (n = 2 everywhere) becomes its maximum. */
static void test_median_upper_middle(void)
{
    pf_program *prog = apps_load("median");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_error err;
    pf_image *in = pf_image_new(2, 1, 1, &err);
    *pf_image_at(in, 0, 0, 0) = 0.1f;
    *pf_image_at(in, 1, 0, 0) = 0.7f;
    pf_image *out = apps_run(prog, in, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(*pf_image_at(out, 0, 0, 0), 0.7f);
    CU_ASSERT_EQUAL(*pf_image_at(out, 1, 0, 0), 0.7f);
    pf_image_free(out);
    pf_image_free(in);
    pf_program_free(prog);
}

PF_TEST_SUITE(apps_median,
              PF_TEST(test_median_photos),
              PF_TEST(test_median_shapes),
              PF_TEST(test_median_upper_middle))
