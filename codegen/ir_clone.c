/* IR copying with renaming (see ir_clone.h). */
#include "codegen/ir_clone.h"

#include "base/arena.h"
#include "codegen/ir_simplify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ir_subst_init(ir_subst *s, const ir_func *f)
{
    /* Room for variables created while the substitution is in use. */
    s->n = f->n_vars * 4 + 64;
    s->to = pf_xcalloc((size_t)s->n, sizeof *s->to);
    s->arr = pf_xcalloc((size_t)s->n, sizeof *s->arr);
}

void ir_subst_free(ir_subst *s)
{
    free(s->to);
    free(s->arr);
}

static void grow(ir_subst *s, int id)
{
    if (id < s->n)
        return;
    int n = id * 2 + 64;
    s->to = pf_xrealloc(s->to, sizeof *s->to * (size_t)n);
    s->arr = pf_xrealloc(s->arr, sizeof *s->arr * (size_t)n);
    memset(s->to + s->n, 0, sizeof *s->to * (size_t)(n - s->n));
    memset(s->arr + s->n, 0, sizeof *s->arr * (size_t)(n - s->n));
    s->n = n;
}

static ir_var *map_array(const ir_subst *s, ir_var *v)
{
    return (v->id < s->n && s->arr[v->id]) ? s->arr[v->id] : v;
}

ir_expr *ir_subst_expr(ir_func *f, const ir_subst *s, ir_expr *e)
{
    if (!e)
        return NULL;
    switch (e->kind) {
    case IR_CONST:
        return e;
    case IR_VARREF:
        if (e->var->kind == IR_VAR_ARRAY) {  /* median's array operand */
            ir_var *a = map_array(s, e->var);
            if (a == e->var)
                return e;
            ir_expr *r = pf_arena_memdup(f->arena, e, sizeof *e);
            r->var = a;
            return r;
        }
        return (e->var->id < s->n && s->to[e->var->id]) ? s->to[e->var->id] : e;
    case IR_BIN:
        return irf_bin(f, e->op, ir_subst_expr(f, s, e->a), ir_subst_expr(f, s, e->b));
    case IR_UN:
        return irf_un(f, e->op, ir_subst_expr(f, s, e->a));
    case IR_SELECT:
        return irf_select(f, ir_subst_expr(f, s, e->a), ir_subst_expr(f, s, e->b),
                          ir_subst_expr(f, s, e->c));
    case IR_CAST:
        return irf_cast(f, e->type, ir_subst_expr(f, s, e->a));
    case IR_ALOAD:
        return ir_aload(f, map_array(s, e->var), ir_subst_expr(f, s, e->a));
    case IR_LOAD:
    case IR_INTERP:
    case IR_CALL: {
        ir_expr **args = pf_arena_alloc(f->arena, sizeof *args * (size_t)(e->n_args + 1));
        for (int i = 0; i < e->n_args; i++)
            args[i] = ir_subst_expr(f, s, e->args[i]);
        return ir_with_args(f, e, args, e->clamp_mask);
    }
    }
    return e;
}

static ir_var *fresh(ir_func *f, ir_subst *sub, ir_var *v)
{
    /* Strip the "_<id>" suffix ir_var_new added, to keep names readable. */
    char base[64];
    snprintf(base, sizeof base, "%s", v->name);
    char *us = strrchr(base, '_');
    if (us)
        *us = '\0';
    ir_var *n = ir_var_new(f, base, v->type, v->kind);
    n->array_len = v->array_len;
    n->const_init = v->const_init;
    n->positive = v->positive;
    grow(sub, v->id);
    if (v->kind == IR_VAR_ARRAY)
        sub->arr[v->id] = n;
    else
        sub->to[v->id] = ir_ref(f, n);
    return n;
}

static ir_stmt *copy(ir_func *f, const ir_stmt *s)
{
    return pf_arena_memdup(f->arena, s, sizeof *s);
}

ir_stmt *ir_clone_stmt(ir_func *f, ir_subst *sub, const ir_stmt *s)
{
    if (!s)
        return NULL;
    ir_stmt *r = copy(f, s);
    switch (s->kind) {
    case IR_S_BLOCK:
        r->body = pf_arena_alloc(f->arena, sizeof *r->body * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->body[i] = ir_clone_stmt(f, sub, s->body[i]);
        return r;
    case IR_S_LET:
    case IR_S_DECL:
        r->value = ir_subst_expr(f, sub, s->value);
        r->var = fresh(f, sub, s->var);
        return r;
    case IR_S_ASSIGN:
        r->value = ir_subst_expr(f, sub, s->value);
        r->var = ir_subst_expr(f, sub, ir_ref(f, s->var))->var;
        return r;
    case IR_S_ARRAY_DECL:
        r->var = fresh(f, sub, s->var);
        return r;
    case IR_S_ARRAY_STORE:
    case IR_S_SORT:
        r->var = map_array(sub, s->var);
        r->index = ir_subst_expr(f, sub, s->index);
        r->value = ir_subst_expr(f, sub, s->value);
        return r;
    case IR_S_STORE:
        r->idx = pf_arena_alloc(f->arena, sizeof *r->idx * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->idx[i] = ir_subst_expr(f, sub, s->idx[i]);
        r->value = ir_subst_expr(f, sub, s->value);
        return r;
    case IR_S_FOR:
        r->lo = ir_subst_expr(f, sub, s->lo);
        r->hi = ir_subst_expr(f, sub, s->hi);
        r->step = ir_subst_expr(f, sub, s->step);
        r->align = ir_subst_expr(f, sub, s->align);
        r->var = fresh(f, sub, s->var);
        r->then_s = ir_clone_stmt(f, sub, s->then_s);
        return r;
    case IR_S_IF:
        r->cond = ir_subst_expr(f, sub, s->cond);
        r->then_s = ir_clone_stmt(f, sub, s->then_s);
        r->else_s = ir_clone_stmt(f, sub, s->else_s);
        return r;
    case IR_S_ALLOC:
        if (s->window) {
            r->window = pf_arena_alloc(f->arena, sizeof *r->window * (size_t)(2 * s->buf->ndims));
            for (int i = 0; i < 2 * s->buf->ndims; i++)
                r->window[i] = ir_subst_expr(f, sub, s->window[i]);
        }
        r->then_s = ir_clone_stmt(f, sub, s->then_s);
        return r;
    case IR_S_RTCALL:
        r->args = pf_arena_alloc(f->arena, sizeof *r->args * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->args[i] = ir_subst_expr(f, sub, s->args[i]);
        return r;
    case IR_S_COMMENT:
    case IR_S_BARRIER:
        return r;
    }
    return r;
}

ir_stmt *ir_rewrite_loops(ir_func *f, const ir_stmt *s, ir_loop_rewrite rewrite, void *ctx)
{
    if (!s)
        return NULL;
    if (s->kind == IR_S_FOR) {
        ir_stmt *t = rewrite(ctx, s);
        if (t)
            return t;
    }
    ir_stmt *r = copy(f, s);
    switch (s->kind) {
    case IR_S_BLOCK:
        r->body = pf_arena_alloc(f->arena, sizeof *r->body * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->body[i] = ir_rewrite_loops(f, s->body[i], rewrite, ctx);
        return r;
    case IR_S_FOR:
    case IR_S_ALLOC:
        r->then_s = ir_rewrite_loops(f, s->then_s, rewrite, ctx);
        return r;
    case IR_S_IF:
        r->then_s = ir_rewrite_loops(f, s->then_s, rewrite, ctx);
        r->else_s = ir_rewrite_loops(f, s->else_s, rewrite, ctx);
        return r;
    default:
        return r;
    }
}

void ir_defined_vars(const ir_stmt *s, char *mark)
{
    if (!s)
        return;
    switch (s->kind) {
    case IR_S_LET:
    case IR_S_DECL:
    case IR_S_ARRAY_DECL:
    case IR_S_FOR:
        mark[s->var->id] = 1;
        break;
    default:
        break;
    }
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        ir_defined_vars(s->body[i], mark);
    if (s->kind != IR_S_BLOCK) {
        ir_defined_vars(s->then_s, mark);
        ir_defined_vars(s->else_s, mark);
    }
}

/* Whether s contains a loop for which is(loop) holds. */
static bool has_loop_where(const ir_stmt *s, bool (*is)(const ir_stmt *))
{
    if (!s)
        return false;
    if (s->kind == IR_S_FOR && is(s))
        return true;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        if (has_loop_where(s->body[i], is))
            return true;
    return s->kind != IR_S_BLOCK &&
           (has_loop_where(s->then_s, is) || has_loop_where(s->else_s, is));
}

static bool any_loop(const ir_stmt *s)
{
    (void)s;
    return true;
}

static bool unrolled_loop(const ir_stmt *s)
{
    return s->unroll > 1;
}

bool ir_has_loop(const ir_stmt *s)
{
    return has_loop_where(s, any_loop);
}

bool ir_has_unroll(const ir_stmt *s)
{
    return has_loop_where(s, unrolled_loop);
}

static bool parallel_loop(const ir_stmt *s)
{
    return s->loop_kind == IR_LOOP_PARALLEL;
}

bool ir_has_parallel(const ir_stmt *s)
{
    return has_loop_where(s, parallel_loop);
}

int ir_loop_depth(const ir_stmt *s)
{
    if (!s)
        return 0;
    int d = 0;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++) {
        int k = ir_loop_depth(s->body[i]);
        d = k > d ? k : d;
    }
    if (s->kind != IR_S_BLOCK) {
        int a = ir_loop_depth(s->then_s), b = ir_loop_depth(s->else_s);
        d = a > b ? a : b;
    }
    return d + (s->kind == IR_S_FOR);
}
