/* A stand-in for the CUDA driver (libcuda.so.1) for tests on machines without a GPU: an
 * exported CUDA library loads it through $PF_CUDA_DRIVER and its runtime's device path runs
 * (codegen/cuda_rt.c: the module, device memory kept across calls, uploads and downloads of
 * strided images, the plan's launches, events, release, a fault). It runs no kernel: device
 * memory is host memory (calloc), and every call is written to $FAKE_CUDA_LOG, a launch with
 * its parameters read as the PTX's .entry declares them (a parameter that is the start of an
 * allocation shows as "buf"). $FAKE_CUDA_FAULT=N makes the Nth launch fail with an illegal
 * address, which then sticks, as a kernel's fault does. Not a test of CUDA: of our calls. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
#define OK 0
#define ILLEGAL_ADDRESS 700
#define NOT_FOUND 500

static FILE *log_file;
static const char *module_ptx;
static int launches, fault_at = -1;
static CUresult sticky;
static uint64_t allocs[256];
static int n_allocs, live;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    if (!log_file) {
        const char *path = getenv("FAKE_CUDA_LOG");
        log_file = path ? fopen(path, "a") : stderr;
    }
    va_list ap;
    va_start(ap, fmt);
    vfprintf(log_file, fmt, ap);
    va_end(ap);
    fflush(log_file);
}

CUresult cuInit(unsigned flags)
{
    const char *f = getenv("FAKE_CUDA_FAULT");
    fault_at = f ? atoi(f) : -1;
    return flags == 0 ? OK : 1;
}

CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return OK; }

CUresult cuDeviceGetName(char *name, int len, int d)
{
    (void)d;
    snprintf(name, (size_t)len, "fake CUDA device (tests/export/fake_cuda.c)");
    return OK;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int d)
{
    (void)d;
    *v = attr == 75 ? 9 : 0;  /* compute capability 9.0 */
    return OK;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) { (void)d; *ctx = &live; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; say("context released\n"); return OK; }
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return OK; }
CUresult cuCtxSynchronize(void) { return sticky; }

CUresult cuModuleLoadData(void **m, const void *ptx)
{
    if (!strstr(ptx, ".version") || !strstr(ptx, ".entry"))
        return 218;  /* CUDA_ERROR_INVALID_PTX */
    module_ptx = ptx;
    *m = (void *)ptx;
    int fmas = 0;  /* how the kernels were compiled: fused products or not (--strict-float) */
    for (const char *p = ptx; (p = strstr(p, "fma.rn.f32")); p++)
        fmas++;
    say("module loaded (%d fma.rn.f32)\n", fmas);
    return OK;
}

CUresult cuModuleUnload(void *m) { (void)m; say("module unloaded\n"); return OK; }

/* The .entry's declaration in the PTX: the function handle. */
CUresult cuModuleGetFunction(void **fn, void *m, const char *name)
{
    char head[96];
    snprintf(head, sizeof head, ".entry %s(", name);
    const char *p = strstr(m, head);
    *fn = (void *)p;
    return p ? OK : NOT_FOUND;
}

/* Fresh memory holds each float's index (a download shows where each element came from). */
CUresult cuMemAlloc_v2(uint64_t *d, size_t bytes)
{
    float *p = malloc(bytes);
    if (!p || n_allocs == 256)
        return 2;  /* CUDA_ERROR_OUT_OF_MEMORY */
    for (size_t i = 0; i < bytes / 4; i++)
        p[i] = (float)i;
    *d = (uint64_t)(uintptr_t)p;
    allocs[n_allocs++] = *d;
    live++;
    say("alloc %zu\n", bytes);
    return OK;
}

CUresult cuMemFree_v2(uint64_t d)
{
    for (int i = 0; i < n_allocs; i++)
        if (allocs[i] == d)
            allocs[i] = 0;
    free((void *)(uintptr_t)d);
    live--;
    say("free (%d live)\n", live);
    return OK;
}

CUresult cuMemcpyHtoD_v2(uint64_t d, const void *src, size_t bytes)
{
    memcpy((void *)(uintptr_t)d, src, bytes);
    double sum = 0;
    for (size_t i = 0; i < bytes / 4; i++)
        sum += ((const float *)src)[i];
    say("upload %zu bytes, sum %.6g\n", bytes, sum);
    return sticky;
}

CUresult cuMemcpyDtoH_v2(void *dst, uint64_t d, size_t bytes)
{
    memcpy(dst, (void *)(uintptr_t)d, bytes);
    say("download %zu bytes\n", bytes);
    return sticky;
}

CUresult cuMemsetD32_v2(uint64_t d, unsigned v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        memcpy((char *)(uintptr_t)d + 4 * i, &v, 4);
    say("zero %zu bytes\n", 4 * n);
    return sticky;
}

CUresult cuFuncSetAttribute(void *fn, int attr, int v) { (void)fn, (void)attr, (void)v; return OK; }

static void param(const char *type, void *p)
{
    uint64_t v = 0;
    memcpy(&v, p, strcmp(type, ".u64") == 0 ? 8 : strcmp(type, ".u8") == 0 ? 1 : 4);
    for (int i = 0; v && i < n_allocs; i++)
        if (allocs[i] == v) {
            say(" buf");
            return;
        }
    say(" %llx", (unsigned long long)v);
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                        void **extra)
{
    (void)stream, (void)extra;
    if (sticky)
        return sticky;
    if (++launches == fault_at) {
        sticky = ILLEGAL_ADDRESS;
        return sticky;
    }
    const char *p = fn, *name = p + 7, *end = strchr(p, ')');
    say("launch %.*s grid %u %u %u block %u %u %u shared %u params", (int)strcspn(name, "("),
        name, gx, gy, gz, bx, by, bz, shared);
    int n = 0;
    for (p = strstr(p, ".param "); p && p < end; p = strstr(p + 1, ".param ")) {
        char type[8];
        sscanf(p + 7, "%7s", type);
        param(type, params[n++]);
    }
    say("\n");
    return OK;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
    *s = r == ILLEGAL_ADDRESS ? "an illegal memory access was encountered (fake)"
                              : "a fake driver error";
    return OK;
}

CUresult cuEventCreate(void **ev, unsigned flags) { (void)flags; *ev = malloc(1); return OK; }
CUresult cuEventRecord(void *ev, void *stream) { (void)ev, (void)stream; return sticky; }
CUresult cuEventSynchronize(void *ev) { (void)ev; return sticky; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { (void)a, (void)b; *ms = 0.25f; return sticky; }
CUresult cuEventDestroy_v2(void *ev) { free(ev); return OK; }
