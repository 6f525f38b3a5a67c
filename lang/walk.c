/* Visiting image reads with the variables in scope (see walk.h). */
#include "lang/walk.h"

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
