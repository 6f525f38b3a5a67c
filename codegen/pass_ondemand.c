/* On-demand reconstruction and congruence simplification (paper Section 3.3; the semantics are
 * docs/perforation.md §4).
 *
 * Needs: pass_bounds has run, so an IR_INTERP whose clamp bit along d is clear reads inside the
 * image along d.
 * Guarantees: no IR_INTERP remains. Each becomes loads of the downsampled storage and the
 * blend of §4. Where Z3 proves that the lattice offset t = i - lo is congruent to a constant R
 * modulo step * spacing for every iteration of the enclosing loops, the weights are constants:
 *   A<linear>[x + 2, y]  with  x ≡ 0 (mod 4), spacing (4, 1)
 * becomes
 *   0.5f * A_grid[(x + 2 - 2) / 4, y] + 0.5f * A_grid[min((x + 2 - 2) / 4 + 1, n' - 1), y]
 * and a read that lands on a sample (R = 0) becomes one plain load. */
#include "codegen/passes.h"

#include "base/arena.h"
#include "codegen/affine.h"
#include "codegen/ir_simplify.h"
#include "reconstruct/congruence.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOOPS 32

typedef struct loop_fact {
    const ir_var *var;
    pf_cfact fact;
} loop_fact;

typedef struct od_ctx {
    ir_func *f;
    aff_env env;                 /* let values, for expanding indices */
    bool congruence;             /* false: congruence simplification off */
    pf_congruence_ctx *z3;       /* this thread's context, made by the first proof: a Z3
                                  * context costs ~20 MB, and most programs ask for none */
    int n_loops;
    loop_fact loops[MAX_LOOPS];  /* the enclosing loops, outermost first */
    pf_arena scratch;            /* pf_cexpr nodes */
    pf_pass_stats *stats;
} od_ctx;

/* ---- the per-thread Z3 context (its proof cache outlives compilations) ---- */

static pthread_key_t z3_key;
static pthread_once_t z3_once = PTHREAD_ONCE_INIT;

static void free_z3(void *p)
{
    pf_congruence_free(p);
}

static void make_z3_key(void)
{
    pthread_key_create(&z3_key, free_z3);
}

static pf_congruence_ctx *thread_z3(void)
{
    pthread_once(&z3_once, make_z3_key);
    pf_congruence_ctx *z = pthread_getspecific(z3_key);
    if (!z) {
        z = pf_congruence_new(NULL);
        pthread_setspecific(z3_key, z);
    }
    return z;
}

/* ---- IR indices as Z3-ready expressions ---- */

static int loop_index(const od_ctx *c, const ir_var *v)
{
    for (int i = 0; i < c->n_loops; i++)
        if (c->loops[i].var == v)
            return i;
    return -1;
}

static const pf_cexpr *to_cexpr(od_ctx *c, const ir_expr *e, int depth)
{
    pf_arena *a = &c->scratch;
    int64_t k;
    if (depth > 32 || (e->type != IR_I32 && e->type != IR_I64))
        return pf_ce_opaque(a);
    if (ir_is_const(e, &k))
        return pf_ce_const(a, k);
    switch (e->kind) {
    case IR_VARREF: {
        int li = loop_index(c, e->var);
        if (li >= 0)
            return pf_ce_var(a, li);
        const ir_expr *def = e->var->id < c->env.n_vars ? c->env.let_value[e->var->id] : NULL;
        return (e->var->kind == IR_VAR_LET && def) ? to_cexpr(c, def, depth + 1)
                                                   : pf_ce_opaque(a);
    }
    case IR_UN:
        return e->op == IR_NEG ? pf_ce_neg(a, to_cexpr(c, e->a, depth + 1)) : pf_ce_opaque(a);
    case IR_CAST:
        return to_cexpr(c, e->a, depth + 1);
    case IR_BIN: {
        static const pf_cexpr_kind kinds[] = {
            [IR_ADD] = PF_CE_ADD, [IR_SUB] = PF_CE_SUB, [IR_MUL] = PF_CE_MUL,
            [IR_DIV] = PF_CE_DIV, [IR_MOD] = PF_CE_MOD, [IR_MIN] = PF_CE_MIN,
            [IR_MAX] = PF_CE_MAX };
        if (e->op > IR_MAX)
            return pf_ce_opaque(a);
        return pf_ce_bin(a, kinds[e->op], to_cexpr(c, e->a, depth + 1),
                         to_cexpr(c, e->b, depth + 1));
    }
    default:
        return pf_ce_opaque(a);
    }
}

/* Proves t = i - lo ≡ R (mod m); returns R, or -1 when not provable. */
static int64_t prove_residue(od_ctx *c, const ir_expr *i, const ir_expr *lo, int64_t m)
{
    if (!c->congruence || m <= 1)
        return m == 1 ? 0 : -1;
    if (!c->z3 && !(c->z3 = thread_z3()))
        return -1;
    pf_cfact facts[MAX_LOOPS];
    for (int k = 0; k < c->n_loops; k++)
        facts[k] = c->loops[k].fact;
    pf_cfacts fs = { facts, c->n_loops };
    const pf_cexpr *t = pf_ce_sub(&c->scratch, to_cexpr(c, i, 0), to_cexpr(c, lo, 0));
    pf_cong_result r;
    if (pf_congruence_prove(c->z3, t, &fs, m, &r) != PF_CONG_PROVEN)
        return -1;
    if (c->stats)
        c->stats->congruences_proven++;
    return r.residue;
}

/* ---- expansion ---- */

typedef struct od_dim {
    ir_expr *q, *q1;   /* storage indices of the lower and upper neighbours */
    ir_expr *w;        /* f32 weight of q1 (NULL: no blend along this dimension) */
    ir_expr *r_zero;   /* bool: r == 0 (runtime), or NULL when known */
} od_dim;

static ir_expr *i32(od_ctx *c, int64_t v)
{
    return ir_const_i32(c->f, (int32_t)v);
}

/* Stage dimension d of the grid: fills D and ANDs the lattice test into *on. */
static void grid_dim(od_ctx *c, const ir_interp *g, const ir_buffer *store, int d, ir_expr *i,
                     bool in_range, od_dim *D, ir_expr **on)
{
    ir_func *f = c->f;
    int64_t st = -1, s = g->spacing[d];
    ir_expr *last = irf_bin(f, IR_SUB, ir_ref(f, store->extent[d]), i32(c, 1));
    ir_expr *t = irf_bin(f, IR_SUB, i, g->lo[d]);
    bool const_step = ir_is_const(g->step[d], &st);
    int64_t R = (in_range && const_step) ? prove_residue(c, i, g->lo[d], st * s) : -1;
    if (R >= 0 && R % st != 0) {  /* provably between lattice points: the exact value is 0 */
        *on = ir_const_bool(f, false);
        D->q = D->q1 = i32(c, 0);
        return;
    }
    ir_expr *u = irf_bin(f, IR_DIV, t, g->step[d]);
    if (g->check_lattice || !in_range) {
        ir_expr *ok = irf_bin(f, IR_AND, irf_bin(f, IR_LE, i32(c, 0), t),
                              irf_bin(f, IR_LT, u, g->n[d]));
        if (R < 0 && !(const_step && st == 1))
            ok = irf_bin(f, IR_AND, ok, irf_bin(f, IR_EQ, irf_bin(f, IR_MOD, t, g->step[d]),
                                                i32(c, 0)));
        *on = *on ? irf_bin(f, IR_AND, *on, ok) : ok;
    }
    /* An index inside the image of a whole-image lattice has its lower neighbour inside the
     * storage: t in [0, n), so t / (step * s) < ceil(n / s). */
    bool q_inside = in_range && !g->check_lattice;
    if (R >= 0) {  /* congruence simplification: constant residue and weights */
        int64_t r = (R / st) % s;
        D->q = irf_bin(f, IR_DIV, irf_bin(f, IR_SUB, t, i32(c, R)), i32(c, st * s));
        if (st * s > 1 && D->q->kind == IR_BIN && D->q->op == IR_DIV)
            D->q->exact = true;  /* proven: t - R is a multiple of step * s */
        if (!q_inside)
            D->q = irf_bin(f, IR_MIN, irf_bin(f, IR_MAX, D->q, i32(c, 0)), last);
        D->q1 = irf_bin(f, IR_MIN, irf_bin(f, IR_ADD, D->q, i32(c, 1)), last);
        if (r != 0)
            D->w = ir_const_f32(f, (float)r / (float)s);
        if (!g->linear && 2 * r > s)
            D->q = D->q1;
        return;
    }
    ir_expr *q = irf_bin(f, IR_DIV, u, i32(c, s)), *r = irf_bin(f, IR_MOD, u, i32(c, s));
    D->q = q_inside ? q : irf_bin(f, IR_MIN, irf_bin(f, IR_MAX, q, i32(c, 0)), last);
    D->q1 = irf_bin(f, IR_MIN, irf_bin(f, IR_ADD, D->q, i32(c, 1)), last);
    if (s == 1)
        return;
    if (!g->linear) {
        ir_expr *lower = irf_bin(f, IR_LE, irf_bin(f, IR_MUL, r, i32(c, 2)), i32(c, s));
        D->q = irf_select(f, lower, D->q, D->q1);
        return;
    }
    D->w = irf_bin(f, IR_DIV, irf_cast(f, IR_F32, r), ir_const_f32(f, (float)s));
    D->r_zero = irf_bin(f, IR_EQ, r, i32(c, 0));
}

/* L_d of §4: blend along stage dimension d, dimension 0 outermost. */
static ir_expr *blend(od_ctx *c, const ir_expr *x, const od_dim *D, ir_expr **idx, int d)
{
    ir_func *f = c->f;
    const ir_interp *g = x->interp;
    if (d == g->k)
        return ir_load(f, x->buf, idx, 0);
    ir_expr *saved = idx[d];
    idx[d] = D[d].q;
    ir_expr *a = blend(c, x, D, idx, d + 1);
    ir_expr *r = a;
    if (D[d].w) {
        idx[d] = D[d].q1;
        ir_expr *b = blend(c, x, D, idx, d + 1);
        ir_expr *one_w = irf_bin(f, IR_SUB, ir_const_f32(f, 1.0f), D[d].w);
        ir_expr *lerp = irf_bin(f, IR_ADD, irf_bin(f, IR_MUL, one_w, a),
                                irf_bin(f, IR_MUL, D[d].w, b));
        r = D[d].r_zero ? irf_select(f, D[d].r_zero, a, lerp) : lerp;
    }
    idx[d] = saved;
    return r;
}

/* Channel subsampling: channels >= c come from the reference image. */
static ir_expr *channel_fallback(od_ctx *c, const ir_expr *x, ir_expr **img_idx, ir_expr *v)
{
    ir_func *f = c->f;
    const ir_interp *g = x->interp;
    int cd = g->image->ndims - 1;
    ir_expr *ridx[IR_MAX_DIMS];
    for (int d = 0; d < g->ref->ndims; d++)
        ridx[d] = d < g->image->ndims ? img_idx[d] : i32(c, 0);
    ir_expr *ref = ir_load(f, g->ref, ridx, (uint8_t)((1u << g->ref->ndims) - 1));
    ir_expr *use_ref = irf_bin(f, IR_LE, i32(c, g->channels), img_idx[cd]);
    return irf_select(f, use_ref, ref, v);
}

static ir_expr *expand(od_ctx *c, const ir_expr *x)
{
    ir_func *f = c->f;
    const ir_interp *g = x->interp;
    const ir_buffer *img = g->image;
    ir_expr *inside = NULL, *on = NULL, *img_idx[IR_MAX_DIMS], *idx[IR_MAX_DIMS];
    od_dim D[IR_MAX_DIMS] = { 0 };
    for (int d = 0; d < img->ndims; d++) {
        bool clamp = (x->clamp_mask >> d) & 1;
        img_idx[d] = clamp ? irf_boundary_index(c->f, img, d, x->args[d], &inside) : x->args[d];
        if (d < g->k)
            grid_dim(c, g, x->buf, d, img_idx[d], !clamp, &D[d], &on);
        idx[d] = img_idx[d];
    }
    ir_expr *v = blend(c, x, D, idx, 0);
    if (g->channels > 0 && g->ref)
        v = channel_fallback(c, x, img_idx, v);
    if (on)
        v = irf_select(f, on, v, ir_const_f32(f, 0.0f));
    if (inside)
        v = irf_select(f, inside, v, ir_const_f32(f, img->constant_value));
    if (c->stats)
        c->stats->ondemand_reads++;
    return v;
}

static ir_expr *od_expr(od_ctx *c, ir_expr *e)
{
    if (!e)
        return NULL;
    ir_func *f = c->f;
    switch (e->kind) {
    case IR_BIN:
        return irf_bin(f, e->op, od_expr(c, e->a), od_expr(c, e->b));
    case IR_UN:
        return irf_un(f, e->op, od_expr(c, e->a));
    case IR_SELECT:
        return irf_select(f, od_expr(c, e->a), od_expr(c, e->b), od_expr(c, e->c));
    case IR_CAST:
        return irf_cast(f, e->type, od_expr(c, e->a));
    case IR_ALOAD:
        return ir_aload(f, e->var, od_expr(c, e->a));
    case IR_LOAD:
    case IR_CALL:
    case IR_INTERP: {
        ir_expr **args = pf_arena_alloc(f->arena, sizeof *args * (size_t)(e->n_args + 1));
        for (int i = 0; i < e->n_args; i++)
            args[i] = od_expr(c, e->args[i]);
        ir_expr *r = ir_with_args(f, e, args, e->clamp_mask);
        return e->kind == IR_INTERP ? expand(c, r) : r;
    }
    default:
        return e;
    }
}

/* A loop's congruence fact: var ≡ align (mod step), with its bounds when constant. */
static pf_cfact fact_of(const ir_stmt *s)
{
    pf_cfact fact = pf_cfact_any();
    int64_t step, align, lo, hi;
    const ir_expr *al = s->align ? s->align : s->lo;
    if (ir_is_const(s->step, &step) && step > 1 && ir_is_const(al, &align))
        fact = pf_cfact_mod(((align % step) + step) % step, step);
    if (ir_is_const(s->lo, &lo)) {
        fact.has_lo = true;
        fact.lo = lo;
    }
    if (ir_is_const(s->hi, &hi)) {
        fact.has_hi = true;
        fact.hi = hi - 1;
    }
    return fact;
}

static ir_stmt *od_stmt(od_ctx *c, const ir_stmt *s)
{
    if (!s)
        return NULL;
    ir_func *f = c->f;
    ir_stmt *r = pf_arena_memdup(f->arena, s, sizeof *s);
    switch (s->kind) {
    case IR_S_BLOCK:
        r->body = pf_arena_alloc(f->arena, sizeof *r->body * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->body[i] = od_stmt(c, s->body[i]);
        return r;
    case IR_S_FOR:
        r->lo = od_expr(c, s->lo);
        r->hi = od_expr(c, s->hi);
        if (c->n_loops < MAX_LOOPS) {
            c->loops[c->n_loops].var = s->var;
            c->loops[c->n_loops++].fact = fact_of(s);
            r->then_s = od_stmt(c, s->then_s);
            c->n_loops--;
        } else {
            r->then_s = od_stmt(c, s->then_s);
        }
        return r;
    case IR_S_IF:
        r->cond = od_expr(c, s->cond);
        r->then_s = od_stmt(c, s->then_s);
        r->else_s = od_stmt(c, s->else_s);
        return r;
    case IR_S_ALLOC:
        r->then_s = od_stmt(c, s->then_s);
        return r;
    case IR_S_STORE:
        r->idx = pf_arena_alloc(f->arena, sizeof *r->idx * (size_t)s->n);
        for (int d = 0; d < s->n; d++)
            r->idx[d] = od_expr(c, s->idx[d]);
        r->value = od_expr(c, s->value);
        return r;
    case IR_S_RTCALL:
        r->args = pf_arena_alloc(f->arena, sizeof *r->args * (size_t)(s->n + 1));
        for (int i = 0; i < s->n; i++)
            r->args[i] = od_expr(c, s->args[i]);
        return r;
    default:
        r->value = od_expr(c, s->value);
        r->index = od_expr(c, s->index);
        return r;
    }
}

ir_func *pf_pass_ondemand(ir_func *f, bool congruence, pf_pass_stats *stats)
{
    od_ctx c = { 0 };
    c.f = f;
    c.stats = stats;
    c.congruence = congruence;
    aff_env_init(&c.env, f->n_vars);
    aff_env_record_lets(&c.env, f->body);
    pf_arena_init(&c.scratch);
    ir_func *r = pf_arena_memdup(f->arena, f, sizeof *f);
    r->body = od_stmt(&c, f->body);
    pf_arena_free(&c.scratch);
    aff_env_free(&c.env);
    return r;
}
