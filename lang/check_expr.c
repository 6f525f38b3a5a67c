/* Checking expressions: name resolution, types with the implicit int->float conversion
 * (inserted as PF_E_CAST nodes with `implicit` set), builtins, reductions, image and array
 * reads. An expression whose checking failed gets PF_T_ERROR, and nothing is reported about
 * expressions built on it, so one mistake gives one message. */
#include "lang/check_internal.h"

#include "lang/builtins.h"

#include <stdio.h>
#include <string.h>

static pf_expr *implicit_cast(pf_checker *c, pf_expr *e)
{
    pf_expr *k = PF_NEW(c->arena, pf_expr);
    k->kind = PF_E_CAST;
    k->loc = e->loc;
    k->type = PF_T_FLOAT;
    k->implicit = true;
    k->a = e;
    return k;
}

pf_expr *pf_coerce(pf_checker *c, pf_expr *e, pf_type want, const char *what)
{
    if (e->type == PF_T_ERROR || want == PF_T_ERROR || e->type == want)
        return e;
    if (e->type == PF_T_INT && want == PF_T_FLOAT)
        return implicit_cast(c, e);
    pf_check_error(c, e->loc, "%s must be %s, not %s", what, pf_type_name(want),
                   pf_type_name(e->type));
    /* Marked failed, so that whatever is built on it is neither reported nor evaluated. */
    e->type = PF_T_ERROR;
    return e;
}

pf_expr *pf_check_typed(pf_checker *c, pf_expr *e, pf_type want, const char *what)
{
    return pf_coerce(c, pf_check_expr(c, e), want, what);
}

static bool is_numeric(pf_type t)
{
    return t == PF_T_INT || t == PF_T_FLOAT;
}

/* ---- names, reads ---- */

static void check_name(pf_checker *c, pf_expr *e)
{
    pf_symbol *s = pf_lookup(c, e->name);
    if (!s) {
        pf_report_unknown(c, e->loc, "name", e->name);
        return;
    }
    switch (s->kind) {
    case PF_SYM_IMAGE:
        pf_check_error(c, e->loc, "image '%s' must be indexed (%s[...])", e->name, e->name);
        return;
    case PF_SYM_CONST_ARRAY:
    case PF_SYM_LOCAL_ARRAY:
        pf_check_error(c, e->loc, "array '%s' must be indexed (%s[i])", e->name, e->name);
        return;
    case PF_SYM_FUNC:
        pf_check_error(c, e->loc, "function '%s' must be called", e->name);
        return;
    default:
        e->sym = s;
        e->type = s->type;
    }
}

bool pf_at_own_coords(const pf_stage *st, pf_expr *const *idx, int n)
{
    if (!st || n < st->n_vars)
        return false;
    for (int i = 0; i < st->n_vars; i++)
        if (idx[i]->kind != PF_E_NAME || idx[i]->sym != st->vars[i] || !st->vars[i])
            return false;
    return true;
}

/* Checks index expressions: each an int. Returns false if any failed. */
static bool check_indices(pf_checker *c, pf_expr **idx, int n, const char *what)
{
    bool ok = true;
    for (int i = 0; i < n; i++) {
        idx[i] = pf_check_expr(c, idx[i]);
        if (idx[i]->type == PF_T_ERROR) {
            ok = false;
        } else if (idx[i]->type != PF_T_INT) {
            pf_check_error(c, idx[i]->loc, "%s must be int, not %s (use int(...))", what,
                           pf_type_name(idx[i]->type));
            ok = false;
        }
    }
    return ok;
}

static void image_read(pf_checker *c, pf_expr *e, pf_symbol *s)
{
    pf_image_decl *img = s->image;
    e->kind = PF_E_IMAGE_READ;
    e->sym = s;
    if (c->ctx != PF_CTX_STAGE) {
        pf_check_error(c, e->loc, "image '%s' cannot be read here (only stages read images)",
                       e->name);
        return;
    }
    if (e->n_args != img->ndims) {
        pf_check_error(c, e->loc, "image '%s' has %d dimension(s) but is indexed with %d",
                       e->name, img->ndims, e->n_args);
        return;
    }
    if (!check_indices(c, e->args, e->n_args, "an image index"))
        return;
    e->type = PF_T_FLOAT;
    pf_note_read(c, img, e->loc);
    if (c->stage && s == c->stage->image && !pf_at_own_coords(c->stage, e->args, e->n_args) &&
        c->foreign_own_read.line == 0)
        c->foreign_own_read = e->loc;
}

static void array_read(pf_checker *c, pf_expr *e, pf_symbol *s)
{
    e->kind = PF_E_ARRAY_READ;
    e->sym = s;
    if (e->n_args != 1) {
        pf_check_error(c, e->loc, "array '%s' takes one index, not %d", e->name, e->n_args);
        return;
    }
    if (check_indices(c, e->args, 1, "an array index"))
        e->type = s->type;
}

static void check_index(pf_checker *c, pf_expr *e)
{
    pf_symbol *s = pf_lookup(c, e->name);
    if (!s) {
        pf_report_unknown(c, e->loc, "image or array", e->name);
        return;
    }
    if (s->kind == PF_SYM_IMAGE)
        image_read(c, e, s);
    else if (s->kind == PF_SYM_LOCAL_ARRAY || s->kind == PF_SYM_CONST_ARRAY)
        array_read(c, e, s);
    else
        pf_check_error(c, e->loc, "%s '%s' is not an array or image", pf_sym_kind_name(s->kind),
                       e->name);
}

/* ---- operators ---- */

/* The common type of two numeric operands, converting an int one to float. */
static pf_type unify(pf_checker *c, pf_expr **a, pf_expr **b)
{
    if ((*a)->type == PF_T_FLOAT || (*b)->type == PF_T_FLOAT) {
        *a = pf_coerce(c, *a, PF_T_FLOAT, "an operand");
        *b = pf_coerce(c, *b, PF_T_FLOAT, "an operand");
        return PF_T_FLOAT;
    }
    return PF_T_INT;
}

static void check_unary(pf_checker *c, pf_expr *e)
{
    e->a = pf_check_expr(c, e->a);
    pf_type t = e->a->type;
    if (t == PF_T_ERROR)
        return;
    if (e->op == PF_OP_NOT && t != PF_T_BOOL)
        pf_check_error(c, e->loc, "operator '!' needs a bool operand, not %s", pf_type_name(t));
    else if (e->op == PF_OP_NEG && !is_numeric(t))
        pf_check_error(c, e->loc, "operator '-' needs an int or float operand, not %s",
                       pf_type_name(t));
    else
        e->type = t;
}

static void check_arith(pf_checker *c, pf_expr *e, pf_type ta, pf_type tb)
{
    if (!is_numeric(ta) || !is_numeric(tb)) {
        pf_check_error(c, e->loc, "operator '%s' needs int or float operands, not %s and %s",
                       pf_op_name(e->op), pf_type_name(ta), pf_type_name(tb));
        return;
    }
    if (e->op == PF_OP_MOD && (ta != PF_T_INT || tb != PF_T_INT)) {
        pf_check_error(c, e->loc, "operator '%%' needs int operands, not %s and %s",
                       pf_type_name(ta), pf_type_name(tb));
        return;
    }
    pf_type t = unify(c, &e->a, &e->b);
    bool cmp = e->op >= PF_OP_LT && e->op <= PF_OP_NE;
    e->type = cmp ? PF_T_BOOL : t;
}

static void check_binary(pf_checker *c, pf_expr *e)
{
    e->a = pf_check_expr(c, e->a);
    e->b = pf_check_expr(c, e->b);
    pf_type ta = e->a->type, tb = e->b->type;
    if (ta == PF_T_ERROR || tb == PF_T_ERROR)
        return;
    if (e->op == PF_OP_AND || e->op == PF_OP_OR) {
        if (ta != PF_T_BOOL || tb != PF_T_BOOL)
            pf_check_error(c, e->loc, "operator '%s' needs bool operands, not %s and %s",
                           pf_op_name(e->op), pf_type_name(ta), pf_type_name(tb));
        else
            e->type = PF_T_BOOL;
        return;
    }
    if ((e->op == PF_OP_EQ || e->op == PF_OP_NE) && (ta == PF_T_BOOL || tb == PF_T_BOOL)) {
        if (ta != tb)
            pf_check_error(c, e->loc, "operator '%s' cannot compare %s with %s",
                           pf_op_name(e->op), pf_type_name(ta), pf_type_name(tb));
        else
            e->type = PF_T_BOOL;
        return;
    }
    check_arith(c, e, ta, tb);
}

static void check_cond(pf_checker *c, pf_expr *e)
{
    e->a = pf_check_typed(c, e->a, PF_T_BOOL, "the condition of '?:'");
    e->b = pf_check_expr(c, e->b);
    e->c = pf_check_expr(c, e->c);
    pf_type tb = e->b->type, tc = e->c->type;
    if (e->a->type == PF_T_ERROR || tb == PF_T_ERROR || tc == PF_T_ERROR)
        return;
    if (is_numeric(tb) && is_numeric(tc))
        e->type = unify(c, &e->b, &e->c);
    else if (tb == tc)
        e->type = tb;
    else
        pf_check_error(c, e->loc, "the branches of '?:' have different types (%s and %s)",
                       pf_type_name(tb), pf_type_name(tc));
}

static void check_cast(pf_checker *c, pf_expr *e)
{
    pf_type to = e->type;
    e->type = PF_T_ERROR;
    e->a = pf_check_expr(c, e->a);
    if (e->a->type != PF_T_ERROR)
        e->type = to;
}

/* ---- calls ---- */

static bool check_arity(pf_checker *c, pf_expr *e, int lo, int hi)
{
    if (e->n_args >= lo && e->n_args <= hi)
        return true;
    if (lo == hi)
        pf_check_error(c, e->loc, "'%s' takes %d argument(s), not %d", e->name, lo, e->n_args);
    else
        pf_check_error(c, e->loc, "'%s' takes %d to %d arguments, not %d", e->name, lo, hi,
                       e->n_args);
    return false;
}

static bool check_args(pf_checker *c, pf_expr *e)
{
    bool ok = true;
    for (int i = 0; i < e->n_args; i++) {
        e->args[i] = pf_check_expr(c, e->args[i]);
        ok = ok && e->args[i]->type != PF_T_ERROR;
    }
    return ok;
}

static void builtin_median(pf_checker *c, pf_expr *e)
{
    pf_expr *v = e->args[0];
    pf_symbol *s = v->kind == PF_E_NAME ? pf_lookup(c, v->name) : NULL;
    if (v->kind == PF_E_NAME && !s) {
        pf_report_unknown(c, v->loc, "name", v->name);
        return;
    }
    if (!s || s->kind != PF_SYM_LOCAL_ARRAY) {
        pf_check_error(c, v->loc, "the first argument of 'median' must be a local array");
        return;
    }
    v->sym = s;
    v->type = s->type;
    e->args[1] = pf_check_typed(c, e->args[1], PF_T_INT, "the count of 'median'");
    if (e->args[1]->type == PF_T_INT)
        e->type = s->type;
}

static void builtin_typed(pf_checker *c, pf_expr *e, const pf_builtin_info *info)
{
    if (!check_args(c, e))
        return;
    pf_type want = PF_T_FLOAT;
    if (info->kind == PF_BK_NUMERIC) {
        want = PF_T_INT;
        for (int i = 0; i < e->n_args; i++)
            if (e->args[i]->type == PF_T_FLOAT)
                want = PF_T_FLOAT;
    } else if (info->kind == PF_BK_NOISE) {
        want = PF_T_INT;
    }
    bool ok = true;
    for (int i = 0; i < e->n_args; i++) {
        pf_type t = e->args[i]->type;
        if (t == want || (t == PF_T_INT && want == PF_T_FLOAT)) {
            e->args[i] = pf_coerce(c, e->args[i], want, "an argument");
        } else {
            pf_check_error(c, e->args[i]->loc, "argument %d of '%s' must be %s, not %s", i + 1,
                           info->name, info->kind == PF_BK_NUMERIC ? "int or float"
                                                                   : pf_type_name(want),
                           pf_type_name(t));
            ok = false;
        }
    }
    if (ok)
        e->type = info->kind == PF_BK_NOISE ? PF_T_FLOAT : want;
}

static void check_builtin(pf_checker *c, pf_expr *e, pf_builtin b)
{
    const pf_builtin_info *info = pf_builtin_get(b);
    e->kind = PF_E_BUILTIN;
    e->builtin = b;
    if (!check_arity(c, e, info->min_args, info->max_args))
        return;
    if (info->kind == PF_BK_MEDIAN)
        builtin_median(c, e);
    else
        builtin_typed(c, e, info);
}

static void check_func_call(pf_checker *c, pf_expr *e, pf_symbol *s)
{
    pf_func *f = s->func;
    e->sym = s;
    if (!check_arity(c, e, f->n_params, f->n_params))
        return;
    if (!check_args(c, e))
        return;
    bool ok = true;
    for (int i = 0; i < e->n_args; i++) {
        pf_type want = f->param_types[i];
        char what[300];
        snprintf(what, sizeof what, "argument %d of '%s'", i + 1, f->name);
        e->args[i] = pf_coerce(c, e->args[i], want, what);
        ok = ok && (e->args[i]->type == want);
    }
    if (c->ctx == PF_CTX_FUNC && c->func) {
        pf_call_edge edge = {c->func_index, s->index, e->loc};
        PF_CPUSH(c, c->calls, pf_call_edge, edge);
    }
    if (ok)
        e->type = f->ret;
}

static void check_call(pf_checker *c, pf_expr *e)
{
    int b = pf_builtin_lookup(e->name);
    if (b >= 0) {
        check_builtin(c, e, (pf_builtin)b);
        return;
    }
    if (strcmp(e->name, "sum") == 0) {
        pf_check_error(c, e->loc, "'sum' needs a range: sum(e, i = lo .. hi)");
        return;
    }
    if (strcmp(e->name, "sort") == 0) {
        pf_check_error(c, e->loc, "'sort' is a statement (sort(v, n);), not a function");
        return;
    }
    pf_symbol *s = pf_lookup(c, e->name);
    if (!s)
        pf_report_unknown(c, e->loc, "function", e->name);
    else if (s->kind != PF_SYM_FUNC)
        pf_check_error(c, e->loc, "%s '%s' is not a function", pf_sym_kind_name(s->kind),
                       e->name);
    else
        check_func_call(c, e, s);
}

/* sum/min/max(body, var = lo .. hi): var is a new int scoped to the body. */
static void check_reduce(pf_checker *c, pf_expr *e)
{
    e->a = pf_check_typed(c, e->a, PF_T_INT, "the bound of a reduction");
    e->b = pf_check_typed(c, e->b, PF_T_INT, "the bound of a reduction");
    int saved = c->next_slot;
    pf_scope_enter(c);
    e->sym = pf_declare(c, PF_SYM_LOOP_VAR, e->name, e->var_loc, PF_T_INT);
    e->sym->slot = pf_alloc_slots(c, 1);
    e->args[0] = pf_check_expr(c, e->args[0]);
    pf_scope_leave(c);
    c->next_slot = saved;
    pf_type t = e->args[0]->type;
    if (t == PF_T_ERROR || e->a->type == PF_T_ERROR || e->b->type == PF_T_ERROR)
        return;
    if (!is_numeric(t)) {
        pf_check_error(c, e->args[0]->loc, "a reduction needs an int or float expression, "
                       "not %s", pf_type_name(t));
        return;
    }
    e->type = t;
}

pf_expr *pf_check_expr(pf_checker *c, pf_expr *e)
{
    switch (e->kind) {
    case PF_E_INT: e->type = PF_T_INT; break;
    case PF_E_FLOAT: e->type = PF_T_FLOAT; break;
    case PF_E_BOOL: e->type = PF_T_BOOL; break;
    case PF_E_NAME: check_name(c, e); break;
    case PF_E_UNARY: check_unary(c, e); break;
    case PF_E_BINARY: check_binary(c, e); break;
    case PF_E_COND: check_cond(c, e); break;
    case PF_E_CAST:
        if (e->implicit)
            return e;  /* already checked (a pass ran twice over it) */
        check_cast(c, e);
        break;
    case PF_E_CALL: check_call(c, e); break;
    case PF_E_INDEX: check_index(c, e); break;
    case PF_E_REDUCE: check_reduce(c, e); break;
    case PF_E_BUILTIN:
    case PF_E_IMAGE_READ:
    case PF_E_ARRAY_READ:
        pf_die("expression checked twice");
    }
    return e;
}
