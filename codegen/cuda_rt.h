/* The runtime of an exported CUDA library (docs/export.md, "CUDA"): shipped inside the export
 * as perfora_cuda_rt.c with base/error.c and codegen/cuda_driver.c (the driver API through
 * dlopen), so it depends on libc, libdl and pthreads only. The generated host code (cgen_cuda.c)
 * records a call's plan: the allocations, zeroing and launches (grid, block, shared memory, the
 * host's values of each kernel's parameters) that gpu_host.c's walk makes for the arguments'
 * extents; this runtime keeps it, with device memory, across calls of the same extents and
 * replays it on the device between two CUDA events. Also compiled into perfora, where the tests
 * compare the generated code's plans with gpu_host.c's walk without a GPU. */
#ifndef PF_CODEGEN_CUDA_RT_H
#define PF_CODEGEN_CUDA_RT_H

#include "base/buffer.h"
#include "base/error.h"
#include "codegen/cuda_driver.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PF_CRT_MAX_DIMS 4
#define PF_CRT_MAX_SHARED (227 * 1024)  /* sm_80/sm_90's most dynamic shared memory a block */

/* A kernel of the PTX: its entry's name and its parameters, as gpu_ptx.c lays them out: first
 * the buffers' device addresses (buffer ids; -1 for a shared-memory window, passed as 0), then
 * n_vars host values, each in an 8-byte slot (pf_gpu_kernel_params). */
typedef struct pf_crt_kernel {
    const char *name;
    int n_bufs;
    const int *bufs;
    int n_vars;
} pf_crt_kernel;

typedef struct pf_crt_plan pf_crt_plan;

/* What the generated code describes: the PTX, its kernels, the buffers (by id: the arguments'
 * and the internal images'), and the walk that records a plan for the arguments' extents
 * (ext[i][d]: argument i's extent along d, inputs then outputs). */
typedef struct pf_crt_program {
    const char *ptx;
    int n_kernels;
    const pf_crt_kernel *kernels;
    int n_buffers;
    int n_inputs, n_outputs;
    const int *arg_bufs;          /* by argument: its buffer id */
    int (*walk)(pf_crt_plan *plan, const int64_t (*ext)[PF_CRT_MAX_DIMS]);
} pf_crt_program;

typedef enum pf_crt_op { PF_CRT_ALLOC, PF_CRT_ZERO, PF_CRT_LAUNCH } pf_crt_op;

typedef struct pf_crt_action {
    pf_crt_op op;
    int buf;                      /* ALLOC, ZERO: the buffer id */
    int64_t bytes;                /* ALLOC: the image's bytes */
    bool zero;                    /* ALLOC: it starts at 0 */
    int kernel;                   /* LAUNCH: the kernel, its geometry, */
    unsigned grid[3], block[3], shared;
    size_t first_slot;            /* and its host values, slots[first_slot ...] */
} pf_crt_action;

struct pf_crt_plan {
    const pf_crt_program *prog;
    pf_crt_action *acts;
    int n_acts, cap_acts;
    uint64_t *slots;
    size_t n_slots, cap_slots;
    int64_t *most;                /* by buffer id: the largest image the plan allocates */
    int status;                   /* 0, or the first failure's PF_CRT_* code */
    pf_error err;
};

/* Status codes of the calls below (an exported library maps them to its own). */
enum { PF_CRT_OK = 0, PF_CRT_MEMORY = 1, PF_CRT_NO_DEVICE = 2, PF_CRT_CUDA = 3 };

/* ---- what the generated walk calls ---- */

/* An internal image of `bytes` (zeroed when zero); it keeps device memory across calls. */
int pf_crt_alloc(pf_crt_plan *plan, int buf, int64_t bytes, bool zero);
int pf_crt_zero(pf_crt_plan *plan, int buf);
/* A launch of kernel k: its n_vars slots (zeroed) to fill with pf_crt_slot_*, or NULL when it
 * cannot be launched (shared memory above PF_CRT_MAX_SHARED; memory). */
uint64_t *pf_crt_launch(pf_crt_plan *plan, int k, const unsigned grid[3],
                        const unsigned block[3], int64_t shared_bytes);
/* The walk cannot go on (a grid the device cannot have): -1, with the message. */
int pf_crt_fail(pf_crt_plan *plan, const char *msg);

static inline void pf_crt_slot_i32(uint64_t *slot, int32_t v) { memcpy(slot, &v, 4); }
static inline void pf_crt_slot_i64(uint64_t *slot, int64_t v) { memcpy(slot, &v, 8); }
static inline void pf_crt_slot_f32(uint64_t *slot, float v) { memcpy(slot, &v, 4); }
static inline void pf_crt_slot_bool(uint64_t *slot, bool v)
{
    uint8_t u = v;
    memcpy(slot, &u, 1);
}

/* ---- plans, without a device ---- */

/* The plan of prog for these extents: 0, or a PF_CRT_* code with err. */
int pf_crt_plan_make(const pf_crt_program *prog, const int64_t (*ext)[PF_CRT_MAX_DIMS],
                     pf_crt_plan *plan, pf_error *err);
void pf_crt_plan_free(pf_crt_plan *plan);
/* The parameter block of action a (a launch): each parameter in an 8-byte slot, buffers as
 * device addresses from dptr (by buffer id), as cuLaunchKernel takes them through params.
 * Fails naming the buffer when one has no device memory. */
int pf_crt_params(const pf_crt_plan *plan, const pf_crt_action *a, const uint64_t *dptr,
                  uint64_t *slots, void **params, pf_error *err);

/* ---- calls on the device ---- */

typedef struct pf_crt_times {
    double kernel_ms;    /* first launch to last (zeroing included), CUDA events */
    double upload_ms;    /* the inputs to the device, host clock (0 for device pointers) */
    double download_ms;  /* the outputs back, host clock (0 for device pointers) */
    int launches;
} pf_crt_times;

/* A library's state: one per exported program, static, initialized with PF_CRT_STATE(prog).
 * Calls serialize on its lock. */
typedef struct pf_crt_state {
    const pf_crt_program *prog;
    pthread_mutex_t lock;
    pf_cuda *cuda;
    void *module;
    void **fns;                   /* by kernel */
    uint64_t *own;                /* by buffer id: device memory this library allocated */
    size_t *cap;                  /* by buffer id: its bytes */
    void *ev[2];
    float *stage;                 /* host staging for arguments that are not dense */
    size_t stage_cap;
    pf_crt_plan plan;             /* the last call's, kept for calls of the same extents */
    bool planned;
    int64_t plan_ext[16][PF_CRT_MAX_DIMS];
    bool lost;                    /* a kernel faulted: the context is unusable */
    char lost_msg[PF_ERROR_MAX];
    pf_crt_times times;
} pf_crt_state;

#define PF_CRT_STATE(program) { .prog = (program), .lock = PTHREAD_MUTEX_INITIALIZER }

/* One call on host memory: the inputs uploaded, the plan replayed, the outputs downloaded
 * (args: inputs then outputs, any strides with stride[0] = 1). Device memory (the arguments'
 * copies, the internal images) is kept for the next call. 0, or a PF_CRT_* code with err. */
int pf_crt_run(pf_crt_state *s, const pf_buffer *args, pf_error *err);
/* One call on device memory the caller owns (dptr: by argument, dense images of extents ext,
 * in device 0's primary context, the CUDA runtime's): only the kernels run. */
int pf_crt_run_device(pf_crt_state *s, const uint64_t *dptr,
                      const int64_t (*ext)[PF_CRT_MAX_DIMS], pf_error *err);
/* The last successful call's times. */
pf_crt_times pf_crt_last_times(pf_crt_state *s);
/* Frees the device memory and the module (the next call loads them again). */
void pf_crt_release(pf_crt_state *s);

#endif
