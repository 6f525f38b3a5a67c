/* The host side of a GPU-lowered function, without a device (docs/gpu.md §5): it walks the
 * statements the host runs (lets, `if`, loops around kernels, allocations of whole images),
 * evaluating their scalars, and at each kernel nest (as gpu_ptx.c numbers them) reports its
 * launch: grid, block, dynamic shared memory (the largest any block's windows need), and the
 * values of the variables the kernel takes. A device layer (the CUDA backend) launches; a test
 * checks the geometry on a machine without a GPU. */
#ifndef PF_CODEGEN_GPU_HOST_H
#define PF_CODEGEN_GPU_HOST_H

#include "base/error.h"
#include "codegen/ir.h"

#include <stddef.h>
#include <stdint.h>

/* A scalar of the host: integers (bool, i32, i64) in i, f32 in f. */
typedef struct pf_gpu_value {
    int64_t i;
    float f;
} pf_gpu_value;

typedef struct pf_gpu_launch {
    const ir_stmt *nest;       /* the kernel's statement */
    unsigned grid[3], block[3];
    size_t shared_bytes;
    const pf_gpu_value *vars;  /* by var id: the host's values when it launches */
    const char *known;         /* by var id: whether the host has a value for it */
} pf_gpu_launch;

/* A stage-runtime call (reconstruct/stage_rt.h) the host runs between launches: adaptive
 * sampling's refinement, importance sampling's mask and a reconstruction from such a mask
 * (docs/gpu.md §5). Its statement, its scalar arguments evaluated, and its buffers' extents and
 * strides (in elements; the device's dense layout). gpu_rtcall.c runs it on host copies. */
#define PF_GPU_RTCALL_ARGS (3 * IR_MAX_DIMS + 12)
typedef struct pf_gpu_rtcall {
    const ir_stmt *s;
    pf_gpu_value args[PF_GPU_RTCALL_ARGS];
    int64_t extent[3][IR_MAX_DIMS], stride[3][IR_MAX_DIMS];
} pf_gpu_rtcall;

/* Whether the host runs call s (else the walk refuses it); whether the call reads (the host
 * then needs the device's copy first) or writes (the device then needs the host's) its
 * buffer i. */
bool pf_gpu_rtcall_on_host(const ir_stmt *s);
bool pf_gpu_rtcall_reads(const ir_stmt *s, int i);
bool pf_gpu_rtcall_writes(const ir_stmt *s, int i);
/* Runs the call on host memory: data[i] holds buffer i (s->bufs[i]) in c's layout. Returns 0,
 * or -1 with err (the runtime's status: bad arguments, no memory, a mask without samples). */
int pf_gpu_rtcall_run(const pf_gpu_rtcall *c, float *const *data, pf_error *err);

typedef struct pf_gpu_host_ops {
    void *ctx;
    /* a whole internal image (its strides set: dense, x innermost) before its users, and after;
     * zero: when it must start 0 (the allocation's flag), and at the IR's zero_buffer calls */
    int (*alloc)(void *ctx, const ir_buffer *b, size_t bytes, bool zero, pf_error *err);
    void (*release)(void *ctx, const ir_buffer *b);
    int (*zero)(void *ctx, const ir_buffer *b, pf_error *err);
    int (*launch)(void *ctx, const pf_gpu_launch *l, pf_error *err);
    /* a runtime call pf_gpu_rtcall_on_host accepts (NULL: refused) */
    int (*rtcall)(void *ctx, const pf_gpu_rtcall *c, pf_error *err);
} pf_gpu_host_ops;

/* Whether s holds a block loop (a host statement around kernels; else, a loop nest without
 * GPU loops is a kernel of one thread). gpu_ptx.c numbers kernels by the same walk. */
bool pf_gpu_has_block_loop(const ir_stmt *s);

/* The block of a kernel whose statement is s: along each dimension, the most threads of its
 * thread loops (each entry raised from its value, 1 to start). For cgen_cuda.c, which writes
 * this walk as C. */
void pf_gpu_block_threads(const ir_stmt *s, unsigned block[3]);
/* The nested GPU block loops of a kernel from s down (lets and comments between them allowed)
 * into loops[0 .. 3]; returns how many (4: more than a kernel may have). */
int pf_gpu_block_loops(const ir_stmt *s, const ir_stmt **loops);

/* Runs f's host side: extents[i][d] is argument i's extent along d (the bound buffers'; a row
 * for every argument, inputs then outputs).
 * Returns 0, or -1 with err (a runtime call the host cannot run yet, a grid that depends on
 * the block, an op's failure). */
int pf_gpu_host_run(const ir_func *f, const int64_t (*extents)[IR_MAX_DIMS],
                    const pf_gpu_host_ops *ops, pf_error *err);

#endif
