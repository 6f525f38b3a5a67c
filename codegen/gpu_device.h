/* The device side of the CUDA backend (docs/gpu.md §4): a GPU-lowered function's kernels loaded
 * into the driver's context, device memory kept across calls (the arguments' copies and the
 * internal images), and a call: the inputs uploaded, the host walk's launches (gpu_host.h)
 * between two CUDA events, the outputs downloaded. Kernel time is the events'; the transfers
 * are timed apart, on the host's clock, and are not part of it. */
#ifndef PF_CODEGEN_GPU_DEVICE_H
#define PF_CODEGEN_GPU_DEVICE_H

#include "base/buffer.h"
#include "base/error.h"
#include "codegen/gpu_host.h"
#include "codegen/gpu_ptx.h"
#include "codegen/ir.h"

/* The times of one call, in milliseconds. */
typedef struct pf_device_times {
    double kernel_ms;    /* first launch to last, CUDA events (zeroing included) */
    double upload_ms;    /* the inputs to the device (host clock) */
    double download_ms;  /* the outputs back (host clock) */
    int launches;
} pf_device_times;

typedef struct pf_gpu_program pf_gpu_program;

/* Opens the driver and loads m's PTX; the program takes m (freed with it or on failure). Its
 * kernels name statements of f, which must outlive the program. NULL with err: no driver, no
 * device, a kernel the driver refuses. */
pf_gpu_program *pf_gpu_program_new(const ir_func *f, pf_gpu_module *m, pf_error *err);

/* One call: args are the function's arguments (inputs then outputs, any strides); outputs are
 * overwritten. A kernel that faults leaves the context unusable: this call and every later one
 * fail with the driver's message. */
int pf_gpu_program_run(pf_gpu_program *p, const pf_buffer *args, pf_device_times *t,
                       pf_error *err);

/* The last call's kernels again, on the inputs it left on the device (nothing moves): for
 * timing blocks of calls. Fails when the last call failed or there was none. */
int pf_gpu_program_rerun(pf_gpu_program *p, pf_device_times *t, pf_error *err);

/* Whether a kernel of this process faulted: the CUDA context, shared by every program of the
 * process, is then unusable until the process ends (a search worker ends and is restarted). */
bool pf_gpu_context_lost(void);

const char *pf_gpu_program_device(const pf_gpu_program *p);
void pf_gpu_program_free(pf_gpu_program *p);

/* The parameter block of a launch of kernel k: each parameter's bytes in an 8-byte slot (buffer
 * data as device addresses from dptr, by buffer id; variables in their types, zero-padded),
 * and params[i] pointing at slot i, as cuLaunchKernel takes them. Fails, naming it, on a
 * buffer without device memory (not shared) or a variable the host has no value for. Exposed
 * for tests, which check it against the PTX's parameter list without a GPU. */
int pf_gpu_kernel_params(const ir_func *f, const pf_gpu_kernel *k, const uint64_t *dptr,
                         const pf_gpu_value *vars, const char *known, uint64_t *slots,
                         void **params, pf_error *err);

#endif
