/* The CUDA driver API, loaded at run time (dlopen of libcuda.so.1, or $PF_CUDA_DRIVER): perfora
 * has no link-time dependency on CUDA, builds and runs its CPU targets without it, and says
 * clearly when `--target cuda` finds no driver or no device (docs/gpu.md). A handle holds
 * device 0's primary context. Device pointers are plain 64-bit integers. */
#ifndef PF_CODEGEN_CUDA_DRIVER_H
#define PF_CODEGEN_CUDA_DRIVER_H

#include "base/error.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pf_cuda pf_cuda;

/* NULL with err: "no CUDA driver found (...)" when the library does not load or lacks the
 * API, "no CUDA device (...)" when it initializes to no device. */
pf_cuda *pf_cuda_open(pf_error *err);
void pf_cuda_close(pf_cuda *c);
/* Makes the handle's context the calling thread's (a run on another thread than the open). */
int pf_cuda_make_current(pf_cuda *c, pf_error *err);
const char *pf_cuda_device_name(const pf_cuda *c);
/* The device's compute capability as major * 10 + minor (90 for sm_90). */
int pf_cuda_capability(const pf_cuda *c);

/* PTX text into a module of the context, and its kernels by name. */
int pf_cuda_load_ptx(pf_cuda *c, const char *ptx, void **module, pf_error *err);
int pf_cuda_kernel(pf_cuda *c, void *module, const char *name, void **fn, pf_error *err);
void pf_cuda_unload(pf_cuda *c, void *module);

int pf_cuda_alloc(pf_cuda *c, size_t bytes, uint64_t *dptr, pf_error *err);
void pf_cuda_free(pf_cuda *c, uint64_t dptr);
int pf_cuda_upload(pf_cuda *c, uint64_t dst, const void *src, size_t bytes, pf_error *err);
int pf_cuda_download(pf_cuda *c, void *dst, uint64_t src, size_t bytes, pf_error *err);
/* Launches fn on grid x block threads with `shared` bytes of dynamic shared memory; params
 * points at each parameter's value (cuLaunchKernel's convention). */
int pf_cuda_launch(pf_cuda *c, void *fn, const unsigned grid[3], const unsigned block[3],
                   unsigned shared, void **params, pf_error *err);
int pf_cuda_synchronize(pf_cuda *c, pf_error *err);
/* bytes (a multiple of 4) of device memory set to 0 (cuMemsetD32). */
int pf_cuda_zero(pf_cuda *c, uint64_t dst, size_t bytes, pf_error *err);

/* Events on the default stream, for kernel times: record one before and one after, then
 * pf_cuda_event_ms waits for the second and gives the milliseconds between them. */
int pf_cuda_event_new(pf_cuda *c, void **ev, pf_error *err);
int pf_cuda_event_record(pf_cuda *c, void *ev, pf_error *err);
int pf_cuda_event_ms(pf_cuda *c, void *start, void *end, double *ms, pf_error *err);
void pf_cuda_event_free(pf_cuda *c, void *ev);

#endif
