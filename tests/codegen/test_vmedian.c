/* The median vectorized across pixels (codegen/llvm_vmedian.c): in a vector body, a selection
 * network of vector min/max where every lane's window is full and free of NaN, the runtime's
 * scalar median per lane otherwise. Each case runs the JIT with the default schedule
 * (`vectorize 8 parallel`) and the reference interpreter: the median is one of the inputs, so
 * they agree exactly (cg_max_abs_diff: a NaN at the same place in both is equal; -0 and +0 are
 * equal numbers, and which of them a tie of zeros gives is all that may differ). */
#include "base/arena.h"
#include "base/fileio.h"
#include "codegen/compile.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_jit_equals_interp(const pf_program *p, pf_image *in, const char *what)
{
    pf_param_values pv;
    pf_params_init(&pv, p);
    cg_run ref, got;
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(p, &pv, PF_BACKEND_INTERP, false, &in, 1, &ref), 0);
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(p, &pv, PF_BACKEND_JIT, false, &in, 1, &got), 0);
    double d = cg_max_abs_diff(ref.out[0], got.out[0]);
    printf("\n    %-28s %4dx%-4d x%d max|diff| %g", what, in->width, in->height, in->channels, d);
    CU_ASSERT(d == 0.0);
    cg_run_free(&ref);
    cg_run_free(&got);
    pf_params_free(&pv);
}

/* apps/median.pf (9x9, truncated at the borders) on photos and odd sizes: the interior takes
 * the network, the border rows the per-lane runtime, the border columns and the tails of the
 * rows scalar code. */
static void test_median_app_matches_interpreter(void)
{
    pf_program *p = cg_load_app("median");
    static const char *photos[] = { "natural_29_256x192.png", "people_0_256x192.png" };
    for (size_t i = 0; i < sizeof photos / sizeof *photos; i++) {
        pf_image *in = cg_load_photo(photos[i], 3);
        expect_jit_equals_interp(p, in, photos[i]);
        pf_image_free(in);
    }
    static const int sizes[][3] = { { 61, 37, 3 }, { 1, 1, 3 }, { 7, 3, 1 }, { 9, 9, 1 },
                                    { 17, 13, 1 }, { 24, 11, 2 } };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        pf_image *in = cg_synthetic(sizes[i][0], sizes[i][1], sizes[i][2], 5u + (unsigned)i);
        expect_jit_equals_interp(p, in, "synthetic");
        pf_image_free(in);
    }
    pf_program_free(p);
}

/* Puts NaNs, zeros of both signs and few distinct levels (ties) into a synthetic image: the
 * vectors whose windows hold a NaN take the runtime's path (the language's stable sort decides
 * where a NaN goes), ties and signed zeros the network. */
static pf_image *awkward_image(int w, int h, unsigned seed)
{
    pf_image *img = cg_synthetic(w, h, 1, seed);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float *v = pf_image_at(img, x, y, 0);
            seed = seed * 1103515245u + 12345u;
            unsigned r = (seed >> 16) % 100;
            if (x < w / 3)          /* levels: many equal values per window */
                *v = (float)((seed >> 8) % 4) * 0.25f;
            else if (x < 2 * w / 3) /* zeros of both signs and a few other values */
                *v = r < 40 ? -0.0f : r < 80 ? 0.0f : (float)(r % 3) - 1.0f;
            if (r == 7 || (x == w - 5 && y == h / 2))
                *v = NAN;
        }
    return img;
}

static void test_median_nan_and_signed_zeros(void)
{
    pf_program *p = cg_load_app("median");
    pf_image *in = awkward_image(90, 40, 11u);
    expect_jit_equals_interp(p, in, "NaN, -0/+0, ties");
    pf_image_free(in);
    pf_program_free(p);
}

static pf_program *window_program(const char *type, int len, bool varying_count)
{
    char src[1024];
    bool is_int = strcmp(type, "int") == 0;
    snprintf(src, sizeof src,
             "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
             "    for each (x, y) of out as loop_out {\n"
             "        %s a[%d];\n"
             "        int n = 0;\n"
             "        for (k) of 0 .. %d {\n"
             "            int xx = x + k - %d;\n"
             "            if (xx >= 0 && xx < W%s) {\n"
             "                a[n] = %s;\n"
             "                n += 1;\n"
             "            }\n"
             "        }\n"
             "        out[x, y] = %s;\n"
             "    }\n"
             "}\n",
             type, len, len - 1, len / 2, varying_count ? " && in[xx, y] < 0.8" : "",
             is_int ? "int(in[xx, y] * 7.0) - 3" : "in[xx, y]",
             is_int ? "float(median(a, n))" : "median(a, n)");
    pf_error err;
    pf_program *p = pf_compile_string("window.pf", src, &err);
    if (!p)
        fprintf(stderr, "\n%s\n%s\n", src, err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

/* Windows of many lengths, float and int (networks of other sizes, even lengths: the upper
 * middle value; 130 is past the longest network, runtime only), and counts that differ between
 * the lanes of a vector (per-lane stores under a mask, then the runtime). */
static void test_median_window_lengths(void)
{
    static const int lens[] = { 1, 2, 3, 5, 8, 16, 25, 49, 81, 100, 130 };
    pf_image *in = cg_synthetic(173, 3, 1, 3u);
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        for (int t = 0; t < 2; t++)
            for (int varying = 0; varying < 2; varying++) {
                pf_program *p = window_program(t ? "int" : "float", lens[i], varying);
                char what[64];
                snprintf(what, sizeof what, "%s[%d]%s", t ? "int" : "float", lens[i],
                         varying ? " varying n" : "");
                expect_jit_equals_interp(p, in, what);
                pf_program_free(p);
            }
    pf_image_free(in);
}

static void read_text(const char *path, char **text)
{
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_read_file(path, 1 << 26, text, NULL, &err), 0);
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *s = strstr(text, needle); s; s = strstr(s + 1, needle))
        n++;
    return n;
}

/* Whether a vectorized loop of the dump reaches its median with a window store whose read
 * has no check along x (`{clamp:N}` with bit 0 clear; the row may be clamped) and no test of
 * the column xx (tests of the row are the same in all lanes). */
static bool has_interior_vector_loop(const char *ir)
{
    const char *loop = "vectorized for<8>";
    for (const char *v = strstr(ir, loop); v; v = strstr(v + 1, loop)) {
        const char *end = strstr(v, "median(");
        if (!end)
            return false;
        size_t n = (size_t)(end - v);
        char *body = pf_xmalloc(n + 1);
        memcpy(body, v, n);
        body[n] = 0;
        const char *store = strstr(body, "] = in[");
        const char *eol = store ? strchr(store, '\n') : NULL;
        const char *clamp = store ? strstr(store, "{clamp:") : NULL;
        bool x_clamped = clamp && clamp < eol && (atoi(clamp + 7) & 1);
        bool ok = store && eol && !x_clamped && !strstr(body, "(0 <= xx_");
        free(body);
        if (ok)
            return true;
    }
    return false;
}

/* The default schedule vectorizes the median's pixel loop: the window counter is one scalar,
 * the interior columns have no tests or clamps along x (pass_bounds splits the x loop on the
 * window loops' ranges, seeing `int xx = x + k` as a let), and the LLVM code holds one network
 * of 8-lane min/max (1094 of them for 81 values), the runtime's per-lane median as fallback. */
static void test_median_loop_is_vectorized(void)
{
    pf_program *p = cg_load_app("median");
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_compile_options o = { 0 };
    o.dump_ir = pf_test_tmp("median.ir");
    o.emit_llvm = pf_test_tmp("median.ll");
    pf_error err;
    pf_variant *v = pf_variant_build(p, &pv, NULL, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    pf_variant_free(v);
    char *ir = NULL, *ll = NULL;
    read_text(o.dump_ir, &ir);
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "let xx_"));
    CU_ASSERT(has_interior_vector_loop(ir));
    free(ir);
    read_text(o.emit_llvm, &ll);
    int minmax = count(ll, "@llvm.x86.avx.min.ps.256(<8 x float>") +
                 count(ll, "@llvm.x86.avx.max.ps.256(<8 x float>") +
                 count(ll, "select <8 x i1>");
    printf("\n    8-lane min/max in the LLVM code: %d", minmax);
    CU_ASSERT(minmax >= 1000);
    CU_ASSERT(count(ll, "call void @pf_rt_median_lanes_f32(") >= 1);
    free(ll);
    pf_params_free(&pv);
    pf_program_free(p);
}

/* pass_bounds bounds the pixel loop x by a check inside a window loop (x + k, k = -3..3): the
 * x loop splits, its interior has neither the test nor the clamp, and the result is the
 * interpreter's (borders included). */
static void test_window_loop_bounds_the_pixel_loop(void)
{
    static const char src[] =
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    for each (x, y) of out as loop_out {\n"
        "        float s = 0.0;\n"
        "        for (k) of -3 .. 3 {\n"
        "            int xx = x + k;\n"
        "            if (xx >= 0 && xx < W)\n"
        "                s += in[xx, y] * float(k + 4);\n"
        "        }\n"
        "        out[x, y] = s;\n"
        "    }\n"
        "}\n";
    pf_error err;
    pf_program *p = pf_compile_string("window_sum.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    char *ir = cg_ir_dump(p, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "interior_lo"));
    const char *vl = strstr(ir, "vectorized for<8>");
    const char *end = vl ? strstr(vl, "out[") : NULL;  /* the vector loop's body ends there */
    CU_ASSERT_FATAL(vl && end);
    const char *test = strstr(vl, "if ("), *clamp = strstr(vl, "{clamp");
    CU_ASSERT(!(test && test < end) && !(clamp && clamp < end));
    free(ir);
    pf_image *in = cg_synthetic(45, 7, 1, 9u);
    expect_jit_equals_interp(p, in, "window sum");
    pf_image_free(in);
    pf_program_free(p);
}

PF_TEST_SUITE(codegen_vmedian, PF_TEST(test_window_loop_bounds_the_pixel_loop), PF_TEST(test_median_app_matches_interpreter),
              PF_TEST(test_median_nan_and_signed_zeros), PF_TEST(test_median_window_lengths),
              PF_TEST(test_median_loop_is_vectorized))
