/* Execution schedules (docs/schedule.md, "Execution"): each directive changes the loop nest as
 * documented (checked on IR dumps), and no legal schedule changes a result: a property test
 * draws random legal execution genes (fixed seed) for every app, alone and on top of
 * approximations, and compares the JIT with the reference interpreter. */
#include "codegen/runtime.h"
#include "perforate/exec.h"
#include "perforate/schedule.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The JIT under a plan gives the interpreter's result (same plan) on `in`. */
static void expect_plan_as_interp(const pf_program *p, const pf_plan *plan, pf_image *in)
{
    pf_param_values pv;
    pf_params_init(&pv, p);
    cg_run ref, got;
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, plan, PF_BACKEND_INTERP, &in, 1, &ref), 0);
    pf_rt_set_poison(true);  /* a read of an element nothing wrote gives NaN */
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, plan, PF_BACKEND_JIT, &in, 1, &got), 0);
    pf_rt_set_poison(false);
    CU_ASSERT(cg_max_abs_diff(ref.out[0], got.out[0]) <= 1e-5);
    cg_run_free(&ref);
    cg_run_free(&got);
    pf_params_free(&pv);
}

/* The same for schedule text. */
static void expect_same_as_interp(const pf_program *p, const char *sched, pf_image *in)
{
    pf_plan *plan = cg_plan(p, sched);
    expect_plan_as_interp(p, plan, in);
    pf_plan_free(plan);
}

/* `inline`: the producer's expression is evaluated at each read (with its image's boundary
 * mode), no storage is allocated, and results equal the interpreter's. */
static void test_inline(void)
{
    static const char src[] =
        "pipeline p(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
        "    image g[W, H] boundary mirror;\n"
        "    image k[W, H, 3] boundary constant(0.5);\n"
        "    for each (x, y) of g as gray g[x, y] = 0.3 * in[x, y, 0] + 0.7 * in[x, y, 1];\n"
        "    for each (x, y, c) of k as scale k[x, y, c] = in[x, y, c] * g[x, y];\n"
        "    for each (x, y, c) of out as final\n"
        "        out[x, y, c] = g[x - 3, y + 2] + k[x + 5, y - 1, c] - g[-x, y];\n"
        "}\n";
    pf_error err;
    pf_program *p = pf_compile_string("inline.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    char *ir = cg_ir_dump(p, "gray exec inline\nscale exec inline\n");
    CU_ASSERT_PTR_NULL(strstr(ir, "allocate g"));
    CU_ASSERT_PTR_NULL(strstr(ir, "allocate k"));
    CU_ASSERT_PTR_NULL(strstr(ir, "stage gray"));
    free(ir);
    pf_image *in = cg_synthetic(29, 17, 3, 4);
    expect_same_as_interp(p, "gray exec inline\nscale exec inline\n", in);
    /* a stage with more than one assignment, or an output, cannot be inlined */
    CU_ASSERT_PTR_NULL(pf_schedule_from_string(p, "final exec inline\n", &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'inline' needs an intermediate image"));
    pf_image_free(in);
    pf_program_free(p);
}

static void test_directives_shape_the_loop_nest(void)
{
    pf_program *p = cg_load_app("blur");
    char *ir = cg_ir_dump(p, "loop_output exec tile 64 16 vectorize 8 parallel unroll 2\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "parallel for yo"));          /* the outer tile loop */
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "for xo"));                   /* tiles in x */
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "step (1 * 64)") || strstr(ir, "step 64"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "vectorized for<8> x"));      /* innermost x */
    CU_ASSERT_PTR_NULL(strstr(ir, "vectorized for<8> y"));
    free(ir);
    ir = cg_ir_dump(p, "loop_temp exec vectorize 16\nloop_output exec root\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "vectorized for<16> x"));
    CU_ASSERT_PTR_NULL(strstr(ir, "parallel for"));
    CU_ASSERT_PTR_NULL(strstr(ir, "for xo"));
    free(ir);
    /* root = as written: no directive at all */
    ir = cg_ir_dump(p, "loop_temp exec root\nloop_output exec root\n");
    CU_ASSERT_PTR_NULL(strstr(ir, "vectorized"));
    CU_ASSERT_PTR_NULL(strstr(ir, "parallel"));
    free(ir);
    /* no exec line: the default schedule vectorizes and parallelizes non-serial stages */
    ir = cg_ir_dump(p, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "parallel for y"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "vectorized for<8> x"));
    free(ir);
    pf_program_free(p);
}

/* The loops of stage `stage` in the dump, outermost first: each `for NAME_` (NAME: a stage
 * variable or a tile loop) must occur after the previous one, within the stage. */
static bool loops_in_order(const char *ir, const char *stage, const char *const *loops, int n)
{
    char tag[128];
    snprintf(tag, sizeof tag, "// stage %s", stage);
    const char *q = strstr(ir, tag);
    const char *end = q ? strstr(q + 1, "// stage ") : NULL;
    for (int i = 0; q && i < n; i++) {
        char want[64];
        snprintf(want, sizeof want, "%s_", loops[i]);
        q = strstr(q, want);
        if (q && end && q > end)
            q = NULL;
    }
    if (!q)
        fprintf(stderr, "\n    %s: loops not in the expected order in:\n%s", stage, ir);
    return q != NULL;
}

/* `reorder` (innermost first) builds the stage's nest in that order; `parallel` goes to the
 * outermost loop that is not over a further variable, `vectorize` stays on x. */
static void test_reorder_shapes_the_loop_nest(void)
{
    pf_program *p = cg_load_app("blur");
    char *ir = cg_ir_dump(p, "loop_output exec tile 32 16 reorder x y c xo yo vectorize 8 "
                             "parallel\n");
    static const char *const tiles_out[] = { "parallel for yo", "for xo", "for c", "for y",
                                             "vectorized for<8> x" };
    CU_ASSERT(loops_in_order(ir, "loop_output", tiles_out, 5));
    free(ir);
    ir = cg_ir_dump(p, "loop_output exec tile 32 16 reorder x y yo c xo vectorize 4 parallel\n");
    static const char *const xo_out[] = { "parallel for xo", "for c", "for yo", "for y",
                                          "vectorized for<4> x" };
    CU_ASSERT(loops_in_order(ir, "loop_output", xo_out, 5));
    free(ir);
    /* no tiles: the channel between the rows and x; x outside y (not vectorized) */
    ir = cg_ir_dump(p, "loop_output exec reorder x c y vectorize 8 parallel\n"
                       "loop_temp exec reorder y x c parallel\n");
    static const char *const c_mid[] = { "parallel for y", "for c", "vectorized for<8> x" };
    static const char *const x_out[] = { "for c", "parallel for x", "for y" };
    CU_ASSERT(loops_in_order(ir, "loop_output", c_mid, 3));
    CU_ASSERT(loops_in_order(ir, "loop_temp", x_out, 3));
    CU_ASSERT_PTR_NULL(strstr(ir, "vectorized for<8> y"));
    free(ir);
    /* the default order spelled out: the default nest */
    ir = cg_ir_dump(p, "loop_output exec tile 32 16 reorder x y xo yo c parallel\n");
    static const char *const def[] = { "for c", "parallel for yo", "for xo", "for y", "for x" };
    CU_ASSERT(loops_in_order(ir, "loop_output", def, 5));
    free(ir);
    pf_program_free(p);
}

/* Reordered nests compute what the interpreter computes: tiles, vectorize and parallel with
 * the channel inside the tiles or between the rows, the tile loops swapped with producers
 * computed at them (they run at the innermost tile loop: yo), and a store-mode grid stage
 * whose order keeps the per-tile fill (tile loops swapped) or does not (further variables
 * inside the tiles: the whole-image fill after the loops). */
static void test_reorder_keeps_results(void)
{
    static const struct { const char *app, *sched; } cases[] = {
        { "blur", "loop_output exec tile 32 16 reorder x y c xo yo vectorize 8 parallel\n" },
        { "blur", "loop_output exec tile 7 5 reorder x c y xo yo vectorize 8 parallel unroll 2\n"
                  "loop_temp exec reorder x c y vectorize 16 parallel\n" },
        { "blur", "loop_temp exec at loop_output vectorize 8\n"
                  "loop_output exec tile 16 8 reorder x y yo xo c vectorize 8 parallel\n" },
        { "blur", "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                  "loop_temp exec at loop_output vectorize 8\n"
                  "loop_output exec tile 9 4 reorder y x yo xo c parallel\n" },
        { "blur", "loop_output grid 4 4 1 reconstruct store linear\n"
                  "loop_output exec tile 3 2 reorder x y yo xo c vectorize 8 parallel\n" },
        { "blur", "loop_output grid 4 4 1 reconstruct store linear\n"
                  "loop_output exec tile 3 2 reorder x y c xo yo vectorize 8 parallel\n" },
        { "unsharp_mask", "loop_output exec tile 16 16 reorder x c xo y yo vectorize 8 parallel\n"
                          "mask_combination_loop exec reorder y c x parallel\n" },
        { "bilateral_grid", "blur_z_loop exec tile 4 4 reorder x z i y xo yo vectorize 4 "
                            "parallel\n"
                            "trilerp_loop exec tile 16 8 reorder x y c xo yo vectorize 8 "
                            "parallel\n" },
    };
    pf_image *in = cg_synthetic(61, 37, 3, 17);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pf_program *p = cg_load_app(cases[i].app);
        expect_same_as_interp(p, cases[i].sched, in);
        pf_program_free(p);
    }
    pf_image_free(in);
    /* where the producers and the fill go */
    pf_program *p = cg_load_app("blur");
    char *ir = cg_ir_dump(p, cases[2].sched);
    const char *yo = strstr(ir, "for yo"), *alloc = strstr(ir, "allocate temp");
    CU_ASSERT(strstr(ir, "parallel for xo") && yo && alloc && yo < alloc);
    free(ir);
    ir = cg_ir_dump(p, cases[4].sched);
    yo = strstr(ir, "for yo");
    const char *win = strstr(ir, "allocate out_samples");
    CU_ASSERT(yo && win && yo < win && !strstr(ir, "for fj"));
    free(ir);
    ir = cg_ir_dump(p, cases[5].sched);
    CU_ASSERT_PTR_NULL(strstr(ir, "allocate out_samples"));  /* the whole-image fill */
    free(ir);
    pf_program_free(p);
}

/* Compute-at: the producer lives in a scratch window allocated per consumer tile, inside the
 * x-tile loop (an on-demand producer: a window of its downsampled storage), and the tiles run in
 * parallel as one loop. Results equal the interpreter's, with unzeroed allocations NaN. */
static void check_app_at(const char *app, const char *sched, pf_image *in)
{
    pf_program *p = cg_load_app(app);
    char *ir = cg_ir_dump(p, sched);
    const char *alloc = strstr(ir, "allocate temp"), *xo = strstr(ir, "for xo");
    CU_ASSERT_PTR_NOT_NULL_FATAL(alloc);  /* temp, or temp_grid when stored downsampled */
    CU_ASSERT(strstr(alloc, "] window temp") == strchr(alloc, ']'));
    CU_ASSERT(xo && xo < alloc);
    CU_ASSERT_PTR_NULL(strstr(ir, "for phase"));
    free(ir);
    expect_same_as_interp(p, sched, in);
    pf_program_free(p);
}

/* An on-demand producer computed at its consumer computes the upper neighbour sample a linear
 * read needs only where samples are more than one apart: under grid 4 1 1 not along the
 * channels (it computed two channels per consumer channel, 1.4x the time of the whole variant). */
static void test_compute_at_on_demand_span(void)
{
    pf_program *p = cg_load_app("blur");
    char *ir = cg_ir_dump(p, "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                             "loop_temp exec at loop_output\nloop_output exec tile 32 16\n");
    const char *tag = strstr(ir, "  // loop_temp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tag);
    CU_ASSERT(tag - ir > 6 && strncmp(tag - 6, " + 1))", 6) == 0);  /* channel c .. c + 1 */
    free(ir);
    pf_program_free(p);
}

static void test_compute_at_storage(void)
{
    pf_image *in = cg_synthetic(61, 70, 3, 11);
    check_app_at("blur", "loop_temp exec at loop_output vectorize 8\n"
                         "loop_output exec tile 32 16 vectorize 8 parallel\n", in);
    check_app_at("blur", "loop_temp exec at loop_output\nloop_output exec tile 32 16\n", in);
    check_app_at("blur", "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                         "loop_temp exec at loop_output vectorize 8\n"
                         "loop_output exec tile 32 16 vectorize 8 parallel\n", in);
    check_app_at("blur", "loop_temp grid 2 3 1 reconstruct on-demand nearest\n"
                         "loop_temp exec at loop_output\n"
                         "loop_output grid 2 2 1 reconstruct store linear\n"
                         "loop_output exec tile 5 3 parallel\n", in);
    /* temp over the interior only: the window starts zeroed in every tile */
    check_app_at("unsharp_mask", "loop_temp exec at loop_output vectorize 8\n"
                                 "loop_output exec tile 64 16 vectorize 8 parallel\n", in);
    check_app_at("unsharp_mask", "loop_temp exec at loop_output vectorize 8\n"
                                 "loop_output exec tile 7 5 vectorize 8 parallel\n", in);
    pf_image_free(in);
}

/* A store-mode grid stage tiled along x and y fills each tile on its own (lower_fill.c): its
 * samples and the next tiles' first sample column and row go to a window, the image is written
 * once per tile from it. Edges of tiles and of the image (extents that are not multiples of
 * the spacing or the tile), both reconstructions, stores grouped by stride (spacings 2 and 4)
 * and not (3, 5): the interpreter's result, and exactly the whole-image fill's. */
static void test_grid_fill_per_tile(void)
{
    static const char *const cases[] = {
        "loop_output grid 4 4 1 reconstruct store linear\n"
        "loop_output exec tile 3 2 vectorize 8 parallel\n",
        "loop_output grid 2 2 1 reconstruct store nearest\n"
        "loop_output exec tile 7 5 vectorize 4\n",
        "loop_output grid 3 5 1 reconstruct store linear\n"
        "loop_output exec tile 5 3 vectorize 8 parallel\n",
        "loop_output grid 1 3 1 reconstruct store linear\n"
        "loop_output exec tile 16 4 vectorize 8\n",
        "loop_output grid 5 2 1 reconstruct store nearest\n"
        "loop_output exec tile 64 64 parallel\n",
        "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
        "loop_output grid 4 4 1 reconstruct store linear\n"
        "loop_temp exec at loop_output vectorize 8\n"
        "loop_output exec tile 4 3 vectorize 8 parallel\n",
    };
    pf_image *imgs[3] = { cg_synthetic(61, 37, 3, 5), cg_synthetic(8, 9, 1, 6),
                          cg_synthetic(1, 1, 2, 7) };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pf_program *p = cg_load_app("blur");
        char *ir = cg_ir_dump(p, cases[i]);
        const char *win = strstr(ir, "allocate out_samples"), *xo = strstr(ir, "for xo");
        CU_ASSERT(win && xo && xo < win && strstr(win, "] window out_samples"));
        CU_ASSERT_PTR_NOT_NULL(strstr(ir, "out[fx"));          /* filled from the rows */
        CU_ASSERT_PTR_NULL(strstr(ir, "for fj"));              /* no whole-image pass */
        CU_ASSERT_PTR_NOT_NULL(strstr(ir, "{stream}"));
        free(ir);
        pf_error err;
        pf_schedule *s = pf_schedule_from_string(p, cases[i], &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        pf_plan *tiled = cg_plan(p, cases[i]);
        for (int k = 0; k < p->n_stages; k++)
            s->exec[k] = pf_exec_default();
        pf_plan *untiled = pf_plan_new(p, s, &tiled->target, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(untiled);
        pf_param_values pv;
        pf_params_init(&pv, p);
        for (int m = 0; m < 3; m++) {
            expect_plan_as_interp(p, tiled, imgs[m]);
            cg_run a, b;
            CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, tiled, PF_BACKEND_JIT, &imgs[m], 1, &a), 0);
            CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, untiled, PF_BACKEND_JIT, &imgs[m], 1, &b),
                                  0);
            CU_ASSERT(cg_max_abs_diff(a.out[0], b.out[0]) == 0);
            cg_run_free(&a);
            cg_run_free(&b);
        }
        pf_params_free(&pv);
        pf_plan_free(untiled);
        pf_plan_free(tiled);
        pf_schedule_delete(s);
        pf_program_free(p);
    }
    for (int m = 0; m < 3; m++)
        pf_image_free(imgs[m]);
}

/* Tiles recompute their halo, so `at` is refused for a stage that reads its own image (a
 * second computation of a pixel would see the first). */
static void test_compute_at_refuses_recomputation(void)
{
    static const char src[] =
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    image t[W, H];\n    image u[W, H];\n"
        "    for each (x, y) of t as st t[x, y] = in[x, y] + t[x, y] * 0.5;\n"
        "    for each (x, y) of u as su u[x, y] = t[x, y - 1] + t[x, y + 2];\n"
        "    for each (x, y) of out as so out[x, y] = u[x, y];\n"
        "}\n";
    pf_error err;
    pf_program *p = pf_compile_string("own.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_NULL(pf_schedule_from_string(p, "st exec at su\nsu exec tile 16 8\n", &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "may not read its own image"));
    pf_program_free(p);
}

/* Regressions found by the random schedules: a consumer stored downsampled (on demand) runs
 * over storage indices, so its tile is mapped to image coordinates before bounds inference
 * (the window held the wrong rows); an inlined stage read inside a vectorized body defines
 * uniform lets that the scalar emitter must see (LLVM emission failed). */
static void test_exec_regressions(void)
{
    pf_image *in = cg_synthetic(67, 45, 3, 13);
    pf_program *p = cg_load_app("bilateral_grid");
    expect_same_as_interp(p, "blur_y_loop exec at blur_x_loop\n"
                             "blur_x_loop grid 2 2 1 1 reconstruct on-demand linear\n"
                             "blur_x_loop exec tile 3 5 vectorize 8 parallel\n", in);
    pf_program_free(p);
    p = cg_load_app("bilateral_filter");
    expect_same_as_interp(p, "loop_kernel exec inline\nloop_pixels exec vectorize 8\n", in);
    pf_program_free(p);
    pf_image_free(in);
}

/* A consumer whose channel copy or importance map reads the producer's image whole cannot have
 * it computed per tile (the copy ran after the tiles and read channels no tile computed). */
static void test_compute_at_refuses_reference(void)
{
    pf_program *p = cg_load_app("blur");
    pf_error err;
    CU_ASSERT_PTR_NULL(pf_schedule_from_string(p, "loop_output channels 2\n"
                                                  "loop_temp exec at loop_output\n"
                                                  "loop_output exec tile 64 32\n", &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "reads temp whole"));
    CU_ASSERT_PTR_NULL(pf_schedule_from_string(p, "loop_output importance 0.3 0.01\n"
                                                  "loop_temp exec at loop_output\n"
                                                  "loop_output exec tile 64 32\n", &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "importance sampling reads temp whole"));
    pf_program_free(p);
}

/* The stage of p named `name`, or -1. */
static int stage_named(const pf_program *p, const char *name)
{
    for (int i = 0; i < p->n_stages; i++)
        if (strcmp(p->stages[i]->name, name) == 0)
            return i;
    return -1;
}

/* Stage s's vector width in the exact plan for a target of `lanes`-lane vectors. */
static int default_width(const pf_program *p, int lanes, int s)
{
    pf_error err;
    pf_plan_target t = { .vector_lanes = lanes };
    pf_plan *plan = pf_plan_new(p, NULL, &t, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    int w = plan->stages[s].exec.vectorize;
    pf_plan_free(plan);
    return w;
}

/* On a host that prefers 16-lane vectors, the default schedule gives them to a stage with
 * transcendental math inside a loop of its pixel body (the bilateral filter's exp per tap; a
 * helper's loop counts), and 8 lanes to the rest: the bilateral filter's table (an exp, but
 * not in a loop), blur's taps (a reduction without math), the median. Elsewhere all get 8. */
static void test_default_width(void)
{
    static const struct { const char *app, *stage; int wide, narrow; } cases[] = {
        { "bilateral_filter", "loop_pixels", 16, 8 }, { "bilateral_filter", "loop_kernel", 8, 8 },
        { "blur", "loop_temp", 8, 8 }, { "median", "loop_pixels", 8, 8 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pf_program *p = cg_load_app(cases[i].app);
        int s = stage_named(p, cases[i].stage);
        CU_ASSERT_FATAL(s >= 0);
        CU_ASSERT_EQUAL(default_width(p, 16, s), cases[i].wide);
        CU_ASSERT_EQUAL(default_width(p, 8, s), cases[i].narrow);
        pf_program_free(p);
    }
    pf_error err;
    pf_program *p = pf_compile_string(
        "helper.pf",
        "float acc(float v) { float s = 0.0; for (i) of 0 .. 3 { s += log(v + float(i)); }\n"
        "  return s; }\n"
        "pipeline h(image in[W, H]) -> (image out[W, H]) {\n"
        "  for each (x, y) of out as s out[x, y] = acc(in[x, y]) + sqrt(in[x, y]);\n}\n", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(default_width(p, 16, 0), 16);
    pf_program_free(p);
}

/* The default schedule computes an exact stage per tile of its only consumer when that
 * consumer reads it through a small stencil (at most 16 away from its own x and y), also in
 * chains (unsharp mask: temp per tile of mask, mask per tile of the combination); not for
 * other reads. */
static void test_default_schedule_fuses_stencils(void)
{
    pf_program *p = cg_load_app("blur");
    char *ir = cg_ir_dump(p, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "] window temp_origin0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "parallel for yo"));
    /* The bounds pass sees through the tile's clamped bounds: the channel loop is not split,
     * the consumer's x not either, and every `x >= h` / `y >= h` test folds in its part (it
     * split the nest into 27 parts with unfolded tests, 2.7x the compile time of root). */
    int loops = 0;
    for (const char *q = ir; (q = strstr(q, "for ")) != NULL; q++)
        loops++;
    CU_ASSERT(loops <= 10);
    CU_ASSERT_PTR_NULL(strstr(ir, " if ("));
    free(ir);
    ir = cg_ir_dump(p, "loop_output exec vectorize 8\n");  /* the consumer set: no fusion */
    CU_ASSERT_PTR_NULL(strstr(ir, "window"));
    free(ir);
    /* The paper's variant: the horizontal pass, sampled on a grid and reconstructed on
     * demand, is computed per tile of the vertical pass too (its samples in a window), and
     * that stage's tiles are the fill's (per-tile fill: out_samples, out_rows). */
    ir = cg_ir_dump(p, "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                       "loop_output grid 4 4 1 reconstruct store linear\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "] window temp_grid_origin0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "] window out_rows_origin0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "step 512"));  /* 2048 pixels of x at spacing 4 */
    free(ir);
    pf_program_free(p);
    p = cg_load_app("unsharp_mask");
    ir = cg_ir_dump(p, "");
    const char *mask = strstr(ir, "] window mask_origin0"), *temp = strstr(ir, "] window temp_origin0");
    CU_ASSERT(mask && temp && mask < temp);  /* temp's window inside mask's tiles */
    free(ir);
    pf_program_free(p);
    static const char src[] =
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    image a[W, H];\n    image b[W, H];\n    image c[W, H];\n    image d[W, H];\n"
        "    for each (x, y) of a as sa a[x, y] = in[x, y] * 2.0;\n"
        "    for each (x, y) of b as sb b[x, y] = sum(a[x + k, y - 1], k = -3 .. 3);\n"
        "    for each (x, y) of c as sc c[x, y] = b[x, y + 1] + b[2 * x, y];\n"
        "    for each (x, y) of d as sd d[x, y] = c[x, y + 17];\n"
        "    for each (x, y) of out as so out[x, y] = d[x - 1, y] + d[x, y];\n"
        "}\n";
    pf_error err;
    p = pf_compile_string("fuse.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ir = cg_ir_dump(p, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "] window a_origin0"));  /* a stencil of b */
    CU_ASSERT_PTR_NULL(strstr(ir, "] window b_origin0"));      /* c reads b[2 * x, y] */
    CU_ASSERT_PTR_NULL(strstr(ir, "] window c_origin0"));      /* d reads 17 rows away */
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "] window d_origin0"));  /* a stencil of out */
    free(ir);
    pf_image *in = cg_synthetic(300, 150, 1, 3);
    expect_same_as_interp(p, "", in);
    pf_image_free(in);
    pf_program_free(p);
}

/* An internal image whose padded rows make its element offsets reach 2^31 (1024 floats pad to
 * 1040 per row; 2^21 - 1 rows): the run fails before allocating it, as an allocation failure
 * would, instead of letting 32-bit vector offsets (gathers of internal images) wrap. The same
 * program with a smaller intermediate runs and matches the interpreter. */
static void test_oversized_intermediate_fails_cleanly(void)
{
    static const char *srcs[2] = {
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    image t[1024, 2097151];\n"
        "    for each (x, y) of t as st t[x, y] = float(x);\n"
        "    for each (x, y) of out as so out[x, y] = t[(x * 7) % 1024, y] + in[x, y];\n}\n",
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    image t[1024, 64];\n"
        "    for each (x, y) of t as st t[x, y] = float(x);\n"
        "    for each (x, y) of out as so out[x, y] = t[(x * 7) % 1024, y] + in[x, y];\n}\n",
    };
    pf_image *in = cg_synthetic(40, 9, 1, 7u);
    for (int i = 0; i < 2; i++) {
        pf_error err;
        pf_program *p = pf_compile_string("big.pf", srcs[i], &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        pf_param_values pv;
        pf_params_init(&pv, p);
        pf_compile_options o = { 0 };
        pf_variant *v = cg_compile(p, &pv, NULL, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        cg_run got;
        int rc = cg_run_variant(v, p, &pv, &in, 1, &got);
        CU_ASSERT(i == 0 ? rc != 0 : rc == 0);
        if (i == 1) {
            cg_run ref;
            CU_ASSERT_EQUAL_FATAL(cg_run_backend(p, &pv, PF_BACKEND_INTERP, false, &in, 1, &ref),
                                  0);
            CU_ASSERT(cg_max_abs_diff(ref.out[0], got.out[0]) == 0.0);
            cg_run_free(&ref);
        }
        cg_run_free(&got);
        pf_variant_free(v);
        pf_params_free(&pv);
        pf_program_free(p);
    }
    pf_image_free(in);
}

/* Rows of a multiple of 1024 floats get padded (no 4 KiB row stride): the JIT and the C
 * backend still equal the interpreter on such an image, exact and perforated on demand. */
static void test_page_wide_rows(void)
{
    pf_image *in = cg_synthetic(1024, 21, 3, 5);
    pf_program *p = cg_load_app("blur");
    pf_param_values pv;
    pf_params_init(&pv, p);
    cg_run ref, got;
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(p, &pv, PF_BACKEND_INTERP, false, &in, 1, &ref), 0);
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(p, &pv, PF_BACKEND_C, false, &in, 1, &got), 0);
    CU_ASSERT(cg_max_abs_diff(ref.out[0], got.out[0]) <= 1e-5);
    cg_run_free(&got);
    cg_run_free(&ref);
    pf_params_free(&pv);
    expect_same_as_interp(p, "", in);
    expect_same_as_interp(p, "loop_temp grid 1 4 1 reconstruct on-demand linear\n", in);
    pf_program_free(p);
    pf_image_free(in);
}

/* ---- `at C slide`: rows computed in C's row loop, stored in a folded window ---- */

/* The producer's window is allocated per x tile with its rows folded (17 rows read per row of
 * loop_output: 32), `next` starts each tile, and the producer's loops run inside the
 * consumer's row loop, before its vectorized x loop, followed by the advance of `next`. */
static void test_slide_ir(void)
{
    pf_program *p = cg_load_app("blur");
    char *ir = cg_ir_dump(p, "loop_temp exec at loop_output slide\n"
                             "loop_output exec tile 128 64 vectorize 8 parallel\n");
    const char *yo = strstr(ir, "parallel for yo"), *xo = strstr(ir, "for xo");
    const char *alloc = strstr(ir, "allocate temp[");
    CU_ASSERT_PTR_NOT_NULL_FATAL(alloc);
    const char *eol = strchr(alloc, '\n'), *fold = strstr(alloc, "folded (index i at i & 31)");
    CU_ASSERT(yo && xo && yo < xo && xo < alloc);
    CU_ASSERT(fold && fold < eol && strstr(alloc, "temp_size1") < fold);
    CU_ASSERT(strncmp(strstr(alloc, "temp_origin1"), "temp_origin1", 12) == 0);
    const char *next = strstr(alloc, "var loop_temp_next");
    CU_ASSERT_PTR_NOT_NULL_FATAL(next);
    const char *row = strstr(next, "for y_"), *stage = strstr(next, "// stage loop_temp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_PTR_NOT_NULL_FATAL(stage);
    const char *lo = strstr(row, "let loop_temp_row_lo"), *x = strstr(row, "vectorized for<8> x");
    const char *advance = strstr(stage, "loop_temp_next");
    CU_ASSERT(lo && row < lo && lo < stage && stage < advance && advance < x);
    CU_ASSERT(lo && strncmp(strchr(lo, '=') + 2, "max(loop_temp_next", 18) == 0);  /* no recompute */
    /* the producer is nowhere computed outside the consumer's rows */
    CU_ASSERT(strstr(ir, "// stage loop_temp") == stage);
    free(ir);
    /* without slide: the whole region per tile, no fold */
    ir = cg_ir_dump(p, "loop_temp exec at loop_output\nloop_output exec tile 128 64\n");
    CU_ASSERT_PTR_NULL(strstr(ir, "folded"));
    CU_ASSERT_PTR_NULL(strstr(ir, "loop_temp_next"));
    free(ir);
    pf_program_free(p);
}

/* The C backend under a schedule gives the interpreter's result. */
static void expect_c_same_as_interp(const pf_program *p, const char *sched, pf_image *in)
{
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_plan *plan = cg_plan(p, sched);
    cg_run ref, got;
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, plan, PF_BACKEND_INTERP, &in, 1, &ref), 0);
    pf_compile_options o = { 0 };
    o.backend = PF_BACKEND_C;
    pf_variant *v = cg_compile(p, &pv, plan, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    pf_rt_set_poison(true);
    CU_ASSERT_EQUAL_FATAL(cg_run_variant(v, p, &pv, &in, 1, &got), 0);
    pf_rt_set_poison(false);
    CU_ASSERT(cg_max_abs_diff(ref.out[0], got.out[0]) <= 1e-5);
    cg_run_free(&got);
    cg_run_free(&ref);
    pf_variant_free(v);
    pf_plan_free(plan);
    pf_params_free(&pv);
}

static void check_slide(const char *app, const char *sched, pf_image *in, bool c_backend)
{
    pf_program *p = cg_load_app(app);
    expect_same_as_interp(p, sched, in);
    if (c_backend)
        expect_c_same_as_interp(p, sched, in);
    pf_program_free(p);
}

/* Results equal the interpreter's (unzeroed memory poisoned) for blur and unsharp mask (whose
 * temp is computed over the interior only: rows the window reuses are zeroed first) on a photo
 * and odd sizes, including images and tiles shorter than the fold (32 rows), with and without
 * vectorize/parallel, the producer with its own directives, chains (unsharp mask's mask per
 * tile of out, temp sliding in mask's rows; both sliding: a window of one row). */
static void test_slide_results(void)
{
    static const char *const consumer[] = {
        "tile 128 64 vectorize 8 parallel", "tile 128 64", "tile 16 4 vectorize 4",
        "tile 7 5 parallel unroll 2", "tile 1024 3 vectorize 16 parallel", "tile 1 1",
    };
    static const char *const producer[] = { "", " vectorize 8", " tile 32 2 vectorize 4 unroll 2" };
    pf_image *imgs[4] = { cg_load_photo("natural_29_256x192.png", 3), cg_synthetic(45, 29, 3, 5),
                          cg_synthetic(7, 3, 3, 6), cg_synthetic(1, 1, 3, 7) };
    char sched[256];
    for (int a = 0; a < 2; a++)
        for (int m = 0; m < 4; m++)
            for (int k = 0; k < 6; k++) {
                snprintf(sched, sizeof sched, "loop_temp exec at loop_output slide%s\n"
                         "loop_output exec %s\n", producer[(m + k) % 3], consumer[k]);
                check_slide(a ? "unsharp_mask" : "blur", sched, imgs[m], m == 1 && k < 2);
            }
    check_slide("unsharp_mask", "loop_temp exec at loop_output slide vectorize 8\n"
                                "loop_output exec at mask_combination_loop tile 64 8\n"
                                "mask_combination_loop exec tile 64 16 vectorize 8 parallel\n",
                imgs[0], false);
    check_slide("unsharp_mask", "loop_temp exec at loop_output slide\n"
                                "loop_output exec at mask_combination_loop slide tile 16 4\n"
                                "mask_combination_loop exec tile 32 8 vectorize 8 parallel\n",
                imgs[1], true);
    for (int m = 0; m < 4; m++)
        pf_image_free(imgs[m]);
}

/* Reads of a folded window that are not one contiguous row: gathers (x through % and /),
 * strided reads (2x), a constant boundary above and below the image, a window of 4 rows. */
static void test_slide_gathers(void)
{
    static const char src[] =
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    image t[W, H] boundary constant(0.5);\n"
        "    for each (x, y) of t as st t[x, y] = in[x, y] * 2.0 + float(y);\n"
        "    for each (x, y) of out as so\n"
        "        out[x, y] = t[(x * 3) % W, y - 1] + t[W - 1 - x, y + 2] + t[x / 2, y]\n"
        "                  + t[2 * x, y + 1] + t[2 * x + 1, y - 1];\n"
        "}\n";
    static const char *const scheds[] = {
        "st exec at so slide\nso exec tile 16 8 vectorize 8 parallel\n",
        "st exec at so slide vectorize 4\nso exec tile 64 3 vectorize 16\n",
        "st exec at so slide\nso exec tile 5 2\n",
    };
    pf_error err;
    pf_program *p = pf_compile_string("gathers.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    char *ir = cg_ir_dump(p, scheds[0]);
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "folded (index i at i & 3)"));
    free(ir);
    pf_image *imgs[3] = { cg_synthetic(45, 29, 1, 8), cg_synthetic(64, 9, 1, 9),
                          cg_synthetic(1, 1, 1, 10) };
    for (int i = 0; i < 3; i++) {
        for (int m = 0; m < 3; m++)
            expect_same_as_interp(p, scheds[i], imgs[m]);
        if (i == 0)
            expect_c_same_as_interp(p, scheds[i], imgs[0]);
    }
    for (int m = 0; m < 3; m++)
        pf_image_free(imgs[m]);
    pf_program_free(p);
}

/* A schedule built in code that skips the text's validation is refused when it is planned
 * (the plan is the one place schedules are validated, and lowering only ever sees plans): a
 * producer with a mirror boundary, reads that are not a window of rows. */
static void test_slide_unvalidated(void)
{
    static const char src[] =
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    image a[W, H] boundary mirror;\n    image b[W, H];\n"
        "    for each (x, y) of a as sa a[x, y] = in[x, y];\n"
        "    for each (x, y) of b as sb b[x, y] = a[x, y - 1] + a[x, y + 1];\n"
        "    for each (x, y) of out as so out[x, y] = b[x, 2 * y] + b[x, 0];\n"
        "}\n";
    static const struct { const char *sched, *msg; } cases[] = {
        { "sa exec at sb\nsb exec tile 8 8\n", "needs a's boundary clamp or constant" },
        { "sb exec at so\nso exec tile 8 8\n", "sb: 'at so slide' needs every read of b" },
    };
    pf_error err;
    pf_program *p = pf_compile_string("unvalidated.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_param_values pv;
    pf_params_init(&pv, p);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pf_schedule *s = pf_schedule_from_string(p, cases[i].sched, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        s->exec[i].slide = true;  /* sa (0) at sb, sb (1) at so */
        pf_plan *plan = pf_plan_new(p, s, NULL, &err);
        CU_ASSERT_PTR_NULL(plan);
        if (!strstr(err.msg, cases[i].msg))
            fprintf(stderr, "\n    %s\n", err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].msg));
        pf_plan_free(plan);
        pf_schedule_delete(s);
    }
    pf_params_free(&pv);
    pf_program_free(p);
}

/* ---- random legal execution genes ---- */

static unsigned next(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffff;
}

/* Reorders are drawn from their own sequence, so that the other draws stay those of the
 * schedules this test drew before reorder existed. */
static unsigned order_seed;

/* A random legal reorder (innermost first), by construction: the variables shuffled (x first
 * when vectorized), then each tile loop inserted somewhere outside its variable's loop. */
static void random_order(int k, unsigned *seed, pf_exec_gene *g)
{
    int *o = g->order, n = k;
    for (int d = 0; d < k; d++)
        o[d] = d;
    for (int i = k - 1; i > 0; i--) {
        int j = (int)(next(seed) % (unsigned)(i + 1)), t = o[i];
        o[i] = o[j];
        o[j] = t;
    }
    for (int i = 0; g->vectorize > 1 && i < k; i++)
        if (o[i] == 0) {
            o[i] = o[0];
            o[0] = 0;
        }
    for (int d = 0; d < 2; d++) {
        if (g->tile[d] <= 0)
            continue;
        int at = 0;
        while (o[at] != d)
            at++;
        at += 1 + (int)(next(seed) % (unsigned)(n - at));  /* in (pos(d), n] */
        memmove(o + at + 1, o + at, sizeof *o * (size_t)(n - at));
        o[at] = PF_EXEC_TILE_LOOP(d);
        n++;
    }
    g->n_order = n;
}

static void random_exec(const pf_program *prog, int stage, unsigned *seed, pf_exec_gene *g)
{
    static const int tiles[] = { 0, 0, 1, 7, 16, 64 };
    static const int widths[] = { 0, 4, 8, 16 };
    static const int unrolls[] = { 0, 0, 2, 4 };
    *g = pf_exec_default();
    g->set = true;
    const pf_stage *st = prog->stages[stage];
    g->tile[0] = tiles[next(seed) % 6];
    if (st->n_vars >= 2 && g->tile[0])
        g->tile[1] = tiles[next(seed) % 6];
    if (!st->serial)
        g->vectorize = widths[next(seed) % 4];
    g->parallel = next(seed) % 2;  /* serial stages: bands (pass_bands) */
    g->unroll = unrolls[next(seed) % 4];
    if (!st->serial && st->n_vars >= 2 && next(&order_seed) % 2)
        random_order(st->n_vars, &order_seed, g);
}

/* The order grouped as producers computed at the stage's tiles need (pf_exec_tile_order_ok):
 * x and y, then the tile loops, then further variables, each group in its drawn order (still
 * legal: tile loops stay outside their loops, x first stays first). */
static void group_order(pf_exec_gene *g)
{
    int o[PF_EXEC_MAX_ORDER], n = 0;
    for (int phase = 0; phase < 3; phase++)
        for (int i = 0; i < g->n_order; i++) {
            int id = g->order[i];
            if ((id >= PF_EXEC_TILE_LOOP(0) ? 1 : id >= 2 ? 2 : 0) == phase)
                o[n++] = id;
        }
    memcpy(g->order, o, sizeof *o * (size_t)n);
}

static int validate_in(const pf_program *prog, const pf_schedule *s, int i)
{
    const pf_exec_gene *g = &s->exec[i];
    const pf_exec_gene *c = g->at >= 0 ? &s->exec[g->at] : NULL;
    const pf_approx_gene *ca = c ? &s->approx[prog->stages[g->at]->loop_id] : NULL;
    return pf_exec_validate(prog, i, g, &s->approx[prog->stages[i]->loop_id], c, ca, NULL);
}

/* Draws genes (half the non-serial stages with a random reorder) until the schedule
 * validates (at most a few tries per stage), then computes about a third of the stages that
 * have a sole consumer at it (tiling the consumer when it is not, and giving it a random order
 * of the shape `at` needs half the time) and inlines some of the rest; placements that turn
 * out illegal are undone. */
static void random_schedule(const pf_program *prog, unsigned *seed, pf_schedule *s)
{
    static const int tiles[] = { 1, 7, 16, 64 };
    for (int i = 0; i < prog->n_stages; i++) {
        for (int tries = 0; tries < 20; tries++) {
            random_exec(prog, i, seed, &s->exec[i]);
            if (validate_in(prog, s, i) == 0)
                break;
            s->exec[i] = pf_exec_default();
        }
    }
    for (int i = 0; i < prog->n_stages; i++) {
        int c = pf_exec_sole_consumer(prog, i), r = (int)(next(seed) % 6);
        if (c < 0 || r > 2)
            continue;
        s->exec[i].at = r == 2 ? PF_EXEC_INLINE : c;
        s->exec[i].slide = r < 2 && next(seed) % 2;
        if (r < 2 && s->exec[c].tile[1] == 0) {
            s->exec[c].tile[0] = tiles[next(seed) % 4];
            s->exec[c].tile[1] = tiles[next(seed) % 4];
            s->exec[c].n_order = 0;  /* it listed no tile loops */
        }
        if (r < 2 && !prog->stages[c]->serial && next(&order_seed) % 2)
            random_order(prog->stages[c]->n_vars, &order_seed, &s->exec[c]);
        if (r < 2)  /* so that `at` is legal: tile loops outside x and y, further variables
                       outside the tiles */
            group_order(&s->exec[c]);
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < prog->n_stages; i++)
            if (validate_in(prog, s, i) != 0) {
                s->exec[i].slide = false;  /* first without slide, then not at all */
                if (validate_in(prog, s, i) != 0)
                    s->exec[i].at = -1;
            }
}

static int n_placed;  /* stages computed at a consumer or inlined, over all random schedules */
static int n_slid;    /* of them, computed at a consumer with `slide` */
static int n_reordered, n_reordered_at;  /* stages reordered; of them, consumers of `at` */

static bool reordered(const pf_exec_gene *g)
{
    pf_exec_gene d = *g;
    d.n_order = 0;
    return !pf_exec_equal(g, &d);
}

static void check_app(const char *app, const char *approx, int n_schedules, unsigned seed,
                      pf_image *in)
{
    pf_program *prog = cg_load_app(app);
    pf_error err;
    order_seed = seed ^ 0x5bd1e995u;
    pf_schedule *base = pf_schedule_from_string(prog, approx, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(base);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_plan *base_plan = cg_plan(prog, approx);  /* the execution genes change no result */
    cg_run ref;
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(prog, &pv, base_plan, PF_BACKEND_INTERP, &in, 1, &ref),
                          0);
    pf_plan_free(base_plan);
    for (int k = 0; k < n_schedules; k++) {
        pf_schedule s;
        pf_schedule_copy(&s, base);
        random_schedule(prog, &seed, &s);
        pf_plan_target host = pf_host_plan_target();
        pf_plan *plan = pf_plan_new(prog, &s, &host, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
        for (int i = 0; i < prog->n_stages; i++) {
            const pf_exec_gene *g = &s.exec[i];
            n_placed += g->at != -1;
            n_slid += g->slide;
            n_reordered += reordered(g);
            n_reordered_at += g->at >= 0 && reordered(&s.exec[g->at]);
        }
        cg_run got;
        pf_rt_set_poison(true);  /* a read of an element nothing wrote gives NaN */
        int rc = cg_run_plan(prog, &pv, plan, PF_BACKEND_JIT, &in, 1, &got);
        pf_rt_set_poison(false);
        pf_plan_free(plan);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc == 0) {
            double d = cg_max_abs_diff(ref.out[0], got.out[0]);
            if (d > 1e-5) {
                pf_strbuf sb;
                pf_sb_init(&sb);
                pf_schedule_print(prog, &s, &sb);
                fprintf(stderr, "\n    %s differs by %g under:\n%s", app, d, pf_sb_str(&sb));
                pf_sb_free(&sb);
            }
            CU_ASSERT(d <= 1e-5);
            cg_run_free(&got);
        }
        pf_schedule_free(&s);
    }
    cg_run_free(&ref);
    pf_schedule_delete(base);
    pf_params_free(&pv);
    pf_program_free(prog);
}

static void test_random_exec_schedules_keep_results(void)
{
    pf_image *photo = cg_load_photo("natural_29_256x192.png", 3);
    pf_image *odd = cg_synthetic(61, 37, 3, 9);
    static const struct { const char *app, *approx; } apps[] = {
        { "blur", "" }, { "unsharp_mask", "" }, { "demosaic", "" }, { "bilateral_grid", "" },
        { "bilateral_filter", "" }, { "median", "" }, { "artistic_blur", "" },
        { "blur", "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                  "loop_output grid 4 4 1 reconstruct store linear\n" },
        { "blur", "loop_temp grid 2 1 1 channels 1 reconstruct store nearest\n"
                  "loop_output importance 0.4 0.02\n" },
        { "blur", "loop_temp grid 2 1 1 channels 1 reconstruct on-demand nearest\n" },
        { "median", "median_y_loop step 2\nloop_pixels adaptive 2 0.3\n" },
        { "bilateral_grid", "blur_x_loop grid 2 2 1 1 reconstruct on-demand linear\n" },
    };
    for (size_t i = 0; i < sizeof apps / sizeof *apps; i++) {
        bool slow = strcmp(apps[i].app, "artistic_blur") == 0 ||
                    strcmp(apps[i].app, "median") == 0;
        check_app(apps[i].app, apps[i].approx, slow ? 3 : 6, 1234u + (unsigned)i,
                  slow ? odd : photo);
    }
    CU_ASSERT(n_placed >= 10);
    CU_ASSERT(n_slid >= 5);
    CU_ASSERT(n_reordered >= 20);
    CU_ASSERT(n_reordered_at >= 4);
    pf_image_free(odd);
    pf_image_free(photo);
}

PF_TEST_SUITE(codegen_exec, PF_TEST(test_directives_shape_the_loop_nest), PF_TEST(test_inline),
              PF_TEST(test_reorder_shapes_the_loop_nest), PF_TEST(test_reorder_keeps_results),
              PF_TEST(test_compute_at_storage), PF_TEST(test_compute_at_on_demand_span),
              PF_TEST(test_grid_fill_per_tile),
              PF_TEST(test_compute_at_refuses_reference),
              PF_TEST(test_compute_at_refuses_recomputation), PF_TEST(test_exec_regressions),
              PF_TEST(test_default_schedule_fuses_stencils),
              PF_TEST(test_default_width), PF_TEST(test_page_wide_rows),
              PF_TEST(test_oversized_intermediate_fails_cleanly), PF_TEST(test_slide_ir),
              PF_TEST(test_slide_results), PF_TEST(test_slide_gathers),
              PF_TEST(test_slide_unvalidated),
              PF_TEST(test_random_exec_schedules_keep_results))
