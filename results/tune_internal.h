/* The state of a search run, shared by tune.c (the loop, resume), tune_config.c (config.json)
 * and tune_frontier.c (frontier files and summary). */
#ifndef PF_RESULTS_TUNE_INTERNAL_H
#define PF_RESULTS_TUNE_INTERNAL_H

#include "results/rundir.h"
#include "results/tune.h"
#include "search/strmap.h"

#include <stdio.h>

struct json_object;

struct pf_tune {
    char *dir;
    pf_run_lock lock;              /* held from create/resume to pf_tune_free */
    char config_hash[17];          /* pf_tune_config_hash of config.json, for checkpoints */
    char program_hash[17];         /* of program.pf, recorded in config.json */
    pf_tune_config cfg;
    pf_program *prog;
    pf_ga ga;
    pf_run_log log;
    FILE *logf;
    pf_eval_record *recs;          /* every record of evaluations.jsonl, in order */
    int n_recs, cap_recs;
    pf_strmap cache[PF_SET_COUNT]; /* canonical text -> index in recs */
    long next_id;
    long seen_lines;               /* checkpoint: lines whose train genomes are `seen` */
    bool finished;
    struct pf_tune_models *models; /* the model-guided search's, or NULL (tune_model.c) */
    pf_front_point *front;         /* the running training frontier (screening compares with it) */
    int n_front;
    bool front_changed;            /* since the evaluator last got it */
    bool confirming;               /* the evaluator has no frontier: every candidate is timed
                                      in full (the confirmation rounds) */
    /* this session */
    const pf_tune_hooks *hooks;
    pf_evaluator *ev;
    double t_start;
    long done_session;
    double best_time;              /* lowest valid train time with error <= max_error */
    int frontier_size;
};

/* tune_dir.c: a new run's directory (absent, or empty: else refused, nothing created) made
 * and locked; what a failed start created removed again (only once the directory was claimed:
 * a refused claim holds no lock and touches nothing); temporaries of killed writes. */
int pf_tune_claim_dir(pf_tune *t, bool *made, pf_error *err);
void pf_tune_undo_create(pf_tune *t, bool made);
int pf_tune_clean_temporaries(pf_tune *t);

/* tune_check.c: what resume accepts (messages name RUN/FILE and the field). */
uint64_t pf_tune_hash(const void *data, size_t n);
uint64_t pf_tune_config_hash(struct json_object *config);  /* without ga.generations */
void pf_tune_hash_text(uint64_t h, char out[17]);
int pf_tune_check_config(struct json_object *o, const char *file, pf_error *err);
/* Against t's config (ranges of generation, population size). */
int pf_tune_check_checkpoint(const pf_tune *t, struct json_object *o, const char *file,
                             pf_error *err);
int pf_tune_check_record(const pf_tune *t, const pf_eval_record *r, pf_error *err);

/* config.json */
struct json_object *pf_tune_config_to_json(const pf_tune *t);
int pf_tune_config_from_json(struct json_object *o, pf_tune_config *c, pf_error *err);

/* The model-guided search (tune_model.c). config.json's "model" (absent in runs made before it:
 * off); the models of a run, set up when it opens (NULL when off); at the start of a
 * generation, their fit to the records of the generations before it and the GA's guide; the
 * prediction made for a record's candidate, copied into the record before it is logged. */
struct json_object *pf_tune_model_config_json(const pf_tune_model_config *m);
int pf_tune_model_config_read(struct json_object *o, pf_tune_model_config *m, pf_error *err);
void pf_tune_model_open(pf_tune *t);
void pf_tune_model_prepare(pf_tune *t, int generation);
void pf_tune_model_annotate(const pf_tune *t, pf_eval_record *rec);
void pf_tune_model_close(pf_tune *t);

/* Multi-fidelity measurement (tune_fidelity.c): config.json's "fidelity" (written only when on;
 * absent: the defaults), and a generation's measurement when it is on: every new child on the
 * low-fidelity images, the promoted ones at the run's resolution, the GA told the full
 * measurement of a promoted child and the calibrated low one of the others. *fresh counts the
 * children measured at low fidelity, *cached those the low-fidelity cache held (log.txt's
 * fidelity line says how many were promoted). Returns 0, 1 on a stop, -1. */
struct json_object *pf_tune_fidelity_config_json(const pf_tune_fidelity_config *f);
int pf_tune_fidelity_config_read(struct json_object *o, pf_tune_fidelity_config *f,
                                 pf_error *err);
int pf_tune_fidelity_generation(pf_tune *t, pf_evaluator *ev, int generation, int *fresh,
                                int *cached, pf_error *err);
/* summary.json's "fidelity" (NULL when off): resolutions, counts and the measured relation. */
struct json_object *pf_tune_fidelity_summary(const pf_tune *t);

/* Waits for `pending` records; each goes to the log, the cache and fn (tune_run.c's collect).
 * Returns 0, 1 when a stop was requested, -1. */
typedef void (*pf_tune_arrival_fn)(pf_tune *t, int rec, void *ctx);
int pf_tune_collect(pf_tune *t, pf_evaluator *ev, int pending, int generation,
                    const char *phase, pf_tune_arrival_fn fn, void *ctx, pf_error *err);

/* Keeps a record (taking ownership of *r, which is left empty): cache, ids, best time. */
void pf_tune_add_record(pf_tune *t, pf_eval_record *r);

/* A line in log.txt and to the log hook. */
void pf_tune_log(pf_tune *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The training frontier: indices into t->recs (valid train records, rank 0), sorted by error.
 * Returns the count; *out malloc'd. */
int pf_tune_train_front(const pf_tune *t, int **out);
/* Writes frontier-train.tsv and frontier/variant-NNN.sched (stale ones removed). */
int pf_tune_write_train(pf_tune *t, const int *front, int n, pf_error *err);
/* Writes frontier-test.tsv and summary.json; test[i] is the index of front[i]'s test record
 * (or -1). */
int pf_tune_write_final(pf_tune *t, const int *front, const int *test, int n, pf_error *err);

double pf_round7(double v);

#endif
