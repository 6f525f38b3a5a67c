/* The node protocol: how the evaluation workers of one machine (a node) share it, so that a
 * candidate is timed with the node quiet while everything else runs on every core.
 *
 * An evaluation has two kinds of work. Building (compile, the untimed calls that produce the
 * outputs, the error metrics) runs on all workers at once; timing runs alone: while a
 * candidate is timed no other worker of the node compiles, runs generated code or computes
 * metrics, so the timed code has every core it is meant to use. Timing goes first: once a
 * worker wants to time, no new build starts on the node; the builds under way finish, the
 * waiting workers time one after the other, then the node builds again. A node thus cycles
 * between "every worker builds its candidate" and "the candidates are timed one at a time":
 *
 *   worker A: [build c1.....]  wait    [time c1]                [build c4....]
 *   worker B: [build c2..]  wait            [time c2]           [build c5..]
 *   worker C:        (gets c3: waits: the node is timing)  [build c3......]
 *
 * Two byte-range locks on one file (open file description locks, fcntl F_OFD_SETLKW): byte 0
 * "queue", held shared by every worker that wants to time or is timing; byte 1 "node", held
 * shared while building and exclusively while timing. A build begins by taking the queue
 * exclusively (so it waits until no worker wants to time), then the node shared, and lets the
 * queue go. The kernel drops a dead process's locks, so a crash never blocks the node.
 * Every worker of the node opens the same file: RUN/timing.lock for a local run, a node-local
 * file for MPI ranks (cluster/mpi.h). */
#ifndef PF_SEARCH_NODE_H
#define PF_SEARCH_NODE_H

#include "base/error.h"

typedef struct pf_node {
    int fd;  /* the lock file; -1: no protocol (a worker alone on its node) */
} pf_node;

/* Opens (creating) the lock file; path NULL gives a node without locks. */
int pf_node_open(pf_node *n, const char *path, pf_error *err);
void pf_node_close(pf_node *n);

/* Building: waits until no worker of the node wants to time, then shares the node. */
void pf_node_build_begin(pf_node *n);
void pf_node_build_end(pf_node *n);

/* Timing: announces the wish (no new builds start from here on), then waits until the builds
 * under way and the other timings are done. pf_node_time_begin does both. */
void pf_node_time_announce(pf_node *n);
void pf_node_time_acquire(pf_node *n);
void pf_node_time_begin(pf_node *n);
void pf_node_time_end(pf_node *n);

#endif
