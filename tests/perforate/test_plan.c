/* Tests of plans (perforate/plan.h): the approximation each gene resolves to on every app,
 * on-demand reads (later stages only), outputs running on-demand as store, refused schedules,
 * plans that outlive their schedule, and many plans of one program that never touch it. */
#include "tests/harness/harness.h"
#include "tests/perforate/perf_test_util.h"

#include "lang/walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int loop_index(const pf_program *p, const char *name)
{
    const pf_loop_info *li = pf_program_find_loop(p, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(li);
    return (int)(li - p->loops);
}

static pf_plan *plan_text(const pf_program *p, const char *text)
{
    pf_error err;
    pf_plan *plan = pf_plan_parse(p, text, "t.sched", NULL, &err);
    if (!plan)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    return plan;
}

/* The reads of one image in one stage: how many reconstruct on demand (and from which writer)
 * and how many read plainly. */
typedef struct read_log {
    const pf_plan *plan;
    const pf_stage *stage;
    const char *image;
    int annotated, plain;
    const pf_stage *writer;
} read_log;

static void log_read(void *ctx, const pf_expr *e)
{
    read_log *l = ctx;
    if (strcmp(e->sym->image->name, l->image) != 0)
        return;
    const pf_stage *w = pf_plan_read_writer(l->plan, l->stage, e->sym->image);
    if (w) {
        l->annotated++;
        l->writer = w;
    } else {
        l->plain++;
    }
}

static read_log reads_of(const pf_plan *plan, const char *stage, const char *image)
{
    const pf_program *p = plan->prog;
    read_log l = { .plan = plan, .stage = p->loops[loop_index(p, stage)].stage, .image = image };
    pf_read_visitor v = { &l, NULL, NULL, log_read };
    pf_visit_reads_stmt(l.stage->body, &v);
    return l;
}

static void test_blur_variant_annotations(void)
{
    pf_program *p = pt_load_app("blur");
    pf_plan *plan = plan_text(p, "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                                 "loop_output grid 4 4 1 reconstruct on-demand linear\n");
    const pf_stage *temp = p->loops[loop_index(p, "loop_temp")].stage;
    const pf_stage *out = p->loops[loop_index(p, "loop_output")].stage;
    const pf_stage_approx *a = pf_plan_approx(plan, temp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->sample, PF_SAMPLE_GRID);
    CU_ASSERT(a->spacing[0] == 4 && a->spacing[1] == 1 && a->spacing[2] == 1);
    CU_ASSERT_EQUAL(a->spacing[3], 1);
    CU_ASSERT_EQUAL(a->recon, PF_RECON_LINEAR);
    CU_ASSERT(a->on_demand);
    CU_ASSERT_EQUAL(a->channels, 0);
    CU_ASSERT_PTR_NULL(a->ref);
    /* On the output, on-demand runs as store. */
    const pf_stage_approx *b = pf_plan_approx(plan, out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT(!b->on_demand);
    CU_ASSERT_EQUAL(b->spacing[1], 4);
    read_log l = reads_of(plan, "loop_output", "temp");
    CU_ASSERT_EQUAL(l.annotated, 1);  /* the one read in the reduction's body */
    CU_ASSERT_EQUAL(l.plain, 0);
    CU_ASSERT_PTR_EQUAL(l.writer, temp);
    l = reads_of(plan, "loop_temp", "in");
    CU_ASSERT_EQUAL(l.annotated, 0);
    pf_plan_free(plan);
    plan = plan_text(p, "");
    pt_counts c = pt_count_plan(plan);
    CU_ASSERT(c.stages == 0 && c.loops == 0 && c.reads == 0);
    pf_plan_free(plan);
    pf_program_free(p);
}

/* Reads of an on-demand image are rewritten in later stages only: not in the writer (its own
 * pixel), not reads of other images, including reads nested in another read's index. */
static const char od_src[] =
    "pipeline od(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
    "    image a[W, H, 3];\n"
    "    image b[W, H, 3];\n"
    "    for each (x, y, c) of a as pa {\n"
    "        a[x, y, c] = in[x, y, c];\n"
    "        a[x, y, c] = a[x, y, c] * 0.5 + a[x, y, c];\n"
    "    }\n"
    "    for each (x, y, c) of b as pb b[x, y, c] = a[x + 1, y, c] + a[x, y, c];\n"
    "    for each (x, y, c) of out as po {\n"
    "        float s = b[x, y, c];\n"
    "        for (k) of 0 .. 2 as taps\n"
    "            s += a[int(in[x, y, 0] * 4.0), y, a[x, y, k] > 0.5 ? 1 : 0];\n"
    "        out[x, y, c] = s + sum(a[x, y + i, c], i = -1 .. 1);\n"
    "    }\n"
    "}\n";

static void test_on_demand_read_placement(void)
{
    pf_program *p = pt_compile("od.pf", od_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *plan = plan_text(p, "pa grid 2 2 1 reconstruct on-demand nearest\n");
    const pf_stage *pa = p->loops[loop_index(p, "pa")].stage;
    read_log l = reads_of(plan, "pa", "a");
    CU_ASSERT_EQUAL(l.annotated, 0);
    CU_ASSERT_EQUAL(l.plain, 2);
    l = reads_of(plan, "pb", "a");
    CU_ASSERT_EQUAL(l.annotated, 2);
    CU_ASSERT_EQUAL(l.plain, 0);
    CU_ASSERT_PTR_EQUAL(l.writer, pa);
    l = reads_of(plan, "po", "a");
    CU_ASSERT_EQUAL(l.annotated, 3);  /* the outer read, the one in its index, the reduction */
    CU_ASSERT_EQUAL(l.plain, 0);
    CU_ASSERT_EQUAL(reads_of(plan, "po", "in").annotated, 0);
    CU_ASSERT_EQUAL(reads_of(plan, "po", "b").annotated, 0);
    pt_counts c = pt_count_plan(plan);
    CU_ASSERT(c.stages == 1 && c.loops == 0 && c.reads == 5);

    /* A second on-demand stage: b's reads in po too; a store schedule has none. The three
     * plans of one program live side by side. */
    pf_plan *two = plan_text(p, "pa grid 2 2 1 reconstruct on-demand nearest\n"
                                "pb grid 1 2 1 reconstruct on-demand linear\n");
    CU_ASSERT_EQUAL(reads_of(two, "po", "b").annotated, 1);
    CU_ASSERT_PTR_EQUAL(reads_of(two, "po", "b").writer, p->loops[loop_index(p, "pb")].stage);
    pf_plan *store = plan_text(p, "pa grid 2 2 1 reconstruct store nearest\n");
    c = pt_count_plan(store);
    CU_ASSERT(c.stages == 1 && c.loops == 0 && c.reads == 0);
    CU_ASSERT_EQUAL(pt_count_plan(plan).reads, 5);
    pf_plan_free(store);
    pf_plan_free(two);
    pf_plan_free(plan);
    pf_program_free(p);
}

/* A representative gene of every legal kind on every loop of every app: the plan says what
 * the gene says, and nothing else. */
static void check_stage_annotation(const pf_plan *plan, int l, const pf_approx_gene *g)
{
    const pf_stage *st = plan->prog->loops[l].stage;
    const pf_stage_approx *a = pf_plan_approx(plan, st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    static const pf_sample_kind sample_of[PF_GENE_KIND_COUNT] = {
        [PF_GENE_GRID] = PF_SAMPLE_GRID, [PF_GENE_ADAPTIVE] = PF_SAMPLE_ADAPTIVE,
        [PF_GENE_IMPORTANCE] = PF_SAMPLE_IMPORTANCE, [PF_GENE_CHANNELS] = PF_SAMPLE_ALL,
        [PF_GENE_STEP] = PF_SAMPLE_LOOP, [PF_GENE_FIRST] = PF_SAMPLE_LOOP,
        [PF_GENE_LAST] = PF_SAMPLE_LOOP, [PF_GENE_RANDOM] = PF_SAMPLE_LOOP,
    };
    CU_ASSERT_EQUAL(a->sample, sample_of[g->kind]);
    CU_ASSERT_EQUAL(a->recon, g->recon);
    CU_ASSERT_EQUAL(a->channels, g->channels);
    if (g->kind == PF_GENE_GRID)
        for (int d = 0; d < st->n_vars; d++)
            CU_ASSERT_EQUAL(a->spacing[d], g->spacing[d]);
    if (g->kind == PF_GENE_ADAPTIVE)
        CU_ASSERT(a->k == g->k && a->frac == (float)g->frac);
    if (g->kind == PF_GENE_IMPORTANCE || g->channels)
        CU_ASSERT_PTR_EQUAL(a->ref, pf_stage_reference(st));
    if (a->sample == PF_SAMPLE_LOOP)
        CU_ASSERT_EQUAL(a->perf.id, l);
    if (g->recon == PF_RECON_GAUSSIAN_SV)
        CU_ASSERT_EQUAL(a->sigma, (float)g->sigma);
}

static void check_one_gene(pf_program *p, int l, pf_gene_kind k)
{
    pf_schedule s;
    pf_error err;
    pf_schedule_init(&s, p);
    pt_sample_gene(p, l, k, &s.approx[l]);
    pf_plan *plan = pf_plan_new(p, &s, NULL, &err);
    if (!plan)
        fprintf(stderr, "%s %s: %s\n", p->loops[l].name, pf_gene_kind_name(k), err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    pt_counts c = pt_count_plan(plan);
    if (p->loops[l].kind == PF_LOOP_FOR) {
        CU_ASSERT(c.stages == 0 && c.loops == 1 && c.reads == 0);
        const pf_loop_approx *a = plan->loops[l];
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(a->perf.id, l);
        CU_ASSERT_EQUAL(a->perf.kind, (pf_loop_perf_kind)(k - PF_GENE_STEP));
    } else {
        CU_ASSERT(c.stages == 1 && c.loops == 0 && c.reads == 0);
        check_stage_annotation(plan, l, &s.approx[l]);
    }
    pf_plan_free(plan);
    pf_schedule_free(&s);
}

static void test_every_legal_gene_on_every_app(void)
{
    for (int a = 0; pt_apps[a]; a++) {
        pf_program *p = pt_load_app(pt_apps[a]);
        for (int l = 0; l < p->n_loops; l++) {
            pf_perforable info;
            pf_perforable_info(p, l, &info);
            for (int k = 1; k < PF_GENE_KIND_COUNT; k++)
                if (info.genes & (1u << k))
                    check_one_gene(p, l, (pf_gene_kind)k);
        }
        pf_program_free(p);
    }
}

static void test_loop_perforation_annotations(void)
{
    pf_program *p = pt_load_app("artistic_blur");
    pf_plan *plan = plan_text(p, "loop_u step 3\nloop_v random 0.25\nloop_blur last 0.5\n");
    const pf_loop_approx *u = plan->loops[loop_index(p, "loop_u")];
    const pf_loop_approx *v = plan->loops[loop_index(p, "loop_v")];
    CU_ASSERT(u && u->perf.kind == PF_PERF_STEP && u->perf.step == 3);
    CU_ASSERT(v && v->perf.kind == PF_PERF_RANDOM && v->perf.frac == 0.25f);
    CU_ASSERT_EQUAL(v->perf.id, loop_index(p, "loop_v"));
    const pf_stage_approx *b = pf_plan_approx(plan, p->loops[loop_index(p, "loop_blur")].stage);
    CU_ASSERT(b && b->sample == PF_SAMPLE_LOOP && b->perf.kind == PF_PERF_LAST);
    CU_ASSERT(b->perf.frac == 0.5f && b->recon == PF_RECON_NONE && b->perf.id == 0);
    pf_plan_free(plan);
    pf_program_free(p);
}

/* What the text says runs: a value with more than six digits is planned rounded. */
static void test_plan_uses_canonical_values(void)
{
    pf_program *p = pt_load_app("median");
    pf_schedule s;
    pf_error err;
    pf_schedule_init(&s, p);
    int l = loop_index(p, "median_x_loop");
    s.approx[l] = (pf_approx_gene){ .kind = PF_GENE_FIRST, .frac = 0.12345678 };
    pf_plan *plan = pf_plan_new(p, &s, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    CU_ASSERT_EQUAL(plan->loops[l]->perf.frac, (float)0.123457);
    pf_plan_free(plan);
    pf_schedule_free(&s);
    pf_program_free(p);
}

/* A schedule that does not fit is refused with the validator's message; an exact schedule
 * plans nothing. */
static void test_refused_schedule_makes_no_plan(void)
{
    pf_program *p = pt_load_app("blur");
    pf_schedule s;
    pf_error err;
    pf_schedule_init(&s, p);
    s.approx[0].kind = PF_GENE_STEP;
    s.approx[0].step = 0;
    CU_ASSERT_PTR_NULL(pf_plan_new(p, &s, NULL, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "step 0 is out of range"));
    CU_ASSERT_PTR_NULL(pf_plan_parse(p, "loop_temp grid 4 1\n", "x.sched", NULL, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "x.sched:1"));
    pf_schedule_reset(&s);
    pf_plan *plan = pf_plan_new(p, &s, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    pt_counts c = pt_count_plan(plan);
    CU_ASSERT(c.stages == 0 && c.loops == 0 && c.reads == 0);
    pf_plan_free(plan);
    pf_schedule_free(&s);
    pf_program_free(p);
}

/* The plan does not point into the schedule: it can be freed right after planning. */
static void test_schedule_freed_after_plan(void)
{
    pf_program *p = pt_load_app("unsharp_mask");
    pf_schedule *s = pf_schedule_from_string(p, "loop_temp grid 2 2 1 channels 2 reconstruct "
                                             "on-demand linear\n", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    pf_error err;
    pf_plan *plan = pf_plan_new(p, s, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    pf_schedule_delete(s);
    const pf_stage_approx *a = pf_plan_approx(plan, p->loops[loop_index(p, "loop_temp")].stage);
    CU_ASSERT(a->channels == 2 && a->on_demand && a->spacing[0] == 2);
    CU_ASSERT_STRING_EQUAL(a->ref->name, "in");
    CU_ASSERT(reads_of(plan, "loop_output", "temp").annotated == 1);
    CU_ASSERT(reads_of(plan, "mask_combination_loop", "mask").annotated == 0);
    pf_plan_free(plan);
    pf_program_free(p);
}

/* The search's pattern: one program, a plan per candidate. The program's arena never grows
 * (nothing is written into it) and every plan's memory is its own. */
static void test_many_plans_of_one_program(void)
{
    pf_program *p = pt_load_app("demosaic");
    uint64_t rng = 42;
    pf_schedule s;
    pf_schedule_init(&s, p);
    size_t program_bytes = p->arena.total, worst = 0;
    for (int round = 0; round < 2000; round++) {
        for (int l = 0; l < p->n_loops; l++)
            pt_random_gene(p, l, &rng, &s.approx[l]);
        pt_fix_references(p, &s);
        pf_error err;
        pf_plan *plan = pf_plan_new(p, &s, NULL, &err);
        if (!plan)
            fprintf(stderr, "%s\n", err.msg);
        CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
        worst = plan->arena.total > worst ? plan->arena.total : worst;
        pf_plan_free(plan);
    }
    CU_ASSERT_EQUAL(p->arena.total, program_bytes);
    CU_ASSERT(worst <= 8192 + (size_t)p->n_loops * 256);
    pf_schedule_free(&s);
    pf_program_free(p);
}

/* The execution genes: the schedule's where it has an `exec` line, the default elsewhere, and
 * the default's vector width follows the target. */
static void test_exec_resolved_for_target(void)
{
    pf_program *p = pt_load_app("bilateral_filter");
    pf_error err;
    pf_plan_target wide = { .vector_lanes = 16 }, narrow = { .vector_lanes = 8 };
    pf_plan *a = pf_plan_new(p, NULL, &wide, &err), *b = pf_plan_new(p, NULL, &narrow, &err);
    CU_ASSERT_FATAL(a && b);
    bool any16 = false;
    for (int i = 0; i < p->n_stages; i++) {
        CU_ASSERT(!a->stages[i].exec_given && a->stages[i].exec.parallel);
        any16 |= a->stages[i].exec.vectorize == 16;
        CU_ASSERT(b->stages[i].exec.vectorize <= 8);
    }
    CU_ASSERT(any16);  /* an exp per tap: arithmetic-bound */
    pf_plan_free(a);
    pf_plan_free(b);
    pf_plan *c = plan_text(p, "loop_pixels exec tile 32 8 vectorize 4\n");
    const pf_plan_stage *st = &c->stages[p->loops[loop_index(p, "loop_pixels")].stage->index];
    CU_ASSERT(st->exec_given && st->exec.tile[0] == 32 && st->exec.vectorize == 4);
    CU_ASSERT(!st->exec.parallel);
    pf_plan_free(c);
    pf_program_free(p);
}

PF_TEST_SUITE(perforate_plan,
              PF_TEST(test_blur_variant_annotations), PF_TEST(test_on_demand_read_placement),
              PF_TEST(test_every_legal_gene_on_every_app),
              PF_TEST(test_loop_perforation_annotations),
              PF_TEST(test_plan_uses_canonical_values),
              PF_TEST(test_refused_schedule_makes_no_plan),
              PF_TEST(test_schedule_freed_after_plan), PF_TEST(test_many_plans_of_one_program),
              PF_TEST(test_exec_resolved_for_target))
