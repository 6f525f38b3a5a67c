/* Every pixel loop of a perforated variant that may run in parallel does (issue 28): the
 * final loop IR of every approximation kind (grid, adaptive, importance, channels; store and
 * on-demand; nearest, linear, gaussian, gaussian-sv) on every stage of every app, under the
 * default execution schedule (every stage parallel), has no store or runtime call outside a
 * parallel loop unless its loop nest carries a reason from the one table of
 * codegen/ir_audit.c. Also: the reasons themselves are found where they should be (a serial
 * execution gene, importance sampling's dithering), so the walk is not blind. */
#include "codegen/ir_audit.h"
#include "codegen/lower.h"
#include "codegen/passes.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <string.h>

static const char *const apps[] = { "blur", "unsharp_mask", "bilateral_filter",
                                    "bilateral_grid", "demosaic", "median", "artistic_blur",
                                    "mosaic" };

/* A gene for a stage of k variables: %s is replaced by "2 2 1 .." (k spacings). */
static const char *const genes[] = {
    "grid %s reconstruct store linear",
    "grid %s reconstruct store nearest",
    "grid %s reconstruct store gaussian 1",
    "grid %s reconstruct store gaussian-sv 1",
    "grid %s reconstruct on-demand linear",
    "grid %s reconstruct on-demand nearest",
    "grid %s channels 1 reconstruct store linear",
    "adaptive 2 0.5 reconstruct store nearest",
    "adaptive 2 0.5 reconstruct store gaussian 1",
    "adaptive 2 0.5 reconstruct store gaussian-sv 1",
    "importance 0.5 0.02 reconstruct store nearest",
    "importance 0.5 0.02 reconstruct store gaussian 1",
    "importance 0.5 0.02 reconstruct store gaussian-sv 1",
    "channels 1",
};
#define N_GENES (int)(sizeof genes / sizeof *genes)

typedef struct tally {
    int by_why[IR_SERIAL_COUNT];
    const char *app, *schedule;
} tally;

static void found(void *ctx, const ir_serial_nest *n)
{
    tally *t = ctx;
    t->by_why[n->why]++;
    if (!ir_serial_reason_of(n->why)->inherent && n->why != IR_SERIAL_NONE)
        fprintf(stderr, "\n%s, schedule \"%s\": stage %s: serial (%s)\n", t->app, t->schedule,
                n->stage, ir_serial_reason_of(n->why)->name);
    if (n->why == IR_SERIAL_NONE)
        fprintf(stderr, "\n%s, schedule \"%s\": stage %s: a pixel loop runs serially for no "
                "reason\n", t->app, t->schedule, n->stage);
}

/* The serial nests of prog under schedule (NULL: exact), lowered and through the passes as
 * pf_variant_build does; -1 when the schedule is refused for this program. */
static int audit(const pf_program *prog, const char *app, const char *schedule, tally *t)
{
    pf_error err;
    pf_plan_target target = pf_host_plan_target();
    pf_plan *plan = schedule ? pf_plan_parse(prog, schedule, "<test>", &target, &err)
                             : pf_plan_new(prog, NULL, &target, &err);
    if (!plan)
        return -1;
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = pf_lower(&arena, prog, &pv, plan, &err);
    CU_ASSERT_PTR_NOT_NULL(f);
    pf_pass_stats ps = { 0 };
    if (f) {
        f = pf_pass_bounds(f, true, &ps);
        f = pf_pass_ondemand(f, true, &ps);
        f = pf_pass_channels(f, &ps);
        f = pf_pass_bands(f, &ps);
    }
    t->app = app;
    t->schedule = schedule ? schedule : "(exact)";
    int n = f ? ir_audit_serial(f, found, t) : 0;
    pf_arena_free(&arena);
    pf_params_free(&pv);
    pf_plan_free(plan);
    return n;
}

static void spacings(int k, char *out, size_t n)
{
    out[0] = '\0';
    for (int d = 0; d < k; d++)
        snprintf(out + strlen(out), n - strlen(out), "%s%d", d ? " " : "", d < 2 ? 2 : 1);
}

static void test_every_kind_on_every_app(void)
{
    tally t = { { 0 }, NULL, NULL };
    int applied[N_GENES] = { 0 };
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++) {
        pf_program *p = cg_load_app(apps[a]);
        CU_ASSERT(audit(p, apps[a], NULL, &t) >= 0);
        for (int s = 0; s < p->n_stages; s++) {
            const pf_stage *st = p->stages[s];
            char sp[64], gene[160], sched[256];
            spacings(st->n_vars, sp, sizeof sp);
            for (int g = 0; g < N_GENES; g++) {
                snprintf(gene, sizeof gene, genes[g], sp);
                snprintf(sched, sizeof sched, "%s %s\n", st->name, gene);
                if (audit(p, apps[a], sched, &t) >= 0)
                    applied[g]++;
            }
        }
        pf_program_free(p);
    }
    for (int g = 0; g < N_GENES; g++) {
        if (!applied[g])
            fprintf(stderr, "\ngene \"%s\" applies to no stage of any app\n", genes[g]);
        CU_ASSERT(applied[g] > 0);
    }
    CU_ASSERT_EQUAL(t.by_why[IR_SERIAL_NONE], 0);
    /* not-yet reasons (a serial loop that could be parallel) must not occur either */
    for (int w = 1; w < IR_SERIAL_COUNT; w++)
        if (!ir_serial_reason_of((ir_serial_why)w)->inherent && t.by_why[w]) {
            fprintf(stderr, "\n%d serial nests for a reason not inherent: %s\n", t.by_why[w],
                    ir_serial_reason_of((ir_serial_why)w)->name);
            CU_FAIL("a pixel loop is serial for a reason that is not inherent");
        }
    /* the masks of importance and adaptive sampling are serial, and the walk sees them */
    CU_ASSERT(t.by_why[IR_SERIAL_DITHER] > 0);
    CU_ASSERT(t.by_why[IR_SERIAL_ADAPTIVE] > 0);
}

/* A stage whose execution gene is serial: its nest and its fill carry that reason; the paper's
 * blur variant under the default schedule has no serial pixel loop at all. */
static void test_reasons_are_found(void)
{
    pf_program *p = cg_load_app("blur");
    tally t = { { 0 }, NULL, NULL };
    CU_ASSERT_EQUAL(audit(p, "blur", "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                                     "loop_output grid 4 4 1 reconstruct store linear\n", &t),
                    0);
    memset(&t, 0, sizeof t);
    int n = audit(p, "blur", "loop_output grid 2 2 1 reconstruct store linear\n"
                             "loop_output exec root\n", &t);
    CU_ASSERT(n >= 2);  /* the samples and the fill's passes */
    CU_ASSERT_EQUAL(t.by_why[IR_SERIAL_SCHEDULE], n);
    pf_program_free(p);
}

/* Every reason has a name and a sentence (the docs mirror this table). */
static void test_reason_table(void)
{
    for (int w = 0; w < IR_SERIAL_COUNT; w++) {
        const ir_serial_reason *r = ir_serial_reason_of((ir_serial_why)w);
        CU_ASSERT(r->name && r->name[0] && r->why && strlen(r->why) > 20);
    }
    CU_ASSERT_FALSE(ir_serial_reason_of(IR_SERIAL_NONE)->inherent);
}

PF_TEST_SUITE(codegen_parallel, PF_TEST(test_every_kind_on_every_app),
              PF_TEST(test_reasons_are_found), PF_TEST(test_reason_table))
