/* Shared pieces of the bench/ programs: wall-clock timing of interleaved repetitions (a round
 * runs every method once, in the same order, so a load spike hits all of them alike), medians,
 * the bench photos at the two sizes, perfora variants compiled from a pipeline file, image
 * differences, and a streaming-copy bandwidth probe. Only ratios measured in one run mean
 * anything on a shared machine; these helpers exist so every bench measures them the same way. */
#ifndef PF_BENCH_UTIL_H
#define PF_BENCH_UTIL_H

#include "bench/cmp.h"
#include "codegen/compile.h"
#include "dataset/image.h"
#include "lang/lang.h"
#include "perforate/apply.h"
#include "perforate/schedule.h"

#include <stdbool.h>
#include <stddef.h>

double bench_now_ms(void);
double bench_cpu_ms(void);  /* CPU time of the whole process (all threads) */
double bench_median(const double *v, int n);
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

/* A perfora program ready to compile: loaded once, with its default parameters. */
typedef struct bench_prog {
    pf_program *prog;
    pf_param_values params;
} bench_prog;
int bench_prog_load(bench_prog *bp, const char *path, pf_error *err);
void bench_prog_free(bench_prog *bp);

/* Applies the schedule file's approximation genes to the program (pf_schedule_apply) and
 * returns the parsed schedule (its exec genes go to pf_compile_options.schedule), or NULL with
 * err. NULL path: clears the approximations and returns NULL without error. */
pf_schedule *bench_prog_schedule(bench_prog *bp, const char *path, pf_error *err);

/* Compiles a JIT variant with `threads` worker threads and the given schedule (NULL: default
 * schedule). NULL with err on failure. */
pf_variant *bench_compile(bench_prog *bp, const pf_schedule *s, int threads, bool no_congruence,
                          pf_error *err);
/* The same with compile options other than the default: BENCH_* bits. */
enum {
    BENCH_NO_CONGRUENCE = 1,      /* on-demand reads without Z3's constant weights */
    BENCH_FP_CONTRACT = 2,        /* perfora's opt-in fused multiply-adds */
    BENCH_NO_CHANNEL_UNROLL = 4,  /* channel loops outside y and x (pass_channels off) */
    BENCH_NO_BANDS = 8,           /* scatter stages serial (pass_bands off) */
    BENCH_FAST_MATH = 16,         /* perfora's opt-in Halide float semantics (--fast-math) */
};
pf_variant *bench_compile_with(bench_prog *bp, const pf_schedule *s, int threads, unsigned flags,
                               pf_error *err);

/* Runs a variant on one input and one output image. */
int bench_run(pf_variant *v, pf_image *in, pf_image *out, pf_error *err);

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
