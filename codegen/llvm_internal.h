/* State shared by the LLVM emitter's files (llvm_emit.c: functions and statements,
 * llvm_expr.c: expressions, loads and boundary handling). Not a public interface. */
#ifndef PF_CODEGEN_LLVM_INTERNAL_H
#define PF_CODEGEN_LLVM_INTERNAL_H

#include "codegen/llvm_emit.h"
#include "codegen/split.h"

typedef struct emit emit;

/* GPU emission (codegen/gpu_ptx.c): statements the kernels emit their own way. loop: every
 * loop (block and thread loops, the others serial); alloc: a shared-memory window; barrier. */
typedef struct em_gpu_hooks {
    void (*loop)(emit *e, const ir_stmt *s);
    void (*alloc)(emit *e, const ir_stmt *s);
    void (*barrier)(emit *e);
} em_gpu_hooks;

struct emit {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMBuilderRef ab;          /* positioned in the entry block, for allocas */
    LLVMTypeRef t_i1, t_i8, t_i32, t_i64, t_f32, t_f64, t_ptr, t_void;
    LLVMValueRef fn;            /* the body function being built */
    LLVMBasicBlockRef fail_bb;  /* returns 1 (allocation failure) */
    LLVMBasicBlockRef rt_fail_bb;  /* returns 3 (the stage runtime failed) */
    const ir_func *irf;
    int cold;                   /* > 0 while emitting code that runs a few iterations each time
                                   (a cold loop, a vector loop's scalar tail) */
    bool scalar_math;           /* exp, log, pow... on vectors: one libm call per lane
                                   (pf_compile_options.no_vector_math) */
    LLVMValueRef *var;          /* by var id: SSA value (LET) or alloca (MUT, LOOP, ARRAY) */
    LLVMValueRef *buf_data;     /* by buffer id */
    /* Row pointers computed in the current basic block, keyed by buffer and the indices of
     * dimensions 1.., so the taps of a stencil share one address computation. */
    int n_rows;
    struct em_row {
        LLVMBasicBlockRef bb;
        const ir_buffer *buf;
        const ir_expr *idx[IR_MAX_DIMS];
        LLVMValueRef ptr;
        bool point;  /* the address of a point, every index part of the key (GPU taps) */
    } rows[32];
    /* A split compile (split.h): the plan, and the functions of pieces with their modules. */
    const pf_split *split;
    int n_owned, cap_owned;
    struct em_owned {
        LLVMValueRef fn;
        int module, piece;
    } *owned;
    const em_gpu_hooks *gpu;    /* NULL: CPU code */
    int in_gpu_block;           /* > 0: CPU code of a GPU block loop, whose loads and stores
                                   are addressed as in the kernel (llvm_expr.c, gpu_tap_ptr) */
    void *gpu_state;            /* the GPU emitter's own state */
};

/* Builds f into a new module e->mod in ctx (split: the task functions of the plan's pieces
 * external where their module differs from the code around them) and verifies it. Returns
 * the entry point, or NULL with err set and the module disposed. The caller frees e->owned. */
LLVMValueRef em_module(emit *e, const ir_func *f, LLVMContextRef ctx, const char *name,
                       const pf_split *split, pf_error *err);
LLVMValueRef em_expr(emit *e, const ir_expr *x);
/* llvm_emit.c: the scalar types, and the constant tables as module globals. */
void em_init_types(emit *e);
void em_define_tables(emit *e);
/* llvm_emit.c: a window buffer's base (image coordinates 0) from the address of its first
 * element p, its strides and origin being set. */
LLVMValueRef em_window_base(emit *e, const ir_buffer *b, LLVMValueRef p);
/* llvm_parallel.c: the variables s uses from outside itself (vars[id] = 1) and the buffers it
 * uses (bufs[id] = 1); both arrays zeroed by the caller, of n_vars and n_buffers entries. */
void em_free_values(const ir_func *f, const ir_stmt *s, char *vars, char *bufs);
LLVMTypeRef em_type(emit *e, ir_type t);
LLVMValueRef em_i32(emit *e, int64_t v);
LLVMValueRef em_i64(emit *e, int64_t v);
/* Calls an overloaded intrinsic such as "llvm.smax" on values of type `over`. */
LLVMValueRef em_intrinsic(emit *e, const char *name, LLVMTypeRef over, LLVMValueRef *args,
                          int n);
/* Calls (declaring on first use) an external function. */
LLVMValueRef em_call_ext(emit *e, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                         int n, LLVMValueRef *args);
/* LLVM's memory(...) attribute values (MemoryEffects: two bits per location, argument memory
 * first): touches no memory; reads and writes only memory its pointer arguments point to. */
#define EM_MEMORY_NONE 0
#define EM_MEMORY_ARGS 3
/* em_call_ext for a function that returns, never unwinds and touches only the memory given:
 * LLVM may then keep values in registers across the call. Without it a call in a loop
 * counts as a write to every buffer whose address escaped (to another module's piece, say). */
LLVMValueRef em_call_known(emit *e, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                           int n, LLVMValueRef *args, int memory);
/* Element pointer of buf at the given in-range i32 indices. */
LLVMValueRef em_element_ptr(emit *e, const ir_buffer *buf, LLVMValueRef *idx);
/* Index i's position along d: i & (F - 1) in a folded window (ir.h), else i (scalar or vector). */
LLVMValueRef em_fold(emit *e, const ir_buffer *buf, int d, LLVMValueRef i);
LLVMValueRef em_gep(emit *e, const ir_buffer *buf, LLVMValueRef base, LLVMValueRef off,
                    const char *name);
/* Element pointer for IR index expressions known to be inside the buffer: evaluated in 64-bit
 * arithmetic (exact for in-range values) with row pointers shared within a basic block. */
LLVMValueRef em_inside_ptr(emit *e, const ir_buffer *buf, ir_expr *const *idx);
/* The value of a variable: SSA value, or a load from its alloca. */
LLVMValueRef em_var(emit *e, const ir_var *v);
LLVMValueRef entry_alloca(emit *e, LLVMTypeRef t, const char *name);
LLVMBasicBlockRef new_block(emit *e, const char *name);
LLVMTypeRef buffer_struct(emit *e);
void em_stmt(emit *e, const ir_stmt *s);
/* llvm_parallel.c: a parallel loop as an outlined body run by pf_rt_parallel_for; when piece
 * is not NULL its task function is that piece of a split compile. */
void em_parallel_for(emit *e, const ir_stmt *s, const pf_piece *piece);
/* A serial loop from lo, i32 or i64 (a vector loop's scalar tail: is_tail). */
void em_serial_loop(emit *e, const ir_stmt *s, LLVMValueRef lo, bool is_tail);
/* The counting of a serial loop (ir.h: exact; in 64 bits where ir_for_counts_wide says so or
 * lo is i64). em_count_open evaluates hi and step, binds s's variable and leaves the builder in
 * the body; em_count_close adds the step, branches back (the branch is returned, for loop
 * metadata) and leaves the builder after the loop. */
typedef struct em_count {
    LLVMValueRef ctr, hi, step;  /* the counter's alloca (var's own when not wide) */
    LLVMTypeRef t;
    LLVMBasicBlockRef head, exit;
} em_count;
void em_count_open(emit *e, const ir_stmt *s, LLVMValueRef lo, em_count *c);
LLVMValueRef em_count_close(emit *e, em_count *c);
/* Iterations of [lo, hi) by step > 0 (i32 values): 0 when lo >= hi (for any lo and hi), else
 * (hi - lo - 1) / step + 1, exact when lo >= 0 (the vector and parallel loops it counts start
 * at 0 or later). */
LLVMValueRef em_trip_count(emit *e, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef step);
/* llvm_parallel.c: a cold serial loop (a border copy, a scalar tail) from lo, outlined into an
 * internal function named EM_COLD_NAME that is never inlined and is compiled by LLVM's fast
 * instruction selector (jit_optimize marks it optnone after the IR passes). */
#define EM_COLD_NAME "pf_cold"
void em_cold_loop(emit *e, const ir_stmt *s, LLVMValueRef lo, bool is_tail);
/* llvm_srt.c: the calls into the stage runtime (reconstruct/stage_rt.h). */
void em_stage_rt(emit *e, const ir_stmt *s);
/* Attaches llvm.loop metadata to a loop's latch branch: an unroll count (> 1) or else no
 * runtime unrolling, and for scalar tails of vectorized loops no vectorization. */
void em_loop_metadata(emit *e, LLVMValueRef br, int unroll, bool is_tail);
/* ... and to a loop that is never unrolled (a parallel loop's chunk of iterations). */
void em_loop_no_unroll(emit *e, LLVMValueRef br);
/* llvm_vec.c: explicit vectorization of a loop (when the body allows it). em_vector_loop runs
 * the whole vectors and returns where the scalar tail starts. */
bool em_can_vectorize(emit *e, const ir_stmt *s);
LLVMValueRef em_vector_loop(emit *e, const ir_stmt *s);
/* llvm_vmath.c: fn (exp, log, pow, sin, cos) on W lanes (exp inline, the others through
 * libmvec), or NULL when not available for this function, width or host (the caller then
 * scalarizes). */
bool em_vector_math_available(void);
/* Whether the host CPU has LLVM target feature `name` ("avx", "avx2", ...; not a longer one). */
bool em_host_has_feature(const char *name);
/* The runtime's median of n elements of array a at p, n clamped into [1, a's length]. */
LLVMValueRef em_runtime_median(emit *e, const ir_var *a, LLVMValueRef p, LLVMValueRef n);
LLVMValueRef em_vector_math(emit *e, ir_fn fn, LLVMValueRef *args, int n_args, int W);
/* llvm_vexp.c: exp of a <W x float> as inline code (at most 1.01 ulp from exp). */
LLVMValueRef em_vector_exp(emit *e, LLVMValueRef x, int W);
/* Index i of buf along d with the buffer's boundary mode applied (clamp, wrap, mirror; for a
 * constant boundary clamped, with `inside` and-ed with whether i was in range). */
LLVMValueRef em_boundary_index(emit *e, const ir_buffer *buf, int d, LLVMValueRef i,
                               LLVMValueRef *inside);
/* An array index clamped into [0, len - 1]. */
LLVMValueRef em_clamped_index(emit *e, const ir_var *a, LLVMValueRef index);
/* Array element pointer with the index clamped into [0, len - 1]. */
LLVMValueRef em_array_ptr(emit *e, const ir_var *a, LLVMValueRef index);

#endif
