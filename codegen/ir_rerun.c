/* Whether a loop body may run again (see ir_rerun.h). */
#include "codegen/ir_rerun.h"

#include "base/arena.h"
#include "codegen/ir_clone.h"

#include <stdlib.h>

typedef struct rerun {
    const char *inside;     /* by var id: defined in the body */
    const ir_buffer **stored, **loaded;
    int n_stored, n_loaded, cap;
    bool ok;
} rerun;

static void note(const ir_buffer ***list, int *n, int cap, const ir_buffer *b, bool *ok)
{
    for (int i = 0; i < *n; i++)
        if ((*list)[i] == b)
            return;
    if (*n == cap) {
        *ok = false;  /* more buffers than a body of this kind has: do not bother */
        return;
    }
    (*list)[(*n)++] = b;
}

static void walk_expr(rerun *r, const ir_expr *e)
{
    if (!e || !r->ok)
        return;
    if (e->kind == IR_LOAD)
        note(&r->loaded, &r->n_loaded, r->cap, e->buf, &r->ok);
    if (e->kind == IR_INTERP)
        r->ok = false;  /* lowered to loads before emission; not looked into here */
    walk_expr(r, e->a);
    walk_expr(r, e->b);
    walk_expr(r, e->c);
    for (int i = 0; i < e->n_args; i++)
        walk_expr(r, e->args[i]);
}

static void walk_stmt(rerun *r, const ir_stmt *s)
{
    if (!s || !r->ok)
        return;
    switch (s->kind) {
    case IR_S_SORT: case IR_S_RTCALL: case IR_S_ALLOC: case IR_S_BARRIER:
        r->ok = false;
        return;
    case IR_S_ASSIGN: case IR_S_ARRAY_STORE:
        if (!r->inside[s->var->id])
            r->ok = false;  /* state carried from one iteration to the next */
        break;
    case IR_S_STORE:
        if (s->scatter)
            r->ok = false;  /* another iteration may write there: a rerun would reorder them */
        note(&r->stored, &r->n_stored, r->cap, s->buf, &r->ok);
        for (int i = 0; i < s->n; i++)
            walk_expr(r, s->idx[i]);
        break;
    default:
        break;
    }
    walk_expr(r, s->value);
    walk_expr(r, s->index);
    walk_expr(r, s->cond);
    walk_expr(r, s->lo);
    walk_expr(r, s->hi);
    walk_expr(r, s->step);
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        walk_stmt(r, s->body[i]);
    if (s->kind != IR_S_BLOCK) {
        walk_stmt(r, s->then_s);
        walk_stmt(r, s->else_s);
    }
}

#define MAX_BUFFERS 64

bool ir_body_reruns_safely(const ir_stmt *loop, int n_vars)
{
    char *inside = pf_xcalloc((size_t)n_vars + 1, 1);
    const ir_buffer **lists = pf_xmalloc(sizeof *lists * 2 * MAX_BUFFERS);
    ir_defined_vars(loop->then_s, inside);
    rerun r = { inside, lists, lists + MAX_BUFFERS, 0, 0, MAX_BUFFERS, true };
    walk_stmt(&r, loop->then_s);
    for (int i = 0; r.ok && i < r.n_stored; i++)
        for (int j = 0; j < r.n_loaded; j++)
            if (r.stored[i] == r.loaded[j])
                r.ok = false;  /* it reads what it writes: a second run may read its own */
    free(lists);
    free(inside);
    return r.ok;
}
