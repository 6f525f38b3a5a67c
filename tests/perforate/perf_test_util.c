/* Shared helpers of the perforate/ tests (see perf_test_util.h). */
#include "tests/perforate/perf_test_util.h"

#include "lang/walk.h"

#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pt_apps[] = {
    "artistic_blur", "bilateral_filter", "bilateral_grid", "blur", "demosaic", "median",
    "mosaic", "unsharp_mask", NULL,
};

pf_program *pt_load_app(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "apps/%s.pf", name);
    pf_error err;
    pf_program *p = pf_load_program(pf_test_src(rel), &err);
    if (!p)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

pf_program *pt_compile(const char *name, const char *source)
{
    pf_error err;
    pf_program *p = pf_compile_string(name, source, &err);
    if (!p)
        fprintf(stderr, "%s\n", err.msg);
    return p;
}

int pt_parse(const pf_program *prog, const char *text, pf_schedule *out, pf_error *err)
{
    return pf_schedule_parse(prog, text, "t.sched", out, err);
}

char *pt_print(const pf_program *prog, const pf_schedule *s)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_schedule_print(prog, s, &sb);
    return pf_sb_take(&sb);
}

uint64_t pt_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

int pt_rand_int(uint64_t *state, int lo, int hi)
{
    return lo + (int)(pt_rand(state) % (uint64_t)(hi - lo + 1));
}

/* A value in (0, hi] with up to 9 significant digits; sometimes exactly hi or very small. */
static double rand_positive(uint64_t *state, double hi)
{
    switch (pt_rand_int(state, 0, 9)) {
    case 0: return hi;
    case 1: return hi * 1e-5 * pt_rand_int(state, 1, 99);
    default: return hi * (double)pt_rand_int(state, 1, 999999999) / 1e9;
    }
}

static pf_gene_kind random_kind(const pf_perforable *info, uint64_t *state)
{
    int kinds[PF_GENE_KIND_COUNT], n = 0;
    for (int k = 0; k < PF_GENE_KIND_COUNT; k++)
        if (info->genes & (1u << k))
            kinds[n++] = k;
    return (pf_gene_kind)kinds[pt_rand_int(state, 0, n - 1)];
}

static void random_recon(const pf_perforable *info, uint64_t *state, pf_approx_gene *g)
{
    static const pf_recon_kind methods[] = { PF_RECON_NEAREST, PF_RECON_GAUSSIAN,
                                             PF_RECON_GAUSSIAN_SV, PF_RECON_LINEAR };
    int n = g->kind == PF_GENE_GRID ? 4 : 3;
    g->recon = methods[pt_rand_int(state, 0, n - 1)];
    if (g->recon == PF_RECON_GAUSSIAN || g->recon == PF_RECON_GAUSSIAN_SV) {
        g->sigma = rand_positive(state, PF_GENE_MAX_SIGMA);
        for (int d = 2; d < g->n_spacing; d++)
            g->spacing[d] = 1;
    } else if (g->kind == PF_GENE_GRID && info->on_demand) {
        g->on_demand = pt_rand_int(state, 0, 1);
    }
}

static void random_args(const pf_perforable *info, uint64_t *state, pf_approx_gene *g)
{
    static const int spacings[] = { 1, 2, 3, 4, 8, 64 };
    switch (g->kind) {
    case PF_GENE_GRID:
        g->n_spacing = info->n_vars;
        for (int d = 0; d < info->n_vars; d++)
            g->spacing[d] = spacings[pt_rand_int(state, 0, 5)];
        break;
    case PF_GENE_ADAPTIVE:
        g->k = pt_rand_int(state, PF_GENE_MIN_K, PF_GENE_MAX_K);
        g->frac = rand_positive(state, 1.0);
        break;
    case PF_GENE_IMPORTANCE:
        g->frac = rand_positive(state, 1.0);
        g->sigma_imp = rand_positive(state, 1.0);
        break;
    case PF_GENE_CHANNELS: g->channels = pt_rand_int(state, 1, 3); break;
    case PF_GENE_STEP: g->step = pt_rand_int(state, 1, PF_GENE_MAX_STEP); break;
    case PF_GENE_FIRST:
    case PF_GENE_LAST:
    case PF_GENE_RANDOM: g->frac = rand_positive(state, 1.0); break;
    default: break;
    }
}

void pt_random_gene(const pf_program *prog, int loop, uint64_t *state, pf_approx_gene *g)
{
    pf_perforable info;
    pf_perforable_info(prog, loop, &info);
    memset(g, 0, sizeof *g);
    g->kind = random_kind(&info, state);
    random_args(&info, state, g);
    bool sampling = g->kind == PF_GENE_GRID || g->kind == PF_GENE_ADAPTIVE ||
                    g->kind == PF_GENE_IMPORTANCE;
    if (!sampling || info.kind == PF_PERFORABLE_SERIAL_STAGE)
        return;
    if (info.channels && pt_rand_int(state, 0, 2) == 0)
        g->channels = pt_rand_int(state, 1, 2);
    random_recon(&info, state, g);
}

void pt_sample_gene(const pf_program *prog, int loop, pf_gene_kind kind, pf_approx_gene *g)
{
    pf_perforable info;
    pf_perforable_info(prog, loop, &info);
    memset(g, 0, sizeof *g);
    g->kind = kind;
    switch (kind) {
    case PF_GENE_GRID:
        g->n_spacing = info.n_vars;
        for (int d = 0; d < info.n_vars; d++)
            g->spacing[d] = d < 2 ? 2 + d : 1;
        break;
    case PF_GENE_ADAPTIVE: g->k = 3; g->frac = 0.25; break;
    case PF_GENE_IMPORTANCE: g->frac = 0.3; g->sigma_imp = 0.02; break;
    case PF_GENE_CHANNELS: g->channels = 1; break;
    case PF_GENE_STEP: g->step = 2; break;
    case PF_GENE_FIRST:
    case PF_GENE_LAST:
    case PF_GENE_RANDOM: g->frac = 0.5; break;
    default: break;
    }
    pf_gene_set_default_recon(prog, loop, g);
}

typedef struct read_count {
    const pf_plan *plan;
    const pf_stage *stage;
    pt_counts *c;
} read_count;

static void count_read(void *ctx, const pf_expr *e)
{
    read_count *r = ctx;
    if (pf_plan_read_writer(r->plan, r->stage, e->sym->image))
        r->c->reads++;
}

pt_counts pt_count_plan(const pf_plan *plan)
{
    const pf_program *prog = plan->prog;
    pt_counts c = { 0, 0, 0 };
    for (int i = 0; i < prog->n_stages; i++) {
        c.stages += pf_plan_approx(plan, prog->stages[i]) != NULL;
        read_count r = { plan, prog->stages[i], &c };
        pf_read_visitor v = { &r, NULL, NULL, count_read };
        pf_visit_reads_stmt(prog->stages[i]->body, &v);
    }
    for (int i = 0; i < prog->n_loops; i++)
        c.loops += plan->loops[i] != NULL;
    return c;
}

/* Random genes are drawn loop by loop; the one rule that spans loops (a reference image may not
 * be stored on demand) is restored afterwards by storing such images at full size. */
void pt_fix_references(const pf_program *prog, pf_schedule *s)
{
    for (int i = 0; i < prog->n_stages; i++) {
        const pf_stage *st = prog->stages[i];
        const pf_approx_gene *g = &s->approx[st->loop_id];
        if (g->kind != PF_GENE_IMPORTANCE && g->kind != PF_GENE_CHANNELS && g->channels == 0)
            continue;
        const pf_image_decl *ref = pf_stage_reference(st);
        if (ref && ref->first_writer)
            s->approx[ref->first_writer->loop_id].on_demand = false;
    }
}
