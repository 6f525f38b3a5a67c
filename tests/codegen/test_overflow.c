/* Loop-bound arithmetic at the ends of the int range: inclusive upper bounds of 2147483647,
 * huge steps, starts at -2147483648, and what schedules multiply them by (tiles, vector
 * widths, grid spacings, loop-perforation steps). The JIT (with and without the bounds pass)
 * and the C backend must agree with the reference interpreter, which counts in 64 bits
 * (issue 27: the JIT ran zero iterations when an upper bound was 2147483647). */
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>

typedef struct ovf_case {
    const char *name;
    const char *source;
    const char *schedule;  /* approximation and execution genes, or NULL */
} ovf_case;

#define PIPE "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
/* A pipeline scalar the compiler cannot fold: 2147483647 at run time. */
#define BIG "  int big = 2147483647 - (W - W);\n"

static const ovf_case cases[] = {
    { "over ranges ending at 2147483647",
      PIPE "  for each (x, y) of out over (0 .. 2147483647, 1 .. 2147483647) as s\n"
      "    out[x, y] = in[x, y] + 1.0;\n}\n", NULL },
    { "over range ending at 2147483647, tiled, vectorized, parallel",
      PIPE "  for each (x, y) of out over (1 .. 2147483647, 0 .. 2147483647) as s\n"
      "    out[x, y] = in[x, y] + 1.0;\n}\n", "s exec tile 16 8 vectorize 8 parallel\n" },
    { "for loop and reduction ending at 2147483647",
      PIPE "  for each (x, y) of out as s {\n    float a = 0.0;\n"
      "    for (i) of 2147483640 .. 2147483647 a += float(i - 2147483640);\n"
      "    for (i) of 2147483600 .. 2147483647 step 7 a += 0.5;\n"
      "    out[x, y] = a + float(sum(i - 2147483600, i = 2147483647 - x - 40 .. 2147483647));\n"
      "  }\n}\n", NULL },
    { "for loops whose bounds are known only at run time",
      PIPE BIG "  for each (x, y) of out as s {\n    float a = in[x, y];\n"
      "    for (i) of big - x .. big a += 1.0;\n"
      "    for (i) of big - 30 .. big step y + 1 a += 0.25;\n"
      "    for (i) of -big - 1 .. -big + 2 step big a += 4.0;\n"
      "    out[x, y] = a;\n  }\n}\n", NULL },
    { "named loop perforated: step, first, last at the top of the range",
      PIPE BIG "  for each (x, y) of out as s {\n    float a = 0.0; float b = 0.0; float c = 0.0;\n"
      "    for (i) of big - 20 - x .. big as l1 a += 1.0;\n"
      "    for (i) of big - 20 .. big step 3 as l2 b += float(i % 5);\n"
      "    for (i) of big - 20 .. big as l3 c += 1.0;\n"
      "    out[x, y] = a + b * 0.1 + c * 0.01;\n  }\n}\n",
      "l1 step 64\nl2 first 0.5\nl3 last 0.3\n" },
    { "named loop perforated at random up to 2147483647",
      PIPE BIG "  for each (x, y) of out as s {\n    float a = 0.0;\n"
      "    for (i) of big - 40 .. big as l a += float(i % 3);\n"
      "    out[x, y] = a;\n  }\n}\n", "l random 0.5\n" },
    { "huge over steps (bound x step)",
      PIPE "  image a[W, H];\n"
      "  for each (x, y) of a over (0 .. 2147483647 step 2000000000, 1 .. H step 1073741824)"
      " as sa\n    a[x, y] = in[x, y] + 1.0;\n"
      "  for each (x, y) of out as so out[x, y] = a[x, y] + in[x, y];\n}\n", NULL },
    { "over range from -2147483648 with a step",
      PIPE "  image a[W, H];\n"
      "  for each (x, y) of a over (-2147483647 - 1 .. W step 3, -2147483647 - 1 .. 2147483647"
      " step 5) as sa\n    a[x, y] = in[x, y] + 1.0;\n"
      "  for each (x, y) of out as so out[x, y] = a[x, y] + in[x, y];\n}\n", NULL },
    { "huge over steps, tiled and vectorized (tile and vector splits)",
      PIPE "  image a[W, H];\n"
      "  for each (x, y) of a over (1 .. 2147483647 step 1500000000, 0 .. 2147483647 step"
      " 1000000000) as sa\n    a[x, y] = in[x, y] + 1.0;\n"
      "  for each (x, y) of out as so out[x, y] = a[x, y] + in[x, y];\n}\n",
      "sa exec tile 1024 1024 vectorize 16 parallel unroll 4\n" },
    { "huge over steps x grid spacings (store reconstruction)",
      PIPE "  image a[W, H];\n"
      "  for each (x, y) of a over (0 .. 2147483647 step 1000000000, 0 .. 2147483647 step"
      " 1500000000) as sa\n    a[x, y] = in[x, y] + 1.0;\n"
      "  for each (x, y) of out as so out[x, y] = a[x, y] + in[x, y];\n}\n",
      "sa grid 64 64 reconstruct store linear\n" },
    { "huge over steps x grid spacings (on-demand)",
      PIPE "  image a[W, H];\n"
      "  for each (x, y) of a over (0 .. 2147483647 step 1000000000, 2 .. 2147483647 step"
      " 2147483647) as sa\n    a[x, y] = in[x, y] + 1.0;\n"
      "  for each (x, y) of out as so out[x, y] = a[x, y] + in[x, y];\n}\n",
      "sa grid 64 64 reconstruct on-demand linear\n" },
    { "huge over steps x loop perforation step",
      PIPE "  image a[W, H];\n"
      "  for each (x, y) of a over (0 .. 2147483647, 0 .. 2147483647 step 1000000000) as sa\n"
      "    a[x, y] = in[x, y] + 1.0;\n"
      "  for each (x, y) of out as so out[x, y] = a[x, y] + in[x, y];\n}\n",
      "sa step 64\n" },
    /* found by fuzz_jit: the bounds pass's bound 2^31 wrapped and "proved" the read inside */
    { "reads at offsets near -2^31 and 2^31",
      PIPE "  for each (x, y) of out as s\n"
      "    out[x, y] = in[x - 9, y + (-2147483647 - 1)] + in[x + 2147483647, y - 2147483647]\n"
      "              + in[x + 1073741823, y];\n}\n", NULL },
    /* found by fuzz_jit: one side of a read's bounds was too large to use, the other made the
     * read count as checked */
    { "read at an offset of 2^30 - 1 on a grid stored on demand",
      PIPE "  image a[W, H];\n"
      "  for each (x, y) of a over (1 .. W + 3 step 1000000000, 1 .. 1) as sa\n"
      "    a[x, y] = in[x, y + 1073741823] + in[x + 1, y + 3];\n"
      "  for each (x, y) of out as so out[x, y] = a[x, y];\n}\n",
      "sa grid 2 4 reconstruct on-demand linear\n" },
    /* found by fuzz_jit: an empty vector/parallel loop from 2^31 - 2 to -4 counted (hi - lo) as
     * positive (it wraps) and ran over rows outside the image: SIGSEGV */
    { "an over range entirely outside the image, vectorized and parallel (span wraps in i32)",
      PIPE "  image a[W, H];\n"
      "  for each (x, y) of a over (2147483647 .. -5 step 3, -2147483647 - 1 .. -5 step"
      " 2147483647) as sa\n    a[x, y] = max(in[x + 2, y], in[x, y - 2] + 0.5);\n"
      "  for each (x, y) of out as so out[x, y] = in[x, y] + 1.0;\n}\n", NULL },
    /* found by fuzz_jit: adaptive sampling of a range with no point in the image failed */
    { "adaptive sampling of an empty over range",
      PIPE "  image a[W, H];\n"
      "  for each (x, y) of a over (1073741824 .. -5 step 3, -5 .. 0) as sa a[x, y] = 0.5;\n"
      "  for each (x, y) of out as so out[x, y] = a[x, y] + in[x, y];\n}\n",
      "sa adaptive 2 0.9 reconstruct store gaussian-sv 0.9\n" },
    /* found by fuzz_jit: an empty for loop's step 10^9, perforated by step 4, was kept in i32
     * (its bounds left room) and the product wrapped: "invalid IR ... has step -294967296" */
    { "empty for loops whose step x perforation step or span passes 2^31",
      PIPE "  for each (x, y) of out as s {\n    float a = in[x, y];\n"
      "    for (j) of 1 .. -2147483647 - 1 step 1000000000 as l1 a += 1.0;\n"
      "    for (j) of 2147483647 .. -2147483647 - 1 step 3 as l2 a += 2.0;\n"
      "    for (j) of 2147483647 .. -2147483647 - 1 as l3 a += 4.0;\n"
      "    out[x, y] = a;\n  }\n}\n", "l1 step 4\nl2 last 0.5\nl3 first 0.5\n" },
    /* found by fuzz_jit: the bounds pass split an empty over range (x from W + 3 down to
     * -2^31) into interior and borders with end - first, which wraps in i32, and the border
     * loop wrote far outside a: SIGSEGV */
    { "an empty over range 2^31 apart, split by the bounds pass for a read",
      PIPE "  image a[W, H];\n"
      "  for each (x, y) of a over (W + 3 .. -2147483647 - 1 step 3, 0 .. 1073741824 step 3)"
      " as sa\n    a[x, y] = in[x + 1, y + 17];\n"
      "  for each (x, y) of out as so out[x, y] = a[x, y] + in[x, y];\n}\n", NULL },
};

static void run_case(const ovf_case *oc, pf_image *in)
{
    pf_error err;
    pf_program *prog = pf_compile_string(oc->name, oc->source, &err);
    if (!prog)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_plan *plan = cg_plan(prog, oc->schedule);
    pf_param_values params;
    pf_params_init(&params, prog);
    cg_run ref;
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(prog, &params, plan, PF_BACKEND_INTERP, &in, 1, &ref),
                          0);
    static const struct { pf_backend backend; bool no_bounds; } configs[] = {
        { PF_BACKEND_JIT, false }, { PF_BACKEND_JIT, true }, { PF_BACKEND_C, false },
    };
    for (size_t b = 0; b < sizeof configs / sizeof *configs; b++) {
        pf_compile_options o = { 0 };
        o.backend = configs[b].backend;
        o.no_bounds_pass = configs[b].no_bounds;
        pf_variant *v = cg_compile(prog, &params, plan, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        cg_run got;
        CU_ASSERT_EQUAL_FATAL(cg_run_variant(v, prog, &params, &in, 1, &got), 0);
        double d = cg_max_abs_diff(ref.out[0], got.out[0]);
        if (d > 1e-5)
            fprintf(stderr, "\n    %s: %s%s differs from the interpreter by %g", oc->name,
                    pf_backend_name(o.backend), o.no_bounds_pass ? " (no bounds pass)" : "", d);
        CU_ASSERT(d <= 1e-5);
        cg_run_free(&got);
        pf_variant_free(v);
    }
    cg_run_free(&ref);
    pf_params_free(&params);
    pf_plan_free(plan);
    pf_program_free(prog);
}

static void test_bounds_at_int_max(void)
{
    pf_image *in = cg_synthetic(37, 21, 1, 11);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_case(&cases[i], in);
    pf_image_free(in);
}

/* found by fuzz_jit on a 4 x 8 image: in[x + 2147483647 * W, y + 2] wraps in i32 (to x - 4);
 * the bounds pass reasoned without the wrap, its bound code wrapped too, and the read ran
 * unchecked: SIGSEGV */
static void test_huge_multiple_of_extent(void)
{
    static const ovf_case c = {
        "a read at x + 2147483647 * W",
        PIPE "  for each (x, y) of out as s\n"
        "    out[x, y] = in[x + (2147483647 * W), y + 2] + in[x, y + 536870912 * H];\n}\n",
        NULL };
    for (int w = 1; w <= 8; w++) {
        pf_image *in = cg_synthetic(w, 8, 1, 11);
        run_case(&c, in);
        pf_image_free(in);
    }
}

PF_TEST_SUITE(codegen_overflow, PF_TEST(test_bounds_at_int_max), PF_TEST(test_huge_multiple_of_extent))
