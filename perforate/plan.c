/* Resolving a schedule into a plan (plan.h): genes become the approximations of approx.h
 * (docs/perforation.md gives their meaning), the images stored on demand get their writer, the
 * facts about scratch windows and per-tile fills are decided once, and every stage gets the
 * execution gene that runs, the default schedule (default_schedule.c) where the schedule has
 * none. Everything is allocated in the plan's arena. */
#include "perforate/plan.h"

#include "perforate/default_schedule.h"
#include "perforate/exec.h"

#include <stdlib.h>
#include <string.h>

/* ---- approximations ---- */

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
static pf_stage_approx *stage_approx(pf_plan *p, const pf_stage *st, const pf_approx_gene *g,
                                     int loop)
{
    pf_stage_approx *a = PF_NEW(&p->arena, pf_stage_approx);
    for (int d = 0; d < PF_BUFFER_MAX_DIMS; d++)
        a->spacing[d] = 1;  /* neutral beyond the stage's variables */
    fill_sampling(a, g, loop);
    a->channels = g->channels;
    a->recon = g->recon;
    a->sigma = (float)g->sigma;
    /* An output must be complete, so on-demand runs as store there (docs/schedule.md). */
    a->on_demand = g->on_demand && st->image->image->role != PF_IMAGE_OUTPUT;
    if (g->kind == PF_GENE_IMPORTANCE || g->channels)
        a->ref = pf_stage_reference(st);
    return a;
}

static void resolve_gene(pf_plan *p, int loop, const pf_approx_gene *g)
{
    const pf_loop_info *li = &p->prog->loops[loop];
    if (li->kind == PF_LOOP_FOR) {
        pf_loop_approx *a = PF_NEW(&p->arena, pf_loop_approx);
        a->perf = loop_perf(g, loop);
        p->loops[loop] = a;
        return;
    }
    const pf_stage_approx *a = stage_approx(p, li->stage, g, loop);
    p->stages[li->stage->index].approx = a;
    if (a->on_demand)
        p->on_demand[li->stage->image->image->index] = li->stage;
}

/* ---- what lowering and the default schedule decide from the approximations ---- */

static bool is_reference(const pf_plan *p, const pf_image_decl *img)
{
    for (int s = 0; s < p->prog->n_stages; s++) {
        const pf_stage_approx *a = p->stages[s].approx;
        if (a && a->ref == img)
            return true;
    }
    return false;
}

static bool written_by_another(const pf_program *prog, const pf_stage *st,
                               const pf_image_decl *img)
{
    for (int s = 0; s < prog->n_stages; s++) {
        const pf_stage *o = prog->stages[s];
        for (int i = 0; o != st && i < o->n_writes; i++)
            if (o->writes[i] == img)
                return true;
    }
    return false;
}

static bool read_by_any(const pf_program *prog, const pf_image_decl *img)
{
    for (int s = 0; s < prog->n_stages; s++)
        for (int i = 0; i < prog->stages[s]->n_reads; i++)
            if (prog->stages[s]->reads[i] == img)
                return true;
    return false;
}

/* Computed at its consumer, a producer keeps its image in a per-tile scratch window (Halide's
 * compute_at storage) only when nothing outside the consumer's tile touches the image: it is
 * exact (or grid-sampled on demand) and does not read its own image (a neighbour's read would
 * fall outside the window), no other stage writes the image, and no stage reads it whole as
 * the reference image of a runtime call (importance masks, channel copies). */
static bool scratch_ok(const pf_plan *p, const pf_stage *st)
{
    const pf_image_decl *img = st->image->image;
    const pf_stage_approx *a = p->stages[st->index].approx;
    if (a && !(a->sample == PF_SAMPLE_GRID && a->on_demand))
        return false;
    for (int i = 0; i < st->n_reads; i++)
        if (st->reads[i] == img)
            return false;
    return !is_reference(p, img) && !written_by_another(p->prog, st, img);
}

/* A store-mode grid stage reconstructs per tile (codegen/lower_fill.c) when it is linear or
 * nearest over the whole image, with spacing 1 beyond x and y, and nothing else touches the
 * image. */
static bool tile_fill_ok(const pf_plan *p, const pf_stage *st)
{
    const pf_stage_approx *a = p->stages[st->index].approx;
    const pf_image_decl *img = st->image->image;
    if (!a || a->sample != PF_SAMPLE_GRID || a->on_demand || st->over || st->serial ||
        a->channels > 0 || st->n_vars != img->ndims || st->n_vars < 2 ||
        (a->recon != PF_RECON_LINEAR && a->recon != PF_RECON_NEAREST))
        return false;
    for (int d = 2; d < st->n_vars; d++)
        if (a->spacing[d] != 1)
            return false;
    return !is_reference(p, img) && !read_by_any(p->prog, img) &&
           !written_by_another(p->prog, st, img);
}

/* ---- execution ---- */

static int resolve_exec(pf_plan *p, const pf_schedule *s, pf_error *err)
{
    const pf_program *prog = p->prog;
    for (int i = 0; i < prog->n_stages; i++) {
        pf_plan_stage *ps = &p->stages[i];
        ps->scratch_ok = scratch_ok(p, prog->stages[i]);
        ps->tile_fill_ok = tile_fill_ok(p, prog->stages[i]);
        ps->exec_given = s && s->exec[i].set;
        ps->exec = ps->exec_given ? s->exec[i] : pf_exec_default();
    }
    pf_default_schedule(p);
    for (int i = 0; i < prog->n_stages; i++) {
        pf_plan_stage *ps = &p->stages[i];
        if (ps->exec.slide && ps->exec.at >= 0 &&
            pf_exec_slide_rows(prog, i, ps->exec.at, &ps->slide_lo, &ps->slide_hi, err))
            return -1;
    }
    return 0;
}

/* ---- making one ---- */

static pf_plan *plan_alloc(const pf_program *prog, const pf_plan_target *t)
{
    pf_plan *p = pf_xcalloc(1, sizeof *p);
    pf_arena_init(&p->arena);
    p->prog = prog;
    p->target = t ? *t : (pf_plan_target){ .vector_lanes = 8 };
    p->stages = PF_NEW_ARRAY(&p->arena, pf_plan_stage, prog->n_stages + 1);
    p->loops = PF_NEW_ARRAY(&p->arena, const pf_loop_approx *, prog->n_loops + 1);
    p->on_demand = PF_NEW_ARRAY(&p->arena, const pf_stage *, prog->n_images + 1);
    return p;
}

/* s is valid for prog (or NULL). */
static pf_plan *resolve(const pf_program *prog, const pf_schedule *s, const pf_plan_target *t,
                        pf_error *err)
{
    pf_plan *p = plan_alloc(prog, t);
    pf_strbuf sb;
    pf_sb_init(&sb);
    if (s) {
        for (int i = 0; i < s->n_loops; i++) {
            pf_approx_gene g;
            pf_gene_canonical(&s->approx[i], &g);  /* what the canonical text says, exactly */
            if (g.kind != PF_GENE_EXACT)
                resolve_gene(p, i, &g);
        }
        pf_schedule_print(prog, s, &sb);
    } else {
        pf_schedule exact;
        pf_schedule_init(&exact, prog);
        pf_schedule_print(prog, &exact, &sb);
        pf_schedule_free(&exact);
    }
    p->schedule = pf_arena_strdup(&p->arena, pf_sb_str(&sb));
    pf_sb_free(&sb);
    if (resolve_exec(p, s, err)) {
        pf_plan_free(p);
        return NULL;
    }
    return p;
}

pf_plan *pf_plan_new(const pf_program *prog, const pf_schedule *s, const pf_plan_target *t,
                     pf_error *err)
{
    if (!prog->checked) {
        pf_fail(err, "a plan needs a checked program");
        return NULL;
    }
    if (s && pf_schedule_validate(prog, s, err))
        return NULL;
    return resolve(prog, s, t, err);
}

pf_plan *pf_plan_parse(const pf_program *prog, const char *text, const char *file_name,
                       const pf_plan_target *t, pf_error *err)
{
    pf_schedule s;
    if (pf_schedule_parse(prog, text, file_name, &s, err))
        return NULL;
    pf_plan *p = resolve(prog, &s, t, err);
    pf_schedule_free(&s);
    return p;
}

pf_plan *pf_plan_load(const pf_program *prog, const char *path, const pf_plan_target *t,
                      pf_error *err)
{
    pf_schedule s;
    if (pf_schedule_load(prog, path, &s, err))
        return NULL;
    pf_plan *p = resolve(prog, &s, t, err);
    pf_schedule_free(&s);
    return p;
}

bool pf_plan_has_gpu(const pf_plan *p)
{
    for (int i = 0; i < p->prog->n_stages; i++)
        if (p->stages[i].exec.gpu)
            return true;
    return false;
}

void pf_plan_free(pf_plan *p)
{
    if (!p)
        return;
    pf_arena_free(&p->arena);
    free(p);
}
