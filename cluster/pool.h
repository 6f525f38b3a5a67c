/* The local process pool: J worker processes (fork, or a fresh `perfora __pool-worker` where
 * the caller must not fork, as an MPI rank) behind the evaluation interface (search/eval.h).
 * Each worker loads the program and the images once, then measures the candidates the master
 * sends it over a socket; the master never runs generated code. A worker gets the next queued
 * candidate the moment it returns a record.
 *
 * Fault handling: a worker that dies (a crash in generated code, SIGALRM from its own run-time
 * limit, a kill) is reaped with waitpid, its candidate gets an invalid record with the reason,
 * and a fresh worker takes its place; a worker silent for longer than the watchdog (a compile
 * or an allocation that never returns) is killed with SIGKILL and handled the same way. Workers
 * die with the master (PR_SET_PDEATHSIG). The workers of the node share it by the node protocol
 * (search/node.h, on the evaluation config's lock_path): they build (compile, outputs, error)
 * together and time one at a time with the node quiet. */
#ifndef PF_CLUSTER_POOL_H
#define PF_CLUSTER_POOL_H

#include "search/evaluate.h"

typedef struct pf_pool_options {
    int jobs;              /* worker processes; 0: the number of online cores */
    double watchdog_ms;    /* a busy worker silent this long is killed (0: 600000) */
    const char *exe;       /* NULL: fork the workers; else start each as `exe __pool-worker`
                              (posix_spawn: no fork of a process that called MPI_Init) */
    int rank;              /* the MPI rank written into the records (0 in a local run) */
} pf_pool_options;

/* Starts the workers and waits until each has loaded the program and the training images
 * (a worker that fails there fails the pool with its message). */
pf_evaluator *pf_pool_new(const pf_eval_config *cfg, const pf_pool_options *opt,
                          pf_error *err);

/* pf_evaluator_wait with a limit: returns 2 when timeout_ms passed without a record. */
int pf_pool_wait_for(pf_evaluator *ev, pf_eval_record *out, double timeout_ms, pf_error *err);

/* Workers started so far, restarts included (tests: a crash restarts one). */
int pf_pool_spawned(const pf_evaluator *ev);

/* The worker started by `perfora __pool-worker FD PARENT_PID ID` (cli/main.c): reads its
 * evaluation config from the socket FD, then serves as a forked worker does. Never returns. */
_Noreturn void pf_pool_worker_exec_main(int argc, char **argv);

#endif
