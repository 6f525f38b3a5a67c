/* Window arrays as long as their counter can go. A median filter's window is declared for the
 * whole window (`float window[81]` in apps/median.pf) and filled in order by a counter
 * (ir_fill.h). Loop perforation of the window loops (`median_x_loop step 4`) leaves fewer
 * iterations, 9 x 3 = 27, but the array keeps 81 elements, so the count never reaches the
 * length and the vector median (llvm_vmedian.c), whose selection network needs every lane's
 * count to cover the array, fell back to the runtime's median per lane: the perforated filter
 * ran 2.4x slower than the exact one instead of faster.
 *
 * Here such an array is declared with as many elements as its counter can reach, the most
 * increments one run of the counter's block makes (ir_fill_max_count: the loops' trip counts,
 * constants after perforation by step, first or last). Nothing changes in what the program
 * computes: every store is at the counter's value before an increment, so below the new
 * length, and the median reads count elements, never more than the new length, the same
 * clamped count as before. Random perforation leaves the trip counts as they were (its test is
 * inside the loop), so its windows keep their length. Runs first, before pass_bounds copies
 * loops, on CPU plans. */
#include "codegen/passes.h"

#include "base/arena.h"
#include "codegen/ir_clone.h"
#include "codegen/ir_fill.h"

#include <stdlib.h>

/* Whether e mentions an array that sub maps. */
static bool mentions(const ir_subst *sub, const ir_expr *e)
{
    if (!e)
        return false;
    if ((e->kind == IR_VARREF || e->kind == IR_ALOAD) && e->var->kind == IR_VAR_ARRAY &&
        e->var->id < sub->n && sub->arr[e->var->id])
        return true;
    if (mentions(sub, e->a) || mentions(sub, e->b) || mentions(sub, e->c))
        return true;
    for (int i = 0; i < e->n_args; i++)
        if (mentions(sub, e->args[i]))
            return true;
    return false;
}

static ir_expr *subst(ir_func *f, const ir_subst *sub, ir_expr *e)
{
    return mentions(sub, e) ? ir_subst_expr(f, sub, e) : e;
}

/* The new arrays of the block's declarations that can be shorter, into sub. */
static int plan_block(ir_func *f, ir_subst *sub, const ir_stmt *b)
{
    int n = 0;
    for (int j = 0; j < b->n; j++) {
        const ir_stmt *d = b->body[j];
        if (d->kind != IR_S_ARRAY_DECL || d->var->const_init)
            continue;
        const ir_var *count = ir_fill_counter(b, d->var);
        int64_t most = count ? ir_fill_max_count(b, count) : -1;
        if (most < 0 || most >= d->var->array_len)
            continue;
        ir_var *a = ir_var_new(f, d->var->name, d->var->type, IR_VAR_ARRAY);
        a->array_len = most > 1 ? (int)most : 1;  /* a median reads at least element 0 */
        sub->arr[d->var->id] = a;
        n++;
    }
    return n;
}

/* A copy of s with the planned arrays in place of the old ones (statements copied,
 * expressions shared unless they name one). */
static ir_stmt *rewrite(ir_func *f, ir_subst *sub, const ir_stmt *s, int *narrowed)
{
    if (!s)
        return NULL;
    ir_stmt *r = pf_arena_memdup(f->arena, s, sizeof *s);
    if (s->kind == IR_S_BLOCK) {
        *narrowed += plan_block(f, sub, s);
        r->body = pf_arena_alloc(f->arena, sizeof *r->body * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->body[i] = rewrite(f, sub, s->body[i], narrowed);
        return r;
    }
    if (s->kind == IR_S_ARRAY_DECL || s->kind == IR_S_ARRAY_STORE || s->kind == IR_S_SORT)
        r->var = s->var->id < sub->n && sub->arr[s->var->id] ? sub->arr[s->var->id] : s->var;
    r->value = subst(f, sub, s->value);
    r->index = subst(f, sub, s->index);
    r->cond = subst(f, sub, s->cond);
    r->lo = subst(f, sub, s->lo);
    r->hi = subst(f, sub, s->hi);
    r->step = subst(f, sub, s->step);
    r->align = subst(f, sub, s->align);
    if (s->kind == IR_S_STORE) {
        r->idx = pf_arena_alloc(f->arena, sizeof *r->idx * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->idx[i] = subst(f, sub, s->idx[i]);
    }
    r->then_s = rewrite(f, sub, s->then_s, narrowed);
    r->else_s = rewrite(f, sub, s->else_s, narrowed);
    return r;
}

ir_func *pf_pass_narrow(ir_func *f, pf_pass_stats *stats)
{
    ir_subst sub;
    ir_subst_init(&sub, f);
    int narrowed = 0;
    ir_stmt *body = rewrite(f, &sub, f->body, &narrowed);
    ir_subst_free(&sub);
    if (narrowed == 0)
        return f;
    ir_func *g = pf_arena_memdup(f->arena, f, sizeof *f);
    g->body = body;
    if (stats)
        stats->arrays_narrowed += narrowed;
    return g;
}
