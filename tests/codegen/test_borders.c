/* pass_bounds' merged border parts: a split loop whose iterations may run in any order runs
 * its two border parts as one loop over a counter (the bilateral grid's blurs in y and z);
 * outputs are identical to the bit with the parts kept apart, on a photo and on odd sizes;
 * a loop whose order matters (a scatter) or whose border parts fold a test on the loop
 * variable (blur's black frame) keeps its three parts. */
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_merged_same_outputs(void)
{
    static const char *apps[] = { "blur", "unsharp_mask", "bilateral_filter", "bilateral_grid",
                                  "median", "demosaic" };
    pf_image *ins[4] = { cg_load_photo("man_made_1_256x192.png", 3), cg_synthetic(45, 29, 3, 7u),
                         cg_synthetic(7, 3, 3, 8u), cg_synthetic(1, 1, 3, 9u) };
    for (size_t i = 0; i < sizeof apps / sizeof *apps; i++) {
        pf_program *prog = cg_load_app(apps[i]);
        pf_compile_options o[2] = { { 0 }, { 0 } };
        o[1].no_border_merge = true;
        for (int k = 0; k < 4; k++) {
            pf_variant_stats st[2];
            double d = cg_diff_options(prog, ins[k], o, st);
            printf("\n    %-16s %3dx%-3d borders merged %d (apart: %d), max|diff| %g", apps[i],
                   ins[k]->width, ins[k]->height, st[0].borders_merged, st[1].borders_merged, d);
            CU_ASSERT_EQUAL(d, 0.0);
            CU_ASSERT_EQUAL(st[1].borders_merged, 0);
            CU_ASSERT_EQUAL(st[0].loops_split, st[1].loops_split);
            if (strcmp(apps[i], "bilateral_grid") == 0)
                CU_ASSERT(st[0].borders_merged >= 2);  /* blur_y's rows, blur_z's planes */
        }
        pf_program_free(prog);
    }
    for (int k = 0; k < 4; k++)
        pf_image_free(ins[k]);
}

/* The merged loop in the IR: a counter over both parts, the variable a select of the two. */
static void test_merged_loop_shape(void)
{
    pf_program *grid = cg_load_app("bilateral_grid");
    char *ir = cg_ir_dump(grid, "");
    const char *loop = strstr(ir, "for border_");
    CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
    CU_ASSERT_PTR_NOT_NULL(strstr(loop, "= select((border_"));
    free(ir);
    pf_program_free(grid);
    pf_program *blur = cg_load_app("blur");
    ir = cg_ir_dump(blur, "");
    CU_ASSERT_PTR_NULL(strstr(ir, "for border_"));  /* each part folds the frame test */
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "interior_lo"));
    free(ir);
    pf_program_free(blur);
}

/* A scatter whose row loop is split (clamped reads at x - 1 and x + 1) keeps its parts apart:
 * merged, the border pixels would be summed into the histogram before the interior's, and
 * float sums depend on their order. */
static void test_scatter_keeps_order(void)
{
    const char *src =
        "pipeline p(image in[W, H, 1]) -> (image out[8, 1, 1]) {\n"
        "    image hist[8, 1] boundary constant(0.0);\n"
        "    for each (x, y) of in as splat {\n"
        "        int k = int(in[x, y, 0] * 7.99);\n"
        "        hist[k, 0] += in[x - 1, y, 0] * 0.37 + in[x + 1, y, 0] * 1.1;\n"
        "    }\n"
        "    for each (x, y, c) of out as copy\n"
        "        out[x, y, c] = hist[x, y];\n"
        "}\n";
    pf_error err;
    pf_program *p = pf_compile_string("scatter.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_image *in = cg_synthetic(61, 17, 1, 11u);
    cg_run jit, interp;
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(p, &pv, PF_BACKEND_JIT, false, &in, 1, &jit), 0);
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(p, &pv, PF_BACKEND_INTERP, false, &in, 1, &interp), 0);
    double d = cg_max_abs_diff(jit.out[0], interp.out[0]);
    printf("\n    scatter: max|diff| to the interpreter %g", d);
    CU_ASSERT_EQUAL(d, 0.0);
    pf_compile_options o = { 0 };
    pf_variant *v = cg_compile(p, &pv, NULL, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    pf_variant_stats st = pf_variant_get_stats(v);
    CU_ASSERT(st.loops_split >= 1);
    CU_ASSERT_EQUAL(st.borders_merged, 0);
    pf_variant_free(v);
    cg_run_free(&jit);
    cg_run_free(&interp);
    pf_image_free(in);
    pf_params_free(&pv);
    pf_program_free(p);
}

PF_TEST_SUITE(codegen_borders, PF_TEST(test_merged_same_outputs),
              PF_TEST(test_merged_loop_shape), PF_TEST(test_scatter_keeps_order))
