/* The genetic algorithm as released (paper-apps.md §9), one generation at a time, so that the
 * caller owns evaluation, logging and checkpoints:
 *
 *   pf_ga_propose(ga)            the next generation: elites (measured) + new children
 *   ... measure ga->next[i] for every i with !measured (pf_ga_measured) ...
 *   pf_ga_commit(ga)             it becomes the population; pf_ga_to_json for the checkpoint
 *
 * Fitness is (error, time) with time = the mean relative time over the training images; the
 * released GA summed them, which ranks identically (docs/search.md, "Fitness"). */
#ifndef PF_SEARCH_GA_H
#define PF_SEARCH_GA_H

#include "search/genome.h"
#include "search/strmap.h"

#include <stdint.h>

struct json_object;

typedef struct pf_ga_params {
    int population;        /* N (paper: 100) */
    int generations;       /* including the initial one (paper: 200) */
    int tournament;        /* tournament size (script.sh: 2) */
    double elite_frac;     /* kept with their measurements (0.3) */
    double mutant_frac;    /* mutants of tournament winners (0.3); crossover fills the rest */
    uint64_t seed;
    bool seeds;            /* structured seeds in the initial population (search/genome.h) */
    pf_genome_params genome;
} pf_ga_params;

pf_ga_params pf_ga_params_default(void);

/* Where a member of a generation came from. */
typedef enum pf_ga_origin { PF_ORIGIN_INITIAL, PF_ORIGIN_ELITE, PF_ORIGIN_MUTANT,
                            PF_ORIGIN_CROSSOVER } pf_ga_origin;

typedef struct pf_ga_member {
    char *text;            /* canonical schedule text */
    pf_ga_origin origin;
    pf_schedule sched;
    bool measured;
    double time, error;    /* +inf when invalid */
    double pred_time, pred_error;  /* the models' prediction before measuring (NaN: none) */
} pf_ga_member;

struct pf_ga;
/* Model-guided breeding (search/guide.h, docs/search.md §10): each generation keeps the
 * whole measured population, breeds pool x measure children (x (1 + lookahead)), and
 * `choose` picks at most `measure` of them to measure (their indices into pool, written to
 * chosen; returns the count; it may note its predictions in the pool members); the commit
 * keeps the best N by Pareto rank. choose NULL: the released GA. */
typedef struct pf_ga_guide {
    int (*choose)(void *ctx, struct pf_ga *ga, pf_ga_member *pool, int n_pool, int k,
                  int *chosen);
    void *ctx;
    int measure;           /* children measured per generation */
    int pool;              /* children bred per child measured */
    /* Lookahead (0: off): that many more pools are bred, each from the best N of the
     * measured population and the pools before it ranked by their predictions, so that the
     * children chosen may be several mutations away from what was measured (as Ansor and
     * MetaSchedule evolve on their cost model before measuring). predict fills pred_time and
     * pred_error of the members that have none; choose then sees every pool. */
    int lookahead;
    void (*predict)(void *ctx, pf_ga_member *m, int n);
} pf_ga_guide;

typedef struct pf_ga {
    pf_ga_params p;
    const pf_program *prog;
    pf_genome_ctx ctx;
    pf_rng rng;
    int generation;        /* of `pop`; -1 before the initial population is committed */
    int n_pop;
    pf_ga_member *pop;
    int n_next;            /* the proposed generation */
    pf_ga_member *next;
    pf_strmap seen;        /* every genome text ever proposed: duplicates are rejected */
    pf_strmap seen_code;   /* the same texts without their genes that skip nothing
                              (pf_ga_same_code_text): guided breeding rejects a child that
                              would run the code of one seen */
    long rejected;         /* duplicates rejected so far (statistics) */
    pf_ga_guide guide;     /* model-guided breeding, or choose NULL */
} pf_ga;

void pf_ga_init(pf_ga *ga, const pf_program *prog, const pf_ga_params *p);
void pf_ga_free(pf_ga *ga);

/* Proposes the next generation into ga->next (the initial population when generation is -1:
 * the exact program with the default execution schedule plus random one-gene genomes). May
 * propose fewer than N when duplicates cannot be avoided. Returns n_next. */
int pf_ga_propose(pf_ga *ga);
void pf_ga_measured(pf_ga *ga, int i, double time, double error);
/* The proposed generation becomes the population; generation += 1. */
void pf_ga_commit(pf_ga *ga);

/* Adds a text to the seen set (rebuilding it on resume). */
void pf_ga_mark_seen(pf_ga *ga, const char *text);

/* Checkpoint state: generation, generator state, population with measurements. */
struct json_object *pf_ga_to_json(const pf_ga *ga);
/* Restores what pf_ga_to_json wrote into a ga initialised for the same program. */
int pf_ga_from_json(pf_ga *ga, struct json_object *o, pf_error *err);

/* Canonical text of a schedule (malloc'd). */
char *pf_schedule_text(const pf_program *prog, const pf_schedule *s);

/* Tournament (exposed for tests): the index, among n ranks, of the lowest rank among k
 * distinct random picks; ties go to the first picked. */
int pf_ga_tournament(pf_rng *r, const int *rank, int n, int k);

#endif
