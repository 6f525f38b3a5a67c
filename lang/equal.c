/* Structural equality of programs, for round-trip tests: locations are ignored, and so is what
 * checking adds (implicit casts, the resolved forms of INDEX and CALL), so a checked program
 * equals its own reparsed printout. Floats compare bit for bit. */
#include "lang/lang.h"

#include <string.h>

static bool str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static const pf_expr *skip_implicit(const pf_expr *e)
{
    while (e && e->kind == PF_E_CAST && e->implicit)
        e = e->a;
    return e;
}

/* The parsed kind a checked kind came from. */
static pf_expr_kind parsed_kind(pf_expr_kind k)
{
    if (k == PF_E_IMAGE_READ || k == PF_E_ARRAY_READ)
        return PF_E_INDEX;
    if (k == PF_E_BUILTIN)
        return PF_E_CALL;
    return k;
}

static const char *expr_name(const pf_expr *e)
{
    if (e->name)
        return e->name;
    if (e->kind == PF_E_BUILTIN)
        return pf_builtin_name(e->builtin);
    return e->sym ? e->sym->name : NULL;
}

static bool expr_eq(const pf_expr *a, const pf_expr *b);

static bool exprs_eq(pf_expr *const *a, pf_expr *const *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!expr_eq(a[i], b[i]))
            return false;
    return true;
}

static bool leaf_eq(const pf_expr *a, const pf_expr *b)
{
    switch (a->kind) {
    case PF_E_INT: return a->ival == b->ival;
    case PF_E_FLOAT: return memcmp(&a->fval, &b->fval, sizeof a->fval) == 0;
    case PF_E_BOOL: return a->bval == b->bval;
    default: return str_eq(expr_name(a), expr_name(b));
    }
}

static bool expr_eq(const pf_expr *a, const pf_expr *b)
{
    a = skip_implicit(a);
    b = skip_implicit(b);
    if (!a || !b)
        return a == b;
    if (parsed_kind(a->kind) != parsed_kind(b->kind))
        return false;
    switch (a->kind) {
    case PF_E_INT: case PF_E_FLOAT: case PF_E_BOOL: case PF_E_NAME:
        return leaf_eq(a, b);
    case PF_E_UNARY: return a->op == b->op && expr_eq(a->a, b->a);
    case PF_E_BINARY: return a->op == b->op && expr_eq(a->a, b->a) && expr_eq(a->b, b->b);
    case PF_E_COND: return expr_eq(a->a, b->a) && expr_eq(a->b, b->b) && expr_eq(a->c, b->c);
    case PF_E_CAST: return a->type == b->type && expr_eq(a->a, b->a);
    case PF_E_REDUCE:
        return a->reduce_op == b->reduce_op && str_eq(a->name, b->name) &&
               expr_eq(a->a, b->a) && expr_eq(a->b, b->b) && a->n_args == b->n_args &&
               exprs_eq(a->args, b->args, a->n_args);
    default:  /* CALL, BUILTIN, INDEX, IMAGE_READ, ARRAY_READ */
        return leaf_eq(a, b) && a->n_args == b->n_args && exprs_eq(a->args, b->args, a->n_args);
    }
}

static bool stmt_eq(const pf_stmt *a, const pf_stmt *b);

static bool lvalue_eq(const pf_lvalue *a, const pf_lvalue *b)
{
    const char *na = a->name ? a->name : a->sym ? a->sym->name : NULL;
    const char *nb = b->name ? b->name : b->sym ? b->sym->name : NULL;
    return str_eq(na, nb) && a->n_index == b->n_index && exprs_eq(a->index, b->index, a->n_index);
}

static bool stmt_eq(const pf_stmt *a, const pf_stmt *b)
{
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case PF_S_BLOCK:
        if (a->n_body != b->n_body)
            return false;
        for (int i = 0; i < a->n_body; i++)
            if (!stmt_eq(a->body[i], b->body[i]))
                return false;
        return true;
    case PF_S_DECL:
        return a->decl_type == b->decl_type && str_eq(a->decl_name, b->decl_name) &&
               expr_eq(a->len_expr, b->len_expr) && expr_eq(a->value, b->value);
    case PF_S_ASSIGN:
        return a->assign_op == b->assign_op && lvalue_eq(&a->target, &b->target) &&
               expr_eq(a->value, b->value);
    case PF_S_IF:
        return expr_eq(a->cond, b->cond) && stmt_eq(a->then_s, b->then_s) &&
               stmt_eq(a->else_s, b->else_s);
    case PF_S_FOR:
        return str_eq(a->var_name, b->var_name) && str_eq(a->loop_name, b->loop_name) &&
               expr_eq(a->lo, b->lo) && expr_eq(a->hi, b->hi) && expr_eq(a->step, b->step) &&
               stmt_eq(a->then_s, b->then_s);
    case PF_S_SORT: return lvalue_eq(&a->target, &b->target) && expr_eq(a->value, b->value);
    case PF_S_RETURN: return expr_eq(a->value, b->value);
    }
    return false;
}

static bool image_eq(const pf_image_decl *a, const pf_image_decl *b)
{
    return str_eq(a->name, b->name) && a->role == b->role && a->ndims == b->ndims &&
           exprs_eq(a->extents, b->extents, a->ndims) && a->boundary == b->boundary &&
           expr_eq(a->boundary_value, b->boundary_value);
}

static bool images_eq(pf_image_decl *const *a, pf_image_decl *const *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!image_eq(a[i], b[i]))
            return false;
    return true;
}

static bool ranges_eq(const pf_range *a, const pf_range *b, int n)
{
    if (!a || !b)
        return a == b;
    for (int i = 0; i < n; i++)
        if (!expr_eq(a[i].lo, b[i].lo) || !expr_eq(a[i].hi, b[i].hi) ||
            !expr_eq(a[i].step, b[i].step))
            return false;
    return true;
}

static bool stage_eq(const pf_stage *a, const pf_stage *b)
{
    if (!str_eq(a->name, b->name) || !str_eq(a->image_name, b->image_name) ||
        a->n_vars != b->n_vars)
        return false;
    for (int i = 0; i < a->n_vars; i++)
        if (!str_eq(a->var_names[i], b->var_names[i]))
            return false;
    return ranges_eq(a->over, b->over, a->n_vars) && stmt_eq(a->body, b->body);
}

static bool item_eq(const pf_item *a, const pf_item *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case PF_ITEM_IMAGE: return image_eq(a->image, b->image);
    case PF_ITEM_SCALAR:
        return a->scalar_type == b->scalar_type && str_eq(a->scalar_name, b->scalar_name) &&
               expr_eq(a->scalar_init, b->scalar_init);
    case PF_ITEM_STAGE: return stage_eq(a->stage, b->stage);
    }
    return false;
}

static bool func_eq(const pf_func *a, const pf_func *b)
{
    if (!str_eq(a->name, b->name) || a->ret != b->ret || a->n_params != b->n_params)
        return false;
    for (int i = 0; i < a->n_params; i++)
        if (a->param_types[i] != b->param_types[i] ||
            !str_eq(a->param_names[i], b->param_names[i]))
            return false;
    return stmt_eq(a->body, b->body);
}

static bool const_eq(const pf_const_decl *a, const pf_const_decl *b)
{
    return str_eq(a->name, b->name) && a->type == b->type && expr_eq(a->len_expr, b->len_expr) &&
           a->n_init == b->n_init && exprs_eq(a->init, b->init, a->n_init);
}

static bool param_eq(const pf_param_decl *a, const pf_param_decl *b)
{
    return str_eq(a->name, b->name) && a->type == b->type && expr_eq(a->init, b->init);
}

static bool decl_eq(const pf_program *a, const pf_program *b, int i)
{
    const pf_decl_ref *ra = &a->decls[i], *rb = &b->decls[i];
    if (ra->kind != rb->kind)
        return false;
    switch (ra->kind) {
    case PF_DECL_PARAM: return param_eq(a->params[ra->index], b->params[rb->index]);
    case PF_DECL_CONST: return const_eq(a->consts[ra->index], b->consts[rb->index]);
    case PF_DECL_FUNC: return func_eq(a->funcs[ra->index], b->funcs[rb->index]);
    case PF_DECL_PIPELINE: return true;  /* compared below */
    }
    return false;
}

static bool pipeline_eq(const pf_program *a, const pf_program *b)
{
    if (!str_eq(a->name, b->name) || a->n_inputs != b->n_inputs ||
        a->n_outputs != b->n_outputs || a->n_items != b->n_items)
        return false;
    if (!images_eq(a->inputs, b->inputs, a->n_inputs) ||
        !images_eq(a->outputs, b->outputs, a->n_outputs))
        return false;
    for (int i = 0; i < a->n_items; i++)
        if (!item_eq(a->items[i], b->items[i]))
            return false;
    return true;
}

bool pf_program_equal(const pf_program *a, const pf_program *b)
{
    if (a->n_decls != b->n_decls || a->n_params != b->n_params ||
        a->n_consts != b->n_consts || a->n_funcs != b->n_funcs)
        return false;
    for (int i = 0; i < a->n_decls; i++)
        if (!decl_eq(a, b, i))
            return false;
    return pipeline_eq(a, b);
}
