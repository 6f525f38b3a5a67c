/* Lowering of stages: the lattice, the loop nest, and every approximation of a stage
 * (docs/perforation.md): grid, adaptive and importance sampling, loop perforation of the row
 * variable, channel subsampling, store reconstruction and on-demand storage. */
#include "codegen/lower_internal.h"

#include "base/error.h"
#include "codegen/ir_audit.h"
#include "perforate/exec.h"

#include <stdio.h>

/* ---- the lattice ---- */

ir_expr *lower_step_mul(ir_func *f, ir_expr *a, int64_t k)
{
    if (k == 1)
        return a;
    ir_expr *cap = ir_const_i32(f, (int32_t)PF_MAX_EXTENT);
    return irf_select(f, irf_bin(f, IR_LT, ir_const_i32(f, (int32_t)(PF_MAX_EXTENT / k)), a), cap,
                      irf_bin(f, IR_MUL, a, ir_const_i32(f, (int32_t)k)));
}

/* Variable d's loop: [lo, hi) by step within the image. An `over` range lo..hi step s is
 * intersected with [0, extent) without moving its anchor. Its bounds may be any ints: nothing
 * here overflows, and the lattice is 0 <= lo, hi <= extent, 1 <= step <= PF_MAX_EXTENT (a
 * longer step runs one iteration as well). */
static void stage_bounds(lower_ctx *c, const pf_stage *st, int d, ir_buffer *buf,
                         lower_lattice *L)
{
    ir_func *f = c->f;
    ir_expr *extent = ir_ref(f, buf->extent[d]);
    ir_expr *zero = ir_const_i32(f, 0), *one = ir_const_i32(f, 1);
    if (!st->over) {
        L->lo[d] = zero;
        L->hi[d] = extent;
        L->step[d] = one;
        L->n[d] = extent;
        return;
    }
    const pf_range *r = &st->over[d];
    ir_expr *l = lower_snapshot(c, "over_lo", lower_expr_as(c, r->lo, IR_I32));
    ir_expr *h = lower_expr_as(c, r->hi, IR_I32);
    ir_expr *s = r->step ? irf_bin(f, IR_MAX, lower_expr_as(c, r->step, IR_I32), one) : one;
    s = lower_snapshot(c, "over_step", s);
    /* First in-range iterate: l + ceil(-l / s) * s = (l % s + s) % s when l < 0. */
    ir_expr *first = irf_bin(f, IR_MOD, irf_bin(f, IR_ADD, irf_bin(f, IR_MOD, l, s), s), s);
    ir_expr *lo = lower_snapshot(c, "over_first", irf_select(f, irf_bin(f, IR_LT, l, zero),
                                                             first, l));
    ir_expr *last = irf_bin(f, IR_MIN, h, irf_bin(f, IR_SUB, extent, one));
    ir_expr *hi = lower_snapshot(c, "over_end", irf_bin(f, IR_ADD, last, one));
    s = lower_snapshot(c, "over_stride", irf_bin(f, IR_MIN, s,
                                                 ir_const_i32(f, (int32_t)PF_MAX_EXTENT)));
    /* hi - min(lo, hi) is in [0, extent]: hi itself may be -2^31 + 1 and lo 2^31 - 1 */
    ir_expr *span = irf_bin(f, IR_SUB, hi, irf_bin(f, IR_MIN, lo, hi));
    L->lo[d] = lo;
    L->hi[d] = hi;
    L->step[d] = s;
    L->n[d] = lower_snapshot(c, "over_n", irf_bin(f, IR_DIV, irf_bin(f, IR_ADD, span,
                                                                      irf_bin(f, IR_SUB, s, one)),
                                                  s));
}

lower_lattice *lower_stage_lattice(lower_ctx *c, const pf_stage *st)
{
    lower_lattice *L = &c->lattice[st->index];
    if (L->ready)
        return L;
    ir_buffer *buf = c->bufs[st->image->image->index];
    lower_frame fr = { 0 }, *saved = c->frame;
    c->frame = &fr;
    for (int d = 0; d < st->n_vars; d++)
        stage_bounds(c, st, d, buf, L);
    c->frame = saved;
    L->ready = true;
    return L;
}

ir_expr *lower_sample_step(lower_ctx *c, const pf_stage *st, const lower_lattice *L, int d)
{
    return lower_step_mul(c->f, L->step[d], lower_approx(c, st)->spacing[d]);
}

/* ---- on-demand storage ---- */

void lower_ondemand_image(lower_ctx *c, const pf_image_decl *img)
{
    ir_func *f = c->f;
    const pf_stage *st = img->first_writer;
    const pf_stage_approx *a = lower_approx(c, st);
    lower_lattice *L = lower_stage_lattice(c, st);
    ir_buffer *logical = c->bufs[img->index];
    char name[96];
    snprintf(name, sizeof name, "%.80s_grid", img->name);
    ir_buffer *s = ir_buffer_new(f, name, IR_BUF_INTERNAL, img->ndims);
    s->decl = img;
    for (int d = 0; d < img->ndims; d++) {
        ir_expr *e = ir_ref(f, logical->extent[d]);
        if (d < st->n_vars) {
            ir_expr *sp = ir_const_i32(f, a->spacing[d]);
            e = irf_bin(f, IR_MAX, irf_bin(f, IR_DIV, irf_bin(f, IR_ADD, L->n[d],
                                                              irf_bin(f, IR_SUB, sp, ir_const_i32(f, 1))),
                                             sp), ir_const_i32(f, 1));
        }
        s->extent[d]->positive = true;  /* the logical extent, or max(..., 1) */
        lower_emit(c, ir_let(f, s->extent[d], e));
    }
    ir_interp *g = PF_NEW(f->arena, ir_interp);
    g->image = logical;
    g->k = st->n_vars;
    for (int d = 0; d < st->n_vars; d++) {
        g->lo[d] = L->lo[d];
        g->step[d] = L->step[d];
        g->n[d] = L->n[d];
        g->spacing[d] = a->spacing[d];
    }
    g->linear = a->recon == PF_RECON_LINEAR;
    g->check_lattice = st->over != NULL;
    g->channels = a->channels;
    g->ref = a->channels > 0 && a->ref ? c->bufs[a->ref->index] : NULL;
    c->store[img->index] = s;
    c->interp[img->index] = g;
}

/* ---- the loop nest ---- */

/* One pass over (part of) the lattice. */
typedef struct nest_spec {
    const pf_stage *st;
    const lower_lattice *L;
    const pf_stage_approx *a;    /* NULL: exact */
    ir_expr *lo[IR_MAX_DIMS], *hi[IR_MAX_DIMS], *step[IR_MAX_DIMS];
    ir_expr *align[IR_MAX_DIMS]; /* the loop variable is congruent to this modulo its step */
    ir_buffer *mask;             /* run only where mask[j1, j2] == pass */
    int pass;
    int random_dim;              /* loop perforation `random` of this dimension, or -1 */
    lower_tile_fill *fill;       /* store reconstruction per tile (lower_fill.c), or NULL */
} nest_spec;

static ir_expr *lattice_index(lower_ctx *c, const lower_lattice *L, int d, ir_expr *v)
{
    ir_func *f = c->f;
    return irf_bin(f, IR_DIV, irf_bin(f, IR_SUB, v, L->lo[d]), L->step[d]);
}

/* The body, wrapped in the pass's mask test and the random-skip test. */
static ir_stmt *nest_body(lower_ctx *c, const nest_spec *ns, ir_expr **v)
{
    ir_func *f = c->f;
    ir_list body = { 0 }, *outer = c->out;
    c->out = &body;
    lower_stmt(c, ns->st->body);
    c->out = outer;
    ir_stmt *s = ir_list_block(f, &body);
    if (ns->mask) {
        ir_expr *idx[2] = { lattice_index(c, ns->L, 0, v[0]),
                            ns->st->n_vars > 1 ? lattice_index(c, ns->L, 1, v[1])
                                               : ir_const_i32(f, 0) };
        ir_expr *m = ir_load(f, ns->mask, idx, 0);
        s = ir_if(f, irf_bin(f, IR_EQ, m, ir_const_f32(f, (float)ns->pass)), s, NULL);
    }
    if (ns->random_dim >= 0) {
        const pf_loop_perf *p = &ns->a->perf;
        ir_expr *args[4] = { ir_const_i32(f, p->id),
                             lattice_index(c, ns->L, ns->random_dim, v[ns->random_dim]),
                             ir_const_i32(f, 0), ir_const_i32(f, 0) };
        ir_expr *h = ir_call(f, IR_FN_PERF_HASH, IR_F32, 4, args);
        s = ir_if(f, irf_bin(f, IR_LT, h, ir_const_f32(f, p->frac)), s, NULL);
    }
    return s;
}

/* One loop of the nest, outermost first. */
typedef struct nest_loop {
    ir_var *var;
    ir_expr *lo, *hi, *step, *align;
    ir_loop_kind kind;
    int width, unroll;
    const char *label;
    bool banded;
    int gpu_dim;
    uint8_t serial_why;  /* ir_audit.h */
    int64_t span;        /* a GPU thread loop's hi - lo in every block, at most (0: unknown) */
} nest_loop;

/* The loop order, innermost first (perforate/exec.h: d for variable d, PF_EXEC_TILE_LOOP(d)
 * for its tile loop): the gene's reorder, else the default. tiled[d]: d has a tile loop (the
 * chunks of a parallel 1-D stage included). */
static int nest_order(lower_ctx *c, const pf_stage *st, const bool *tiled, int *order)
{
    const pf_exec_gene *g = lower_exec(c, st->index);
    pf_exec_gene t = *g;
    t.tile[0] = tiled[0];
    t.tile[1] = st->n_vars > 1 && tiled[1];
    int n = pf_exec_default_order(&t, st->n_vars, order);
    if (g->n_order == 0 || st->n_vars < 2)
        return n;
    unsigned seen = 0, want = 0;
    for (int i = 0; i < n; i++)
        want |= 1u << order[i];
    for (int i = 0; i < g->n_order; i++)
        seen |= 1u << g->order[i];
    if (g->n_order != n || seen != want) {
        lower_error(c, "stage '%s': its reorder does not list its loops (the schedule was not "
                    "validated)", st->name);
        return n;
    }
    for (int i = 0; i < n; i++)
        order[i] = g->order[i];
    return n;
}

/* The tile loop over variable d in tiles of t iterations; loops[d] becomes the loop inside a
 * tile. */
static nest_loop tile_loop(lower_ctx *c, const nest_spec *ns, nest_loop *inner, int d, int t)
{
    ir_func *f = c->f;
    char name[64];
    snprintf(name, sizeof name, "%.40so", ns->st->var_names[d]);
    ir_var *o = ir_var_new(f, name, IR_I32, IR_VAR_LOOP);
    ir_expr *big = lower_step_mul(f, inner->step, t);
    nest_loop l = { o, inner->lo, inner->hi, big, inner->align, IR_LOOP_SERIAL, 1, 0, NULL,
                    false, 0, 0, 0 };
    inner->lo = ir_ref(f, o);
    ir_expr *end = irf_bin(f, IR_ADD, ir_ref(f, o), big);  /* < 2^31: o < 2^30, big <= 2^30 */
    if (ns->fill)  /* a tile filled on its own also computes the next tile's first sample */
        inner->hi = irf_bin(f, IR_ADD, irf_bin(f, IR_MIN, end, irf_bin(f, IR_SUB, inner->hi,
                                                                       ir_const_i32(f, 1))),
                            ir_const_i32(f, 1));
    else
        inner->hi = irf_bin(f, IR_MIN, end, inner->hi);
    return l;
}

/* `parallel` and, on a serial stage, bands: on the outermost loop that is not over a further
 * variable (a tile loop, else y or x). */
static void plan_parallel(lower_ctx *c, const pf_stage *st, const int *ids, nest_loop *out,
                          int n)
{
    const pf_exec_gene *g = lower_exec(c, st->index);
    int p = 0;
    while (p < n - 1 && ids[p] >= 2 && ids[p] < PF_EXEC_TILE_LOOP(0))
        p++;
    if (!g->parallel)
        out[p].serial_why = IR_SERIAL_SCHEDULE;
    /* inside a consumer's parallel tiles a parallel loop would run serially anyway */
    if (!g->parallel || (c->region && c->region->in_parallel))
        return;
    if (st->serial)
        out[p].banded = true;  /* pass_bands decides */
    else if (out[p].kind == IR_LOOP_SERIAL)
        out[p].kind = IR_LOOP_PARALLEL;
}

/* GPU (docs/gpu.md): a `gpu` stage's tile loops are block loops (the tile of x along the
 * grid's x, of y along y), a third variable's loop the grid's z (a fourth's stays a serial
 * loop: on the host, around the launches), its x and y loops thread loops over the tile; a
 * producer computed in a GPU stage's blocks runs its x and y loops on that stage's threads.
 * Returns whether the loops are GPU loops. */
static bool plan_gpu(lower_ctx *c, const pf_stage *st, const int *ids, nest_loop *out, int n)
{
    const pf_exec_gene *g = lower_exec(c, st->index);
    const int *region_threads = c->region ? c->region->gpu_threads : NULL;
    bool producer = region_threads && region_threads[0] > 0;
    if (!g->gpu && !producer)
        return false;
    for (int i = 0; i < n; i++) {
        int id = ids[i];
        if (id >= PF_EXEC_TILE_LOOP(0) || (id == 2 && !producer)) {
            out[i].kind = IR_LOOP_GPU_BLOCK;
            out[i].width = 1;
            out[i].gpu_dim = id == 2 ? 2 : id - PF_EXEC_TILE_LOOP(0);
        } else if (id < 2) {
            out[i].kind = IR_LOOP_GPU_THREAD;
            out[i].gpu_dim = id;
            out[i].width = producer ? region_threads[id] : pf_exec_gpu_threads(g, id);
            out[i].span = producer ? c->region->most[id] : 0;
        }
    }
    return true;
}

/* The loops over the stage variables with the stage's execution gene applied, outermost
 * first: by default variable k-1 outermost, then (when tiled) the tile loops over y and x,
 * then y and x; else the gene's reorder. The innermost loop (x) vectorized when asked; the
 * outermost tile or row loop parallel. *ytile, *xtile: the tile loops' indices, or -1. */
static int plan_loops(lower_ctx *c, const nest_spec *ns, ir_var **vars, nest_loop *out,
                      int *ytile, int *xtile)
{
    const pf_stage *st = ns->st;
    const pf_exec_gene *g = lower_exec(c, st->index);
    int k = st->n_vars;
    nest_loop loops[IR_MAX_DIMS] = { 0 }, tiles[2];
    for (int d = 0; d < k; d++) {
        nest_loop l = { vars[d], ns->lo[d], ns->hi[d], ns->step[d], ns->align[d],
                        IR_LOOP_SERIAL, 1, 0, NULL, false, 0, 0, 0 };
        loops[d] = l;
    }
    bool tiled[2] = { false, false };
    for (int d = 0; d < 2 && d < k; d++) {
        int t = g->tile[d];
        if (d == 0 && k == 1 && g->parallel && !st->serial && t == 0)
            t = 1024;  /* a 1-D stage runs in parallel over chunks */
        if (t > 0)
            tiles[d] = tile_loop(c, ns, &loops[d], d, t);
        tiled[d] = t > 0;
    }
    int order[PF_EXEC_MAX_ORDER], ids[PF_EXEC_MAX_ORDER];
    int n = nest_order(c, st, tiled, order);
    *ytile = *xtile = -1;
    for (int i = 0; i < n; i++) {
        int id = order[n - 1 - i], d = id - PF_EXEC_TILE_LOOP(0);
        ids[i] = id;
        out[i] = id >= PF_EXEC_TILE_LOOP(0) ? tiles[d] : loops[id];
        if (id >= PF_EXEC_TILE_LOOP(0))
            *(d ? ytile : xtile) = i;
    }
    if (plan_gpu(c, st, ids, out, n)) {
        out[0].label = st->name;
        return n;
    }
    if (g->vectorize > 1 && !st->serial && ids[n - 1] == 0) {
        out[n - 1].kind = IR_LOOP_VECTORIZED;
        out[n - 1].width = g->vectorize;
    }
    if (g->unroll > 1)
        out[n - 1].unroll = g->unroll;
    plan_parallel(c, st, ids, out, n);
    out[0].label = st->name;
    return n;
}

static bool has_producers(const lower_ctx *c, const pf_stage *st)
{
    for (int i = 0; i < c->prog->n_stages; i++)
        if (lower_exec(c, i)->at == st->index)
            return true;
    return false;
}

/* The index of the loop over variable v among loops[from, n). */
static int loop_of(const nest_loop *loops, int from, int n, const ir_var *v)
{
    while (from < n && loops[from].var != v)
        from++;
    return from;
}

/* The tile [v, hi) of loop variable d in image coordinates [lo, hi): the loop runs over the
 * storage index J of an on-demand stage (bind_frame), whose image coordinate is lo + J * m. */
static void tile_range(lower_ctx *c, const nest_spec *ns, int d, ir_var *v, ir_expr *hi,
                       lower_tile *t)
{
    ir_func *f = c->f;
    t->lo[d] = ir_ref(f, v);
    t->hi[d] = hi;
    if (!lower_own_store(c, ns->st))
        return;
    const lower_lattice *L = ns->L;
    ir_expr *m = lower_sample_step(c, ns->st, L, d);
    ir_expr *last = irf_bin(f, IR_SUB, hi, ir_const_i32(f, 1));
    t->lo[d] = irf_bin(f, IR_ADD, L->lo[d], irf_bin(f, IR_MUL, t->lo[d], m));
    t->hi[d] = irf_bin(f, IR_ADD, irf_bin(f, IR_ADD, L->lo[d], irf_bin(f, IR_MUL, last, m)),
                       ir_const_i32(f, 1));
}

static ir_stmt *build_nest(lower_ctx *c, nest_spec *ns, ir_var **vars)
{
    ir_func *f = c->f;
    nest_loop loops[IR_MAX_DIMS + 2];
    for (int d = 0; c->region && d < ns->st->n_vars; d++)
        lower_at_restrict(c, ns->st, d, &ns->lo[d], &ns->hi[d], ns->step[d]);
    int ytile, xtile;
    int n = plan_loops(c, ns, vars, loops, &ytile, &xtile);
    ir_stmt *nest = nest_body(c, ns, c->own.coord);
    /* producers run per tile, at the innermost tile loop (the x tile loop in the default
     * order; the y tile loop when x is not tiled), in scratch windows; so does a fill per
     * tile, after the tile's samples */
    bool producers = has_producers(c, ns->st);
    int at = ytile < 0 || !(producers || ns->fill) ? -1 : xtile > ytile ? xtile : ytile;
    if (at >= 0 && !pf_exec_tile_order_ok(lower_exec(c, ns->st->index)))
        lower_error(c, "stage '%s': stages computed at its tiles need its tile loops outside x "
                    "and y and its further variables outside the tiles (the schedule was not "
                    "validated)", ns->st->name);
    lower_tile t = { { NULL, NULL }, { NULL, NULL } };
    if (at >= 0) {
        tile_range(c, ns, 1, loops[ytile].var, loops[loop_of(loops, at + 1, n, vars[1])].hi, &t);
        if (xtile >= 0)
            tile_range(c, ns, 0, loops[xtile].var, loops[loop_of(loops, at + 1, n, vars[0])].hi,
                       &t);
    }
    /* producers `at` with `slide` compute their rows at the top of the row loop's body */
    lower_slide *slide = at >= 0 && producers ? lower_at_slide_begin(c, ns->st) : NULL;
    for (int i = n - 1; i >= 0; i--) {
        const nest_loop *l = &loops[i];
        if (slide && l->var == vars[1])
            nest = lower_at_rows(c, ns->st, &t, slide, nest);
        if (i == at) {
            if (producers)
                nest = lower_at_tile(c, ns->st, &t, slide, nest);
            if (ns->fill)
                nest = lower_tile_fill_wrap(ns->fill, vars, loops[xtile].var, loops[ytile].var,
                                            nest);
        }
        nest = ir_for(f, l->var, l->lo, l->hi, l->step, l->kind, nest);
        nest->width = l->width;
        nest->unroll = l->unroll;
        nest->banded = l->banded;
        nest->gpu_dim = l->gpu_dim;
        nest->serial_why = l->serial_why;
        nest->span = l->span;
        nest->align = l->align;
        nest->text = l->label;
    }
    return nest;
}

static void nest_exact(nest_spec *ns, const lower_lattice *L, int n_vars)
{
    for (int d = 0; d < n_vars; d++) {
        ns->lo[d] = L->lo[d];
        ns->hi[d] = L->hi[d];
        ns->step[d] = L->step[d];
        ns->align[d] = L->lo[d];
    }
    ns->random_dim = -1;
}

/* Loop perforation of the row variable: step, first, last or random (§5). */
static void nest_loop_perf(lower_ctx *c, nest_spec *ns, int r)
{
    ir_func *f = c->f;
    const pf_loop_perf *p = &ns->a->perf;
    const lower_lattice *L = ns->L;
    ir_expr *n_f = irf_cast(f, IR_F32, L->n[r]);
    switch (p->kind) {
    case PF_PERF_STEP:
        ns->step[r] = lower_step_mul(f, L->step[r], p->step);
        break;
    case PF_PERF_FIRST: {  /* lo + m * step only where it is a lattice point (no overflow) */
        ir_expr *m = irf_cast(f, IR_I32, irf_bin(f, IR_MUL, ir_const_f32(f, p->frac), n_f));
        ir_expr *at = irf_bin(f, IR_ADD, L->lo[r], irf_bin(f, IR_MUL, m, L->step[r]));
        ns->hi[r] = irf_bin(f, IR_MIN, L->hi[r],
                            irf_select(f, irf_bin(f, IR_LT, m, L->n[r]), at, L->hi[r]));
        break;
    }
    case PF_PERF_LAST: {
        ir_expr *m = irf_cast(f, IR_I32, irf_bin(f, IR_MUL, ir_const_f32(f, 1.0f - p->frac), n_f));
        ir_expr *at = irf_bin(f, IR_ADD, L->lo[r], irf_bin(f, IR_MUL, m, L->step[r]));
        ns->lo[r] = irf_select(f, irf_bin(f, IR_LT, m, L->n[r]), at, L->hi[r]);
        break;
    }
    case PF_PERF_RANDOM:
        ns->random_dim = r;
        break;
    }
}

/* ---- after the loops ---- */

/* The lattice view arguments of a runtime call: (lo, step, n) per stage dimension. */
static int view_args(const pf_stage *st, const lower_lattice *L, ir_expr **args)
{
    int n = 0;
    for (int d = 0; d < st->n_vars; d++) {
        args[n++] = L->lo[d];
        args[n++] = L->step[d];
        args[n++] = L->n[d];
    }
    return n;
}

static void emit_reconstruct(lower_ctx *c, const pf_stage *st, const lower_lattice *L,
                             ir_buffer *img, ir_buffer *mask, ir_buffer *aux)
{
    ir_func *f = c->f;
    const pf_stage_approx *a = lower_approx(c, st);
    ir_expr *args[3 * IR_MAX_DIMS + 10];
    int n = view_args(st, L, args);
    args[n++] = ir_const_i32(f, a->sample);
    args[n++] = ir_const_i32(f, a->recon);
    for (int d = 0; d < IR_MAX_DIMS; d++)
        args[n++] = ir_const_i32(f, d < st->n_vars && a->sample == PF_SAMPLE_GRID
                                        ? a->spacing[d] : 1);
    args[n++] = ir_const_i32(f, a->k);
    args[n++] = ir_const_f32(f, a->frac);
    args[n++] = ir_const_f32(f, a->sigma);
    ir_buffer *bufs[3] = { img, mask, aux };
    ir_stmt *s = ir_rtcall(f, IR_RT_RECONSTRUCT, mask ? 3 : 1, bufs, n, args);
    s->view_dims = st->n_vars;
    if (!ir_rt_threaded(s))
        s->serial_why = IR_SERIAL_GRID_ND;
    lower_emit(c, s);
}

static void emit_copy_channels(lower_ctx *c, const pf_stage *st, const lower_lattice *L,
                               ir_buffer *img)
{
    const pf_stage_approx *a = lower_approx(c, st);
    if (!a->ref) {
        lower_error(c, "stage '%s': channel subsampling needs a reference image", st->name);
        return;
    }
    if (lower_copy_channels_gpu(c, st, L, img, c->bufs[a->ref->index], a->channels))
        return;
    ir_expr *args[3 * IR_MAX_DIMS + 1];
    int n = view_args(st, L, args);
    args[n++] = ir_const_i32(c->f, a->channels);
    ir_buffer *bufs[2] = { img, c->bufs[a->ref->index] };
    ir_stmt *s = ir_rtcall(c->f, IR_RT_COPY_CHANNELS, 2, bufs, n, args);
    s->view_dims = st->n_vars;
    lower_emit(c, s);
}

/* ---- masks (adaptive and importance sampling) ---- */

static ir_buffer *mask_buffer(lower_ctx *c, const pf_stage *st, const lower_lattice *L,
                              const char *what)
{
    ir_func *f = c->f;
    char name[96];
    snprintf(name, sizeof name, "%.60s_%s", st->name, what);
    ir_buffer *b = ir_buffer_new(f, name, IR_BUF_INTERNAL, 2);
    b->dense = true;  /* the stage runtime reads planes with row stride n1 */
    /* at least 1 x 1: an `over` range can leave no lattice point (n 0), and an allocation of
     * nothing failed as if memory ran out (found by fuzz_jit); the runtime is told n */
    ir_expr *one = ir_const_i32(f, 1);
    lower_emit(c, ir_let(f, b->extent[0], irf_bin(f, IR_MAX, L->n[0], one)));
    lower_emit(c, ir_let(f, b->extent[1], st->n_vars > 1 ? irf_bin(f, IR_MAX, L->n[1], one)
                                                         : one));
    return b;
}

static ir_stmt *nest_pass(lower_ctx *c, nest_spec *ns, ir_var **vars, int pass)
{
    ns->pass = pass;
    return build_nest(c, ns, vars);
}

/* Adaptive sampling's first mask: a kernel for a stage on the GPU (the CUDA host would build
 * and upload it each call), else the runtime's. */
static ir_stmt *coarse_mask(lower_ctx *c, const pf_stage *st, ir_buffer *mask, ir_expr *n1,
                            ir_expr *n2, int k)
{
    if (lower_exec(c, st->index)->gpu)
        return lower_gpu_coarse_mask(c, mask, n1, n2, k);
    ir_expr *args[3] = { n1, n2, ir_const_i32(c->f, k) };
    return ir_rtcall(c->f, IR_RT_ADAPTIVE_COARSE, 1, &mask, 3, args);
}

/* Adaptive: coarse pass, refinement, fine pass, reconstruction; importance: mask, one pass,
 * reconstruction. Both run inside the allocation of their mask planes. */
static void lower_masked(lower_ctx *c, nest_spec *ns, ir_var **vars, ir_buffer *img)
{
    ir_func *f = c->f;
    const pf_stage *st = ns->st;
    const pf_stage_approx *a = ns->a;
    const lower_lattice *L = ns->L;
    ir_buffer *mask = mask_buffer(c, st, L, "mask"), *aux = mask_buffer(c, st, L, "aux");
    ns->mask = mask;
    ir_list body = { 0 }, *outer = c->out;
    c->out = &body;
    ir_expr *n2 = st->n_vars > 1 ? L->n[1] : ir_const_i32(f, 1);
    if (a->sample == PF_SAMPLE_ADAPTIVE) {
        lower_emit(c, coarse_mask(c, st, mask, L->n[0], n2, a->k));
        lower_emit(c, nest_pass(c, ns, vars, 2));
        ir_expr *rargs[3 * IR_MAX_DIMS + 2];
        int n = view_args(st, L, rargs);
        rargs[n++] = ir_const_i32(f, a->k);
        rargs[n++] = ir_const_f32(f, a->frac);
        ir_buffer *bufs[3] = { img, mask, aux };
        ir_stmt *r = ir_rtcall(f, IR_RT_ADAPTIVE_REFINE, 3, bufs, n, rargs);
        r->view_dims = st->n_vars;
        r->serial_why = IR_SERIAL_ADAPTIVE;
        lower_emit(c, r);
        lower_emit(c, nest_pass(c, ns, vars, 1));
    } else {
        if (!a->ref) {
            c->out = outer;
            lower_error(c, "stage '%s': importance sampling needs a reference image", st->name);
            return;
        }
        ir_expr *args[8] = { L->lo[0], L->step[0],
                             st->n_vars > 1 ? L->lo[1] : ir_const_i32(f, 0),
                             st->n_vars > 1 ? L->step[1] : ir_const_i32(f, 1), L->n[0], n2,
                             ir_const_f32(f, a->frac), ir_const_f32(f, a->sigma_imp) };
        ir_buffer *bufs[3] = { c->bufs[a->ref->index], mask, aux };
        ir_stmt *m = ir_rtcall(f, IR_RT_IMPORTANCE_MASK, 3, bufs, 8, args);
        m->serial_why = IR_SERIAL_DITHER;
        lower_emit(c, m);
        lower_emit(c, nest_pass(c, ns, vars, 1));
    }
    if (a->recon != PF_RECON_NONE)
        emit_reconstruct(c, st, L, img, mask, aux);
    c->out = outer;
    /* not zeroed: the mask calls write every element of both planes before anything reads
     * them (a failed call returns from the pipeline) */
    ir_stmt *inner = ir_alloc(f, aux, false, ir_list_block(f, &body));
    lower_emit(c, ir_alloc(f, mask, false, inner));
}

/* ---- the stage ---- */

/* The loop variables: the stage variables themselves, or, for an on-demand stage stored
 * downsampled, the storage index J along each stage dimension with v = lo + J * step * spacing
 * (so its stores are contiguous and vectorize). Binds the frame and the own-pixel addressing. */
static void bind_frame(lower_ctx *c, const pf_stage *st, const lower_lattice *L,
                       lower_frame *fr, ir_var **vars)
{
    ir_func *f = c->f;
    ir_buffer *store = lower_own_store(c, st);
    fr->n_slots = st->n_slots;
    fr->slots = PF_NEW_ARRAY(f->arena, ir_expr *, st->n_slots + 1);
    fr->arrays = PF_NEW_ARRAY(f->arena, ir_var *, st->n_slots + 1);
    c->own.store = lower_storage(c, st);
    for (int d = 0; d < st->n_vars; d++) {
        vars[d] = ir_var_new(f, store ? "J" : st->vars[d]->name, IR_I32, IR_VAR_LOOP);
        ir_expr *v = ir_ref(f, vars[d]);
        c->own.index[d] = v;
        if (store) {
            ir_expr *m = lower_sample_step(c, st, L, d);
            v = irf_bin(f, IR_ADD, L->lo[d], irf_bin(f, IR_MUL, v, m));
        }
        c->own.coord[d] = v;
        fr->slots[st->vars[d]->slot] = v;
    }
}

/* Only channels [0, c) of the last variable (in loop-variable units). */
static void cut_channels(lower_ctx *c, const pf_stage *st, nest_spec *ns, bool on_demand)
{
    ir_func *f = c->f;
    const pf_stage_approx *a = lower_approx(c, st);
    int k = st->n_vars;
    if (on_demand) {
        int s = a->spacing[k - 1];
        ns->hi[k - 1] = irf_bin(f, IR_MIN, ns->hi[k - 1], ir_const_i32(f, (a->channels + s - 1) / s));
        return;
    }
    ir_expr *cut = irf_bin(f, IR_ADD, ns->L->lo[k - 1],
                           lower_step_mul(f, ns->L->step[k - 1], a->channels));
    ns->hi[k - 1] = irf_bin(f, IR_MIN, ns->hi[k - 1], cut);
}

static void lower_sampled(lower_ctx *c, const pf_stage *st, nest_spec *ns, ir_var **vars)
{
    ir_func *f = c->f;
    const pf_stage_approx *a = lower_approx(c, st);
    const lower_lattice *L = ns->L;
    int k = st->n_vars;
    ir_buffer *img = c->bufs[st->image->image->index];
    ir_buffer *store = lower_own_store(c, st);
    if (a->sample == PF_SAMPLE_GRID) {
        for (int d = 0; d < k; d++) {
            if (store) {  /* loop over the storage index J */
                ns->lo[d] = ns->align[d] = ir_const_i32(f, 0);
                ns->hi[d] = ir_ref(f, store->extent[d]);
                ns->step[d] = ir_const_i32(f, 1);
            } else {
                ns->step[d] = lower_sample_step(c, st, L, d);
            }
        }
    }
    if (a->channels > 0)
        cut_channels(c, st, ns, store != NULL);
    switch (a->sample) {
    case PF_SAMPLE_ADAPTIVE:
    case PF_SAMPLE_IMPORTANCE:
        lower_masked(c, ns, vars, img);
        break;
    case PF_SAMPLE_GRID:
    case PF_SAMPLE_ALL:
    case PF_SAMPLE_LOOP:
        if (a->sample == PF_SAMPLE_LOOP)
            nest_loop_perf(c, ns, k >= 2 ? 1 : 0);
        lower_emit(c, build_nest(c, ns, vars));
        if (a->sample == PF_SAMPLE_GRID && a->recon != PF_RECON_NONE && !store &&
            !lower_grid_fill(c, st, L, img) && !lower_gauss_gpu(c, st, L, img))
            emit_reconstruct(c, st, L, img, NULL, NULL);
        break;
    }
    if (a->channels > 0 && !store)
        emit_copy_channels(c, st, L, img);
}

/* An approximated stage whose lattice is empty (an `over` range with no point in the image)
 * runs no part at all, as in the interpreter: the stage runtime refuses empty planes (found by
 * fuzz_jit: adaptive sampling of an empty range failed the run). */
static void lower_sampled_nonempty(lower_ctx *c, const pf_stage *st, nest_spec *ns,
                                   ir_var **vars)
{
    if (!st->over) {  /* the lattice is the image: never empty */
        lower_sampled(c, st, ns, vars);
        return;
    }
    ir_func *f = c->f;
    ir_expr *cond = NULL;
    for (int d = 0; d < st->n_vars; d++) {
        ir_expr *t = irf_bin(f, IR_LT, ir_const_i32(f, 0), ns->L->n[d]);
        cond = cond ? irf_bin(f, IR_AND, cond, t) : t;
    }
    ir_list body = { 0 }, *outer = c->out;
    c->out = &body;
    lower_sampled(c, st, ns, vars);
    c->out = outer;
    lower_emit(c, ir_if(f, cond, ir_list_block(f, &body), NULL));
}

/* The lattices of the stages computed at st (and of theirs), defined here, in the scope st is
 * lowered in: made first inside st's tiles, their lets would be out of scope for later uses
 * (fuzz_jit finding over-end-out-of-scope-under-at). */
static void producer_lattices(lower_ctx *c, const pf_stage *st)
{
    for (int i = 0; i < c->prog->n_stages; i++)
        if (lower_exec(c, i)->at == st->index) {
            producer_lattices(c, c->prog->stages[i]);
            lower_stage_lattice(c, c->prog->stages[i]);
        }
}

void lower_stage(lower_ctx *c, const pf_stage *st)
{
    ir_func *f = c->f;
    producer_lattices(c, st);
    lower_lattice *L = lower_stage_lattice(c, st);
    lower_frame fr = { 0 }, *saved = c->frame;
    ir_var *vars[IR_MAX_DIMS];
    const pf_image_decl *img = st->image->image;
    lower_tile_fill *fill = lower_tile_fill_begin(c, st, L);
    if (fill)  /* the stage's storage while it is lowered: its tile's samples */
        c->store[img->index] = lower_tile_fill_samples(fill);
    bind_frame(c, st, L, &fr, vars);
    char note[160];
    snprintf(note, sizeof note, "stage %.100s%s%s", st->name, st->serial ? " (serial)" : "",
             lower_approx(c, st) ? " (approximated)" : "");
    lower_emit(c, ir_comment(f, note));
    c->frame = &fr;
    c->stage = st;
    nest_spec ns = { 0 };
    ns.st = st;
    ns.L = L;
    ns.a = lower_approx(c, st);
    ns.fill = fill;
    nest_exact(&ns, L, st->n_vars);
    if (ns.a)
        lower_sampled_nonempty(c, st, &ns, vars);
    else
        lower_emit(c, build_nest(c, &ns, vars));
    if (fill)
        c->store[img->index] = NULL;
    c->frame = saved;
    c->stage = NULL;
}
