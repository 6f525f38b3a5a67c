/* Tests of applying schedules to programs: the annotations each gene produces on every app,
 * on-demand read rewriting (later stages only), outputs running on-demand as store, clearing,
 * failed applications leaving the program exact, and the arena cost of apply/clear cycles. */
#include "tests/harness/harness.h"
#include "tests/perforate/perf_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int loop_index(const pf_program *p, const char *name)
{
    const pf_loop_info *li = pf_program_find_loop(p, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(li);
    return (int)(li - p->loops);
}

static void apply_text(pf_program *p, const char *text)
{
    pf_schedule s;
    pf_error err;
    int rc = pt_parse(p, text, &s, &err);
    if (rc == 0)
        rc = pf_schedule_apply(p, &s, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    pf_schedule_free(&s);
}

typedef struct read_log {
    const char *image;
    int annotated, plain;
    const pf_stage *writer;
} read_log;

static void log_read(pf_expr *e, void *ctx)
{
    read_log *l = ctx;
    if (strcmp(e->sym->image->name, l->image) != 0)
        return;
    if (e->approx) {
        l->annotated++;
        l->writer = e->approx->writer;
    } else {
        l->plain++;
    }
}

static read_log reads_of(pf_program *p, const char *stage, const char *image)
{
    read_log l = { .image = image };
    pf_stage_visit_reads(p->loops[loop_index(p, stage)].stage, log_read, &l);
    return l;
}

static void test_blur_variant_annotations(void)
{
    pf_program *p = pt_load_app("blur");
    apply_text(p, "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                  "loop_output grid 4 4 1 reconstruct on-demand linear\n");
    pf_stage *temp = p->loops[loop_index(p, "loop_temp")].stage;
    pf_stage *out = p->loops[loop_index(p, "loop_output")].stage;
    const pf_stage_approx *a = temp->approx;
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->sample, PF_SAMPLE_GRID);
    CU_ASSERT(a->spacing[0] == 4 && a->spacing[1] == 1 && a->spacing[2] == 1);
    CU_ASSERT_EQUAL(a->spacing[3], 1);
    CU_ASSERT_EQUAL(a->recon, PF_RECON_LINEAR);
    CU_ASSERT(a->on_demand);
    CU_ASSERT_EQUAL(a->channels, 0);
    CU_ASSERT_PTR_NULL(a->ref);
    /* On the output, on-demand runs as store. */
    CU_ASSERT_PTR_NOT_NULL_FATAL(out->approx);
    CU_ASSERT(!out->approx->on_demand);
    CU_ASSERT_EQUAL(out->approx->spacing[1], 4);
    read_log l = reads_of(p, "loop_output", "temp");
    CU_ASSERT_EQUAL(l.annotated, 1);  /* the one read in the reduction's body */
    CU_ASSERT_EQUAL(l.plain, 0);
    CU_ASSERT_PTR_EQUAL(l.writer, temp);
    l = reads_of(p, "loop_temp", "in");
    CU_ASSERT_EQUAL(l.annotated, 0);
    pf_schedule_clear(p);
    pt_counts c = pt_count_annotations(p);
    CU_ASSERT(c.stages == 0 && c.loops == 0 && c.reads == 0);
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
    apply_text(p, "pa grid 2 2 1 reconstruct on-demand nearest\n");
    const pf_stage *pa = p->loops[loop_index(p, "pa")].stage;
    read_log l = reads_of(p, "pa", "a");
    CU_ASSERT_EQUAL(l.annotated, 0);
    CU_ASSERT_EQUAL(l.plain, 2);
    l = reads_of(p, "pb", "a");
    CU_ASSERT_EQUAL(l.annotated, 2);
    CU_ASSERT_EQUAL(l.plain, 0);
    CU_ASSERT_PTR_EQUAL(l.writer, pa);
    l = reads_of(p, "po", "a");
    CU_ASSERT_EQUAL(l.annotated, 3);  /* the outer read, the one in its index, the reduction */
    CU_ASSERT_EQUAL(l.plain, 0);
    CU_ASSERT_EQUAL(reads_of(p, "po", "in").annotated, 0);
    CU_ASSERT_EQUAL(reads_of(p, "po", "b").annotated, 0);
    pt_counts c = pt_count_annotations(p);
    CU_ASSERT(c.stages == 1 && c.loops == 0 && c.reads == 5);

    /* A second on-demand stage: b's reads in po too; a store schedule removes them all. */
    apply_text(p, "pa grid 2 2 1 reconstruct on-demand nearest\n"
                  "pb grid 1 2 1 reconstruct on-demand linear\n");
    CU_ASSERT_EQUAL(reads_of(p, "po", "b").annotated, 1);
    CU_ASSERT_PTR_EQUAL(reads_of(p, "po", "b").writer, p->loops[loop_index(p, "pb")].stage);
    apply_text(p, "pa grid 2 2 1 reconstruct store nearest\n");
    c = pt_count_annotations(p);
    CU_ASSERT(c.stages == 1 && c.loops == 0 && c.reads == 0);
    pf_program_free(p);
}

/* A representative gene of every legal kind on every loop of every app: the annotation says
 * what the gene says, nothing else is annotated, and clearing removes it. */
static void check_stage_annotation(const pf_program *p, int l, const pf_approx_gene *g)
{
    const pf_stage *st = p->loops[l].stage;
    const pf_stage_approx *a = st->approx;
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
    int rc = pf_schedule_apply(p, &s, &err);
    if (rc)
        fprintf(stderr, "%s %s: %s\n", p->loops[l].name, pf_gene_kind_name(k), err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    pt_counts c = pt_count_annotations(p);
    if (p->loops[l].kind == PF_LOOP_FOR) {
        CU_ASSERT(c.stages == 0 && c.loops == 1 && c.reads == 0);
        const pf_loop_approx *a = p->loops[l].stmt->approx;
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(a->perf.id, l);
        CU_ASSERT_EQUAL(a->perf.kind, (pf_loop_perf_kind)(k - PF_GENE_STEP));
    } else {
        CU_ASSERT(c.stages == 1 && c.loops == 0 && c.reads == 0);
        check_stage_annotation(p, l, &s.approx[l]);
    }
    pf_schedule_clear(p);
    c = pt_count_annotations(p);
    CU_ASSERT(c.stages == 0 && c.loops == 0 && c.reads == 0);
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
    apply_text(p, "loop_u step 3\nloop_v random 0.25\nloop_blur last 0.5\n");
    const pf_loop_approx *u = p->loops[loop_index(p, "loop_u")].stmt->approx;
    const pf_loop_approx *v = p->loops[loop_index(p, "loop_v")].stmt->approx;
    CU_ASSERT(u && u->perf.kind == PF_PERF_STEP && u->perf.step == 3);
    CU_ASSERT(v && v->perf.kind == PF_PERF_RANDOM && v->perf.frac == 0.25f);
    CU_ASSERT_EQUAL(v->perf.id, loop_index(p, "loop_v"));
    const pf_stage_approx *b = p->loops[loop_index(p, "loop_blur")].stage->approx;
    CU_ASSERT(b && b->sample == PF_SAMPLE_LOOP && b->perf.kind == PF_PERF_LAST);
    CU_ASSERT(b->perf.frac == 0.5f && b->recon == PF_RECON_NONE && b->perf.id == 0);
    pf_program_free(p);
}

/* What the text says runs: a value with more than six digits is applied rounded. */
static void test_apply_uses_canonical_values(void)
{
    pf_program *p = pt_load_app("median");
    pf_schedule s;
    pf_error err;
    pf_schedule_init(&s, p);
    int l = loop_index(p, "median_x_loop");
    s.approx[l] = (pf_approx_gene){ .kind = PF_GENE_FIRST, .frac = 0.12345678 };
    CU_ASSERT_EQUAL_FATAL(pf_schedule_apply(p, &s, &err), 0);
    CU_ASSERT_EQUAL(p->loops[l].stmt->approx->perf.frac, (float)0.123457);
    pf_schedule_free(&s);
    pf_program_free(p);
}

static void test_failed_apply_leaves_program_exact(void)
{
    pf_program *p = pt_load_app("blur");
    apply_text(p, "loop_temp grid 4 1 1 reconstruct on-demand linear\n");
    CU_ASSERT_EQUAL(pt_count_annotations(p).reads, 1);
    pf_schedule s;
    pf_error err;
    pf_schedule_init(&s, p);
    s.approx[0].kind = PF_GENE_STEP;
    s.approx[0].step = 0;
    CU_ASSERT_EQUAL(pf_schedule_apply(p, &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "step 0 is out of range"));
    pt_counts c = pt_count_annotations(p);
    CU_ASSERT(c.stages == 0 && c.loops == 0 && c.reads == 0);
    /* An exact schedule annotates nothing. */
    pf_schedule_reset(&s);
    CU_ASSERT_EQUAL(pf_schedule_apply(p, &s, &err), 0);
    c = pt_count_annotations(p);
    CU_ASSERT(c.stages == 0 && c.loops == 0 && c.reads == 0);
    pf_schedule_free(&s);
    pf_program_free(p);
}

/* The annotations do not point into the schedule: it can be freed right after applying. */
static void test_schedule_freed_after_apply(void)
{
    pf_program *p = pt_load_app("unsharp_mask");
    pf_schedule *s = pf_schedule_from_string(p, "loop_temp grid 2 2 1 channels 2 reconstruct "
                                             "on-demand linear\n", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_schedule_apply(p, s, &err), 0);
    pf_schedule_delete(s);
    const pf_stage_approx *a = p->loops[loop_index(p, "loop_temp")].stage->approx;
    CU_ASSERT(a->channels == 2 && a->on_demand && a->spacing[0] == 2);
    CU_ASSERT_STRING_EQUAL(a->ref->name, "in");
    CU_ASSERT(reads_of(p, "loop_output", "temp").annotated == 1);
    CU_ASSERT(reads_of(p, "mask_combination_loop", "mask").annotated == 0);
    pf_program_free(p);
}

/* The search's pattern: parse once, apply/clear many candidates. Every clear leaves the program
 * exact and each application costs at most a small, bounded amount of arena. */
static void test_apply_clear_cycles(void)
{
    pf_program *p = pt_load_app("demosaic");
    uint64_t rng = 42;
    pf_schedule s;
    pf_schedule_init(&s, p);
    size_t worst = 0;
    for (int round = 0; round < 2000; round++) {
        for (int l = 0; l < p->n_loops; l++)
            pt_random_gene(p, l, &rng, &s.approx[l]);
        pt_fix_references(p, &s);
        size_t before = p->arena.total;
        pf_error err;
        int rc = pf_schedule_apply(p, &s, &err);
        if (rc)
            fprintf(stderr, "%s\n", err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        size_t cost = p->arena.total - before;
        worst = cost > worst ? cost : worst;
        pf_schedule_clear(p);
        pt_counts c = pt_count_annotations(p);
        CU_ASSERT_FATAL(c.stages == 0 && c.loops == 0 && c.reads == 0);
    }
    CU_ASSERT(worst <= (size_t)p->n_loops * 128);
    pf_schedule_free(&s);
    pf_program_free(p);
}

PF_TEST_SUITE(schedule_apply,
              PF_TEST(test_blur_variant_annotations), PF_TEST(test_on_demand_read_placement),
              PF_TEST(test_every_legal_gene_on_every_app),
              PF_TEST(test_loop_perforation_annotations),
              PF_TEST(test_apply_uses_canonical_values),
              PF_TEST(test_failed_apply_leaves_program_exact),
              PF_TEST(test_schedule_freed_after_apply), PF_TEST(test_apply_clear_cycles))
