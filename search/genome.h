/* The genetic operators on a genome, which is a pf_schedule: random approximation genes from
 * the released GA's templates (../shared/docs/paper-apps.md §9), random execution genes, the
 * released mutation and two-point crossover. Every genome an operator returns passes
 * pf_schedule_validate: operators draw, repair execution genes whose context changed, validate,
 * and redraw on failure (docs/search.md, "Genome").
 *
 *   exact ──initial──▶ "loop_temp grid 2 4 1 reconstruct store nearest"
 *         ──mutate───▶ "loop_temp grid 2 8 1 reconstruct store nearest"   (one spacing redrawn)
 *   a, b ──crossover─▶ loops lo..hi from b, the rest from a (execution genes travel with stages) */
#ifndef PF_SEARCH_GENOME_H
#define PF_SEARCH_GENOME_H

#include "perforate/schedule.h"
#include "search/rng.h"

#include <stdbool.h>

/* Which approximations the search may use (the paper's comparisons). */
typedef enum pf_search_mode {
    PF_MODE_FULL,  /* image perforation: the six foreach templates, loop perforation on for loops */
    PF_MODE_GRID,  /* grid sampling only on foreach loops (Figure 6) */
    PF_MODE_LOOP,  /* loop perforation everywhere: the baseline of Figure 5 (blue) */
    PF_MODE_COUNT
} pf_search_mode;

const char *pf_search_mode_name(pf_search_mode m);
int pf_search_mode_parse(const char *s, pf_search_mode *out);  /* -1 if unknown */

typedef struct pf_genome_params {
    pf_search_mode mode;
    bool hints;           /* reconstruct_hints: fixed reconstruction sigmas (script.sh: on) */
    double exec_rate;     /* probability that a mutation, or an initial genome, draws an
                             execution gene; 0 keeps the default execution schedule */
    double p_modify;      /* mutation redraws one parameter (released: 0.3) */
    double p_accept_for;  /* `add` accepts a for loop (released: 0.2) */
    bool gpu;             /* execution genes for a GPU target (`gpu` tiles and threads, stages
                             at their consumer's blocks): set from the evaluation's backend,
                             not stored in the run's config */
} pf_genome_params;

/* The released defaults (hints on as in script.sh) and exec_rate 0.25. */
pf_genome_params pf_genome_params_default(void);

typedef struct pf_genome_ctx {
    const pf_program *prog;
    pf_genome_params p;
    pf_perforable *info;  /* [prog->n_loops] */
} pf_genome_ctx;

void pf_genome_ctx_init(pf_genome_ctx *c, const pf_program *prog, const pf_genome_params *p);
void pf_genome_ctx_free(pf_genome_ctx *c);

/* A fresh valid approximation gene for `loop` from the mode's templates (EXACT only when no
 * template fits the loop). */
void pf_genome_random_gene(const pf_genome_ctx *c, pf_rng *r, int loop, pf_approx_gene *out);
/* Draws a fresh execution gene for `stage` into s; when it computes the stage at its consumer,
 * the consumer is made root and tiled in two dimensions so that compute-at is legal. Call
 * pf_genome_repair afterwards (the stage's approximation may still forbid compute-at). */
void pf_genome_random_exec(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s, int stage);
/* A random one-gene genome of the initial population (plus, with probability exec_rate, one
 * execution gene). */
void pf_genome_initial(const pf_genome_ctx *c, pf_rng *r, pf_schedule *out);
/* Up to max structured seeds (search/genome_seed.c): one grid lattice on every parallel stage
 * at once (spacings 4x4, 2x2, 8x8, then rows or columns alone), linear reconstruction, on
 * demand where one stage reads the image and it is not a table (constant extents); in loop
 * mode every S-th row instead. Derived from the program's shape only. Initialises out[0..n) (valid genomes); returns n. */
int pf_genome_seeds(const pf_genome_ctx *c, int max, pf_schedule *out);
/* Mutates s in place (released rules; see docs/search.md). s stays valid; it may come back
 * unchanged when no valid mutation was found in a bounded number of draws. */
void pf_genome_mutate(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s);
/* Two-point crossover over the loops in program order: one child (initialised here). */
void pf_genome_crossover(const pf_genome_ctx *c, pf_rng *r, const pf_schedule *a,
                         const pf_schedule *b, pf_schedule *child);

/* Up to max valid genomes one step from s in a sampling lattice (search/genome_near.c): per
 * grid gene each drawn spacing doubled or halved (1..8), the reconstruction on demand or
 * stored (linear, nearest); per step gene the step doubled or halved (1..16); per `for` loop
 * kept exact, step 2. Initialises out[0..n); returns n. */
int pf_genome_neighbours(const pf_genome_ctx *c, const pf_schedule *s, pf_schedule *out, int max);
/* Up to max valid genomes that are s with the execution genes of every stage taken from one of
 * the donors (each distinct execution schedule once; the default counts): an execution
 * schedule that suits one lattice of a frontier tends to suit its neighbours (the median's 16
 * lanes: 1.39x on the exact program, 1.4x on `grid 1 2 1`). Whole schedules, since the genes of
 * stages computed at one another work together (one stage's gene moved alone, blur's guided
 * runs measured 29 of 54 children with such genes and fell 18-27% behind the GA). Initialises
 * out[0..n); returns n. */
int pf_genome_exec_transplants(const pf_genome_ctx *c, const pf_schedule *s,
                               const pf_schedule *const *donors, int n_donors, pf_schedule *out,
                               int max);
/* Up to max valid genomes that are s with one stage sampled on an x-strided grid, which the
 * default computes at the root alone (pf_default_alone), at the other vector width (8 and 16
 * lanes; without an execution gene, the default's other width). At 256x192 on a 16-lane
 * host a grid of x spacing 4 or more runs faster at 8 lanes than at 16 (docs/bench.md,
 * bench_lanes): the bilateral filter's GA frontier had `loop_pixels grid 4 4` at 8 lanes, 0.21
 * of the exact time against the default's 0.24, which its guided runs' random execution genes
 * bred twice in 162 children and never on such a grid. Initialises out[0..n); returns n. */
int pf_genome_width_neighbours(const pf_genome_ctx *c, const pf_schedule *s, pf_schedule *out,
                               int max);

/* Makes execution genes consistent with the rest of s (compute-at whose consumer or own
 * approximation no longer allows it falls back to root; an invalid gene to the default), then
 * validates s. Returns 0 when s is valid. */
int pf_genome_repair(const pf_genome_ctx *c, pf_schedule *s, pf_error *err);

/* Number of approximated loops. */
int pf_genome_count(const pf_schedule *s);

#endif
