/* The schedule model: life cycle, the canonical projection of a gene, and equality. Equality is
 * defined on canonical projections so that it agrees with equality of the canonical text (the
 * search's cache key), whatever stray values a gene built in code carries. */
#include "perforate/schedule.h"

#include "perforate/exec.h"

#include "base/arena.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pf_schedule_init(pf_schedule *s, const pf_program *prog)
{
    memset(s, 0, sizeof *s);
    s->n_loops = prog->n_loops;
    s->n_stages = prog->n_stages;
    /* +1: calloc(0) may return NULL, and a schedule of a loop-free program is still valid. */
    s->approx = pf_xcalloc((size_t)s->n_loops + 1, sizeof *s->approx);
    s->exec = pf_xcalloc((size_t)s->n_stages + 1, sizeof *s->exec);
    for (int i = 0; i < s->n_stages; i++)
        s->exec[i] = pf_exec_default();
}

void pf_schedule_free(pf_schedule *s)
{
    if (!s)
        return;
    free(s->approx);
    free(s->exec);
    free(s->file_name);
    memset(s, 0, sizeof *s);
}

void pf_schedule_copy(pf_schedule *dst, const pf_schedule *src)
{
    *dst = *src;
    dst->approx = pf_xcalloc((size_t)src->n_loops + 1, sizeof *dst->approx);
    dst->exec = pf_xcalloc((size_t)src->n_stages + 1, sizeof *dst->exec);
    if (src->n_loops)
        memcpy(dst->approx, src->approx, sizeof *dst->approx * (size_t)src->n_loops);
    if (src->n_stages)
        memcpy(dst->exec, src->exec, sizeof *dst->exec * (size_t)src->n_stages);
    dst->file_name = src->file_name ? pf_xstrdup(src->file_name) : NULL;
}

void pf_schedule_reset(pf_schedule *s)
{
    memset(s->approx, 0, sizeof *s->approx * (size_t)s->n_loops);
    for (int i = 0; i < s->n_stages; i++)
        s->exec[i] = pf_exec_default();
}

void pf_schedule_delete(pf_schedule *s)
{
    pf_schedule_free(s);
    free(s);
}

/* ---- canonical projection ---- */

double pf_round6(double x)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.6g", x);
    return strtod(buf, NULL);
}

static bool is_sampling(pf_gene_kind k)
{
    return k == PF_GENE_GRID || k == PF_GENE_ADAPTIVE || k == PF_GENE_IMPORTANCE;
}

/* The optional clauses of a sampling gene: channels and reconstruction. */
static void canonical_clauses(const pf_approx_gene *in, pf_approx_gene *out)
{
    out->channels = in->channels;
    out->recon = in->recon;
    if (in->recon == PF_RECON_NONE)
        return;
    out->on_demand = in->on_demand;
    if (in->recon == PF_RECON_GAUSSIAN || in->recon == PF_RECON_GAUSSIAN_SV)
        out->sigma = pf_round6(in->sigma);
}

static void canonical_grid(const pf_approx_gene *in, pf_approx_gene *out)
{
    int n = in->n_spacing;
    n = n < 0 ? 0 : n;
    out->n_spacing = n;
    for (int d = 0; d < n && d < PF_BUFFER_MAX_DIMS; d++)
        out->spacing[d] = in->spacing[d];
}

void pf_gene_canonical(const pf_approx_gene *in, pf_approx_gene *out)
{
    pf_approx_gene g;
    memset(&g, 0, sizeof g);
    g.kind = in->kind;
    switch (in->kind) {
    case PF_GENE_GRID: canonical_grid(in, &g); break;
    case PF_GENE_ADAPTIVE: g.k = in->k; g.frac = pf_round6(in->frac); break;
    case PF_GENE_IMPORTANCE:
        g.frac = pf_round6(in->frac);
        g.sigma_imp = pf_round6(in->sigma_imp);
        break;
    case PF_GENE_CHANNELS: g.channels = in->channels; break;
    case PF_GENE_STEP: g.step = in->step; break;
    case PF_GENE_FIRST:
    case PF_GENE_LAST:
    case PF_GENE_RANDOM: g.frac = pf_round6(in->frac); break;
    default: break;
    }
    if (is_sampling(in->kind))
        canonical_clauses(in, &g);
    *out = g;
}

/* Field by field: struct padding makes memcmp unreliable. */
bool pf_gene_skips_nothing(const pf_approx_gene *g)
{
    return (g->kind == PF_GENE_STEP && g->step == 1) ||
           ((g->kind == PF_GENE_FIRST || g->kind == PF_GENE_LAST) && g->frac >= 1);
}

bool pf_gene_full_grid(const pf_approx_gene *g)
{
    if (g->kind != PF_GENE_GRID || g->channels != 0)
        return false;
    for (int d = 0; d < g->n_spacing; d++)
        if (g->spacing[d] != 1)
            return false;
    return true;
}

bool pf_gene_equal(const pf_approx_gene *a, const pf_approx_gene *b)
{
    pf_approx_gene x, y;
    pf_gene_canonical(a, &x);
    pf_gene_canonical(b, &y);
    if (x.kind != y.kind || x.n_spacing != y.n_spacing || x.k != y.k || x.step != y.step ||
        x.frac != y.frac || x.sigma_imp != y.sigma_imp || x.channels != y.channels ||
        x.recon != y.recon || x.sigma != y.sigma || x.on_demand != y.on_demand)
        return false;
    for (int d = 0; d < PF_BUFFER_MAX_DIMS; d++)
        if (x.spacing[d] != y.spacing[d])
            return false;
    return true;
}

bool pf_schedule_exec_equal(const pf_schedule *a, const pf_schedule *b)
{
    if (a->n_stages != b->n_stages)
        return false;
    for (int i = 0; i < a->n_stages; i++)
        if (!pf_exec_equal(&a->exec[i], &b->exec[i]))
            return false;
    return true;
}

bool pf_schedule_equal(const pf_schedule *a, const pf_schedule *b)
{
    if (a->n_loops != b->n_loops)
        return false;
    for (int i = 0; i < a->n_loops; i++)
        if (!pf_gene_equal(&a->approx[i], &b->approx[i]))
            return false;
    return pf_schedule_exec_equal(a, b);
}

/* ---- names ---- */

/* ORDER GENES */
static const char *const gene_names[PF_GENE_KIND_COUNT] = {
    "exact", "grid", "adaptive", "importance", "channels", "step", "first", "last", "random",
};

const char *pf_gene_kind_name(pf_gene_kind k)
{
    return (unsigned)k < PF_GENE_KIND_COUNT ? gene_names[k] : "?";
}

const char *pf_recon_name(pf_recon_kind r)
{
    switch (r) {
    case PF_RECON_NONE: return "none";
    case PF_RECON_NEAREST: return "nearest";
    case PF_RECON_GAUSSIAN: return "gaussian";
    case PF_RECON_GAUSSIAN_SV: return "gaussian-sv";
    case PF_RECON_LINEAR: return "linear";
    }
    return "?";
}

const char *pf_perforable_kind_name(pf_perforable_kind k)
{
    switch (k) {
    case PF_PERFORABLE_STAGE: return "stage";
    case PF_PERFORABLE_SERIAL_STAGE: return "serial stage";
    case PF_PERFORABLE_FOR: return "for";
    }
    return "?";
}
