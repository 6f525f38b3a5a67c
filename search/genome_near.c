/* Neighbours of a genome (genome.h, pf_genome_neighbours, pf_genome_exec_transplants,
 * pf_genome_width_neighbours): the genomes one step away in a sampling lattice, the genome
 * with another measured frontier member's execution schedule, and with a stage at the other
 * vector width, which the model-guided search offers its models next to the bred children
 * (docs/search.md §10). */
#include "search/genome_internal.h"

#include "perforate/default_schedule.h"

#include <string.h>

/* Appends t to out (when it repairs to a valid genome other than s and there is room);
 * consumes t. */
static void offer(const pf_genome_ctx *c, const pf_schedule *s, pf_schedule *t, pf_schedule *out,
                  int *n, int max)
{
    if (*n < max && pf_genome_repair(c, t, NULL) == 0 && !pf_schedule_equal(t, s)) {
        out[(*n)++] = *t;
        return;
    }
    pf_schedule_free(t);
}

/* Offers gene l of s with one integer parameter (a spacing when d >= 0, the step when d < 0)
 * doubled and halved, within 1..max. */
static void offer_scaled(const pf_genome_ctx *c, const pf_schedule *s, int l, int d, int max,
                         pf_schedule *out, int *n, int n_max)
{
    const pf_approx_gene *g = &s->approx[l];
    int v0 = d >= 0 ? g->spacing[d] : g->step;
    for (int up = 0; up < 2; up++) {
        int v = up ? v0 * 2 : v0 / 2;
        if (v < 1 || v > max || v == v0)
            continue;
        pf_schedule t;
        pf_schedule_copy(&t, s);
        if (d >= 0)
            t.approx[l].spacing[d] = v;
        else
            t.approx[l].step = v;
        offer(c, s, &t, out, n, n_max);
    }
}

/* The variants of gene l of s: every drawn spacing (a step) doubled and halved, within the
 * templates' range; a grid's reconstruction on demand or stored. */
static void gene_neighbours(const pf_genome_ctx *c, const pf_schedule *s, int l, pf_schedule *out,
                            int *n, int max)
{
    const pf_approx_gene *g = &s->approx[l];
    int dims = g->kind == PF_GENE_GRID ? pf_gdraw_spacing_dims(&c->info[l]) : 0;
    for (int d = 0; d < dims; d++)
        offer_scaled(c, s, l, d, PF_G_SPACING_MAX, out, n, max);
    if (g->kind == PF_GENE_STEP)
        offer_scaled(c, s, l, -1, PF_G_STEP_MAX, out, n, max);
    if (g->kind == PF_GENE_GRID &&
        (g->recon == PF_RECON_LINEAR || g->recon == PF_RECON_NEAREST)) {
        pf_schedule t;
        pf_schedule_copy(&t, s);
        t.approx[l].on_demand = !g->on_demand;
        offer(c, s, &t, out, n, max);
    }
}

/* A `for` loop that s keeps exact, perforated by step 2: the step's halving down to 1 runs
 * the exact loop, so this is its other direction. Without it, a frontier that never perforated
 * the median's window loops had no neighbour that does, and a time model that had learnt from
 * a few slow window genes never measured one with a coarse pixel grid (docs/search.md §10). */
static void offer_first_step(const pf_genome_ctx *c, const pf_schedule *s, int l,
                             pf_schedule *out, int *n, int max)
{
    pf_schedule t;
    pf_schedule_copy(&t, s);
    memset(&t.approx[l], 0, sizeof t.approx[l]);
    t.approx[l].kind = PF_GENE_STEP;
    t.approx[l].step = 2;
    offer(c, s, &t, out, n, max);
}

int pf_genome_neighbours(const pf_genome_ctx *c, const pf_schedule *s, pf_schedule *out, int max)
{
    int n = 0;
    for (int l = 0; l < s->n_loops; l++) {
        if (s->approx[l].kind == PF_GENE_EXACT && c->info[l].kind == PF_PERFORABLE_FOR)
            offer_first_step(c, s, l, out, &n, max);
        else
            gene_neighbours(c, s, l, out, &n, max);
    }
    return n;
}

int pf_genome_exec_transplants(const pf_genome_ctx *c, const pf_schedule *s,
                               const pf_schedule *const *donors, int n_donors, pf_schedule *out,
                               int max)
{
    int n = 0;
    for (int d = 0; d < n_donors; d++) {
        bool new_exec = !pf_schedule_exec_equal(donors[d], s);
        for (int e = 0; e < d && new_exec; e++)  /* each distinct schedule once */
            new_exec = !pf_schedule_exec_equal(donors[d], donors[e]);
        if (!new_exec)
            continue;
        pf_schedule t;
        pf_schedule_copy(&t, s);
        for (int st = 0; st < s->n_stages; st++)
            t.exec[st] = donors[d]->exec[st];
        offer(c, s, &t, out, &n, max);
    }
    return n;
}

/* The gene that runs stage st of s at the other vector width, or false, on a stage the default
 * computes at the root with nothing at it (pf_default_alone; where it fuses, the width works
 * with the tiles: on blur's fused stages they cost 8-13% of the GA's area): an execution
 * gene's 8 lanes as 16 and 16 as 8; without one, the default at the other width, taking the
 * default's as a 16-lane host gives it (16 for transcendental math in a loop, else 8; the
 * execution seed's assumption). */
static bool other_width(const pf_genome_ctx *c, const pf_schedule *s, int st, pf_exec_gene *g)
{
    const pf_stage *stage = c->prog->stages[st];
    if (stage->serial || !pf_default_alone(c->prog, st))
        return false;
    *g = s->exec[st].set ? s->exec[st] : pf_genome_root_gene(pf_default_width(stage, 16));
    if (g->vectorize != 8 && g->vectorize != 16)
        return false;
    g->vectorize = g->vectorize == 8 ? 16 : 8;
    return true;
}

/* Whether s samples stage st on a grid that skips columns (its lanes read strided). */
static bool strided_in_x(const pf_genome_ctx *c, const pf_schedule *s, int st)
{
    for (int l = 0; l < s->n_loops; l++)
        if (c->prog->loops[l].kind == PF_LOOP_STAGE &&
            c->prog->loops[l].stage == c->prog->stages[st])
            return s->approx[l].kind == PF_GENE_GRID && s->approx[l].n_spacing > 0 &&
                   s->approx[l].spacing[0] > 1;
    return false;
}

int pf_genome_width_neighbours(const pf_genome_ctx *c, const pf_schedule *s, pf_schedule *out,
                               int max)
{
    int n = 0;
    if (c->p.gpu || !pf_genome_exec_enabled(c))
        return 0;  /* CPU genes only, and none where execution genes are off (--no-exec) */
    for (int st = 0; st < s->n_stages; st++) {
        pf_exec_gene g;
        if (!strided_in_x(c, s, st) || !other_width(c, s, st, &g))
            continue;
        pf_schedule t;
        pf_schedule_copy(&t, s);
        t.exec[st] = g;
        offer(c, s, &t, out, &n, max);
    }
    return n;
}
