/* LLVM emission of IR expressions: arithmetic with the language's semantics, casts, math
 * calls, array reads, and image loads with their boundary modes. */
#include "codegen/llvm_internal.h"

#include "base/error.h"

#include <stdio.h>
#include <string.h>

LLVMTypeRef em_type(emit *e, ir_type t)
{
    switch (t) {
    case IR_BOOL: return e->t_i1;
    case IR_I32: return e->t_i32;
    case IR_I64: return e->t_i64;
    case IR_F64: return e->t_f64;
    default: return e->t_f32;
    }
}

LLVMValueRef em_i32(emit *e, int64_t v)
{
    return LLVMConstInt(e->t_i32, (unsigned long long)v, 1);
}

LLVMValueRef em_i64(emit *e, int64_t v)
{
    return LLVMConstInt(e->t_i64, (unsigned long long)v, 1);
}

LLVMValueRef em_intrinsic(emit *e, const char *name, LLVMTypeRef over, LLVMValueRef *args,
                          int n)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id)
        pf_die("unknown LLVM intrinsic %s", name);
    LLVMTypeRef tys[2] = { over, over };
    size_t n_tys = 1;
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, n_tys);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, tys, n_tys);
    return LLVMBuildCall2(e->b, fty, fn, args, (unsigned)n, "");
}

static LLVMValueRef call_ext(emit *e, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                             int n, LLVMValueRef *args, int memory)
{
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(e->mod, name);
    if (!fn) {
        fn = LLVMAddFunction(e->mod, name, fty);
        LLVMSetLinkage(fn, LLVMExternalLinkage);
        if (memory >= 0) {
            const char *kinds[3] = { "memory", "nounwind", "willreturn" };
            for (int i = 0; i < 3; i++) {
                unsigned k = LLVMGetEnumAttributeKindForName(kinds[i], strlen(kinds[i]));
                LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                        LLVMCreateEnumAttribute(e->ctx, k,
                                                                i == 0 ? (uint64_t)memory : 0));
            }
        }
    }
    return LLVMBuildCall2(e->b, fty, fn, args, (unsigned)n, "");
}

LLVMValueRef em_call_ext(emit *e, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                         int n, LLVMValueRef *args)
{
    return call_ext(e, name, ret, params, n, args, -1);
}

LLVMValueRef em_call_known(emit *e, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                           int n, LLVMValueRef *args, int memory)
{
    return call_ext(e, name, ret, params, n, args, memory);
}

LLVMValueRef em_var(emit *e, const ir_var *v)
{
    LLVMValueRef slot = e->var[v->id];
    if (!slot)
        pf_die("LLVM emission: variable %s has no value", v->name);
    if (v->kind == IR_VAR_LET)
        return slot;
    return LLVMBuildLoad2(e->b, em_type(e, v->type), slot, v->name);
}

LLVMValueRef em_clamped_index(emit *e, const ir_var *a, LLVMValueRef index)
{
    LLVMValueRef lohi[2] = { index, em_i32(e, 0) };
    LLVMValueRef i = em_intrinsic(e, "llvm.smax", e->t_i32, lohi, 2);
    LLVMValueRef hi[2] = { i, em_i32(e, a->array_len - 1) };
    return em_intrinsic(e, "llvm.smin", e->t_i32, hi, 2);
}

LLVMValueRef em_array_ptr(emit *e, const ir_var *a, LLVMValueRef index)
{
    LLVMValueRef i = em_clamped_index(e, a, index);
    return LLVMBuildInBoundsGEP2(e->b, em_type(e, a->type), e->var[a->id], &i, 1, "");
}

/* ---- integer semantics ---- */

static bool const_divisor(const ir_expr *b, int64_t *v)
{
    return ir_is_const(b, v) && *v != 0 && *v != -1;
}

/* x / 0 = 0, x % 0 = 0, MIN / -1 = MIN, MIN % -1 = 0, as docs/language.md defines. */
static LLVMValueRef safe_divmod(emit *e, const ir_expr *x, LLVMValueRef a, LLVMValueRef b,
                                LLVMTypeRef t)
{
    int64_t k;
    ir_op op = x->op;
    const ir_expr *bx = x->b;
    if (const_divisor(bx, &k) && op == IR_DIV && x->exact)
        return LLVMBuildExactSDiv(e->b, a, b, "");
    if (const_divisor(bx, &k))
        return op == IR_DIV ? LLVMBuildSDiv(e->b, a, b, "") : LLVMBuildSRem(e->b, a, b, "");
    LLVMValueRef zero = LLVMConstInt(t, 0, 0), one = LLVMConstInt(t, 1, 0);
    LLVMValueRef is0 = LLVMBuildICmp(e->b, LLVMIntEQ, b, zero, "");
    LLVMValueRef ism1 = LLVMBuildICmp(e->b, LLVMIntEQ, b, LLVMConstAllOnes(t), "");
    LLVMValueRef special = LLVMBuildOr(e->b, is0, ism1, "");
    LLVMValueRef safe_b = LLVMBuildSelect(e->b, special, one, b, "");
    if (op == IR_MOD) {
        LLVMValueRef r = LLVMBuildSRem(e->b, a, safe_b, "");
        return LLVMBuildSelect(e->b, special, zero, r, "");
    }
    LLVMValueRef q = LLVMBuildSDiv(e->b, a, safe_b, "");
    LLVMValueRef neg = LLVMBuildSub(e->b, zero, a, "");
    q = LLVMBuildSelect(e->b, ism1, neg, q, "");
    return LLVMBuildSelect(e->b, is0, zero, q, "");
}

static LLVMValueRef int_bin(emit *e, const ir_expr *x, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef t = em_type(e, x->a->type);
    switch (x->op) {
    case IR_ADD: return LLVMBuildAdd(e->b, a, b, "");
    case IR_SUB: return LLVMBuildSub(e->b, a, b, "");
    case IR_MUL: return LLVMBuildMul(e->b, a, b, "");
    case IR_DIV:
    case IR_MOD: return safe_divmod(e, x, a, b, t);
    case IR_MIN: return LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, b, a, ""), b, a, "");
    case IR_MAX: return LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, a, b, ""), b, a, "");
    case IR_LT: return LLVMBuildICmp(e->b, LLVMIntSLT, a, b, "");
    case IR_LE: return LLVMBuildICmp(e->b, LLVMIntSLE, a, b, "");
    case IR_EQ: return LLVMBuildICmp(e->b, LLVMIntEQ, a, b, "");
    case IR_NE: return LLVMBuildICmp(e->b, LLVMIntNE, a, b, "");
    case IR_AND: return LLVMBuildAnd(e->b, a, b, "");
    case IR_OR: return LLVMBuildOr(e->b, a, b, "");
    default: pf_die("bad integer op %s", ir_op_name(x->op));
    }
}

static LLVMValueRef float_bin(emit *e, const ir_expr *x, LLVMValueRef a, LLVMValueRef b)
{
    switch (x->op) {
    case IR_ADD: return LLVMBuildFAdd(e->b, a, b, "");
    case IR_SUB: return LLVMBuildFSub(e->b, a, b, "");
    case IR_MUL: return LLVMBuildFMul(e->b, a, b, "");
    case IR_DIV: return LLVMBuildFDiv(e->b, a, b, "");
    case IR_MIN:
        return LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, LLVMRealOLT, b, a, ""), b, a, "");
    case IR_MAX:
        return LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, LLVMRealOLT, a, b, ""), b, a, "");
    case IR_LT: return LLVMBuildFCmp(e->b, LLVMRealOLT, a, b, "");
    case IR_LE: return LLVMBuildFCmp(e->b, LLVMRealOLE, a, b, "");
    case IR_EQ: return LLVMBuildFCmp(e->b, LLVMRealOEQ, a, b, "");
    case IR_NE: return LLVMBuildFCmp(e->b, LLVMRealUNE, a, b, "");
    default: pf_die("bad float op %s", ir_op_name(x->op));
    }
}

static LLVMValueRef em_cast(emit *e, const ir_expr *x)
{
    LLVMValueRef a = em_expr(e, x->a);
    ir_type from = x->a->type, to = x->type;
    LLVMTypeRef t = em_type(e, to);
    if (ir_type_is_float(to) && ir_type_is_float(from))  /* f32 <-> f64: exact or rounded */
        return to == IR_F64 ? LLVMBuildFPExt(e->b, a, t, "") : LLVMBuildFPTrunc(e->b, a, t, "");
    if (ir_type_is_float(to))
        return from == IR_BOOL ? LLVMBuildUIToFP(e->b, a, t, "") : LLVMBuildSIToFP(e->b, a, t, "");
    if (to == IR_BOOL) {
        if (ir_type_is_float(from))
            return LLVMBuildFCmp(e->b, LLVMRealUNE, a, LLVMConstReal(em_type(e, from), 0.0), "");
        return LLVMBuildICmp(e->b, LLVMIntNE, a, LLVMConstInt(em_type(e, from), 0, 0), "");
    }
    if (ir_type_is_float(from)) {
        /* Truncation toward zero, saturating, NaN -> 0: exactly llvm.fptosi.sat. */
        unsigned id = LLVMLookupIntrinsicID("llvm.fptosi.sat", 15);
        LLVMTypeRef tys[2] = { t, em_type(e, from) };
        LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, 2);
        LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, tys, 2);
        return LLVMBuildCall2(e->b, fty, fn, &a, 1, "");
    }
    if (from == IR_BOOL)
        return LLVMBuildZExt(e->b, a, t, "");
    if (from == IR_I32 && to == IR_I64)
        return LLVMBuildSExt(e->b, a, t, "");
    return LLVMBuildTrunc(e->b, a, t, "");
}

/* ---- calls ---- */

static LLVMValueRef em_math(emit *e, const ir_expr *x)
{
    static const char *intrinsics[] = {
        [IR_FN_EXP] = "llvm.exp", [IR_FN_LOG] = "llvm.log", [IR_FN_SQRT] = "llvm.sqrt",
        [IR_FN_SIN] = "llvm.sin", [IR_FN_COS] = "llvm.cos", [IR_FN_POW] = "llvm.pow",
        [IR_FN_FLOOR] = "llvm.floor", [IR_FN_CEIL] = "llvm.ceil", [IR_FN_ROUND] = "llvm.round",
        [IR_FN_FABS] = "llvm.fabs",
    };
    LLVMValueRef args[2];
    for (int i = 0; i < x->n_args; i++)
        args[i] = em_expr(e, x->args[i]);
    if (x->fn == IR_FN_TAN || x->fn == IR_FN_ATAN2) {
        LLVMTypeRef ps[2] = { e->t_f32, e->t_f32 };
        return em_call_ext(e, x->fn == IR_FN_TAN ? "tanf" : "atan2f", e->t_f32, ps, x->n_args,
                           args);
    }
    return em_intrinsic(e, intrinsics[x->fn], e->t_f32, args, x->n_args);
}

static LLVMValueRef em_noise(emit *e, const ir_expr *x)
{
    LLVMValueRef args[5] = { em_i32(e, x->n_args), em_i32(e, 0), em_i32(e, 0), em_i32(e, 0),
                             em_i32(e, 0) };
    for (int i = 0; i < x->n_args && i < 4; i++)
        args[i + 1] = em_expr(e, x->args[i]);
    LLVMTypeRef ps[5] = { e->t_i32, e->t_i32, e->t_i32, e->t_i32, e->t_i32 };
    return em_call_known(e, "pf_rt_noise", e->t_f32, ps, 5, args, EM_MEMORY_NONE);
}

LLVMValueRef em_runtime_median(emit *e, const ir_var *a, LLVMValueRef p, LLVMValueRef n)
{
    LLVMValueRef lo[2] = { n, em_i32(e, 1) };
    n = em_intrinsic(e, "llvm.smax", e->t_i32, lo, 2);
    LLVMValueRef hi[2] = { n, em_i32(e, a->array_len) };
    n = em_intrinsic(e, "llvm.smin", e->t_i32, hi, 2);
    LLVMValueRef args[2] = { p, n };
    LLVMTypeRef ps[2] = { e->t_ptr, e->t_i32 };
    bool f = a->type == IR_F32;
    char name[48];
    if (e->gpu)  /* one per array length: it sorts a copy in local memory (codegen/gpu_rt.c) */
        snprintf(name, sizeof name, "pf_gpu_median_%s_%d", f ? "f32" : "i32", a->array_len);
    else
        snprintf(name, sizeof name, "pf_rt_median_%s", f ? "f32" : "i32");
    return em_call_known(e, name, em_type(e, a->type), ps, 2, args, EM_MEMORY_ARGS);
}

static LLVMValueRef em_median(emit *e, const ir_expr *x)
{
    const ir_var *a = x->args[0]->var;
    return em_runtime_median(e, a, e->var[a->id], em_expr(e, x->args[1]));
}

static LLVMValueRef em_call(emit *e, const ir_expr *x)
{
    switch (x->fn) {
    case IR_FN_NOISE: return em_noise(e, x);
    case IR_FN_MEDIAN: return em_median(e, x);
    case IR_FN_PERF_HASH: {
        LLVMValueRef args[4];
        LLVMTypeRef ps[4] = { e->t_i32, e->t_i32, e->t_i32, e->t_i32 };
        for (int i = 0; i < 4; i++)
            args[i] = em_expr(e, x->args[i]);
        return em_call_known(e, "pf_rt_perf_hash", e->t_f32, ps, 4, args, EM_MEMORY_NONE);
    }
    default: return em_math(e, x);
    }
}

/* ---- loads ---- */

static LLVMValueRef smax(emit *e, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef args[2] = { a, b };
    return em_intrinsic(e, "llvm.smax", e->t_i32, args, 2);
}

static LLVMValueRef smin(emit *e, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef args[2] = { a, b };
    return em_intrinsic(e, "llvm.smin", e->t_i32, args, 2);
}

static LLVMValueRef clamp_index(emit *e, LLVMValueRef i, LLVMValueRef n)
{
    return smin(e, smax(e, i, em_i32(e, 0)), LLVMBuildSub(e->b, n, em_i32(e, 1), ""));
}

/* i mod m into [0, m), for m >= 1. */
static LLVMValueRef euclid_mod(emit *e, LLVMValueRef i, LLVMValueRef m)
{
    LLVMValueRef r = LLVMBuildSRem(e->b, i, m, "");
    LLVMValueRef neg = LLVMBuildICmp(e->b, LLVMIntSLT, r, em_i32(e, 0), "");
    return LLVMBuildSelect(e->b, neg, LLVMBuildAdd(e->b, r, m, ""), r, "");
}

/* Reflect without repeating the edge: period p = 2(n-1), j = i mod p, j < n ? j : p - j. */
static LLVMValueRef mirror_index(emit *e, LLVMValueRef i, LLVMValueRef n)
{
    LLVMValueRef nm1 = LLVMBuildSub(e->b, n, em_i32(e, 1), "");
    LLVMValueRef p = smax(e, LLVMBuildAdd(e->b, nm1, nm1, ""), em_i32(e, 1));
    LLVMValueRef j = euclid_mod(e, i, p);
    LLVMValueRef inside = LLVMBuildICmp(e->b, LLVMIntSLT, j, n, "");
    LLVMValueRef r = LLVMBuildSelect(e->b, inside, j, LLVMBuildSub(e->b, p, j, ""), "");
    return smin(e, r, nm1);  /* n == 1: 0 */
}

static LLVMValueRef in_range(emit *e, LLVMValueRef i, LLVMValueRef n)
{
    /* 0 <= i < n as one unsigned comparison. */
    return LLVMBuildICmp(e->b, LLVMIntULT, i, n, "");
}

/* The position of index i (an integer or a vector of them) along d of a folded window:
 * i & (F - 1); i itself elsewhere (ir.h, ir_buffer.fold). */
LLVMValueRef em_fold(emit *e, const ir_buffer *buf, int d, LLVMValueRef i)
{
    if (!buf->fold[d])
        return i;
    LLVMTypeRef t = LLVMTypeOf(i);
    LLVMValueRef m;
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
        unsigned w = LLVMGetVectorSize(t);
        LLVMValueRef k[64];
        for (unsigned l = 0; l < w && l < 64; l++)
            k[l] = LLVMConstInt(LLVMGetElementType(t), (unsigned long long)(buf->fold[d] - 1), 0);
        m = LLVMConstVector(k, w);
    } else {
        m = LLVMConstInt(t, (unsigned long long)(buf->fold[d] - 1), 0);
    }
    return LLVMBuildAnd(e->b, i, m, "fold");
}

LLVMValueRef em_element_ptr(emit *e, const ir_buffer *buf, LLVMValueRef *idx)
{
    LLVMValueRef off = LLVMBuildSExt(e->b, idx[0], e->t_i64, "");
    for (int d = 1; d < buf->ndims; d++) {
        LLVMValueRef i = LLVMBuildSExt(e->b, em_fold(e, buf, d, idx[d]), e->t_i64, "");
        LLVMValueRef term = LLVMBuildMul(e->b, i, em_var(e, buf->stride[d]), "");
        off = LLVMBuildAdd(e->b, off, term, "");
    }
    return em_gep(e, buf, e->buf_data[buf->id], off, "");
}

/* An element address from base: `inbounds` except in window buffers, whose base lies outside
 * their allocation. */
LLVMValueRef em_gep(emit *e, const ir_buffer *buf, LLVMValueRef base, LLVMValueRef off,
                    const char *name)
{
    if (buf->window)
        return LLVMBuildGEP2(e->b, e->t_f32, base, &off, 1, name);
    return LLVMBuildInBoundsGEP2(e->b, e->t_f32, base, &off, 1, name);
}

/* An index expression in i64: sums, differences and products are exact there for the
 * in-range indices this is used on, and LLVM sees plain offsets it can fold into addresses. */
static LLVMValueRef index64(emit *e, const ir_expr *x)
{
    int64_t k;
    if (ir_is_const(x, &k))
        return em_i64(e, k);
    if (x->kind == IR_BIN && x->type == IR_I32 &&
        (x->op == IR_ADD || x->op == IR_SUB || x->op == IR_MUL)) {
        LLVMValueRef a = index64(e, x->a), b = index64(e, x->b);
        if (x->op == IR_ADD)
            return LLVMBuildNSWAdd(e->b, a, b, "");
        return x->op == IR_SUB ? LLVMBuildNSWSub(e->b, a, b, "") : LLVMBuildNSWMul(e->b, a, b, "");
    }
    LLVMValueRef v = em_expr(e, x);
    return x->type == IR_I64 ? v : LLVMBuildSExt(e->b, v, e->t_i64, "");
}

static LLVMValueRef row_ptr(emit *e, const ir_buffer *buf, ir_expr *const *idx)
{
    LLVMBasicBlockRef bb = LLVMGetInsertBlock(e->b);
    for (int i = 0; i < e->n_rows; i++) {
        struct em_row *r = &e->rows[i];
        if (r->bb != bb || r->buf != buf || r->point)
            continue;
        bool same = true;
        for (int d = 1; d < buf->ndims && same; d++)
            same = ir_expr_equal(r->idx[d], idx[d]);
        if (same)
            return r->ptr;
    }
    LLVMValueRef off = NULL;
    for (int d = 1; d < buf->ndims; d++) {
        LLVMValueRef t = LLVMBuildNSWMul(e->b, em_fold(e, buf, d, index64(e, idx[d])),
                                         em_var(e, buf->stride[d]), "");
        off = off ? LLVMBuildNSWAdd(e->b, off, t, "") : t;
    }
    LLVMValueRef p = e->buf_data[buf->id];
    if (off)
        p = em_gep(e, buf, p, off, "row");
    struct em_row *r = &e->rows[e->n_rows < 32 ? e->n_rows++ : (int)(buf->id % 32)];
    r->bb = bb;
    r->buf = buf;
    r->point = false;
    for (int d = 0; d < buf->ndims; d++)
        r->idx[d] = idx[d];
    r->ptr = p;
    return p;
}

/* x = v + k with k a constant (x itself and 0 otherwise). */
static const ir_expr *split_offset(const ir_expr *x, int64_t *k)
{
    int64_t c;
    *k = 0;
    if (x->kind != IR_BIN || x->type != IR_I32 || (x->op != IR_ADD && x->op != IR_SUB))
        return x;
    if (ir_is_const(x->b, &c) && c > -(1 << 30) && c < (1 << 30)) {
        *k = x->op == IR_ADD ? c : -c;
        return x->a;
    }
    if (x->op == IR_ADD && ir_is_const(x->a, &c) && c > -(1 << 30) && c < (1 << 30)) {
        *k = c;
        return x->b;
    }
    return x;
}

/* GPU kernels (and the CPU code of their IR, so that the tests run this addressing): the taps
 * of a stencil, buf[x + i, y + j, ...], as one address of the point
 * (x, y, ...) plus i + j * stride1 + ...: the point's address is computed once for all taps
 * (em_row, keyed by every index), and their offsets, products of constants and the strides,
 * are loop-invariant (hoisted out of the thread loops) or constant (immediates of the loads).
 * Through row_ptr alone every row y + j was a multiply-add of its own and every tap one more
 * add. The point may lie outside buf (x - 8 for x = 0 is inside, x is not), hence plain GEPs. */
static LLVMValueRef gpu_tap_ptr(emit *e, const ir_buffer *buf, ir_expr *const *idx)
{
    ir_expr *at[IR_MAX_DIMS];
    int64_t k[IR_MAX_DIMS];
    bool any = false;
    for (int d = 0; d < buf->ndims; d++) {
        at[d] = (ir_expr *)(buf->fold[d] ? idx[d] : split_offset(idx[d], &k[d]));
        k[d] = buf->fold[d] ? 0 : k[d];
        any = any || k[d];
    }
    if (!any)
        return NULL;
    LLVMBasicBlockRef bb = LLVMGetInsertBlock(e->b);
    LLVMValueRef p = NULL;
    for (int i = 0; i < e->n_rows && !p; i++) {
        struct em_row *r = &e->rows[i];
        bool same = r->bb == bb && r->buf == buf && r->point;
        for (int d = 0; d < buf->ndims && same; d++)
            same = ir_expr_equal(r->idx[d], at[d]);
        p = same ? r->ptr : NULL;
    }
    if (!p) {
        LLVMValueRef x = index64(e, at[0]);
        p = LLVMBuildGEP2(e->b, e->t_f32, row_ptr(e, buf, at), &x, 1, "point");
        struct em_row *r = &e->rows[e->n_rows < 32 ? e->n_rows++ : (int)(buf->id % 32)];
        *r = (struct em_row){ bb, buf, { NULL }, p, true };
        for (int d = 0; d < buf->ndims; d++)
            r->idx[d] = at[d];
    }
    LLVMValueRef off = em_i64(e, k[0]);
    for (int d = 1; d < buf->ndims; d++)
        if (k[d])
            off = LLVMBuildNSWAdd(e->b, off, LLVMBuildNSWMul(e->b, em_i64(e, k[d]),
                                                               em_var(e, buf->stride[d]), ""), "");
    return LLVMBuildGEP2(e->b, e->t_f32, p, &off, 1, "tap");
}

LLVMValueRef em_inside_ptr(emit *e, const ir_buffer *buf, ir_expr *const *idx)
{
    LLVMValueRef tap = e->gpu || e->in_gpu_block ? gpu_tap_ptr(e, buf, idx) : NULL;
    if (tap)
        return tap;
    LLVMValueRef row = row_ptr(e, buf, idx);
    LLVMValueRef x = index64(e, idx[0]);
    return em_gep(e, buf, row, x, "");
}

LLVMValueRef em_boundary_index(emit *e, const ir_buffer *buf, int d, LLVMValueRef i,
                               LLVMValueRef *inside)
{
    LLVMValueRef n = em_var(e, buf->extent[d]);
    switch (buf->boundary) {
    case PF_BOUNDARY_MIRROR: return mirror_index(e, i, n);
    case PF_BOUNDARY_WRAP: return euclid_mod(e, i, n);
    case PF_BOUNDARY_CONSTANT: {
        LLVMValueRef ok = in_range(e, i, n);
        *inside = *inside ? LLVMBuildAnd(e->b, *inside, ok, "") : ok;
        return clamp_index(e, i, n);
    }
    default: return clamp_index(e, i, n);
    }
}

static LLVMValueRef em_load(emit *e, const ir_expr *x)
{
    const ir_buffer *buf = x->buf;
    if (!x->clamp_mask)
        return LLVMBuildLoad2(e->b, e->t_f32, em_inside_ptr(e, buf, x->args), "");
    LLVMValueRef idx[IR_MAX_DIMS], inside = NULL;
    for (int d = 0; d < buf->ndims; d++) {
        LLVMValueRef i = em_expr(e, x->args[d]);
        if (x->clamp_mask & (1u << d))
            i = em_boundary_index(e, buf, d, i, &inside);
        idx[d] = i;
    }
    LLVMValueRef v = LLVMBuildLoad2(e->b, e->t_f32, em_element_ptr(e, buf, idx), "");
    if (inside)
        v = LLVMBuildSelect(e->b, inside, v, LLVMConstReal(e->t_f32, buf->constant_value), "");
    return v;
}

/* ---- dispatch ---- */

static LLVMValueRef em_const(emit *e, const ir_expr *x)
{
    if (x->type == IR_F32)
        return LLVMConstReal(e->t_f32, (double)x->fval);
    if (x->type == IR_F64)
        return LLVMConstReal(e->t_f64, x->dval);
    return LLVMConstInt(em_type(e, x->type), (unsigned long long)x->ival, x->type != IR_BOOL);
}

LLVMValueRef em_expr(emit *e, const ir_expr *x)
{
    switch (x->kind) {
    case IR_CONST:
        return em_const(e, x);
    case IR_VARREF:
        return em_var(e, x->var);
    case IR_BIN: {
        LLVMValueRef a = em_expr(e, x->a), b = em_expr(e, x->b);
        return ir_type_is_float(x->a->type) ? float_bin(e, x, a, b) : int_bin(e, x, a, b);
    }
    case IR_UN: {
        LLVMValueRef a = em_expr(e, x->a);
        if (x->op == IR_NOT)
            return LLVMBuildNot(e->b, a, "");
        return ir_type_is_float(x->type) ? LLVMBuildFNeg(e->b, a, "")
                                 : LLVMBuildSub(e->b, LLVMConstInt(em_type(e, x->type), 0, 0), a, "");
    }
    case IR_SELECT: {
        LLVMValueRef c = em_expr(e, x->a), a = em_expr(e, x->b), b = em_expr(e, x->c);
        return LLVMBuildSelect(e->b, c, a, b, "");
    }
    case IR_CAST:
        return em_cast(e, x);
    case IR_LOAD:
        return em_load(e, x);
    case IR_ALOAD:
        return LLVMBuildLoad2(e->b, em_type(e, x->type), em_array_ptr(e, x->var, em_expr(e, x->a)),
                              "");
    case IR_CALL:
        return em_call(e, x);
    case IR_INTERP:
        pf_die("LLVM emission: on-demand reads must be expanded before emission");
    }
    pf_die("LLVM emission: unknown expression kind %d", (int)x->kind);
}
