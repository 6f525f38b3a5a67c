/* The CUDA driver API through dlopen (cuda_driver.h). Only the entry points perfora calls are
 * looked up, by their versioned names (cuda.h maps cuMemAlloc to cuMemAlloc_v2 and so on);
 * their types are written out here so that building needs no CUDA headers. Exported CUDA
 * libraries ship this file (cuda_rt.h): it depends on libc, libdl and base/error.h only. */
#include "codegen/cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int cu_result;  /* CUresult: 0 is CUDA_SUCCESS */

struct pf_cuda {
    void *dl;
    int device;
    void *ctx;
    char name[256];
    int capability;
    cu_result (*init)(unsigned);
    cu_result (*device_count)(int *);
    cu_result (*device_get)(int *, int);
    cu_result (*device_name)(char *, int, int);
    cu_result (*device_attribute)(int *, int, int);
    cu_result (*ctx_retain)(void **, int);
    cu_result (*ctx_release)(int);
    cu_result (*ctx_set)(void *);
    cu_result (*ctx_sync)(void);
    cu_result (*module_load)(void **, const void *);
    cu_result (*module_unload)(void *);
    cu_result (*module_function)(void **, void *, const char *);
    cu_result (*mem_alloc)(uint64_t *, size_t);
    cu_result (*mem_free)(uint64_t);
    cu_result (*htod)(uint64_t, const void *, size_t);
    cu_result (*dtoh)(void *, uint64_t, size_t);
    cu_result (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void *, void **, void **);
    cu_result (*error_string)(cu_result, const char **);
    cu_result (*memset32)(uint64_t, unsigned, size_t);
    cu_result (*func_attribute)(void *, int, int);
    cu_result (*event_create)(void **, unsigned);
    cu_result (*event_record)(void *, void *);
    cu_result (*event_sync)(void *);
    cu_result (*event_elapsed)(float *, void *, void *);
    cu_result (*event_destroy)(void *);
};

/* An entry point's name, and another it has in some drivers (NULL: none). */
static const struct { const char *name; size_t offset; const char *alt; } api[] = {
#define API(field, sym) { sym, offsetof(pf_cuda, field), NULL }
#define API2(field, sym, alt) { sym, offsetof(pf_cuda, field), alt }
    API(init, "cuInit"), API(device_count, "cuDeviceGetCount"), API(device_get, "cuDeviceGet"),
    API(device_name, "cuDeviceGetName"), API(device_attribute, "cuDeviceGetAttribute"),
    API(ctx_retain, "cuDevicePrimaryCtxRetain"), API(ctx_release, "cuDevicePrimaryCtxRelease_v2"),
    API(ctx_set, "cuCtxSetCurrent"), API(ctx_sync, "cuCtxSynchronize"),
    API(module_load, "cuModuleLoadData"), API(module_unload, "cuModuleUnload"),
    API(module_function, "cuModuleGetFunction"), API(mem_alloc, "cuMemAlloc_v2"),
    API(mem_free, "cuMemFree_v2"), API(htod, "cuMemcpyHtoD_v2"), API(dtoh, "cuMemcpyDtoH_v2"),
    API(launch, "cuLaunchKernel"), API(error_string, "cuGetErrorString"),
    API(memset32, "cuMemsetD32_v2"), API(func_attribute, "cuFuncSetAttribute"),
    API(event_create, "cuEventCreate"), API(event_record, "cuEventRecord"),
    API(event_sync, "cuEventSynchronize"), API2(event_elapsed, "cuEventElapsedTime", "cuEventElapsedTime_v2"),
    API(event_destroy, "cuEventDestroy_v2"),
#undef API
#undef API2
};

/* "what: the driver's message (code N)", as err. */
static int cu_fail(pf_cuda *c, cu_result r, pf_error *err, const char *what)
{
    const char *s = NULL;
    if (c->error_string)
        c->error_string(r, &s);
    return pf_fail(err, "CUDA: %s failed: %s (error %d)", what, s ? s : "unknown error", r);
}

static int load_api(pf_cuda *c, const char *lib, pf_error *err)
{
    c->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!c->dl)
        return pf_fail(err, "no CUDA driver found (%s)", dlerror());
    for (size_t i = 0; i < sizeof api / sizeof *api; i++) {
        void *sym = dlsym(c->dl, api[i].name);
        if (!sym && api[i].alt)
            sym = dlsym(c->dl, api[i].alt);
        if (!sym)
            return pf_fail(err, "no CUDA driver found (%s has no %s: a driver older than CUDA "
                           "11?)", lib, api[i].name);
        memcpy((char *)c + api[i].offset, &sym, sizeof sym);
    }
    return 0;
}

static int open_device(pf_cuda *c, pf_error *err)
{
    cu_result r = c->init(0);
    int n = 0;
    if (r != 0 || (r = c->device_count(&n)) != 0 || n < 1) {
        const char *s = NULL;
        c->error_string(r, &s);
        return pf_fail(err, "no CUDA device (the driver loaded, but %s)",
                       r ? (s ? s : "cuInit failed") : "it reports no device");
    }
    if ((r = c->device_get(&c->device, 0)) != 0)
        return cu_fail(c, r, err, "cuDeviceGet");
    c->device_name(c->name, (int)sizeof c->name, c->device);
    int major = 0, minor = 0;  /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR/MINOR: 75, 76 */
    c->device_attribute(&major, 75, c->device);
    c->device_attribute(&minor, 76, c->device);
    c->capability = 10 * major + minor;
    if ((r = c->ctx_retain(&c->ctx, c->device)) != 0)
        return cu_fail(c, r, err, "cuDevicePrimaryCtxRetain");
    if ((r = c->ctx_set(c->ctx)) != 0)
        return cu_fail(c, r, err, "cuCtxSetCurrent");
    return 0;
}

pf_cuda *pf_cuda_open(pf_error *err)
{
    const char *lib = getenv("PF_CUDA_DRIVER");
    pf_cuda *c = calloc(1, sizeof *c);  /* shipped in exports (cuda_rt.h): no perfora allocator */
    if (!c) {
        pf_fail(err, "no CUDA device (memory ran out opening the driver)");
        return NULL;
    }
    if (load_api(c, lib && *lib ? lib : "libcuda.so.1", err) || open_device(c, err)) {
        pf_cuda_close(c);
        return NULL;
    }
    return c;
}

void pf_cuda_close(pf_cuda *c)
{
    if (!c)
        return;
    if (c->ctx)
        c->ctx_release(c->device);
    if (c->dl)
        dlclose(c->dl);
    free(c);
}

const char *pf_cuda_device_name(const pf_cuda *c)
{
    return c->name;
}

int pf_cuda_capability(const pf_cuda *c)
{
    return c->capability;
}

int pf_cuda_load_ptx(pf_cuda *c, const char *ptx, void **module, pf_error *err)
{
    cu_result r = c->module_load(module, ptx);
    return r ? cu_fail(c, r, err, "loading the PTX (cuModuleLoadData)") : 0;
}

int pf_cuda_kernel(pf_cuda *c, void *module, const char *name, void **fn, pf_error *err)
{
    cu_result r = c->module_function(fn, module, name);
    return r ? cu_fail(c, r, err, name) : 0;
}

void pf_cuda_unload(pf_cuda *c, void *module)
{
    if (module)
        c->module_unload(module);
}

int pf_cuda_alloc(pf_cuda *c, size_t bytes, uint64_t *dptr, pf_error *err)
{
    cu_result r = c->mem_alloc(dptr, bytes ? bytes : 4);
    return r ? cu_fail(c, r, err, "cuMemAlloc") : 0;
}

void pf_cuda_free(pf_cuda *c, uint64_t dptr)
{
    if (dptr)
        c->mem_free(dptr);
}

int pf_cuda_upload(pf_cuda *c, uint64_t dst, const void *src, size_t bytes, pf_error *err)
{
    cu_result r = c->htod(dst, src, bytes);
    return r ? cu_fail(c, r, err, "cuMemcpyHtoD") : 0;
}

int pf_cuda_download(pf_cuda *c, void *dst, uint64_t src, size_t bytes, pf_error *err)
{
    cu_result r = c->dtoh(dst, src, bytes);
    return r ? cu_fail(c, r, err, "cuMemcpyDtoH") : 0;
}

int pf_cuda_zero(pf_cuda *c, uint64_t dst, size_t bytes, pf_error *err)
{
    cu_result r = c->memset32(dst, 0, bytes / 4);
    return r ? cu_fail(c, r, err, "cuMemsetD32") : 0;
}

/* Above 48 KiB a kernel's dynamic shared memory must be asked for
 * (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8). */
static int allow_shared(pf_cuda *c, void *fn, unsigned shared, pf_error *err)
{
    if (shared <= 48 * 1024)
        return 0;
    cu_result r = c->func_attribute(fn, 8, (int)shared);
    return r ? cu_fail(c, r, err, "asking for the kernel's shared memory (cuFuncSetAttribute)")
             : 0;
}

int pf_cuda_launch(pf_cuda *c, void *fn, const unsigned grid[3], const unsigned block[3],
                   unsigned shared, void **params, pf_error *err)
{
    if (allow_shared(c, fn, shared, err))
        return -1;
    cu_result r = c->launch(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared,
                            NULL, params, NULL);
    return r ? cu_fail(c, r, err, "cuLaunchKernel") : 0;
}

int pf_cuda_synchronize(pf_cuda *c, pf_error *err)
{
    cu_result r = c->ctx_sync();
    return r ? cu_fail(c, r, err, "cuCtxSynchronize") : 0;
}

int pf_cuda_event_new(pf_cuda *c, void **ev, pf_error *err)
{
    cu_result r = c->event_create(ev, 0);  /* CU_EVENT_DEFAULT: timing enabled */
    return r ? cu_fail(c, r, err, "cuEventCreate") : 0;
}

int pf_cuda_event_record(pf_cuda *c, void *ev, pf_error *err)
{
    cu_result r = c->event_record(ev, NULL);  /* the context's default stream */
    return r ? cu_fail(c, r, err, "cuEventRecord") : 0;
}

int pf_cuda_event_ms(pf_cuda *c, void *start, void *end, double *ms, pf_error *err)
{
    float f = 0.0f;
    cu_result r = c->event_sync(end);
    if (r)
        return cu_fail(c, r, err, "running the kernels (cuEventSynchronize)");
    if ((r = c->event_elapsed(&f, start, end)) != 0)
        return cu_fail(c, r, err, "cuEventElapsedTime");
    *ms = f;
    return 0;
}

void pf_cuda_event_free(pf_cuda *c, void *ev)
{
    if (ev)
        c->event_destroy(ev);
}

int pf_cuda_make_current(pf_cuda *c, pf_error *err)
{
    cu_result r = c->ctx_set(c->ctx);
    return r ? cu_fail(c, r, err, "cuCtxSetCurrent") : 0;
}
