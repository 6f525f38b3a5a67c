/* bench/gpu/export_check.c — an exported CUDA library against the CPU library of the same
 * pipeline and schedule, on a GPU (docs/gpu.md §7 item 4): both called on one photo-like
 * W x H x 3 image (a smooth gradient with hashed noise, so that edges and flat parts both
 * occur), outputs compared element by element, then the CUDA library's kernel time over
 * CALLS calls (median of NAME_last_times, CUDA events) and its transfers, and the CPU
 * library's time on THREADS threads. Built by bench/gpu/export_build.sh against the two
 * libraries' shared objects (hidden symbols: each carries its own runtime):
 *   -DGPU_H='"blur_gpu.h"' -DGPU_FN=blur_gpu -DCPU_H='"blur_cpu.h"' -DCPU_FN=blur_cpu
 * Usage: export_check W H [CALLS] [THREADS]   (one-input, one-output RGB pipelines). */
#define _POSIX_C_SOURCE 200809L
#include GPU_H
#include CPU_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static void fill(float *p, int64_t w, int64_t h)
{
    for (int64_t c = 0; c < 3; c++)
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                uint32_t k = (uint32_t)(x * 73856093u ^ y * 19349663u ^ c * 83492791u);
                k ^= k >> 13;
                k *= 0x5bd1e995u;
                k ^= k >> 15;
                float noise = (float)(k & 0xffff) / 65535.0f - 0.5f;
                float base = 0.5f + 0.4f * sinf((float)x / 97.0f + (float)c) *
                                            cosf((float)y / 61.0f);
                float v = base + ((x / 128 + y / 128) % 2 ? 0.15f : 0.02f) * noise;
                p[x + w * (y + h * c)] = v < 0 ? 0 : v > 1 ? 1 : v;
            }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: export_check W H [CALLS] [THREADS]\n");
        return 2;
    }
    int64_t w = atoll(argv[1]), h = atoll(argv[2]);
    int calls = argc > 3 ? atoi(argv[3]) : 51, threads = argc > 4 ? atoi(argv[4]) : 2;
    if (w < 1 || h < 1 || calls < 1 || threads < 1) {
        fprintf(stderr, "export_check: bad W, H, CALLS or THREADS\n");
        return 2;
    }
    size_t n = (size_t)(w * h * 3);
    float *in = malloc(n * sizeof *in), *gpu = malloc(n * sizeof *gpu),
          *cpu = malloc(n * sizeof *cpu);
    double *t = malloc((size_t)calls * sizeof *t), *up = malloc((size_t)calls * sizeof *up),
           *down = malloc((size_t)calls * sizeof *down);
    if (!in || !gpu || !cpu || !t || !up || !down) {
        fprintf(stderr, "export_check: out of memory\n");
        return 1;
    }
    fill(in, w, h);
    int64_t ext[3] = { w, h, 3 }, str[3] = { 1, w, w * h };
    int rc = GPU_FN(in, ext, str, gpu, ext, str, 0);
    if (rc != 0) {
        printf("gpu: error %d: %s (%s)\n", rc, CAT(GPU_FN, _error_string)(rc),
               CAT(GPU_FN, _last_error)());
        return 1;
    }
    rc = CPU_FN(in, ext, str, cpu, ext, str, threads);
    if (rc != 0) {
        printf("cpu: error %d: %s\n", rc, CAT(CPU_FN, _error_string)(rc));
        return 1;
    }
    double maxd = 0;
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)gpu[i] - (double)cpu[i]);
        if (!(d <= maxd)) {  /* a NaN counts as the worst */
            maxd = d;
            worst = i;
        }
    }
    for (int i = 0; i < calls; i++) {
        struct CAT(GPU_FN, _times) tm;
        if (GPU_FN(in, ext, str, gpu, ext, str, 0) != 0) {
            printf("gpu: call %d failed: %s\n", i, CAT(GPU_FN, _last_error)());
            return 1;
        }
        CAT(GPU_FN, _last_times)(&tm);
        t[i] = tm.kernel_ms;
        up[i] = tm.upload_ms;
        down[i] = tm.download_ms;
    }
    int cpu_calls = 5;
    double ct[5];
    for (int i = 0; i < cpu_calls; i++) {
        double t0 = now_ms();
        CPU_FN(in, ext, str, cpu, ext, str, threads);
        ct[i] = now_ms() - t0;
    }
    printf("%lldx%lld max|gpu-cpu| %.3g (element %zu)  gpu kernels median %.4f ms of %d calls "
           "(upload %.2f, download %.2f ms)  cpu library %d threads median %.3f ms  cpu/gpu %.1fx\n",
           (long long)w, (long long)h, maxd, worst, median(t, calls), calls, median(up, calls),
           median(down, calls), threads, median(ct, cpu_calls), median(ct, cpu_calls) / median(t, calls));
    CAT(GPU_FN, _release)();
    free(in), free(gpu), free(cpu), free(t), free(up), free(down);
    return 0;
}
