/* The interpreter's translator, part 2: expressions. One instruction per operator node, in
 * source order, so the executed arithmetic is exactly the arithmetic written. Three cheap
 * rewrites keep every rounding step: operations on literals are folded with the functions of
 * lang/builtins.c (the same binary32/int32 results); `x * y + z`-shaped float nodes become one
 * instruction that still rounds the product and the sum separately; and conditions jump
 * directly on a comparison instead of materialising a bool. See interp_compile.h. */
#include "lang/builtins.h"
#include "interp/interp_compile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- folding ---- */

/* Whether every slot holds a literal; their values in vals. */
static bool all_const(const pf_icomp *c, int n, const int32_t *slots, pf_value *vals)
{
    for (int i = 0; i < n; i++)
        if (!pf_ic_const_value(c, slots[i], &vals[i]))
            return false;
    return true;
}

static int fold(pf_icomp *c, pf_type t, pf_value v)
{
    if (t == PF_T_BOOL) {
        bool b = v.b;
        memset(&v, 0, sizeof v);
        v.b = b;
    }
    return pf_ic_const_slot(c, t, v);
}

/* ---- expressions ---- */

void pf_ic_mov(pf_icomp *c, int d, int a)
{
    if (d != a)
        PF_IC_EMIT(c, PF_I_MOV, d, a);
}

/* Converts the value in slot s from type `from` to `to` (the checker inserts these casts; this
 * covers a tree built by hand without them). */
int pf_ic_coerce(pf_icomp *c, int s, pf_type from, pf_type to, pf_loc loc)
{
    pf_value v;
    if (from == to)
        return s;
    if (pf_ic_const_value(c, s, &v) && from != PF_T_ERROR && from != PF_T_VOID &&
        to != PF_T_BOOL)
        return fold(c, to, pf_eval_cast(to, from, v));
    if (from == PF_T_INT && to == PF_T_FLOAT)
        return PF_IC_DEF(c, PF_I_I2F, s);
    if (from == PF_T_FLOAT && to == PF_T_INT)
        return PF_IC_DEF(c, PF_I_F2I, s);
    if (from == PF_T_BOOL && to == PF_T_INT)
        return PF_IC_DEF(c, PF_I_B2I, s);
    if (from == PF_T_BOOL && to == PF_T_FLOAT)
        return PF_IC_DEF(c, PF_I_B2F, s);
    return pf_ic_fail(c, loc, "interpreter: value of the wrong type (program not checked?)");
}

int pf_ic_expr_as(pf_icomp *c, const pf_expr *e, pf_type t)
{
    return pf_ic_coerce(c, pf_ic_expr(c, e), e->type, t, e->loc);
}

static int cast_expr(pf_icomp *c, const pf_expr *e)
{
    return pf_ic_expr_as(c, e->a, e->type);
}

static int unary_expr(pf_icomp *c, const pf_expr *e)
{
    int a = pf_ic_expr(c, e->a);
    pf_value v;
    if (pf_ic_const_value(c, a, &v))
        return fold(c, e->type, pf_eval_unary(e->op, e->a->type, v));
    if (e->op == PF_OP_NOT)
        return PF_IC_DEF(c, PF_I_NOT, a);
    return PF_IC_DEF(c, e->a->type == PF_T_FLOAT ? PF_I_NEG_F : PF_I_NEG_I, a);
}

/* && and || as a value: the jumps of a condition, then true or false. The right operand is
 * skipped when the left decides (unobservable: expressions have no side effects). */
static int logic_expr(pf_icomp *c, const pf_expr *e)
{
    int d = pf_ic_new_slots(c, 1);
    pf_ic_jumps to_false = { 0, 0, NULL };
    pf_ic_jump_if_false(c, e, &to_false);
    PF_IC_EMIT(c, PF_I_MOV, d, pf_ic_const_bool(c, true), PF_I_JMP, 0);
    int to_end = pf_ic_here(c) - 1;
    pf_ic_jumps_patch(c, &to_false);
    PF_IC_EMIT(c, PF_I_MOV, d, pf_ic_const_bool(c, false));
    c->u->code[to_end] = pf_ic_here(c);
    return d;
}

static pf_iop binary_opcode(pf_op op, pf_type t)
{
    static const pf_iop int_ops[] = {
        PF_I_ADD_I, PF_I_SUB_I, PF_I_MUL_I, PF_I_DIV_I, PF_I_MOD_I,
        PF_I_LT_I, PF_I_LE_I, PF_I_GT_I, PF_I_GE_I, PF_I_EQ_I, PF_I_NE_I,
    };
    static const pf_iop float_ops[] = {
        PF_I_ADD_F, PF_I_SUB_F, PF_I_MUL_F, PF_I_DIV_F, PF_I_OP_COUNT,  /* no float % */
        PF_I_LT_F, PF_I_LE_F, PF_I_GT_F, PF_I_GE_F, PF_I_EQ_F, PF_I_NE_F,
    };
    if (t == PF_T_BOOL)
        return op == PF_OP_EQ ? PF_I_EQ_B : op == PF_OP_NE ? PF_I_NE_B : PF_I_OP_COUNT;
    if (op > PF_OP_NE)
        return PF_I_OP_COUNT;
    return t == PF_T_FLOAT ? float_ops[op] : int_ops[op];
}

static bool is_float_mul(const pf_expr *e)
{
    return e->kind == PF_E_BINARY && e->op == PF_OP_MUL && e->type == PF_T_FLOAT;
}

/* d = a op b on slots, folded when both are literals. */
static int binary_slots(pf_icomp *c, const pf_expr *e, pf_type t, int a, int b)
{
    pf_iop op = binary_opcode(e->op, t);
    if (op == PF_I_OP_COUNT)
        return pf_ic_fail(c, e->loc, "interpreter: operator not defined on these types");
    pf_value v[2];
    bool foldable = t != PF_T_BOOL || e->op == PF_OP_EQ || e->op == PF_OP_NE;
    if (foldable && all_const(c, 2, (int32_t[]){ a, b }, v))
        return fold(c, e->type, pf_eval_binary(e->op, t, v[0], v[1]));
    return PF_IC_DEF(c, op, a, b);
}

/* The operands of a float product, or the folded product in *prod when both are literals. */
static bool mul_operands(pf_icomp *c, const pf_expr *m, int *x, int *y, int *prod)
{
    *x = pf_ic_expr_as(c, m->a, PF_T_FLOAT);
    *y = pf_ic_expr_as(c, m->b, PF_T_FLOAT);
    pf_value v[2];
    if (!all_const(c, 2, (int32_t[]){ *x, *y }, v))
        return true;
    *prod = fold(c, PF_T_FLOAT, pf_eval_binary(PF_OP_MUL, PF_T_FLOAT, v[0], v[1]));
    return false;
}

/* x * y +- z and z +- x * y as one instruction (two roundings, as written). Returns -1 when e
 * has no such shape. */
static int fused_mul(pf_icomp *c, const pf_expr *e)
{
    if (e->type != PF_T_FLOAT || (e->op != PF_OP_ADD && e->op != PF_OP_SUB))
        return -1;
    bool add = e->op == PF_OP_ADD;
    int x, y, prod;
    if (is_float_mul(e->a)) {
        bool fuse = mul_operands(c, e->a, &x, &y, &prod);
        int z = pf_ic_expr_as(c, e->b, PF_T_FLOAT);
        if (!fuse)
            return binary_slots(c, e, PF_T_FLOAT, prod, z);
        return PF_IC_DEF(c, add ? PF_I_MULADD_F : PF_I_MULSUB_F, x, y, z);
    }
    if (!is_float_mul(e->b))
        return -1;
    int z = pf_ic_expr_as(c, e->a, PF_T_FLOAT);
    if (!mul_operands(c, e->b, &x, &y, &prod))
        return binary_slots(c, e, PF_T_FLOAT, z, prod);
    return PF_IC_DEF(c, add ? PF_I_ADDMUL_F : PF_I_SUBMUL_F, z, x, y);
}

static pf_type operand_type(const pf_expr *e)
{
    pf_type t = e->a->type;
    if (t != e->b->type && (t == PF_T_FLOAT || e->b->type == PF_T_FLOAT))
        t = PF_T_FLOAT;
    return t;
}

static int binary_expr(pf_icomp *c, const pf_expr *e)
{
    if (e->op == PF_OP_AND || e->op == PF_OP_OR)
        return logic_expr(c, e);
    int f = fused_mul(c, e);
    if (f >= 0 || c->failed)
        return f < 0 ? 0 : f;
    pf_type t = operand_type(e);
    int a = pf_ic_expr_as(c, e->a, t);
    int b = pf_ic_expr_as(c, e->b, t);
    return binary_slots(c, e, t, a, b);
}

/* acc op value into d, where op is + or - and value may be a float product (fused). */
void pf_ic_accumulate(pf_icomp *c, int d, int acc, pf_iop op, const pf_expr *value, pf_type t)
{
    int x, y, prod;
    if (t == PF_T_FLOAT && (op == PF_I_ADD_F || op == PF_I_SUB_F) && is_float_mul(value)) {
        if (mul_operands(c, value, &x, &y, &prod)) {
            PF_IC_EMIT(c, op == PF_I_ADD_F ? PF_I_ADDMUL_F : PF_I_SUBMUL_F, d, acc, x, y);
            return;
        }
        PF_IC_EMIT(c, op, d, acc, prod);
        return;
    }
    PF_IC_EMIT(c, op, d, acc, pf_ic_expr_as(c, value, t));
}

/* ---- conditions ---- */

static void cond_true(pf_icomp *c, const pf_expr *e, pf_ic_jumps *j);

static bool is_comparison(const pf_expr *e)
{
    if (e->kind != PF_E_BINARY || e->op < PF_OP_LT || e->op > PF_OP_NE)
        return false;
    pf_type t = operand_type(e);
    return t == PF_T_INT || t == PF_T_FLOAT;
}

/* "jump unless a op b"; for ints also used for "jump if" through the negated operator. */
static pf_iop jump_unless(pf_op op, pf_type t)
{
    static const pf_iop i_ops[] = { PF_I_JNLT_I, PF_I_JNLE_I, PF_I_JNGT_I, PF_I_JNGE_I,
                                    PF_I_JNEQ_I, PF_I_JNNE_I };
    static const pf_iop f_ops[] = { PF_I_JNLT_F, PF_I_JNLE_F, PF_I_JNGT_F, PF_I_JNGE_F,
                                    PF_I_JNEQ_F, PF_I_JNNE_F };
    return t == PF_T_FLOAT ? f_ops[op - PF_OP_LT] : i_ops[op - PF_OP_LT];
}

static pf_op negate(pf_op op)
{
    static const pf_op neg[] = { PF_OP_GE, PF_OP_GT, PF_OP_LE, PF_OP_LT, PF_OP_NE, PF_OP_EQ };
    return neg[op - PF_OP_LT];
}

/* A comparison as a conditional jump: taken when its value equals `when`. Returns false (and
 * emits nothing) for float "jump if true", which has no exact negated form with NaN. */
static bool compare_jump(pf_icomp *c, const pf_expr *e, bool when, pf_ic_jumps *j)
{
    pf_type t = operand_type(e);
    if (when && t == PF_T_FLOAT)
        return false;
    int a = pf_ic_expr_as(c, e->a, t), b = pf_ic_expr_as(c, e->b, t);
    pf_value v[2];
    if (all_const(c, 2, (int32_t[]){ a, b }, v)) {
        if (pf_eval_binary(e->op, t, v[0], v[1]).b == when) {
            PF_IC_EMIT(c, PF_I_JMP, 0);
            pf_ic_jumps_add(j, pf_ic_here(c) - 1);
        }
        return true;
    }
    PF_IC_EMIT(c, jump_unless(when ? negate(e->op) : e->op, t), a, b, 0);
    pf_ic_jumps_add(j, pf_ic_here(c) - 1);
    return true;
}

/* The general case: the bool's value, then a jump on it. */
static void value_jump(pf_icomp *c, const pf_expr *e, bool when, pf_ic_jumps *j)
{
    int k = pf_ic_expr(c, e);
    pf_value v;
    if (pf_ic_const_value(c, k, &v)) {
        if (v.b != when)
            return;
        PF_IC_EMIT(c, PF_I_JMP, 0);
    } else {
        PF_IC_EMIT(c, when ? PF_I_JMPT : PF_I_JMPF, k, 0);
    }
    pf_ic_jumps_add(j, pf_ic_here(c) - 1);
}

/* Jumps (through j) when e is false; falls through when it is true. */
void pf_ic_jump_if_false(pf_icomp *c, const pf_expr *e, pf_ic_jumps *j)
{
    if (c->failed)
        return;
    if (e->kind == PF_E_BINARY && e->op == PF_OP_AND) {
        pf_ic_jump_if_false(c, e->a, j);
        pf_ic_jump_if_false(c, e->b, j);
    } else if (e->kind == PF_E_BINARY && e->op == PF_OP_OR) {
        pf_ic_jumps t = { 0, 0, NULL };
        cond_true(c, e->a, &t);
        pf_ic_jump_if_false(c, e->b, j);
        pf_ic_jumps_patch(c, &t);
    } else if (e->kind == PF_E_UNARY && e->op == PF_OP_NOT) {
        cond_true(c, e->a, j);
    } else if (!is_comparison(e) || !compare_jump(c, e, false, j)) {
        value_jump(c, e, false, j);
    }
}

/* Jumps (through j) when e is true; falls through when it is false. */
static void cond_true(pf_icomp *c, const pf_expr *e, pf_ic_jumps *j)
{
    if (c->failed)
        return;
    if (e->kind == PF_E_BINARY && e->op == PF_OP_OR) {
        cond_true(c, e->a, j);
        cond_true(c, e->b, j);
    } else if (e->kind == PF_E_BINARY && e->op == PF_OP_AND) {
        pf_ic_jumps f = { 0, 0, NULL };
        pf_ic_jump_if_false(c, e->a, &f);
        cond_true(c, e->b, j);
        pf_ic_jumps_patch(c, &f);
    } else if (e->kind == PF_E_UNARY && e->op == PF_OP_NOT) {
        pf_ic_jump_if_false(c, e->a, j);
    } else if (!is_comparison(e) || !compare_jump(c, e, true, j)) {
        value_jump(c, e, true, j);
    }
}

static int cond_expr(pf_icomp *c, const pf_expr *e)
{
    int d = pf_ic_new_slots(c, 1);
    pf_ic_jumps to_else = { 0, 0, NULL };
    pf_ic_jump_if_false(c, e->a, &to_else);
    pf_ic_mov(c, d, pf_ic_expr_as(c, e->b, e->type));
    PF_IC_EMIT(c, PF_I_JMP, 0);
    int to_end = pf_ic_here(c) - 1;
    pf_ic_jumps_patch(c, &to_else);
    pf_ic_mov(c, d, pf_ic_expr_as(c, e->c, e->type));
    c->u->code[to_end] = pf_ic_here(c);
    return d;
}

static int func_index(const pf_program *prog, const pf_func *f)
{
    for (int i = 0; i < prog->n_funcs; i++)
        if (prog->funcs[i] == f)
            return i;
    return -1;
}

static int call_expr(pf_icomp *c, const pf_expr *e)
{
    const pf_func *f = e->sym ? e->sym->func : NULL;
    int fi = f ? func_index(c->prog, f) : -1;
    if (fi < 0 || e->n_args != f->n_params)
        return pf_ic_fail(c, e->loc, "interpreter: call of an unknown function");
    if (c->func_index >= 0) {
        if (c->n_calls == c->cap_calls) {
            c->cap_calls = c->cap_calls ? 2 * c->cap_calls : 64;
            c->calls = pf_xrealloc(c->calls, sizeof *c->calls * (size_t)c->cap_calls);
        }
        c->calls[c->n_calls][0] = c->func_index;
        c->calls[c->n_calls++][1] = fi;
    }
    int32_t *args = pf_xmalloc(sizeof *args * (size_t)(e->n_args + 1));
    for (int i = 0; i < e->n_args; i++)
        args[i] = pf_ic_expr_as(c, e->args[i], f->param_types[i]);
    args[e->n_args] = 0;
    int d = pf_ic_def_n(c, PF_I_CALL, 0, args);
    pf_ic_put(c, fi);
    pf_ic_put(c, e->n_args);
    pf_ic_put_n(c, e->n_args, args);
    c->def_end = pf_ic_here(c);
    free(args);
    return d;
}

/* Math builtins: one opcode each, operands converted to the builtin's parameter types. */
static int builtin_math(pf_icomp *c, const pf_expr *e)
{
    static const struct { pf_builtin b; pf_iop op; int n; } table[] = {
        { PF_B_EXP, PF_I_EXP, 1 }, { PF_B_LOG, PF_I_LOG, 1 }, { PF_B_SQRT, PF_I_SQRT, 1 },
        { PF_B_SIN, PF_I_SIN, 1 }, { PF_B_COS, PF_I_COS, 1 }, { PF_B_TAN, PF_I_TAN, 1 },
        { PF_B_FLOOR, PF_I_FLOOR, 1 }, { PF_B_CEIL, PF_I_CEIL, 1 }, { PF_B_ROUND, PF_I_ROUND, 1 },
        { PF_B_POW, PF_I_POW, 2 }, { PF_B_ATAN2, PF_I_ATAN2, 2 },
        { PF_B_YUV_Y, PF_I_YUV_Y, 3 }, { PF_B_YUV_U, PF_I_YUV_U, 3 }, { PF_B_YUV_V, PF_I_YUV_V, 3 },
        { PF_B_YUV_R, PF_I_YUV_R, 3 }, { PF_B_YUV_G, PF_I_YUV_G, 3 }, { PF_B_YUV_B, PF_I_YUV_B, 3 },
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        if (table[k].b != e->builtin)
            continue;
        if (e->n_args != table[k].n)
            break;
        int32_t a[3];
        pf_value v[3];
        for (int i = 0; i < e->n_args; i++)
            a[i] = pf_ic_expr_as(c, e->args[i], PF_T_FLOAT);
        if (all_const(c, e->n_args, a, v))
            return fold(c, PF_T_FLOAT, pf_eval_builtin(e->builtin, PF_T_FLOAT, e->n_args, v));
        return pf_ic_def_n(c, table[k].op, e->n_args, a);
    }
    return pf_ic_fail(c, e->loc, "interpreter: malformed builtin call");
}

/* abs, min, max, clamp: int when the result is int, else float. */
static int builtin_generic(pf_icomp *c, const pf_expr *e)
{
    pf_type t = e->type == PF_T_INT ? PF_T_INT : PF_T_FLOAT;
    int want = e->builtin == PF_B_ABS ? 1 : e->builtin == PF_B_CLAMP ? 3 : 2;
    if (e->n_args != want)
        return pf_ic_fail(c, e->loc, "interpreter: malformed builtin call");
    int32_t a[3];
    pf_value v[3];
    for (int i = 0; i < want; i++)
        a[i] = pf_ic_expr_as(c, e->args[i], t);
    if (all_const(c, want, a, v))
        return fold(c, t, pf_eval_builtin(e->builtin, t, want, v));
    pf_iop op;
    switch (e->builtin) {
    case PF_B_ABS: op = t == PF_T_INT ? PF_I_ABS_I : PF_I_ABS_F; break;
    case PF_B_MIN: op = t == PF_T_INT ? PF_I_MIN_I : PF_I_MIN_F; break;
    case PF_B_MAX: op = t == PF_T_INT ? PF_I_MAX_I : PF_I_MAX_F; break;
    default: op = t == PF_T_INT ? PF_I_CLAMP_I : PF_I_CLAMP_F; break;
    }
    return pf_ic_def_n(c, op, want, a);
}

static int builtin_noise(pf_icomp *c, const pf_expr *e)
{
    if (e->n_args < 1 || e->n_args > 4)
        return pf_ic_fail(c, e->loc, "interpreter: noise takes 1 to 4 ints");
    int32_t a[4];
    pf_value v[4];
    for (int i = 0; i < 4; i++)
        a[i] = i < e->n_args ? pf_ic_expr_as(c, e->args[i], PF_T_INT) : pf_ic_const_int(c, 0);
    if (all_const(c, e->n_args, a, v))
        return fold(c, PF_T_FLOAT, pf_eval_builtin(PF_B_NOISE, PF_T_FLOAT, e->n_args, v));
    return PF_IC_DEF(c, PF_I_NOISE, e->n_args, a[0], a[1], a[2], a[3]);
}

/* median(v, n): v is left as it was (pf_median_values sorts a copy). */
static int builtin_median(pf_icomp *c, const pf_expr *e)
{
    if (e->n_args != 2 || e->args[0]->kind != PF_E_NAME)
        return pf_ic_fail(c, e->loc, "interpreter: median takes an array and a count");
    int len;
    const pf_symbol *sym = e->args[0]->sym;
    int base = pf_ic_array_base(c, sym, e->loc, &len);
    int n = pf_ic_expr_as(c, e->args[1], PF_T_INT);
    int d = pf_ic_new_slots(c, 1);
    pf_iop op = sym && sym->type == PF_T_INT ? PF_I_MEDIAN_I : PF_I_MEDIAN_F;
    PF_IC_EMIT(c, op, d, base, len, n);
    pf_type elem = sym && sym->type == PF_T_INT ? PF_T_INT : PF_T_FLOAT;
    return pf_ic_coerce(c, d, elem, e->type, e->loc);
}

static int builtin_expr(pf_icomp *c, const pf_expr *e)
{
    switch (e->builtin) {
    case PF_B_ABS:
    case PF_B_MIN:
    case PF_B_MAX:
    case PF_B_CLAMP: return builtin_generic(c, e);
    case PF_B_NOISE: return builtin_noise(c, e);
    case PF_B_MEDIAN: return builtin_median(c, e);
    default: return builtin_math(c, e);
    }
}

/* A read of an image stored on demand (docs/perforation.md §4): through the downsampled array
 * (READ_OD), or, in its writer, the stage's own pixel at J (READ_J). Every read of such an image
 * goes this way, annotated or not: the storage decides, not the annotation. */
static int on_demand_read(pf_icomp *c, int img, pf_iop op, int nd, const int32_t *idx)
{
    int zero = pf_ic_const_int(c, 0);
    int d = PF_IC_DEF(c, op, img);
    for (int i = 0; i < PF_MAX_DIMS; i++)
        pf_ic_put(c, i < nd ? idx[i] : zero);
    c->def_end = pf_ic_here(c);
    return d;
}

static int image_read(pf_icomp *c, const pf_expr *e)
{
    int img = pf_ic_image_index(c, e->sym, e->loc);
    int nd = c->failed ? 1 : c->prog->images[img]->ndims;
    if (e->n_args != nd || nd < 1 || nd > PF_MAX_DIMS)
        return pf_ic_fail(c, e->loc, "interpreter: wrong number of image indices");
    const pf_stage *st = c->stage;
    if (st && st->image && st->image->image && st->image->image->index == img)
        pf_ic_note_access(c, img, e->args);  /* reading its own image elsewhere is a dependence */
    int32_t idx[PF_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        idx[i] = pf_ic_expr_as(c, e->args[i], PF_T_INT);
    const pf_stage *od = c->ic->od_writer[img];
    if (od)
        return on_demand_read(c, img, od == st ? PF_I_READ_J : PF_I_READ_OD, nd, idx);
    static const pf_iop ops[] = { PF_I_READ1, PF_I_READ2, PF_I_READ3, PF_I_READ4 };
    int d = PF_IC_DEF(c, ops[nd - 1], img);
    pf_ic_put_n(c, nd, idx);
    c->def_end = pf_ic_here(c);
    return d;
}

static int array_read(pf_icomp *c, const pf_expr *e)
{
    int len;
    int base = pf_ic_array_base(c, e->sym, e->loc, &len);
    if (e->n_args != 1)
        return pf_ic_fail(c, e->loc, "interpreter: an array takes one index");
    int i = pf_ic_expr_as(c, e->args[0], PF_T_INT);
    return PF_IC_DEF(c, PF_I_ALOAD, base, len, i);
}

/* The loop of a reduction or a `for`: var runs lo .. hi step st (st slot or -1 for 1). Returns
 * the position of FOR_INIT's exit operand, to patch; *body is where the body starts. */
int pf_ic_loop_open(pf_icomp *c, int var, int lo, int hi, int st, int *hi_p, int *st_p,
                     int *body)
{
    *hi_p = pf_ic_new_slots(c, 1);
    *st_p = pf_ic_new_slots(c, 1);
    if (st < 0)
        st = pf_ic_const_int(c, 1);
    PF_IC_EMIT(c, PF_I_FOR_INIT, var, *hi_p, *st_p, lo, hi, st, 0);
    *body = pf_ic_here(c);
    return pf_ic_here(c) - 1;
}

void pf_ic_loop_close(pf_icomp *c, int var, int hi_p, int st_p, int body, int exit_pos)
{
    PF_IC_EMIT(c, PF_I_FOR_NEXT, var, hi_p, st_p, body);
    c->u->code[exit_pos] = pf_ic_here(c);
}

static int reduce_identity(pf_icomp *c, pf_reduce_op op, pf_type t)
{
    if (op == PF_REDUCE_SUM)
        return t == PF_T_FLOAT ? pf_ic_const_float(c, 0.0f) : pf_ic_const_int(c, 0);
    if (t == PF_T_FLOAT)
        return pf_ic_const_float(c, op == PF_REDUCE_MIN ? INFINITY : -INFINITY);
    return pf_ic_const_int(c, op == PF_REDUCE_MIN ? INT32_MAX : INT32_MIN);
}

/* acc = identity; for i in lo..hi ascending: acc = acc + e  /  min(acc, e)  /  max(acc, e). */
static int reduce_expr(pf_icomp *c, const pf_expr *e)
{
    pf_type t = e->type;
    if (!e->sym || e->n_args != 1 || (t != PF_T_INT && t != PF_T_FLOAT))
        return pf_ic_fail(c, e->loc, "interpreter: malformed reduction");
    int lo = pf_ic_expr_as(c, e->a, PF_T_INT);
    int hi = pf_ic_expr_as(c, e->b, PF_T_INT);
    int acc = pf_ic_new_slots(c, 1);
    pf_ic_mov(c, acc, reduce_identity(c, e->reduce_op, t));
    int var = pf_ic_new_slots(c, 1);
    pf_ic_map_put(c, e->sym, var);
    int hi_p, st_p, body;
    int exit_pos = pf_ic_loop_open(c, var, lo, hi, -1, &hi_p, &st_p, &body);
    static const pf_iop int_ops[] = { PF_I_ADD_I, PF_I_MIN_I, PF_I_MAX_I };
    static const pf_iop float_ops[] = { PF_I_ADD_F, PF_I_MIN_F, PF_I_MAX_F };
    pf_iop op = t == PF_T_FLOAT ? float_ops[e->reduce_op] : int_ops[e->reduce_op];
    if (op == PF_I_ADD_F)
        pf_ic_accumulate(c, acc, acc, op, e->args[0], t);
    else
        PF_IC_EMIT(c, op, acc, acc, pf_ic_expr_as(c, e->args[0], t));
    pf_ic_loop_close(c, var, hi_p, st_p, body, exit_pos);
    return acc;
}

/* Returns the slot holding e's value (of type e->type). */
int pf_ic_expr(pf_icomp *c, const pf_expr *e)
{
    if (c->failed)
        return 0;
    switch (e->kind) {
    case PF_E_INT: return pf_ic_const_int(c, e->ival);
    case PF_E_FLOAT: return pf_ic_const_float(c, e->fval);
    case PF_E_BOOL: return pf_ic_const_bool(c, e->bval);
    case PF_E_NAME: return pf_ic_name_slot(c, e);
    case PF_E_UNARY: return unary_expr(c, e);
    case PF_E_BINARY: return binary_expr(c, e);
    case PF_E_COND: return cond_expr(c, e);
    case PF_E_CAST: return cast_expr(c, e);
    case PF_E_CALL: return call_expr(c, e);
    case PF_E_BUILTIN: return builtin_expr(c, e);
    case PF_E_IMAGE_READ: return image_read(c, e);
    case PF_E_ARRAY_READ: return array_read(c, e);
    case PF_E_REDUCE: return reduce_expr(c, e);
    case PF_E_INDEX: break;
    }
    return pf_ic_fail(c, e->loc, "interpreter: unchecked expression");
}

