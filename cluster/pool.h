/* The local process pool: J worker processes (fork) behind the evaluation interface
 * (search/eval.h). Each worker loads the program and the images once, then measures the
 * candidates the master sends it over a socket; the master never runs generated code.
 *
 * Fault handling: a worker that dies (a crash in generated code, SIGALRM from its own run-time
 * limit, a kill) is reaped with waitpid, its candidate gets an invalid record with the reason,
 * and a fresh worker takes its place; a worker silent for longer than the watchdog (a compile
 * or an allocation that never returns) is killed with SIGKILL and handled the same way. Workers
 * die with the master (PR_SET_PDEATHSIG). Timing is serialized between the workers of this node
 * by the flock(2) lock of the evaluation config (lock_path), compiles overlap. */
#ifndef PF_CLUSTER_POOL_H
#define PF_CLUSTER_POOL_H

#include "search/evaluate.h"

typedef struct pf_pool_options {
    int jobs;              /* worker processes; 0: the number of online cores */
    double watchdog_ms;    /* a busy worker silent this long is killed (0: 600000) */
} pf_pool_options;

/* Starts the workers and waits until each has loaded the program and the training images
 * (a worker that fails there fails the pool with its message). */
pf_evaluator *pf_pool_new(const pf_eval_config *cfg, const pf_pool_options *opt,
                          pf_error *err);

/* Workers started so far, restarts included (tests: a crash restarts one). */
int pf_pool_spawned(const pf_evaluator *ev);

#endif
