/* Channel loops into the pixel loop: a stage over (x, y, c) runs its few channels inside the
 * x loop, unrolled, and what the channels share is computed once per pixel.
 *
 * Stages loop over further variables outside y and x (docs/schedule.md §8), so the bilateral
 * grid's slice, which per channel c interpolates blur_z[.., c] and — the same for every
 * channel — the weight blur_z[.., 3], made 16 gathers per pixel and channel (48 per pixel) and
 * computed its coordinates three times. Here
 *   for c = 0 .. 3
 *       for y ...
 *           vectorized for<8> x ...
 *               let zf = yuv[x, y, 0] / sr; ...; let value = f(blur_z[.., c]);
 *               let weight = g(blur_z[.., 3]); sliced[x, y, c] = value / weight;
 * becomes
 *   for y ...
 *       vectorized for<8> x ...
 *           let zf = ...; ...; let weight = g(blur_z[.., 3]);       (once per pixel)
 *           let value_0 = f(blur_z[.., 0]); sliced[x, y, 0] = value_0 / weight;
 *           let value_1 = ...                                        (c = 1, 2)
 * (32 gathers per pixel, as Halide's schedule of the same algorithm makes).
 *
 * Applies to a serial loop over c with a constant trip count of 2..MAX_TRIP whose body is a nest
 * of loops (and lets) free of c down to the innermost loops, when those compute something the
 * same for every channel that reads memory. Legal because the nest is a pointwise stage: every
 * store writes the iteration's own element (no scatter), nothing in the nest reads what it
 * writes, and no mutable lives across iterations; so its iterations are independent and may run
 * in any order, and a read hoisted out of the channels reads the value it read before. */
#include "codegen/passes.h"

#include "base/arena.h"
#include "codegen/affine.h"
#include "codegen/ir_clone.h"
#include "codegen/ir_simplify.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TRIP 4
#define MAX_BODY_NODES 2000  /* per channel: bounds the unrolled code */

typedef struct ch_ctx {
    ir_func *f;
    aff_env env;       /* every let's value, for constant trip counts */
    char *dep;         /* by var id: depends on the channel variable */
    char *stored;      /* by buffer id: written in the nest */
    char *declared;    /* by var id: a mutable declared in the nest */
    size_t n_vars, n_buffers;  /* the original function's (the sizes of the marks) */
    pf_pass_stats *stats;
} ch_ctx;

/* ---- constant trip counts ---- */

static bool eval(const ch_ctx *c, const ir_expr *x, int64_t *v, int depth)
{
    int64_t a, b;
    if (depth > 32 || x->type != IR_I32)
        return false;
    switch (x->kind) {
    case IR_CONST:
        *v = x->ival;
        return true;
    case IR_VARREF:
        return x->var->kind == IR_VAR_LET && x->var->id < c->env.n_vars &&
               c->env.let_value[x->var->id] &&
               eval(c, c->env.let_value[x->var->id], v, depth + 1);
    case IR_BIN:
        if (!eval(c, x->a, &a, depth + 1) || !eval(c, x->b, &b, depth + 1))
            return false;
        switch (x->op) {
        case IR_ADD: *v = (int32_t)(a + b); return true;
        case IR_SUB: *v = (int32_t)(a - b); return true;
        case IR_MUL: *v = (int32_t)(a * b); return true;
        case IR_MIN: *v = b < a ? b : a; return true;
        case IR_MAX: *v = a < b ? b : a; return true;
        case IR_DIV: *v = ir_sem_div32((int32_t)a, (int32_t)b); return true;
        case IR_MOD: *v = ir_sem_mod32((int32_t)a, (int32_t)b); return true;
        default: return false;
        }
    default:
        return false;
    }
}

/* ---- what depends on the channel, what the nest writes ---- */

/* Whether some node of x satisfies node_is (one walk for the three questions below). */
typedef bool (*node_test)(const ch_ctx *c, const ir_expr *x);

static bool any_node(const ch_ctx *c, const ir_expr *x, node_test node_is)
{
    if (!x)
        return false;
    if (node_is(c, x) || any_node(c, x->a, node_is) || any_node(c, x->b, node_is) ||
        any_node(c, x->c, node_is))
        return true;
    for (int i = 0; i < x->n_args; i++)
        if (any_node(c, x->args[i], node_is))
            return true;
    return false;
}

/* A variable that depends on the channel; mutables and arrays change within an iteration, so
 * nothing that reads them is hoisted either. */
static bool is_dep(const ch_ctx *c, const ir_expr *x)
{
    return (x->kind == IR_VARREF || x->kind == IR_ALOAD) &&
           (c->dep[x->var->id] || x->var->kind == IR_VAR_MUT || x->var->kind == IR_VAR_ARRAY);
}

static bool is_stored_read(const ch_ctx *c, const ir_expr *x)
{
    return ((x->kind == IR_LOAD || x->kind == IR_INTERP) && c->stored[x->buf->id]) ||
           (x->kind == IR_INTERP && c->stored[x->interp->image->id]);
}

static bool is_read(const ch_ctx *c, const ir_expr *x)
{
    (void)c;
    return x->kind == IR_LOAD || x->kind == IR_INTERP;
}

static bool uses_dep(const ch_ctx *c, const ir_expr *x)
{
    return any_node(c, x, is_dep);
}

static bool reads_stored(const ch_ctx *c, const ir_expr *x)
{
    return any_node(c, x, is_stored_read);
}

/* Records stores and declared mutables; false when the nest is not pointwise (scatters,
 * runtime calls, allocations). */
static bool scan_writes(ch_ctx *c, const ir_stmt *s)
{
    if (!s)
        return true;
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n; i++)
            if (!scan_writes(c, s->body[i]))
                return false;
        return true;
    case IR_S_STORE:
        c->stored[s->buf->id] = 1;
        return !s->scatter;
    case IR_S_DECL:
        c->declared[s->var->id] = 1;
        return true;
    case IR_S_RTCALL:
    case IR_S_ALLOC:
        return false;
    case IR_S_FOR:
    case IR_S_IF:
        return scan_writes(c, s->then_s) && scan_writes(c, s->else_s);
    default:
        return true;
    }
}

static int expr_nodes(const ir_expr *x)
{
    if (!x)
        return 0;
    int n = 1 + expr_nodes(x->a) + expr_nodes(x->b) + expr_nodes(x->c);
    for (int i = 0; i < x->n_args; i++)
        n += expr_nodes(x->args[i]);
    return n;
}

/* Reads nothing the nest writes, assigns only its own mutables; counts expression nodes. */
static bool scan_reads(const ch_ctx *c, const ir_stmt *s, int *nodes)
{
    if (!s)
        return true;
    if (s->kind == IR_S_BLOCK) {
        for (int i = 0; i < s->n; i++)
            if (!scan_reads(c, s->body[i], nodes))
                return false;
        return true;
    }
    if (s->kind == IR_S_ASSIGN && !c->declared[s->var->id])
        return false;
    const ir_expr *ex[4] = { s->value, s->index, s->lo, s->hi };
    for (int i = 0; i < 4; i++) {
        *nodes += expr_nodes(ex[i]);
        if (reads_stored(c, ex[i]))
            return false;
    }
    for (int d = 0; s->kind == IR_S_STORE && d < s->n; d++)
        if (reads_stored(c, s->idx[d]))
            return false;
    if (s->kind == IR_S_IF && reads_stored(c, s->cond))
        return false;
    return scan_reads(c, s->then_s, nodes) && scan_reads(c, s->else_s, nodes);
}

/* Marks the lets of a body that depend on the channel (in order: a let depends on those
 * before it). */
static void mark_deps(ch_ctx *c, const ir_stmt *s)
{
    if (!s)
        return;
    if (s->kind == IR_S_BLOCK) {
        for (int i = 0; i < s->n; i++)
            mark_deps(c, s->body[i]);
        return;
    }
    if ((s->kind == IR_S_LET || s->kind == IR_S_DECL) && uses_dep(c, s->value))
        c->dep[s->var->id] = 1;
    mark_deps(c, s->then_s);
    mark_deps(c, s->else_s);
}

/* ---- the shape: loops free of c down to the innermost ---- */

static bool innermost(const ir_stmt *loop)
{
    return loop->loop_kind == IR_LOOP_VECTORIZED || !ir_has_loop(loop->then_s);
}

/* Whether the nest under c is loops and c-free lets down to innermost loops whose bodies share
 * a read between channels (*shared). */
static bool nest_ok(const ch_ctx *c, const ir_stmt *s, bool *shared)
{
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n; i++)
            if (!nest_ok(c, s->body[i], shared))
                return false;
        return true;
    case IR_S_LET:
        return !uses_dep(c, s->value);
    case IR_S_COMMENT:
        return true;
    case IR_S_BARRIER:
        return false;
    case IR_S_FOR:
        if (uses_dep(c, s->lo) || uses_dep(c, s->hi))
            return false;
        if (!innermost(s))
            return nest_ok(c, s->then_s, shared);
        const ir_stmt *b = s->then_s;
        for (int i = 0; b->kind == IR_S_BLOCK && i < b->n; i++)
            if (b->body[i]->kind == IR_S_LET && !c->dep[b->body[i]->var->id] &&
                any_node(c, b->body[i]->value, is_read))
                *shared = true;
        return true;
    default:
        return false;
    }
}

/* ---- the rewrite ---- */

/* The innermost body with the channel unrolled: its c-free top-level lets once, then the rest
 * once per channel value. */
static ir_stmt *unrolled_body(ch_ctx *c, const ir_var *cv, const ir_stmt *body, int64_t lo,
                              int64_t hi)
{
    ir_func *f = c->f;
    ir_list out = { 0 }, rest = { 0 };
    int n = body->kind == IR_S_BLOCK ? body->n : 1;
    for (int i = 0; i < n; i++) {
        ir_stmt *s = body->kind == IR_S_BLOCK ? body->body[i] : (ir_stmt *)body;
        bool hoist = s->kind == IR_S_LET && !c->dep[s->var->id];
        ir_list_push(f, hoist ? &out : &rest, s);
    }
    ir_stmt *once = ir_list_block(f, &rest);
    for (int64_t k = lo; k < hi; k++) {
        ir_subst sub;
        ir_subst_init(&sub, f);
        sub.to[cv->id] = ir_const_i32(f, (int32_t)k);
        ir_list_push(f, &out, ir_clone_stmt(f, &sub, once));
        ir_subst_free(&sub);
    }
    return ir_list_block(f, &out);
}

static ir_stmt *sink(ch_ctx *c, const ir_var *cv, const ir_stmt *s, int64_t lo, int64_t hi)
{
    ir_func *f = c->f;
    ir_stmt *r = pf_arena_memdup(f->arena, s, sizeof *s);
    if (s->kind == IR_S_BLOCK) {
        r->body = pf_arena_alloc(f->arena, sizeof *r->body * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->body[i] = sink(c, cv, s->body[i], lo, hi);
    } else if (s->kind == IR_S_FOR) {
        r->then_s = innermost(s) ? unrolled_body(c, cv, s->then_s, lo, hi)
                                 : sink(c, cv, s->then_s, lo, hi);
    }
    return r;
}

/* The channel loop rewritten, or NULL when it does not qualify. */
static ir_stmt *try_loop(void *ctx, const ir_stmt *s)
{
    ch_ctx *c = ctx;
    int64_t lo, hi, step = 1;
    if (s->loop_kind != IR_LOOP_SERIAL || (s->step && (!ir_is_const(s->step, &step) || step != 1)))
        return NULL;
    if (!eval(c, s->lo, &lo, 0) || !eval(c, s->hi, &hi, 0) || hi - lo < 2 ||
        hi - lo > MAX_TRIP || !ir_has_loop(s->then_s))
        return NULL;
    memset(c->dep, 0, c->n_vars);
    memset(c->stored, 0, c->n_buffers);
    memset(c->declared, 0, c->n_vars);
    c->dep[s->var->id] = 1;
    mark_deps(c, s->then_s);
    int nodes = 0;
    bool shared = false;
    if (!scan_writes(c, s->then_s) || !scan_reads(c, s->then_s, &nodes) ||
        nodes > MAX_BODY_NODES || !nest_ok(c, s->then_s, &shared) || !shared)
        return NULL;
    if (c->stats)
        c->stats->channels_unrolled++;
    return sink(c, s->var, s->then_s, lo, hi);
}

ir_func *pf_pass_channels(ir_func *f, pf_pass_stats *stats)
{
    ch_ctx c = { 0 };
    c.stats = stats;
    c.f = pf_arena_memdup(f->arena, f, sizeof *f);
    aff_env_init(&c.env, f->n_vars);
    aff_env_record_lets(&c.env, f->body);
    /* the rewrite only adds variables; the analysis looks at the original ones */
    c.n_vars = (size_t)f->n_vars + 1;
    c.n_buffers = (size_t)f->n_buffers + 1;
    c.dep = pf_xcalloc(c.n_vars, 1);
    c.declared = pf_xcalloc(c.n_vars, 1);
    c.stored = pf_xcalloc(c.n_buffers, 1);
    c.f->body = ir_rewrite_loops(c.f, f->body, try_loop, &c);
    free(c.dep);
    free(c.declared);
    free(c.stored);
    aff_env_free(&c.env);
    return c.f;
}
