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
} pf_gpu_module;

/* The PTX of f's kernels for `sm` (NULL: PF_GPU_DEFAULT_SM). Math functions come from CUDA's
 * libdevice (libdevice_path, NULL: $CUDA_HOME or /usr/local/cuda's nvvm/libdevice); it is only
 * needed when f calls one. Returns 0, or -1 with err (what is not supported, and where). */
int pf_gpu_emit_ptx(const ir_func *f, const char *sm, const char *libdevice_path,
                    pf_gpu_module *out, pf_error *err);
void pf_gpu_module_free(pf_gpu_module *m);

/* The libdevice file pf_gpu_emit_ptx would use, or NULL when there is none. */
const char *pf_gpu_libdevice_path(char *buf, size_t cap);

#endif
