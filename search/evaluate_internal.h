/* The evaluation worker's state, shared by evaluate.c (the phases of one evaluation) and
 * eval_worker.c (loading, references, the timing lock). */
#ifndef PF_SEARCH_EVALUATE_INTERNAL_H
#define PF_SEARCH_EVALUATE_INTERNAL_H

#include "search/evaluate.h"
#include "run/pipeline_io.h"
#include "search/node.h"

typedef struct eval_image {
    char *path;
    const char *name;            /* the file name part of path, for messages */
    pf_io io;                    /* the input, and outputs every call overwrites */
    pf_image *ref[PF_IO_MAX];    /* the exact program's outputs */
    double t_exact_ms;           /* one exact call, measured when the split was prepared */
    int runs;                    /* calls per timing sample */
} eval_image;

typedef struct eval_set {
    bool ready;
    int n;
    eval_image *img;
} eval_set;

struct pf_eval_worker {
    pf_eval_config cfg;
    int id;
    pf_program *prog;            /* loaded here; nothing writes it after checking */
    pf_param_values params;
    pf_plan_target target;       /* this machine's, for every plan */
    pf_plan *exact_plan;         /* the exact program with the default schedule */
    pf_variant *exact;
    eval_set sets[PF_SET_COUNT];
    pf_node node;                /* the node protocol (fd -1: none) */
    pf_eval_timer_fn timer;      /* pf_variant_time_calls unless a test fakes the clock */
    void *timer_ctx;
    int samples;                 /* of the candidates evaluated next (0: cfg.samples) */
    pf_front_point *front;       /* the training frontier the search last sent */
    int n_front;
    bool alarms;
    pf_eval_heartbeat_fn beat;
    void *beat_ctx;
    char timing_error[256];      /* why the last timed call that failed did (its record says) */
    char hook_kind[16];          /* PF_SEARCH_TEST_HOOK, split */
    char *hook_text;
};

/* The compile options of the worker's variants (exact and candidates): its backend, and one
 * compile thread when the worker shares a node's timing lock (as every `perfora tune` worker
 * does): the workers already compile on every core, and a compile's second thread would slow
 * another worker's timed runs. */
pf_compile_options pf_eval_compile_options(const pf_eval_worker *w);
/* `calls` calls of v through the worker's clock; their time (ms), or -1 on a failed call. */
double pf_eval_time_calls(pf_eval_worker *w, pf_variant *v, const pf_buffer *bufs, int calls,
                          bool exact, pf_error *err);

#endif
