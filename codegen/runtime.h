/* The runtime that generated code calls: allocation, zeroing, sorting and median, noise, and
 * (later) the thread pool and the sampling/reconstruction kernels. The JIT binds these symbols
 * by address; exported C libraries compile this file alongside the generated source, so it
 * depends on libc and base/ headers only. */
#ifndef PF_CODEGEN_RUNTIME_H
#define PF_CODEGEN_RUNTIME_H

#include "reconstruct/stage_rt.h"

#include <stdbool.h>
#include <stdint.h>

/* 64-byte aligned, zeroed when `zero` is non-zero; NULL when bytes is not positive or memory
 * is exhausted (the generated function then returns an error code). Large freed blocks are
 * kept (up to 16, 512 MB) for the next allocation of about their size (rt_scratch.c);
 * pf_rt_alloc_release frees them, as does unloading a shared object that carries them. */
void *pf_rt_alloc(int64_t bytes, int32_t zero);
void pf_rt_free(void *p);
void pf_rt_alloc_release(void);
/* Tests: allocations that need not start zeroed are filled with NaN, so a read of an element
 * nothing wrote (outside a compute-at window, say) shows in the result. Off by default. */
void pf_rt_set_poison(bool on);

/* Zeroes the elements of an N-D strided buffer (padding untouched). */
void pf_rt_zero_buffer(float *data, int32_t ndims, const int64_t *extent, const int64_t *stride);

/* What the JIT's code calls: the zeroing, the stage runtime's store reconstruction, importance
 * and adaptive masks and channel copy (reconstruct/stage_rt.h), split across the thread pool by
 * rows. C source (cgen.c) calls the serial ones: its loops are serial, and a C variant is a
 * shared object that is unloaded, which must not leave pool threads of its own behind. */
void pf_rt_zero_buffer_threaded(float *data, int32_t ndims, const int64_t *extent,
                                const int64_t *stride);
int32_t pf_rt_reconstruct(const pf_buffer *view, const pf_recon_spec *spec, const float *mask,
                          const float *aux);
int32_t pf_rt_importance_mask_threaded(const pf_buffer *ref, const int64_t *lo,
                                       const int64_t *step, int32_t n1, int32_t n2, float frac,
                                       float sigma_imp, float *mask, float *remapped);
int32_t pf_rt_copy_channels(const pf_buffer *view, int32_t k, const int64_t *lo,
                            const int64_t *step, const pf_buffer *ref, int32_t c0);
int32_t pf_rt_adaptive_coarse_threaded(int32_t n1, int32_t n2, int32_t k, float *mask);
int32_t pf_rt_adaptive_refine_threaded(const pf_buffer *view, int32_t k, float frac, float *mask,
                                       float *is_fine);

/* Wall time spent in the runtime calls above, by phase (issue 28's per-phase scaling; bench/
 * bench_scaling). Off by default, when a call costs one relaxed load more; pf_rt_phase_timing
 * resets the sums and turns the timing on or off. A call made inside a parallel loop (it then
 * runs serially on each thread) adds each thread's time. */
typedef enum pf_rt_phase {
    PF_RT_PHASE_MASK,         /* importance and adaptive sampling's masks */
    PF_RT_PHASE_RECONSTRUCT,  /* pf_rt_reconstruct */
    PF_RT_PHASE_COPY,         /* channel copies and zeroing */
    PF_RT_PHASE_COUNT
} pf_rt_phase;
void pf_rt_phase_timing(bool on);
double pf_rt_phase_ms(pf_rt_phase phase);

/* Sorts v[0 .. n-1] as the language defines it: a stable insertion sort by `<` (the same
 * sequence as the interpreter's, NaNs included). */
void pf_rt_sort_f32(float *v, int32_t n);
void pf_rt_sort_i32(int32_t *v, int32_t n);
/* Element n/2 of v[0 .. n-1] sorted (v unchanged); n >= 1, n <= 4096. */
float pf_rt_median_f32(const float *v, int32_t n);
int32_t pf_rt_median_i32(const int32_t *v, int32_t n);
/* The median of each of `lanes` windows interleaved as a vector body stores an array (the
 * fallback of codegen/llvm_vmedian.c): element j of lane l at v[j * stride + l]; lane l takes
 * its first n[l] elements, n[l] clamped into [1, len]; out[l] = the median of them. */
void pf_rt_median_lanes_f32(const float *v, int32_t len, int32_t stride, int32_t lanes,
                            const int32_t *n, float *out);
void pf_rt_median_lanes_i32(const int32_t *v, int32_t len, int32_t stride, int32_t lanes,
                            const int32_t *n, int32_t *out);

float pf_rt_noise(int32_t n, int32_t a, int32_t b, int32_t c, int32_t d);
/* base/noise.h's pf_perf_hash, for loop perforation's random skip. */
float pf_rt_perf_hash(int32_t id, int32_t j, int32_t a, int32_t b);

/* ---- the thread pool (runtime_pool.c) ---- */

/* An outlined parallel loop body: runs iterations [begin, end) and returns 0, or a non-zero
 * status (e.g. an allocation failed) that the loop reports. */
typedef int32_t (*pf_rt_task)(void *closure, int32_t begin, int32_t end);
/* Runs iterations [0, n) of fn on the pool (the caller works too) and returns the first
 * non-zero status. Serial when n <= 1, with one thread, or inside another parallel loop. */
int32_t pf_rt_parallel_for(pf_rt_task fn, void *closure, int32_t n);
/* Threads used by parallel loops (0: all cores); the number in use. */
void pf_rt_set_threads(int32_t n);
int32_t pf_rt_threads(void);
/* Stops and joins the pool's workers; the next parallel loop starts them again. For an
 * exported library about to be unloaded (dlclose must not unmap code its threads run). Not
 * from inside a parallel loop. */
void pf_rt_pool_stop(void);

/* Name/address pairs of every runtime function, for the JIT's symbol table. */
typedef struct pf_rt_symbol {
    const char *name;
    void *address;
} pf_rt_symbol;
const pf_rt_symbol *pf_rt_symbols(int *count);

#endif
