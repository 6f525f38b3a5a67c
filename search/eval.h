/* The evaluation interface: the narrow waist between the search and whatever measures
 * candidates. The search submits a genome as its canonical schedule text and gets back one
 * result record; an evaluator may be a local process pool (cluster/pool.h), an in-process
 * worker (search/evaluate.h) or MPI ranks (cluster/mpi.h). Records travel as one JSON object (the
 * same object as a line of the run directory's evaluations.jsonl).
 *
 *   pf_evaluator_submit(ev, 7, PF_SET_TRAIN, "# perfora schedule 1\nloop_temp grid 4 1 1 ...")
 *   pf_evaluator_wait(ev, &rec)  ->  rec.id 7, rec.valid, rec.time 0.41, rec.error 2.3, ... */
#ifndef PF_SEARCH_EVAL_H
#define PF_SEARCH_EVAL_H

#include "base/error.h"

#include <signal.h>
#include <stdbool.h>

/* Which images a candidate is measured on (the manifest's splits). PF_SET_LOW: the training
 * split at the low-fidelity resolution of a multi-fidelity search (pf_eval_config.low_width),
 * timed briefly: a candidate is measured there first and promoted to PF_SET_TRAIN only when it
 * stays promising (docs/search.md §10). */
typedef enum pf_image_set { PF_SET_TRAIN, PF_SET_TEST, PF_SET_LOW, PF_SET_COUNT } pf_image_set;
const char *pf_image_set_name(pf_image_set s);  /* "train", "test", "low" */
/* The set a name says ("train" for anything unknown, as records older than the names were). */
pf_image_set pf_image_set_parse(const char *name);

/* One image's measurement. */
typedef struct pf_eval_image {
    double t_exact_ms;  /* median time of one call of the exact program */
    double t_cand_ms;   /* median time of one call of the candidate */
    double rel_time;    /* median over samples of t_cand / t_exact of the same pair */
    double rel_lo, rel_hi;  /* the paired ratios' first and third quartiles (= rel_time with
                               one sample): the timing's spread */
    double error;       /* the paper's mean Lab Delta E76 on 8-bit outputs */
    double psnr;        /* dB, capped at 100 (identical images) */
    double ssim;
    int runs;           /* candidate calls per timing sample (a sample lasts >= min_sample_ms) */
    int samples;        /* timing samples (1 for a candidate far slower than the exact one) */
} pf_eval_image;

/* The result of evaluating one candidate on one image set. */
typedef struct pf_eval_record {
    long id;                /* the submitter's tag */
    pf_image_set set;
    char *schedule;         /* canonical schedule text: the cache key */
    bool valid;
    char *reason;           /* why invalid (compile error, crash, timeout, NaN...); NULL if valid */
    int n_images;
    pf_eval_image *images;  /* [n_images], in the order of the evaluator's image list */
    double time;            /* mean of rel_time over images (+inf when invalid) */
    double time_lo, time_hi;  /* means of rel_lo and rel_hi: the spread of `time` */
    double error;           /* mean error over images (+inf when invalid) */
    double psnr, ssim;      /* means */
    int worker;             /* which worker measured it (-1: none, e.g. a cache hit) */
    int rank;               /* the MPI rank of that worker (0 in a local run; -1: unknown) */
    char *host;             /* the node it ran on (NULL: unknown) */
    int generation;         /* set by the search: the generation (-1: final re-measurement) */
    double screen_time;     /* the screening's mean relative time (NaN: not screened) */
    double pred_time;       /* the search's models' prediction of time and error, made before
                               the candidate was measured (NaN: none; search/model.h) */
    double pred_error;
    bool full_timing;       /* time and images[] come from the full timing (samples x
                               min_sample_ms), not from the screening alone */
    double compile_ms;      /* JIT compile */
    double run_ms;          /* untimed first calls that produced the outputs */
    double error_ms;        /* error metrics */
    double timing_ms;       /* the timed, interleaved calls (screening and full timing) */
    double build_wait_ms;   /* waiting for the node's timing to end before building */
    double build_cpu_ms;    /* CPU time of building (compile, outputs, error; all threads): what
                               a build takes on a core of its own */
    double lock_wait_ms;    /* waiting for the turn to time (the node quiet) */
    double wall_ms;         /* the whole evaluation, as the worker saw it */
} pf_eval_record;

void pf_record_init(pf_eval_record *r);
void pf_record_free(pf_eval_record *r);
void pf_record_copy(pf_eval_record *dst, const pf_eval_record *src);
/* Marks r invalid with a reason (time and error +inf). */
void pf_record_set_invalid(pf_eval_record *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One JSON object on one line (no newline), by json-c: malloc'd. Non-finite numbers are
 * written as null. */
char *pf_record_to_json(const pf_eval_record *r);
/* Parses what pf_record_to_json wrote (nulls back to +inf or NaN). */
int pf_record_from_json(const char *text, pf_eval_record *r, pf_error *err);

/* A point of the training frontier as the search knows it: what a worker compares a screened
 * candidate with (docs/search.md, "Screening"). */
typedef struct pf_front_point {
    double error, time;
} pf_front_point;

/* ---- the evaluator ---- */

typedef struct pf_evaluator pf_evaluator;
typedef struct pf_evaluator_ops {
    /* Queues one candidate; never blocks on the evaluation itself. */
    int (*submit)(pf_evaluator *ev, long id, pf_image_set set, const char *schedule,
                  pf_error *err);
    /* Blocks until a submitted candidate is done and moves its record into *out (initialised
     * here). Returns 1, 0 when nothing is in flight, or -1 when the evaluator itself failed
     * (a candidate's failure is a record, not an error). */
    int (*wait)(pf_evaluator *ev, pf_eval_record *out, pf_error *err);
    /* One line on how it works and how timing is serialized, for the run's log. */
    const char *(*describe)(pf_evaluator *ev);
    void (*destroy)(pf_evaluator *ev);
    /* Optional (NULL: ignored). The current training frontier, sent with the candidates
     * dispatched from now on (their screening skips the full timing of a candidate that it
     * cannot put on the frontier). */
    void (*set_frontier)(pf_evaluator *ev, const pf_front_point *pts, int n);
    /* Optional (NULL: ignored). Timing samples per image of the candidates submitted from now
     * on (0: the evaluation config's `samples`): a confirmation takes more (docs/search.md
     * §5). */
    void (*set_samples)(pf_evaluator *ev, int samples);
    /* Optional (NULL: none). A short line on the workers for the progress line: busy and
     * idle, evaluations per second per node. */
    const char *(*load)(pf_evaluator *ev);
    /* Optional (NULL: none). The next event worth a line in the run's log (a worker lost, its
     * candidate dispatched again), or NULL; valid until the next call. */
    const char *(*note)(pf_evaluator *ev);
} pf_evaluator_ops;

struct pf_evaluator {
    const pf_evaluator_ops *ops;
    /* Set by the search to its stop request (a signal handler's flag), or NULL: once it is
     * non-zero, wait gives up (returns -1) instead of waiting for the candidates in flight. */
    volatile sig_atomic_t *stop;
};

static inline int pf_evaluator_submit(pf_evaluator *ev, long id, pf_image_set set,
                                      const char *schedule, pf_error *err)
{
    return ev->ops->submit(ev, id, set, schedule, err);
}
static inline int pf_evaluator_wait(pf_evaluator *ev, pf_eval_record *out, pf_error *err)
{
    return ev->ops->wait(ev, out, err);
}
static inline const char *pf_evaluator_describe(pf_evaluator *ev)
{
    return ev->ops->describe(ev);
}
static inline void pf_evaluator_set_frontier(pf_evaluator *ev, const pf_front_point *pts,
                                             int n)
{
    if (ev->ops->set_frontier)
        ev->ops->set_frontier(ev, pts, n);
}
static inline void pf_evaluator_set_samples(pf_evaluator *ev, int samples)
{
    if (ev->ops->set_samples)
        ev->ops->set_samples(ev, samples);
}
static inline const char *pf_evaluator_load(pf_evaluator *ev)
{
    return ev->ops->load ? ev->ops->load(ev) : NULL;
}
static inline const char *pf_evaluator_note(pf_evaluator *ev)
{
    return ev->ops->note ? ev->ops->note(ev) : NULL;
}
static inline void pf_evaluator_destroy(pf_evaluator *ev)
{
    if (ev)
        ev->ops->destroy(ev);
}

#endif
