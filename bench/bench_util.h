/* Shared pieces of the bench/ programs: wall-clock timing of interleaved repetitions (a round
 * runs every method once, in the same order, so a load spike hits all of them alike), medians,
 * the bench photos at the two sizes, perfora variants compiled from a pipeline file, image
 * differences, and a streaming-copy bandwidth probe. Only ratios measured in one run mean
 * anything on a shared machine; these helpers exist so every bench measures them the same way. */
#ifndef PF_BENCH_UTIL_H
#define PF_BENCH_UTIL_H

#include "base/clock.h"
#include "bench/cmp.h"
#include "codegen/compile.h"
#include "dataset/image.h"
#include "lang/lang.h"
#include "perforate/plan.h"

#include <stdbool.h>
#include <stddef.h>

/* Clocks and medians: base/clock.h (pf_now_ms, pf_cpu_ms, pf_median). */
/* Copies src into dst[n] (truncating, always terminated). */
void bench_strcpy(char *dst, size_t n, const char *src);  /* n >= 1; v is not modified */
double bench_min(const double *v, int n);

/* The load average over the last minute (-1 if unknown) and a "YYYY-MM-DD HH:MM" stamp, for
 * the header of every table. */
double bench_loadavg(void);
void bench_stamp(char *out, size_t n);
/* Prints "# <what>, <date>, load <l>, <cores> cores" and the CPU model. */
void bench_print_header(const char *what);

/* A photo from data/images as an RGB pf_image of w x h: the bundled file if it has that size,
 * else resampled (Lanczos-3 in linear light, rounded to the 8-bit grid, as the benchmark
 * builder does) from the largest bundled version. NULL with err on failure. */
pf_image *bench_photo(const char *file, int w, int h, pf_error *err);

/* The pf_image as the comparators' plain view. */
bench_img bench_view(pf_image *img);

/* Largest |a - b| over channels and the pixel rectangle [x0, x1) x [y0, y1) (NaN counts as
 * infinite). */
double bench_max_diff(const pf_image *a, const pf_image *b, int x0, int y0, int x1, int y1);
/* The same, with where the largest difference is (at[3] = x, y, c) and how many samples
 * differ by more than tol (*count). */
double bench_max_diff_at(const pf_image *a, const pf_image *b, int x0, int y0, int x1, int y1,
                         double tol, int at[3], long *count);

/* A perfora program ready to compile: loaded once, with its default parameters, and the plans
 * made for it (freed with it). */
typedef struct bench_prog {
    pf_program *prog;
    pf_param_values params;
    pf_plan **plans;
    int n_plans;
} bench_prog;
int bench_prog_load(bench_prog *bp, const char *path, pf_error *err);
void bench_prog_free(bench_prog *bp);

/* The plan of the schedule file at path (NULL: the exact program) or of schedule text, for
 * this machine; bp keeps it until bench_prog_free. NULL with err. */
const pf_plan *bench_plan(bench_prog *bp, const char *path, pf_error *err);
const pf_plan *bench_plan_text(bench_prog *bp, const char *text, pf_error *err);

/* Builds a JIT variant of a plan of bp with `threads` worker threads. NULL with err. */
pf_variant *bench_compile(bench_prog *bp, const pf_plan *plan, int threads, bool no_congruence,
                          pf_error *err);
/* The same with compile options other than the default: BENCH_* bits. */
enum {
    BENCH_NO_CONGRUENCE = 1,      /* on-demand reads without Z3's constant weights */
    BENCH_FP_CONTRACT = 2,        /* perfora's opt-in fused multiply-adds */
    BENCH_NO_CHANNEL_UNROLL = 4,  /* channel loops outside y and x (pass_channels off) */
    BENCH_NO_BANDS = 8,           /* scatter stages serial (pass_bands off) */
    BENCH_FAST_MATH = 16,         /* perfora's opt-in Halide float semantics (--fast-math) */
    BENCH_NO_VECTOR_MATH = 32,    /* libm per lane for exp, log, pow, sin, cos */
    BENCH_NO_NARROW = 64,         /* window arrays keep their declared length (pass_narrow off) */
};
pf_variant *bench_compile_with(bench_prog *bp, const pf_plan *plan, int threads, unsigned flags,
                               pf_error *err);
/* Flags every bench_compile adds (a bench's command line sets them). */
extern unsigned bench_default_flags;

/* Runs a variant on one input and one output image. */
int bench_run(pf_variant *v, pf_image *in, pf_image *out, pf_error *err);
/* Its wall time in ms; a failed run ends the bench with a message prefixed by who. */
double bench_run_ms(pf_variant *v, pf_image *in, pf_image *out, const char *who);

/* Seconds-free bandwidth probe: the median over `reps` of the time to stream-copy `bytes`
 * bytes from one buffer into another with `threads` threads (each copies its share; the
 * buffers are touched beforehand). This is the floor for a pipeline that must read its input
 * once and write its output once. Returns milliseconds. */
double bench_copy_ms(size_t bytes, int threads, int reps);
/* One such copy (src and dst 64-byte aligned), for interleaving with other measurements. */
void bench_copy(const void *src, void *dst, size_t bytes, int threads);

/* The bench/ folder of the source tree and data/images/train, for file names. */
#define BENCH_SRC PF_SOURCE_DIR
#define BENCH_TRAIN PF_SOURCE_DIR "/data/images/train"

#endif
