/* Grid reconstruction in store mode as loops of the generated code (instead of a call to
 * reconstruct/rt_grid.c), so that it is vectorized and runs on the stage's threads.
 *
 * It computes exactly what pf_rt_grid_multilinear / pf_rt_grid_nearest compute on a lattice
 * anchored at 0 (docs/perforation.md §3): first along x on the sample rows, then along y on
 * every column. A position k (0 < k < s) past sample a and before sample b gets
 * (1 - t) a + t b with t = (float)k / (float)s, or under nearest b when 2k > s, else a;
 * positions past the last sample copy it. Dimensions after the second must have spacing 1. A
 * stage with `over` ranges fills its lattice view (lo + j * step, j < n along each variable),
 * as the runtime does. */
#include "codegen/lower_internal.h"

#include "codegen/ir_audit.h"
#include "perforate/exec.h"
#include "perforate/schedule.h"

#include <stdio.h>

typedef struct fill_ctx {
    lower_ctx *c;
    ir_buffer *img;
    int nd;
    bool nearest;
    int width;        /* vector width, 1 = scalar */
    ir_loop_kind rows;  /* the row loops: parallel or serial */
    int stage;          /* its index */
    /* The stage's lattice view (docs/perforation.md §1), what the runtime's fill gets: view
     * index j along d is image index lo[d] + j * step[d], j in [0, n[d]); lo NULL where the
     * view is the image itself along d. */
    ir_expr *lo[IR_MAX_DIMS], *step[IR_MAX_DIMS], *n[IR_MAX_DIMS];
} fill_ctx;

static ir_expr *i32(fill_ctx *F, int64_t v)
{
    return ir_const_i32(F->c->f, (int32_t)v);
}

static ir_var *var(fill_ctx *F, const char *name)
{
    return ir_var_new(F->c->f, name, IR_I32, IR_VAR_LOOP);
}

/* The blend of a and b at offset k (i32) of spacing s. */
static ir_expr *blend(fill_ctx *F, ir_expr *a, ir_expr *b, ir_expr *k, int s)
{
    ir_func *f = F->c->f;
    if (F->nearest)
        return irf_select(f, irf_bin(f, IR_LT, i32(F, s), irf_bin(f, IR_MUL, k, i32(F, 2))), b, a);
    ir_expr *t = irf_bin(f, IR_DIV, irf_cast(f, IR_F32, k), ir_const_f32(f, (float)s));
    ir_expr *u = irf_bin(f, IR_SUB, ir_const_f32(f, 1.0f), t);
    return irf_bin(f, IR_ADD, irf_bin(f, IR_MUL, u, a), irf_bin(f, IR_MUL, t, b));
}

/* The image indices of view point [x, y, row...]: idx with x (and y, unless NULL) put in. */
static void point(const fill_ctx *F, ir_expr *const *idx, ir_expr *x, ir_expr *y, ir_expr **i)
{
    for (int d = 0; d < F->nd; d++)
        i[d] = idx[d];
    i[0] = x;
    if (y)
        i[1] = y;
    for (int d = 0; d < F->nd; d++)
        if (F->lo[d])
            i[d] = irf_bin(F->c->f, IR_ADD, F->lo[d], irf_bin(F->c->f, IR_MUL, i[d], F->step[d]));
}

/* The view's extent along d. */
static ir_expr *extent(fill_ctx *F, int d)
{
    return F->lo[d] ? F->n[d] : ir_ref(F->c->f, F->img->extent[d]);
}

static ir_expr *ld(fill_ctx *F, ir_buffer *b, ir_expr *const *idx, ir_expr *x, ir_expr *y)
{
    ir_expr *i[IR_MAX_DIMS];
    point(F, idx, x, y, i);
    return ir_load(F->c->f, b, i, 0);
}

static ir_stmt *st(fill_ctx *F, ir_buffer *b, ir_expr *const *idx, ir_expr *x, ir_expr *y,
                   ir_expr *v)
{
    ir_expr *i[IR_MAX_DIMS];
    point(F, idx, x, y, i);
    return ir_store(F->c->f, b, i, v, 0, false);
}

static ir_expr *at(fill_ctx *F, ir_expr *const *idx, ir_expr *x, ir_expr *y)
{
    return ld(F, F->img, idx, x, y);
}

static ir_stmt *put(fill_ctx *F, ir_expr *const *idx, ir_expr *x, ir_expr *y, ir_expr *v)
{
    return st(F, F->img, idx, x, y, v);
}

static ir_stmt *loop(fill_ctx *F, ir_var *v, ir_expr *lo, ir_expr *hi, ir_loop_kind kind,
                     ir_stmt *body)
{
    if (kind == IR_LOOP_VECTORIZED && F->width <= 1)
        kind = IR_LOOP_SERIAL;
    ir_stmt *s = ir_for(F->c->f, v, lo, hi, NULL, kind, body);
    if (kind == IR_LOOP_VECTORIZED)
        s->width = F->width;
    return s;
}

/* A loop over rows (or gaps between sample rows): parallel when the stage is; when its gene
 * keeps it serial, that is the reason. */
static ir_stmt *rows_loop(fill_ctx *F, ir_var *v, ir_expr *lo, ir_expr *hi, ir_stmt *body)
{
    ir_stmt *s = loop(F, v, lo, hi, F->rows, body);
    if (F->rows == IR_LOOP_SERIAL && !lower_exec(F->c, F->stage)->parallel)
        s->serial_why = IR_SERIAL_SCHEDULE;
    return s;
}

static ir_stmt *pair(fill_ctx *F, ir_stmt *a, ir_stmt *b)
{
    ir_stmt *s[2] = { a, b };
    return ir_block(F->c->f, 2, s);
}

/* (n - 1) / s * s: the last sample of an extent n. */
static ir_expr *last_sample(fill_ctx *F, ir_expr *n, int s)
{
    ir_func *f = F->c->f;
    return irf_bin(f, IR_MUL, irf_bin(f, IR_DIV, irf_bin(f, IR_SUB, n, i32(F, 1)), i32(F, s)),
                   i32(F, s));
}

/* One sample row along x: per sample X with a next sample, the sx pixels from sx*X (the sample
 * stored back unchanged, so that the sx stores of one X are a contiguous run per vector of X,
 * interleaved by llvm_vstride.c, and its two samples strided loads), then copies of the last
 * sample. (Vectorized over pixels instead, the samples x - x % sx and x - x % sx + sx of a
 * pixel were two gathers per vector.) */
static ir_stmt *x_row(fill_ctx *F, ir_expr *const *idx, int sx)
{
    ir_func *f = F->c->f;
    ir_expr *last = last_sample(F, extent(F, 0), sx);
    ir_var *x = var(F, "fX");
    ir_expr *x0 = irf_bin(f, IR_MUL, ir_ref(f, x), i32(F, sx));
    ir_expr *x1 = irf_bin(f, IR_ADD, x0, i32(F, sx));
    ir_stmt **k_st = PF_NEW_ARRAY(f->arena, ir_stmt *, sx);
    for (int k = 0; k < sx; k++) {
        ir_expr *a = at(F, idx, x0, NULL);
        ir_expr *v = k == 0 ? a : blend(F, a, at(F, idx, x1, NULL), i32(F, k), sx);
        k_st[k] = put(F, idx, irf_bin(f, IR_ADD, x0, i32(F, k)), NULL, v);
    }
    ir_stmt *between = loop(F, x, i32(F, 0), irf_bin(f, IR_DIV, last, i32(F, sx)),
                            IR_LOOP_VECTORIZED, ir_block(f, sx, k_st));
    ir_var *x2 = var(F, "fx");
    ir_stmt *after = loop(F, x2, irf_bin(f, IR_ADD, last, i32(F, 1)), extent(F, 0),
                          IR_LOOP_SERIAL,
                          put(F, idx, ir_ref(f, x2), NULL, at(F, idx, last, NULL)));
    return pair(F, between, after);
}

/* The x pass over the sample rows j*sy (idx[2..] fixed by the caller). */
static ir_stmt *x_pass(fill_ctx *F, ir_expr **idx, int sx, int sy)
{
    ir_func *f = F->c->f;
    if (F->nd < 2)
        return x_row(F, idx, sx);
    ir_var *j = var(F, "fj");
    ir_expr *h = extent(F, 1);
    idx[1] = irf_bin(f, IR_MUL, ir_ref(f, j), i32(F, sy));
    ir_stmt *row = x_row(F, idx, sx);
    ir_expr *n = irf_bin(f, IR_ADD, irf_bin(f, IR_DIV, irf_bin(f, IR_SUB, h, i32(F, 1)),
                                            i32(F, sy)), i32(F, 1));
    return rows_loop(F, j, i32(F, 0), n, row);
}

/* The y pass: rows j*sy + k between samples j*sy and j*sy + sy, then copies of the last
 * sample row. */
static ir_stmt *y_pass(fill_ctx *F, ir_expr **idx, int sy)
{
    ir_func *f = F->c->f;
    ir_expr *w = extent(F, 0), *h = extent(F, 1);
    ir_expr *last = last_sample(F, h, sy);
    ir_var *j = var(F, "fj"), *k = var(F, "fk"), *x = var(F, "fx");
    ir_expr *y0 = irf_bin(f, IR_MUL, ir_ref(f, j), i32(F, sy));
    ir_expr *xr = ir_ref(f, x);
    ir_expr *v = blend(F, at(F, idx, xr, y0), at(F, idx, xr, irf_bin(f, IR_ADD, y0, i32(F, sy))),
                       ir_ref(f, k), sy);
    ir_stmt *s = put(F, idx, xr, irf_bin(f, IR_ADD, y0, ir_ref(f, k)), v);
    s = loop(F, x, i32(F, 0), w, IR_LOOP_VECTORIZED, s);
    s = loop(F, k, i32(F, 1), i32(F, sy), IR_LOOP_SERIAL, s);
    ir_stmt *between = rows_loop(F, j, i32(F, 0), irf_bin(f, IR_DIV, irf_bin(f, IR_SUB, h,
                                                                              i32(F, 1)),
                                                           i32(F, sy)), s);
    ir_var *y2 = var(F, "fy"), *x2 = var(F, "fx");
    ir_stmt *c = put(F, idx, ir_ref(f, x2), ir_ref(f, y2), at(F, idx, ir_ref(f, x2), last));
    c = loop(F, x2, i32(F, 0), w, IR_LOOP_VECTORIZED, c);
    c = rows_loop(F, y2, irf_bin(f, IR_ADD, last, i32(F, 1)), h, c);
    return pair(F, between, c);
}

/* Serial loops over the dimensions from 2 on around pass(F, idx, ...). */
static ir_stmt *over_planes(fill_ctx *F, ir_stmt *body, ir_var **v)
{
    for (int d = F->nd - 1; d >= 2; d--)
        body = loop(F, v[d], i32(F, 0), extent(F, d), IR_LOOP_SERIAL, body);
    return body;
}

/* ---- on the GPU: each pass one kernel over its points, a point a thread ----
 *
 * Same values as the passes above. A thread writes one point, and the samples it reads are not
 * written in its pass: the x pass skips the samples instead of storing them back, so no thread
 * reads what another writes. Tiles of FILL_TX x FILL_TY threads; the third dimension is the
 * grid's z, a fourth a loop of launches on the host. */

#define FILL_TX 64
#define FILL_TY 4

static ir_stmt *gpu_loop(fill_ctx *F, ir_var *v, ir_expr *lo, ir_expr *hi, ir_expr *step,
                         ir_loop_kind kind, int dim, int width, ir_stmt *body)
{
    ir_stmt *s = ir_for(F->c->f, v, lo, hi, step, kind, body);
    s->gpu_dim = dim;
    s->width = width;
    return s;
}

/* body over y in [0, ny) and x in [0, nx) as one kernel, for every plane. */
static ir_stmt *gpu_nest(fill_ctx *F, ir_var *y, ir_expr *ny, ir_var *x, ir_expr *nx,
                         ir_var **planes, ir_stmt *body)
{
    ir_func *f = F->c->f;
    ir_var *yo = var(F, "fyo"), *xo = var(F, "fxo");
    ir_expr *xe = irf_bin(f, IR_MIN, irf_bin(f, IR_ADD, ir_ref(f, xo), i32(F, FILL_TX)), nx);
    ir_expr *ye = irf_bin(f, IR_MIN, irf_bin(f, IR_ADD, ir_ref(f, yo), i32(F, FILL_TY)), ny);
    ir_stmt *s = gpu_loop(F, x, ir_ref(f, xo), xe, NULL, IR_LOOP_GPU_THREAD, 0, FILL_TX, body);
    s = gpu_loop(F, y, ir_ref(f, yo), ye, NULL, IR_LOOP_GPU_THREAD, 1, FILL_TY, s);
    s = gpu_loop(F, xo, i32(F, 0), nx, i32(F, FILL_TX), IR_LOOP_GPU_BLOCK, 0, 1, s);
    s = gpu_loop(F, yo, i32(F, 0), ny, i32(F, FILL_TY), IR_LOOP_GPU_BLOCK, 1, 1, s);
    if (F->nd >= 3)
        s = gpu_loop(F, planes[2], i32(F, 0), extent(F, 2), NULL, IR_LOOP_GPU_BLOCK, 2, 1, s);
    for (int d = F->nd - 1; d >= 3; d--)
        s = loop(F, planes[d], i32(F, 0), extent(F, d), IR_LOOP_SERIAL, s);
    return s;
}

/* Position p along a pass of spacing s whose last sample is `last`: past it, `copy`; between
 * samples (p % s != 0), `between`; a sample: nothing. */
static ir_stmt *gpu_point(fill_ctx *F, ir_expr *p, ir_expr *last, int s, ir_stmt *copy,
                          ir_stmt *between)
{
    ir_func *f = F->c->f;
    ir_expr *k = irf_bin(f, IR_MOD, p, i32(F, s));
    return ir_if(f, irf_bin(f, IR_LT, last, p), copy,
                 ir_if(f, irf_bin(f, IR_NE, k, i32(F, 0)), between, NULL));
}

static ir_stmt *gpu_x_pass(fill_ctx *F, ir_expr **idx, ir_var **planes, int sx, int sy)
{
    ir_func *f = F->c->f;
    ir_var *j = var(F, "fj"), *x = var(F, "fx");
    ir_expr *xr = ir_ref(f, x), *row = irf_bin(f, IR_MUL, ir_ref(f, j), i32(F, sy));
    ir_expr *last = last_sample(F, extent(F, 0), sx);
    ir_expr *k = irf_bin(f, IR_MOD, xr, i32(F, sx)), *x0 = irf_bin(f, IR_SUB, xr, k);
    ir_stmt *between = put(F, idx, xr, row, blend(F, at(F, idx, x0, row),
                                                  at(F, idx, irf_bin(f, IR_ADD, x0, i32(F, sx)),
                                                     row), k, sx));
    ir_stmt *copy = put(F, idx, xr, row, at(F, idx, last, row));
    ir_expr *rows = irf_bin(f, IR_ADD, irf_bin(f, IR_DIV, irf_bin(f, IR_SUB, extent(F, 1),
                                                                    i32(F, 1)), i32(F, sy)),
                            i32(F, 1));
    return gpu_nest(F, j, rows, x, extent(F, 0), planes,
                    gpu_point(F, xr, last, sx, copy, between));
}

static ir_stmt *gpu_y_pass(fill_ctx *F, ir_expr **idx, ir_var **planes, int sy)
{
    ir_func *f = F->c->f;
    ir_var *y = var(F, "fy"), *x = var(F, "fx");
    ir_expr *xr = ir_ref(f, x), *yr = ir_ref(f, y);
    ir_expr *last = last_sample(F, extent(F, 1), sy);
    ir_expr *k = irf_bin(f, IR_MOD, yr, i32(F, sy)), *y0 = irf_bin(f, IR_SUB, yr, k);
    ir_stmt *between = put(F, idx, xr, yr, blend(F, at(F, idx, xr, y0),
                                                 at(F, idx, xr, irf_bin(f, IR_ADD, y0,
                                                                        i32(F, sy))), k, sy));
    ir_stmt *copy = put(F, idx, xr, yr, at(F, idx, xr, last));
    return gpu_nest(F, y, extent(F, 1), x, extent(F, 0), planes,
                    gpu_point(F, yr, last, sy, copy, between));
}

/* The two passes as kernels; planes: fresh variables per pass. */
static void gpu_fill(fill_ctx *F, int sx, int sy)
{
    ir_func *f = F->c->f;
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0 && sx <= 1) || (pass == 1 && sy <= 1))
            continue;
        ir_var *planes[IR_MAX_DIMS] = { 0 };
        ir_expr *idx[IR_MAX_DIMS] = { 0 };
        for (int d = 2; d < F->nd; d++) {
            planes[d] = var(F, "fc");
            idx[d] = ir_ref(f, planes[d]);
        }
        lower_emit(F->c, pass == 0 ? gpu_x_pass(F, idx, planes, sx, sy)
                                   : gpu_y_pass(F, idx, planes, sy));
    }
}

bool lower_grid_fill(lower_ctx *c, const pf_stage *st, const lower_lattice *L, ir_buffer *img)
{
    const pf_stage_approx *a = lower_approx(c, st);
    int nd = img->ndims;
    /* a stage over fewer variables than its image dimensions (x, y of an RGB image) fills
     * the further dimensions as planes, as the runtime does (spacing 1 beyond its variables);
     * a one-variable stage over a larger image is left to the runtime */
    int k = st->n_vars;
    if (!a || a->sample != PF_SAMPLE_GRID || c->region || (k != nd && k < 2) || k > nd ||
        (a->recon != PF_RECON_LINEAR && a->recon != PF_RECON_NEAREST))
        return false;
    for (int d = 2; d < k; d++)
        if (a->spacing[d] != 1)
            return false;
    const pf_exec_gene *g = lower_exec(c, st->index);
    fill_ctx F = { c, img, nd, a->recon == PF_RECON_NEAREST, g->vectorize > 1 ? g->vectorize : 1,
                   g->parallel && nd >= 2 ? IR_LOOP_PARALLEL : IR_LOOP_SERIAL, st->index,
                   { 0 }, { 0 }, { 0 } };
    for (int d = 0; st->over && d < k; d++) {  /* `over` ranges: the lattice view */
        F.lo[d] = L->lo[d];
        F.step[d] = L->step[d];
        F.n[d] = L->n[d];
    }
    int sx = a->spacing[0], sy = nd > 1 ? a->spacing[1] : 1;
    if (g->gpu && nd >= 2) {
        gpu_fill(&F, sx, sy);
        return true;
    }
    ir_func *f = c->f;
    ir_var *v[IR_MAX_DIMS] = { 0 };
    ir_expr *idx[IR_MAX_DIMS] = { 0 };
    for (int d = 2; d < nd; d++) {
        v[d] = var(&F, "fc");
        idx[d] = ir_ref(f, v[d]);
    }
    if (sx > 1)
        lower_emit(c, over_planes(&F, x_pass(&F, idx, sx, sy), v));
    if (sy > 1) {
        /* fresh plane variables: a variable is bound by one loop only */
        for (int d = 2; d < nd; d++) {
            v[d] = var(&F, "fc");
            idx[d] = ir_ref(f, v[d]);
        }
        lower_emit(c, over_planes(&F, y_pass(&F, idx, sy), v));
    }
    return true;
}

/* ---- per tile (a store-mode stage tiled along x and y) ----
 *
 * The whole-image fill above goes over the output three times after all tiles are done: the
 * samples, the x pass over the sample rows, the y pass over the other rows. When the stage is
 * tiled, each tile instead computes its samples (plus the first sample column and row of the
 * next tiles, recomputed there: Halide's overlapping tiles) into a scratch window S of the
 * sample grid, fills its sample rows along x into a second window R, and writes its pixels of
 * the image once, row by row, from R. Same values in the same operation order as the fill
 * above: along x on sample rows, then along y. */

struct lower_tile_fill {
    fill_ctx F;
    const pf_stage *st;
    ir_buffer *img, *S, *R;
    int sx, sy, tx, ty;
};

/* Tiled along x and y, its loop order with the tile loops outside x and y and the further
 * variables outside the tiles (a reorder that does not keep it fills the whole image after the
 * loops), and not itself computed at a consumer. */
static bool tile_fill_ok(const lower_ctx *c, const pf_stage *st)
{
    const pf_exec_gene *g = lower_exec(c, st->index);
    return !c->region && !g->gpu && g->tile[0] > 0 && g->tile[1] > 0 && pf_exec_tile_order_ok(g) &&
           c->plan->stages[st->index].tile_fill_ok;
}

static ir_buffer *window_buffer(lower_ctx *c, const char *name, int nd, ir_expr *const *extent)
{
    ir_func *f = c->f;
    ir_buffer *b = ir_buffer_new(f, name, IR_BUF_INTERNAL, nd);
    for (int d = 0; d < nd; d++) {
        b->extent[d]->positive = true;
        lower_emit(c, ir_let(f, b->extent[d], extent[d]));
    }
    ir_buffer_make_window(f, b);
    return b;
}

lower_tile_fill *lower_tile_fill_begin(lower_ctx *c, const pf_stage *st, const lower_lattice *L)
{
    if (!tile_fill_ok(c, st))
        return NULL;
    ir_func *f = c->f;
    const pf_stage_approx *a = lower_approx(c, st);
    const pf_exec_gene *g = lower_exec(c, st->index);
    lower_tile_fill *T = PF_NEW(f->arena, lower_tile_fill);
    T->st = st;
    T->img = c->bufs[st->image->image->index];
    int nd = T->img->ndims;
    T->F = (fill_ctx){ c, T->img, nd, a->recon == PF_RECON_NEAREST,
                       g->vectorize > 1 ? g->vectorize : 1, IR_LOOP_SERIAL, st->index,
                       { 0 }, { 0 }, { 0 } };
    T->sx = a->spacing[0];
    T->sy = a->spacing[1];
    T->tx = g->tile[0];
    T->ty = g->tile[1];
    ir_expr *n[IR_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        ir_expr *sp = ir_const_i32(f, a->spacing[d]);
        n[d] = irf_bin(f, IR_MAX, irf_bin(f, IR_DIV, irf_bin(f, IR_ADD, L->n[d],
                                                             ir_const_i32(f, a->spacing[d] - 1)),
                                          sp), ir_const_i32(f, 1));
    }
    char name[96];
    snprintf(name, sizeof name, "%.80s_samples", st->image->image->name);
    T->S = window_buffer(c, name, nd, n);
    ir_expr *rn[2] = { ir_ref(f, T->img->extent[0]), ir_ref(f, T->S->extent[1]) };
    snprintf(name, sizeof name, "%.80s_rows", st->image->image->name);
    T->R = window_buffer(c, name, 2, rn);
    return T;
}

ir_buffer *lower_tile_fill_samples(const lower_tile_fill *T)
{
    return T->S;
}

static ir_expr *mul(fill_ctx *F, ir_expr *a, int k)
{
    return irf_bin(F->c->f, IR_MUL, a, i32(F, k));
}

static ir_expr *minimum(fill_ctx *F, ir_expr *a, ir_expr *b)
{
    return irf_bin(F->c->f, IR_MIN, a, b);
}

/* The tile's sample rows Y of S filled along x into R: for X with a next sample, the sx
 * pixels from sx*X (one contiguous run per vector of X); then copies of the last sample. */
static ir_stmt *rows_pass(lower_tile_fill *T, ir_expr *const *idx, ir_expr *jx0, ir_expr *jy0,
                          ir_expr *px1)
{
    fill_ctx *F = &T->F;
    ir_func *f = F->c->f;
    ir_expr *one = i32(F, 1);
    ir_expr *lastx = irf_bin(f, IR_SUB, ir_ref(f, T->S->extent[0]), one);
    ir_expr *lasty = irf_bin(f, IR_SUB, ir_ref(f, T->S->extent[1]), one);
    ir_expr *xm = minimum(F, irf_bin(f, IR_ADD, jx0, i32(F, T->tx)), lastx);
    ir_var *y = var(F, "fY"), *x = var(F, "fX"), *xt = var(F, "fx");
    ir_expr *Y = ir_ref(f, y), *X = ir_ref(f, x), *x1 = irf_bin(f, IR_ADD, X, one);
    ir_stmt **k_st = PF_NEW_ARRAY(f->arena, ir_stmt *, T->sx);
    for (int k = 0; k < T->sx; k++) {
        ir_expr *a = ld(F, T->S, idx, X, Y);
        ir_expr *v = k == 0 ? a : blend(F, a, ld(F, T->S, idx, x1, Y), i32(F, k), T->sx);
        k_st[k] = st(F, T->R, idx, irf_bin(f, IR_ADD, mul(F, X, T->sx), i32(F, k)), Y, v);
    }
    ir_stmt *between = loop(F, x, jx0, xm, IR_LOOP_VECTORIZED, ir_block(f, T->sx, k_st));
    ir_stmt *after = loop(F, xt, mul(F, xm, T->sx), px1, IR_LOOP_SERIAL,
                          st(F, T->R, idx, ir_ref(f, xt), Y, ld(F, T->S, idx, lastx, Y)));
    ir_expr *ye = minimum(F, irf_bin(f, IR_ADD, jy0, i32(F, T->ty + 1)),
                          irf_bin(f, IR_ADD, lasty, one));
    return loop(F, y, jy0, ye, IR_LOOP_SERIAL, pair(F, between, after));
}

/* The tile's pixel rows from R: between sample rows Y and Y + 1 the blend (row sy*Y itself
 * exactly R's row), past the last sample row copies of it. One loop over the rows (a loop over
 * the sy rows of each gap would be unrolled by LLVM, its vector loop copied sy times). */
static ir_stmt *image_pass(lower_tile_fill *T, ir_expr *const *idx, ir_expr *jy0, ir_expr *px0,
                           ir_expr *px1, ir_expr *py1)
{
    fill_ctx *F = &T->F;
    ir_func *f = F->c->f;
    ir_expr *lasty = irf_bin(f, IR_SUB, ir_ref(f, T->S->extent[1]), i32(F, 1));
    ir_expr *ym = minimum(F, irf_bin(f, IR_ADD, jy0, i32(F, T->ty)), lasty);
    ir_var *y = var(F, "fy"), *x = var(F, "fx");
    ir_expr *yr = ir_ref(f, y), *X = ir_ref(f, x);
    ir_expr *Y = irf_bin(f, IR_DIV, yr, i32(F, T->sy)), *K = irf_bin(f, IR_MOD, yr, i32(F, T->sy));
    ir_expr *a = ld(F, T->R, idx, X, Y);
    ir_expr *v = irf_select(f, irf_bin(f, IR_EQ, K, i32(F, 0)), a,
                            blend(F, a, ld(F, T->R, idx, X, irf_bin(f, IR_ADD, Y, i32(F, 1))),
                                  K, T->sy));
    /* nothing reads the image (tile_fill_ok): its rows bypass the cache */
    ir_stmt *s = st(F, T->img, idx, X, yr, v);
    s->stream = true;
    s = loop(F, x, px0, px1, IR_LOOP_VECTORIZED, s);
    ir_expr *yb = mul(F, ym, T->sy);
    ir_stmt *between = loop(F, y, mul(F, jy0, T->sy), yb, IR_LOOP_SERIAL, s);
    ir_var *y2 = var(F, "fy"), *x2 = var(F, "fx");
    ir_stmt *c = st(F, T->img, idx, ir_ref(f, x2), ir_ref(f, y2),
                    ld(F, T->R, idx, ir_ref(f, x2), lasty));
    c->stream = true;
    c = loop(F, x2, px0, px1, IR_LOOP_VECTORIZED, c);
    c = loop(F, y2, yb, py1, IR_LOOP_SERIAL, c);
    return pair(F, between, c);
}

static ir_stmt *window(lower_tile_fill *T, ir_buffer *b, ir_expr *const *lo, ir_expr *const *hi,
                       ir_stmt *body)
{
    ir_func *f = T->F.c->f;
    ir_expr *origin[IR_MAX_DIMS], *size[IR_MAX_DIMS];
    for (int d = 0; d < b->ndims; d++) {
        origin[d] = lo[d];
        size[d] = irf_bin(f, IR_MAX, irf_bin(f, IR_SUB, hi[d], lo[d]), i32(&T->F, 1));
    }
    return ir_alloc_window(f, b, b == T->S && lower_needs_zero(T->F.c, T->st->image->image), origin,
                           size, body);
}

ir_stmt *lower_tile_fill_wrap(lower_tile_fill *T, ir_var *const *vars, ir_var *xo, ir_var *yo,
                         ir_stmt *samples)
{
    fill_ctx *F = &T->F;
    ir_func *f = F->c->f;
    ir_expr *idx[IR_MAX_DIMS] = { 0 }, *lo[IR_MAX_DIMS], *hi[IR_MAX_DIMS];
    ir_expr *jx0 = ir_ref(f, xo), *jy0 = ir_ref(f, yo);
    for (int d = 2; d < F->nd; d++) {
        idx[d] = lo[d] = ir_ref(f, vars[d]);
        hi[d] = irf_bin(f, IR_ADD, lo[d], i32(F, 1));
    }
    ir_expr *px0 = mul(F, jx0, T->sx);
    ir_expr *px1 = minimum(F, mul(F, irf_bin(f, IR_ADD, jx0, i32(F, T->tx)), T->sx),
                           ir_ref(f, T->img->extent[0]));
    ir_expr *py1 = minimum(F, mul(F, irf_bin(f, IR_ADD, jy0, i32(F, T->ty)), T->sy),
                           ir_ref(f, T->img->extent[1]));
    ir_stmt *fill = pair(F, rows_pass(T, idx, jx0, jy0, px1),
                         image_pass(T, idx, jy0, px0, px1, py1));
    ir_expr *rlo[2] = { px0, jy0 }, *rhi[2];
    rhi[0] = px1;
    rhi[1] = minimum(F, irf_bin(f, IR_ADD, jy0, i32(F, T->ty + 1)),
                     ir_ref(f, T->S->extent[1]));
    fill = window(T, T->R, rlo, rhi, fill);
    lo[0] = jx0;
    lo[1] = jy0;
    hi[0] = minimum(F, irf_bin(f, IR_ADD, jx0, i32(F, T->tx + 1)), ir_ref(f, T->S->extent[0]));
    hi[1] = rhi[1];
    return window(T, T->S, lo, hi, pair(F, samples, fill));
}
