/* Visiting image reads with the variables in scope, and counting the nodes of inlined code
 * (see walk.h). */
#include "lang/walk.h"

#include "lang/lang.h"

void pf_visit_reads_expr(const pf_expr *e, const pf_read_visitor *v)
{
    if (!e)
        return;
    pf_visit_reads_expr(e->a, v);  /* a reduction's bounds are outside its scope */
    pf_visit_reads_expr(e->b, v);
    pf_visit_reads_expr(e->c, v);
    if (e->kind == PF_E_REDUCE && v->enter)
        v->enter(v->ctx, e->sym, e->a, e->b);
    if (e->kind == PF_E_IMAGE_READ)
        v->read(v->ctx, e);
    for (int i = 0; i < e->n_args; i++)
        pf_visit_reads_expr(e->args[i], v);
    if (e->kind == PF_E_REDUCE && v->leave)
        v->leave(v->ctx);
}

void pf_visit_reads_stmt(const pf_stmt *s, const pf_read_visitor *v)
{
    if (!s)
        return;
    if (s->kind == PF_S_FOR) {
        pf_visit_reads_expr(s->lo, v);
        pf_visit_reads_expr(s->hi, v);
        if (v->enter)
            v->enter(v->ctx, s->sym, s->lo, s->hi);
    }
    for (int i = 0; s->kind == PF_S_BLOCK && i < s->n_body; i++)
        pf_visit_reads_stmt(s->body[i], v);
    pf_visit_reads_expr(s->value, v);
    pf_visit_reads_expr(s->cond, v);
    for (int i = 0; i < s->target.n_index; i++)
        pf_visit_reads_expr(s->target.index[i], v);
    pf_visit_reads_stmt(s->then_s, v);
    pf_visit_reads_stmt(s->else_s, v);
    if (s->kind == PF_S_FOR && v->leave)
        v->leave(v->ctx);
}

/* ---- inlined size ---- */

static int64_t sat_add(int64_t a, int64_t b)
{
    return a + b > PF_NODES_MAX ? PF_NODES_MAX : a + b;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    return b > 0 && a > PF_NODES_MAX / b ? PF_NODES_MAX : a * b;
}

/* Taps of a reduction a lowering may unroll (constant bounds, few taps), else 1. */
static int64_t taps(const pf_expr *e)
{
    pf_value lo, hi;
    if (pf_eval_const_expr(e->a, NULL, NULL, &lo) != 0 ||
        pf_eval_const_expr(e->b, NULL, NULL, &hi) != 0 || hi.i < lo.i ||
        (int64_t)hi.i - lo.i >= PF_NODES_UNROLL_TAPS)
        return 1;
    return (int64_t)hi.i - lo.i + 1;
}

int64_t pf_expr_nodes(const pf_expr *e)
{
    if (!e)
        return 0;
    int64_t n = 1;
    n = sat_add(n, pf_expr_nodes(e->a));
    n = sat_add(n, pf_expr_nodes(e->b));
    n = sat_add(n, pf_expr_nodes(e->c));
    int64_t args = 0;
    for (int i = 0; i < e->n_args; i++)
        args = sat_add(args, pf_expr_nodes(e->args[i]));
    if (e->kind == PF_E_REDUCE)
        args = sat_mul(args, taps(e));
    if (e->kind == PF_E_CALL && e->sym && e->sym->kind == PF_SYM_FUNC && e->sym->func)
        n = sat_add(n, e->sym->func->inlined_nodes);
    return sat_add(n, args);
}

int64_t pf_stmt_nodes(const pf_stmt *s)
{
    if (!s)
        return 0;
    int64_t n = 1;
    for (int i = 0; s->kind == PF_S_BLOCK && i < s->n_body; i++)
        n = sat_add(n, pf_stmt_nodes(s->body[i]));
    n = sat_add(n, pf_expr_nodes(s->value));
    n = sat_add(n, pf_expr_nodes(s->cond));
    n = sat_add(n, pf_expr_nodes(s->lo));
    n = sat_add(n, pf_expr_nodes(s->hi));
    n = sat_add(n, pf_expr_nodes(s->step));
    for (int i = 0; i < s->target.n_index; i++)
        n = sat_add(n, pf_expr_nodes(s->target.index[i]));
    n = sat_add(n, pf_stmt_nodes(s->then_s));
    return sat_add(n, pf_stmt_nodes(s->else_s));
}
