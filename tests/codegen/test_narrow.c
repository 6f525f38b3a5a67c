/* pass_narrow: a window array filled in order by a counter is declared as long as the counter
 * can go when loop perforation shortens its loops, so the vector median's network covers it;
 * no output changes (against the same plan compiled without the pass, and against the
 * interpreter); arrays read otherwise, or counted by loops of unknown trip count, keep their
 * length. */
#include "codegen/compile.h"
#include "lang/lang.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include "base/arena.h"
#include "base/fileio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sched compiled with and without the pass: the max |difference| of the outputs on in (which
 * must be 0), the arrays narrowed, and the JIT's output against the interpreter's. */
static int expect_same(const pf_program *p, const char *sched, pf_image *in, const char *what)
{
    pf_compile_options o[2] = { { .threads = 2 }, { .threads = 2, .no_narrow = true } };
    pf_variant_stats st[2] = { { 0 }, { 0 } };
    double d = cg_diff_schedule_options(p, sched, in, o, st);
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_plan *plan = cg_plan(p, sched);
    cg_run ref, got;
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, plan, PF_BACKEND_INTERP, &in, 1, &ref), 0);
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, plan, PF_BACKEND_JIT, &in, 1, &got), 0);
    double di = cg_max_abs_diff(ref.out[0], got.out[0]);
    char line[256];
    snprintf(line, sizeof line, "%s", what);
    for (char *c = strchr(line, '\n'); c; c = strchr(c, '\n'))
        *c = c[1] ? ';' : '\0';
    printf("\n    %-40.40s %3dx%-3d narrowed %d, |with - without| %g, |jit - interp| %g", line,
           in->width, in->height, st[0].arrays_narrowed, d, di);
    CU_ASSERT_EQUAL(d, 0);
    CU_ASSERT_EQUAL(di, 0);
    CU_ASSERT_EQUAL(st[1].arrays_narrowed, 0);
    cg_run_free(&ref);
    cg_run_free(&got);
    pf_plan_free(plan);
    pf_params_free(&pv);
    return st[0].arrays_narrowed;
}

/* The length the final IR declares the median's window with. */
static int window_len(const pf_program *p, const char *sched)
{
    char *ir = cg_ir_dump(p, sched);
    const char *w = strstr(ir, "array f32 window");
    const char *br = w ? strchr(w, '[') : NULL;
    int len = br ? atoi(br + 1) : -1;
    free(ir);
    return len;
}

/* apps/median.pf: perforation by step, first and last shortens the window (9 x 3 = 27 with
 * every fourth column, 3 x 3 with every third row and column, 5 x 9 with the first 0.6 of the
 * rows); random perforation and the exact program keep 81. */
static void test_median_windows_narrowed(void)
{
    pf_program *p = cg_load_app("median");
    static const struct {
        const char *sched;
        int len;
    } cases[] = { { "", 81 },
                  { "median_x_loop step 4\n", 27 },
                  { "median_y_loop step 3\nmedian_x_loop step 3\n", 9 },
                  { "median_y_loop first 0.6\n", 45 },
                  { "median_x_loop random 0.5\n", 81 },
                  { "loop_pixels grid 8 8 1 reconstruct store linear\nmedian_y_loop step 4\n", 27 } };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int len = window_len(p, cases[i].sched);
        if (len != cases[i].len)
            printf("\n    '%s': window[%d], expected %d", cases[i].sched, len, cases[i].len);
        CU_ASSERT_EQUAL(len, cases[i].len);
    }
    pf_program_free(p);
}

/* The narrowed window takes a vector median network of its own length: fewer 8-lane min/max
 * than the 81-value network's 1094 (test_vmedian), and not none. */
static void test_narrowed_window_takes_the_network(void)
{
    pf_program *p = cg_load_app("median");
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_plan *plan = cg_plan(p, "median_x_loop step 4\n");
    pf_compile_options o = { 0 };
    o.emit_llvm = pf_test_tmp("narrow.ll");
    pf_error err;
    pf_variant *v = pf_variant_build(p, &pv, plan, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    pf_variant_free(v);
    char *ll = NULL;
    CU_ASSERT_EQUAL_FATAL(pf_read_file(o.emit_llvm, 1 << 26, &ll, NULL, &err), 0);
    int minmax = cg_count(ll, "@llvm.x86.avx.min.ps.256(<8 x float>") +
                 cg_count(ll, "@llvm.x86.avx.max.ps.256(<8 x float>") +
                 cg_count(ll, "select <8 x i1>");
    printf("\n    8-lane min/max in the LLVM code: %d", minmax);
    CU_ASSERT(minmax >= 100 && minmax < 1000);
    free(ll);
    pf_plan_free(plan);
    pf_params_free(&pv);
    pf_program_free(p);
}

static void test_median_results_unchanged(void)
{
    pf_program *p = cg_load_app("median");
    pf_image *photo = cg_load_photo("natural_29_256x192.png", 3);
    static const char *scheds[] = {
        "median_x_loop step 4\n", "median_y_loop step 3\nmedian_x_loop step 3\n",
        "median_y_loop first 0.6\nmedian_x_loop last 0.4\n",
        "loop_pixels grid 8 8 1 reconstruct store linear\nmedian_y_loop step 4\n"
        "loop_pixels exec root tile 32 64 parallel unroll 4\n",
        "loop_pixels grid 2 2 1 reconstruct on-demand linear\nmedian_x_loop step 2\n"
    };
    for (size_t i = 0; i < sizeof scheds / sizeof *scheds; i++) {
        CU_ASSERT_EQUAL(expect_same(p, scheds[i], photo, scheds[i]), 1);
    }
    /* the C backend declares the narrowed array too (exports compile that source) */
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_plan *plan = cg_plan(p, scheds[1]);
    cg_run ref, c_out;
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, plan, PF_BACKEND_INTERP, &photo, 1, &ref), 0);
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, plan, PF_BACKEND_C, &photo, 1, &c_out), 0);
    CU_ASSERT_EQUAL(cg_max_abs_diff(ref.out[0], c_out.out[0]), 0);
    cg_run_free(&ref);
    cg_run_free(&c_out);
    pf_plan_free(plan);
    pf_params_free(&pv);
    /* windows truncated at every border, images narrower than the window */
    static const int sizes[][2] = { { 1, 1 }, { 7, 3 }, { 9, 9 }, { 23, 11 } };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        pf_image *in = cg_synthetic(sizes[i][0], sizes[i][1], 3, 7u + (unsigned)i);
        CU_ASSERT_EQUAL(expect_same(p, "median_y_loop step 2\nmedian_x_loop step 3\n", in,
                                    "synthetic"), 1);
        pf_image_free(in);
    }
    pf_image_free(photo);
    pf_program_free(p);
}

static pf_program *compile(const char *src)
{
    pf_error err;
    pf_program *p = pf_compile_string("narrow.pf", src, &err);
    if (!p)
        fprintf(stderr, "\n%s\n%s\n", src, err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

/* A window of 16 over a perforated loop: narrowed (8 with every second tap), unless the array
 * is also read by index, or the loop's trip count is not a constant. */
static void test_only_counted_windows_narrow(void)
{
    static const char fmt[] =
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    for each (x, y) of out as loop_out {\n"
        "        float a[16];\n"
        "        int n = 0;\n"
        "        for (k) of 0 .. %s as taps {\n"
        "            int xx = x + k - 7;\n"
        "            if (xx >= 0 && xx < W && in[clamp(xx, 0, W - 1), y] < 0.9) {\n"
        "                a[n] = in[xx, y];\n"
        "                n += 1;\n"
        "            }\n"
        "        }\n"
        "        out[x, y] = median(a, n)%s;\n"
        "    }\n"
        "}\n";
    static const struct {
        const char *hi, *extra;
        int narrowed;
    } cases[] = { { "15", "", 1 }, { "15", " + a[3]", 0 }, { "H - 1", "", 0 } };
    pf_image *in = cg_synthetic(37, 16, 1, 5u);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char src[1024];
        snprintf(src, sizeof src, fmt, cases[i].hi, cases[i].extra);
        pf_program *p = compile(src);
        char what[64];
        snprintf(what, sizeof what, "0 .. %s%s", cases[i].hi, cases[i].extra);
        CU_ASSERT_EQUAL(expect_same(p, "taps step 2\n", in, what), cases[i].narrowed);
        pf_program_free(p);
    }
    pf_image_free(in);
}

PF_TEST_SUITE(codegen_narrow, PF_TEST(test_median_windows_narrowed),
              PF_TEST(test_narrowed_window_takes_the_network),
              PF_TEST(test_median_results_unchanged), PF_TEST(test_only_counted_windows_narrow))
