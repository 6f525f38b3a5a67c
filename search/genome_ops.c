/* The released GA's genome operators (paper-apps.md §9): the initial one-gene genomes,
 * mutation (redraw one parameter with probability 0.3, else add / remove / replace a gene),
 * and two-point crossover over the loops. Execution genes join in: a mutation touches them
 * with probability exec_rate, and crossover carries a stage's execution gene with its loop. */
#include "search/genome_internal.h"

#include <math.h>
#include <string.h>

/* The parameters one gene exposes to mutation. */
typedef enum gparam {
    GP_SPACING, GP_CHANNELS, GP_RECON, GP_SIGMA, GP_FRAC, GP_K, GP_SIGMA_IMP, GP_STEP,
    GP_CONTIGUOUS
} gparam;

static bool has_sigma(const pf_approx_gene *g)
{
    return g->recon == PF_RECON_GAUSSIAN || g->recon == PF_RECON_GAUSSIAN_SV;
}

/* With hints the reconstruction sigmas are constants of the templates, not parameters. */
static int sampling_params(const pf_genome_ctx *c, const pf_perforable *info,
                           const pf_approx_gene *g, gparam *out)
{
    int n = 0;
    bool serial = info->kind == PF_PERFORABLE_SERIAL_STAGE;
    if (g->kind == PF_GENE_GRID)
        out[n++] = GP_SPACING;
    if (g->kind == PF_GENE_ADAPTIVE) {
        out[n++] = GP_FRAC;
        out[n++] = GP_K;
    }
    if (g->kind == PF_GENE_IMPORTANCE) {
        out[n++] = GP_FRAC;
        out[n++] = GP_SIGMA_IMP;
    }
    if (info->channels && !serial && g->kind != PF_GENE_ADAPTIVE)
        out[n++] = GP_CHANNELS;
    if (!serial && !g->on_demand && g->kind != PF_GENE_ADAPTIVE)
        out[n++] = GP_RECON;
    if (has_sigma(g) && !c->p.hints)
        out[n++] = GP_SIGMA;
    return n;
}

static int gene_params(const pf_genome_ctx *c, int loop, const pf_approx_gene *g, gparam *out)
{
    switch (g->kind) {
    case PF_GENE_STEP: out[0] = GP_STEP; return 1;
    case PF_GENE_FIRST:
    case PF_GENE_LAST: out[0] = GP_CONTIGUOUS; return 1;
    case PF_GENE_RANDOM: out[0] = GP_FRAC; return 1;
    case PF_GENE_CHANNELS: out[0] = GP_CHANNELS; return 1;
    case PF_GENE_EXACT: return 0;
    default: return sampling_params(c, &c->info[loop], g, out);
    }
}

/* A float moved uniformly within +-10% of its range, clipped into the range. */
static double nudge(pf_rng *r, double v, double lo, double hi)
{
    double d = PF_G_NUDGE * (hi - lo);
    v += pf_rng_range(r, -d, d);
    return v < lo ? lo : v > hi ? hi : v;
}

/* A new reconstruction; a sigma appears from the template's hint or its range. */
static void redraw_recon(const pf_genome_ctx *c, pf_rng *r, pf_approx_gene *g)
{
    bool had_sigma = has_sigma(g);
    g->recon = pf_gdraw_recon(r, c->p.hints && g->kind == PF_GENE_GRID);
    if (!has_sigma(g) || had_sigma)
        return;
    if (c->p.hints)
        g->sigma = g->kind == PF_GENE_GRID ? 0.3 : 0.73;
    else
        g->sigma = pf_gdraw_sigma(r);
}

static void redraw_param(const pf_genome_ctx *c, pf_rng *r, int loop, gparam p,
                         pf_approx_gene *g)
{
    switch (p) {
    case GP_SPACING:
        pf_gdraw_spacing(r, pf_rng_below(r, pf_gdraw_spacing_dims(&c->info[loop])), g);
        break;
    case GP_CHANNELS:
        g->channels = pf_gdraw_channels(&c->info[loop], r);
        if (g->kind == PF_GENE_CHANNELS && !g->channels)
            g->channels = 1;
        break;
    case GP_RECON: redraw_recon(c, r, g); break;
    case GP_SIGMA: g->sigma = nudge(r, g->sigma, PF_G_SIGMA_LO, PF_G_SIGMA_HI); break;
    case GP_FRAC: g->frac = nudge(r, g->frac, PF_G_FRAC_LO, PF_G_FRAC_HI); break;
    case GP_K: g->k = pf_gdraw_k(r); break;
    case GP_SIGMA_IMP:
        g->sigma_imp = nudge(r, g->sigma_imp, PF_G_SIGMA_IMP_LO, PF_G_SIGMA_IMP_HI);
        break;
    case GP_STEP: g->step = pf_gdraw_step(r); break;
    case GP_CONTIGUOUS: {
        double f = g->kind == PF_GENE_FIRST ? g->frac : -g->frac;
        pf_gset_contiguous(nudge(r, f, -1.0, 1.0), g);
        break;
    }
    }
}

/* Index of the k-th approximated loop (k < pf_genome_count). */
static int nth_gene(const pf_schedule *s, int k)
{
    for (int i = 0; i < s->n_loops; i++)
        if (s->approx[i].kind != PF_GENE_EXACT && k-- == 0)
            return i;
    return -1;
}

static void modify_param(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s)
{
    int loop = nth_gene(s, pf_rng_below(r, pf_genome_count(s)));
    gparam ps[8];
    int n = gene_params(c, loop, &s->approx[loop], ps);
    if (n > 0)
        redraw_param(c, r, loop, ps[pf_rng_below(r, n)], &s->approx[loop]);
}

/* `add`: a random loop without a gene; a foreach loop is always accepted, a for loop with
 * probability p_accept_for, else another loop is drawn. Returns false when every loop has one. */
static bool add_gene(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s)
{
    if (pf_genome_count(s) == s->n_loops)
        return false;
    for (;;) {
        int loop = pf_rng_below(r, s->n_loops);
        if (s->approx[loop].kind != PF_GENE_EXACT)
            continue;
        if (c->info[loop].kind == PF_PERFORABLE_FOR && !pf_rng_chance(r, c->p.p_accept_for))
            continue;
        pf_genome_random_gene(c, r, loop, &s->approx[loop]);
        return true;
    }
}

static void mutate_approx(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s)
{
    int n = pf_genome_count(s);
    if (n > 0 && pf_rng_chance(r, c->p.p_modify)) {
        modify_param(c, r, s);
        return;
    }
    int action = n == 0 ? 0 : pf_rng_below(r, 3);
    if (action == 0 && add_gene(c, r, s))
        return;
    int loop = nth_gene(s, pf_rng_below(r, n));
    if (action == 1)
        memset(&s->approx[loop], 0, sizeof s->approx[loop]);
    else
        pf_genome_random_gene(c, r, loop, &s->approx[loop]);
}

#define OP_TRIES 64

void pf_genome_mutate(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s)
{
    pf_schedule t;
    pf_schedule_copy(&t, s);
    for (int attempt = 0; attempt < OP_TRIES; attempt++) {
        if (pf_genome_exec_enabled(c) && pf_rng_chance(r, c->p.exec_rate))
            pf_genome_mutate_exec(c, r, &t);
        else if (s->n_loops > 0)
            mutate_approx(c, r, &t);
        if (pf_genome_repair(c, &t, NULL) == 0 && !pf_schedule_equal(&t, s)) {
            pf_schedule_free(s);
            *s = t;
            return;
        }
        pf_schedule_free(&t);
        pf_schedule_copy(&t, s);
    }
    pf_schedule_free(&t);
}

void pf_genome_initial(const pf_genome_ctx *c, pf_rng *r, pf_schedule *out)
{
    pf_schedule_init(out, c->prog);
    for (int attempt = 0; attempt < OP_TRIES; attempt++) {
        pf_schedule_reset(out);
        add_gene(c, r, out);
        if (pf_genome_exec_enabled(c) && pf_rng_chance(r, c->p.exec_rate))
            pf_genome_random_exec(c, r, out, pf_rng_below(r, c->prog->n_stages));
        if (pf_genome_repair(c, out, NULL) == 0)
            return;
    }
    pf_schedule_reset(out);
}

/* The child takes loop i (and, for a stage, its execution gene) from `from`. */
static void take_loop(const pf_genome_ctx *c, const pf_schedule *from, int i, pf_schedule *child)
{
    child->approx[i] = from->approx[i];
    const pf_loop_info *li = &c->prog->loops[i];
    if (li->kind == PF_LOOP_STAGE)
        child->exec[li->stage->index] = from->exec[li->stage->index];
}

/* Released: swap the parents with probability 0.5; lo in [0, n), hi in [lo, n); if that
 * selects every loop, lo += 1; loops lo..hi come from b. */
void pf_genome_crossover(const pf_genome_ctx *c, pf_rng *r, const pf_schedule *a,
                         const pf_schedule *b, pf_schedule *child)
{
    if (pf_rng_below(r, 2)) {
        const pf_schedule *t = a;
        a = b;
        b = t;
    }
    int n = c->prog->n_loops;
    if (n == 0) {
        pf_schedule_copy(child, a);
        return;
    }
    int lo = pf_rng_below(r, n);
    int hi = lo + pf_rng_below(r, n - lo);
    if (lo == 0 && hi == n - 1)
        lo++;
    pf_schedule_copy(child, a);
    for (int i = lo; i <= hi; i++)
        take_loop(c, b, i, child);
    if (pf_genome_repair(c, child, NULL) != 0) {
        pf_schedule_free(child);  /* cannot happen for valid parents; stay valid regardless */
        pf_schedule_copy(child, a);
    }
}
