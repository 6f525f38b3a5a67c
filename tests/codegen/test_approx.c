/* Approximated programs: every strategy x reconstruction combination the schedule format allows,
 * on the apps where it is meaningful, compiled by the JIT (and the C backend for a subset) and
 * compared with the reference interpreter running the same schedule (same masks, same
 * reconstruction: max abs difference <= 1e-5). Also checks that approximations really change the
 * output (a schedule that did nothing would pass the comparison trivially). */
#include "codegen/runtime.h"
#include "perforate/schedule.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <string.h>

typedef struct approx_case {
    const char *app;
    const char *schedule;
    bool c_backend;   /* also check the C backend */
} approx_case;

static const approx_case cases[] = {
    /* random perforation of a named loop on the C backend too (cgen emitted no pf_perf_hash:
     * the C compiler failed; found by tests/search's output hashes) */
    { "median", "median_y_loop random 0.5\n", true },
    /* grid sampling with every reconstruction, store and on-demand */
    { "blur", "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
              "loop_output grid 4 4 1 reconstruct store linear\n", true },
    { "blur", "loop_temp grid 2 1 1 reconstruct on-demand nearest\n"
              "loop_output grid 2 3 1 reconstruct store nearest\n", false },
    { "blur", "loop_temp grid 3 2 1 reconstruct store gaussian 0.8\n", true },
    { "blur", "loop_output grid 2 2 1 reconstruct store gaussian-sv 1.2\n", false },
    { "blur", "loop_temp grid 4 1 1 reconstruct store linear\n", false },
    { "unsharp_mask", "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                      "loop_output grid 1 4 1 reconstruct on-demand linear\n"
                      "mask_combination_loop grid 2 2 1 reconstruct store linear\n", true },
    /* grid fills lowered since issue 28: stages with `over` ranges (the unsharp mask's
     * interior, the demosaic's Bayer lattices) fill their lattice view, and (x, y) stages of an
     * RGB image fill its channels as planes, as the runtime's rt_grid.c does */
    { "unsharp_mask", "loop_temp grid 2 3 1 reconstruct store linear\n", true },
    { "demosaic", "loop_gx grid 2 2 reconstruct store nearest\n"
                  "loop_rout grid 3 2 reconstruct store linear\n", true },
    { "bilateral_filter", "loop_pixels grid 3 2 reconstruct store linear\n", false },
    /* adaptive and importance sampling */
    { "blur", "loop_output adaptive 2 0.4 reconstruct store gaussian-sv 0.9\n", true },
    { "blur", "loop_output adaptive 3 0.25 reconstruct store nearest\n", false },
    { "blur", "loop_temp adaptive 4 0.5 reconstruct store gaussian 1\n", false },
    { "blur", "loop_output importance 0.3 0.02 reconstruct store gaussian-sv 0.73\n", true },
    { "blur", "loop_temp importance 0.5 0.01 reconstruct store nearest\n", false },
    { "blur", "loop_output importance 0.6 0.03 reconstruct store gaussian 0.5\n", false },
    { "bilateral_filter", "loop_pixels importance 0.75 0.02 reconstruct store gaussian-sv 0.73\n"
                          "loop_kernel grid 2 2 reconstruct store linear\n", false },
    { "median", "loop_pixels adaptive 2 0.28 reconstruct store gaussian-sv 0.95\n", false },
    /* channel subsampling */
    { "blur", "loop_temp channels 1\n", false },
    { "blur", "loop_output grid 2 2 1 channels 1 reconstruct store linear\n", true },
    { "blur", "loop_temp grid 2 1 1 channels 2 reconstruct on-demand linear\n", false },
    /* loop perforation of stages (the paper's baseline) and of for loops */
    { "blur", "loop_temp step 2\nloop_output first 0.58\n", true },
    { "blur", "loop_temp last 0.7\nloop_output random 0.6\n", false },
    { "median", "median_y_loop step 2\nmedian_x_loop first 0.5\n", true },
    { "median", "median_y_loop last 0.6\nmedian_x_loop random 0.5\n", false },
    { "artistic_blur", "loop_u step 4\nloop_v random 0.3\n", false },
    { "demosaic", "loop_gx grid 4 8\nloop_gout grid 8 2\nloop_bout grid 8 4\n"
                  "loop_combine grid 8 1 reconstruct on-demand linear\n", true },
    { "demosaic", "loop_bx grid 2 1 reconstruct on-demand linear\n"
                  "inner_loop_gx first 0.5\n", false },
    { "bilateral_grid", "blur_y_loop grid 8 4 1 1 reconstruct on-demand linear\n"
                        "blur_x_loop grid 8 4 1 1 reconstruct on-demand linear\n"
                        "blur_z_loop grid 4 4 1 1 reconstruct on-demand linear\n"
                        "trilerp_loop grid 2 2 1 reconstruct store linear\n", true },
    { "bilateral_grid", "populate_b_grid_loop grid 2 2\n", false },
    /* the splat iterates yuv, which rgb_to_yuv stores downsampled: the splat still runs over
     * yuv's full domain (lowering took yuv's storage for the splat's own and crashed; found by
     * a search on the bilateral grid) */
    { "bilateral_grid", "rgb_to_yuv grid 8 2 reconstruct on-demand linear\n", true },
    { "bilateral_grid", "rgb_to_yuv grid 2 2 reconstruct on-demand nearest\n"
                        "populate_b_grid_loop grid 2 1\n", false },
};

static void run_case(const approx_case *ac, pf_image *in)
{
    pf_program *prog = cg_load_app(ac->app);
    pf_param_values params;
    pf_params_init(&params, prog);
    cg_run exact, ref, got;
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(prog, &params, PF_BACKEND_JIT, false, &in, 1, &exact),
                          0);
    pf_plan *plan = cg_plan(prog, ac->schedule);
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(prog, &params, plan, PF_BACKEND_INTERP, &in, 1, &ref), 0);
    double changed = cg_max_abs_diff(exact.out[0], ref.out[0]);
    CU_ASSERT(changed > 0);  /* the schedule really approximates */
    for (int b = 0; b < (ac->c_backend ? 2 : 1); b++) {
        pf_backend be = b ? PF_BACKEND_C : PF_BACKEND_JIT;
        pf_rt_set_poison(true);  /* unzeroed scratch (the masks) must be written first */
        int rc = cg_run_plan(prog, &params, plan, be, &in, 1, &got);
        pf_rt_set_poison(false);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        double d = cg_max_abs_diff(ref.out[0], got.out[0]);
        printf("\n    %-16s %-3s vs interp %-8.2g (vs exact %-6.3g) %.60s", ac->app,
               pf_backend_name(be), d, changed, ac->schedule);
        CU_ASSERT(d <= 1e-5);
        cg_run_free(&got);
    }
    cg_run_free(&exact);
    cg_run_free(&ref);
    pf_plan_free(plan);
    pf_params_free(&params);
    pf_program_free(prog);
}

static void test_approx_matches_interpreter(void)
{
    pf_image *photo = cg_load_photo("natural_29_256x192.png", 3);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_case(&cases[i], photo);
    pf_image_free(photo);
}

/* Grid store reconstruction runs as generated loops (codegen/lower_fill.c): its edges (the
 * last sample before the image's end, extents that are not multiples of the spacing) on an
 * odd-sized image, against the interpreter's runtime fill. */
static void test_grid_fill_odd_sizes(void)
{
    static const char *const fills[] = {
        "loop_output grid 4 1 1 reconstruct store linear\n",
        "loop_output grid 1 3 1 reconstruct store linear\n",
        "loop_output grid 3 5 1 reconstruct store linear\n",
        "loop_output grid 5 2 1 reconstruct store nearest\n",
        "loop_temp grid 2 7 1 reconstruct store nearest\n",
        "loop_temp grid 64 1 1 reconstruct store linear\n",
    };
    pf_image *in = cg_synthetic(61, 37, 3, 7);
    for (size_t i = 0; i < sizeof fills / sizeof *fills; i++) {
        approx_case ac = { "blur", fills[i], i == 2 };
        run_case(&ac, in);
    }
    pf_image_free(in);
}

PF_TEST_SUITE(codegen_approx, PF_TEST(test_approx_matches_interpreter),
              PF_TEST(test_grid_fill_odd_sizes))
