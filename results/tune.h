/* `perfora tune` as a library: a search run in a run directory (results/rundir.h), driving the
 * GA (search/ga.h) one generation at a time through any evaluator (search/eval.h), with an
 * append-only record of every evaluation, a checkpoint after each generation, the frontiers at
 * the end (training frontier re-measured on the test split: the paper's Figure 5 protocol).
 *
 *   pf_tune *t = pf_tune_create("runs/blur", &cfg, &err);    // or pf_tune_resume("runs/blur")
 *   pf_evaluator *ev = pf_pool_new(&pf_tune_config_of(t)->eval, &pool_opts, &err);
 *   pf_tune_run(t, ev, &hooks, &err);
 *
 * A run killed at any point (kill -9 included) resumes with pf_tune_resume and loses at most
 * the generation in flight; even that generation's finished evaluations are reused, because
 * they are in evaluations.jsonl (the cache). */
#ifndef PF_RESULTS_TUNE_H
#define PF_RESULTS_TUNE_H

#include "search/evaluate.h"
#include "search/ga.h"

#include <signal.h>

/* The model-guided search (search/model.h, search/guide.h; docs/search.md §10): each
 * generation breeds pool x measure children, the models fitted to the records of the earlier
 * generations predict them, and only `measure` are measured. off: the released GA. */
typedef struct pf_tune_model_config {
    bool on;
    int measure;           /* children measured per generation (0: a fifth of the released
                              GA's new children, at least 1) */
    int pool;              /* children bred per child measured (20) */
    double explore;        /* share of the measured children chosen at random (0.25) */
    int lookahead;         /* pools bred from predicted parents after the first (ga.h) */
} pf_tune_model_config;

/* Multi-fidelity measurement (search/fidelity.h; docs/search.md §10), on when
 * eval.low_width > 0: each child is measured first on the training images at
 * eval.low_width x low_height (PF_SET_LOW) and at the run's resolution only when promoted. */
typedef struct pf_tune_fidelity_config {
    double margin;         /* promoted unless a low-fidelity frontier point with no more error
                              is faster than (1 - margin) x its low time (0.2) */
    double explore;        /* share promoted at random whatever their low measurement (0.1) */
} pf_tune_fidelity_config;

typedef struct pf_tune_config {
    pf_ga_params ga;
    pf_eval_config eval;
    pf_tune_model_config model;
    pf_tune_fidelity_config fidelity;
    double max_error;      /* error cap of the quality numbers (Lab units; default 10) */
    bool test;             /* re-measure the final training frontier on the test split */
    int confirm;           /* rounds of confirmation at the end (default 3; 0: none): each
                              measures again the training-frontier variants not yet confirmed
                              and the new measurement replaces the old (docs/search.md §5) */
    int confirm_samples;   /* timing samples per image of a confirmation (15: three times a
                              search measurement's; 0: the evaluation's `samples`) */
    char *source;          /* the program as the user named it (for messages and .sched) */
} pf_tune_config;

void pf_tune_config_default(pf_tune_config *c);
void pf_tune_config_free(pf_tune_config *c);

/* What the live progress line shows. */
typedef struct pf_tune_progress {
    int generation;        /* being evaluated (0-based); generations = the total */
    int generations;
    long done;             /* evaluations measured in this session and before */
    long total;            /* expected in the whole run (estimate) */
    double per_second;     /* evaluations per second in this session */
    double eta_s;          /* remaining, at that rate (NaN before the first) */
    int frontier;          /* training frontier size at the last generation's end */
    double best_speedup;   /* 1 / the lowest relative time with error <= max_error */
    double max_error;
    const char *phase;     /* "search", "confirm", "test" */
    const char *load;      /* the evaluator's workers (busy, idle, per node), or NULL */
} pf_tune_progress;

typedef struct pf_tune_hooks {
    void (*progress)(void *ctx, const pf_tune_progress *p);  /* after each evaluation */
    void (*log)(void *ctx, const char *line);                /* after each log line */
    void *ctx;
    /* Stop after this many generations of this session (tests; 0 = run to the end). */
    int stop_after;
    /* When it becomes non-zero (a signal handler sets it), the run stops without waiting for
     * the candidates in flight: the log is synced and pf_tune_run returns 1; --resume
     * continues. */
    volatile sig_atomic_t *stop;
} pf_tune_hooks;

typedef struct pf_tune pf_tune;

/* A new run in dir (created; must be empty or absent, else refused before anything is
 * written). Checks the program, params and images first, copies the program, writes
 * config.json last; a failure removes what it made. Holds dir's run lock (rundir.h) until
 * pf_tune_free. */
pf_tune *pf_tune_create(const char *dir, const pf_tune_config *cfg, pf_error *err);
/* An existing run: config, checkpoint, evaluations, each checked (docs/search.md, "The run
 * directory"; refusals name the file and field), under dir's run lock. `generations` > 0
 * extends or shortens what is left of the run (not below what was run; else the config's). */
pf_tune *pf_tune_resume(const char *dir, int generations, pf_error *err);
const pf_tune_config *pf_tune_config_of(const pf_tune *t);
/* The run directory's path (as given). */
const char *pf_tune_dir(const pf_tune *t);

/* Runs (or continues) the search, then writes the frontiers and summary. Returns 0, 1 when
 * hooks->stop ended it early, or -1. */
int pf_tune_run(pf_tune *t, pf_evaluator *ev, const pf_tune_hooks *hooks, pf_error *err);
void pf_tune_free(pf_tune *t);

/* The generation of a confirmation record: a training-frontier variant measured again at the
 * end of the search (the test split's records have generation -1). */
#define PF_GEN_CONFIRM (-2)

/* The training frontier of a run's records (docs/search.md §5): among the valid training
 * records of generations 0 to max_generation, by error, each whose slow end (time_hi) beats
 * the exact program (time 1) and every point of no more error before it; sorted by error.
 * With max_generation INT_MAX (the final frontier), a schedule's last confirmation record
 * replaces its earlier records. Returns the count; *out malloc'd. */
int pf_tune_front_of(const pf_eval_record *recs, int n_recs, int max_generation, int **out);
/* The same; with `screened`, records the screening set aside (one short sample per image,
 * spread unknown) take part too. A frontier never holds them: the confirmation rounds select
 * with them, so that one a fallen lucky point no longer dominates is measured in full. */
int pf_tune_front_select(const pf_eval_record *recs, int n_recs, int max_generation,
                         bool screened, int **out);

#endif
