/* Measuring one candidate, inside whatever process runs it (a pool worker, an MPI rank's
 * worker, a bench): compile the schedule with the JIT, run it on every image of a split,
 * compare with the exact program's outputs (computed once per image and kept), and time it
 * against the exact program interleaved on this worker (docs/search.md, "Measuring a
 * candidate"), under the node protocol (search/node.h):
 *
 *   building, concurrently with the node's other workers:
 *     compile; per image one call (outputs kept, NaN check); error metrics
 *   timing, with the node quiet (no other worker builds or times):
 *     per pass, one untimed call of each variant on the first image (warm-up);
 *     screening (train split, screen_ms > 0): per image one pair of blocks of >= screen_ms;
 *     unless the frontier the search sent dominates the candidate by more than
 *     screen_margin, the full timing: per image
 *     samples x ( [exact x r_e] [candidate x r_c] -> ratio of per-call times )
 *   rel_time = median of the ratios; record.time = mean of rel_time over images
 *
 * The worker never dies on a candidate's failure that it can observe (schedule refused,
 * compile error, run error, non-finite output): the record says why. Crashes and hangs in
 * generated code kill the process; with `alarms` on, a candidate that runs past its limit is
 * killed by SIGALRM. The pool (cluster/pool.h) turns both into records. */
#ifndef PF_SEARCH_EVALUATE_H
#define PF_SEARCH_EVALUATE_H

#include "codegen/compile.h"
#include "search/eval.h"

#include <stdbool.h>

struct json_object;

/* How candidates are measured; stored in the run's config.json. */
typedef struct pf_eval_config {
    char *program;          /* the .pf file */
    int n_params;
    char **params;          /* "name=value" overrides of the program's params */
    char *dataset;          /* a manifest, or the directory holding manifest.tsv */
    int width, height;      /* only images of this resolution (0: every resolution) */
    int low_width, low_height;  /* the training images of PF_SET_LOW, a multi-fidelity
                                   search's first measurement (0: none) */
    int max_images;         /* at most this many images per split, in manifest order (0: all) */
    pf_backend backend;     /* jit */
    int samples;            /* timing samples per image; the median ratio is kept (5) */
    double min_sample_ms;   /* calls per sample so that one sample lasts at least this (20) */
    double timeout_factor;  /* a candidate call may take factor x the exact call ... (20) */
    double timeout_min_ms;  /* ... plus this (2000) */
    char *lock_path;        /* the node protocol's lock file (search/node.h), shared by the
                               workers of one node; NULL: none (a single worker) */
    bool extra_metrics;     /* PSNR and SSIM besides the Lab error (on) */
    int threads;            /* threads of a timed candidate's parallel loops (0: every core of
                               the node it runs on) */
    double screen_ms;       /* screening blocks last at least this (5; 0: no screening, every
                               candidate timed in full) */
    double screen_margin;   /* a screened candidate is timed in full unless a frontier point
                               with no more error is faster than (1 - margin) x its time (0.2) */
    bool strict_float;      /* CUDA: every product rounded before its add (compile.h; off) */
    bool no_gpu_rows;       /* CUDA: no register window of rows (compile.h; off) */
} pf_eval_config;

void pf_eval_config_default(pf_eval_config *c);
void pf_eval_config_copy(pf_eval_config *dst, const pf_eval_config *src);
void pf_eval_config_free(pf_eval_config *c);
struct json_object *pf_eval_config_to_json(const pf_eval_config *c);
int pf_eval_config_from_json(struct json_object *o, pf_eval_config *c, pf_error *err);

/* The images of a split as the config selects them (absolute paths, NULL-terminated; free with
 * pf_manifest_list_free). Fails when the split has none. */
char **pf_eval_image_list(const pf_eval_config *c, pf_image_set set, int *n, pf_error *err);

typedef struct pf_eval_worker pf_eval_worker;

/* Loads the program and compiles its exact variant (default execution schedule). Images are
 * loaded per split on first use. */
pf_eval_worker *pf_eval_worker_new(const pf_eval_config *c, int worker_id, pf_error *err);
void pf_eval_worker_free(pf_eval_worker *w);

/* Loads a split's images, runs the exact program on each (reference outputs) and measures its
 * time, unless already done. */
int pf_eval_worker_prepare(pf_eval_worker *w, pf_image_set set, pf_error *err);
/* The exact program's time per call on image i of a prepared split (ms). */
double pf_eval_worker_exact_ms(const pf_eval_worker *w, pf_image_set set, int i);

/* Kill the process with SIGALRM when a candidate runs past its limit (for pool workers only:
 * in-process callers have no hang protection). */
void pf_eval_worker_use_alarms(pf_eval_worker *w, bool on);
/* Whether the worker can evaluate no more: a candidate faulted the GPU, whose context every
 * variant of the process shares (a pool worker then ends and is restarted). */
bool pf_eval_worker_broken(const pf_eval_worker *w);
/* The training frontier the screening compares candidates with (copied): measured points only
 * (so a candidate set aside is dominated by a record of the run, never on its frontier). */
void pf_eval_worker_set_frontier(pf_eval_worker *w, const pf_front_point *pts, int n);
/* Whether a screened candidate (error, time) may reach the frontier: no point with no more
 * error is faster than (1 - margin) x time. */
bool pf_screen_may_reach(const pf_front_point *front, int n, double error, double time,
                         double margin);
/* Adds a point to a set of mutually non-dominated points (the search's running training
 * frontier), dropping the points it dominates; a dominated point is not added (returns
 * false). *front is realloc'd as needed. */
bool pf_front_add(pf_front_point **front, int *n, double error, double time);
/* A malloc'd copy of n points (NULL when n is 0). */
pf_front_point *pf_front_copy(const pf_front_point *pts, int n);

/* The clock of a worker's timed calls: runs `calls` calls of v (the exact program or the
 * candidate) on bufs and puts their time in *ms; 0, or -1 with err on a failed call. The
 * default is pf_variant_time_calls; a test gives a worker a fake one (a machine whose first
 * calls after building are slow) to check the timing protocol itself. */
typedef int (*pf_eval_timer_fn)(void *ctx, pf_variant *v, const pf_buffer *bufs, int calls,
                                bool exact, double *ms, pf_error *err);
void pf_eval_worker_set_timer(pf_eval_worker *w, pf_eval_timer_fn fn, void *ctx);
/* Timing samples per image of the candidates evaluated next (0: the config's `samples`): a
 * confirmation is measured with more (pool requests carry it, docs/search.md §5). */
void pf_eval_worker_set_samples(pf_eval_worker *w, int samples);

/* Called at each phase of an evaluation ("compiled", "timing", ...): the pool's watchdog
 * resets its deadline on it. */
typedef void (*pf_eval_heartbeat_fn)(void *ctx, const char *phase);
void pf_eval_worker_set_heartbeat(pf_eval_worker *w, pf_eval_heartbeat_fn fn, void *ctx);

/* Evaluates one candidate; *out is initialised here and always filled (valid or not). */
void pf_eval_worker_evaluate(pf_eval_worker *w, long id, pf_image_set set,
                             const char *schedule, pf_eval_record *out);

/* An evaluator that runs a worker in this process (benches, tools; no crash isolation). */
pf_evaluator *pf_eval_inprocess_new(const pf_eval_config *c, pf_error *err);

/* Test hook: PF_SEARCH_TEST_HOOK="crash:TEXT", "hang:TEXT" or "nan:TEXT" makes a worker crash,
 * hang or produce NaN when running a candidate whose schedule text contains TEXT. */
#define PF_SEARCH_TEST_HOOK_ENV "PF_SEARCH_TEST_HOOK"

#endif
