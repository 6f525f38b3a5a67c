/* Boundary-check removal and loop partitioning (Forma's interior/border split).
 *
 * Needs: a lowered function whose loads carry clamp_mask bits.
 * Guarantees: the same results, with (1) every clamp bit cleared whose index is provably inside
 * the buffer over the enclosing loop ranges, and (2) each loop whose body reads at `v + offset`
 * (or tests `v` against loop-invariant bounds) split into border / interior / border parts, the
 * interior copy having those checks removed and those tests folded.
 *
 *   for x in [0, W):  A[x] = x >= 8 && x < W-8 ? in[x-8]{clamp} + in[x+8]{clamp} : 0
 * becomes
 *   let lo = clamp(8, 0, W); let hi = clamp(W-8, lo, W)
 *   for x in [0, lo):  (unchanged body)
 *   for x in [lo, hi): A[x] = in[x-8] + in[x+8]
 *   for x in [hi, W):  (unchanged body)
 * (3) When the loop's iterations may run in any order (each writes its own locations and reads
 * nothing the loop writes) and no border part can fold a test on x, the two border parts are
 * one loop, before the interior: one copy of the body fewer to compile.
 *   let n = max(lo - 0, 0)
 *   for k in [0, n + max(W - hi, 0)):  let x = k < n ? k : hi + (k - n);  (unchanged body) */
#include "codegen/passes.h"

#include "base/arena.h"
#include "codegen/affine.h"
#include "codegen/ir_clone.h"
#include "codegen/ir_simplify.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CONSTRAINTS 64

/* One way a loop variable v is constrained to make a check unnecessary. */
typedef struct constraint {
    const void *site;   /* the load/store expression or the comparison */
    int dim;            /* loads/stores: the dimension; comparisons: -1 */
    bool lower;         /* k*v >= bound, else k*v <= bound */
    int64_t k;          /* > 0: v's coefficient (4 for the lattice read in[4*J - 8]) */
    aff bound;
} constraint;

typedef struct split {
    const ir_var *v;
    const char *inner_mark;  /* vars defined inside the loop body */
    int n;
    constraint c[MAX_CONSTRAINTS];
    int n_loads;             /* constraints that come from loads/stores */
    int n_all;               /* every constraint found (n keeps the non-redundant ones) */
    constraint all[MAX_CONSTRAINTS];
    int vector_depth;        /* collecting inside a vectorized loop of the body */
    int outside_vector;      /* constraints found outside the body's vectorized loops */
} split;

typedef struct bounds_ctx {
    ir_func *f;
    aff_env env;
    int splits;      /* loops partitioned */
    int cleared;     /* clamp bits removed by proof */
    int in_border;   /* > 0 inside the border copy of a split loop: nothing there is split */
    int merged;      /* split loops whose border parts became one loop */
    bool no_merge;   /* keep the two border parts apart (pf_compile_options) */
    bool gpu;        /* IR with GPU loops: prove only, never split (pf_pass_bounds_gpu) */
} bounds_ctx;

/* An affine form is usable as a bound outside the loop if it mentions neither v nor anything
 * defined inside the body. */
static bool outside(const split *sp, const aff *a)
{
    for (int i = 0; i < a->n; i++)
        if (a->v[i] == sp->v || sp->inner_mark[a->v[i]->id])
            return false;
    return true;
}

/* Largest coefficient of v handled: lattice reads of spacing up to 64 times a step. */
#define MAX_COEF 4096

/* Bounds become i32 code (aff_to_expr, bound_expr): one whose constant is beyond +-2^30, or
 * with a coefficient beyond +-MAX_COEF, is not used (the check stays), or it would wrap: a
 * read at y - 2^31 was once "proven" inside the image by a bound of 2^31 that wrapped to
 * -2^31, and one at x + 2147483647 * W by a bound of -2147483647 * W (found by fuzz_jit,
 * issue 27; the index itself wraps in i32, the affine forms do not). */
static bool fits_code(const aff *a)
{
    for (int i = 0; i < a->n; i++)
        if (a->k[i] < -MAX_COEF || a->k[i] > MAX_COEF)
            return false;
    return a->c >= -((int64_t)1 << 30) && a->c <= ((int64_t)1 << 30);
}

static void add(split *sp, const void *site, int dim, bool lower, int64_t k, aff bound)
{
    if (sp->n < MAX_CONSTRAINTS && bound.ok && fits_code(&bound)) {
        constraint c = { site, dim, lower, k, bound };
        sp->c[sp->n++] = c;
        sp->outside_vector += sp->vector_depth == 0;
    }
}

/* A bound on k*v with the variables of loops inside the body replaced by their extreme values
 * (the loops' ranges, recorded while collecting): a lower bound takes its largest value over
 * them, an upper bound its smallest, so the constraint holds in every inner iteration. This is
 * what bounds x by a window loop's read at x + k, k = -4..4 (the 9x9 median). !ok when a
 * variable defined inside remains. */
static aff over_inner_loops(const bounds_ctx *b, const split *sp, aff a, bool lower)
{
    for (int round = 0; round < 8 && a.ok; round++) {
        int i = 0;
        while (i < a.n && !(a.v[i]->kind == IR_VAR_LOOP && sp->inner_mark[a.v[i]->id]))
            i++;
        if (i == a.n)
            return outside(sp, &a) ? a : (aff){ 0 };
        const ir_var *v = a.v[i];
        const aff *lo = b->env.lo[v->id], *hi = b->env.hi[v->id];
        if (!lo || !hi)
            return (aff){ 0 };
        int64_t k = a.k[i];
        a = aff_add(aff_drop(a, v), aff_scale((k > 0) == lower ? *hi : *lo, k));
    }
    return (aff){ 0 };
}

/* index = k*v + off must satisfy 0 <= index <= extent - 1. */
static void index_constraints(bounds_ctx *b, split *sp, const void *site, const ir_buffer *buf,
                              int d, const ir_expr *index)
{
    aff a = aff_of(&b->env, index);
    int64_t k = a.ok ? aff_coef(&a, sp->v) : 0;
    if (k < 1 || k > MAX_COEF)
        return;
    aff off = aff_drop(a, sp->v);
    aff ext = aff_of(&b->env, ir_ref(b->f, buf->extent[d]));
    aff lo = over_inner_loops(b, sp, aff_scale(off, -1), true);
    aff hi = over_inner_loops(b, sp, aff_sub(aff_add(ext, aff_const(-1)), off), false);
    /* both sides or neither: a site with one constraint found counts as checked */
    if (!lo.ok || !hi.ok || !fits_code(&lo) || !fits_code(&hi) || sp->n + 2 > MAX_CONSTRAINTS)
        return;
    add(sp, site, d, true, k, lo);
    add(sp, site, d, false, k, hi);
    sp->n_loads++;
}

/* The buffer whose extents bound a read's indices: the logical image for on-demand reads. */
static const ir_buffer *logical(const ir_expr *e)
{
    return e->kind == IR_INTERP ? e->interp->image : e->buf;
}

static void collect_expr(bounds_ctx *b, split *sp, const ir_expr *e)
{
    if (!e)
        return;
    if (e->kind == IR_LOAD || e->kind == IR_INTERP)
        for (int d = 0; d < e->n_args; d++)
            if (e->clamp_mask & (1u << d))
                index_constraints(b, sp, e, logical(e), d, e->args[d]);
    collect_expr(b, sp, e->a);
    collect_expr(b, sp, e->b);
    collect_expr(b, sp, e->c);
    for (int i = 0; i < e->n_args; i++)
        collect_expr(b, sp, e->args[i]);
}

/* A comparison p < q or p <= q with a non-zero coefficient on v bounds v on one side. */
static void compare_constraint(bounds_ctx *b, split *sp, const ir_expr *cmp)
{
    aff d = aff_sub(aff_of(&b->env, cmp->a), aff_of(&b->env, cmp->b));
    if (!d.ok)
        return;
    int64_t k = aff_coef(&d, sp->v);
    aff r = aff_drop(d, sp->v);
    if (k == 0 || k > MAX_COEF || k < -MAX_COEF)
        return;
    int64_t strict = cmp->op == IR_LT ? 1 : 0;  /* d <= -strict */
    if (k > 0)    /* k*v + r <= -strict  ->  k*v <= -r - strict */
        add(sp, cmp, -1, false, k,
            over_inner_loops(b, sp, aff_sub(aff_const(-strict), r), false));
    else          /* -|k|*v + r <= -strict  ->  |k|*v >= r + strict */
        add(sp, cmp, -1, true, -k, over_inner_loops(b, sp, aff_add(r, aff_const(strict)), true));
}

static void collect_cond(bounds_ctx *b, split *sp, const ir_expr *c)
{
    if (c->kind == IR_BIN && c->op == IR_AND) {
        collect_cond(b, sp, c->a);
        collect_cond(b, sp, c->b);
    } else if (c->kind == IR_BIN && (c->op == IR_LT || c->op == IR_LE) &&
               c->a->type == IR_I32) {
        compare_constraint(b, sp, c);
    }
}

static void collect_stmt(bounds_ctx *b, split *sp, const ir_stmt *s);

/* Collects a loop inside the body with its variable's range known, for over_inner_loops. */
static void collect_inner_loop(bounds_ctx *b, split *sp, const ir_stmt *s)
{
    aff lo = aff_bound(&b->env, s->lo, true),
        hi = aff_add(aff_bound(&b->env, s->hi, false), aff_const(-1));
    int id = s->var->id;
    aff_env_reserve(&b->env, b->f->n_vars);
    aff *old_lo = b->env.lo[id], *old_hi = b->env.hi[id];
    b->env.lo[id] = lo.ok && hi.ok ? pf_arena_memdup(b->f->arena, &lo, sizeof lo) : NULL;
    b->env.hi[id] = lo.ok && hi.ok ? pf_arena_memdup(b->f->arena, &hi, sizeof hi) : NULL;
    bool vec = s->loop_kind == IR_LOOP_VECTORIZED;
    sp->vector_depth += vec;
    collect_stmt(b, sp, s->then_s);
    sp->vector_depth -= vec;
    b->env.lo[id] = old_lo;
    b->env.hi[id] = old_hi;
}

static void collect_stmt(bounds_ctx *b, split *sp, const ir_stmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n; i++)
            collect_stmt(b, sp, s->body[i]);
        return;
    case IR_S_STORE:
        for (int d = 0; d < s->n; d++) {
            collect_expr(b, sp, s->idx[d]);
            if (s->check_mask & (1u << d))
                index_constraints(b, sp, s, s->buf, d, s->idx[d]);
        }
        collect_expr(b, sp, s->value);
        return;
    case IR_S_IF:
        collect_expr(b, sp, s->cond);
        collect_cond(b, sp, s->cond);
        collect_stmt(b, sp, s->then_s);
        collect_stmt(b, sp, s->else_s);
        return;
    case IR_S_FOR:
        collect_expr(b, sp, s->lo);
        collect_expr(b, sp, s->hi);
        collect_inner_loop(b, sp, s);
        return;
    case IR_S_ALLOC:
        collect_stmt(b, sp, s->then_s);
        return;
    default:
        collect_expr(b, sp, s->value);
        collect_expr(b, sp, s->index);
        return;
    }
}

/* ---- rewriting the interior copy ---- */

static const constraint *find(const split *sp, const void *site, int dim)
{
    for (int i = 0; i < sp->n_all; i++)
        if (sp->all[i].site == site && sp->all[i].dim == dim)
            return &sp->all[i];
    return NULL;
}

/* Rewrites e for the interior: loads with constraints lose those checks, constrained
 * comparisons become true. Done before cloning, on the original nodes (constraints are keyed
 * by node identity). */
static ir_expr *interior_expr(bounds_ctx *b, const split *sp, ir_expr *e)
{
    if (!e)
        return NULL;
    ir_func *f = b->f;
    switch (e->kind) {
    case IR_LOAD:
    case IR_INTERP: {
        uint8_t mask = e->clamp_mask;
        for (int d = 0; d < e->n_args; d++)
            if (find(sp, e, d))
                mask &= (uint8_t)~(1u << d);
        ir_expr **args = pf_arena_alloc(f->arena, sizeof *args * (size_t)e->n_args);
        for (int d = 0; d < e->n_args; d++)
            args[d] = interior_expr(b, sp, e->args[d]);
        return ir_with_args(f, e, args, mask);
    }
    case IR_BIN:
        if ((e->op == IR_LT || e->op == IR_LE) && find(sp, e, -1))
            return ir_const_bool(f, true);
        return irf_bin(f, e->op, interior_expr(b, sp, e->a), interior_expr(b, sp, e->b));
    case IR_UN:
        return irf_un(f, e->op, interior_expr(b, sp, e->a));
    case IR_SELECT:
        return irf_select(f, interior_expr(b, sp, e->a), interior_expr(b, sp, e->b),
                          interior_expr(b, sp, e->c));
    case IR_CAST:
        return irf_cast(f, e->type, interior_expr(b, sp, e->a));
    case IR_ALOAD:
        return ir_aload(f, e->var, interior_expr(b, sp, e->a));
    case IR_CALL: {
        ir_expr **args = pf_arena_alloc(f->arena, sizeof *args * (size_t)(e->n_args + 1));
        for (int i = 0; i < e->n_args; i++)
            args[i] = interior_expr(b, sp, e->args[i]);
        return ir_with_args(f, e, args, 0);
    }
    default:
        return e;
    }
}

static ir_stmt *interior_stmt(bounds_ctx *b, const split *sp, const ir_stmt *s)
{
    if (!s)
        return NULL;
    ir_func *f = b->f;
    ir_stmt *r = pf_arena_memdup(f->arena, s, sizeof *s);
    switch (s->kind) {
    case IR_S_BLOCK:
        r->body = pf_arena_alloc(f->arena, sizeof *r->body * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->body[i] = interior_stmt(b, sp, s->body[i]);
        return r;
    case IR_S_STORE:
        r->idx = pf_arena_alloc(f->arena, sizeof *r->idx * (size_t)s->n);
        for (int d = 0; d < s->n; d++) {
            r->idx[d] = interior_expr(b, sp, s->idx[d]);
            if (find(sp, s, d))
                r->check_mask &= (uint8_t)~(1u << d);
        }
        r->value = interior_expr(b, sp, s->value);
        return r;
    case IR_S_IF: {
        ir_expr *c = interior_expr(b, sp, s->cond);
        int64_t k;
        if (ir_is_const(c, &k))
            return k ? interior_stmt(b, sp, s->then_s)
                     : (s->else_s ? interior_stmt(b, sp, s->else_s) : ir_block(f, 0, NULL));
        r->cond = c;
        r->then_s = interior_stmt(b, sp, s->then_s);
        r->else_s = interior_stmt(b, sp, s->else_s);
        return r;
    }
    case IR_S_FOR:
        r->lo = interior_expr(b, sp, s->lo);
        r->hi = interior_expr(b, sp, s->hi);
        r->then_s = interior_stmt(b, sp, s->then_s);
        return r;
    case IR_S_ALLOC:
        r->then_s = interior_stmt(b, sp, s->then_s);
        return r;
    default:
        r->value = interior_expr(b, sp, s->value);
        r->index = interior_expr(b, sp, s->index);
        return r;
    }
}

/* ---- the split itself ---- */

static ir_expr *let(bounds_ctx *b, ir_list *out, const char *name, ir_expr *v)
{
    if (v->kind == IR_CONST || v->kind == IR_VARREF)
        return v;
    /* A new let is an atom for the affine reasoning (its value is a min/max). */
    ir_var *x = ir_var_new(b->f, name, IR_I32, IR_VAR_LET);
    ir_list_push(b->f, out, ir_let(b->f, x, v));
    return ir_ref(b->f, x);
}

/* Rounds t >= lo up to lo + k*step. */
static ir_expr *align_up(ir_func *f, ir_expr *t, ir_expr *lo, ir_expr *step)
{
    int64_t k;
    if (ir_is_const(step, &k) && k == 1)
        return t;
    ir_expr *n = irf_bin(f, IR_ADD, irf_bin(f, IR_SUB, t, lo), irf_bin(f, IR_SUB, step,
                                                                      ir_const_i32(f, 1)));
    return irf_bin(f, IR_ADD, lo, irf_bin(f, IR_MUL, irf_bin(f, IR_DIV, n, step), step));
}

static ir_stmt *bounds_stmt(bounds_ctx *b, const ir_stmt *s);

/* A part of a split loop, with its lets known to the affine reasoning: partitioned on its
 * variable once (inner loops may still split); a border part runs a few iterations, not worth
 * vector code. */
static ir_stmt *loop_part(bounds_ctx *b, ir_stmt *r, bool border)
{
    if (border && r->loop_kind == IR_LOOP_VECTORIZED) {
        r->loop_kind = IR_LOOP_SERIAL;
        r->cold = true;
    }
    r->no_split = true;
    aff_env_reserve(&b->env, b->f->n_vars);
    aff_env_record_lets(&b->env, r);
    return r;
}

static ir_stmt *loop_copy(bounds_ctx *b, const ir_stmt *s, ir_expr *lo, ir_expr *hi,
                          ir_stmt *body, bool border)
{
    ir_stmt *r = pf_arena_memdup(b->f->arena, s, sizeof *s);
    r->lo = lo;
    r->hi = hi;
    r->then_s = body;
    ir_subst sub;
    ir_subst_init(&sub, b->f);
    ir_stmt *c = ir_clone_stmt(b->f, &sub, r);
    ir_subst_free(&sub);
    return loop_part(b, c, border);
}

/* floor(a / k) for k > 0 (IR_DIV truncates toward zero). */
static ir_expr *floor_div(ir_func *f, ir_expr *a, int64_t k)
{
    if (k == 1)
        return a;
    ir_expr *kk = ir_const_i32(f, (int32_t)k);
    ir_expr *neg = irf_bin(f, IR_DIV, irf_bin(f, IR_SUB, a, ir_const_i32(f, (int32_t)(k - 1))),
                           kk);
    return irf_select(f, irf_bin(f, IR_LT, a, ir_const_i32(f, 0)), neg, irf_bin(f, IR_DIV, a, kk));
}

/* The first v with k*v >= bound is ceil(bound / k); one past the last with k*v <= bound is
 * floor(bound / k) + 1. */
static ir_expr *bound_expr(bounds_ctx *b, const split *sp, bool lower, ir_expr *init)
{
    ir_func *f = b->f;
    ir_expr *r = init;
    for (int i = 0; i < sp->n; i++)
        if (sp->c[i].lower == lower) {
            const constraint *c = &sp->c[i];
            ir_expr *x = aff_to_expr(f, &c->bound);
            if (lower)
                x = irf_bin(f, IR_SUB, ir_const_i32(f, 0),
                            floor_div(f, irf_bin(f, IR_SUB, ir_const_i32(f, 0), x), c->k));
            else
                x = irf_bin(f, IR_ADD, floor_div(f, x, c->k), ir_const_i32(f, 1));
            r = irf_bin(f, lower ? IR_MAX : IR_MIN, r, x);
        }
    return r;
}

/* The tightest bound of one side when every candidate compares symbolically with the others
 * (e.g. max(0, 8, 7, ..., -8) = 8); !ok otherwise. */
static aff symbolic_bound(bounds_ctx *b, const ir_stmt *s, const split *sp, bool lower)
{
    aff best = lower ? aff_of(&b->env, s->lo) : aff_add(aff_of(&b->env, s->hi), aff_const(-1));
    for (int i = 0; i < sp->n && best.ok; i++) {
        if (sp->c[i].lower != lower)
            continue;
        if (sp->c[i].k != 1)
            return (aff){ 0 };  /* a bound on k*v is not an affine bound on v */
        int ge = aff_ge(&sp->c[i].bound, &best);
        if (ge < 0)
            best.ok = false;
        else if (ge == (lower ? 1 : 0))
            best = sp->c[i].bound;
    }
    return best;
}

/* The tightest bound of one side among the constraints alone. For a loop whose own bound does
 * not compare with them (a tile's y from yo), it still bounds the border copies: the lower
 * border runs over the lattice points below the first one >= max(lo, B), so below B when it
 * runs at all; the interior lies above B. */
static aff constraint_bound(const split *sp, bool lower)
{
    aff best = { 0 };
    for (int i = 0; i < sp->n; i++) {
        const constraint *c = &sp->c[i];
        if (c->lower != lower)
            continue;
        if (c->k != 1)
            return (aff){ 0 };
        int ge = best.ok ? aff_ge(&c->bound, &best) : 1;
        if (ge < 0)
            return (aff){ 0 };
        if (!best.ok || ge == (lower ? 1 : 0))
            best = c->bound;
    }
    return best;
}

/* Runs `bounds_stmt` on a loop copy with its variable's symbolic range in the environment, so
 * tests that are decided on a border (x < 8 there) fold away. */
static ir_stmt *with_range(bounds_ctx *b, ir_stmt *loop, aff lo, aff hi)
{
    if (!lo.ok || !hi.ok)
        return bounds_stmt(b, loop);  /* the loop's own bounds give its range */
    int id = loop->var->id;
    aff_env_reserve(&b->env, b->f->n_vars);
    aff *old_lo = b->env.lo[id], *old_hi = b->env.hi[id];
    b->env.lo[id] = pf_arena_memdup(b->f->arena, &lo, sizeof lo);
    b->env.hi[id] = pf_arena_memdup(b->f->arena, &hi, sizeof hi);
    loop->then_s = bounds_stmt(b, loop->then_s);
    b->env.lo[id] = old_lo;
    b->env.hi[id] = old_hi;
    return loop;
}

/* ---- the two border parts as one loop ---- */

/* Whether the iterations of the loop sp describes may run in any order, so that its two
 * border parts can run as one loop before its interior: every store writes a location no
 * other iteration writes (an index k*v + terms fixed outside the body, k != 0; or a buffer
 * allocated inside the body), nothing the loop writes is read in it, nothing outside it is
 * assigned (mutables, arrays), and there are no runtime calls, scatters or on-demand reads
 * (whose congruence simplification wants the loop variable as a loop variable). */
typedef struct order_free {
    bounds_ctx *b;
    const split *sp;
    char *loaded, *stored, *local;  /* by buffer id */
    bool ok;
} order_free;

static void order_expr(order_free *o, const ir_expr *e)
{
    if (!e)
        return;
    if (e->kind == IR_INTERP)
        o->ok = false;
    if (e->kind == IR_LOAD)
        o->loaded[e->buf->id] = 1;
    order_expr(o, e->a);
    order_expr(o, e->b);
    order_expr(o, e->c);
    for (int i = 0; i < e->n_args; i++)
        order_expr(o, e->args[i]);
}

/* A store at an index that only iteration v writes: k*v plus terms fixed outside the body. */
static bool own_store(order_free *o, const ir_stmt *s)
{
    if (o->local[s->buf->id])
        return true;
    for (int d = 0; d < s->n && !s->scatter; d++) {
        aff a = aff_of(&o->b->env, s->idx[d]);
        if (!a.ok || aff_coef(&a, o->sp->v) == 0)
            continue;
        aff rest = aff_drop(a, o->sp->v);
        if (outside(o->sp, &rest))
            return true;
    }
    return false;
}

static void order_stmt(order_free *o, const ir_stmt *s)
{
    if (!s || !o->ok)
        return;
    switch (s->kind) {
    case IR_S_ASSIGN: case IR_S_ARRAY_STORE: case IR_S_SORT:
        o->ok &= o->sp->inner_mark[s->var->id] != 0;
        break;
    case IR_S_STORE:
        o->stored[s->buf->id] = 1;
        o->ok &= own_store(o, s);
        for (int d = 0; d < s->n; d++)
            order_expr(o, s->idx[d]);
        break;
    case IR_S_ALLOC:
        o->local[s->buf->id] = 1;
        break;
    case IR_S_RTCALL:
        o->ok = false;
        break;
    default:
        break;
    }
    order_expr(o, s->value);
    order_expr(o, s->index);
    order_expr(o, s->lo);
    order_expr(o, s->hi);
    order_expr(o, s->step);
    order_expr(o, s->cond);
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        order_stmt(o, s->body[i]);
    if (s->kind != IR_S_BLOCK) {
        order_stmt(o, s->then_s);
        order_stmt(o, s->else_s);
    }
}

static bool any_order(bounds_ctx *b, const ir_stmt *s, const split *sp)
{
    if (s->banded)
        return false;  /* pass_bands reads the row loop as it is */
    for (int i = 0; i < sp->n_all; i++)
        if (sp->all[i].dim < 0)
            return false;  /* a test on v: each border part folds it (blur's black frame) */
    size_t n = (size_t)b->f->n_buffers + 1;
    order_free o = { b, sp, pf_xcalloc(n, 1), pf_xcalloc(n, 1), pf_xcalloc(n, 1), true };
    order_stmt(&o, s->then_s);
    for (int id = 0; o.ok && id < b->f->n_buffers; id++)
        o.ok = !(o.loaded[id] && o.stored[id] && !o.local[id]);
    free(o.loaded);
    free(o.stored);
    free(o.local);
    return o.ok;
}

/* Iterations of a loop from `from` below `to` by step: max(ceil((to - from) / step), 0). */
static ir_expr *trips(ir_func *f, ir_expr *from, ir_expr *to, ir_expr *step)
{
    ir_expr *span = irf_bin(f, IR_ADD, irf_bin(f, IR_SUB, to, from),
                            irf_bin(f, IR_SUB, step, ir_const_i32(f, 1)));
    return irf_bin(f, IR_MAX, irf_bin(f, IR_DIV, span, step), ir_const_i32(f, 0));
}

/* The border parts [lo, pre_hi) and [mid_hi, hi) of loop s as one loop over a counter k,
 * v = k < n_pre ? lo + k*step : mid_hi + (k - n_pre)*step: one copy of the body (with all its
 * checks) instead of two. The bilateral grid's blurs split in y and z, so each of their
 * border parts held a vector loop and its scalar tail. */
static ir_stmt *border_loop(bounds_ctx *b, const ir_stmt *s, ir_list *out, ir_expr *lo,
                            ir_expr *pre_hi, ir_expr *mid_hi, ir_expr *hi)
{
    ir_func *f = b->f;
    ir_expr *step = s->step;
    ir_expr *n_pre = let(b, out, "border_n", trips(f, lo, pre_hi, step));
    ir_var *k = ir_var_new(f, "border", IR_I32, IR_VAR_LOOP);
    ir_var *v = ir_var_new(f, s->var->name, IR_I32, IR_VAR_LET);
    ir_expr *kr = ir_ref(f, k);
    ir_expr *first = irf_bin(f, IR_ADD, lo, irf_bin(f, IR_MUL, kr, step));
    ir_expr *second = irf_bin(f, IR_ADD, mid_hi,
                              irf_bin(f, IR_MUL, irf_bin(f, IR_SUB, kr, n_pre), step));
    ir_subst sub;
    ir_subst_init(&sub, f);
    sub.to[s->var->id] = ir_ref(f, v);
    ir_list body = { 0 };
    ir_list_push(f, &body, ir_let(f, v, irf_select(f, irf_bin(f, IR_LT, kr, n_pre), first,
                                                     second)));
    ir_list_push(f, &body, ir_clone_stmt(f, &sub, s->then_s));
    ir_subst_free(&sub);
    ir_stmt *r = pf_arena_memdup(f->arena, s, sizeof *s);
    r->var = k;
    r->lo = ir_const_i32(f, 0);
    r->hi = irf_bin(f, IR_ADD, n_pre, trips(f, mid_hi, hi, step));
    r->step = ir_const_i32(f, 1);
    r->align = NULL;
    r->then_s = ir_list_block(f, &body);
    return loop_part(b, r, true);
}

static ir_stmt *split_loop(bounds_ctx *b, const ir_stmt *s, const split *sp)
{
    ir_func *f = b->f;
    ir_list out = { 0 };
    /* lo no higher than hi: the parts' bounds subtract lo from hi, and those of an empty loop
     * may be 2^32 apart (an over range from 2^31 - 1 down to -2^31), which wraps in i32 */
    ir_expr *hi = let(b, &out, "hi", s->hi), *step = s->step;
    ir_expr *lo = let(b, &out, "lo", irf_bin(f, IR_MIN, s->lo, hi));
    aff a_s = symbolic_bound(b, s, sp, true), b_s = symbolic_bound(b, s, sp, false);
    ir_expr *a = irf_bin(f, IR_MIN, a_s.ok ? irf_bin(f, IR_MAX, aff_to_expr(f, &a_s), lo)
                                           : bound_expr(b, sp, true, lo), hi);
    ir_expr *mid_lo = let(b, &out, "interior_lo", align_up(f, a, lo, step));
    ir_expr *ub = b_s.ok ? irf_bin(f, IR_ADD, aff_to_expr(f, &b_s), ir_const_i32(f, 1))
                         : bound_expr(b, sp, false, hi);
    ir_expr *e = irf_bin(f, IR_MAX, irf_bin(f, IR_MIN, ub, hi), mid_lo);
    ir_expr *mid_hi = let(b, &out, "interior_hi", align_up(f, e, mid_lo, step));
    ir_expr *pre_hi = irf_bin(f, IR_MIN, mid_lo, hi), *in_hi = irf_bin(f, IR_MIN, mid_hi, hi);
    /* Symbolic ranges of the three parts (sound supersets of their iterations). */
    aff slo = aff_bound(&b->env, s->lo, true),
        shi = aff_add(aff_bound(&b->env, s->hi, false), aff_const(-1));
    aff a_sym = symbolic_bound(b, s, sp, true), b_sym = symbolic_bound(b, s, sp, false);
    if (!a_sym.ok)
        a_sym = constraint_bound(sp, true);
    if (!b_sym.ok)
        b_sym = constraint_bound(sp, false);
    aff none = { 0 };
    bool merge = !b->no_merge && any_order(b, s, sp);
    b->in_border++;
    if (merge)
        ir_list_push(f, &out, bounds_stmt(b, border_loop(b, s, &out, lo, pre_hi, mid_hi, hi)));
    else
        ir_list_push(f, &out, with_range(b, loop_copy(b, s, lo, pre_hi, s->then_s, true), slo,
                                         a_sym.ok ? aff_add(a_sym, aff_const(-1)) : none));
    b->in_border--;
    ir_list_push(f, &out, with_range(b, loop_copy(b, s, mid_lo, in_hi,
                                                  interior_stmt(b, sp, s->then_s), false),
                                     a_sym, b_sym));
    if (!merge) {
        b->in_border++;
        ir_list_push(f, &out, with_range(b, loop_copy(b, s, mid_hi, hi, s->then_s, true),
                                         b_sym.ok ? aff_add(b_sym, aff_const(1)) : none, shi));
        b->in_border--;
    }
    b->splits++;
    b->merged += merge;
    return ir_list_block(f, &out);
}

/* Keeps a comparison's constraint only when the load/store constraints already imply it, so
 * folding it in the interior never shrinks the interior (a test like `x < 8` would). */
static void keep_implied_comparisons(split *sp)
{
    int k = 0;
    for (int i = 0; i < sp->n; i++) {
        const constraint *c = &sp->c[i];
        bool keep = c->dim >= 0;
        for (int j = 0; j < sp->n && !keep; j++) {
            const constraint *l = &sp->c[j];
            if (l->dim < 0 || l->lower != c->lower || l->k != c->k)
                continue;
            keep = c->lower ? aff_ge(&l->bound, &c->bound) == 1
                            : aff_ge(&c->bound, &l->bound) == 1;
        }
        if (keep)
            sp->c[k++] = *c;
    }
    sp->n = k;
}

/* Drops constraints implied by a tighter comparable one on the same side (x >= 8 makes x >= 7
 * redundant), so the interior bounds are short min/max chains. */
static void drop_redundant(split *sp)
{
    int k = 0;
    for (int i = 0; i < sp->n; i++) {
        const constraint *c = &sp->c[i];
        bool redundant = false;
        for (int j = 0; j < sp->n && !redundant; j++) {
            const constraint *o = &sp->c[j];
            if (j == i || o->lower != c->lower || o->k != c->k)
                continue;
            int ge = c->lower ? aff_ge(&o->bound, &c->bound) : aff_ge(&c->bound, &o->bound);
            /* o is at least as tight; on ties keep the first */
            int eq = aff_ge(&o->bound, &c->bound) == 1 && aff_ge(&c->bound, &o->bound) == 1;
            redundant = ge == 1 && (!eq || j < i);
        }
        if (!redundant)
            sp->c[k++] = *c;
    }
    sp->n = k;
}

/* A loop is worth splitting when some check depends on v + offset and the interior is not
 * provably the whole loop already (then the proofs below clear the checks anyway). */
static bool worth_splitting(bounds_ctx *b, const ir_stmt *s, const split *sp)
{
    if (sp->n_loads == 0)
        return false;
    aff lo = aff_bound(&b->env, s->lo, true),
        hi = aff_add(aff_bound(&b->env, s->hi, false), aff_const(-1)), mn, mx;
    /* over the enclosing loops' ranges: x from xo is >= 0 because xo is */
    if (lo.ok && aff_range(&b->env, &lo, &mn, &mx))
        lo = mn;
    if (hi.ok && aff_range(&b->env, &hi, &mn, &mx))
        hi = mx;
    for (int i = 0; i < sp->n; i++) {
        const constraint *c = &sp->c[i];
        aff klo = aff_scale(lo, c->k), khi = aff_scale(hi, c->k);
        int ge = c->lower ? aff_ge(&klo, &c->bound) : aff_ge(&c->bound, &khi);
        if (ge != 1)
            return true;
    }
    return false;
}

/* Loops of a few constant iterations (a window loop over -4 .. 4) are not split: once the
 * pixel loops around them are, they keep checks only in the pixels' border copies, where
 * three copies of each window loop would multiply the code (and the compile time) to save a
 * few tests on a few pixels. Neither are loops with loops in their bodies inside a border copy
 * (b->in_border): a band of a few rows, where splitting x as well would make nine copies of a
 * 2-D stencil's window loops (the 9x9 median: 12 bodies with the vector loops' tails, 2.5
 * times its compile time). */
#define MAX_UNSPLIT_TRIPS 16

static bool short_loop(const ir_stmt *s)
{
    int64_t lo, hi, step;
    return ir_is_const(s->lo, &lo) && ir_is_const(s->hi, &hi) && ir_is_const(s->step, &step) &&
           step > 0 && (hi - lo + step - 1) / step <= MAX_UNSPLIT_TRIPS;
}

/* The constraints on loop s's variable from its body (the caller frees it with free_split). */
static split *collect_split(bounds_ctx *b, const ir_stmt *s)
{
    split *sp = pf_xcalloc(1, sizeof *sp);
    char *mark = pf_xcalloc((size_t)b->f->n_vars + 1, 1);
    ir_defined_vars(s->then_s, mark);
    sp->v = s->var;
    sp->inner_mark = mark;
    collect_stmt(b, sp, s->then_s);
    keep_implied_comparisons(sp);
    return sp;
}

static void free_split(split *sp)
{
    free((char *)sp->inner_mark);
    free(sp);
}

/* Whether a vectorized loop in s whose body has loops (a stencil's window loops) has checks on
 * its own variable (pass_bounds will split it). */
static bool vector_loop_splits(bounds_ctx *b, const ir_stmt *s)
{
    if (!s)
        return false;
    if (s->kind == IR_S_FOR && s->loop_kind == IR_LOOP_VECTORIZED && !short_loop(s) &&
        ir_has_loop(s->then_s)) {
        split *sp = collect_split(b, s);
        drop_redundant(sp);
        bool splits = worth_splitting(b, s, sp);
        free_split(sp);
        if (splits)
            return true;
    }
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        if (vector_loop_splits(b, s->body[i]))
            return true;
    return s->kind != IR_S_BLOCK &&
           (vector_loop_splits(b, s->then_s) || vector_loop_splits(b, s->else_s));
}

/* A loop whose checks all sit inside a vectorized loop of its body (tests and reads of y + r
 * in a loop vectorized over x) is not split when that loop is split itself and has window
 * loops: per vector those checks are a scalar test or a clamped row pointer, while splitting
 * both loops would make nine copies of the body and its loops, three of them vector code (the
 * 9x9 median: 17% of its compile time, run time unchanged). Straight-line bodies (unrolled
 * taps) are cheap to copy and split as before. */
static bool checks_only_in_split_vector_loop(bounds_ctx *b, const ir_stmt *s, const split *sp)
{
    return sp->n_all > 0 && sp->outside_vector == 0 && vector_loop_splits(b, s->then_s);
}

static ir_stmt *bounds_for(bounds_ctx *b, const ir_stmt *s)
{
    /* (a loop with 64-bit bounds is not split: its parts' arithmetic would be i32) */
    if (!b->gpu && !s->no_split && !short_loop(s) && !(b->in_border && ir_has_loop(s->then_s)) &&
        s->hi->type == IR_I32) {
        split *sp = collect_split(b, s);
        sp->n_all = sp->n;
        memcpy(sp->all, sp->c, sizeof *sp->c * (size_t)sp->n);
        drop_redundant(sp);
        ir_stmt *r = worth_splitting(b, s, sp) && !checks_only_in_split_vector_loop(b, s, sp)
                         ? split_loop(b, s, sp) : NULL;
        free_split(sp);
        if (r)
            return r;
    }
    ir_stmt *r = pf_arena_memdup(b->f->arena, s, sizeof *s);
    aff lo = aff_bound(&b->env, s->lo, true),
        hi = aff_add(aff_bound(&b->env, s->hi, false), aff_const(-1));
    int id = s->var->id;
    aff_env_reserve(&b->env, b->f->n_vars);
    aff *old_lo = b->env.lo[id], *old_hi = b->env.hi[id];
    if (lo.ok && hi.ok) {
        b->env.lo[id] = pf_arena_memdup(b->f->arena, &lo, sizeof lo);
        b->env.hi[id] = pf_arena_memdup(b->f->arena, &hi, sizeof hi);
    }
    r->then_s = bounds_stmt(b, s->then_s);
    b->env.lo[id] = old_lo;
    b->env.hi[id] = old_hi;
    return r;
}

/* ---- proofs over the enclosing loop ranges ---- */

static bool provably_inside(bounds_ctx *b, const ir_buffer *buf, int d, const ir_expr *index)
{
    aff zero = aff_const(0);
    aff last = aff_add(aff_of(&b->env, ir_ref(b->f, buf->extent[d])), aff_const(-1));
    return last.ok && aff_prove_between(&b->env, index, &zero, &last);
}

/* Decides p < q or p <= q over the loop ranges when the ranges of p - q allow. */
static ir_expr *prove_compare(bounds_ctx *b, ir_expr *e)
{
    if ((e->op != IR_LT && e->op != IR_LE) || e->a->type != IR_I32)
        return e;
    aff d = aff_sub(aff_of(&b->env, e->a), aff_of(&b->env, e->b)), mn, mx;
    if (!aff_range(&b->env, &d, &mn, &mx) || mn.n || mx.n)
        return e;
    int64_t limit = e->op == IR_LT ? -1 : 0;  /* true iff p - q <= limit */
    if (mx.c <= limit)
        return ir_const_bool(b->f, true);
    if (mn.c > limit)
        return ir_const_bool(b->f, false);
    return e;
}

static ir_expr *prove_expr(bounds_ctx *b, ir_expr *e)
{
    if (!e)
        return NULL;
    ir_func *f = b->f;
    switch (e->kind) {
    case IR_LOAD:
    case IR_INTERP: {
        ir_expr **args = pf_arena_alloc(f->arena, sizeof *args * (size_t)e->n_args);
        uint8_t mask = e->clamp_mask;
        for (int d = 0; d < e->n_args; d++) {
            args[d] = prove_expr(b, e->args[d]);
            if ((mask & (1u << d)) && provably_inside(b, logical(e), d, args[d])) {
                mask &= (uint8_t)~(1u << d);
                b->cleared++;
            }
        }
        return ir_with_args(f, e, args, mask);
    }
    case IR_BIN: {
        ir_expr *r = irf_bin(f, e->op, prove_expr(b, e->a), prove_expr(b, e->b));
        return r->kind == IR_BIN ? prove_compare(b, r) : r;
    }
    case IR_UN:
        return irf_un(f, e->op, prove_expr(b, e->a));
    case IR_SELECT:
        return irf_select(f, prove_expr(b, e->a), prove_expr(b, e->b), prove_expr(b, e->c));
    case IR_CAST:
        return irf_cast(f, e->type, prove_expr(b, e->a));
    case IR_ALOAD:
        return ir_aload(f, e->var, prove_expr(b, e->a));
    case IR_CALL: {
        ir_expr **args = pf_arena_alloc(f->arena, sizeof *args * (size_t)(e->n_args + 1));
        for (int i = 0; i < e->n_args; i++)
            args[i] = prove_expr(b, e->args[i]);
        return ir_with_args(f, e, args, 0);
    }
    default:
        return e;
    }
}

/* ---- GPU IR: tests as ranges ----
 * GPU loops are never split (a block's threads run one body), so the interior copy whose
 * tests fold never exists there. Instead a test `a <= v`, `a < v`, `v < b`, `v <= b` (or a
 * conjunction of them) on a loop variable v narrows v's range inside its then-branch, where it
 * holds: the blur's `if (x >= 8 && x < W - 8)` proves its taps in[x - 8] .. in[x + 8] inside
 * the image, and their clamps go. */

#define MAX_NARROWED 8

typedef struct narrowed {
    int n;
    struct { int id; aff *lo, *hi; } old[MAX_NARROWED];
} narrowed;

/* v's range gets the bound `v >= a` (lower) or `v <= a`, where it is the tighter one or the
 * old one cannot be compared with it (either holds in the then-branch). */
static void narrow_var(bounds_ctx *b, const ir_var *v, aff a, bool lower, narrowed *n)
{
    int id = v->id;
    aff **slot = lower ? &b->env.lo[id] : &b->env.hi[id];
    if (!a.ok || aff_mentions(&a, v) || !fits_code(&a) || !*slot || n->n == MAX_NARROWED)
        return;
    if (lower ? aff_ge(*slot, &a) == 1 : aff_ge(&a, *slot) == 1)
        return;
    n->old[n->n].id = id;
    n->old[n->n].lo = b->env.lo[id];
    n->old[n->n].hi = b->env.hi[id];
    n->n++;
    *slot = pf_arena_memdup(b->f->arena, &a, sizeof a);
}

static bool loop_var(const ir_expr *e)
{
    return e->kind == IR_VARREF && e->var->kind == IR_VAR_LOOP && e->type == IR_I32;
}

static void narrow(bounds_ctx *b, const ir_expr *c, narrowed *n)
{
    if (c->kind != IR_BIN)
        return;
    if (c->op == IR_AND) {
        narrow(b, c->a, n);
        narrow(b, c->b, n);
        return;
    }
    if ((c->op != IR_LT && c->op != IR_LE) || c->a->type != IR_I32)
        return;
    int64_t strict = c->op == IR_LT;  /* p < q: p <= q - 1 */
    if (loop_var(c->a))  /* v <= q (- 1) */
        narrow_var(b, c->a->var, aff_add(aff_of(&b->env, c->b), aff_const(-strict)), false, n);
    if (loop_var(c->b))  /* v >= p (+ 1) */
        narrow_var(b, c->b->var, aff_add(aff_of(&b->env, c->a), aff_const(strict)), true, n);
}

static void restore(bounds_ctx *b, const narrowed *n)
{
    for (int i = n->n - 1; i >= 0; i--) {
        b->env.lo[n->old[i].id] = n->old[i].lo;
        b->env.hi[n->old[i].id] = n->old[i].hi;
    }
}

static ir_stmt *bounds_stmt(bounds_ctx *b, const ir_stmt *s)
{
    if (!s)
        return NULL;
    ir_func *f = b->f;
    if (s->kind == IR_S_FOR)
        return bounds_for(b, s);
    ir_stmt *r = pf_arena_memdup(f->arena, s, sizeof *s);
    switch (s->kind) {
    case IR_S_BLOCK:
        r->body = pf_arena_alloc(f->arena, sizeof *r->body * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->body[i] = bounds_stmt(b, s->body[i]);
        return r;
    case IR_S_STORE:
        r->idx = pf_arena_alloc(f->arena, sizeof *r->idx * (size_t)s->n);
        for (int d = 0; d < s->n; d++) {
            r->idx[d] = prove_expr(b, s->idx[d]);
            if ((r->check_mask & (1u << d)) && provably_inside(b, s->buf, d, r->idx[d]))
                r->check_mask &= (uint8_t)~(1u << d);
        }
        r->value = prove_expr(b, s->value);
        return r;
    case IR_S_IF: {
        r->cond = prove_expr(b, s->cond);
        int64_t k;
        if (ir_is_const(r->cond, &k)) {
            const ir_stmt *taken = k ? s->then_s : s->else_s;
            return taken ? bounds_stmt(b, taken) : ir_block(f, 0, NULL);
        }
        narrowed n = { 0 };
        if (b->gpu)
            narrow(b, r->cond, &n);
        r->then_s = bounds_stmt(b, s->then_s);
        restore(b, &n);
        r->else_s = bounds_stmt(b, s->else_s);
        return r;
    }
    case IR_S_ALLOC:
        r->then_s = bounds_stmt(b, s->then_s);
        return r;
    default:
        r->value = prove_expr(b, s->value);
        r->index = prove_expr(b, s->index);
        return r;
    }
}

static ir_func *bounds_pass(ir_func *f, bool merge_borders, bool gpu, pf_pass_stats *stats)
{
    bounds_ctx b = { 0 };
    b.f = f;
    b.no_merge = !merge_borders;
    b.gpu = gpu;
    aff_env_init(&b.env, f->n_vars);
    aff_env_record_lets(&b.env, f->body);
    ir_func *r = pf_arena_memdup(f->arena, f, sizeof *f);
    b.f = r;
    r->body = bounds_stmt(&b, f->body);
    aff_env_free(&b.env);
    if (stats) {
        stats->loops_split += b.splits;
        stats->checks_removed += b.cleared;
        stats->borders_merged += b.merged;
    }
    return r;
}

ir_func *pf_pass_bounds(ir_func *f, bool merge_borders, pf_pass_stats *stats)
{
    return bounds_pass(f, merge_borders, false, stats);
}

ir_func *pf_pass_bounds_gpu(ir_func *f, pf_pass_stats *stats)
{
    return bounds_pass(f, false, true, stats);
}
