/* A grid stage's store-mode Gaussian reconstruction as GPU kernels (issue 24, docs/gpu.md §5):
 * what pf_rt_recon_gaussian computes on the stage's lattice view (reconstruct/rt_gauss.c), the
 * normalised convolution I' = (G*(I.S)) / (G*S) with the Young-van Vliet recursive Gaussian of
 * base/gauss.c, written at the skipped pixels, nearest sample where the weight is too small.
 *
 * Planes: one scratch image G of the view's mask plane with 1 + P planes, plane 0 the weights
 * S (then G*S), plane 1 + p the samples of view plane p (then their blur): one kernel fills
 * them, the blur runs on every plane at once (along x, then along y, as the CPU does), one
 * kernel divides.
 *
 * The blur of one line (a row, then a column) is a causal and an anticausal third-order
 * recursion. Two ways, chosen by PF_GPU_GAUSS (so the two can be timed against each other,
 * bench/gpu/run.sh step `gauss`):
 * - "rows": one thread per line runs both passes, as the CPU does;
 * - "tiled" (default, tiles of 64; "tiled:N" for N in 3..4096): the recursive-filter paper's
 *   scheme (Chaurasia et al. 2015, after Nehab et al. 2011; ../shared/seeds/000_*.txt Fig. 3)
 *   for each pass: (1) every tile of every line runs the recursion from a zero state and keeps
 *   its last three states, the tile's tail; (2) one thread per line carries the state across
 *   tiles, s_t = tail_t + H s_(t-1), H being T steps of the homogeneous recursion (a 3x3
 *   matrix computed here in double); (3) every tile reruns the recursion from its incoming
 *   state and writes it. The anticausal pass runs the same on reversed lines; its start state
 *   (from the causal end state, base/gauss.h's m) comes from the causal pass's last tile.
 *
 * Precision: the recursion runs in double (IR_F64) with the CPU's coefficients and operation
 * order; its feedback gain (about 1/B: 144 at sigma 8) would amplify float rounding. States
 * kept between kernels are stored as two floats, hi = (float)s and lo = (float)(s - hi), about
 * 48 bits. Where this differs from the CPU: the causal output is stored as float before the
 * anticausal pass (the CPU keeps it in double): an error of 2^-24 relative per value, which the
 * anticausal pass (gain 1, a positive response) keeps at that level; in tiled mode also the
 * regrouped sums of step (2), about 1e-16 relative times the feedback gain. Both stay far
 * below the 1e-5 the tests allow on images in [0, 1]: codegen_gpu_lower measures max abs
 * 2.4e-7 at most, in both modes, up to width 62 (keeping the states as one float instead: 4.5e-6
 * at width 9.8, growing with the width). */
#include "codegen/lower_internal.h"

#include "base/gauss.h"
#include "reconstruct/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tiles of 64: on an H200 at 2048x1536 the Gaussians of the blur, the bilateral filter and the
 * median ran 1.08, 1.22, 4.19 ms with 64 against 1.39, 1.55, 4.50 with 32 and 1.81, 1.97,
 * 4.92 with 16 (docs/gpu.md §6). */
#define GG_TILE 64
#define GG_PI 3.14159265358979323846

typedef struct gg {
    lower_ctx *c;
    ir_func *f;
    lower_view v;
    ir_expr *np;      /* view planes beyond the mask plane */
    ir_buffer *G;     /* n0 x n1 x (1 + np) */
    int sx, sy;
    pf_yvv k;
    double H[3][3];   /* incoming state -> state after a tile of the homogeneous recursion */
    int tile;         /* 0: one thread per line */
    float min_den;
} gg;

/* ---- expressions ---- */

static ir_expr *i32(gg *g, int v)
{
    return ir_const_i32(g->f, v);
}

static ir_expr *f64(gg *g, double v)
{
    return ir_const_f64(g->f, v);
}

static ir_expr *op(gg *g, ir_op o, ir_expr *a, ir_expr *b)
{
    return irf_bin(g->f, o, a, b);
}

static ir_expr *wide(gg *g, ir_expr *a)
{
    return irf_cast(g->f, IR_F64, a);
}

static ir_var *loop_var(gg *g, const char *name)
{
    return ir_var_new(g->f, name, IR_I32, IR_VAR_LOOP);
}

/* A let of a fresh variable; its reference. */
static ir_expr *let(gg *g, ir_list *out, const char *name, ir_expr *value)
{
    ir_var *v = ir_var_new(g->f, name, value->type, IR_VAR_LET);
    ir_list_push(g->f, out, ir_let(g->f, v, value));
    return ir_ref(g->f, v);
}

/* ---- the scratch planes and the view ---- */

/* G at position i of line (l, P) along axis. */
static ir_expr *g_load(gg *g, int axis, ir_expr *i, ir_expr *l, ir_expr *P)
{
    ir_expr *idx[3] = { axis ? l : i, axis ? i : l, P };
    return ir_load(g->f, g->G, idx, 0);
}

static ir_stmt *g_store(gg *g, int axis, ir_expr *i, ir_expr *l, ir_expr *P, ir_expr *v)
{
    ir_expr *idx[3] = { axis ? l : i, axis ? i : l, P };
    return ir_store(g->f, g->G, idx, v, 0, false);
}

/* The image indices of view point (x, y) of view plane p. */
static void view_point(gg *g, ir_expr *x, ir_expr *y, ir_expr *p, ir_expr **i)
{
    ir_expr *j[IR_MAX_DIMS] = { x, y };
    if (g->v.nd == 3)
        j[2] = p;
    if (g->v.nd == 4) {
        j[2] = op(g, IR_MOD, p, g->v.n[2]);
        j[3] = op(g, IR_DIV, p, g->v.n[2]);
    }
    lower_gpu_view_index(g->f, &g->v, j, i);
}

static ir_expr *img_load(gg *g, ir_expr *x, ir_expr *y, ir_expr *p)
{
    ir_expr *i[IR_MAX_DIMS];
    view_point(g, x, y, p, i);
    return ir_load(g->f, g->v.img, i, 0);
}

static ir_stmt *img_store(gg *g, ir_expr *x, ir_expr *y, ir_expr *p, ir_expr *v)
{
    ir_expr *i[IR_MAX_DIMS];
    view_point(g, x, y, p, i);
    return ir_store(g->f, g->v.img, i, v, 0, false);
}

/* Whether (x, y) is a sample: the grid anchored at the view's origin. */
static ir_expr *is_sample(gg *g, ir_expr *x, ir_expr *y)
{
    ir_expr *mx = op(g, IR_EQ, op(g, IR_MOD, x, i32(g, g->sx)), i32(g, 0));
    ir_expr *my = op(g, IR_EQ, op(g, IR_MOD, y, i32(g, g->sy)), i32(g, 0));
    return op(g, IR_AND, mx, my);
}

/* The nearest sample along one axis of spacing s and extent n: the lower one, or the upper one
 * when strictly closer and inside (pf_rt_nearest_index's rule: ties to the smaller index). */
static ir_expr *nearest(gg *g, ir_expr *x, int s, ir_expr *n)
{
    ir_expr *k = op(g, IR_MOD, x, i32(g, s)), *lo = op(g, IR_SUB, x, k);
    ir_expr *up = op(g, IR_ADD, lo, i32(g, s));
    ir_expr *closer = op(g, IR_LT, i32(g, s), op(g, IR_MUL, k, i32(g, 2)));
    return irf_select(g->f, op(g, IR_AND, closer, op(g, IR_LT, up, n)), up, lo);
}

/* The points of the mask plane, the planes from z_lo to z_n. */
static ir_stmt *points(gg *g, ir_var *x, ir_var *y, ir_var *z, ir_expr *z_n, ir_stmt *body)
{
    lower_gpu_range r = { { x, y }, { g->v.n[0], g->v.n[1] }, { 64, 4 }, z, NULL, z_n };
    return lower_gpu_kernel(g->c, &r, body);
}

/* G := S on plane 0, I.S on plane 1 + p. */
static ir_stmt *init_kernel(gg *g)
{
    ir_func *f = g->f;
    ir_var *x = loop_var(g, "gx"), *y = loop_var(g, "gy"), *P = loop_var(g, "gP");
    ir_expr *X = ir_ref(f, x), *Y = ir_ref(f, y), *Pr = ir_ref(f, P);
    ir_expr *m = is_sample(g, X, Y), *zero = ir_const_f32(f, 0.0f);
    ir_stmt *den = g_store(g, 0, X, Y, i32(g, 0), irf_select(f, m, ir_const_f32(f, 1.0f), zero));
    ir_expr *in = img_load(g, X, Y, op(g, IR_SUB, Pr, i32(g, 1)));
    ir_stmt *num = g_store(g, 0, X, Y, Pr, irf_select(f, m, in, zero));
    ir_stmt *body = ir_if(f, op(g, IR_EQ, Pr, i32(g, 0)), den, num);
    return points(g, x, y, P, op(g, IR_ADD, g->np, i32(g, 1)), body);
}

/* The skipped pixels: num / den where den >= min_den, else the nearest sample. */
static ir_stmt *divide_kernel(gg *g)
{
    ir_func *f = g->f;
    ir_var *x = loop_var(g, "gx"), *y = loop_var(g, "gy"), *p = loop_var(g, "gp");
    ir_expr *X = ir_ref(f, x), *Y = ir_ref(f, y), *pr = ir_ref(f, p);
    ir_list body = { 0 };
    ir_expr *d = let(g, &body, "gden", g_load(g, 0, X, Y, i32(g, 0)));
    ir_expr *num = g_load(g, 0, X, Y, op(g, IR_ADD, pr, i32(g, 1)));
    ir_stmt *ratio = img_store(g, X, Y, pr, op(g, IR_DIV, num, d));
    ir_stmt *near = img_store(g, X, Y, pr, img_load(g, nearest(g, X, g->sx, g->v.n[0]),
                                                     nearest(g, Y, g->sy, g->v.n[1]), pr));
    ir_list_push(f, &body, ir_if(f, op(g, IR_LE, ir_const_f32(f, g->min_den), d), ratio, near));
    ir_stmt *s = ir_if(f, ir_un(f, IR_NOT, is_sample(g, X, Y)), ir_list_block(f, &body), NULL);
    return points(g, x, y, p, g->np, s);
}

/* ---- the recursion ---- */

typedef struct line {
    int axis, dir;    /* along x (0) or y (1); causal (0) or anticausal (1) */
    ir_expr *l, *P;   /* the line: its other coordinate and its plane */
    ir_expr *n;       /* its length */
} line;

/* Position p of the pass: i = p, or n - 1 - p backwards. */
static ir_expr *pos(gg *g, const line *L, ir_expr *p)
{
    return L->dir ? op(g, IR_SUB, op(g, IR_SUB, L->n, i32(g, 1)), p) : p;
}

/* Declares the state s[0..2] (the last output first) with values init. */
static void declare(gg *g, ir_list *out, ir_var **s, ir_expr *const *init)
{
    static const char *names[3] = { "gs1", "gs2", "gs3" };
    for (int j = 0; j < 3; j++) {
        s[j] = ir_var_new(g->f, names[j], IR_F64, IR_VAR_MUT);
        ir_list_push(g->f, out, ir_decl(g->f, s[j], init[j]));
    }
}

/* s := values (computed before any assignment). */
static void assign(gg *g, ir_list *out, ir_var **s, ir_expr *const *values)
{
    ir_expr *t[3];
    for (int j = 0; j < 3; j++)
        t[j] = let(g, out, "gt", values[j]);
    for (int j = 0; j < 3; j++)
        ir_list_push(g->f, out, ir_assign(g->f, s[j], t[j]));
}

/* for p in [p0, p1): w = ((B x + a1 s1) + a2 s2) + a3 s3 (base/gauss.c's order), written to
 * G when `write`, and shifted into the state. */
static ir_stmt *recurse(gg *g, const line *L, ir_var **s, ir_expr *p0, ir_expr *p1, bool write)
{
    ir_func *f = g->f;
    ir_var *p = loop_var(g, "gi");
    ir_list body = { 0 };
    ir_expr *i = let(g, &body, "gpos", pos(g, L, ir_ref(f, p)));
    ir_expr *w = op(g, IR_MUL, f64(g, g->k.B), wide(g, g_load(g, L->axis, i, L->l, L->P)));
    w = op(g, IR_ADD, w, op(g, IR_MUL, f64(g, g->k.a1), ir_ref(f, s[0])));
    w = op(g, IR_ADD, w, op(g, IR_MUL, f64(g, g->k.a2), ir_ref(f, s[1])));
    w = op(g, IR_ADD, w, op(g, IR_MUL, f64(g, g->k.a3), ir_ref(f, s[2])));
    w = let(g, &body, "gw", w);
    if (write)
        ir_list_push(f, &body, g_store(g, L->axis, i, L->l, L->P, irf_cast(f, IR_F32, w)));
    ir_list_push(f, &body, ir_assign(f, s[2], ir_ref(f, s[1])));
    ir_list_push(f, &body, ir_assign(f, s[1], ir_ref(f, s[0])));
    ir_list_push(f, &body, ir_assign(f, s[0], w));
    return ir_for(f, p, p0, p1, NULL, IR_LOOP_SERIAL, ir_list_block(f, &body));
}

/* The anticausal start state from the causal end state s and the line's last input un:
 * un + m (s - un), each row summed in base/gauss.c's order. */
static void anticausal_start(gg *g, ir_list *out, ir_var *const *s, ir_expr *un, ir_expr **y)
{
    ir_expr *e[3];
    for (int j = 0; j < 3; j++)
        e[j] = let(g, out, "ge", op(g, IR_SUB, ir_ref(g->f, s[j]), un));
    for (int r = 0; r < 3; r++) {
        y[r] = un;
        for (int j = 0; j < 3; j++)
            y[r] = op(g, IR_ADD, y[r], op(g, IR_MUL, f64(g, g->k.m[r][j]), e[j]));
    }
}

/* The lines of an axis as threads (l along the block's x), the planes the grid's z; with a
 * second thread dimension t over [0, nt) when nt is given. */
static ir_stmt *lines(gg *g, int axis, ir_var *l, ir_var *P, ir_var *t, ir_expr *nt,
                      ir_stmt *body)
{
    lower_gpu_range r = { { l, t }, { g->v.n[1 - axis], nt }, { t ? 64 : 128, 4 }, P, NULL,
                          op(g, IR_ADD, g->np, i32(g, 1)) };
    return lower_gpu_kernel(g->c, &r, body);
}

/* One thread per line: both passes, as pf_gauss_iir_1d does. */
static ir_stmt *rows_kernel(gg *g, int axis)
{
    ir_func *f = g->f;
    ir_var *l = loop_var(g, "gl"), *P = loop_var(g, "gP"), *s[3];
    line L = { axis, 0, ir_ref(f, l), ir_ref(f, P), g->v.n[axis] };
    ir_list body = { 0 };
    ir_expr *x0 = let(g, &body, "gu0", wide(g, g_load(g, axis, i32(g, 0), L.l, L.P)));
    ir_expr *last = op(g, IR_SUB, L.n, i32(g, 1));
    ir_expr *un = let(g, &body, "gun", wide(g, g_load(g, axis, last, L.l, L.P)));
    ir_expr *init[3] = { x0, x0, x0 }, *y[3];
    declare(g, &body, s, init);
    ir_list_push(f, &body, recurse(g, &L, s, i32(g, 0), L.n, true));
    anticausal_start(g, &body, s, un, y);
    assign(g, &body, s, y);
    L.dir = 1;
    ir_list_push(f, &body, recurse(g, &L, s, i32(g, 0), L.n, true));
    return lines(g, axis, l, P, NULL, NULL, ir_list_block(f, &body));
}

/* ---- tiles ---- */

/* States kept between kernels: S[k, t, l, P], k = 6 dir + 2 j (+1 for the low part). */
typedef struct tiled {
    ir_buffer *S;
    ir_expr *nt;   /* tiles per line */
} tiled;

static ir_stmt *put_state(gg *g, const tiled *T, const line *L, ir_expr *t, ir_expr *const *v)
{
    ir_func *f = g->f;
    ir_list out = { 0 };
    for (int j = 0; j < 3; j++) {
        ir_expr *hi = let(g, &out, "ghi", irf_cast(f, IR_F32, v[j]));
        ir_expr *lo = irf_cast(f, IR_F32, op(g, IR_SUB, v[j], wide(g, hi)));
        ir_expr *a[4] = { i32(g, 6 * L->dir + 2 * j), t, L->l, L->P };
        ir_list_push(f, &out, ir_store(f, T->S, a, hi, 0, false));
        ir_expr *b[4] = { i32(g, 6 * L->dir + 2 * j + 1), t, L->l, L->P };
        ir_list_push(f, &out, ir_store(f, T->S, b, lo, 0, false));
    }
    return ir_list_block(f, &out);
}

static ir_expr *get_state(gg *g, const tiled *T, const line *L, int dir, ir_expr *t, int j)
{
    ir_expr *a[4] = { i32(g, 6 * dir + 2 * j), t, L->l, L->P };
    ir_expr *b[4] = { i32(g, 6 * dir + 2 * j + 1), t, L->l, L->P };
    return op(g, IR_ADD, wide(g, ir_load(g->f, T->S, a, 0)), wide(g, ir_load(g->f, T->S, b, 0)));
}

static void refs(gg *g, ir_var *const *s, ir_expr **r)
{
    for (int j = 0; j < 3; j++)
        r[j] = ir_ref(g->f, s[j]);
}

/* (1) each full tile t < nt - 1 from a zero state: its tail at slot t + 1. */
static ir_stmt *tails_kernel(gg *g, const tiled *T, int axis, int dir)
{
    ir_func *f = g->f;
    ir_var *l = loop_var(g, "gl"), *P = loop_var(g, "gP"), *t = loop_var(g, "gt"), *s[3];
    line L = { axis, dir, ir_ref(f, l), ir_ref(f, P), g->v.n[axis] };
    ir_list body = { 0 };
    ir_expr *zero[3] = { f64(g, 0.0), f64(g, 0.0), f64(g, 0.0) }, *r[3];
    declare(g, &body, s, zero);
    ir_expr *p0 = let(g, &body, "gp0", op(g, IR_MUL, ir_ref(f, t), i32(g, g->tile)));
    ir_list_push(f, &body, recurse(g, &L, s, p0, op(g, IR_ADD, p0, i32(g, g->tile)), false));
    refs(g, s, r);
    ir_list_push(f, &body, put_state(g, T, &L, op(g, IR_ADD, ir_ref(f, t), i32(g, 1)), r));
    return lines(g, axis, l, P, t, op(g, IR_SUB, T->nt, i32(g, 1)), ir_list_block(f, &body));
}

/* (2) one thread per line: slot t := the state entering tile t. */
static ir_stmt *carry_kernel(gg *g, const tiled *T, int axis, int dir)
{
    ir_func *f = g->f;
    ir_var *l = loop_var(g, "gl"), *P = loop_var(g, "gP"), *t = loop_var(g, "gt"), *s[3];
    line L = { axis, dir, ir_ref(f, l), ir_ref(f, P), g->v.n[axis] };
    ir_list body = { 0 };
    ir_expr *init[3], *r[3];
    if (dir == 0) {  /* the steady state of the first input */
        ir_expr *x0 = let(g, &body, "gu0", wide(g, g_load(g, axis, i32(g, 0), L.l, L.P)));
        init[0] = init[1] = init[2] = x0;
    } else {  /* written by the causal pass's last tile */
        for (int j = 0; j < 3; j++)
            init[j] = get_state(g, T, &L, 1, i32(g, 0), j);
    }
    declare(g, &body, s, init);
    if (dir == 0) {
        refs(g, s, r);
        ir_list_push(f, &body, put_state(g, T, &L, i32(g, 0), r));
    }
    ir_list step = { 0 };
    ir_expr *tr = ir_ref(f, t), *v[3];
    for (int j = 0; j < 3; j++) {
        ir_expr *h = op(g, IR_MUL, f64(g, g->H[j][0]), ir_ref(f, s[0]));
        h = op(g, IR_ADD, h, op(g, IR_MUL, f64(g, g->H[j][1]), ir_ref(f, s[1])));
        h = op(g, IR_ADD, h, op(g, IR_MUL, f64(g, g->H[j][2]), ir_ref(f, s[2])));
        v[j] = op(g, IR_ADD, get_state(g, T, &L, dir, tr, j), h);
    }
    assign(g, &step, s, v);
    refs(g, s, r);
    ir_list_push(f, &step, put_state(g, T, &L, tr, r));
    ir_list_push(f, &body, ir_for(f, t, i32(g, 1), T->nt, NULL, IR_LOOP_SERIAL,
                                  ir_list_block(f, &step)));
    return lines(g, axis, l, P, NULL, NULL, ir_list_block(f, &body));
}

/* (3) each tile from its incoming state, written; the causal pass's last tile also leaves the
 * anticausal start state in slot 0 of the anticausal states. */
static ir_stmt *fixup_kernel(gg *g, const tiled *T, int axis, int dir)
{
    ir_func *f = g->f;
    ir_var *l = loop_var(g, "gl"), *P = loop_var(g, "gP"), *t = loop_var(g, "gt"), *s[3];
    line L = { axis, dir, ir_ref(f, l), ir_ref(f, P), g->v.n[axis] };
    ir_list body = { 0 };
    ir_expr *tr = ir_ref(f, t), *init[3];
    for (int j = 0; j < 3; j++)
        init[j] = get_state(g, T, &L, dir, tr, j);
    declare(g, &body, s, init);
    ir_expr *is_last = op(g, IR_EQ, tr, op(g, IR_SUB, T->nt, i32(g, 1)));
    ir_var *un = NULL;
    if (dir == 0) {  /* read before this tile overwrites it */
        un = ir_var_new(f, "gun", IR_F64, IR_VAR_MUT);
        ir_list_push(f, &body, ir_decl(f, un, f64(g, 0.0)));
        ir_expr *last = op(g, IR_SUB, L.n, i32(g, 1));
        ir_list_push(f, &body, ir_if(f, is_last, ir_assign(f, un, wide(g, g_load(g, axis, last,
                                                                                 L.l, L.P))),
                                     NULL));
    }
    ir_expr *p0 = let(g, &body, "gp0", op(g, IR_MUL, tr, i32(g, g->tile)));
    ir_expr *p1 = op(g, IR_MIN, op(g, IR_ADD, p0, i32(g, g->tile)), L.n);
    ir_list_push(f, &body, recurse(g, &L, s, p0, p1, true));
    if (dir == 0) {
        ir_list start = { 0 };
        ir_expr *y[3];
        anticausal_start(g, &start, s, ir_ref(f, un), y);
        line A = L;
        A.dir = 1;
        ir_list_push(f, &start, put_state(g, T, &A, i32(g, 0), y));
        ir_list_push(f, &body, ir_if(f, is_last, ir_list_block(f, &start), NULL));
    }
    return lines(g, axis, l, P, t, T->nt, ir_list_block(f, &body));
}

/* Both passes of one axis, tiled, inside the allocation of their states. */
static ir_stmt *tiled_axis(gg *g, int axis)
{
    ir_func *f = g->f;
    char name[32];
    snprintf(name, sizeof name, "gauss_states_%c", axis ? 'y' : 'x');
    tiled T;
    T.S = ir_buffer_new(f, name, IR_BUF_INTERNAL, 4);
    ir_list out = { 0 }, body = { 0 };
    T.nt = let(g, &out, "gnt", op(g, IR_DIV, op(g, IR_ADD, g->v.n[axis], i32(g, g->tile - 1)),
                                  i32(g, g->tile)));
    ir_expr *ext[4] = { i32(g, 12), T.nt, g->v.n[1 - axis], op(g, IR_ADD, g->np, i32(g, 1)) };
    for (int d = 0; d < 4; d++)
        ir_list_push(f, &out, ir_let(f, T.S->extent[d], ext[d]));
    for (int dir = 0; dir < 2; dir++) {
        ir_list_push(f, &body, tails_kernel(g, &T, axis, dir));
        ir_list_push(f, &body, carry_kernel(g, &T, axis, dir));
        ir_list_push(f, &body, fixup_kernel(g, &T, axis, dir));
    }
    ir_list_push(f, &out, ir_alloc(f, T.S, false, ir_list_block(f, &body)));
    return ir_list_block(f, &out);
}

/* ---- coefficients and the whole reconstruction ---- */

/* H: column j is the state after `tile` steps of w = a1 s1 + a2 s2 + a3 s3 from unit state j. */
static void homogeneous(gg *g)
{
    for (int j = 0; j < 3; j++) {
        double s[3] = { j == 0, j == 1, j == 2 };
        for (int n = 0; n < g->tile; n++) {
            double w = g->k.a1 * s[0] + g->k.a2 * s[1] + g->k.a3 * s[2];
            s[2] = s[1];
            s[1] = s[0];
            s[0] = w;
        }
        for (int r = 0; r < 3; r++)
            g->H[r][j] = s[r];
    }
}

/* PF_GPU_GAUSS: "rows" -> 0, "tiled" or unset -> GG_TILE, "tiled:N" -> N; -1 when malformed. */
static int tile_choice(void)
{
    const char *e = getenv("PF_GPU_GAUSS");
    if (!e || !*e || strcmp(e, "tiled") == 0)
        return GG_TILE;
    if (strcmp(e, "rows") == 0)
        return 0;
    char *end;
    long n = strncmp(e, "tiled:", 6) == 0 ? strtol(e + 6, &end, 10) : -1;
    return n >= 3 && n <= 4096 && *end == '\0' ? (int)n : -1;
}

static bool applies(lower_ctx *c, const pf_stage *st, ir_buffer *img)
{
    const pf_stage_approx *a = lower_approx(c, st);
    int k = st->n_vars, nd = img->ndims;
    if (!a || a->sample != PF_SAMPLE_GRID || a->recon != PF_RECON_GAUSSIAN || c->region ||
        !pf_plan_has_gpu(c->plan) || img->window || k < 2 || k > nd)
        return false;
    for (int d = 2; d < k; d++)
        if (a->spacing[d] != 1)
            return false;
    return true;
}

bool lower_gauss_gpu(lower_ctx *c, const pf_stage *st, const lower_lattice *L, ir_buffer *img)
{
    if (!applies(c, st, img))
        return false;
    const pf_stage_approx *a = lower_approx(c, st);
    ir_func *f = c->f;
    gg g = { .c = c, .f = f, .sx = a->spacing[0], .sy = a->spacing[1], .tile = tile_choice() };
    if (g.tile < 0) {
        lower_error(c, "PF_GPU_GAUSS='%s': expected rows, tiled or tiled:N (N in 3..4096)",
                    getenv("PF_GPU_GAUSS"));
        return true;
    }
    int64_t sp[2] = { g.sx, g.sy };
    double width = pf_rt_sigma_grid((double)a->sigma, 2, sp), s = width < 0.5 ? 0.5 : width;
    if (!pf_gauss_yvv(width, &g.k))
        return false;
    g.min_den = (float)(PF_RT_GAUSS_MIN_WEIGHT / (2.0 * GG_PI * s * s));
    homogeneous(&g);
    lower_gpu_view(&g.v, c, st, L, img);
    g.np = i32(&g, 1);
    for (int d = 2; d < g.v.nd; d++)
        g.np = op(&g, IR_MUL, g.np, g.v.n[d]);
    char note[120];
    snprintf(note, sizeof note, "gaussian reconstruction of %.40s on the GPU: %s", st->name,
             g.tile ? "tiled recursive filter" : "one thread per row and column");
    lower_emit(c, ir_comment(f, note));
    g.G = ir_buffer_new(f, "gauss_planes", IR_BUF_INTERNAL, 3);
    ir_expr *ext[3] = { g.v.n[0], g.v.n[1], op(&g, IR_ADD, g.np, i32(&g, 1)) };
    for (int d = 0; d < 3; d++)
        lower_emit(c, ir_let(f, g.G->extent[d], ext[d]));
    ir_list body = { 0 };
    ir_list_push(f, &body, init_kernel(&g));
    for (int axis = 0; axis < 2; axis++)
        ir_list_push(f, &body, g.tile ? tiled_axis(&g, axis) : rows_kernel(&g, axis));
    ir_list_push(f, &body, divide_kernel(&g));
    lower_emit(c, ir_alloc(f, g.G, false, ir_list_block(f, &body)));
    return true;
}
