/* What a candidate's schedule and the checked program tell about its cost and its error before
 * anything is compiled: per stage the share of its lattice that is computed, the image reads
 * (taps) and bytes per sample, the reconstruction and the execution gene; per perforated loop
 * the gene's sampling. The search's models (search/model.h) are fitted on these. This is the
 * one file that reads schedules and programs for the models, so that it alone changes when the
 * plan (issue 21) exposes them.
 *
 *   blur, "loop_temp grid 4 1 1 reconstruct on-demand linear":
 *     loop_temp:   frac 0.25, taps 17, on demand (loop_output's 17 reads interpolate)
 *     loop_output: frac 1,    taps 17 */
#ifndef PF_SEARCH_MODEL_FEATURES_H
#define PF_SEARCH_MODEL_FEATURES_H

#include "perforate/schedule.h"

/* What never changes for a program: per stage its static cost. */
typedef struct pf_stage_static {
    double taps;        /* image reads per sample (constant-bound reductions and for loops
                           multiply their bodies; both branches of an if count) */
    double bytes;       /* 4 x (reads + writes) per sample */
    double points;      /* lattice points at a nominal input size (512 x 384 x 3) */
    double share;       /* points x (taps + 1) over the sum of that over the stages: the
                           stage's share of the exact program's work, as a prior */
    int readers;        /* stages that read its image */
    int consumer;       /* its only reader, the stage it may be computed at (-1: none) */
    bool alone;         /* the default computes no stage at it nor it at one, whatever the
                           approximations: an exec gene changes nothing but what its own
                           fields say (exec_set) */
    bool output;        /* it writes a pipeline output (on demand runs as store there) */
    int lanes;          /* the default schedule's vector width (pf_default_width): a gene of
                           8 lanes on the bilateral filter's pixels changes 16 on AVX-512 */
} pf_stage_static;

typedef struct pf_program_static {
    int n_stages;
    pf_stage_static *stage;   /* [n_stages] */
    double total;             /* sum over the stages of points x (taps + 1): the work unit */
    double *reads_of;         /* [r * n_stages + s]: reads of stage s's image per sample of
                                 stage r (r != s) */
    unsigned *aligned;        /* [r * n_stages + s]: bit d set when every read of s's image by
                                 stage r has r's variable d, unshifted, as index d (a reader
                                 sampled on a multiple of s's spacing in d reads stored
                                 samples there, with no interpolation) */
    int n_loops;
    int *loop_stage;          /* [n_loops]: the stage of a stage loop, the enclosing stage of a
                                 for loop */
    int *loop_channels;       /* [n_loops]: colour channels of a per-channel stage (3), else 1 */
} pf_program_static;

/* wide_lanes: the floats of the target's preferred vector registers (pf_plan_target), whose
 * default schedule the candidates without an execution gene run. */
void pf_program_static_init(const pf_program *prog, int wide_lanes, pf_program_static *ps);
void pf_program_static_free(pf_program_static *ps);

/* One stage of one candidate. */
typedef struct pf_stage_features {
    double frac;         /* computed share of the lattice (1: exact), for loops inside included */
    int grid[PF_BUFFER_MAX_DIMS];  /* per variable: the grid spacing (1: every point), or 0
                                      when sampled irregularly (adaptive, importance, random) */
    pf_gene_kind kind;   /* the stage loop's gene */
    pf_recon_kind recon; /* NONE when exact or not reconstructed */
    bool on_demand;      /* its readers interpolate (not on a pipeline output: stored there) */
    bool channels;       /* channel subsampling */
    double sigma;        /* of a Gaussian reconstruction, else 0 */
    double spacing;      /* grid: the geometric mean spacing; else 1 / sqrt(frac) */
    bool inner_random;   /* a `for` loop inside is perforated at random: a hash per iteration
                            and a count that differs between pixels (a median's window then
                            misses the vector network: 20x the exact time, docs/bench.md) */
    /* the execution gene, or the default's where it has none (exec_set false: the default
       schedule, or a stage that runs alone, whose exec gene changes nothing but what its
       fields say) */
    bool exec_set, parallel, reorder, slide;
    int at;              /* -1 root, PF_EXEC_INLINE, or the consumer stage */
    int vectorize, unroll, tile0, tile1;  /* computed at a consumer: the consumer's tiles */
} pf_stage_features;

typedef struct pf_features {
    int n_stages;
    pf_stage_features *stage;  /* [n_stages] */
} pf_features;

/* The features of schedule s (valid for prog). */
void pf_features_of(const pf_program *prog, const pf_program_static *ps, const pf_schedule *s,
                    pf_features *out);
void pf_features_free(pf_features *f);

/* The share of loop `loop`'s iterations (or lattice points) that gene g computes: grid
 * 1 / prod(spacings) (x 1/3 with one of 3 channels), adaptive, importance and random their
 * fraction, step 1/N, first/last F, channels C/3; 1 for exact. */
double pf_gene_fraction(const pf_program_static *ps, int loop, const pf_approx_gene *g);
/* Whether gene g computes every point of its loop, so the exact program's output: the exact
 * gene, and a grid of spacings 1, `step 1`, `first 1`, `last 1` or `random 1` on every
 * channel. (Adaptive and importance sampling are not counted, whatever their fraction.) */
bool pf_gene_computes_all(const pf_program_static *ps, int loop, const pf_approx_gene *g);

/* Features of one approximation gene for the error model, dense, PF_GENE_NFEAT of them:
 * log computed share, per kind and reconstruction indicators, one unused (x[10]: on demand,
 * which changes no pixel), channels, log sigma, anisotropy of a grid. */
#define PF_GENE_NFEAT 14
void pf_gene_features(const pf_program_static *ps, int loop, const pf_approx_gene *g, double *x);

#endif
