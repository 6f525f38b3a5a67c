/* A node under the node protocol (search/node.h), simulated from measured costs: J workers
 * take candidates as they come free; a worker builds (compile, outputs, error: its own core)
 * unless a worker waits to time or is timing; the waiting workers time one at a time once no
 * build is under way. With generation barriers, a generation's candidates are handed out only
 * when the previous generation is done (the search's rule, docs/search.md §9). Used by
 * bench_search to project a node of many cores from one run's per-candidate costs. */
#ifndef PF_BENCH_NODE_SIM_H
#define PF_BENCH_NODE_SIM_H

#include <stdbool.h>

typedef struct sim_job {
    double build_ms, timing_ms;
    int generation;  /* non-decreasing over the jobs */
} sim_job;

/* The node's time to evaluate every job, in ms. */
double sim_node(const sim_job *jobs, int n, int workers, bool barriers);

#endif
