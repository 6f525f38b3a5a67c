/* Constant folding with the language's exact semantics (see ir_simplify.h). */
#include "codegen/ir_simplify.h"

#include <math.h>
#include <stdint.h>

int32_t ir_sem_div32(int32_t a, int32_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return (int32_t)(0u - (uint32_t)a);  /* INT_MIN / -1 wraps to INT_MIN */
    return a / b;
}

int32_t ir_sem_mod32(int32_t a, int32_t b)
{
    if (b == 0 || b == -1)
        return 0;
    return a % b;
}

int64_t ir_sem_div64(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return (int64_t)(0ull - (uint64_t)a);
    return a / b;
}

int64_t ir_sem_mod64(int64_t a, int64_t b)
{
    if (b == 0 || b == -1)
        return 0;
    return a % b;
}

int32_t ir_sem_f2i(float f)
{
    if (f != f)
        return 0;
    if (f >= 2147483648.0f)
        return INT32_MAX;
    if (f <= -2147483648.0f)
        return INT32_MIN;
    return (int32_t)f;
}

float ir_sem_call_f32(ir_fn fn, const float *a)
{
    switch (fn) {
    case IR_FN_EXP: return expf(a[0]);
    case IR_FN_LOG: return logf(a[0]);
    case IR_FN_SQRT: return sqrtf(a[0]);
    case IR_FN_SIN: return sinf(a[0]);
    case IR_FN_COS: return cosf(a[0]);
    case IR_FN_TAN: return tanf(a[0]);
    case IR_FN_POW: return powf(a[0], a[1]);
    case IR_FN_ATAN2: return atan2f(a[0], a[1]);
    case IR_FN_FLOOR: return floorf(a[0]);
    case IR_FN_CEIL: return ceilf(a[0]);
    case IR_FN_ROUND: return roundf(a[0]);
    case IR_FN_FABS: return fabsf(a[0]);
    default: return NAN;
    }
}

static int64_t wrap(ir_type t, int64_t v)
{
    if (t == IR_I32)
        return (int32_t)(uint32_t)(uint64_t)v;
    if (t == IR_BOOL)
        return v != 0;
    return v;
}

static ir_expr *const_of(ir_func *f, ir_type t, int64_t v)
{
    switch (t) {
    case IR_BOOL: return ir_const_bool(f, v != 0);
    case IR_I32: return ir_const_i32(f, (int32_t)v);
    default: return ir_const_i64(f, v);
    }
}

static ir_expr *fold_int_bin(ir_func *f, ir_op op, ir_type t, int64_t x, int64_t y)
{
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    switch (op) {
    case IR_ADD: return const_of(f, t, wrap(t, (int64_t)(ux + uy)));
    case IR_SUB: return const_of(f, t, wrap(t, (int64_t)(ux - uy)));
    case IR_MUL: return const_of(f, t, wrap(t, (int64_t)(ux * uy)));
    case IR_DIV:
        return const_of(f, t, t == IR_I32 ? ir_sem_div32((int32_t)x, (int32_t)y)
                                          : ir_sem_div64(x, y));
    case IR_MOD:
        return const_of(f, t, t == IR_I32 ? ir_sem_mod32((int32_t)x, (int32_t)y)
                                          : ir_sem_mod64(x, y));
    case IR_MIN: return const_of(f, t, y < x ? y : x);
    case IR_MAX: return const_of(f, t, x < y ? y : x);
    case IR_LT: return ir_const_bool(f, x < y);
    case IR_LE: return ir_const_bool(f, x <= y);
    case IR_EQ: return ir_const_bool(f, x == y);
    case IR_NE: return ir_const_bool(f, x != y);
    case IR_AND: return ir_const_bool(f, x && y);
    case IR_OR: return ir_const_bool(f, x || y);
    default: return NULL;
    }
}

static ir_expr *fold_float_bin(ir_func *f, ir_op op, float x, float y)
{
    switch (op) {
    case IR_ADD: return ir_const_f32(f, x + y);
    case IR_SUB: return ir_const_f32(f, x - y);
    case IR_MUL: return ir_const_f32(f, x * y);
    case IR_DIV: return ir_const_f32(f, x / y);
    case IR_MIN: return ir_const_f32(f, y < x ? y : x);
    case IR_MAX: return ir_const_f32(f, x < y ? y : x);
    case IR_LT: return ir_const_bool(f, x < y);
    case IR_LE: return ir_const_bool(f, x <= y);
    case IR_EQ: return ir_const_bool(f, x == y);
    case IR_NE: return ir_const_bool(f, x != y);
    default: return NULL;
    }
}

/* Exact identities only: x*1 = x and x/1 = x and x-0 = x hold for every float including NaN
 * and -0, but x+0 does not (-0 + 0 = +0). */
static ir_expr *identity_bin(ir_func *f, ir_expr *e)
{
    ir_expr *a = e->a, *b = e->b;
    int64_t ci;
    float cf;
    bool b_int = ir_is_const(b, &ci), a_int_c = false;
    int64_t ai = 0;
    a_int_c = ir_is_const(a, &ai);
    if (ir_type_is_float(e->type) || ir_type_is_float(a->type)) {
        if (ir_is_const_f(b, &cf) && ((e->op == IR_MUL || e->op == IR_DIV) && cf == 1.0f))
            return a;
        if (ir_is_const_f(a, &cf) && e->op == IR_MUL && cf == 1.0f)
            return b;
        if (ir_is_const_f(b, &cf) && e->op == IR_SUB && cf == 0.0f && !signbit(cf))
            return a;
        return e;
    }
    switch (e->op) {
    case IR_ADD:
        if (b_int && ci == 0) return a;
        if (a_int_c && ai == 0) return b;
        /* (x + c1) + c2 -> x + (c1 + c2): keeps affine indices in a canonical form. */
        if (b_int && a->kind == IR_BIN && (a->op == IR_ADD || a->op == IR_SUB) &&
            ir_is_const(a->b, NULL)) {
            int64_t c1 = a->op == IR_ADD ? a->b->ival : -a->b->ival;
            return irf_bin(f, IR_ADD, a->a, const_of(f, e->type, wrap(e->type, c1 + ci)));
        }
        if (a_int_c && !b_int)
            return irf_bin(f, IR_ADD, b, a);
        break;
    case IR_SUB:
        if (b_int && ci == 0) return a;
        if (b_int)
            return irf_bin(f, IR_ADD, a, const_of(f, e->type, wrap(e->type, -ci)));
        if (ir_expr_equal(a, b)) return const_of(f, e->type, 0);
        break;
    case IR_MUL:
        if (b_int && ci == 1) return a;
        if (a_int_c && ai == 1) return b;
        if ((b_int && ci == 0) || (a_int_c && ai == 0)) return const_of(f, e->type, 0);
        break;
    case IR_DIV:
        if (b_int && ci == 1) return a;
        /* (x * k) / k -> x: indices do not overflow (as in Halide) */
        if (b_int && ci != 0 && a->kind == IR_BIN && a->op == IR_MUL) {
            if (ir_is_const(a->b, &ai) && ai == ci) return a->a;
            if (ir_is_const(a->a, &ai) && ai == ci) return a->b;
        }
        break;
    case IR_MOD:
        /* (x * m) % k -> 0 when k divides m */
        if (b_int && ci != 0 && a->kind == IR_BIN && a->op == IR_MUL &&
            ((ir_is_const(a->b, &ai) && ai % ci == 0) || (ir_is_const(a->a, &ai) && ai % ci == 0)))
            return const_of(f, e->type, 0);
        break;
    case IR_AND:
        if (a_int_c) return ai ? b : a;
        if (b_int) return ci ? a : b;
        break;
    case IR_OR:
        if (a_int_c) return ai ? a : b;
        if (b_int) return ci ? b : a;
        break;
    case IR_MIN:
    case IR_MAX:
    case IR_LE:
    case IR_EQ:
        if (ir_expr_equal(a, b))
            return (e->op == IR_MIN || e->op == IR_MAX) ? a : ir_const_bool(f, true);
        break;
    case IR_LT:
    case IR_NE:
        if (ir_expr_equal(a, b)) return ir_const_bool(f, false);
        break;
    default:
        break;
    }
    return e;
}

static ir_expr *fold_bin(ir_func *f, ir_expr *e)
{
    int64_t x, y;
    float fx, fy;
    if (ir_is_const(e->a, &x) && ir_is_const(e->b, &y)) {
        ir_expr *r = fold_int_bin(f, e->op, e->a->type, x, y);
        if (r)
            return r;
    }
    if (ir_is_const_f(e->a, &fx) && ir_is_const_f(e->b, &fy)) {
        ir_expr *r = fold_float_bin(f, e->op, fx, fy);
        if (r)
            return r;
    }
    return identity_bin(f, e);
}

static ir_expr *fold_cast(ir_func *f, ir_expr *e)
{
    int64_t x;
    float fx;
    ir_expr *a = e->a;
    if (ir_is_const(a, &x)) {
        switch (e->type) {
        case IR_F32: return ir_const_f32(f, a->type == IR_I64 ? (float)x : (float)(int32_t)x);
        case IR_F64: return ir_const_f64(f, a->type == IR_I64 ? (double)x : (double)(int32_t)x);
        case IR_I32: return ir_const_i32(f, (int32_t)(uint32_t)(uint64_t)x);
        case IR_I64: return ir_const_i64(f, a->type == IR_BOOL ? (x != 0) : x);
        case IR_BOOL: return ir_const_bool(f, x != 0);
        }
    }
    if (ir_is_const_f(a, &fx)) {
        if (e->type == IR_I32)
            return ir_const_i32(f, ir_sem_f2i(fx));
        if (e->type == IR_I64)
            return ir_const_i64(f, ir_sem_f2i(fx));
    }
    return e;
}

static ir_expr *fold_call(ir_func *f, ir_expr *e)
{
    if (e->fn > IR_FN_FABS || e->n_args > 2)
        return e;
    float v[2];
    for (int i = 0; i < e->n_args; i++)
        if (!ir_is_const_f(e->args[i], &v[i]))
            return e;
    return ir_const_f32(f, ir_sem_call_f32(e->fn, v));
}

ir_expr *ir_fold(ir_func *f, ir_expr *e)
{
    int64_t x;
    float fx;
    switch (e->kind) {
    case IR_BIN:
        return fold_bin(f, e);
    case IR_UN:
        if (e->op == IR_NOT && ir_is_const(e->a, &x))
            return ir_const_bool(f, !x);
        if (e->op == IR_NEG && ir_is_const(e->a, &x))
            return const_of(f, e->type, wrap(e->type, (int64_t)(0ull - (uint64_t)x)));
        if (e->op == IR_NEG && ir_is_const_f(e->a, &fx))
            return ir_const_f32(f, -fx);
        return e;
    case IR_SELECT:
        if (ir_is_const(e->a, &x))
            return x ? e->b : e->c;
        if (ir_expr_equal(e->b, e->c))
            return e->b;
        return e;
    case IR_CAST:
        return fold_cast(f, e);
    case IR_CALL:
        return fold_call(f, e);
    default:
        return e;
    }
}

ir_expr *irf_bin(ir_func *f, ir_op op, ir_expr *a, ir_expr *b)
{
    return ir_fold(f, ir_bin(f, op, a, b));
}

ir_expr *irf_un(ir_func *f, ir_op op, ir_expr *a)
{
    return ir_fold(f, ir_un(f, op, a));
}

ir_expr *irf_select(ir_func *f, ir_expr *c, ir_expr *a, ir_expr *b)
{
    return ir_fold(f, ir_select(f, c, a, b));
}

ir_expr *irf_cast(ir_func *f, ir_type to, ir_expr *a)
{
    return ir_fold(f, ir_cast(f, to, a));
}

ir_expr *irf_call(ir_func *f, ir_fn fn, ir_type type, int n, ir_expr **args)
{
    return ir_fold(f, ir_call(f, fn, type, n, args));
}

ir_expr *irf_boundary_index(ir_func *f, const ir_buffer *b, int d, ir_expr *i, ir_expr **inside)
{
    ir_expr *n = ir_ref(f, b->extent[d]), *zero = ir_const_i32(f, 0), *one = ir_const_i32(f, 1);
    ir_expr *last = irf_bin(f, IR_SUB, n, one);
    switch (b->boundary) {
    case PF_BOUNDARY_WRAP: {
        ir_expr *r = irf_bin(f, IR_MOD, i, n);
        return irf_select(f, irf_bin(f, IR_LT, r, zero), irf_bin(f, IR_ADD, r, n), r);
    }
    case PF_BOUNDARY_MIRROR: {
        ir_expr *p = irf_bin(f, IR_MAX, irf_bin(f, IR_MUL, last, ir_const_i32(f, 2)), one);
        ir_expr *r = irf_bin(f, IR_MOD, i, p);
        ir_expr *j = irf_select(f, irf_bin(f, IR_LT, r, zero), irf_bin(f, IR_ADD, r, p), r);
        return irf_bin(f, IR_MIN, irf_select(f, irf_bin(f, IR_LT, j, n), j,
                                             irf_bin(f, IR_SUB, p, j)), last);
    }
    case PF_BOUNDARY_CONSTANT: {
        ir_expr *ok = irf_bin(f, IR_AND, irf_bin(f, IR_LE, zero, i), irf_bin(f, IR_LT, i, n));
        *inside = *inside ? irf_bin(f, IR_AND, *inside, ok) : ok;
        return irf_bin(f, IR_MIN, irf_bin(f, IR_MAX, i, zero), last);
    }
    default:
        return irf_bin(f, IR_MIN, irf_bin(f, IR_MAX, i, zero), last);
    }
}

ir_expr *ir_simplify(ir_func *f, ir_expr *e)
{
    switch (e->kind) {
    case IR_CONST:
    case IR_VARREF:
        return e;
    case IR_BIN:
        return irf_bin(f, e->op, ir_simplify(f, e->a), ir_simplify(f, e->b));
    case IR_UN:
        return irf_un(f, e->op, ir_simplify(f, e->a));
    case IR_SELECT:
        return irf_select(f, ir_simplify(f, e->a), ir_simplify(f, e->b), ir_simplify(f, e->c));
    case IR_CAST:
        return irf_cast(f, e->type, ir_simplify(f, e->a));
    case IR_ALOAD:
        return ir_aload(f, e->var, ir_simplify(f, e->a));
    case IR_LOAD:
    case IR_INTERP:
    case IR_CALL: {
        ir_expr **args = pf_arena_alloc(f->arena, sizeof *args * (size_t)(e->n_args + 1));
        for (int i = 0; i < e->n_args; i++)
            args[i] = ir_simplify(f, e->args[i]);
        return ir_with_args(f, e, args, e->clamp_mask);
    }
    }
    return e;
}
