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

/* config.json */
struct json_object *pf_tune_config_to_json(const pf_tune *t);
int pf_tune_config_from_json(struct json_object *o, pf_tune_config *c, pf_error *err);

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
