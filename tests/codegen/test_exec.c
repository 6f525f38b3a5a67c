/* Execution schedules (docs/schedule.md, "Execution"): each directive changes the loop nest as
 * documented (checked on IR dumps), and no legal schedule changes a result: a property test
 * draws random legal execution genes (fixed seed) for every app, alone and on top of
 * approximations, and compares the JIT with the reference interpreter. */
#include "perforate/apply.h"
#include "perforate/exec.h"
#include "perforate/schedule.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The JIT under schedule s gives the interpreter's result (same approximations) on `in`. */
static void expect_same_as_interp(const pf_program *p, const pf_schedule *s, pf_image *in)
{
    pf_param_values pv;
    pf_params_init(&pv, p);
    cg_run ref, got;
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(p, &pv, PF_BACKEND_INTERP, false, &in, 1, &ref), 0);
    CU_ASSERT_EQUAL_FATAL(cg_run_sched(p, &pv, s, &in, 1, &got), 0);
    CU_ASSERT(cg_max_abs_diff(ref.out[0], got.out[0]) <= 1e-5);
    cg_run_free(&ref);
    cg_run_free(&got);
    pf_params_free(&pv);
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
    pf_schedule *s = pf_schedule_from_string(p, "gray exec inline\nscale exec inline\n", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    pf_image *in = cg_synthetic(29, 17, 3, 4);
    expect_same_as_interp(p, s, in);
    /* a stage with more than one assignment, or an output, cannot be inlined */
    CU_ASSERT_PTR_NULL(pf_schedule_from_string(p, "final exec inline\n", &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'inline' needs an intermediate image"));
    pf_schedule_delete(s);
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

/* Compute-at with a parallel consumer: neighbouring tiles share the producer's halo rows, so
 * the tiles run in two parallel phases (even, then odd) and never at the same time as a
 * neighbour; a serial consumer keeps one loop. Both give the interpreter's result. */
static void check_compute_at(const char *app, const char *sched, bool phased, pf_image *in)
{
    pf_program *p = cg_load_app(app);
    char *ir = cg_ir_dump(p, sched);
    CU_ASSERT_EQUAL(strstr(ir, "for phase") != NULL, phased);
    CU_ASSERT_EQUAL(strstr(ir, "parallel for yo") != NULL, phased);
    if (phased) {
        const char *ph = strstr(ir, "for phase"), *yo = strstr(ir, "parallel for yo");
        CU_ASSERT(ph && yo && ph < yo);  /* the phases outside the parallel tile loop */
    }
    free(ir);
    pf_error err;
    pf_schedule *s = pf_schedule_from_string(p, sched, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    expect_same_as_interp(p, s, in);
    pf_schedule_delete(s);
    pf_program_free(p);
}

static void test_compute_at_phases(void)
{
    pf_image *in = cg_synthetic(61, 70, 3, 11);
    check_compute_at("blur", "loop_temp exec at loop_output vectorize 8\n"
                             "loop_output exec tile 32 16 vectorize 8 parallel\n", true, in);
    check_compute_at("blur", "loop_temp exec at loop_output\n"
                             "loop_output exec tile 32 16\n", false, in);
    check_compute_at("unsharp_mask", "loop_temp exec at loop_output vectorize 8\n"
                                     "loop_output exec tile 64 16 vectorize 8 parallel\n",
                     true, in);
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
    pf_error err;
    pf_schedule *s = pf_schedule_from_string(p, "", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    expect_same_as_interp(p, s, in);
    pf_schedule_delete(s);
    s = pf_schedule_from_string(p, "loop_temp grid 1 4 1 reconstruct on-demand linear\n", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    expect_same_as_interp(p, s, in);
    pf_schedule_delete(s);
    pf_program_free(p);
    pf_image_free(in);
}

/* ---- random legal execution genes ---- */

static unsigned next(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffff;
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
    if (!st->serial) {
        g->vectorize = widths[next(seed) % 4];
        g->parallel = next(seed) % 2;
    }
    g->unroll = unrolls[next(seed) % 4];
}

/* Draws genes until the schedule validates (at most a few tries per stage). */
static void random_schedule(const pf_program *prog, unsigned *seed, pf_schedule *s)
{
    pf_error err;
    for (int i = 0; i < prog->n_stages; i++) {
        for (int tries = 0; tries < 20; tries++) {
            random_exec(prog, i, seed, &s->exec[i]);
            if (pf_exec_validate(prog, i, &s->exec[i], &s->approx[prog->stages[i]->loop_id],
                                 NULL, &err) == 0)
                break;
            s->exec[i] = pf_exec_default();
        }
    }
}

static void check_app(const char *app, const char *approx, int n_schedules, unsigned seed,
                      pf_image *in)
{
    pf_program *prog = cg_load_app(app);
    pf_error err;
    pf_schedule *base = pf_schedule_from_string(prog, approx, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(base);
    CU_ASSERT_EQUAL_FATAL(pf_schedule_apply(prog, base, &err), 0);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    cg_run ref;
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(prog, &pv, PF_BACKEND_INTERP, false, &in, 1, &ref), 0);
    for (int k = 0; k < n_schedules; k++) {
        pf_schedule s;
        pf_schedule_copy(&s, base);
        random_schedule(prog, &seed, &s);
        CU_ASSERT_EQUAL(pf_schedule_validate(prog, &s, &err), 0);
        cg_run got;
        int rc = cg_run_sched(prog, &pv, &s, &in, 1, &got);
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
    pf_image_free(odd);
    pf_image_free(photo);
}

PF_TEST_SUITE(codegen_exec, PF_TEST(test_directives_shape_the_loop_nest), PF_TEST(test_inline),
              PF_TEST(test_compute_at_phases), PF_TEST(test_page_wide_rows),
              PF_TEST(test_random_exec_schedules_keep_results))
