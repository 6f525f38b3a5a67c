/* One parallel loop over channels and tiles: a serial loop over a stage's further variable
 * (channels) whose body is a parallel loop over tiles or rows becomes one parallel loop over
 * both.
 *
 * Stages loop over further variables outside y and x (docs/schedule.md §8), so a perforated
 * blur's output at 820x614 ran
 *   for c = 0 .. 3
 *       parallel for yo = 0 .. 77 step 16          (5 tiles of 128 rows)
 * three parallel loops of 5 tasks each: a fork and a join per channel, at best 3 tasks against
 * 2 on two threads, and never more than 5 threads busy on 16 cores (issue 28). Here
 *   parallel for k = 0 .. 3 * 80 step 16
 *       let c = k / 80;  let yo = k % 80
 * one loop of 15 tasks.
 *
 * Legal when the channels' iterations are independent of each other as the tiles already are:
 * the parallel loop's bounds do not depend on the channel; every store in it is to a buffer
 * allocated inside it, or indexes the channel (so two channels never write one element) and
 * is not a scatter; nothing in it reads a buffer stored in it outside its own allocations (a
 * channel never reads another's results); every runtime call in it touches only its own
 * allocations and inputs; and it assigns no mutable or array from outside. */
#include "codegen/passes.h"

#include "base/arena.h"
#include "codegen/ir_clone.h"
#include "codegen/ir_simplify.h"

#include <stdlib.h>
#include <string.h>

typedef struct cl_ctx {
    ir_func *f;
    const ir_var *chan;   /* the channel loop's variable */
    char *local_buf;      /* by buffer id: allocated inside the parallel loop */
    char *shared_store;   /* by buffer id: stored inside, allocated outside */
    char *local_var;      /* by var id: defined inside the parallel loop */
    bool ok;
    pf_pass_stats *stats;
} cl_ctx;

/* ---- the independence check ---- */

typedef void (*stmt_check)(cl_ctx *c, const ir_stmt *s);

/* Runs check on s's statements one level down. */
static void each_child(cl_ctx *c, const ir_stmt *s, stmt_check check)
{
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        check(c, s->body[i]);
    if (s->kind != IR_S_BLOCK) {
        check(c, s->then_s);
        check(c, s->else_s);
    }
}

static bool store_indexes_channel(const cl_ctx *c, const ir_stmt *s)
{
    for (int i = 0; i < s->n; i++)
        if (ir_expr_uses_var(s->idx[i], c->chan))
            return true;
    return false;
}

/* Allocations and writes, outside in (an allocation is met before the stores in its body):
 * marks local buffers and shared stores, clears ok on a write two channels could share. */
static void check_writes(cl_ctx *c, const ir_stmt *s)
{
    if (!s || !c->ok)
        return;
    switch (s->kind) {
    case IR_S_ALLOC:
        c->local_buf[s->buf->id] = 1;
        break;
    case IR_S_STORE:
        if (c->local_buf[s->buf->id])
            break;
        if (s->scatter || !store_indexes_channel(c, s))
            c->ok = false;
        c->shared_store[s->buf->id] = 1;
        break;
    case IR_S_ASSIGN:
    case IR_S_ARRAY_STORE:
    case IR_S_SORT:
        if (!c->local_var[s->var->id])
            c->ok = false;
        break;
    case IR_S_RTCALL:
        for (int i = 0; i < s->n_bufs; i++)
            if (!c->local_buf[s->bufs[i]->id] && s->bufs[i]->kind != IR_BUF_INPUT)
                c->ok = false;
        break;
    default:
        break;
    }
    each_child(c, s, check_writes);
}

static bool reads_shared(const cl_ctx *c, const ir_expr *e)
{
    if (!e)
        return false;
    if ((e->kind == IR_LOAD || e->kind == IR_INTERP) && c->shared_store[e->buf->id])
        return true;
    if (reads_shared(c, e->a) || reads_shared(c, e->b) || reads_shared(c, e->c))
        return true;
    for (int i = 0; i < e->n_args; i++)
        if (reads_shared(c, e->args[i]))
            return true;
    return false;
}

/* Clears ok where a statement reads a buffer that the loop stores outside its allocations
 * (after check_writes has found every such store). */
static void check_reads(cl_ctx *c, const ir_stmt *s)
{
    if (!s || !c->ok)
        return;
    const ir_expr *exprs[] = { s->value, s->index, s->lo, s->hi, s->step, s->align, s->cond };
    bool bad = false;
    for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++)
        bad = bad || reads_shared(c, exprs[i]);
    int n_idx = s->kind == IR_S_STORE ? s->n : 0, n_args = s->kind == IR_S_RTCALL ? s->n : 0;
    for (int i = 0; i < n_idx; i++)
        bad = bad || reads_shared(c, s->idx[i]);
    for (int i = 0; i < n_args; i++)
        bad = bad || reads_shared(c, s->args[i]);
    for (int i = 0; s->kind == IR_S_ALLOC && s->window && i < 2 * s->buf->ndims; i++)
        bad = bad || reads_shared(c, s->window[i]);
    if (bad)
        c->ok = false;
    each_child(c, s, check_reads);
}

static bool independent(cl_ctx *c, const ir_var *chan, const ir_stmt *par)
{
    size_t nb = (size_t)c->f->n_buffers + 1, nv = (size_t)c->f->n_vars + 1;
    c->chan = chan;
    c->local_buf = pf_xcalloc(nb, 1);
    c->shared_store = pf_xcalloc(nb, 1);
    c->local_var = pf_xcalloc(nv, 1);
    c->ok = true;
    ir_defined_vars(par->then_s, c->local_var);
    check_writes(c, par->then_s);
    check_reads(c, par->then_s);
    free(c->local_buf);
    free(c->shared_store);
    free(c->local_var);
    return c->ok;
}

/* ---- the rewrite ---- */

/* The parallel loop that is the whole body of serial loop s, or NULL. */
static const ir_stmt *sole_parallel(const ir_stmt *s)
{
    const ir_stmt *b = s->then_s;
    while (b && b->kind == IR_S_BLOCK && b->n == 1)
        b = b->body[0];
    if (!b || b->kind != IR_S_FOR || b->loop_kind != IR_LOOP_PARALLEL || b->banded)
        return NULL;
    return b;
}

static bool bounds_free_of(const ir_stmt *loop, const ir_var *v)
{
    return !ir_expr_uses_var(loop->lo, v) && !ir_expr_uses_var(loop->hi, v) &&
           !ir_expr_uses_var(loop->step, v);
}

static ir_expr *step_of(ir_func *f, const ir_stmt *loop)
{
    return loop->step ? loop->step : ir_const_i32(f, 1);
}

/* Iterations of loop: ceil(max(hi - lo, 0) / step). */
static ir_expr *trip_count(ir_func *f, const ir_stmt *loop)
{
    ir_expr *span = irf_bin(f, IR_MAX, irf_bin(f, IR_SUB, loop->hi, loop->lo), ir_const_i32(f, 0));
    ir_expr *step = step_of(f, loop);
    ir_expr *up = irf_bin(f, IR_ADD, span, irf_bin(f, IR_SUB, step, ir_const_i32(f, 1)));
    return irf_bin(f, IR_DIV, up, step);
}

static ir_var *let_var(ir_func *f, const char *name, ir_list *l, ir_expr *value)
{
    ir_var *v = ir_var_new(f, name, IR_I32, IR_VAR_LET);
    ir_list_push(f, l, ir_let(f, v, value));
    return v;
}

/* s (serial over the channels) around par (parallel): one parallel loop over both. The new
 * loop keeps par's step (k = tile index x step), so that it still reads as a loop over tiles
 * (a task is a tile, as before). */
static ir_stmt *collapse(cl_ctx *c, const ir_stmt *s, const ir_stmt *par)
{
    ir_func *f = c->f;
    ir_list outer = { 0 }, inner = { 0 };
    ir_expr *step = step_of(f, par);
    ir_var *n_chan = let_var(f, "n_chan", &outer, trip_count(f, s));
    ir_var *span = let_var(f, "chan_span", &outer, irf_bin(f, IR_MUL, trip_count(f, par), step));
    ir_var *k = ir_var_new(f, "ck", IR_I32, IR_VAR_LOOP);
    k->positive = true;
    ir_expr *kr = ir_ref(f, k), *sp = ir_ref(f, span);
    ir_expr *chan = irf_bin(f, IR_ADD, s->lo, irf_bin(f, IR_MUL, irf_bin(f, IR_DIV, kr, sp),
                                                      step_of(f, s)));
    ir_expr *row = irf_bin(f, IR_ADD, par->lo, irf_bin(f, IR_MOD, kr, sp));
    ir_subst sub;
    ir_subst_init(&sub, f);
    sub.to[s->var->id] = ir_ref(f, let_var(f, s->var->name, &inner, chan));
    sub.to[par->var->id] = ir_ref(f, let_var(f, par->var->name, &inner, row));
    ir_list_push(f, &inner, ir_clone_stmt(f, &sub, par->then_s));
    ir_subst_free(&sub);
    ir_stmt *loop = pf_arena_memdup(f->arena, par, sizeof *par);
    loop->var = k;
    loop->lo = ir_const_i32(f, 0);
    loop->hi = irf_bin(f, IR_MUL, ir_ref(f, n_chan), sp);
    loop->step = step;
    loop->align = NULL;
    loop->text = s->text ? s->text : par->text;
    loop->then_s = ir_list_block(f, &inner);
    ir_list_push(f, &outer, loop);
    if (c->stats)
        c->stats->loops_collapsed++;
    return ir_list_block(f, &outer);
}

/* The loop collapsed; s itself where nothing inside it is looked at (a parallel, vector or
 * GPU loop: inside it nothing is collapsed); NULL to look inside. */
static ir_stmt *try_loop(void *ctx, const ir_stmt *s)
{
    cl_ctx *c = ctx;
    if (s->loop_kind != IR_LOOP_SERIAL)
        return (ir_stmt *)s;
    if (s->banded || s->unroll > 1 || s->var->type != IR_I32)
        return NULL;
    const ir_stmt *par = sole_parallel(s);
    if (!par || par->var->type != IR_I32 || !bounds_free_of(par, s->var) ||
        !independent(c, s->var, par))
        return NULL;
    return collapse(c, s, par);
}

ir_func *pf_pass_collapse(ir_func *f, pf_pass_stats *stats)
{
    cl_ctx c = { 0 };
    c.stats = stats;
    c.f = pf_arena_memdup(f->arena, f, sizeof *f);
    c.f->body = ir_rewrite_loops(c.f, f->body, try_loop, &c);
    return c.f;
}
