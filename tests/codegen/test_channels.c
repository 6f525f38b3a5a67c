/* pass_channels: the bilateral grid's slice runs its three channels inside the pixel loop and
 * interpolates the weight once per pixel (32 grid reads per pixel, not 48); no result changes;
 * a channel nest that reads what it writes keeps its order. */
#include "codegen/compile.h"
#include "lang/lang.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_between(const char *from, const char *to, const char *what)
{
    int n = 0;
    for (const char *p = from; (p = strstr(p, what)) && (!to || p < to); p++)
        n++;
    return n;
}

static void test_slice_channels_share_the_weight(void)
{
    pf_program *p = cg_load_app("bilateral_grid");
    char *ir = cg_ir_dump(p, "");
    const char *slice = strstr(ir, "// stage trilerp_loop");
    CU_ASSERT_PTR_NOT_NULL_FATAL(slice);
    const char *end = strstr(slice, "out[");
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    CU_ASSERT_EQUAL(count_between(slice, end, "for c_"), 0);
    CU_ASSERT_EQUAL(count_between(slice, end, "let weight"), 1);
    CU_ASSERT_EQUAL(count_between(slice, end, "let value"), 3);
    CU_ASSERT_EQUAL(count_between(slice, end, "= blur_z["), 32);
    CU_ASSERT_EQUAL(count_between(slice, end, ", 2] = (value"), 1);
    free(ir);
    /* stages whose channels share nothing keep their loops (median: each channel's window) */
    pf_program *m = cg_load_app("median");
    ir = cg_ir_dump(m, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "for c_"));
    free(ir);
    pf_program_free(m);
    pf_program_free(p);
}

/* prog with and without the pass on `in`: identical outputs, and whether it applied. */
static void expect_same(const pf_program *p, pf_image *in, int expect_unrolled, const char *what)
{
    pf_compile_options o[2] = { { 0 }, { 0 } };
    o[1].no_channel_unroll = true;
    pf_variant_stats st[2] = { { 0 }, { 0 } };
    double d = cg_diff_options(p, in, o, st);
    if (d != 0)
        printf("\n    %s: max |with - without| = %g", what, d);
    CU_ASSERT_EQUAL(d, 0);
    CU_ASSERT_EQUAL(st[0].channels_unrolled, expect_unrolled);
    CU_ASSERT_EQUAL(st[1].channels_unrolled, 0);
}

static void test_channel_unroll_changes_no_result(void)
{
    pf_program *p = cg_load_app("bilateral_grid");
    pf_image *photo = cg_load_photo("natural_0_820x614.png", 3);
    expect_same(p, photo, 1, "photo");
    pf_image_free(photo);
    static const int sizes[][2] = { { 130, 67 }, { 9, 17 }, { 7, 3 }, { 1, 1 } };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        pf_image *in = cg_synthetic(sizes[i][0], sizes[i][1], 3, 3u + (unsigned)i);
        char what[32];
        snprintf(what, sizeof what, "%dx%d", sizes[i][0], sizes[i][1]);
        expect_same(p, in, 1, what);
        pf_image_free(in);
    }
    pf_program_free(p);
}

/* t's channels read channel 0 at the mirrored pixel: a serial stage (it also counts into n),
 * whose order (channel 0 everywhere first) must stay; out shares s = in[x, y, 1] between its
 * channels and is unrolled, inside its parallel row loop. */
static void test_serial_nest_keeps_its_order(void)
{
    static const char src[] =
        "pipeline p(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
        "    image t[W, H, 3];\n"
        "    image n[1];\n"
        "    for each (x, y, c) of t as loop_t {\n"
        "        float h = in[x, y, 0] * 0.5;\n"
        "        t[x, y, c] = h + t[W - 1 - x, y, 0];\n"
        "        n[0] += 1.0;\n"
        "    }\n"
        "    for each (x, y, c) of out as loop_out {\n"
        "        float s = in[x, y, 1] + n[0] * 0.0;\n"
        "        out[x, y, c] = t[x, y, c] + s * in[x, y, c];\n"
        "    }\n"
        "}\n";
    pf_error err;
    pf_program *p = pf_compile_string("mirror.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    char *ir = cg_ir_dump(p, "");
    const char *t = strstr(ir, "// stage loop_t"), *o = strstr(ir, "// stage loop_out");
    CU_ASSERT_FATAL(t && o && t < o);
    CU_ASSERT_EQUAL(count_between(t, o, "for c_"), 1);
    CU_ASSERT_EQUAL(count_between(o, NULL, "for c_"), 0);
    CU_ASSERT_EQUAL(count_between(o, NULL, "parallel for y"), 1);
    free(ir);
    pf_image *in = cg_synthetic(37, 5, 3, 11u);
    expect_same(p, in, 1, "mirror");
    pf_image_free(in);
    pf_program_free(p);
}

PF_TEST_SUITE(codegen_channels, PF_TEST(test_slice_channels_share_the_weight),
              PF_TEST(test_channel_unroll_changes_no_result),
              PF_TEST(test_serial_nest_keeps_its_order))
