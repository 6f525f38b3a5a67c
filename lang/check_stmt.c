/* Checking statements of stages and helper functions: locals and local arrays (frame slots,
 * reused by sibling scopes), assignments and what may be assigned, image writes (which decide
 * whether a stage scatters), `for` loops and named loops, `sort` and `return`. */
#include "lang/check_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- locals ---- */

static void check_local_array(pf_checker *c, pf_stmt *s)
{
    s->len_expr = pf_check_typed(c, s->len_expr, PF_T_INT, "an array length");
    pf_value v = {0};
    int len = 1;
    if (pf_fold(c, s->len_expr, "the length of a local array", &v)) {
        if (v.i < 1 || v.i > PF_ARRAY_MAX)
            pf_check_error(c, s->len_expr->loc, "local array '%s' has length %d (must be 1 "
                           "to %d)", s->decl_name, (int)v.i, PF_ARRAY_MAX);
        else
            len = v.i;
    }
    if (s->decl_type == PF_T_BOOL)
        pf_check_error(c, s->loc, "arrays hold int or float values, not bool");
    if (s->value)
        pf_check_error(c, s->value->loc, "a local array cannot have an initializer "
                       "(it starts zeroed)");
    s->sym = pf_declare(c, PF_SYM_LOCAL_ARRAY, s->decl_name, s->name_loc, s->decl_type);
    s->sym->array_len = len;
    s->sym->slot = pf_alloc_slots(c, len);
}

static void check_decl(pf_checker *c, pf_stmt *s)
{
    if (s->len_expr) {
        check_local_array(c, s);
        return;
    }
    if (s->value) {
        char what[300];
        snprintf(what, sizeof what, "the initializer of '%s'", s->decl_name);
        s->value = pf_check_typed(c, s->value, s->decl_type, what);
    }
    /* Declared after its initializer: `float s = s;` reads no uninitialized variable. */
    s->sym = pf_declare(c, PF_SYM_LOCAL, s->decl_name, s->name_loc, s->decl_type);
    s->sym->slot = pf_alloc_slots(c, 1);
}

/* ---- assignments ---- */

static void image_write(pf_checker *c, pf_lvalue *lv, pf_symbol *s)
{
    pf_image_decl *img = s->image;
    lv->kind = PF_LV_IMAGE;
    if (c->ctx != PF_CTX_STAGE) {
        pf_check_error(c, lv->loc, "image '%s' cannot be written here (only stages write "
                       "images)", lv->name);
        return;
    }
    if (img->role == PF_IMAGE_INPUT) {
        pf_check_error(c, lv->loc, "input image '%s' cannot be written", lv->name);
        return;
    }
    if (lv->n_index != img->ndims) {
        pf_check_error(c, lv->loc, "image '%s' has %d dimension(s) but is indexed with %d",
                       lv->name, img->ndims, lv->n_index);
        return;
    }
    for (int i = 0; i < lv->n_index; i++) {
        lv->index[i] = pf_check_expr(c, lv->index[i]);
        pf_type t = lv->index[i]->type;
        if (t != PF_T_INT && t != PF_T_ERROR)
            pf_check_error(c, lv->index[i]->loc, "an image index must be int, not %s (use "
                           "int(...))", pf_type_name(t));
    }
    lv->scatter = !(s == c->stage->image && pf_at_own_coords(c->stage, lv->index, lv->n_index));
    if (lv->scatter)
        c->scatter = true;
    pf_note_write(c, img);
}

static void array_write(pf_checker *c, pf_lvalue *lv)
{
    lv->kind = PF_LV_ARRAY;
    if (lv->n_index != 1) {
        pf_check_error(c, lv->loc, "array '%s' takes one index, not %d", lv->name,
                       lv->n_index);
        return;
    }
    lv->index[0] = pf_check_typed(c, lv->index[0], PF_T_INT, "an array index");
}

/* Resolves an assignment target; returns the element type, or PF_T_ERROR. */
static pf_type check_lvalue(pf_checker *c, pf_lvalue *lv)
{
    pf_symbol *s = pf_lookup(c, lv->name);
    if (!s) {
        pf_report_unknown(c, lv->loc, "name", lv->name);
        return PF_T_ERROR;
    }
    lv->sym = s;
    switch (s->kind) {
    case PF_SYM_LOCAL:
        lv->kind = PF_LV_LOCAL;
        if (lv->n_index == 0)
            return s->type;
        pf_check_error(c, lv->loc, "local variable '%s' is not an array", lv->name);
        return PF_T_ERROR;
    case PF_SYM_LOCAL_ARRAY:
        if (lv->n_index == 0) {
            pf_check_error(c, lv->loc, "cannot assign to array '%s' as a whole (assign "
                           "%s[i])", lv->name, lv->name);
            return PF_T_ERROR;
        }
        array_write(c, lv);
        return s->type;
    case PF_SYM_IMAGE:
        if (lv->n_index == 0) {
            pf_check_error(c, lv->loc, "cannot assign to image '%s' as a whole", lv->name);
            return PF_T_ERROR;
        }
        image_write(c, lv, s);
        return PF_T_FLOAT;
    default:
        pf_check_error(c, lv->loc, "cannot assign to %s '%s'", pf_sym_kind_name(s->kind),
                       lv->name);
        return PF_T_ERROR;
    }
}

static void check_assign(pf_checker *c, pf_stmt *s)
{
    pf_type t = check_lvalue(c, &s->target);
    s->value = pf_check_expr(c, s->value);
    if (t == PF_T_ERROR)
        return;
    if (s->assign_op != PF_ASSIGN_SET && t == PF_T_BOOL) {
        pf_check_error(c, s->target.loc, "compound assignment needs an int or float target, "
                       "not bool");
        return;
    }
    char what[300];
    snprintf(what, sizeof what, "the value assigned to '%s'", s->target.name);
    s->value = pf_coerce(c, s->value, t, what);
}

/* ---- control flow ---- */

static void check_scoped(pf_checker *c, pf_stmt *s)
{
    int saved = c->next_slot;
    pf_scope_enter(c);
    pf_check_stmt(c, s);
    pf_scope_leave(c);
    c->next_slot = saved;  /* sibling scopes reuse the slots */
}

static void check_if(pf_checker *c, pf_stmt *s)
{
    s->cond = pf_check_typed(c, s->cond, PF_T_BOOL, "an 'if' condition");
    check_scoped(c, s->then_s);
    if (s->else_s)
        check_scoped(c, s->else_s);
}

static void register_named_loop(pf_checker *c, pf_stmt *s)
{
    if (c->ctx != PF_CTX_STAGE) {
        pf_check_error(c, s->loop_name_loc, "named loops ('as %s') are only allowed inside "
                       "stages", s->loop_name);
        return;
    }
    pf_name_entry *old = pf_map_get(&c->loop_names, s->loop_name);
    if (old) {
        pf_check_error(c, s->loop_name_loc, "loop name '%s' is already used at %d:%d",
                       s->loop_name, old->loc.line, old->loc.col);
        return;
    }
    pf_map_put(c, &c->loop_names, s->loop_name, NULL, s->loop_name_loc, 0);
    pf_loop_info li = {0};
    li.kind = PF_LOOP_FOR;
    li.name = s->loop_name;
    li.loc = s->loop_name_loc;
    li.stage = c->stage;
    li.stmt = s;
    li.depth = c->for_depth;
    s->loop_id = c->loops.n;
    PF_CPUSH(c, c->loops, pf_loop_info, li);
}

static void check_for(pf_checker *c, pf_stmt *s)
{
    s->lo = pf_check_typed(c, s->lo, PF_T_INT, "a loop bound");
    s->hi = pf_check_typed(c, s->hi, PF_T_INT, "a loop bound");
    if (s->step)
        s->step = pf_check_typed(c, s->step, PF_T_INT, "a loop step");
    c->for_depth++;
    s->loop_id = -1;
    if (s->loop_name)
        register_named_loop(c, s);
    int saved = c->next_slot;
    pf_scope_enter(c);
    s->sym = pf_declare(c, PF_SYM_LOOP_VAR, s->var_name, s->name_loc, PF_T_INT);
    s->sym->slot = pf_alloc_slots(c, 1);
    pf_check_stmt(c, s->then_s);
    pf_scope_leave(c);
    c->next_slot = saved;
    c->for_depth--;
}

static void check_sort(pf_checker *c, pf_stmt *s)
{
    pf_lvalue *lv = &s->target;
    pf_symbol *sym = pf_lookup(c, lv->name);
    s->value = pf_check_typed(c, s->value, PF_T_INT, "the count of 'sort'");
    if (!sym) {
        pf_report_unknown(c, lv->loc, "array", lv->name);
        return;
    }
    if (sym->kind != PF_SYM_LOCAL_ARRAY) {
        pf_check_error(c, lv->loc, "'sort' needs a local array, and '%s' is %s",
                       lv->name, pf_sym_kind_phrase(sym->kind));
        return;
    }
    lv->kind = PF_LV_ARRAY;
    lv->sym = sym;
}

static void check_return(pf_checker *c, pf_stmt *s)
{
    if (c->ctx != PF_CTX_FUNC) {
        pf_check_error(c, s->loc, "'return' is only allowed in a helper function");
        s->value = pf_check_expr(c, s->value);
        return;
    }
    s->value = pf_check_typed(c, s->value, c->func->ret, "the returned value");
}

static void check_block(pf_checker *c, pf_stmt *s)
{
    int saved = c->next_slot;
    pf_scope_enter(c);
    for (int i = 0; i < s->n_body; i++)
        pf_check_stmt(c, s->body[i]);
    pf_scope_leave(c);
    c->next_slot = saved;
}

void pf_check_stmt(pf_checker *c, pf_stmt *s)
{
    switch (s->kind) {
    case PF_S_BLOCK: check_block(c, s); break;
    case PF_S_DECL: check_decl(c, s); break;
    case PF_S_ASSIGN: check_assign(c, s); break;
    case PF_S_IF: check_if(c, s); break;
    case PF_S_FOR: check_for(c, s); break;
    case PF_S_SORT: check_sort(c, s); break;
    case PF_S_RETURN: check_return(c, s); break;
    }
}

/* Every path returns: the statement is a return, a block whose last statement returns, or an
 * if/else whose branches both return (docs/language.md Section 3). */
bool pf_stmt_returns(const pf_stmt *s)
{
    if (!s)
        return false;
    switch (s->kind) {
    case PF_S_RETURN: return true;
    case PF_S_BLOCK: return s->n_body > 0 && pf_stmt_returns(s->body[s->n_body - 1]);
    case PF_S_IF: return s->else_s && pf_stmt_returns(s->then_s) && pf_stmt_returns(s->else_s);
    default: return false;
    }
}
