/* Grid reconstruction in store mode as loops of the generated code (instead of a call to
 * reconstruct/rt_grid.c), so that it is vectorized and runs on the stage's threads.
 *
 * It computes exactly what pf_rt_grid_multilinear / pf_rt_grid_nearest compute on a lattice
 * anchored at 0 (docs/perforation.md §3): first along x on the sample rows, then along y on
 * every column. A position k (0 < k < s) past sample a and before sample b gets
 * (1 - t) a + t b with t = (float)k / (float)s, or under nearest b when 2k > s, else a;
 * positions past the last sample copy it. Dimensions after the second must have spacing 1. */
#include "codegen/lower_internal.h"

#include "perforate/schedule.h"

typedef struct fill_ctx {
    lower_ctx *c;
    ir_buffer *img;
    int nd;
    bool nearest;
    int width;        /* vector width, 1 = scalar */
    ir_loop_kind rows;  /* the row loops: parallel or serial */
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

/* The indices of img[x, y, row...]: idx with x (and y, unless NULL) put in. */
static void point(const fill_ctx *F, ir_expr *const *idx, ir_expr *x, ir_expr *y, ir_expr **i)
{
    for (int d = 0; d < F->nd; d++)
        i[d] = idx[d];
    i[0] = x;
    if (y)
        i[1] = y;
}

static ir_expr *at(fill_ctx *F, ir_expr *const *idx, ir_expr *x, ir_expr *y)
{
    ir_expr *i[IR_MAX_DIMS];
    point(F, idx, x, y, i);
    return ir_load(F->c->f, F->img, i, 0);
}

static ir_stmt *put(fill_ctx *F, ir_expr *const *idx, ir_expr *x, ir_expr *y, ir_expr *v)
{
    ir_expr *i[IR_MAX_DIMS];
    point(F, idx, x, y, i);
    return ir_store(F->c->f, F->img, i, v, 0, false);
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

/* One sample row along x: x = x0 + k with x0 = x - x % sx up to the last sample (samples,
 * k = 0, are stored back unchanged), then copies of the last sample. */
static ir_stmt *x_row(fill_ctx *F, ir_expr *const *idx, int sx)
{
    ir_func *f = F->c->f;
    ir_expr *last = last_sample(F, ir_ref(f, F->img->extent[0]), sx);
    ir_var *x = var(F, "fx");
    ir_expr *xr = ir_ref(f, x), *k = irf_bin(f, IR_MOD, xr, i32(F, sx));
    ir_expr *x0 = irf_bin(f, IR_SUB, xr, k);
    ir_expr *v = blend(F, at(F, idx, x0, NULL), at(F, idx, irf_bin(f, IR_ADD, x0, i32(F, sx)),
                                                   NULL), k, sx);
    v = irf_select(f, irf_bin(f, IR_EQ, k, i32(F, 0)), at(F, idx, xr, NULL), v);
    ir_stmt *between = loop(F, x, i32(F, 0), last, IR_LOOP_VECTORIZED, put(F, idx, xr, NULL, v));
    ir_var *x2 = var(F, "fx");
    ir_stmt *after = loop(F, x2, irf_bin(f, IR_ADD, last, i32(F, 1)),
                          ir_ref(f, F->img->extent[0]), IR_LOOP_SERIAL,
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
    ir_expr *h = ir_ref(f, F->img->extent[1]);
    idx[1] = irf_bin(f, IR_MUL, ir_ref(f, j), i32(F, sy));
    ir_stmt *row = x_row(F, idx, sx);
    ir_expr *n = irf_bin(f, IR_ADD, irf_bin(f, IR_DIV, irf_bin(f, IR_SUB, h, i32(F, 1)),
                                            i32(F, sy)), i32(F, 1));
    return loop(F, j, i32(F, 0), n, F->rows, row);
}

/* The y pass: rows j*sy + k between samples j*sy and j*sy + sy, then copies of the last
 * sample row. */
static ir_stmt *y_pass(fill_ctx *F, ir_expr **idx, int sy)
{
    ir_func *f = F->c->f;
    ir_expr *w = ir_ref(f, F->img->extent[0]), *h = ir_ref(f, F->img->extent[1]);
    ir_expr *last = last_sample(F, h, sy);
    ir_var *j = var(F, "fj"), *k = var(F, "fk"), *x = var(F, "fx");
    ir_expr *y0 = irf_bin(f, IR_MUL, ir_ref(f, j), i32(F, sy));
    ir_expr *xr = ir_ref(f, x);
    ir_expr *v = blend(F, at(F, idx, xr, y0), at(F, idx, xr, irf_bin(f, IR_ADD, y0, i32(F, sy))),
                       ir_ref(f, k), sy);
    ir_stmt *s = put(F, idx, xr, irf_bin(f, IR_ADD, y0, ir_ref(f, k)), v);
    s = loop(F, x, i32(F, 0), w, IR_LOOP_VECTORIZED, s);
    s = loop(F, k, i32(F, 1), i32(F, sy), IR_LOOP_SERIAL, s);
    ir_stmt *between = loop(F, j, i32(F, 0), irf_bin(f, IR_DIV, irf_bin(f, IR_SUB, h, i32(F, 1)),
                                                     i32(F, sy)), F->rows, s);
    ir_var *y2 = var(F, "fy"), *x2 = var(F, "fx");
    ir_stmt *c = put(F, idx, ir_ref(f, x2), ir_ref(f, y2), at(F, idx, ir_ref(f, x2), last));
    c = loop(F, x2, i32(F, 0), w, IR_LOOP_VECTORIZED, c);
    c = loop(F, y2, irf_bin(f, IR_ADD, last, i32(F, 1)), h, IR_LOOP_SERIAL, c);
    return pair(F, between, c);
}

/* Serial loops over the dimensions from 2 on around pass(F, idx, ...). */
static ir_stmt *over_planes(fill_ctx *F, ir_stmt *body, ir_var **v)
{
    ir_func *f = F->c->f;
    for (int d = F->nd - 1; d >= 2; d--)
        body = loop(F, v[d], i32(F, 0), ir_ref(f, F->img->extent[d]), IR_LOOP_SERIAL, body);
    return body;
}

bool lower_grid_fill(lower_ctx *c, const pf_stage *st, const lower_lattice *L, ir_buffer *img)
{
    (void)L;
    const pf_stage_approx *a = st->approx;
    int nd = img->ndims;
    if (!a || a->sample != PF_SAMPLE_GRID || st->over || c->region || st->n_vars != nd ||
        (a->recon != PF_RECON_LINEAR && a->recon != PF_RECON_NEAREST))
        return false;
    for (int d = 2; d < nd; d++)
        if (a->spacing[d] != 1)
            return false;
    const pf_exec_gene *g = &c->exec[st->index];
    fill_ctx F = { c, img, nd, a->recon == PF_RECON_NEAREST, g->vectorize > 1 ? g->vectorize : 1,
                   g->parallel && nd >= 2 ? IR_LOOP_PARALLEL : IR_LOOP_SERIAL };
    ir_func *f = c->f;
    ir_var *v[IR_MAX_DIMS] = { 0 };
    ir_expr *idx[IR_MAX_DIMS] = { 0 };
    for (int d = 2; d < nd; d++) {
        v[d] = var(&F, "fc");
        idx[d] = ir_ref(f, v[d]);
    }
    int sx = a->spacing[0], sy = nd > 1 ? a->spacing[1] : 1;
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
