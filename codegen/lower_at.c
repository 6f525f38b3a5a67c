/* Compute-at (Halide's compute_at with recomputation; docs/schedule.md "Execution"): a
 * producer stage scheduled `at` its sole consumer is lowered inside the consumer's tile loop,
 * over just the region of its image that the tile reads (with the halo its stencil needs,
 * recomputed by neighbouring tiles), and its image (its downsampled storage when on demand)
 * lives in a scratch window of that region allocated per tile. The schedule's validation
 * (perforate/exec.c) admits only producers for which that is sound, and the plan says which
 * of them may keep their image in such a window (pf_plan_stage.scratch_ok).
 *
 * Bounds inference: every read of the producer's image in the consumer's body gives, per
 * dimension, an interval of its index over the consumer's loop ranges (interval arithmetic on
 * the AST: sums, differences, products and quotients by constants, reduction variables with
 * their ranges). A read it cannot bound makes the region the whole dimension. */
#include "codegen/lower_internal.h"
#include "codegen/affine.h"

#include "base/error.h"
#include "lang/walk.h"
#include "perforate/exec.h"

#include <stdio.h>

typedef struct ival {
    bool ok;
    ir_expr *lo, *hi;
} ival;

/* What is known of a variable inside the tile (ok false: nothing, it is unbounded). */
typedef struct var_range {
    const pf_symbol *sym;
    bool ok;
    ir_expr *lo, *hi;
} var_range;

#define MAX_RANGES 64

typedef struct region_ctx {
    lower_ctx *c;
    const pf_image_decl *img;   /* the producer's image */
    int n, n_over;              /* ranges in r; variables in scope beyond MAX_RANGES */
    var_range r[MAX_RANGES];
    ir_expr *lo[IR_MAX_DIMS], *hi[IR_MAX_DIMS];
    bool whole[IR_MAX_DIMS];
    bool any;
} region_ctx;

static ival fail(void)
{
    ival v = { false, NULL, NULL };
    return v;
}

static ival point(ir_expr *e)
{
    ival v = { true, e, e };
    return v;
}

static ival interval(region_ctx *R, const pf_expr *e);

/* Value of a symbol that is the same everywhere in the tile (sizes, params, consts, scalars). */
static bool uniform_symbol(const pf_symbol *s)
{
    return s->kind == PF_SYM_SIZE || s->kind == PF_SYM_PARAM || s->kind == PF_SYM_CONST ||
           s->kind == PF_SYM_SCALAR;
}

static ival name_interval(region_ctx *R, const pf_expr *e)
{
    for (int i = R->n - 1; i >= 0; i--)
        if (R->r[i].sym == e->sym) {
            ival v = { R->r[i].ok, R->r[i].lo, R->r[i].hi };
            return v;
        }
    if (uniform_symbol(e->sym))
        return point(lower_expr_as(R->c, e, IR_I32));
    return fail();
}

static bool const_int(region_ctx *R, const pf_expr *e, int64_t *k)
{
    if (e->type != PF_T_INT)
        return false;
    if (e->kind == PF_E_INT) {
        *k = e->ival;
        return true;
    }
    if (e->kind == PF_E_NAME && e->sym && (e->sym->kind == PF_SYM_CONST ||
                                           e->sym->kind == PF_SYM_PARAM)) {
        ir_expr *v = lower_expr_as(R->c, e, IR_I32);
        return ir_is_const(v, k);
    }
    return false;
}

static ival binary_interval(region_ctx *R, const pf_expr *e)
{
    ir_func *f = R->c->f;
    int64_t k;
    if (e->op == PF_OP_ADD || e->op == PF_OP_SUB) {
        ival a = interval(R, e->a), b = interval(R, e->b);
        if (!a.ok || !b.ok)
            return fail();
        ival r = { true, NULL, NULL };
        if (e->op == PF_OP_ADD) {
            r.lo = irf_bin(f, IR_ADD, a.lo, b.lo);
            r.hi = irf_bin(f, IR_ADD, a.hi, b.hi);
        } else {
            r.lo = irf_bin(f, IR_SUB, a.lo, b.hi);
            r.hi = irf_bin(f, IR_SUB, a.hi, b.lo);
        }
        return r;
    }
    if (e->op == PF_OP_MUL && (const_int(R, e->b, &k) || const_int(R, e->a, &k))) {
        ival a = interval(R, const_int(R, e->b, &k) ? e->a : e->b);
        if (!a.ok)
            return fail();
        ir_expr *c = ir_const_i32(f, (int32_t)k);
        ir_expr *x = irf_bin(f, IR_MUL, a.lo, c), *y = irf_bin(f, IR_MUL, a.hi, c);
        ival r = { true, k >= 0 ? x : y, k >= 0 ? y : x };
        return r;
    }
    if (e->op == PF_OP_DIV && const_int(R, e->b, &k) && k > 0) {  /* monotonic */
        ival a = interval(R, e->a);
        if (!a.ok)
            return fail();
        ir_expr *c = ir_const_i32(f, (int32_t)k);
        ival r = { true, irf_bin(f, IR_DIV, a.lo, c), irf_bin(f, IR_DIV, a.hi, c) };
        return r;
    }
    return fail();
}

static ival interval(region_ctx *R, const pf_expr *e)
{
    switch (e->kind) {
    case PF_E_INT:
        return point(ir_const_i32(R->c->f, e->ival));
    case PF_E_NAME:
        return e->sym ? name_interval(R, e) : fail();
    case PF_E_UNARY:
        if (e->op == PF_OP_NEG) {
            ival a = interval(R, e->a);
            if (!a.ok)
                return fail();
            ival r = { true, irf_un(R->c->f, IR_NEG, a.hi), irf_un(R->c->f, IR_NEG, a.lo) };
            return r;
        }
        return fail();
    case PF_E_BINARY:
        return binary_interval(R, e);
    default:
        return fail();
    }
}

/* ---- walking the consumer's body ---- */

static void add_read(region_ctx *R, const pf_expr *e)
{
    ir_func *f = R->c->f;
    R->any = true;
    for (int d = 0; d < R->img->ndims; d++) {
        if (R->whole[d])
            continue;
        ival v = interval(R, e->args[d]);
        if (!v.ok) {
            R->whole[d] = true;
            continue;
        }
        R->lo[d] = R->lo[d] ? irf_bin(f, IR_MIN, R->lo[d], v.lo) : v.lo;
        R->hi[d] = R->hi[d] ? irf_bin(f, IR_MAX, R->hi[d], v.hi) : v.hi;
    }
}

/* A reduction or `for` variable comes into scope; a range that cannot be bounded leaves it
 * unbounded (and so the reads through it). */
static void enter_var(void *ctx, const pf_symbol *sym, const pf_expr *lo, const pf_expr *hi)
{
    region_ctx *R = ctx;
    if (R->n == MAX_RANGES) {
        R->n_over++;
        return;
    }
    ival a = interval(R, lo), b = interval(R, hi);
    var_range v = { sym, a.ok && b.ok, a.lo, b.hi };
    R->r[R->n++] = v;
}

static void leave_var(void *ctx)
{
    region_ctx *R = ctx;
    if (R->n_over > 0)
        R->n_over--;
    else
        R->n--;
}

static void visit_read(void *ctx, const pf_expr *e)
{
    region_ctx *R = ctx;
    if (e->sym->image == R->img)
        add_read(R, e);
}

/* ---- the producer's loops restricted to the region ---- */

/* Clamps [lo, hi] into the image along d, following its boundary mode: clamped reads need the
 * edge samples; mirror and wrap reads outside can land anywhere, so they take everything. */
static void clamp_to_image(region_ctx *R, int d, ir_expr **lo, ir_expr **hi)
{
    ir_func *f = R->c->f;
    ir_buffer *b = R->c->bufs[R->img->index];
    ir_expr *zero = ir_const_i32(f, 0);
    ir_expr *last = irf_bin(f, IR_SUB, ir_ref(f, b->extent[d]), ir_const_i32(f, 1));
    if (R->whole[d] || !R->lo[d]) {
        *lo = zero;
        *hi = last;
        return;
    }
    ir_expr *l = irf_bin(f, IR_MIN, irf_bin(f, IR_MAX, R->lo[d], zero), last);
    ir_expr *h = irf_bin(f, IR_MAX, irf_bin(f, IR_MIN, R->hi[d], last), zero);
    pf_boundary m = R->img->boundary;
    if (m == PF_BOUNDARY_MIRROR || m == PF_BOUNDARY_WRAP) {
        ir_expr *outside = irf_bin(f, IR_OR, irf_bin(f, IR_LT, R->lo[d], zero),
                                   irf_bin(f, IR_LT, last, R->hi[d]));
        l = irf_select(f, outside, zero, l);
        h = irf_select(f, outside, last, h);
    }
    *lo = l;
    *hi = h;
}

/* The storage indices [jlo, jhi] of an on-demand image that the region [rlo, rhi] of image
 * coordinates needs: with the upper neighbour a linear read interpolates from, along the
 * dimensions where stored samples are more than one lattice point apart (along the others a
 * read takes its own sample: blur's channels and, under grid 4 1, its rows). */
static void storage_span(lower_ctx *c, const pf_stage *p, int d, ir_expr *rlo, ir_expr *rhi,
                         ir_expr **jlo, ir_expr **jhi)
{
    ir_func *f = c->f;
    const lower_lattice *L = &c->lattice[p->index];
    ir_expr *zero = ir_const_i32(f, 0);
    ir_expr *m = lower_sample_step(c, p, L, d);
    int64_t k;
    bool dense = ir_is_const(m, &k) && k == 1;
    *jlo = irf_bin(f, IR_DIV, irf_bin(f, IR_MAX, irf_bin(f, IR_SUB, rlo, L->lo[d]), zero), m);
    *jhi = irf_bin(f, IR_ADD, irf_bin(f, IR_DIV, irf_bin(f, IR_MAX, irf_bin(f, IR_SUB, rhi,
                                                                             L->lo[d]),
                                                          zero), m),
                   ir_const_i32(f, dense ? 0 : 1));
}

/* Restricts the producer's loop along d: [lo, hi) by step in image coordinates, or the
 * storage index J of an on-demand image (storage_span). */
void lower_at_restrict(lower_ctx *c, const pf_stage *p, int d, ir_expr **lo, ir_expr **hi,
                       const ir_expr *step)
{
    ir_func *f = c->f;
    const lower_region *g = c->region;
    if (!g || d >= IR_MAX_DIMS || !g->lo[d])
        return;
    ir_expr *zero = ir_const_i32(f, 0), *one = ir_const_i32(f, 1);
    if (c->store[p->image->image->index]) {
        ir_expr *jlo, *jhi;
        storage_span(c, p, d, g->lo[d], g->hi[d], &jlo, &jhi);
        *lo = irf_bin(f, IR_MAX, *lo, jlo);
        *hi = irf_bin(f, IR_MIN, *hi, irf_bin(f, IR_ADD, jhi, one));
        return;
    }
    /* first lattice point >= region start: lo + ceil((start - lo) / step) * step */
    ir_expr *st = (ir_expr *)step;
    ir_expr *off = irf_bin(f, IR_MAX, irf_bin(f, IR_SUB, g->lo[d], *lo), zero);
    ir_expr *k = irf_bin(f, IR_DIV, irf_bin(f, IR_ADD, off, irf_bin(f, IR_SUB, st, one)), st);
    *lo = irf_bin(f, IR_ADD, *lo, irf_bin(f, IR_MUL, k, st));
    *hi = irf_bin(f, IR_MIN, *hi, irf_bin(f, IR_ADD, g->hi[d], one));
}

/* ---- a constant bound of a region's extent ---- */

#define MAX_CANDS 8

/* Affine bounds of e from above (upper) or below, through mins (maxes) and sums: min(xo + 64,
 * W) - 1 <= xo + 63 and <= W - 1. Returns how many, at most MAX_CANDS. All of them, not the one
 * affine.c's aff_bound picks (the operand with fewer loop terms: W - 1 here), because the span
 * is constant only for the pair whose loop terms cancel. */
static int bounds_of(const aff_env *env, const ir_expr *e, bool upper, aff *out)
{
    if (e->kind == IR_BIN && e->op == (upper ? IR_MIN : IR_MAX)) {
        int n = bounds_of(env, e->a, upper, out);
        aff b[MAX_CANDS];
        int m = bounds_of(env, e->b, upper, b);
        for (int i = 0; i < m && n < MAX_CANDS; i++)
            out[n++] = b[i];
        return n;
    }
    if (e->kind == IR_BIN && (e->op == IR_ADD || e->op == IR_SUB)) {
        aff a[MAX_CANDS], b[MAX_CANDS];
        int na = bounds_of(env, e->a, upper, a),
            nb = bounds_of(env, e->b, e->op == IR_ADD ? upper : !upper, b), n = 0;
        for (int i = 0; i < na; i++)
            for (int j = 0; j < nb && n < MAX_CANDS; j++)
                out[n++] = e->op == IR_ADD ? aff_add(a[i], b[j]) : aff_sub(a[i], b[j]);
        return n;
    }
    out[0] = aff_of(env, e);
    return out[0].ok;
}

/* The least constant C >= hi - lo + 1 that a pair of bounds shows (the unclamped region of a
 * tile: a tile's size plus the stencil's reach), or 0. */
static int64_t span_bound(const ir_func *f, const ir_expr *lo, const ir_expr *hi)
{
    aff_env env;
    aff_env_init(&env, f->n_vars);
    aff l[MAX_CANDS], h[MAX_CANDS];
    int nl = bounds_of(&env, lo, false, l), nh = bounds_of(&env, hi, true, h);
    int64_t best = 0;
    for (int i = 0; i < nh; i++)
        for (int j = 0; j < nl; j++) {
            aff d = aff_sub(h[i], l[j]);
            if (d.ok && d.n == 0 && d.c >= 0 && d.c < (1 << 20) && (!best || d.c + 1 < best))
                best = d.c + 1;
        }
    aff_env_free(&env);
    return best;
}

/* The region of p's image that the consumer st reads in tile t. */
static void infer_region(lower_ctx *c, const pf_stage *st, const pf_stage *p,
                         const lower_tile *t, lower_region *region)
{
    region_ctx R = { 0 };
    R.c = c;
    R.img = p->image->image;
    lower_lattice *LC = &c->lattice[st->index];
    ir_func *f = c->f;
    ir_expr *one = ir_const_i32(f, 1);
    for (int d = 0; d < st->n_vars; d++) {
        R.r[R.n].sym = st->vars[d];
        R.r[R.n].ok = true;
        if (d < 2 && t->lo[d]) {
            R.r[R.n].lo = t->lo[d];
            R.r[R.n].hi = irf_bin(f, IR_SUB, t->hi[d], one);
        } else if (d < 2) {
            R.r[R.n].lo = LC->lo[d];
            R.r[R.n].hi = irf_bin(f, IR_SUB, LC->hi[d], one);
        } else {  /* loops outside the tile: their current value */
            R.r[R.n].lo = R.r[R.n].hi = c->own.coord[d];
        }
        R.n++;
    }
    pf_read_visitor v = { &R, enter_var, leave_var, visit_read };
    pf_visit_reads_stmt(st->body, &v);
    pf_boundary m = R.img->boundary;
    for (int d = 0; d < R.img->ndims; d++) {
        /* clamped to the image, the region is a part of this one (not so for mirror and wrap,
         * whose tiles over the border take the whole image) */
        if (!R.whole[d] && R.lo[d] && m != PF_BOUNDARY_MIRROR && m != PF_BOUNDARY_WRAP)
            region->most[d] = span_bound(f, R.lo[d], R.hi[d]);
        clamp_to_image(&R, d, &region->lo[d], &region->hi[d]);
    }
}

ir_buffer *lower_own_store(const lower_ctx *c, const pf_stage *st)
{
    const pf_image_decl *img = st->image->image;
    for (int i = 0; i < st->n_writes; i++)
        if (st->writes[i] == img)
            return c->store[img->index];
    return NULL;
}

ir_buffer *lower_storage(const lower_ctx *c, const pf_stage *st)
{
    ir_buffer *store = lower_own_store(c, st);
    return store ? store : c->bufs[st->image->image->index];
}

/* The window of an on-demand image's storage: storage_span, inside the storage. */
static void storage_range(lower_ctx *c, const pf_stage *p, int d, ir_expr *rlo, ir_expr *rhi,
                          ir_expr **lo, ir_expr **hi)
{
    ir_func *f = c->f;
    ir_buffer *store = c->store[p->image->image->index];
    ir_expr *last = irf_bin(f, IR_SUB, ir_ref(f, store->extent[d]), ir_const_i32(f, 1));
    ir_expr *jlo, *jhi;
    storage_span(c, p, d, rlo, rhi, &jlo, &jhi);
    *lo = irf_bin(f, IR_MIN, jlo, last);
    *hi = irf_bin(f, IR_MIN, jhi, last);
}

/* The most bytes of shared memory a window takes at its constant size (below): a larger one
 * keeps its size of the region clamped to the image, so a tile too large for a block's shared
 * memory still runs on images smaller than the tile (it did before windows had constant sizes;
 * a GPU test's plans do so). 48 KiB: what every CUDA device gives a block without opting in. */
#define GPU_CONST_WINDOW_BYTES (48 << 10)

static bool const_window_fits(const lower_region *region, const ir_buffer *b, const pf_stage *p)
{
    int64_t floats = 1;
    for (int d = 0; d < b->ndims && d < p->n_vars; d++)
        if (!b->fold[d] && region->most[d] > 0)
            floats *= region->most[d];
    return floats * 4 <= GPU_CONST_WINDOW_BYTES;
}

/* The allocation of a scratch image for this tile: the region along the producer's dimensions
 * (what it computes; storage indices when stored downsampled), everything along the others;
 * along a folded dimension (`slide`) origin 0 and the fold's size. */
static ir_stmt *window_alloc(lower_ctx *c, const pf_stage *p, const lower_region *region,
                             ir_stmt *body)
{
    ir_func *f = c->f;
    ir_buffer *b = lower_storage(c, p);
    bool on_demand = b != c->bufs[p->image->image->index];
    ir_expr *lo[IR_MAX_DIMS], *n[IR_MAX_DIMS], *one = ir_const_i32(f, 1);
    bool constant = region->gpu_threads[0] > 0 && !on_demand && const_window_fits(region, b, p);
    for (int d = 0; d < b->ndims; d++) {
        lo[d] = ir_const_i32(f, 0);
        n[d] = ir_ref(f, b->extent[d]);
        if (b->fold[d]) {
            n[d] = ir_const_i32(f, b->fold[d]);
        } else if (d < p->n_vars) {
            ir_expr *hi = region->hi[d];
            lo[d] = region->lo[d];
            if (on_demand)
                storage_range(c, p, d, region->lo[d], region->hi[d], &lo[d], &hi);
            n[d] = irf_bin(f, IR_MAX, irf_bin(f, IR_ADD, irf_bin(f, IR_SUB, hi, lo[d]), one), one);
            /* In a GPU block, a constant size where the region's is bounded: the window's
             * strides are then constants, and a stencil's taps along y immediates of its
             * loads (codegen/llvm_expr.c, gpu_tap_ptr) instead of a row address each. */
            if (constant && region->most[d] > 0)
                n[d] = ir_const_i32(f, region->most[d]);
        }
    }
    return ir_alloc_window(f, b, lower_needs_zero(c, p->image->image), lo, n, body);
}

/* Lowers producer p into `work` over `region`, as if at top level, then restores the context. */
static void lower_producer(lower_ctx *c, const pf_stage *p, const lower_region *region,
                           ir_list *work)
{
    ir_list *outer = c->out;
    lower_own own = c->own;
    lower_frame *frame = c->frame;
    const pf_stage *stage = c->stage;
    const lower_region *saved = c->region;
    c->out = work;
    c->region = region;
    lower_stage(c, p);
    c->region = saved;
    c->own = own;
    c->frame = frame;
    c->stage = stage;
    c->out = outer;
}

/* The region of p that consumer st's tile t reads, and whether st's tiles run in parallel. */
static lower_region tile_region(lower_ctx *c, const pf_stage *st, const pf_stage *p,
                                const lower_tile *t)
{
    lower_region region = { 0 };
    infer_region(c, st, p, t, &region);
    region.in_parallel = (c->region && c->region->in_parallel) ||
                         (lower_exec(c, st->index)->parallel && !st->serial);
    const pf_exec_gene *g = lower_exec(c, st->index);
    for (int d = 0; g->gpu && d < 2; d++)
        region.gpu_threads[d] = pf_exec_gpu_threads(g, d);
    return region;
}

/* ---- `at C slide`: rows computed in C's row loop, in a folded window ---- */

/* The producers of one consumer nest computed row by row: each keeps `next`, the first row it
 * has not computed yet in the current tile, and reads rows [y + lo, y + hi] at C's row y. */
struct lower_slide {
    int n;
    const pf_stage *p[8];
    ir_var *next[8];
    int lo[8], hi[8];
};

static int slide_index(const lower_slide *S, const pf_stage *p)
{
    for (int i = 0; S && i < S->n; i++)
        if (S->p[i] == p)
            return i;
    return -1;
}

static int pow2_at_least(int n)
{
    int F = 1;
    while (F < n)
        F *= 2;
    return F;
}

/* One producer's slide: its row window (the plan's, from perforate/exec_slide.c), the fold of
 * its window, its `next` variable. */
static void slide_add(lower_ctx *c, const pf_stage *st, const pf_stage *p, lower_slide *S)
{
    int lo = c->plan->stages[p->index].slide_lo, hi = c->plan->stages[p->index].slide_hi;
    ir_buffer *b = c->bufs[p->image->image->index];
    if (!b->window || c->store[p->image->image->index] || lower_approx(c, p) || b->ndims < 2 ||
        b->boundary == PF_BOUNDARY_MIRROR || b->boundary == PF_BOUNDARY_WRAP ||
        lower_exec(c, st->index)->tile[1] <= 0 || S->n == 8) {
        lower_error(c, "internal error: %s: 'at %s slide' needs an exact producer in a scratch "
                    "window, with boundary clamp or constant, and %s tiled in two dimensions",
                    p->name, st->name, st->name);
        return;
    }
    b->fold[1] = pow2_at_least(hi - lo + 1);
    char name[96];
    snprintf(name, sizeof name, "%.80s_next", p->name);
    S->p[S->n] = p;
    S->lo[S->n] = lo;
    S->hi[S->n] = hi;
    S->next[S->n++] = ir_var_new(c->f, name, IR_I32, IR_VAR_MUT);
}

lower_slide *lower_at_slide_begin(lower_ctx *c, const pf_stage *st)
{
    lower_slide *S = NULL;
    for (int pi = 0; pi < c->prog->n_stages; pi++) {
        if (lower_exec(c, pi)->at != st->index || !lower_exec(c, pi)->slide)
            continue;
        if (!S)
            S = PF_NEW(c->f->arena, lower_slide);
        slide_add(c, st, c->prog->stages[pi], S);
    }
    return S;
}

/* Zeroes rows [lo, hi] of b's window, across its other dimensions (a producer that does not
 * write every pixel of its rows must leave the others 0, as in a fresh window). */
static ir_stmt *zero_rows(lower_ctx *c, ir_buffer *b, ir_var *lo, ir_var *hi)
{
    ir_func *f = c->f;
    ir_var *v[IR_MAX_DIMS];
    ir_expr *idx[IR_MAX_DIMS];
    for (int d = 0; d < b->ndims; d++) {
        v[d] = ir_var_new(f, d == 1 ? "zero_row" : "zero_i", IR_I32, IR_VAR_LOOP);
        idx[d] = ir_ref(f, v[d]);
    }
    ir_stmt *s = ir_store(f, b, idx, ir_const_f32(f, 0.0f), 0, false);
    for (int d = 0; d < b->ndims; d++) {
        ir_expr *from = ir_ref(f, b->origin[d]);
        ir_expr *to = irf_bin(f, IR_ADD, from, ir_ref(f, b->size[d]));
        if (d == 1) {
            from = ir_ref(f, lo);
            to = irf_bin(f, IR_ADD, ir_ref(f, hi), ir_const_i32(f, 1));
        }
        s = ir_for(f, v[d], from, to, ir_const_i32(f, 1), IR_LOOP_SERIAL, s);
    }
    return s;
}

/* Before consumer st computes its row y (c->own.coord[1]) in tile t: each sliding producer
 * computes the rows [max(next, y + lo), y + hi] (clamped into its image) over the tile's
 * region along its other dimensions, and moves `next` past them; then `row` runs. */
ir_stmt *lower_at_rows(lower_ctx *c, const pf_stage *st, const lower_tile *t, lower_slide *S,
                       ir_stmt *row)
{
    ir_func *f = c->f;
    ir_list work = { 0 };
    ir_expr *y = c->own.coord[1], *zero = ir_const_i32(f, 0);
    for (int i = 0; S && i < S->n; i++) {
        const pf_stage *p = S->p[i];
        ir_buffer *b = c->bufs[p->image->image->index];
        ir_expr *last = irf_bin(f, IR_SUB, ir_ref(f, b->extent[1]), ir_const_i32(f, 1));
        ir_expr *lo = irf_bin(f, IR_ADD, y, ir_const_i32(f, S->lo[i]));
        ir_expr *hi = irf_bin(f, IR_ADD, y, ir_const_i32(f, S->hi[i]));
        lo = irf_bin(f, IR_MIN, irf_bin(f, IR_MAX, lo, zero), last);
        hi = irf_bin(f, IR_MAX, irf_bin(f, IR_MIN, hi, last), zero);
        char name[96];
        snprintf(name, sizeof name, "%.80s_row_lo", p->name);
        ir_var *vlo = ir_var_new(f, name, IR_I32, IR_VAR_LET);
        snprintf(name, sizeof name, "%.80s_row_hi", p->name);
        ir_var *vhi = ir_var_new(f, name, IR_I32, IR_VAR_LET);
        ir_list_push(f, &work, ir_let(f, vlo, irf_bin(f, IR_MAX, ir_ref(f, S->next[i]), lo)));
        ir_list_push(f, &work, ir_let(f, vhi, hi));
        if (lower_needs_zero(c, p->image->image))
            ir_list_push(f, &work, zero_rows(c, b, vlo, vhi));
        lower_region *region = PF_NEW(f->arena, lower_region);
        *region = tile_region(c, st, p, t);
        region->lo[1] = ir_ref(f, vlo);
        region->hi[1] = ir_ref(f, vhi);
        lower_producer(c, p, region, &work);
        ir_expr *after = irf_bin(f, IR_ADD, ir_ref(f, vhi), ir_const_i32(f, 1));
        ir_list_push(f, &work, ir_assign(f, S->next[i], irf_bin(f, IR_MAX, ir_ref(f, S->next[i]),
                                                                 after)));
    }
    ir_list_push(f, &work, row);
    return ir_list_block(f, &work);
}

/* The producers scheduled at the consumer `st`, restricted to what its tile t reads, followed
 * by `inner` (the consumer's loops over the tile); scratch images are allocated around both.
 * Sliding producers (S) are computed inside `inner` (lower_at_rows): here only their folded
 * windows and `next` (the tile's first row). */
ir_stmt *lower_at_tile(lower_ctx *c, const pf_stage *st, const lower_tile *t, lower_slide *S,
                       ir_stmt *inner)
{
    const pf_program *prog = c->prog;
    ir_func *f = c->f;
    ir_list work = { 0 };
    const pf_stage **scratch = PF_NEW_ARRAY(f->arena, const pf_stage *, prog->n_stages + 1);
    lower_region *regions = PF_NEW_ARRAY(f->arena, lower_region, prog->n_stages + 1);
    int n_scratch = 0;
    for (int pi = 0; pi < prog->n_stages; pi++) {
        if (lower_exec(c, pi)->at != st->index)
            continue;
        const pf_stage *p = prog->stages[pi];
        if (!lower_storage(c, p)->window) {
            lower_error(c, "%s: computed at %s without a scratch window (the schedule was not "
                        "validated)", p->name, st->name);
            continue;
        }
        regions[n_scratch] = tile_region(c, st, p, t);
        scratch[n_scratch++] = p;
        if (slide_index(S, p) < 0)
            lower_producer(c, p, &regions[n_scratch - 1], &work);
    }
    bool gpu = lower_exec(c, st->index)->gpu;
    if (gpu && n_scratch > 0)  /* the block's threads wait for its shared windows */
        ir_list_push(f, &work, ir_barrier(f));
    ir_list_push(f, &work, inner);
    ir_stmt *body = ir_list_block(f, &work);
    for (int i = n_scratch - 1; i >= 0; i--) {
        lower_storage(c, scratch[i])->gpu_shared = gpu;
        int k = slide_index(S, scratch[i]);
        if (k >= 0) {
            ir_stmt *two[2] = { ir_decl(f, S->next[k], ir_const_i32(f, 0)), body };
            body = ir_block(f, 2, two);
        }
        body = window_alloc(c, scratch[i], &regions[i], body);
    }
    return body;
}
