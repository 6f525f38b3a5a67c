/* The loop IR: what a checked (and perforated) program is lowered to before LLVM or C emission,
 * and what schedule passes rewrite.
 *
 * Semantics preamble (as in Halide's IR.h):
 * - Expressions are pure, typed scalars (bool, i32, i64, f32, f64) and immutable once built: passes
 *   build new nodes and may share subtrees. Integer +,-,* wrap (32/64-bit two's complement);
 *   IR_DIV/IR_MOD on integers are the language's safe C division (x/0 = 0, x%0 = 0,
 *   INT_MIN/-1 = INT_MIN); IR_MIN/IR_MAX are `b < a ? b : a` / `a < b ? b : a`. Float arithmetic
 *   is IEEE binary32, never contracted or reassociated.
 * - Loads name a buffer and one index per dimension. `clamp_mask` bit d says the index along d
 *   may fall outside the buffer and needs the buffer's boundary mode; a clear bit is a promise
 *   (by construction or by a pass that proved it) that the index is inside. Stores likewise have
 *   a `check_mask`: a store whose index is outside along a checked dimension is dropped. A
 *   `scatter` store writes outside the iteration's own pixel, so its loop must stay serial.
 * - Variables: IR_VAR_LET is defined once by an IR_S_LET and visible for the rest of the block
 *   that contains the let (and nested blocks); IR_VAR_MUT is a mutable local declared by IR_S_DECL
 *   and changed by IR_S_ASSIGN; IR_VAR_LOOP is bound by an IR_S_FOR; IR_VAR_ARRAY is a local
 *   array declared by IR_S_ARRAY_DECL.
 * - IR_S_FOR runs var = lo, lo + step, ... while var < hi (hi exclusive; step > 0), counting
 *   exactly: var + step never wraps, the loop ends when it would reach hi or pass 2^31 - 1
 *   (ir_for_counts_wide says when an emitter must count in 64 bits). lo, hi and step are i32,
 *   or all three i64 on a serial loop whose bounds do not fit (an inclusive upper bound of
 *   2147483647 is hi = 2^31; `for` loops and reductions, lower_stmt.c): var stays i32 and takes
 *   only i32 values. Its `kind` asks for serial, parallel (iterations on the runtime's thread
 *   pool), vectorized (`width` lanes of SIMD) or unrolled execution; kinds other than serial
 *   are only legal on loops whose iterations are independent.
 * - Buffers are N-D float arrays (N = 1..4) with extents and strides held in variables; x (dim 0)
 *   has stride 1. Pipeline inputs/outputs come from the caller; internal buffers are allocated
 *   zeroed by IR_S_ALLOC around their users. */
#ifndef PF_CODEGEN_IR_H
#define PF_CODEGEN_IR_H

#include "base/arena.h"
#include "base/strbuf.h"
#include "lang/ast.h"

#include <stdbool.h>
#include <stdint.h>

#define IR_MAX_DIMS 4

/* IR_F64 is a scalar type only (constants, lets, mutable locals, arithmetic, comparisons and
 * casts to and from f32 and the integers): buffers, arrays and calls stay f32. It carries
 * recursions that must run in double, as the CPU runtime runs them (the GPU Gaussian's
 * recursive filter, codegen/lower_gauss_gpu.c). */
typedef enum ir_type { IR_BOOL, IR_I32, IR_I64, IR_F32, IR_F64 } ir_type;

static inline bool ir_type_is_float(ir_type t)
{
    return t == IR_F32 || t == IR_F64;
}

typedef enum ir_var_kind { IR_VAR_LET, IR_VAR_MUT, IR_VAR_LOOP, IR_VAR_ARRAY } ir_var_kind;

typedef struct ir_var {
    int id;              /* unique within the function */
    const char *name;    /* for printing: unique within the function */
    ir_type type;        /* element type for arrays */
    ir_var_kind kind;
    int array_len;       /* IR_VAR_ARRAY */
    const void *const_init;  /* IR_VAR_ARRAY: read-only table (int32_t or float values) that
                                exists for the whole function, needs no IR_S_ARRAY_DECL */
    bool positive;       /* known >= 1 whenever the function runs (an image extent: pf_bind
                            refuses extents < 1); the affine reasoning relies on it */
} ir_var;

typedef enum ir_buffer_kind { IR_BUF_INPUT, IR_BUF_OUTPUT, IR_BUF_INTERNAL } ir_buffer_kind;

typedef struct ir_buffer {
    int id;
    const char *name;
    ir_buffer_kind kind;
    int arg_index;          /* INPUT/OUTPUT: position in the function's buffer arguments */
    int ndims;
    ir_var *extent[IR_MAX_DIMS];  /* i32 lets */
    ir_var *stride[IR_MAX_DIMS];  /* i64 lets; stride[0] is 1 */
    /* Arguments: extent d is taken from the caller's buffer (a size name's first binding);
     * otherwise the function defines it with a let from the declaration, and the caller
     * guarantees the buffer has that extent (pf_bind checks it). */
    bool extent_is_param[IR_MAX_DIMS];
    bool dense;             /* INTERNAL: rows not padded (runtime planes with row stride n1) */
    /* INTERNAL, window (per-tile scratch of a compute-at producer): the allocation holds only
     * [origin[d], origin[d] + size[d]) of the image; like the strides, these i32 variables are
     * defined by the ALLOC (from its window expressions) for its body. Indices stay image
     * coordinates, clamped against the extents as usual, and must fall inside the window;
     * strides follow the sizes. No runtime call may take a window buffer. */
    bool window;
    ir_var *origin[IR_MAX_DIMS], *size[IR_MAX_DIMS];
    /* Window, along d >= 1: 0, or F, a power of two: the window is folded, it holds F
     * consecutive indices at a time (origin 0, size F along d) and index i lives at position
     * i & (F - 1), applied after the boundary mode (a circular buffer of rows: `at C slide`,
     * codegen/lower_at.c). Every element address of the buffer folds (llvm_expr.c, llvm_vec.c,
     * cgen.c). */
    int fold[IR_MAX_DIMS];
    bool gpu_shared;        /* INTERNAL window allocated in a GPU block's body, outside its
                               thread loops: one per block (GPU shared memory) */
    pf_boundary boundary;
    float constant_value;   /* PF_BOUNDARY_CONSTANT */
    const pf_image_decl *decl;  /* the source image, when there is one */
} ir_buffer;

typedef enum ir_expr_kind {
    IR_CONST,    /* ival (BOOL/I32/I64), fval (F32) or dval (F64) */
    IR_VARREF,   /* var (LET, MUT or LOOP) */
    IR_BIN,      /* op, a, b */
    IR_UN,       /* op (IR_NEG, IR_NOT), a */
    IR_SELECT,   /* a ? b : c */
    IR_CAST,     /* to `type` from a->type (f32->i32 truncates and saturates, NaN -> 0) */
    IR_LOAD,     /* buf[idx...] with clamp_mask */
    IR_ALOAD,    /* var (ARRAY)[a], a clamped into [0, len-1] */
    IR_CALL,     /* fn(args) */
    IR_INTERP,   /* on-demand read of an image stored downsampled (docs/perforation.md §4):
                    args are image-space indices, clamp_mask as for loads (against the image's
                    logical extents), `interp` describes the grid; buf is the storage */
} ir_expr_kind;

typedef enum ir_op {
    IR_ADD, IR_SUB, IR_MUL, IR_DIV, IR_MOD, IR_MIN, IR_MAX,
    IR_LT, IR_LE, IR_EQ, IR_NE, IR_AND, IR_OR,
    IR_NEG, IR_NOT,
} ir_op;

/* Functions callable from expressions: math (f32), the language's builtins, and runtime
 * helpers. ORDER IR_FN: keep in step with ir_fn_name() in ir.c. */
typedef enum ir_fn {
    IR_FN_EXP, IR_FN_LOG, IR_FN_SQRT, IR_FN_SIN, IR_FN_COS, IR_FN_TAN,
    IR_FN_POW, IR_FN_ATAN2, IR_FN_FLOOR, IR_FN_CEIL, IR_FN_ROUND, IR_FN_FABS,
    IR_FN_NOISE,     /* 1..4 i32 args -> f32 in [0,1): the language's noise() */
    IR_FN_MEDIAN,    /* args: [0] IR_VARREF of an array var, [1] n (i32) -> f32 or i32 */
    IR_FN_PERF_HASH, /* loop perforation's random skip: (id, j, a, b) -> f32 in [0, 1), the
                        iteration runs iff it is below p (base/noise.h pf_perf_hash) */
    IR_FN_COUNT
} ir_fn;

typedef struct ir_expr ir_expr;

/* The grid behind an IR_INTERP: the writer stage's lattice and spacings. */
typedef struct ir_interp {
    ir_buffer *image;        /* the logical image: its extents (lets) and boundary mode; never
                                allocated */
    int k;                   /* stage dimensions (the image's leading ones) */
    ir_expr *lo[IR_MAX_DIMS], *step[IR_MAX_DIMS], *n[IR_MAX_DIMS];  /* lattice, i32 */
    int spacing[IR_MAX_DIMS];
    bool linear;             /* else nearest */
    bool check_lattice;      /* the writer has `over` ranges: test lattice membership */
    int channels;            /* > 0: channels >= this are read from ref */
    ir_buffer *ref;
} ir_interp;

struct ir_expr {
    ir_expr_kind kind;
    ir_type type;
    ir_op op;
    ir_fn fn;
    int64_t ival;
    float fval;
    double dval;
    ir_var *var;
    ir_expr *a, *b, *c;
    ir_buffer *buf;
    int n_args;          /* LOAD: ndims indices; CALL: arguments */
    ir_expr **args;
    uint8_t clamp_mask;  /* LOAD, INTERP */
    bool exact;          /* BIN IR_DIV on integers: the dividend is proven a multiple of the
                            divisor (lets the vectorizer divide a lane-affine value lane-wise) */
    ir_interp *interp;   /* INTERP */
};

typedef enum ir_stmt_kind {
    IR_S_BLOCK,         /* body[n] */
    IR_S_LET,           /* var = value (immutable for the rest of the enclosing block) */
    IR_S_DECL,          /* mutable var = value */
    IR_S_ASSIGN,        /* var = value */
    IR_S_ARRAY_DECL,    /* var (ARRAY): zeroed */
    IR_S_ARRAY_STORE,   /* var[index] = value, index clamped */
    IR_S_SORT,          /* sort var (ARRAY)[0 .. n-1], n = value clamped into [0, len] */
    IR_S_STORE,         /* buf[idx...] = value */
    IR_S_FOR,           /* var from lo to hi (exclusive) by step: body */
    IR_S_IF,            /* cond: then_s else else_s (may be NULL) */
    IR_S_ALLOC,         /* buf allocated (zeroed) with its extents' current values; body */
    IR_S_RTCALL,        /* a runtime library call with buffer and scalar arguments */
    IR_S_COMMENT,       /* text, carried into dumps and C output */
    IR_S_BARRIER,       /* GPU: every thread of the block waits here (bar.sync); in a block
                           loop's body between thread-loop nests. Serially (CPU) it is nothing:
                           each thread loop runs to its end before the next statement */
} ir_stmt_kind;

/* GPU loops (docs/gpu.md): a GPU_BLOCK loop's iterations are the blocks of a kernel's grid
 * along `gpu_dim` (0 x, 1 y, 2 z); a GPU_THREAD loop's iterations are dealt out cyclically to
 * `width` threads of the block along `gpu_dim`. Both have independent iterations, so the same
 * loop run serially (the CPU backends) computes the same thing. */
typedef enum ir_loop_kind {
    IR_LOOP_SERIAL, IR_LOOP_PARALLEL, IR_LOOP_VECTORIZED, IR_LOOP_UNROLLED,
    IR_LOOP_GPU_BLOCK, IR_LOOP_GPU_THREAD
} ir_loop_kind;


/* Runtime calls made as statements (reconstruction kernels, mask builders). The argument
 * conventions of each are documented in codegen/runtime.h. ORDER IR_RT. */
typedef enum ir_rt {
    IR_RT_ZERO_BUFFER,      /* bufs[0] := 0 everywhere */
    /* The stage runtime of reconstruct/stage_rt.h. Lattice views are passed as the image
     * buffer plus args[0 .. 3k-1] = (lo, step, n) of each stage dimension. */
    IR_RT_IMPORTANCE_MASK,  /* bufs: ref, mask, aux; args: lo1, step1, lo2, step2, n1, n2,
                               frac, sigma_imp */
    IR_RT_ADAPTIVE_COARSE,  /* bufs: mask; args: n1, n2, k */
    IR_RT_ADAPTIVE_REFINE,  /* bufs: image, mask, aux; args: view (3k), k_adapt, frac */
    IR_RT_RECONSTRUCT,      /* bufs: image[, mask, aux]; args: view (3k), sample, recon,
                               s1..s4, k_adapt, frac, sigma */
    IR_RT_COPY_CHANNELS,    /* bufs: image, ref; args: view (3k), c0 */
    IR_RT_COUNT
} ir_rt;

typedef struct ir_stmt ir_stmt;
struct ir_stmt {
    ir_stmt_kind kind;
    int n;                   /* BLOCK: body count; STORE: index count; RTCALL: scalar args */
    ir_stmt **body;          /* BLOCK */
    ir_var *var;             /* LET, DECL, ASSIGN, ARRAY_*, SORT, FOR */
    ir_expr *value;          /* LET, DECL, ASSIGN, ARRAY_STORE, STORE, SORT (n) */
    ir_expr *index;          /* ARRAY_STORE */
    ir_expr **idx;           /* STORE: n indices */
    ir_buffer *buf;          /* STORE, ALLOC */
    uint8_t check_mask;      /* STORE: dimensions whose index may be outside (write dropped) */
    bool scatter;            /* STORE: not the iteration's own pixel (loop must stay serial) */
    bool atomic;             /* STORE of buf[idx] = buf[idx] + v (or - v; ir_store_addend) in a
                                stage whose writes are all such adds (perforate/exec_atomic.c):
                                its iterations may run concurrently when the read-modify-write
                                is one atomic add (GPU loops: atomicrmw fadd). Run serially it is
                                the plain store, so every other pass and backend ignores it */
    bool stream;             /* STORE: written once and not read soon: a vector store skips the
                              * cache (non-temporal) where its address is vector-aligned */
    bool zero;               /* ALLOC: the buffer must start zeroed */
    ir_expr *lo, *hi, *step; /* FOR */
    ir_loop_kind loop_kind;  /* FOR */
    bool no_split;           /* FOR: already partitioned by pass_bounds */
    bool cold;               /* FOR: runs a few iterations each time (pass_bounds' border copy
                                of a vectorized loop): its loops are compiled for size */
    int unroll;              /* FOR: unroll factor requested (0/1: none) */
    bool banded;             /* FOR, serial: the schedule asks pass_bands to run its rows in
                                parallel bands (a serial scatter stage's row loop); parallel:
                                made by pass_bands, each iteration a band whose scatters write
                                cells no other band writes (so scatters are legal inside) */
    ir_expr *align;          /* FOR: var is congruent to align modulo step (the first value
                                of the loop before any partitioning); NULL = lo */
    int width;               /* FOR: vector width or unroll factor; GPU_THREAD: threads */
    int gpu_dim;             /* FOR, GPU_BLOCK or GPU_THREAD: grid/block dimension 0..2 */
    int64_t span;            /* FOR, GPU_THREAD: hi - lo is at most this in every block (a
                                producer's region in its consumer's block; lower_at.c); 0:
                                not known */
    ir_expr *cond;           /* IF */
    ir_stmt *then_s, *else_s;/* IF; FOR and ALLOC: then_s is the body */
    ir_expr **window;        /* ALLOC of a window buffer: origin d at [2d], size d at [2d+1] */
    ir_rt rt;                /* RTCALL */
    int n_bufs;
    ir_buffer **bufs;        /* RTCALL buffer arguments */
    ir_expr **args;          /* RTCALL scalar arguments (n) */
    int view_dims;           /* RTCALL: k, the stage dimensions of the view arguments */
    const char *text;        /* COMMENT; FOR: optional label (stage or loop name) */
    uint8_t serial_why;      /* FOR (serial) and RTCALL: why its pixels run on one thread, an
                                ir_serial_why of codegen/ir_audit.h (0: no reason given) */
};

/* A lowered pipeline: one function taking its input and output buffers. */
typedef struct ir_func {
    pf_arena *arena;         /* owns every node (borrowed; usually the compilation's arena) */
    const char *name;
    int n_inputs, n_outputs;
    ir_buffer **args;        /* inputs then outputs */
    int n_buffers;
    ir_buffer **buffers;     /* every buffer, args first */
    int n_vars;              /* next var id */
    int n_tables;
    ir_var **tables;         /* constant arrays (const_init set), visible everywhere */
    ir_stmt *body;
} ir_func;

/* ---- construction ---- */

ir_func *ir_func_new(pf_arena *arena, const char *name);
ir_var *ir_var_new(ir_func *f, const char *name, ir_type type, ir_var_kind kind);
ir_buffer *ir_buffer_new(ir_func *f, const char *name, ir_buffer_kind kind, int ndims);
/* Makes an INTERNAL buffer a window buffer (creates its origin and size variables). */
void ir_buffer_make_window(ir_func *f, ir_buffer *b);
/* A constant table (IR_VAR_ARRAY with const_init); values are copied. */
ir_var *ir_table_new(ir_func *f, const char *name, ir_type type, int len, const void *values);

ir_expr *ir_const_i32(ir_func *f, int32_t v);
ir_expr *ir_const_i64(ir_func *f, int64_t v);
ir_expr *ir_const_f32(ir_func *f, float v);
ir_expr *ir_const_f64(ir_func *f, double v);
ir_expr *ir_const_bool(ir_func *f, bool v);
ir_expr *ir_ref(ir_func *f, ir_var *v);
ir_expr *ir_bin(ir_func *f, ir_op op, ir_expr *a, ir_expr *b);
ir_expr *ir_un(ir_func *f, ir_op op, ir_expr *a);
ir_expr *ir_select(ir_func *f, ir_expr *c, ir_expr *a, ir_expr *b);
ir_expr *ir_cast(ir_func *f, ir_type to, ir_expr *a);
ir_expr *ir_load(ir_func *f, ir_buffer *buf, ir_expr **idx, uint8_t clamp_mask);
ir_expr *ir_aload(ir_func *f, ir_var *array, ir_expr *index);
ir_expr *ir_call(ir_func *f, ir_fn fn, ir_type type, int n, ir_expr **args);
ir_expr *ir_interp_read(ir_func *f, ir_buffer *store, ir_interp *g, ir_expr **idx,
                        uint8_t clamp_mask);
/* A copy of a LOAD, INTERP or CALL node with new arguments (and, for LOAD/INTERP, a new clamp
 * mask). CALLs other than median are folded. */
ir_expr *ir_with_args(ir_func *f, const ir_expr *e, ir_expr **args, uint8_t clamp_mask);

ir_stmt *ir_block(ir_func *f, int n, ir_stmt **body);
ir_stmt *ir_let(ir_func *f, ir_var *v, ir_expr *value);
ir_stmt *ir_decl(ir_func *f, ir_var *v, ir_expr *value);
ir_stmt *ir_assign(ir_func *f, ir_var *v, ir_expr *value);
ir_stmt *ir_array_decl(ir_func *f, ir_var *array);
ir_stmt *ir_array_store(ir_func *f, ir_var *array, ir_expr *index, ir_expr *value);
ir_stmt *ir_sort(ir_func *f, ir_var *array, ir_expr *n);
ir_stmt *ir_store(ir_func *f, ir_buffer *buf, ir_expr **idx, ir_expr *value, uint8_t check_mask,
                  bool scatter);
ir_stmt *ir_for(ir_func *f, ir_var *v, ir_expr *lo, ir_expr *hi, ir_expr *step,
                ir_loop_kind kind, ir_stmt *body);
ir_stmt *ir_if(ir_func *f, ir_expr *cond, ir_stmt *then_s, ir_stmt *else_s);
ir_stmt *ir_alloc(ir_func *f, ir_buffer *buf, bool zero, ir_stmt *body);
/* The allocation of a window buffer holding [origin[d], origin[d] + size[d]) (i32, size >= 1). */
ir_stmt *ir_alloc_window(ir_func *f, ir_buffer *buf, bool zero, ir_expr **origin,
                         ir_expr **size, ir_stmt *body);
ir_stmt *ir_rtcall(ir_func *f, ir_rt rt, int n_bufs, ir_buffer **bufs, int n, ir_expr **args);
const char *ir_rt_name(ir_rt rt);
ir_stmt *ir_comment(ir_func *f, const char *text);
ir_stmt *ir_barrier(ir_func *f);

/* A growable statement list that becomes a block. */
typedef struct ir_list {
    int n, cap;
    ir_stmt **items;
} ir_list;
void ir_list_push(ir_func *f, ir_list *l, ir_stmt *s);
ir_stmt *ir_list_block(ir_func *f, ir_list *l);  /* consumes the list */

/* ---- queries ---- */

const char *ir_type_name(ir_type t);
const char *ir_op_name(ir_op op);
const char *ir_fn_name(ir_fn fn);
bool ir_is_const(const ir_expr *e, int64_t *ival);  /* integer/bool constants */
bool ir_is_const_f(const ir_expr *e, float *fval);
bool ir_expr_equal(const ir_expr *a, const ir_expr *b);  /* structural */
bool ir_expr_uses_var(const ir_expr *e, const ir_var *v);
/* The addend v of a store of buf[idx] = buf[idx] + v (either side), v + buf[idx], or
 * buf[idx] - v (*negate set), the load at the store's own indices with v reading nothing of
 * buf; NULL for any other store. */
const ir_expr *ir_store_addend(const ir_stmt *s, bool *negate);
/* Whether loop s must count in 64 bits: its bounds are i64, or var + step may pass 2^31 - 1
 * (a step other than 1, unless the bounds are constants that rule it out). */
bool ir_for_counts_wide(const ir_stmt *s);

/* ---- printing and verification ---- */

void ir_print_expr(const ir_expr *e, pf_strbuf *out);
void ir_print_stmt(const ir_stmt *s, int indent, pf_strbuf *out);
void ir_print_func(const ir_func *f, pf_strbuf *out);

/* Checks types, variable scoping (every use is in scope, lets defined once), load/store index
 * counts, loop steps, allocations, and that no scatter store sits inside a parallel or vectorized
 * loop. Returns 0, or -1 with a message naming the offending node. */
int ir_verify(const ir_func *f, char *msg, size_t msg_len);

#endif
