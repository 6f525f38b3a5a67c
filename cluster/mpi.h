/* The search over MPI: `mpirun -np N perfora tune ...` runs the same search as `perfora tune`.
 * Rank 0 runs the genetic algorithm and owns the run directory; every other rank is a worker
 * that evaluates the candidates rank 0 sends it, one at a time (docs/search.md, "Running on a
 * cluster"):
 *
 *   rank 0: pf_tune_run(t, pf_mpi_master_new(...))   -- candidates as schedule text -->
 *   rank r: pf_mpi_worker_run(...): a local pool of one worker process (cluster/pool.h)
 *           <-- records as JSON (search/eval.h), heartbeats --
 *
 * Isolation: a worker rank never runs generated code. It starts its evaluation process with
 * posix_spawn (a fresh `perfora __pool-worker`: forking a process after MPI_Init is unsafe),
 * so a crash or hang in a candidate kills only that process, which the rank restarts.
 * Nodes: ranks are grouped by host (MPI_Comm_split_type); the worker processes of a node share
 * the node protocol (search/node.h) on a node-local lock file, so a candidate is timed with the
 * node quiet, against the exact program on that node.
 * Waiting: a blocking MPI wait spins at 100% of a core in Open MPI and MPICH, which would take
 * a core from a candidate timed on that node; ranks wait with MPI_Iprobe and sleeps instead.
 * Faults: a worker silent past the deadline (dead, or hung outside its evaluation process)
 * is dropped and its candidate dispatched again; the run finishes with the others. */
#ifndef PF_CLUSTER_MPI_H
#define PF_CLUSTER_MPI_H

#include "search/evaluate.h"

/* The number of processes the launcher started, from the environment (Open MPI:
 * OMPI_COMM_WORLD_SIZE; MPICH's hydra and Slurm's PMI: PMI_SIZE; PMIx: PMIX_SIZE); 0 when
 * perfora was not started by an MPI launcher. Read before MPI_Init, which runs only when
 * this is above 1. */
int pf_mpi_launched_size(void);

typedef struct pf_mpi_options {
    double deadline_s;     /* a busy worker silent this long is dropped (60) */
    double watchdog_ms;    /* a worker rank's evaluation process silent this long is killed
                              and its candidate recorded invalid (0: 600000) */
    bool broadcast_data;   /* rank 0 sends the program and the images: no shared filesystem */
} pf_mpi_options;

typedef struct pf_mpi pf_mpi;

/* MPI_Init and the node communicator. Fails when perfora was started by the launcher of
 * another MPI (every rank would see a world of one). */
pf_mpi *pf_mpi_start(pf_error *err);
int pf_mpi_rank(const pf_mpi *m);
int pf_mpi_size(const pf_mpi *m);

/* Rank 0: sends every worker the evaluation config (and the data with broadcast_data), waits
 * until each has loaded it or failed, and returns the evaluator over those that started. */
pf_evaluator *pf_mpi_master_new(pf_mpi *m, const pf_eval_config *cfg, const char *run_dir,
                                const pf_mpi_options *opt, pf_error *err);
/* Tells the workers to exit, waits for their goodbyes and destroys the evaluator. Returns the
 * workers lost during the run or silent at the end (pf_mpi_end needs to know). */
int pf_mpi_master_close(pf_evaluator *ev);

/* Any other rank: serves rank 0 until it says stop. */
int pf_mpi_worker_run(pf_mpi *m, pf_error *err);

/* Ends MPI: MPI_Finalize, or, when a worker was lost, MPI_Abort with status 0 (MPI_Finalize
 * would wait for the lost rank forever; everything is written by then). */
void pf_mpi_end(pf_mpi *m, bool lost);
/* Ends every rank with this status (rank 0 could not start or finish the run). */
_Noreturn void pf_mpi_abort(pf_mpi *m, int status);

/* Test hook, read by the worker ranks: PF_MPI_TEST_HOOK="exit:R:K" makes rank R exit (without
 * a word, as a node that dies) when its (K+1)-th candidate arrives; "instant" makes every
 * worker answer at once with a made-up record (the master's capacity, bench_mpi). */
#define PF_MPI_TEST_HOOK_ENV "PF_MPI_TEST_HOOK"

#endif
