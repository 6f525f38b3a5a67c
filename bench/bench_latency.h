/* bench_pipelines' two tables that do not time pipelines: perfora's compile latency per app
 * (parse + check + pf_compile to a callable JIT function) and the peak resident memory of
 * `perfora run` on a 2048x1536 photo against the bytes of the images the pipeline declares. */
#ifndef PF_BENCH_LATENCY_H
#define PF_BENCH_LATENCY_H

/* Median of `reps` compilations of every apps/ file at the default options; returns 0. */
int bench_latency_table(int reps);

/* Spawns the perfora binary (PF_PERFORA_EXE) on each benched app; returns 0 or 1. */
int bench_rss_table(void);

#endif
