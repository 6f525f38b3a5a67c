/* Applying a schedule to a checked program: translating genes into the annotations of
 * lang/approx.h (docs/perforation.md gives their meaning), and clearing them. The annotations
 * are allocated in the program's arena so they live as long as the tree that points to them and
 * never depend on the schedule's memory. */
#include "perforate/apply.h"

#include "base/arena.h"

#include <string.h>

/* ---- walking a stage body ---- */

typedef struct walker {
    pf_read_visitor on_read;
    void (*on_for)(pf_stmt *s, void *ctx);
    void *ctx;
} walker;

static void walk_expr(pf_expr *e, const walker *w)
{
    if (!e)
        return;
    if (e->kind == PF_E_IMAGE_READ && w->on_read)
        w->on_read(e, w->ctx);
    walk_expr(e->a, w);
    walk_expr(e->b, w);
    walk_expr(e->c, w);
    for (int i = 0; i < e->n_args; i++)
        walk_expr(e->args[i], w);
}

/* Every expression and sub-statement field, whatever the kind (unused ones are NULL), so a
 * statement kind added later is still walked. */
static void walk_stmt(pf_stmt *s, const walker *w)
{
    if (!s)
        return;
    if (s->kind == PF_S_FOR && w->on_for)
        w->on_for(s, w->ctx);
    for (int i = 0; i < s->target.n_index; i++)
        walk_expr(s->target.index[i], w);
    walk_expr(s->len_expr, w);
    walk_expr(s->value, w);
    walk_expr(s->cond, w);
    walk_expr(s->lo, w);
    walk_expr(s->hi, w);
    walk_expr(s->step, w);
    for (int i = 0; i < s->n_body; i++)
        walk_stmt(s->body[i], w);
    walk_stmt(s->then_s, w);
    walk_stmt(s->else_s, w);
}

void pf_stage_visit_reads(pf_stage *st, pf_read_visitor fn, void *ctx)
{
    walker w = { .on_read = fn, .ctx = ctx };
    walk_stmt(st->body, &w);
}

/* ---- clearing ---- */

static void clear_read(pf_expr *e, void *ctx)
{
    (void)ctx;
    e->approx = NULL;
}

static void clear_for(pf_stmt *s, void *ctx)
{
    (void)ctx;
    s->approx = NULL;
}

void pf_schedule_clear(pf_program *prog)
{
    walker w = { .on_read = clear_read, .on_for = clear_for };
    for (int i = 0; i < prog->n_stages; i++) {
        prog->stages[i]->approx = NULL;
        walk_stmt(prog->stages[i]->body, &w);
    }
}

/* ---- annotations ---- */

static pf_loop_perf loop_perf(const pf_approx_gene *g, int loop)
{
    pf_loop_perf p = { .step = 1, .id = loop };
    switch (g->kind) {
    case PF_GENE_STEP: p.kind = PF_PERF_STEP; p.step = g->step; break;
    case PF_GENE_FIRST: p.kind = PF_PERF_FIRST; p.frac = (float)g->frac; break;
    case PF_GENE_LAST: p.kind = PF_PERF_LAST; p.frac = (float)g->frac; break;
    default: p.kind = PF_PERF_RANDOM; p.frac = (float)g->frac; break;
    }
    return p;
}

static void fill_sampling(pf_stage_approx *a, const pf_approx_gene *g, int loop)
{
    switch (g->kind) {
    case PF_GENE_GRID:
        a->sample = PF_SAMPLE_GRID;
        for (int d = 0; d < g->n_spacing; d++)
            a->spacing[d] = g->spacing[d];
        break;
    case PF_GENE_ADAPTIVE:
        a->sample = PF_SAMPLE_ADAPTIVE;
        a->k = g->k;
        a->frac = (float)g->frac;
        break;
    case PF_GENE_IMPORTANCE:
        a->sample = PF_SAMPLE_IMPORTANCE;
        a->frac = (float)g->frac;
        a->sigma_imp = (float)g->sigma_imp;
        break;
    case PF_GENE_CHANNELS: a->sample = PF_SAMPLE_ALL; break;
    default:
        a->sample = PF_SAMPLE_LOOP;
        a->perf = loop_perf(g, loop);
        break;
    }
}

/* g is canonical and valid for the stage. */
static pf_stage_approx *stage_annotation(pf_program *prog, pf_stage *st,
                                         const pf_approx_gene *g, int loop)
{
    pf_stage_approx *a = PF_NEW(&prog->arena, pf_stage_approx);
    for (int d = 0; d < PF_BUFFER_MAX_DIMS; d++)
        a->spacing[d] = 1;  /* neutral beyond the stage's variables */
    fill_sampling(a, g, loop);
    a->channels = g->channels;
    a->recon = g->recon;
    a->sigma = (float)g->sigma;
    const pf_image_decl *img = st->image->image;
    /* An output must be complete, so on-demand runs as store there (docs/schedule.md). */
    a->on_demand = g->on_demand && img->role != PF_IMAGE_OUTPUT;
    if (g->kind == PF_GENE_IMPORTANCE || g->channels)
        a->ref = pf_stage_reference(st);
    return a;
}

typedef struct on_demand_ctx {
    const pf_image_decl *img;
    pf_read_approx *approx;
} on_demand_ctx;

static void mark_read(pf_expr *e, void *ctx)
{
    on_demand_ctx *c = ctx;
    if (e->sym && e->sym->image == c->img)
        e->approx = c->approx;
}

/* Every read of the writer's image in later stages reconstructs on demand; the writer's own
 * reads (its own pixel) are not rewritten. One pf_read_approx is shared by all of them. */
static void annotate_reads(pf_program *prog, pf_stage *writer)
{
    on_demand_ctx c = { .img = writer->image->image };
    c.approx = PF_NEW(&prog->arena, pf_read_approx);
    c.approx->writer = writer;
    for (int j = writer->index + 1; j < prog->n_stages; j++)
        pf_stage_visit_reads(prog->stages[j], mark_read, &c);
}

static void apply_gene(pf_program *prog, int loop, const pf_approx_gene *g)
{
    pf_loop_info *li = &prog->loops[loop];
    if (li->kind == PF_LOOP_FOR) {
        pf_loop_approx *a = PF_NEW(&prog->arena, pf_loop_approx);
        a->perf = loop_perf(g, loop);
        li->stmt->approx = a;
        return;
    }
    li->stage->approx = stage_annotation(prog, li->stage, g, loop);
    if (li->stage->approx->on_demand)
        annotate_reads(prog, li->stage);
}

int pf_schedule_apply(pf_program *prog, const pf_schedule *s, pf_error *err)
{
    if (!prog->checked)
        return pf_fail(err, "a schedule applies to a checked program");
    pf_schedule_clear(prog);
    if (pf_schedule_validate(prog, s, err))
        return -1;
    for (int i = 0; i < s->n_loops; i++) {
        pf_approx_gene g;
        pf_gene_canonical(&s->approx[i], &g);  /* what the canonical text says, exactly */
        if (g.kind != PF_GENE_EXACT)
            apply_gene(prog, i, &g);
    }
    return 0;
}
