/* The time model (see model_time.h): the terms of a candidate and their features, the fit
 * (pf_sumexp_fit) and the prediction. */
#include "search/model_time.h"

#include "base/arena.h"
#include "search/model_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Parameter layout: shared features first, then per stage its base and its loss of the default
 * schedule (exec_set). */
enum {
    P_OVERHEAD,
    /* compute terms */
    P_SERIAL, P_VEC_NONE, P_VEC_4, P_VEC_16, P_TILED, P_TILE_SMALL, P_UNROLL, P_REORDER, P_AT,
    P_SLIDE, P_TILE_NARROW, P_AT_SMALL, P_ALONE_SET, P_CONSUMER_SET, P_IMPORTANCE, P_ADAPTIVE,
    P_LOOP_PERF, P_INNER_RANDOM, P_CHANNELS, P_LOG_FRAC,
    P_LOG_SX, P_LOG_SY, P_VEC_SX,
    /* filling terms (reconstruction) */
    P_R_NEAREST, P_R_LINEAR, P_R_GAUSS, P_R_GAUSS_SV, P_R_NONE, P_R_IRREGULAR, P_R_LOG_KERNEL,
    P_R_LOG_FRAC, P_R_CHANNELS,
    /* reading terms (on demand) */
    P_INTERP, P_INTERP_X, P_INTERP_Y,
    P_SHARED
};
#define P_BASE(s) (P_SHARED + 2 * (s))
#define P_EXEC_SET(s) (P_SHARED + 2 * (s) + 1)

void pf_time_model_init(pf_time_model *m, const pf_program_static *ps)
{
    memset(m, 0, sizeof *m);
    m->ps = ps;
    m->d = P_SHARED + 2 * ps->n_stages;
    m->theta = pf_xcalloc((size_t)m->d, sizeof *m->theta);
    m->lambda = 0.5;
    m->theta[P_OVERHEAD] = log(0.02);
}

void pf_time_model_free(pf_time_model *m)
{
    free(m->theta);
    memset(m, 0, sizeof *m);
}

static bool irregular(pf_gene_kind k)
{
    return k == PF_GENE_IMPORTANCE || k == PF_GENE_ADAPTIVE;
}

/* A producer's execution depends on its consumer's too: with neither scheduled, the default
 * schedule fuses them; one scheduled and not the other breaks that differently. */
static void pair_features(const pf_program_static *ps, const pf_features *F, int s, double *z)
{
    int c = ps->stage[s].consumer;
    if (c < 0)
        return;
    z[P_ALONE_SET] = F->stage[s].exec_set && !F->stage[c].exec_set;
    z[P_CONSUMER_SET] = !F->stage[s].exec_set && F->stage[c].exec_set;
}

static void compute_features(const pf_stage_features *f, int s, double *z)
{
    bool tiled = f->tile0 > 0 || f->tile1 > 0;
    int small = f->tile0 > 0 && f->tile1 > 0 ? (f->tile0 < f->tile1 ? f->tile0 : f->tile1)
                                             : f->tile0 + f->tile1;
    z[P_SERIAL] = !f->parallel;
    z[P_VEC_NONE] = f->vectorize == 0;
    z[P_VEC_4] = f->vectorize == 4;
    z[P_VEC_16] = f->vectorize == 16;
    z[P_TILED] = tiled;
    z[P_TILE_SMALL] = tiled && small <= 16;
    z[P_UNROLL] = f->unroll > 0;
    z[P_REORDER] = f->reorder;
    z[P_AT] = f->at >= 0;
    z[P_AT_SMALL] = f->at >= 0 && small <= 16;  /* the halo recomputed in small tiles */
    z[P_SLIDE] = f->slide;
    z[P_TILE_NARROW] = f->tile0 > 0 && f->vectorize > f->tile0;
    z[P_IMPORTANCE] = f->kind == PF_GENE_IMPORTANCE;
    z[P_ADAPTIVE] = f->kind == PF_GENE_ADAPTIVE;
    z[P_LOOP_PERF] = f->kind >= PF_GENE_STEP;
    z[P_INNER_RANDOM] = f->inner_random;
    z[P_CHANNELS] = f->channels;
    z[P_LOG_FRAC] = log(f->frac);
    /* Skipping along x breaks the vector lanes: a sample costs more than in a dense row. */
    z[P_LOG_SX] = f->grid[0] > 1 ? log(f->grid[0]) : 0;
    z[P_LOG_SY] = f->grid[1] > 1 ? log(f->grid[1]) : 0;
    /* ... and the more so the wider the vector (bench_lanes: at 256x192 a grid of x spacing 4
     * or more runs faster at 8 lanes than at 16). Without it a median run's one slow 16-lane
     * `grid 8 2 1` put its exact program at 16 lanes at 2.9x the exact time (1.8x with it). */
    z[P_VEC_SX] = f->vectorize > 0 ? log2(f->vectorize / 8.0) * z[P_LOG_SX] : 0;
    z[P_BASE(s)] = 1;
    z[P_EXEC_SET(s)] = f->exec_set;
}

static void fill_features(const pf_stage_features *f, double *z)
{
    z[P_R_NEAREST] = f->recon == PF_RECON_NEAREST;
    z[P_R_LINEAR] = f->recon == PF_RECON_LINEAR;
    z[P_R_GAUSS] = f->recon == PF_RECON_GAUSSIAN;
    z[P_R_GAUSS_SV] = f->recon == PF_RECON_GAUSSIAN_SV;
    z[P_R_NONE] = f->recon == PF_RECON_NONE;
    z[P_R_IRREGULAR] = irregular(f->kind);
    /* a Gaussian's support grows with sigma times the spacing, its cost with the square */
    z[P_R_LOG_KERNEL] = f->sigma > 0 ? 2 * log(f->sigma * f->spacing) : 0;
    z[P_R_LOG_FRAC] = log(f->frac);
    z[P_R_CHANNELS] = f->channels;  /* the other channels copied from the reference */
}

/* A reader r of on-demand stage s interpolates in dimension d unless s keeps every point
 * there, or r reads it unshifted and computes only points on s's grid in d. */
static void interp_features(const pf_program_static *ps, const pf_features *F, int r, int s,
                            double *z)
{
    const pf_stage_features *fs = &F->stage[s], *fr = &F->stage[r];
    unsigned aligned = ps->aligned[r * ps->n_stages + s];
    z[P_INTERP] = 1;
    for (int d = 0; d < PF_BUFFER_MAX_DIMS; d++) {
        int p = fs->grid[d], q = fr->grid[d];
        bool interp = p != 1 && !((aligned >> d & 1) && p > 0 && q > 0 && q % p == 0);
        if (interp)
            z[d == 0 ? P_INTERP_X : P_INTERP_Y] = 1;
    }
}

/* Whether the stage has a filling term: it is sampled and its skipped points are filled
 * (stored reconstruction; on demand, the store at a pipeline output). */
static bool fills(const pf_stage_features *f)
{
    return f->kind != PF_GENE_EXACT && f->kind < PF_GENE_STEP && !f->on_demand &&
           (f->frac < 1 || f->channels);
}

/* The terms of one candidate: returns their count; off[k] and z[k * d ...] filled. */
static int candidate_terms(const pf_time_model *m, const pf_features *F, double *off, double *z)
{
    const pf_program_static *ps = m->ps;
    int d = m->d, n = 0, S = ps->n_stages;
    double points = ps->total;
    memset(z, 0, sizeof *z * (size_t)d * (size_t)(1 + S * (2 + S)));
    off[n] = 0;
    z[(size_t)n++ * d + P_OVERHEAD] = 1;
    for (int s = 0; s < ps->n_stages; s++) {
        const pf_stage_features *f = &F->stage[s];
        const pf_stage_static *st = &ps->stage[s];
        off[n] = log(st->share) + log(f->frac);
        compute_features(f, s, z + (size_t)n * d);
        pair_features(ps, F, s, z + (size_t)n++ * d);
        if (fills(f)) {
            off[n] = log(st->points / points);
            fill_features(f, z + (size_t)n++ * d);
        }
        for (int r = 0; f->on_demand && r < S; r++) {
            /* the interpolations: every read of it by what its readers compute */
            double reads = ps->stage[r].points * F->stage[r].frac * ps->reads_of[r * S + s];
            if (reads <= 0)
                continue;
            off[n] = log(reads / points);
            interp_features(ps, F, r, s, z + (size_t)n++ * d);
        }
    }
    return n;
}

int pf_time_model_fit(pf_time_model *m, const pf_features *f, const double *time, int n)
{
    int per = 1 + m->ps->n_stages * (2 + m->ps->n_stages), d = m->d;
    int *first = pf_xmalloc(sizeof *first * (size_t)(n + 1));
    double *off = pf_xmalloc(sizeof *off * (size_t)per * (size_t)(n + 1));
    double *z = pf_xmalloc(sizeof *z * (size_t)per * (size_t)d * (size_t)(n + 1));
    int k = 0;
    for (int i = 0; i < n; i++) {
        first[i] = k;
        double *zt = pf_xmalloc(sizeof *zt * (size_t)per * (size_t)d);
        int t = candidate_terms(m, &f[i], off + k, zt);
        memcpy(z + (size_t)k * d, zt, sizeof *z * (size_t)t * (size_t)d);
        free(zt);
        k += t;
    }
    first[n] = k;
    double *prior = pf_xcalloc((size_t)d, sizeof *prior);
    prior[P_OVERHEAD] = log(0.02);
    /* Always from the prior, never from the last fit: the model is a function of the records
     * alone, so a resumed search refits the same one. */
    memcpy(m->theta, prior, sizeof *prior * (size_t)d);
    pf_sumexp_data D = { n, d, first, off, z };
    if (n > 0)
        pf_sumexp_fit(&D, time, m->lambda, prior, m->theta);
    m->fitted = n > 0;
    m->n_fit = n;
    free(prior);
    free(z);
    free(off);
    free(first);
    return 0;
}

double pf_time_model_predict(const pf_time_model *m, const pf_features *f)
{
    int per = 1 + m->ps->n_stages * (2 + m->ps->n_stages);
    double *off = pf_xmalloc(sizeof *off * (size_t)per);
    double *z = pf_xmalloc(sizeof *z * (size_t)per * (size_t)m->d);
    int first[2] = { 0, candidate_terms(m, f, off, z) };
    pf_sumexp_data D = { 1, m->d, first, off, z };
    double p = pf_sumexp_predict(&D, 0, m->theta);
    free(z);
    free(off);
    return p;
}
