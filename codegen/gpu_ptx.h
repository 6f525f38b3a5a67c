/* NVPTX code generation (docs/gpu.md): the kernels of a function lowered for a GPU plan, as PTX
 * text for sm_80 and newer, through LLVM-C's NVPTX target. A kernel is a host-level nest of
 * block loops (its grid) with thread loops inside (its block), shared-memory windows and
 * barriers; a host-level loop nest without GPU loops (a serial stage) becomes a kernel of one
 * thread. What stays on the host (lets, allocations of whole images, runtime calls of the
 * reconstruction) is listed, not emitted. */
#ifndef PF_CODEGEN_GPU_PTX_H
#define PF_CODEGEN_GPU_PTX_H

#include "base/error.h"
#include "codegen/ir.h"

#include <stddef.h>

#define PF_GPU_DEFAULT_SM "sm_80"

typedef struct pf_gpu_kernel {
    char name[32];       /* pf_kernel_N */
    const ir_stmt *nest; /* its statement in the IR (gpu_host.h's launches name it) */
    const char *stage;   /* the label of its outermost loop (a stage's name), or NULL */
    int block[3];        /* threads of a block along x, y, z */
    int grid_dims;       /* block loops (0: a one-thread kernel) */
    int n_params;        /* buffers and scalars it takes: */
    int n_buf_params;    /* first these buffers' data pointers (buffer ids, ascending), */
    int *buf_params;
    int n_var_params;    /* then these variables' values (var ids, ascending), */
    int *var_params;
    ir_type *var_types;  /* in these types */
    bool shared;         /* it keeps windows in (dynamic) shared memory */
    bool barrier;        /* it synchronizes its threads */
} pf_gpu_kernel;

typedef struct pf_gpu_module {
    char *ptx;           /* NUL-terminated PTX text */
    size_t ptx_len;
    int n_kernels;
    pf_gpu_kernel *kernels;
    int host_calls;      /* runtime calls that stay on the host (reconstruction, masks) */
    bool libdevice;      /* CUDA's libdevice was linked in (the program calls math functions) */
    int fused;           /* multiply-add pairs fused into FMAs (0 with strict_float) */
} pf_gpu_module;

/* How the kernels are compiled; a zeroed struct (or NULL) is the default. */
typedef struct pf_gpu_ptx_options {
    const char *sm;         /* the PTX target; NULL: PF_GPU_DEFAULT_SM */
    const char *libdevice;  /* CUDA's libdevice; NULL: $CUDA_HOME or /usr/local/cuda's
                               nvvm/libdevice (only needed when f calls exp, log, ...) */
    bool strict_float;      /* every product rounded before the add that uses it (the
                               interpreter's semantics). The default fuses such a pair into one
                               FMA (codegen/llvm_contract.c), as nvcc (--fmad=true) and Halide's
                               GPU code do: about an ulp per fused add */
} pf_gpu_ptx_options;

/* The PTX of f's kernels. Returns 0, or -1 with err (what is not supported, and where). */
int pf_gpu_emit_ptx(const ir_func *f, const pf_gpu_ptx_options *o, pf_gpu_module *out,
                    pf_error *err);
void pf_gpu_module_free(pf_gpu_module *m);

/* The libdevice file pf_gpu_emit_ptx would use, or NULL when there is none. */
const char *pf_gpu_libdevice_path(char *buf, size_t cap);

#endif
