/* Runtime support for generated code (see runtime.h). */
#include "codegen/runtime.h"

#include "base/noise.h"
#include "reconstruct/stage_rt.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- per-phase time (pf_rt_phase_timing) ---- */

static int phase_on;                        /* atomic */
static int64_t phase_ns[PF_RT_PHASE_COUNT]; /* atomic sums */

/* Its own clock, not base/clock.h's pf_now_ms: this file is compiled into C-source variants and
 * exported libraries, which link nothing of perfora's but it. */
static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The start of a timed call, 0 when timing is off. */
static int64_t phase_begin(void)
{
    return __atomic_load_n(&phase_on, __ATOMIC_RELAXED) ? now_ns() : 0;
}

static void phase_end(pf_rt_phase p, int64_t t0)
{
    if (t0)
        __atomic_add_fetch(&phase_ns[p], now_ns() - t0, __ATOMIC_RELAXED);
}

void pf_rt_phase_timing(bool on)
{
    for (int p = 0; p < PF_RT_PHASE_COUNT; p++)
        __atomic_store_n(&phase_ns[p], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&phase_on, on ? 1 : 0, __ATOMIC_RELAXED);
}

double pf_rt_phase_ms(pf_rt_phase phase)
{
    return phase < PF_RT_PHASE_COUNT ? __atomic_load_n(&phase_ns[phase], __ATOMIC_RELAXED) / 1e6
                                     : 0.0;
}

/* What the row tasks of pf_rt_zero_buffer share. */
typedef struct zero_job {
    float *data;
    int64_t e[4], s[4];
} zero_job;

static void zero_row(const zero_job *z, int64_t r)
{
    int64_t i1 = r % z->e[1], i2 = r / z->e[1] % z->e[2], i3 = r / z->e[1] / z->e[2];
    float *row = z->data + i1 * z->s[1] + i2 * z->s[2] + i3 * z->s[3];
    if (z->s[0] == 1)
        memset(row, 0, sizeof *row * (size_t)z->e[0]);
    else
        for (int64_t i0 = 0; i0 < z->e[0]; i0++)
            row[i0 * z->s[0]] = 0.0f;
}

/* Rows [begin, end), a row being (i1, i2, i3) in row-major order. */
static int32_t zero_rows(void *closure, int32_t begin, int32_t end)
{
    for (int32_t r = begin; r < end; r++)
        zero_row(closure, r);
    return 0;
}

static zero_job zero_args(float *data, int32_t ndims, const int64_t *extent,
                          const int64_t *stride)
{
    zero_job z = { data, { 1, 1, 1, 1 }, { 0, 0, 0, 0 } };
    for (int d = 0; d < ndims && d < 4; d++) {
        z.e[d] = extent[d];
        z.s[d] = stride[d];
    }
    return z;
}

void pf_rt_zero_buffer(float *data, int32_t ndims, const int64_t *extent, const int64_t *stride)
{
    zero_job z = zero_args(data, ndims, extent, stride);
    for (int64_t r = 0; r < z.e[1] * z.e[2] * z.e[3]; r++)
        zero_row(&z, r);
}

void pf_rt_zero_buffer_threaded(float *data, int32_t ndims, const int64_t *extent,
                                const int64_t *stride)
{
    int64_t t0 = phase_begin();
    zero_job z = zero_args(data, ndims, extent, stride);
    int64_t rows = z.e[1] * z.e[2] * z.e[3];
    if (rows > INT32_MAX)
        pf_rt_zero_buffer(data, ndims, extent, stride);
    else
        pf_rt_parallel_for(zero_rows, &z, (int32_t)rows);
    phase_end(PF_RT_PHASE_COPY, t0);
}

int32_t pf_rt_reconstruct(const pf_buffer *view, const pf_recon_spec *spec, const float *mask,
                          const float *aux)
{
    int64_t t0 = phase_begin();
    int32_t rc = pf_srt_reconstruct_par(view, spec, mask, aux, pf_rt_parallel_for);
    phase_end(PF_RT_PHASE_RECONSTRUCT, t0);
    return rc;
}

int32_t pf_rt_importance_mask_threaded(const pf_buffer *ref, const int64_t *lo,
                                       const int64_t *step, int32_t n1, int32_t n2, float frac,
                                       float sigma_imp, float *mask, float *remapped)
{
    int64_t t0 = phase_begin();
    int32_t rc = pf_srt_importance_mask_par(ref, lo, step, n1, n2, frac, sigma_imp, mask,
                                            remapped, pf_rt_parallel_for);
    phase_end(PF_RT_PHASE_MASK, t0);
    return rc;
}

int32_t pf_rt_adaptive_coarse_threaded(int32_t n1, int32_t n2, int32_t k, float *mask)
{
    int64_t t0 = phase_begin();
    int32_t rc = pf_srt_adaptive_coarse_par(n1, n2, k, mask, pf_rt_parallel_for);
    phase_end(PF_RT_PHASE_MASK, t0);
    return rc;
}

int32_t pf_rt_adaptive_refine_threaded(const pf_buffer *view, int32_t k, float frac, float *mask,
                                       float *is_fine)
{
    int64_t t0 = phase_begin();
    int32_t rc = pf_srt_adaptive_refine_par(view, k, frac, mask, is_fine, pf_rt_parallel_for);
    phase_end(PF_RT_PHASE_MASK, t0);
    return rc;
}

int32_t pf_rt_copy_channels(const pf_buffer *view, int32_t k, const int64_t *lo,
                            const int64_t *step, const pf_buffer *ref, int32_t c0)
{
    int64_t t0 = phase_begin();
    int32_t rc = pf_srt_copy_channels_par(view, k, lo, step, ref, c0, pf_rt_parallel_for);
    phase_end(PF_RT_PHASE_COPY, t0);
    return rc;
}

/* The language's sort (docs/language.md): a stable insertion sort by `<`, so every backend
 * produces the same order even with NaNs (a NaN stops smaller values from moving past it). */
void pf_rt_sort_f32(float *v, int32_t n)
{
    for (int32_t i = 1; i < n; i++) {
        float x = v[i];
        int32_t j = i - 1;
        while (j >= 0 && x < v[j]) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

void pf_rt_sort_i32(int32_t *v, int32_t n)
{
    for (int32_t i = 1; i < n; i++) {
        int32_t x = v[i], j = i - 1;
        while (j >= 0 && x < v[j]) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

/* Element k of v[0 .. n-1] in ascending order (quickselect, median-of-three pivots). Without
 * NaNs the k-th smallest value is unique, so this agrees with sorting; values equal in `<`
 * (-0 and +0) are interchangeable for every later use. */
static float select_kth(float *v, int32_t n, int32_t k)
{
    int32_t lo = 0, hi = n - 1;
    while (hi > lo) {
        int32_t mid = lo + (hi - lo) / 2;
        float a = v[lo], b = v[mid], c = v[hi];
        float pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int32_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (pivot < v[j])
                j--;
            if (i <= j) {
                float t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* Element k of v[0 .. n-1] for a small window (the 9x9 median: n <= 81), by counting ranks:
 * the answer is the value with fewer than k+1 values below it and more than k at or below it.
 * Branch-free blocks of 8 comparisons, which compilers vectorize at -O3 (codegen/CMakeLists.txt
 * builds this file so in every release build type); quickselect's data-dependent
 * branches mispredict about half the time and cost several times more on such windows. The
 * padding is NaN, which compares false with everything. Requires no NaN in v. */
#define PF_RANK_MAX 128

static inline __attribute__((always_inline)) float rank_select(const float *v, int32_t n,
                                                               int32_t k)
{
    float pad[PF_RANK_MAX];
    int32_t blocks = (n + 7) / 8;
    for (int32_t i = 0; i < blocks * 8; i++)
        pad[i] = i < n ? v[i] : NAN;
    for (int32_t i = 0; i < n; i++) {
        float x = v[i];
        int32_t lt = 0, le = 0;
        for (int32_t b = 0; b < blocks; b++) {
            const float *w = pad + 8 * b;
            for (int j = 0; j < 8; j++) {
                lt += w[j] < x;
                le += w[j] <= x;
            }
        }
        if (lt <= k && k < le)
            return x;
    }
    return v[k];  /* not reached without NaNs */
}

/* The same code built for AVX2 (8 comparisons per instruction instead of SSE's 4) where the
 * processor has it: GCC and Clang on x86-64, which is where perfora's JIT runs. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static float rank_select_avx2(const float *v, int32_t n,
                                                              int32_t k)
{
    return rank_select(v, n, k);
}

static float select_kth_small(const float *v, int32_t n, int32_t k)
{
    /* a load and a test of what libgcc read at start-up: no state of ours to share */
    return __builtin_cpu_supports("avx2") ? rank_select_avx2(v, n, k) : rank_select(v, n, k);
}
#else
static float select_kth_small(const float *v, int32_t n, int32_t k)
{
    return rank_select(v, n, k);
}
#endif

float pf_rt_median_f32(const float *v, int32_t n)
{
    float tmp[4096];
    if (n < 1)
        n = 1;
    if (n > 4096)
        n = 4096;
    bool nan = false;
    for (int32_t i = 0; i < n; i++) {
        tmp[i] = v[i];
        nan |= v[i] != v[i];
    }
    if (!nan)
        return n <= PF_RANK_MAX ? select_kth_small(tmp, n, n / 2) : select_kth(tmp, n, n / 2);
    pf_rt_sort_f32(tmp, n);  /* NaNs: the stable insertion sort defines the order */
    return tmp[n / 2];
}

int32_t pf_rt_median_i32(const int32_t *v, int32_t n)
{
    int32_t tmp[4096];
    if (n < 1)
        n = 1;
    if (n > 4096)
        n = 4096;
    memcpy(tmp, v, sizeof *tmp * (size_t)n);
    pf_rt_sort_i32(tmp, n);
    return tmp[n / 2];
}

static int32_t lane_count(int32_t n, int32_t len)
{
    n = n < 1 ? 1 : n > len ? len : n;
    return n > 4096 ? 4096 : n;
}

void pf_rt_median_lanes_f32(const float *v, int32_t len, int32_t stride, int32_t lanes,
                            const int32_t *n, float *out)
{
    float tmp[4096];
    for (int32_t l = 0; l < lanes; l++) {
        int32_t m = lane_count(n[l], len);
        for (int32_t j = 0; j < m; j++)
            tmp[j] = v[(int64_t)j * stride + l];
        out[l] = pf_rt_median_f32(tmp, m);
    }
}

void pf_rt_median_lanes_i32(const int32_t *v, int32_t len, int32_t stride, int32_t lanes,
                            const int32_t *n, int32_t *out)
{
    int32_t tmp[4096];
    for (int32_t l = 0; l < lanes; l++) {
        int32_t m = lane_count(n[l], len);
        for (int32_t j = 0; j < m; j++)
            tmp[j] = v[(int64_t)j * stride + l];
        out[l] = pf_rt_median_i32(tmp, m);
    }
}

float pf_rt_noise(int32_t n, int32_t a, int32_t b, int32_t c, int32_t d)
{
    int32_t args[4] = { a, b, c, d };
    return pf_noise_hash(n < 0 ? 0 : n > 4 ? 4 : n, args);
}

float pf_rt_perf_hash(int32_t id, int32_t j, int32_t a, int32_t b)
{
    return pf_perf_hash(id, j, a, b);
}

const pf_rt_symbol *pf_rt_symbols(int *count)
{
    static const pf_rt_symbol syms[] = {
        { "pf_rt_alloc", (void *)pf_rt_alloc },
        { "pf_rt_free", (void *)pf_rt_free },
        { "pf_rt_zero_buffer_threaded", (void *)pf_rt_zero_buffer_threaded },
        { "pf_rt_sort_f32", (void *)pf_rt_sort_f32 },
        { "pf_rt_sort_i32", (void *)pf_rt_sort_i32 },
        { "pf_rt_median_f32", (void *)pf_rt_median_f32 },
        { "pf_rt_median_i32", (void *)pf_rt_median_i32 },
        { "pf_rt_median_lanes_f32", (void *)pf_rt_median_lanes_f32 },
        { "pf_rt_median_lanes_i32", (void *)pf_rt_median_lanes_i32 },
        { "pf_rt_noise", (void *)pf_rt_noise },
        { "pf_rt_perf_hash", (void *)pf_rt_perf_hash },
        { "pf_rt_parallel_for", (void *)pf_rt_parallel_for },
        { "pf_rt_adaptive_coarse_threaded", (void *)pf_rt_adaptive_coarse_threaded },
        { "pf_rt_adaptive_refine_threaded", (void *)pf_rt_adaptive_refine_threaded },
        { "pf_rt_reconstruct", (void *)pf_rt_reconstruct },
        { "pf_rt_importance_mask_threaded", (void *)pf_rt_importance_mask_threaded },
        { "pf_rt_copy_channels", (void *)pf_rt_copy_channels },
    };
    *count = (int)(sizeof syms / sizeof *syms);
    return syms;
}
