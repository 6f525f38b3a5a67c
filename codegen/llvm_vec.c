/* Explicit vectorization of IR_LOOP_VECTORIZED loops: the loop runs W lanes at a time and its
 * body is emitted once as LLVM vector code, then once more as the scalar tail (which a loop
 * whose body may run again skips: its last vector is shifted back over the end,
 * em_vector_loop).
 *
 * Every integer value of the body is classified as uniform (the same in all lanes), affine in
 * the lane (base + lane * stride, e.g. the loop variable or x - 8) or a general vector, so a
 * read at `x + c` becomes one contiguous vector load and a store at the own pixel a vector
 * store; other reads become gathers. A condition that differs between lanes predicates the
 * code under it (masked stores, blended assignments) instead of branching. Mutables whose
 * every assignment is the same in all lanes stay scalars (uniform_vars, decided before
 * emission): a window filter's element counter, so its window[n] = ... is one vector store.
 * A median is a selection network across lanes (llvm_vmedian.c). Bodies with constructs that
 * do not vectorize (sorts, runtime calls, loops whose bounds differ between lanes) are emitted
 * as plain scalar loops; em_can_vectorize() decides before anything is emitted. */
#include "codegen/llvm_vec_internal.h"

#include "base/arena.h"
#include "base/error.h"
#include "codegen/ir_clone.h"
#include "codegen/ir_fill.h"
#include "codegen/ir_rerun.h"

#include <stdlib.h>
#include <string.h>

/* ---- which variables are the same in all lanes ---- */

/* Decided before emission, because a mutable's storage depends on it: a mutable whose every
 * assignment is lane-independent and not under a condition that differs between lanes holds
 * one value for all lanes and stays a scalar (the median's counter n: window[n] is then one
 * vector store, not W lane stores, and the loop bounds and tests on it stay branches). Lets
 * and inner loop variables are classified on the way. The emitter classifies lets (vec_x) at
 * least as precisely, so what is uniform here is uniform there. */
typedef struct uniformity {
    const ir_var *lane;
    const char *inside;  /* by var id: defined in the body */
    char *uniform;       /* by var id: a let, mutable or loop variable of the body, uniform */
    int *decl_depth;     /* by var id: lane-varying conditions around the mutable's declaration */
    bool changed;
} uniformity;

static bool uniform_expr(const uniformity *u, const ir_expr *e)
{
    if (!e)
        return true;
    if (e->kind == IR_VARREF || e->kind == IR_ALOAD) {
        if (e->var == u->lane)
            return false;
        /* an array of the body holds a vector per element, whatever the index */
        if (u->inside[e->var->id] &&
            (e->var->kind == IR_VAR_ARRAY || !u->uniform[e->var->id]))
            return false;
    }
    if (e->kind == IR_INTERP)
        return false;
    if (!uniform_expr(u, e->a) || !uniform_expr(u, e->b) || !uniform_expr(u, e->c))
        return false;
    for (int i = 0; i < e->n_args; i++)
        if (!uniform_expr(u, e->args[i]))
            return false;
    return true;
}

static void demote(uniformity *u, const ir_var *var)
{
    if (u->uniform[var->id]) {
        u->uniform[var->id] = 0;
        u->changed = true;
    }
}

/* One pass over s; `depth`: how many conditions that differ between lanes are around it. A
 * mutable assigned under more of them than its declaration is not the same in all lanes; one
 * declared under them (a window counter inside a masked pass's `if (mask == ...)`) may be: the
 * lanes where they are false never see it. */
static void uniform_stmt(uniformity *u, const ir_stmt *s, int depth)
{
    if (!s)
        return;
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n; i++)
            uniform_stmt(u, s->body[i], depth);
        return;
    case IR_S_LET:
        if (!uniform_expr(u, s->value))
            demote(u, s->var);
        return;
    case IR_S_DECL:
        u->decl_depth[s->var->id] = depth;
        if (!uniform_expr(u, s->value))
            demote(u, s->var);
        return;
    case IR_S_ASSIGN:
        if (depth > u->decl_depth[s->var->id] || !uniform_expr(u, s->value))
            demote(u, s->var);
        return;
    case IR_S_IF: {
        int d = depth + !uniform_expr(u, s->cond);
        uniform_stmt(u, s->then_s, d);
        uniform_stmt(u, s->else_s, d);
        return;
    }
    case IR_S_FOR:
        if (!uniform_expr(u, s->lo) || !uniform_expr(u, s->hi) || !uniform_expr(u, s->step))
            demote(u, s->var);
        uniform_stmt(u, s->then_s, depth);
        return;
    case IR_S_ARRAY_DECL:  /* elements are vectors (uniform_expr looks at the kind anyway) */
        u->uniform[s->var->id] = 0;
        return;
    default:
        return;
    }
}

/* Fills uniform (by var id) for the body of a vectorized loop over `lane`: optimistic (every
 * scalar variable of the body uniform) and demoted until nothing changes; mutables only ever
 * lose the mark, so this ends. */
static void uniform_vars(const ir_stmt *body, const ir_var *lane, const char *inside,
                         char *uniform, int n_vars)
{
    for (int i = 0; i <= n_vars; i++)
        uniform[i] = inside[i];
    int *decl_depth = pf_xcalloc((size_t)n_vars + 1, sizeof *decl_depth);
    uniformity u = { lane, inside, uniform, decl_depth, true };
    while (u.changed) {
        u.changed = false;
        uniform_stmt(&u, body, 0);
    }
    free(decl_depth);
}

/* Whether a median is computed in s (its vector form is a large selection network). */
static bool has_median_expr(const ir_expr *e)
{
    if (!e)
        return false;
    if (e->kind == IR_CALL && e->fn == IR_FN_MEDIAN)
        return true;
    if (has_median_expr(e->a) || has_median_expr(e->b) || has_median_expr(e->c))
        return true;
    for (int i = 0; i < e->n_args; i++)
        if (has_median_expr(e->args[i]))
            return true;
    return false;
}

static bool has_median(const ir_stmt *s)
{
    if (!s)
        return false;
    if (has_median_expr(s->value) || has_median_expr(s->cond) || has_median_expr(s->index))
        return true;
    for (int i = 0; s->kind == IR_S_STORE && i < s->n; i++)
        if (has_median_expr(s->idx[i]))
            return true;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        if (has_median(s->body[i]))
            return true;
    return s->kind != IR_S_BLOCK && (has_median(s->then_s) || has_median(s->else_s));
}

/* ---- can the body be vectorized? ---- */

static bool supported_expr(const ir_expr *e)
{
    if (!e)
        return true;
    if (e->kind == IR_INTERP)
        return false;
    if (!supported_expr(e->a) || !supported_expr(e->b) || !supported_expr(e->c))
        return false;
    for (int i = 0; i < e->n_args; i++)
        if (!supported_expr(e->args[i]))
            return false;
    return true;
}

static bool supported_stmt(const ir_stmt *s, const uniformity *u)
{
    if (!s)
        return true;
    switch (s->kind) {
    case IR_S_SORT: case IR_S_RTCALL: case IR_S_ALLOC:
        return false;
    case IR_S_FOR:
        if (!uniform_expr(u, s->lo) || !uniform_expr(u, s->hi) || !uniform_expr(u, s->step) ||
            s->loop_kind != IR_LOOP_SERIAL)
            return false;
        break;
    case IR_S_STORE:
        for (int i = 0; i < s->n; i++)
            if (!supported_expr(s->idx[i]))
                return false;
        if (s->scatter)
            return false;
        break;
    default:
        break;
    }
    if (!supported_expr(s->value) || !supported_expr(s->index) || !supported_expr(s->cond) ||
        !supported_expr(s->lo) || !supported_expr(s->hi) || !supported_expr(s->step))
        return false;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        if (!supported_stmt(s->body[i], u))
            return false;
    if (s->kind != IR_S_BLOCK &&
        (!supported_stmt(s->then_s, u) || !supported_stmt(s->else_s, u)))
        return false;
    return true;
}

/* ---- values ---- */

LLVMTypeRef vec_type(vec *v, ir_type t)
{
    return LLVMVectorType(em_type(v->e, t), (unsigned)v->W);
}

static LLVMValueRef splat(vec *v, LLVMValueRef s)
{
    emit *e = v->e;
    LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), (unsigned)v->W);
    LLVMValueRef u = LLVMBuildInsertElement(e->b, LLVMGetPoison(vt), s, em_i32(e, 0), "");
    LLVMValueRef zeros = LLVMConstNull(LLVMVectorType(e->t_i32, (unsigned)v->W));
    return LLVMBuildShuffleVector(e->b, u, LLVMGetPoison(vt), zeros, "");
}

/* <0, stride, 2*stride, ...> in the scalar's type. */
static LLVMValueRef lane_offsets(vec *v, LLVMTypeRef t, int64_t stride)
{
    LLVMValueRef *c = pf_xmalloc(sizeof *c * (size_t)v->W);
    for (int i = 0; i < v->W; i++)
        c[i] = LLVMConstInt(t, (unsigned long long)(stride * i), 1);
    LLVMValueRef r = LLVMConstVector(c, (unsigned)v->W);
    free(c);
    return r;
}

LLVMValueRef vec_as_vector(vec *v, vval x)
{
    emit *e = v->e;
    if (x.kind == V_VECTOR)
        return x.v;
    if (x.kind == V_PERM)
        return vec_unpermute(v, x.v);
    LLVMValueRef s = splat(v, x.v);
    if (x.kind == V_UNIFORM)
        return s;
    return LLVMBuildAdd(e->b, s, lane_offsets(v, LLVMTypeOf(x.v), x.stride), "");
}

static vval uni(LLVMValueRef s)
{
    vval r = { V_UNIFORM, s, 0 };
    return r;
}

static vval vect(LLVMValueRef s)
{
    vval r = { V_VECTOR, s, 0 };
    return r;
}

static vval affine(LLVMValueRef base, int64_t stride)
{
    vval r = { stride ? V_AFFINE : V_UNIFORM, base, stride };
    return r;
}


/* Applies a scalar emission routine to vector operands: the routine works on any LLVM value
 * type, so uniform operands are splat first. */
typedef LLVMValueRef (*binop_fn)(emit *e, const ir_expr *x, LLVMValueRef a, LLVMValueRef b);

static LLVMValueRef int_bin_v(emit *e, const ir_expr *x, LLVMValueRef a, LLVMValueRef b);
static LLVMValueRef float_bin_v(emit *e, const ir_expr *x, LLVMValueRef a, LLVMValueRef b);

static vval vbin(vec *v, const ir_expr *x)
{
    emit *e = v->e;
    vval a = vec_x(v, x->a), b = vec_x(v, x->b);
    bool is_int = x->a->type != IR_F32;  /* integers and bools */
    if (a.kind == V_UNIFORM && b.kind == V_UNIFORM)
        return uni(is_int ? int_bin_v(e, x, a.v, b.v) : float_bin_v(e, x, a.v, b.v));
    /* float results of permuted lanes (and uniforms) stay permuted: one restore per sum */
    if (x->type == IR_F32 && (a.kind == V_PERM || b.kind == V_PERM) &&
        (a.kind == V_PERM || a.kind == V_UNIFORM) && (b.kind == V_PERM || b.kind == V_UNIFORM)) {
        LLVMValueRef pa = a.kind == V_PERM ? a.v : splat(v, a.v);
        LLVMValueRef pb = b.kind == V_PERM ? b.v : splat(v, b.v);
        vval r = { V_PERM, float_bin_v(e, x, pa, pb), 0 };
        return r;
    }
    if (is_int && (x->op == IR_ADD || x->op == IR_SUB) && a.kind != V_VECTOR &&
        b.kind != V_VECTOR) {
        LLVMValueRef base = x->op == IR_ADD ? LLVMBuildAdd(e->b, a.v, b.v, "")
                                            : LLVMBuildSub(e->b, a.v, b.v, "");
        return affine(base, x->op == IR_ADD ? a.stride + b.stride : a.stride - b.stride);
    }
    int64_t k;
    /* (base + lane*s) / k with every lane a multiple of k: base / k + lane * (s / k) */
    if (is_int && x->op == IR_DIV && x->exact && a.kind == V_AFFINE && ir_is_const(x->b, &k) &&
        k > 0 && a.stride % k == 0)
        return affine(LLVMBuildExactSDiv(e->b, a.v, b.v, ""), a.stride / k);
    if (is_int && x->op == IR_MUL && a.kind == V_AFFINE && ir_is_const(x->b, &k))
        return affine(LLVMBuildMul(e->b, a.v, b.v, ""), a.stride * k);
    if (is_int && x->op == IR_MUL && b.kind == V_AFFINE && ir_is_const(x->a, &k))
        return affine(LLVMBuildMul(e->b, a.v, b.v, ""), b.stride * k);
    LLVMValueRef va = vec_as_vector(v, a), vb = vec_as_vector(v, b);
    return vect(is_int ? int_bin_v(e, x, va, vb) : float_bin_v(e, x, va, vb));
}

/* The scalar helpers of llvm_expr.c are not type-generic for constants; these are. */
static LLVMValueRef zero_like(LLVMValueRef a)
{
    return LLVMConstNull(LLVMTypeOf(a));
}

static LLVMValueRef int_bin_v(emit *e, const ir_expr *x, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef B = e->b;
    switch (x->op) {
    case IR_ADD: return LLVMBuildAdd(B, a, b, "");
    case IR_SUB: return LLVMBuildSub(B, a, b, "");
    case IR_MUL: return LLVMBuildMul(B, a, b, "");
    case IR_DIV:
    case IR_MOD: {
        int64_t k;
        if (ir_is_const(x->b, &k) && k != 0 && k != -1)
            return x->op == IR_DIV ? LLVMBuildSDiv(B, a, b, "") : LLVMBuildSRem(B, a, b, "");
        LLVMValueRef zero = zero_like(a), ones = LLVMConstAllOnes(LLVMTypeOf(a));
        LLVMValueRef one = LLVMBuildSub(B, zero, ones, "");
        LLVMValueRef is0 = LLVMBuildICmp(B, LLVMIntEQ, b, zero, "");
        LLVMValueRef ism1 = LLVMBuildICmp(B, LLVMIntEQ, b, ones, "");
        LLVMValueRef special = LLVMBuildOr(B, is0, ism1, "");
        LLVMValueRef sb = LLVMBuildSelect(B, special, one, b, "");
        if (x->op == IR_MOD)
            return LLVMBuildSelect(B, special, zero, LLVMBuildSRem(B, a, sb, ""), "");
        LLVMValueRef q = LLVMBuildSelect(B, ism1, LLVMBuildSub(B, zero, a, ""),
                                         LLVMBuildSDiv(B, a, sb, ""), "");
        return LLVMBuildSelect(B, is0, zero, q, "");
    }
    case IR_MIN: return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, b, a, ""), b, a, "");
    case IR_MAX: return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, a, b, ""), b, a, "");
    case IR_LT: return LLVMBuildICmp(B, LLVMIntSLT, a, b, "");
    case IR_LE: return LLVMBuildICmp(B, LLVMIntSLE, a, b, "");
    case IR_EQ: return LLVMBuildICmp(B, LLVMIntEQ, a, b, "");
    case IR_NE: return LLVMBuildICmp(B, LLVMIntNE, a, b, "");
    case IR_AND: return LLVMBuildAnd(B, a, b, "");
    case IR_OR: return LLVMBuildOr(B, a, b, "");
    default: pf_die("vector int op %s", ir_op_name(x->op));
    }
}

static LLVMValueRef float_bin_v(emit *e, const ir_expr *x, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef B = e->b;
    switch (x->op) {
    case IR_ADD: return LLVMBuildFAdd(B, a, b, "");
    case IR_SUB: return LLVMBuildFSub(B, a, b, "");
    case IR_MUL: return LLVMBuildFMul(B, a, b, "");
    case IR_DIV: return LLVMBuildFDiv(B, a, b, "");
    case IR_MIN: return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, b, a, ""), b, a, "");
    case IR_MAX: return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, a, b, ""), b, a, "");
    case IR_LT: return LLVMBuildFCmp(B, LLVMRealOLT, a, b, "");
    case IR_LE: return LLVMBuildFCmp(B, LLVMRealOLE, a, b, "");
    case IR_EQ: return LLVMBuildFCmp(B, LLVMRealOEQ, a, b, "");
    case IR_NE: return LLVMBuildFCmp(B, LLVMRealUNE, a, b, "");
    default: pf_die("vector float op %s", ir_op_name(x->op));
    }
}

static vval vun(vec *v, const ir_expr *x)
{
    emit *e = v->e;
    vval a = vec_x(v, x->a);
    if (x->op == IR_NEG && x->type != IR_F32 && a.kind != V_VECTOR)
        return affine(LLVMBuildSub(e->b, zero_like(a.v), a.v, ""), -a.stride);
    LLVMValueRef o = a.kind == V_UNIFORM ? a.v : vec_as_vector(v, a);
    LLVMValueRef r;
    if (x->op == IR_NOT)
        r = LLVMBuildNot(e->b, o, "");
    else if (x->type == IR_F32)
        r = LLVMBuildFNeg(e->b, o, "");
    else
        r = LLVMBuildSub(e->b, zero_like(o), o, "");
    return a.kind == V_UNIFORM ? uni(r) : vect(r);
}

/* Float lanes to int32 as llvm.fptosi.sat (toward zero, saturating, NaN -> 0), in the form
 * x86 converts 8 lanes at once: clamped into the range where fptosi is defined, NaN made 0,
 * then one vector conversion and a select for 2^31 and above. LLVM 16 expands the vector
 * intrinsic lane by lane (a scalar conversion and two conditional moves each): the
 * bilateral grid's slice converts three coordinates per pixel. */
static LLVMValueRef saturating_to_i32(vec *v, LLVMValueRef x)
{
    emit *e = v->e;
    LLVMValueRef lo = splat(v, LLVMConstReal(e->t_f32, -2147483648.0)),
                 hi = splat(v, LLVMConstReal(e->t_f32, 2147483520.0)),  /* below 2^31 */
                 top = splat(v, LLVMConstReal(e->t_f32, 2147483648.0));
    LLVMValueRef c = LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, LLVMRealOLT, x, lo, ""), lo, x, "");
    c = LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, LLVMRealOGT, c, hi, ""), hi, c, "");
    c = LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, LLVMRealUNO, c, c, ""), zero_like(c), c, "");
    LLVMValueRef r = LLVMBuildFPToSI(e->b, c, vec_type(v, IR_I32), "");
    LLVMValueRef big = LLVMBuildFCmp(e->b, LLVMRealOGE, x, top, "");
    return LLVMBuildSelect(e->b, big, splat(v, em_i32(e, INT32_MAX)), r, "");
}

static vval vcast(vec *v, const ir_expr *x)
{
    emit *e = v->e;
    vval a = vec_x(v, x->a);
    ir_type from = x->a->type, to = x->type;
    if (a.kind == V_AFFINE && from == IR_I32 && to == IR_I64)
        return affine(LLVMBuildSExt(e->b, a.v, e->t_i64, ""), a.stride);
    bool uniform = a.kind == V_UNIFORM;
    LLVMValueRef o = uniform ? a.v : vec_as_vector(v, a);
    LLVMTypeRef t = uniform ? em_type(e, to) : vec_type(v, to);
    LLVMValueRef r;
    if (to == IR_F32)
        r = from == IR_BOOL ? LLVMBuildUIToFP(e->b, o, t, "") : LLVMBuildSIToFP(e->b, o, t, "");
    else if (to == IR_BOOL)
        r = from == IR_F32 ? LLVMBuildFCmp(e->b, LLVMRealUNE, o, zero_like(o), "")
                           : LLVMBuildICmp(e->b, LLVMIntNE, o, zero_like(o), "");
    else if (from == IR_F32 && !uniform && to == IR_I32)
        r = saturating_to_i32(v, o);
    else if (from == IR_F32) {
        unsigned id = LLVMLookupIntrinsicID("llvm.fptosi.sat", 15);
        LLVMTypeRef tys[2] = { t, LLVMTypeOf(o) };
        LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, 2);
        r = LLVMBuildCall2(e->b, LLVMIntrinsicGetType(e->ctx, id, tys, 2), fn, &o, 1, "");
    } else if (from == IR_BOOL)
        r = LLVMBuildZExt(e->b, o, t, "");
    else if (from == IR_I32 && to == IR_I64)
        r = LLVMBuildSExt(e->b, o, t, "");
    else
        r = LLVMBuildTrunc(e->b, o, t, "");
    return uniform ? uni(r) : vect(r);
}

static vval vselect(vec *v, const ir_expr *x)
{
    emit *e = v->e;
    vval c = vec_x(v, x->a), a = vec_x(v, x->b), b = vec_x(v, x->c);
    if (c.kind == V_UNIFORM && a.kind == V_UNIFORM && b.kind == V_UNIFORM)
        return uni(LLVMBuildSelect(e->b, c.v, a.v, b.v, ""));
    LLVMValueRef cv = c.kind == V_UNIFORM ? c.v : vec_as_vector(v, c);
    return vect(LLVMBuildSelect(e->b, cv, vec_as_vector(v, a), vec_as_vector(v, b), ""));
}

/* ---- calls ---- */

/* Calls a scalar function on each lane (for functions without a vector form). */
static LLVMValueRef per_lane(vec *v, const char *name, LLVMTypeRef ret, LLVMTypeRef *ps, int n,
                             LLVMValueRef *vargs, bool *is_vec)
{
    emit *e = v->e;
    LLVMValueRef r = LLVMGetPoison(LLVMVectorType(ret, (unsigned)v->W));
    for (int l = 0; l < v->W; l++) {
        LLVMValueRef a[8];
        for (int i = 0; i < n; i++)
            a[i] = is_vec[i] ? LLVMBuildExtractElement(e->b, vargs[i], em_i32(e, l), "")
                             : vargs[i];
        LLVMValueRef s = em_call_ext(e, name, ret, ps, n, a);
        r = LLVMBuildInsertElement(e->b, r, s, em_i32(e, l), "");
    }
    return r;
}

static vval vcall(vec *v, const ir_expr *x)
{
    emit *e = v->e;
    if (x->fn == IR_FN_MEDIAN)
        return vec_median(v, x);
    vval a[5] = { 0 };
    bool any = false, is_vec[5];
    LLVMValueRef args[5];
    for (int i = 0; i < x->n_args && i < 4; i++) {
        a[i] = vec_x(v, x->args[i]);
        any |= a[i].kind != V_UNIFORM;
    }
    if (!any) {  /* uniform: the scalar emission of the same call */
        return uni(em_expr(e, x));
    }
    static const char *intrinsics[] = {
        [IR_FN_EXP] = "llvm.exp", [IR_FN_LOG] = "llvm.log", [IR_FN_SQRT] = "llvm.sqrt",
        [IR_FN_SIN] = "llvm.sin", [IR_FN_COS] = "llvm.cos", [IR_FN_POW] = "llvm.pow",
        [IR_FN_FLOOR] = "llvm.floor", [IR_FN_CEIL] = "llvm.ceil", [IR_FN_ROUND] = "llvm.round",
        [IR_FN_FABS] = "llvm.fabs",
    };
    if (x->fn <= IR_FN_FABS && x->fn != IR_FN_TAN && x->fn != IR_FN_ATAN2) {
        for (int i = 0; i < x->n_args; i++)
            args[i] = vec_as_vector(v, a[i]);
        LLVMValueRef r = em_vector_math(e, x->fn, args, x->n_args, v->W);
        return vect(r ? r : em_intrinsic(e, intrinsics[x->fn], vec_type(v, IR_F32), args, x->n_args));
    }
    LLVMTypeRef ps[5];
    int n = 0;
    const char *name;
    if (x->fn == IR_FN_TAN || x->fn == IR_FN_ATAN2) {
        name = x->fn == IR_FN_TAN ? "tanf" : "atan2f";
        for (; n < x->n_args; n++)
            ps[n] = e->t_f32;
    } else if (x->fn == IR_FN_NOISE) {
        name = "pf_rt_noise";
        ps[0] = e->t_i32;
        args[0] = em_i32(e, x->n_args);
        is_vec[0] = false;
        for (n = 1; n < 5; n++) {
            ps[n] = e->t_i32;
            bool have = n - 1 < x->n_args;
            is_vec[n] = have && a[n - 1].kind != V_UNIFORM;
            args[n] = !have ? em_i32(e, 0) : is_vec[n] ? vec_as_vector(v, a[n - 1]) : a[n - 1].v;
        }
        return vect(per_lane(v, name, e->t_f32, ps, 5, args, is_vec));
    } else {  /* IR_FN_PERF_HASH */
        name = "pf_rt_perf_hash";
        for (; n < 4; n++)
            ps[n] = e->t_i32;
    }
    for (int i = 0; i < n; i++) {
        is_vec[i] = a[i].kind != V_UNIFORM;
        args[i] = is_vec[i] ? vec_as_vector(v, a[i]) : a[i].v;
    }
    return vect(per_lane(v, name, e->t_f32, ps, n, args, is_vec));
}

/* ---- loads ---- */

/* Index vectors with the buffer's boundary mode applied where clamp_mask asks. Returns the
 * in-range mask for constant boundaries (or NULL). */
/* The i32 lanes of x clamped into [0, last]. */
static LLVMValueRef vclamp(vec *v, LLVMValueRef x, LLVMValueRef last)
{
    LLVMTypeRef vt = LLVMTypeOf(x);
    LLVMValueRef lo[2] = { x, LLVMConstNull(vt) };
    LLVMValueRef hi[2] = { em_intrinsic(v->e, "llvm.smax", vt, lo, 2), last };
    return em_intrinsic(v->e, "llvm.smin", vt, hi, 2);
}

static LLVMValueRef vindex(vec *v, const ir_buffer *buf, int d, vval i, bool clamp,
                           LLVMValueRef *inside)
{
    emit *e = v->e;
    LLVMValueRef x = vec_as_vector(v, i);
    if (!clamp)
        return x;
    LLVMValueRef n = splat(v, em_var(e, buf->extent[d]));
    LLVMValueRef zero = zero_like(x), one = splat(v, em_i32(e, 1));
    LLVMValueRef last = LLVMBuildSub(e->b, n, one, "");
    LLVMValueRef lo2[2], hi2[2];
    LLVMTypeRef vt = LLVMTypeOf(x);
    switch (buf->boundary) {
    case PF_BOUNDARY_WRAP: {
        LLVMValueRef r = LLVMBuildSRem(e->b, x, n, "");
        LLVMValueRef neg = LLVMBuildICmp(e->b, LLVMIntSLT, r, zero, "");
        return LLVMBuildSelect(e->b, neg, LLVMBuildAdd(e->b, r, n, ""), r, "");
    }
    case PF_BOUNDARY_MIRROR: {
        lo2[0] = LLVMBuildAdd(e->b, last, last, "");
        lo2[1] = one;
        LLVMValueRef p = em_intrinsic(e, "llvm.smax", vt, lo2, 2);
        LLVMValueRef r = LLVMBuildSRem(e->b, x, p, "");
        LLVMValueRef neg = LLVMBuildICmp(e->b, LLVMIntSLT, r, zero, "");
        LLVMValueRef j = LLVMBuildSelect(e->b, neg, LLVMBuildAdd(e->b, r, p, ""), r, "");
        LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntSLT, j, n, "");
        hi2[0] = LLVMBuildSelect(e->b, in, j, LLVMBuildSub(e->b, p, j, ""), "");
        hi2[1] = last;
        return em_intrinsic(e, "llvm.smin", vt, hi2, 2);
    }
    case PF_BOUNDARY_CONSTANT: {
        LLVMValueRef ok = LLVMBuildICmp(e->b, LLVMIntULT, x, n, "");
        *inside = *inside ? LLVMBuildAnd(e->b, *inside, ok, "") : ok;
        break;
    }
    default:
        break;
    }
    return vclamp(v, x, last);
}

static LLVMValueRef voffsets64(vec *v, const ir_buffer *buf, LLVMValueRef *idx)
{
    emit *e = v->e;
    LLVMTypeRef v64 = LLVMVectorType(e->t_i64, (unsigned)v->W);
    LLVMValueRef off = LLVMBuildSExt(e->b, idx[0], v64, "");
    for (int d = 1; d < buf->ndims; d++) {
        LLVMValueRef t = LLVMBuildMul(e->b, LLVMBuildSExt(e->b, em_fold(e, buf, d, idx[d]), v64,
                                                          ""),
                                      splat(v, em_var(e, buf->stride[d])), "");
        off = LLVMBuildAdd(e->b, off, t, "");
    }
    return off;
}

/* Offsets of buf's elements at index vectors idx. An internal buffer's are an i32 vector: the
 * indices of a gather are in bounds (clamped or proven) and its allocation checked that
 * every such offset is below 2^31 (llvm_emit.c), so no partial sum of idx[d] * stride[d]
 * wraps. In 64 bits the products cost AVX2 three multiplies and four shifts or adds per four
 * lanes (it has no 64-bit vector multiply): a tenth of the bilateral grid's time, whose slice
 * gathers 16 values per pixel from a 4-D grid. Inputs and outputs have the caller's strides
 * (a view into a larger image): 64-bit offsets. */
static LLVMValueRef voffsets(vec *v, const ir_buffer *buf, LLVMValueRef *idx)
{
    emit *e = v->e;
    if (buf->kind != IR_BUF_INTERNAL)
        return voffsets64(v, buf, idx);
    LLVMValueRef off = idx[0];
    for (int d = 1; d < buf->ndims; d++) {
        LLVMValueRef stride = LLVMBuildTrunc(e->b, em_var(e, buf->stride[d]), e->t_i32, "");
        LLVMValueRef t = LLVMBuildMul(e->b, em_fold(e, buf, d, idx[d]), splat(v, stride), "");
        off = LLVMBuildAdd(e->b, off, t, "");
    }
    return off;
}

static LLVMValueRef all_true(vec *v)
{
    return LLVMConstAllOnes(LLVMVectorType(v->e->t_i1, (unsigned)v->W));
}

/* The W elements of type t at the lanes' pointers (all in bounds). */
static LLVMValueRef gather_ptrs(vec *v, ir_type t, LLVMValueRef ptrs)
{
    emit *e = v->e;
    LLVMTypeRef vt = vec_type(v, t), pv = LLVMVectorType(e->t_ptr, (unsigned)v->W);
    unsigned id = LLVMLookupIntrinsicID("llvm.masked.gather", 18);
    LLVMTypeRef tys[2] = { vt, pv };
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, 2);
    LLVMValueRef args[4] = { ptrs, em_i32(e, 4), all_true(v), LLVMGetPoison(vt) };
    return LLVMBuildCall2(e->b, LLVMIntrinsicGetType(e->ctx, id, tys, 2), fn, args, 4, "");
}

static LLVMValueRef gather(vec *v, const ir_buffer *buf, LLVMValueRef *idx)
{
    emit *e = v->e;
    LLVMValueRef ptrs = LLVMBuildGEP2(e->b, e->t_f32, e->buf_data[buf->id],
                                      (LLVMValueRef[]){ voffsets(v, buf, idx) }, 1, "");
    return gather_ptrs(v, IR_F32, ptrs);
}

/* Whether x mentions only the lane variable and values from outside the body (so the scalar
 * emitter can compute its lane-0 value). */
bool vec_outside_only(const vec *v, const ir_expr *x)
{
    if (!x)
        return true;
    if ((x->kind == IR_VARREF || x->kind == IR_ALOAD) && x->var != v->lane &&
        v->inside[x->var->id])
        return false;
    if (x->kind == IR_LOAD || x->kind == IR_CALL)
        return false;
    if (!vec_outside_only(v, x->a) || !vec_outside_only(v, x->b) || !vec_outside_only(v, x->c))
        return false;
    for (int i = 0; i < x->n_args; i++)
        if (!vec_outside_only(v, x->args[i]))
            return false;
    return true;
}

/* The scalar element pointer of lane 0 for indices whose dimension 0 is affine with stride 1
 * and the others uniform. When the indices only involve the lane variable and outside values,
 * the scalar emitter computes it (64-bit offsets, row pointers shared between taps). */
LLVMValueRef vec_lane0_ptr(vec *v, const ir_buffer *buf, vval *iv, ir_expr *const *ix)
{
    emit *e = v->e;
    bool simple = ix != NULL;
    for (int d = 0; simple && d < buf->ndims; d++)
        simple = vec_outside_only(v, ix[d]);
    if (simple)
        return em_inside_ptr(e, buf, ix);
    LLVMValueRef idx[IR_MAX_DIMS];
    for (int d = 0; d < buf->ndims; d++)
        idx[d] = iv[d].v;
    return em_element_ptr(e, buf, idx);
}

static bool contiguous(const ir_buffer *buf, const vval *iv, uint8_t mask)
{
    if (iv[0].kind != V_AFFINE || iv[0].stride != 1 || (mask & 1))
        return false;
    for (int d = 1; d < buf->ndims; d++)
        if (iv[d].kind != V_UNIFORM)
            return false;
    return true;
}

/* A read of buf as the lanes of l, where `inside` (a constant boundary; NULL otherwise) says
 * whether its indices were in range: the constant where they were not. */
static LLVMValueRef or_constant(vec *v, const ir_buffer *buf, LLVMValueRef inside, LLVMValueRef l)
{
    if (!inside)
        return l;
    return LLVMBuildSelect(v->e->b, inside, l,
                           splat(v, LLVMConstReal(v->e->t_f32, buf->constant_value)), "");
}

/* A read along one row, contiguous or strided (lanes 2..4 apart: llvm_vstride.c), whose
 * dimensions >= 1 (uniform) need the boundary mode: their indices clamped as scalars, then one
 * vector load or the strided chunks, instead of a gather (a row of the window at the image's
 * top or bottom edge; the bilateral filter's taps on a grid with a spacing in x, whose row
 * y + r is clamped under the test on it). */
static LLVMValueRef clamped_row_load(vec *v, const ir_expr *x, const vval *iv)
{
    emit *e = v->e;
    const ir_buffer *buf = x->buf;
    vval cv[IR_MAX_DIMS];
    LLVMValueRef inside = NULL;
    for (int d = 0; d < buf->ndims; d++) {
        cv[d] = iv[d];
        if (d > 0 && ((x->clamp_mask >> d) & 1))
            cv[d].v = em_boundary_index(e, buf, d, iv[d].v, &inside);
    }
    LLVMValueRef p = vec_lane0_ptr(v, buf, cv, NULL), l;
    if (iv[0].stride == 1) {
        l = LLVMBuildLoad2(e->b, vec_type(v, IR_F32), p, "");
        LLVMSetAlignment(l, 4);
    } else {
        l = vec_strided_load_at(v, p, (int)iv[0].stride);
    }
    return or_constant(v, buf, inside, l);
}

static vval vload(vec *v, const ir_expr *x)
{
    emit *e = v->e;
    const ir_buffer *buf = x->buf;
    vval iv[IR_MAX_DIMS];
    bool any = false;
    for (int d = 0; d < buf->ndims; d++) {
        iv[d] = vec_x(v, x->args[d]);
        any |= iv[d].kind != V_UNIFORM;
    }
    if (!any)
        return uni(em_expr(e, x));
    if (contiguous(buf, iv, 0) && !(x->clamp_mask & 1)) {
        if (!(x->clamp_mask & ~1u)) {
            LLVMValueRef p = vec_lane0_ptr(v, buf, iv, x->args);
            LLVMValueRef l = LLVMBuildLoad2(e->b, vec_type(v, IR_F32), p, "");
            LLVMSetAlignment(l, 4);
            return vect(l);
        }
        return vect(clamped_row_load(v, x, iv));
    }
    vval r;
    if (!x->clamp_mask && vec_strided_load(v, x, iv, &r))
        return r;
    if (!(x->clamp_mask & 1) && vec_shuffle_strided(v, buf, iv))
        return vect(clamped_row_load(v, x, iv));
    LLVMValueRef idx[IR_MAX_DIMS], inside = NULL;
    for (int d = 0; d < buf->ndims; d++)
        idx[d] = vindex(v, buf, d, iv[d], (x->clamp_mask >> d) & 1, &inside);
    return vect(or_constant(v, buf, inside, gather(v, buf, idx)));
}

static vval vaload(vec *v, const ir_expr *x)
{
    emit *e = v->e;
    vval i = vec_x(v, x->a);
    const ir_var *a = x->var;
    if (!v->inside[a->id]) {  /* a table or an array from outside: scalar or gathered */
        if (i.kind == V_UNIFORM)
            return uni(em_expr(e, x));
        /* one gather at the clamped lane indices (demosaic's kernel table at the lanes'
         * Bayer phases), not W scalar loads that only LLVM's SLP vectorizer would join */
        LLVMValueRef iv = vclamp(v, vec_as_vector(v, i), splat(v, em_i32(e, a->array_len - 1)));
        LLVMValueRef ptrs = LLVMBuildInBoundsGEP2(e->b, em_type(e, a->type), e->var[a->id], &iv,
                                                  1, "");
        return vect(gather_ptrs(v, a->type, ptrs));
    }
    /* An array of the body: each element is a vector of lanes. */
    LLVMTypeRef vt = vec_type(v, a->type);
    if (i.kind == V_UNIFORM) {
        LLVMValueRef p = LLVMBuildInBoundsGEP2(e->b, vt, v->vslot[a->id],
                                               (LLVMValueRef[]){ em_clamped_index(e, a, i.v) },
                                               1, "");
        return vect(LLVMBuildLoad2(e->b, vt, p, ""));
    }
    LLVMValueRef iv = vec_as_vector(v, i);
    LLVMValueRef r = LLVMGetPoison(vt);
    for (int l = 0; l < v->W; l++) {
        LLVMValueRef il = em_clamped_index(e, a, LLVMBuildExtractElement(e->b, iv, em_i32(e, l),
                                                                         ""));
        LLVMValueRef p = LLVMBuildInBoundsGEP2(e->b, vt, v->vslot[a->id], &il, 1, "");
        LLVMValueRef el = LLVMBuildLoad2(e->b, vt, p, "");
        r = LLVMBuildInsertElement(e->b, r, LLVMBuildExtractElement(e->b, el, em_i32(e, l), ""),
                                   em_i32(e, l), "");
    }
    return vect(r);
}

vval vec_x(vec *v, const ir_expr *x)
{
    emit *e = v->e;
    switch (x->kind) {
    case IR_CONST:
        return uni(em_expr(e, x));
    case IR_VARREF:
        if (x->var == v->lane)
            return affine(v->base, v->step);
        if (!v->inside[x->var->id])
            return uni(em_var(e, x->var));
        if (x->var->kind == IR_VAR_LET)
            return v->val[x->var->id];
        if (v->uniform[x->var->id])  /* a uniform mutable: its scalar slot */
            return uni(em_var(e, x->var));
        return vect(LLVMBuildLoad2(e->b, vec_type(v, x->var->type), v->vslot[x->var->id], ""));
    case IR_BIN:
        return vbin(v, x);
    case IR_UN:
        return vun(v, x);
    case IR_SELECT:
        return vselect(v, x);
    case IR_CAST:
        return vcast(v, x);
    case IR_LOAD:
        return vload(v, x);
    case IR_ALOAD:
        return vaload(v, x);
    case IR_CALL:
        return vcall(v, x);
    default:
        pf_die("vectorizing an unsupported expression (kind %d)", (int)x->kind);
    }
}

/* ---- statements ---- */

static void vstmt(vec *v, const ir_stmt *s);

static LLVMValueRef masked_value(vec *v, LLVMValueRef nv, LLVMValueRef old)
{
    return v->mask ? LLVMBuildSelect(v->e->b, v->mask, nv, old, "") : nv;
}

/* A mutable the same in all lanes: a scalar slot the scalar emitter reads too (em_var). Never
 * under a lane mask (uniform_vars). */
static void uniform_assign(vec *v, const ir_stmt *s)
{
    emit *e = v->e;
    vval x = vec_x(v, s->value);
    if (x.kind != V_UNIFORM)
        pf_die("vectorizer: uniform mutable %s assigned a lane-varying value", s->var->name);
    if (s->kind == IR_S_DECL) {
        e->var[s->var->id] = entry_alloca(e, em_type(e, s->var->type), s->var->name);
        v->inside[s->var->id] = 1;
    }
    LLVMBuildStore(e->b, x.v, e->var[s->var->id]);
}

static void vassign(vec *v, const ir_stmt *s)
{
    emit *e = v->e;
    if (v->uniform[s->var->id]) {
        uniform_assign(v, s);
        return;
    }
    LLVMTypeRef vt = vec_type(v, s->var->type);
    LLVMValueRef nv = vec_as_vector(v, vec_x(v, s->value));
    if (s->kind == IR_S_DECL) {
        v->vslot[s->var->id] = entry_alloca(e, vt, s->var->name);
        v->inside[s->var->id] = 1;
        LLVMBuildStore(e->b, nv, v->vslot[s->var->id]);
        return;
    }
    LLVMValueRef old = LLVMBuildLoad2(e->b, vt, v->vslot[s->var->id], "");
    LLVMBuildStore(e->b, masked_value(v, nv, old), v->vslot[s->var->id]);
}

static void varray_store(vec *v, const ir_stmt *s)
{
    emit *e = v->e;
    const ir_var *a = s->var;
    LLVMTypeRef vt = vec_type(v, a->type);
    vval i = vec_x(v, s->index);
    LLVMValueRef nv = vec_as_vector(v, vec_x(v, s->value));
    if (i.kind == V_UNIFORM) {
        LLVMValueRef ix = em_clamped_index(e, a, i.v);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(e->b, vt, v->vslot[a->id], &ix, 1, "");
        LLVMBuildStore(e->b, masked_value(v, nv, LLVMBuildLoad2(e->b, vt, p, "")), p);
        return;
    }
    LLVMValueRef iv = vec_as_vector(v, i);
    for (int l = 0; l < v->W; l++) {
        LLVMValueRef lane = em_i32(e, l);
        LLVMValueRef il = em_clamped_index(e, a, LLVMBuildExtractElement(e->b, iv, lane, ""));
        LLVMValueRef p = LLVMBuildInBoundsGEP2(e->b, vt, v->vslot[a->id], &il, 1, "");
        LLVMValueRef el = LLVMBuildLoad2(e->b, vt, p, "");
        LLVMValueRef val = LLVMBuildExtractElement(e->b, nv, lane, "");
        if (v->mask)
            val = LLVMBuildSelect(e->b, LLVMBuildExtractElement(e->b, v->mask, lane, ""), val,
                                  LLVMBuildExtractElement(e->b, el, lane, ""), "");
        LLVMBuildStore(e->b, LLVMBuildInsertElement(e->b, el, val, lane, ""), p);
    }
}

static void masked_store(vec *v, LLVMValueRef val, LLVMValueRef ptrs_or_ptr, LLVMValueRef mask,
                         bool scatter)
{
    emit *e = v->e;
    LLVMTypeRef vf = vec_type(v, IR_F32);
    const char *name = scatter ? "llvm.masked.scatter" : "llvm.masked.store";
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMTypeRef tys[2] = { vf, scatter ? LLVMVectorType(e->t_ptr, (unsigned)v->W) : e->t_ptr };
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, 2);
    LLVMValueRef args[4] = { val, ptrs_or_ptr, em_i32(e, 4), mask };
    LLVMBuildCall2(e->b, LLVMIntrinsicGetType(e->ctx, id, tys, 2), fn, args, 4, "");
}

/* A non-temporal store where p is aligned to the vector (x86 has none for unaligned
 * addresses), else a plain one: a branch every vector, taken the same way along a row. */
static void stream_store(vec *v, LLVMValueRef val, LLVMValueRef p)
{
    emit *e = v->e;
    unsigned bytes = 4u * (unsigned)v->W;
    LLVMValueRef low = LLVMBuildAnd(e->b, LLVMBuildPtrToInt(e->b, p, e->t_i64, ""),
                                    em_i64(e, bytes - 1), "");
    LLVMBasicBlockRef nt = new_block(e, "stream"), plain = new_block(e, "unaligned"),
                      done = new_block(e, "stored");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntEQ, low, em_i64(e, 0), ""), nt, plain);
    LLVMPositionBuilderAtEnd(e->b, nt);
    LLVMValueRef st = LLVMBuildStore(e->b, val, p);
    LLVMSetAlignment(st, bytes);
    LLVMMetadataRef one = LLVMValueAsMetadata(em_i32(e, 1));
    LLVMMetadataRef md = LLVMMDNodeInContext2(e->ctx, &one, 1);
    LLVMSetMetadata(st, LLVMGetMDKindIDInContext(e->ctx, "nontemporal", 11),
                    LLVMMetadataAsValue(e->ctx, md));
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, plain);
    LLVMSetAlignment(LLVMBuildStore(e->b, val, p), 4);
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
}

static void vstore(vec *v, const ir_stmt *s)
{
    emit *e = v->e;
    if (vec_group_store(v, s))
        return;
    const ir_buffer *buf = s->buf;
    vval iv[IR_MAX_DIMS];
    LLVMValueRef mask = v->mask, uniform_ok = NULL;
    for (int d = 0; d < buf->ndims; d++) {
        iv[d] = vec_x(v, s->idx[d]);
        if (!((s->check_mask >> d) & 1))
            continue;
        LLVMValueRef n = em_var(e, buf->extent[d]);
        if (iv[d].kind == V_UNIFORM) {
            LLVMValueRef ok = LLVMBuildICmp(e->b, LLVMIntULT, iv[d].v, n, "");
            uniform_ok = uniform_ok ? LLVMBuildAnd(e->b, uniform_ok, ok, "") : ok;
        } else {
            LLVMValueRef ok = LLVMBuildICmp(e->b, LLVMIntULT, vec_as_vector(v, iv[d]), splat(v, n),
                                            "");
            mask = mask ? LLVMBuildAnd(e->b, mask, ok, "") : ok;
        }
    }
    LLVMValueRef val = vec_as_vector(v, vec_x(v, s->value));
    LLVMBasicBlockRef done = NULL;
    if (uniform_ok) {  /* a uniform index out of range: no lane stores */
        LLVMBasicBlockRef st = new_block(e, "vstore");
        done = new_block(e, "vstored");
        LLVMBuildCondBr(e->b, uniform_ok, st, done);
        LLVMPositionBuilderAtEnd(e->b, st);
    }
    if (contiguous(buf, iv, s->check_mask & 1)) {
        LLVMValueRef p = vec_lane0_ptr(v, buf, iv, s->idx);
        if (mask)
            masked_store(v, val, p, mask, false);
        else if (s->stream)
            stream_store(v, val, p);
        else
            LLVMSetAlignment(LLVMBuildStore(e->b, val, p), 4);
    } else {
        LLVMValueRef idx[IR_MAX_DIMS], inside = NULL;
        for (int d = 0; d < buf->ndims; d++)
            idx[d] = vindex(v, buf, d, iv[d], false, &inside);
        LLVMValueRef ptrs = LLVMBuildGEP2(e->b, e->t_f32, e->buf_data[buf->id],
                                          (LLVMValueRef[]){ voffsets(v, buf, idx) }, 1, "");
        masked_store(v, val, ptrs, mask ? mask : all_true(v), true);
    }
    if (done) {
        LLVMBuildBr(e->b, done);
        LLVMPositionBuilderAtEnd(e->b, done);
    }
}

/* A condition that differs between lanes narrows the mask; blocks whose mask is empty at run
 * time are skipped. */
static void vif(vec *v, const ir_stmt *s)
{
    emit *e = v->e;
    vval c = vec_x(v, s->cond);
    if (c.kind == V_UNIFORM) {
        LLVMBasicBlockRef t = new_block(e, "vthen"), d = new_block(e, "vendif");
        LLVMBasicBlockRef f = s->else_s ? new_block(e, "velse") : d;
        LLVMBuildCondBr(e->b, c.v, t, f);
        LLVMPositionBuilderAtEnd(e->b, t);
        vstmt(v, s->then_s);
        LLVMBuildBr(e->b, d);
        if (s->else_s) {
            LLVMPositionBuilderAtEnd(e->b, f);
            vstmt(v, s->else_s);
            LLVMBuildBr(e->b, d);
        }
        LLVMPositionBuilderAtEnd(e->b, d);
        return;
    }
    LLVMValueRef cv = vec_as_vector(v, c), outer = v->mask;
    for (int branch = 0; branch < 2; branch++) {
        const ir_stmt *body = branch ? s->else_s : s->then_s;
        if (!body)
            continue;
        LLVMValueRef m = branch ? LLVMBuildNot(e->b, cv, "") : cv;
        v->mask = outer ? LLVMBuildAnd(e->b, outer, m, "") : m;
        LLVMValueRef any = em_intrinsic(e, "llvm.vector.reduce.or",
                                        LLVMTypeOf(v->mask), &v->mask, 1);
        LLVMBasicBlockRef run = new_block(e, "vrun"), skip = new_block(e, "vskip");
        LLVMBuildCondBr(e->b, any, run, skip);
        LLVMPositionBuilderAtEnd(e->b, run);
        vstmt(v, body);
        LLVMBuildBr(e->b, skip);
        LLVMPositionBuilderAtEnd(e->b, skip);
    }
    v->mask = outer;
}

static void vfor(vec *v, const ir_stmt *s)
{
    emit *e = v->e;
    em_count c;  /* a uniform loop variable: read with em_var */
    em_count_open(e, s, em_expr(e, s->lo), &c);
    vstmt(v, s->then_s);
    LLVMValueRef br = em_count_close(e, &c);
    /* Before a median network, the loops that fill the window: the innermost is unrolled (its
     * elements at constant offsets, 8% fewer instructions run), the others would only copy
     * code (compile time). */
    if (v->no_unroll && ir_has_loop(s->then_s)) {
        e->cold++;
        em_loop_metadata(e, br, 1, false);
        e->cold--;
    }
}

static void vstmt(vec *v, const ir_stmt *s)
{
    emit *e = v->e;
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n; i++)
            vstmt(v, s->body[i]);
        return;
    case IR_S_LET:
        v->val[s->var->id] = vec_x(v, s->value);
        v->inside[s->var->id] = 1;
        /* A uniform value is also what the scalar emitter sees: uniform calls, loads and
         * table reads are emitted by it, arguments included. */
        if (v->val[s->var->id].kind == V_UNIFORM)
            e->var[s->var->id] = v->val[s->var->id].v;
        return;
    case IR_S_DECL:
    case IR_S_ASSIGN:
        vassign(v, s);
        return;
    case IR_S_ARRAY_DECL: {
        LLVMTypeRef at = LLVMArrayType(vec_type(v, s->var->type), (unsigned)s->var->array_len);
        v->vslot[s->var->id] = entry_alloca(e, at, s->var->name);
        v->inside[s->var->id] = 1;
        if (ir_fill_counter(v->body, s->var))  /* only element 0 can be read unwritten */
            LLVMBuildStore(e->b, LLVMConstNull(vec_type(v, s->var->type)), v->vslot[s->var->id]);
        else
            LLVMBuildMemSet(e->b, v->vslot[s->var->id], LLVMConstInt(e->t_i8, 0, 0),
                            em_i64(e, 4 * (int64_t)s->var->array_len * v->W), 4);
        return;
    }
    case IR_S_ARRAY_STORE:
        varray_store(v, s);
        return;
    case IR_S_STORE:
        vstore(v, s);
        return;
    case IR_S_IF:
        vif(v, s);
        return;
    case IR_S_FOR:
        vfor(v, s);
        return;
    case IR_S_COMMENT:
        return;
    default:
        pf_die("vectorizing an unsupported statement (kind %d)", (int)s->kind);
    }
}

/* ---- the loop ---- */

/* The uniform marks of loop s's body (inside: zeroed, filled with the body's variables). */
static char *body_uniform(emit *e, const ir_stmt *s, char *inside)
{
    int n = e->irf->n_vars;
    char *uniform = pf_xcalloc((size_t)n + 1, 1);
    ir_defined_vars(s->then_s, inside);
    uniform_vars(s->then_s, s->var, inside, uniform, n);
    return uniform;
}

bool em_can_vectorize(emit *e, const ir_stmt *s)
{
    int64_t step;
    if (!ir_is_const(s->step, &step) || step < 1)
        return false;
    char *inside = pf_xcalloc((size_t)e->irf->n_vars + 1, 1);
    char *uniform = body_uniform(e, s, inside);
    uniformity u = { s->var, inside, uniform, NULL, false };  /* decl_depth: unused here */
    bool ok = supported_stmt(s->then_s, &u);
    free(inside);
    free(uniform);
    return ok;
}

/* for (i = 0; i < n / W; i++) { base = lo + i*W*step; vector body }, then the scalar tail
 * from lo + (n / W) * W * step. Returns the tail's start.
 *
 * Shifted inwards (Halide's TailStrategy::ShiftInwards) when the body may run again for
 * iterations it ran (ir_body_reruns_safely) and n >= W: ceil(n / W) vectors, the last one at
 * lo + n - W, overlapping the one before it, and no scalar tail. A scalar tail runs
 * the body one pixel at a time with libm's functions: the bilateral filter's exact program
 * took 10.6 ms at 808x614 (800 interior columns, 50 vectors of 16) and 18.1 at 820x614 (12
 * columns more, in the tail), one thread. Only loops of step 1: a strided loop's reads are
 * gathers, whose cost goes with the lanes, so the shifted vector costs about what the scalar
 * tail did (its grids 2 2 to 8 8 did not get faster, and 2 8 at 256x192 took 1.1x). */
static bool shifts_inwards(const emit *e, const ir_stmt *s, int64_t step)
{
    return step == 1 && !ir_for_counts_wide(s) && ir_body_reruns_safely(s, e->irf->n_vars);
}

LLVMValueRef em_vector_loop(emit *e, const ir_stmt *s)
{
    int W = s->width;
    int64_t step;
    ir_is_const(s->step, &step);
    LLVMValueRef lo = em_expr(e, s->lo), hi = em_expr(e, s->hi);
    LLVMValueRef n = em_trip_count(e, lo, hi, em_i32(e, step));
    bool shift = shifts_inwards(e, s, step);
    LLVMValueRef nv, full = NULL, last = NULL;
    if (shift) {  /* step 1: ceil(n / W) vectors when n >= W, the last at lo + n - W */
        full = LLVMBuildICmp(e->b, LLVMIntSGE, n, em_i32(e, W), "");
        LLVMValueRef up = LLVMBuildSDiv(e->b, LLVMBuildAdd(e->b, n, em_i32(e, W - 1), ""),
                                        em_i32(e, W), "");
        nv = LLVMBuildSelect(e->b, full, up, em_i32(e, 0), "");
        last = LLVMBuildAdd(e->b, lo, LLVMBuildSub(e->b, n, em_i32(e, W), ""), "");
    } else {
        nv = LLVMBuildSDiv(e->b, n, em_i32(e, W), "");
    }
    LLVMValueRef i = entry_alloca(e, e->t_i32, "vi");
    LLVMBuildStore(e->b, em_i32(e, 0), i);
    LLVMBasicBlockRef head = new_block(e, "vec"), body = new_block(e, "vec_body"),
                      exit = new_block(e, "vec_end");
    LLVMBuildBr(e->b, head);
    LLVMPositionBuilderAtEnd(e->b, head);
    LLVMValueRef cur = LLVMBuildLoad2(e->b, e->t_i32, i, "");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, cur, nv, ""), body, exit);
    LLVMPositionBuilderAtEnd(e->b, body);
    vec v = { 0 };
    v.e = e;
    v.W = W;
    v.lane = s->var;
    v.step = step;
    v.inside = pf_xcalloc((size_t)e->irf->n_vars + 1, 1);
    v.val = pf_xcalloc((size_t)e->irf->n_vars + 1, sizeof *v.val);
    v.vslot = pf_xcalloc((size_t)e->irf->n_vars + 1, sizeof *v.vslot);
    char *defined = pf_xcalloc((size_t)e->irf->n_vars + 1, 1);
    v.uniform = body_uniform(e, s, defined);
    free(defined);
    v.no_unroll = has_median(s->then_s);
    v.body = s->then_s;
    v.base = LLVMBuildAdd(e->b, lo, LLVMBuildMul(e->b, cur, em_i32(e, (int64_t)W * step), ""), "");
    if (shift)
        v.base = LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, v.base, last, ""), v.base,
                                 last, "");
    /* The scalar emitter (lane-0 addresses) reads the lane variable as its lane-0 value. */
    LLVMValueRef lane_slot = entry_alloca(e, e->t_i32, s->var->name);
    LLVMBuildStore(e->b, v.base, lane_slot);
    e->var[s->var->id] = lane_slot;
    e->n_rows = 0;
    vec_groups_begin(&v, s->then_s);
    vstmt(&v, s->then_s);
    vec_groups_end(&v);
    e->n_rows = 0;
    cur = LLVMBuildLoad2(e->b, e->t_i32, i, "");
    LLVMBuildStore(e->b, LLVMBuildAdd(e->b, cur, em_i32(e, 1), ""), i);
    /* Not unrolled unless the schedule says `unroll`: out-of-order execution already overlaps
     * the dependent adds of consecutive vectors, and a second copy of the body cost a quarter
     * of the compile time (blur 128 -> 95 ms) for run times within noise on the five
     * benchmarked apps and the paper's variant. */
    em_loop_metadata(e, LLVMBuildBr(e->b, head), s->unroll > 1 ? s->unroll : 1, false);
    LLVMPositionBuilderAtEnd(e->b, exit);
    free(v.inside);
    free(v.val);
    free(v.vslot);
    free(v.uniform);
    if (shift)  /* nothing left when the vectors ran, else every iteration */
        return LLVMBuildSelect(e->b, full, LLVMBuildAdd(e->b, lo, n, ""), lo, "");
    /* lo + nv * W * step may pass 2^31 - 1 (after the last iteration) where the loop counts
     * wide: then the tail starts from an i64 */
    if (ir_for_counts_wide(s))
        return LLVMBuildAdd(e->b, LLVMBuildSExt(e->b, lo, e->t_i64, ""),
                            LLVMBuildMul(e->b, LLVMBuildSExt(e->b, nv, e->t_i64, ""),
                                         em_i64(e, (int64_t)W * step), ""), "");
    return LLVMBuildAdd(e->b, lo, LLVMBuildMul(e->b, LLVMBuildMul(e->b, nv, em_i32(e, W), ""),
                                               em_i32(e, step), ""), "");
}
