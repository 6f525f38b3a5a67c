/* The interpreter's translator, part 4: approximation annotations (lang/approx.h). It decides
 * which images are stored on demand, checks that every annotation is one docs/perforation.md
 * defines for its stage or loop (perforate/ validates schedules too; the oracle refuses rather
 * than guess), and emits the loop-perforation test of named `for` loops. See interp_compile.h. */
#include "interp/interp_compile.h"

#include <math.h>
#include <stdio.h>

bool pf_ic_approx_allowed(pf_icomp *c, pf_loc loc, const char *what)
{
    char msg[256];
    if (c->mode == PF_IAPPROX_RUN)
        return true;
    if (c->mode == PF_IAPPROX_REFUSE)
        snprintf(msg, sizeof msg, "the interpreter does not run approximations yet (%s) "
                 "without a runtime: use pf_interp_run_approx", what);
    else
        snprintf(msg, sizeof msg, "interpreter: the program is approximated (%s) but no "
                 "approximation runtime was given: pass pf_srt_table() "
                 "(reconstruct/stage_rt.h) to pf_interp_run_approx", what);
    pf_ic_fail(c, loc, msg);
    return false;
}

/* Fails with "stage 'NAME': why" at the stage. */
static void stage_fail(pf_icomp *c, const pf_stage *st, const char *why)
{
    char msg[320];
    snprintf(msg, sizeof msg, "interpreter: stage '%s': %s", st->name ? st->name : "?", why);
    pf_ic_fail(c, st->loc, msg);
}

static bool frac_ok(float f)
{
    return f > 0.0f && f <= 1.0f;
}

static bool sigma_ok(float s)
{
    return s > 0.0f && isfinite(s);
}

/* ---- on-demand storage ---- */

static bool writes_image(const pf_stage *st, const pf_image_decl *img)
{
    for (int i = 0; i < st->n_writes; i++)
        if (st->writes[i] == img)
            return true;
    return false;
}

static bool on_demand_kind_ok(const pf_stage_approx *a)
{
    return a->sample == PF_SAMPLE_GRID &&
           (a->recon == PF_RECON_LINEAR || a->recon == PF_RECON_NEAREST);
}

/* docs/perforation.md §4: an on-demand grid stores its image downsampled, unless the image is
 * an output (executed as store). Refused when another stage writes the image too. */
static void plan_stage(pf_icomp *c, const pf_stage *st)
{
    const pf_stage_approx *a = st->approx;
    const pf_image_decl *img = st->image && st->image->image ? st->image->image : NULL;
    if (!a || !a->on_demand || !img || img->role == PF_IMAGE_OUTPUT)
        return;
    if (!on_demand_kind_ok(a)) {
        stage_fail(c, st, "on-demand reconstruction needs grid sampling with linear or "
                          "nearest reconstruction");
        return;
    }
    for (int s = 0; s < c->prog->n_stages; s++) {
        const pf_stage *other = c->prog->stages[s];
        if (other != st && writes_image(other, img)) {
            stage_fail(c, st, "on-demand storage is refused for an image that more than one "
                              "stage writes");
            return;
        }
    }
    if (img->role == PF_IMAGE_INPUT) {
        stage_fail(c, st, "an input cannot be stored on demand");
        return;
    }
    c->ic->od_writer[img->index] = st;
}

void pf_ic_plan_on_demand(pf_icomp *c)
{
    if (c->mode != PF_IAPPROX_RUN)
        return;
    for (int s = 0; s < c->prog->n_stages && !c->failed; s++)
        plan_stage(c, c->prog->stages[s]);
}

/* A read annotated for on-demand reconstruction must read an image its `writer` stores on
 * demand (or an output, which is stored in full and read plainly). */
void pf_ic_check_read_approx(pf_icomp *c, const pf_expr *e, int img)
{
    const pf_stage *w = e->approx->writer;
    const pf_image_decl *d = c->prog->images[img];
    bool as_store = w && w->approx && w->approx->on_demand && w->image &&
                    w->image->image == d && d->role == PF_IMAGE_OUTPUT;
    if (!w || (w != c->ic->od_writer[img] && !as_store))
        pf_ic_fail(c, e->loc, "interpreter: a read is marked for on-demand reconstruction, but "
                              "its image is not stored on demand by the marked stage");
}

/* ---- loop perforation ---- */

/* Why a loop-perforation gene of loop `loop_id` is malformed, or NULL. */
static const char *perf_problem(const pf_loop_perf *p, int loop_id)
{
    switch (p->kind) {
    case PF_PERF_STEP: return p->step >= 1 ? NULL : "loop perforation with a step below 1";
    case PF_PERF_FIRST:
    case PF_PERF_LAST: return frac_ok(p->frac) ? NULL : "loop perforation fraction outside (0, 1]";
    case PF_PERF_RANDOM:
        if (!frac_ok(p->frac))
            return "random loop perforation probability outside (0, 1]";
        return p->id == loop_id ? NULL : "random loop perforation seeded with an id that is "
                                         "not the loop's index in the program's loop table";
    }
    return "unknown loop perforation";
}

bool pf_ic_loop_approx_ok(pf_icomp *c, const pf_stmt *s)
{
    if (!pf_ic_approx_allowed(c, s->loc, "loop perforation of a named loop"))
        return false;
    const char *why = s->loop_id < 0 || s->loop_id >= c->prog->n_loops ||
                      c->prog->loops[s->loop_id].stmt != s || !c->stage
                          ? "loop perforation of a loop that is not a named loop of a stage"
                          : perf_problem(&s->approx->perf, s->loop_id);
    if (why) {
        char msg[256];
        snprintf(msg, sizeof msg, "interpreter: loop '%s': %s",
                 s->loop_name ? s->loop_name : "?", why);
        pf_ic_fail(c, s->loc, msg);
    }
    return !why;
}

int pf_ic_perf_skip(pf_icomp *c, const pf_stmt *s, int var, int lo, int hi, int st)
{
    const pf_stage *stage = c->stage;
    int zero = pf_ic_const_int(c, 0);
    int a = stage->n_vars > 0 ? pf_ic_map_get(c, stage->vars[0]) : zero;
    int b = stage->n_vars > 1 ? pf_ic_map_get(c, stage->vars[1]) : zero;
    PF_IC_EMIT(c, PF_I_PERF_SKIP, var, lo, hi, st, s->loop_id, a < 0 ? zero : a,
               b < 0 ? zero : b, 0);
    return pf_ic_here(c) - 1;
}

/* ---- stages ---- */

static const char *sampling_problem(const pf_stage_approx *a, const pf_stage *st, bool serial)
{
    switch (a->sample) {
    case PF_SAMPLE_ALL: return NULL;
    case PF_SAMPLE_GRID:
        for (int d = 0; d < st->n_vars; d++)
            if (a->spacing[d] < 1)
                return "grid spacing below 1";
        return NULL;
    case PF_SAMPLE_ADAPTIVE:
        if (a->k < 2 || !frac_ok(a->frac))
            return "adaptive sampling needs k >= 2 and a fraction in (0, 1]";
        if (st->n_vars < 2)
            return "adaptive sampling needs a stage of at least two variables";
        return serial ? "a serial stage cannot be adaptively sampled" : NULL;
    case PF_SAMPLE_IMPORTANCE:
        if (!frac_ok(a->frac) || !sigma_ok(a->sigma_imp))
            return "importance sampling needs a fraction in (0, 1] and a positive sigma";
        if (st->n_vars < 2)
            return "importance sampling needs a stage of at least two variables";
        return a->ref && a->ref->ndims >= 2 ? NULL
               : "importance sampling needs a reference image of at least 2 dimensions";
    case PF_SAMPLE_LOOP:
        if (a->recon != PF_RECON_NONE)
            return "loop perforation of a stage has no reconstruction";
        return perf_problem(&a->perf, st->loop_id);
    }
    return "unknown sampling";
}

static const char *recon_problem(const pf_stage_approx *a, const pf_stage *st, bool serial)
{
    if ((unsigned)a->recon > PF_RECON_LINEAR)
        return "unknown reconstruction";
    if (a->recon == PF_RECON_NONE)
        return a->on_demand ? "on-demand storage needs a reconstruction" : NULL;
    if (serial)
        return "a serial (scatter) stage cannot be reconstructed";
    if (a->recon == PF_RECON_LINEAR && a->sample != PF_SAMPLE_GRID)
        return "linear reconstruction needs grid sampling";
    bool gauss = a->recon == PF_RECON_GAUSSIAN || a->recon == PF_RECON_GAUSSIAN_SV;
    if (gauss && !sigma_ok(a->sigma))
        return "gaussian reconstruction needs a positive sigma";
    for (int d = 2; gauss && a->sample == PF_SAMPLE_GRID && d < st->n_vars; d++)
        if (a->spacing[d] != 1)
            return "gaussian reconstruction of a grid needs spacing 1 beyond the first two "
                   "variables";
    if (a->on_demand && !on_demand_kind_ok(a))
        return "on-demand reconstruction needs grid sampling with linear or nearest "
               "reconstruction";
    return NULL;
}

static bool is_program_image(const pf_program *prog, const pf_image_decl *d)
{
    return d->index >= 0 && d->index < prog->n_images && prog->images[d->index] == d;
}

static const char *reference_problem(const pf_icomp *c, const pf_stage_approx *a,
                                     const pf_stage *st, bool serial)
{
    const pf_image_decl *img = st->image->image;
    if (a->channels < 0)
        return "negative channel count";
    if (a->channels > 0) {
        if (serial)
            return "a serial (scatter) stage cannot be channel-subsampled";
        if (st->n_vars != img->ndims)
            return "channel subsampling needs the stage's last variable to run over its "
                   "image's last dimension";
        if (!a->ref || a->ref->ndims != img->ndims)
            return "channel subsampling needs a reference image with as many dimensions as "
                   "the stage's image";
    }
    if (a->ref && !is_program_image(c->prog, a->ref))
        return "the reference image is not an image of this program";
    if (a->ref && c->ic->od_writer[a->ref->index])
        return "the reference image is stored on demand (it has no full-size array to read)";
    return NULL;
}

void pf_ic_check_stage_approx(pf_icomp *c, const pf_stage *st, bool serial)
{
    const pf_stage_approx *a = st->approx;
    if ((unsigned)a->sample > PF_SAMPLE_LOOP) {
        stage_fail(c, st, "unknown sampling");
        return;
    }
    const char *why = sampling_problem(a, st, serial);
    if (!why)
        why = recon_problem(a, st, serial);
    if (!why)
        why = reference_problem(c, a, st, serial);
    if (why)
        stage_fail(c, st, why);
}
