/* Neighbours of a genome (genome.h, pf_genome_neighbours): the genomes one step away in a
 * sampling lattice, which the model-guided search offers its models next to the bred children
 * (docs/search.md §10). */
#include "search/genome_internal.h"

#include <string.h>

#define MAX_SPACING 8  /* the templates' largest (genome.c) */

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

/* The variants of gene l of s: every drawn spacing (a step) doubled and halved, within the
 * templates' range; a grid's reconstruction on demand or stored. */
static void gene_neighbours(const pf_genome_ctx *c, const pf_schedule *s, int l, pf_schedule *out,
                            int *n, int max)
{
    const pf_approx_gene *g = &s->approx[l];
    int dims = g->kind == PF_GENE_GRID ? pf_gdraw_spacing_dims(&c->info[l]) : 0;
    for (int d = 0; d < dims; d++)
        for (int up = 0; up < 2; up++) {
            int v = up ? g->spacing[d] * 2 : g->spacing[d] / 2;
            if (v < 1 || v > MAX_SPACING || v == g->spacing[d])
                continue;
            pf_schedule t;
            pf_schedule_copy(&t, s);
            t.approx[l].spacing[d] = v;
            offer(c, s, &t, out, n, max);
        }
    if (g->kind == PF_GENE_STEP)
        for (int up = 0; up < 2; up++) {
            int v = up ? g->step * 2 : g->step / 2;
            if (v < 1 || v > MAX_SPACING || v == g->step)
                continue;
            pf_schedule t;
            pf_schedule_copy(&t, s);
            t.approx[l].step = v;
            offer(c, s, &t, out, n, max);
        }
    if (g->kind == PF_GENE_GRID &&
        (g->recon == PF_RECON_LINEAR || g->recon == PF_RECON_NEAREST)) {
        pf_schedule t;
        pf_schedule_copy(&t, s);
        t.approx[l].on_demand = !g->on_demand;
        offer(c, s, &t, out, n, max);
    }
}

int pf_genome_neighbours(const pf_genome_ctx *c, const pf_schedule *s, pf_schedule *out, int max)
{
    int n = 0;
    for (int l = 0; l < s->n_loops; l++)
        gene_neighbours(c, s, l, out, &n, max);
    return n;
}
