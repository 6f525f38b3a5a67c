/* State shared by the GPU emitter's files (gpu_ptx.c: kernels and GPU loops; gpu_module.c: the
 * NVPTX module, its kernels' frames and PTX output; gpu_rt.c: the device runtime). Not a
 * public interface. */
#ifndef PF_CODEGEN_GPU_INTERNAL_H
#define PF_CODEGEN_GPU_INTERNAL_H

#include "codegen/gpu_ptx.h"
#include "codegen/llvm_internal.h"

typedef struct gpu_emit {
    pf_gpu_module *out;
    pf_gpu_kernel *kernel;     /* the kernel being emitted */
    int cap_kernels;
    const ir_var **vars;       /* by id: every variable of the function */
    LLVMValueRef shared;       /* the dynamic shared memory (addrspace 3) */
    LLVMValueRef shared_off;   /* i64: floats of it the enclosing windows hold */
    LLVMValueRef *module_var;  /* the constant tables' globals, by var id */
    bool failed;
    pf_error *err;
} gpu_emit;

static inline gpu_emit *gpu_state(emit *e)
{
    return (gpu_emit *)e->gpu_state;
}

/* gpu_module.c */
int gpu_module_begin(emit *e, gpu_emit *g, const ir_func *f, const em_gpu_hooks *hooks,
                     pf_gpu_module *out, pf_error *err);
int gpu_module_finish(emit *e, gpu_emit *g, const pf_gpu_ptx_options *o, pf_error *err);
const ir_var **gpu_vars_by_id(gpu_emit *g);
pf_gpu_kernel *gpu_new_kernel(gpu_emit *g, const ir_stmt *s, int n_params);
/* Makes fn the kernel being emitted (fresh variable and buffer tables, entry block, builder at
 * the start of its code); gpu_end_kernel returns and marks it a kernel launched with at most
 * block[0] x block[1] x block[2] threads. */
void gpu_begin_kernel(emit *e, LLVMValueRef fn);
void gpu_end_kernel(emit *e, const unsigned block[3]);
/* The special register %reg.{x,y,z} (tid, ntid, ctaid). */
LLVMValueRef gpu_sreg(emit *e, const char *reg, int dim);
/* count floats from p set to 0 by the block's threads together, then a barrier. */
void gpu_zero_shared(emit *e, LLVMValueRef p, LLVMValueRef count);
/* Records the first unsupported construct (the emission goes on, its result is dropped). */
void gpu_unsupported(emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* gpu_rt.c: bodies for the device runtime functions the kernels call (noise, perforation
 * hash, sort, median), math intrinsics renamed to libdevice's; whether libdevice is needed. */
bool gpu_device_runtime(emit *e);
/* Links libdevice (path) into e->mod. */
int gpu_link_libdevice(emit *e, const char *path, pf_error *err);

#endif
