/* Programs that are long or deep but valid (issue 27): a chain of one-tap stages, helper calls
 * nested in their arguments and helpers calling helpers. The JIT must compile them in a loop
 * nest whose depth does not grow with the program (the default schedule's compute-at chains
 * stop at PF_EXEC_MAX_CHAIN stages: a 2,000-stage chain overflowed the stack in
 * codegen/affine.c) and agree with the interpreter; helper inlining must not abort. What the
 * checker refuses instead is in tests/lang/errors/helpers_*.pf, the schedules it refuses in
 * tests/perforate (schedule_validate). */
#include "perforate/schedule.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include "base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A chain of n one-tap stages: in -> a0 -> ... -> out, each reading its input at x + 1. */
static char *chain_source(int n)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_puts(&sb, "pipeline p(image in[W, H]) -> (image out[W, H]) {\n");
    for (int i = 0; i < n - 1; i++)
        pf_sb_printf(&sb, "  image a%d[W, H];\n", i);
    for (int i = 0; i < n; i++) {
        char prev[16], cur[16];
        snprintf(prev, sizeof prev, i ? "a%d" : "in", i - 1);
        snprintf(cur, sizeof cur, i < n - 1 ? "a%d" : "out", i);
        pf_sb_printf(&sb, "  for each (x, y) of %s as s%d %s[x, y] = %s[x + 1, y] * 0.5 + 0.25;\n",
                     cur, i, cur, prev);
    }
    pf_sb_puts(&sb, "}\n");
    return pf_sb_take(&sb);
}

/* The deepest indentation of a loop-IR dump, in levels of 4 spaces. */
static int max_indent(const char *ir)
{
    int best = 0;
    for (const char *p = ir; *p;) {
        int n = 0;
        while (p[n] == ' ')
            n++;
        if (n / 4 > best)
            best = n / 4;
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    return best;
}

static void same_as_interpreter(const char *name, const char *src)
{
    pf_error err;
    pf_program *prog = pf_compile_string(name, src, &err);
    if (!prog)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_param_values params;
    pf_params_init(&params, prog);
    pf_image *in = cg_synthetic(23, 9, 1, 3u);
    cg_run ref, got;
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(prog, &params, PF_BACKEND_INTERP, false, &in, 1, &ref),
                          0);
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(prog, &params, PF_BACKEND_JIT, false, &in, 1, &got), 0);
    double d = cg_max_abs_diff(ref.out[0], got.out[0]);
    printf("\n    %-28s max|diff| %g", name, d);
    CU_ASSERT(d <= 1e-5);
    cg_run_free(&ref);
    cg_run_free(&got);
    pf_image_free(in);
    pf_params_free(&params);
    pf_program_free(prog);
}

static void test_long_chain(void)
{
    enum { N = 100 };
    char *src = chain_source(N);
    same_as_interpreter("chain of 100 stages", src);
    pf_error err;
    pf_program *prog = pf_compile_string("chain", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    char *ir = cg_ir_dump(prog, "");
    /* at most PF_EXEC_MAX_CHAIN stages nest, each a window allocation and three loops (tiles,
     * rows), plus the pieces around: before the limit, about four levels per stage */
    int depth = max_indent(ir);
    printf("\n    chain of %d stages: loop IR %d levels deep", N, depth);
    CU_ASSERT(depth <= 4 * PF_EXEC_MAX_CHAIN + 12);
    free(ir);
    pf_program_free(prog);
    free(src);
}

static void test_nested_helper_calls(void)
{
    /* g(g(...(in[x, y])...)) 200 deep: the arguments nest, not the inlining */
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_puts(&sb, "float g(float v) { return v * 0.5 + 1.0; }\n"
                    "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
                    "  for each (x, y) of out as s out[x, y] = ");
    for (int i = 0; i < 200; i++)
        pf_sb_puts(&sb, "g(");
    pf_sb_puts(&sb, "in[x, y]");
    for (int i = 0; i < 200; i++)
        pf_sb_putc(&sb, ')');
    pf_sb_puts(&sb, ";\n}\n");
    char *src = pf_sb_take(&sb);
    same_as_interpreter("g(g(...)) 200 deep", src);
    free(src);
    /* PF_MAX_CALL_DEPTH helpers each calling the next: the deepest nesting pf_check accepts */
    pf_sb_init(&sb);
    pf_sb_puts(&sb, "float f0(float v) { return v + 1.0; }\n");
    for (int i = 1; i < PF_MAX_CALL_DEPTH; i++)
        pf_sb_printf(&sb, "float f%d(float v) { return f%d(v) * 0.5; }\n", i, i - 1);
    pf_sb_printf(&sb, "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
                      "  for each (x, y) of out as s out[x, y] = f%d(in[x, y]);\n}\n",
                 PF_MAX_CALL_DEPTH - 1);
    src = pf_sb_take(&sb);
    same_as_interpreter("500 helpers deep", src);
    free(src);
}

PF_TEST_SUITE(codegen_deep, PF_TEST(test_long_chain), PF_TEST(test_nested_helper_calls))
