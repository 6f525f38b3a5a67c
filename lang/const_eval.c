/* Evaluating constant and shape expressions (extents, `over` ranges, const folding) with the
 * language's exact semantics (builtins.h). Pipeline scalars are evaluated through their
 * initializers; the checker bounds how deeply they refer to each other. */
#include "lang/check_internal.h"

#include "lang/builtins.h"

/* Deeper scalar-to-scalar references than the checker allows are refused, not followed. */
#define EVAL_SCALAR_DEPTH_MAX (PF_SHAPE_CHAIN_MAX + 4)

static int eval_name(const pf_expr *e, const pf_param_values *params, const int32_t *sizes,
                     int depth, pf_value *out)
{
    const pf_symbol *s = e->sym;
    if (!s)
        return -1;
    switch (s->kind) {
    case PF_SYM_CONST:
        *out = s->value;
        return 0;
    case PF_SYM_PARAM:
        if (!params || s->index < 0 || s->index >= params->n)
            return -1;
        *out = params->values[s->index];
        return 0;
    case PF_SYM_SIZE:
        if (!sizes)
            return -1;
        out->i = sizes[s->index];
        return 0;
    case PF_SYM_SCALAR:
        if (!s->shape || !s->init || depth >= EVAL_SCALAR_DEPTH_MAX)
            return -1;
        return pf_eval_expr_in(s->init, params, sizes, depth + 1, out);
    default:
        return -1;
    }
}

static int eval_builtin(const pf_expr *e, const pf_param_values *params, const int32_t *sizes,
                        int depth, pf_value *out)
{
    pf_value args[4];
    if (e->builtin == PF_B_MEDIAN || e->n_args < 1 || e->n_args > 4)
        return -1;
    for (int i = 0; i < e->n_args; i++)
        if (pf_eval_expr_in(e->args[i], params, sizes, depth, &args[i]) != 0)
            return -1;
    *out = pf_eval_builtin(e->builtin, e->type, e->n_args, args);
    return 0;
}

static int eval_array_read(const pf_expr *e, const pf_param_values *params,
                           const int32_t *sizes, int depth, pf_value *out)
{
    const pf_symbol *s = e->sym;
    pf_value idx;
    if (!s || s->kind != PF_SYM_CONST_ARRAY || s->array_len < 1 || e->n_args != 1 ||
        pf_eval_expr_in(e->args[0], params, sizes, depth, &idx) != 0)
        return -1;
    int i = idx.i < 0 ? 0 : idx.i >= s->array_len ? s->array_len - 1 : idx.i;
    *out = s->array_values[i];
    return 0;
}

/* The checker's invariants on operand types; a tree that breaks them (one with errors) is
 * refused rather than misread (a union member read as another is undefined). */
static bool operand_types_ok(const pf_expr *e)
{
    if (e->kind == PF_E_COND || (e->kind == PF_E_UNARY && e->op == PF_OP_NOT))
        return e->a->type == PF_T_BOOL;
    if (e->kind == PF_E_BINARY)
        return e->b && e->a->type == e->b->type;
    return true;
}

static int eval_operator(const pf_expr *e, const pf_param_values *params, const int32_t *sizes,
                         int depth, pf_value *out)
{
    pf_value a, b;
    if (!e->a || pf_eval_expr_in(e->a, params, sizes, depth, &a) != 0)
        return -1;
    if (!operand_types_ok(e))
        return -1;
    switch (e->kind) {
    case PF_E_UNARY:
        *out = pf_eval_unary(e->op, e->a->type, a);
        return 0;
    case PF_E_CAST:
        *out = pf_eval_cast(e->type, e->a->type, a);
        return 0;
    case PF_E_BINARY:
        if (!e->b || pf_eval_expr_in(e->b, params, sizes, depth, &b) != 0)
            return -1;
        *out = pf_eval_binary(e->op, e->a->type, a, b);
        return 0;
    case PF_E_COND: {
        const pf_expr *pick = a.b ? e->b : e->c;
        return pick ? pf_eval_expr_in(pick, params, sizes, depth, out) : -1;
    }
    default:
        return -1;
    }
}

int pf_eval_expr_in(const pf_expr *e, const pf_param_values *params, const int32_t *sizes,
                    int depth, pf_value *out)
{
    pf_value zero = {0};
    *out = zero;
    if (!e || e->type == PF_T_ERROR)
        return -1;
    switch (e->kind) {
    case PF_E_INT: out->i = e->ival; return 0;
    case PF_E_FLOAT: out->f = e->fval; return 0;
    case PF_E_BOOL: out->b = e->bval; return 0;
    case PF_E_NAME: return eval_name(e, params, sizes, depth, out);
    case PF_E_UNARY: case PF_E_BINARY: case PF_E_COND: case PF_E_CAST:
        return eval_operator(e, params, sizes, depth, out);
    case PF_E_BUILTIN: return eval_builtin(e, params, sizes, depth, out);
    case PF_E_ARRAY_READ: return eval_array_read(e, params, sizes, depth, out);
    default: return -1;
    }
}

int pf_eval_const_expr(const pf_expr *e, const pf_param_values *params, const int32_t *sizes,
                       pf_value *out)
{
    return pf_eval_expr_in(e, params, sizes, 0, out);
}
