/* Golden files of the plan and the lowered loop IR (what `perfora run --dump plan` and
 * `--dump lower` print) for the paper's blur variant and one schedule per directive, under a
 * fixed target (8-lane vectors, so the files do not depend on the host). A change to either is
 * a change to what perfora builds: review the diff, then rewrite the files with
 *     PF_GOLDEN_WRITE=1 build/tests/test_codegen codegen_golden
 * and commit them with the change that explains them. */
#include "base/fileio.h"
#include "base/strbuf.h"
#include "codegen/lower.h"
#include "perforate/plan.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct golden {
    const char *name, *app, *schedule;  /* schedule NULL: the file apps/NAME.sched */
} golden;

static const golden cases[] = {
    { "blur_paper", "blur", NULL },
    { "exact", "blur", "" },
    /* approximation directives */
    { "grid_store", "blur", "loop_output grid 2 4 1 reconstruct store nearest\n" },
    { "grid_on_demand", "blur", "loop_temp grid 4 1 1 reconstruct on-demand linear\n" },
    { "adaptive", "blur", "loop_output adaptive 3 0.4 reconstruct store gaussian-sv 0.9\n" },
    { "importance", "blur", "loop_output importance 0.3 0.02 reconstruct store gaussian 1.5\n" },
    { "channels", "blur", "loop_output channels 1\n" },
    { "stage_step", "blur", "loop_temp step 2\n" },
    { "loop_first", "median", "median_y_loop first 0.5\n" },
    { "loop_last", "median", "median_x_loop last 0.25\n" },
    { "loop_random", "artistic_blur", "loop_u random 0.5\n" },
    /* execution directives */
    { "root_tile_vectorize_parallel", "blur",
      "loop_temp exec root\nloop_output exec tile 64 16 vectorize 8 parallel\n" },
    { "reorder_unroll", "blur", "loop_output exec tile 32 16 reorder x y c xo yo unroll 2\n" },
    { "at", "blur", "loop_temp exec at loop_output\nloop_output exec tile 64 32\n" },
    { "at_slide", "blur", "loop_temp exec at loop_output slide\nloop_output exec tile 128 64\n" },
    { "inline", "bilateral_filter", "loop_kernel exec inline\n" },
};

static char *read_golden(const char *name, const char *ext)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/codegen/golden/%s.%s", name, ext);
    char *text = NULL;
    pf_error err;
    if (pf_read_file(pf_test_src(rel), 1 << 24, &text, NULL, &err) != 0)
        return NULL;
    return text;
}

static bool writing(void)
{
    const char *w = getenv("PF_GOLDEN_WRITE");
    return w && *w && strcmp(w, "0") != 0;
}

/* Compares text with the golden file (or writes it); prints the first differing line. */
static void check_text(const char *name, const char *ext, const char *text)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/codegen/golden/%s.%s", name, ext);
    if (writing()) {
        pf_error err;
        CU_ASSERT_EQUAL(pf_write_file_atomic(pf_test_src(rel), text, strlen(text), &err), 0);
        return;
    }
    char *want = read_golden(name, ext);
    if (!want)
        fprintf(stderr, "\n    %s is missing (PF_GOLDEN_WRITE=1 writes it)\n", rel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    if (strcmp(want, text) != 0) {
        int line = 1;
        const char *a = want, *b = text;
        while (*a && *a == *b) {
            line += *a == '\n';
            a++, b++;
        }
        fprintf(stderr, "\n    %s differs from line %d: now \"%.60s\"\n", rel, line, b);
    }
    CU_ASSERT_STRING_EQUAL(text, want);
    free(want);
}

static void check_case(const golden *g)
{
    pf_program *p = cg_load_app(g->app);
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_error err;
    pf_plan_target t = { .vector_lanes = 8 };
    char path[256];
    snprintf(path, sizeof path, "apps/%s.sched", g->name);
    pf_plan *plan = g->schedule ? pf_plan_parse(p, g->schedule, g->name, &t, &err)
                                : pf_plan_load(p, pf_test_src(path), &t, &err);
    if (!plan)
        fprintf(stderr, "\n    %s: %s\n", g->name, err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_plan_print(plan, &sb);
    check_text(g->name, "plan", pf_sb_str(&sb));
    pf_sb_clear(&sb);
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = pf_lower(&arena, p, &pv, plan, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ir_print_func(f, &sb);
    check_text(g->name, "lower", pf_sb_str(&sb));
    pf_sb_free(&sb);
    pf_arena_free(&arena);
    pf_plan_free(plan);
    pf_params_free(&pv);
    pf_program_free(p);
}

static void test_golden_plans_and_lowering(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i]);
    if (writing())
        printf("\n  wrote %zu plans and lowerings to tests/codegen/golden/",
               sizeof cases / sizeof *cases);
}

PF_TEST_SUITE(codegen_golden, PF_TEST(test_golden_plans_and_lowering))
