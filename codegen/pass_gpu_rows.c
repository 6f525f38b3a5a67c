/* Rows (or columns) per thread with a register window (GPU plans): a thread that computes
 * several rows of a column reads each row of a vertical stencil once, not once per tap; the
 * same for the columns of a row and a horizontal stencil.
 *
 * A `gpu 64 4` gene on a 64 x 64 tile deals each thread 16 rows of one column, cyclically
 * (rows t, t + 4, ...), and the blur's output reads its 17 taps temp[x, y - 8 .. y + 8] from
 * shared memory for every row: 17 loads an output, where the hand kernel of the anchors
 * (../shared/anchors/gpu) gives each thread 16 consecutive rows and keeps a window of rows in
 * registers, 32 loads for 16 outputs. LLVM does not find that reuse itself: each row's taps sit
 * under the row's own guards (the tile's last rows, the stage's `if`), so no load of one row
 * dominates the same load of the next. Here
 *
 *   gpu thread for<y T> y = lo .. hi step s             (hi = min(lo + C, ...))
 *       gpu thread for<x> x = ...
 *           body(y)                                     reads B[x, y + k] for several k
 * becomes, with R = C / (T s) rows a thread (at most 16),
 *   gpu thread for<x> x = ...
 *       gpu thread for<y T> yb = lo .. hi step R s      (thread t: rows lo + t R s ...)
 *           if (every B[x, yb + c] below is inside what B holds)
 *               let w_c = B[x, yb + c]                  each before the first row reading it
 *               body(yb)                                the loads of B now w_c
 *               if (yb + s < hi) body(yb + s)  ...      R copies
 *           else
 *               for y = yb .. min(yb + R s, hi) step s: body(y)
 *
 * Columns: a thread loop over x with no loop inside becomes the loop over blocks of R columns
 * the same way (no column loop to move outside). A loop's span comes from its bound (a stage's
 * own tile: hi = min(lo + C, ...)) or from the lowering (ir_stmt.span: a producer's region,
 * whose loop bounds are clamped to the image).
 *
 * The window's loads run whether or not the rows that use them do, hence the test that they
 * are inside B (a window's origin and size, else its extents): it fails only in blocks at the
 * image's edges, which run the rows one by one as before. Only loads without clamp bits are
 * taken, of buffers nothing in the loop stores, whose other indices use nothing a row defines,
 * and only where two rows read the same row of B. Serially (the CPU backends run GPU loops as
 * plain loops) the loops visit the same points, so the JIT tests of codegen_gpu_lower check
 * this rewrite against the interpreter. */
#include "codegen/passes.h"

#include "base/arena.h"
#include "codegen/ir_clone.h"
#include "codegen/ir_simplify.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_ROWS = 16, MAX_WINDOW = 64, MAX_GROUPS = 8, MAX_OFFSETS = 64 };

/* The loads of one buffer at one set of other indices: a window of rows. */
typedef struct group {
    const ir_expr *load;    /* the first load met (its buffer and other indices) */
    int dim;                /* the index that moves with the row */
    int n_off;              /* distinct row offsets c (yb + c) */
    bool shared;            /* some offset is read by two row copies (loads within one copy
                               LLVM shares itself) */
    int64_t off[MAX_OFFSETS];
    int first[MAX_OFFSETS]; /* the first row copy that reads it */
    ir_var *w[MAX_OFFSETS]; /* the hoisted value of each offset */
    bool hoisted;
} group;

typedef struct rows_ctx {
    ir_func *f;
    pf_pass_stats *stats;
    const ir_var *yb;       /* the new row loop's variable */
    char *inside;           /* by var id (below n_inside): defined inside a row's copy */
    int n_inside;
    const char *stored;     /* by buffer id: stored (or passed to a runtime call) in the loop */
    int n_groups;
    group g[MAX_GROUPS];
    bool collect;           /* first walk: find groups; second: replace their loads */
    int row;                /* the row copy being walked */
} rows_ctx;

/* ---- the shape ---- */

/* e is v + c (v alone, v + c, c + v, v - c, nested): *c set. */
static bool var_plus_const(const ir_expr *e, const ir_var *v, int64_t *c)
{
    int64_t k, rest;
    if (e->kind == IR_VARREF && e->var == v) {
        *c = 0;
        return true;
    }
    if (e->kind != IR_BIN || (e->op != IR_ADD && e->op != IR_SUB))
        return false;
    if (ir_is_const(e->b, &k) && var_plus_const(e->a, v, &rest)) {
        *c = e->op == IR_ADD ? rest + k : rest - k;
        return true;
    }
    if (e->op == IR_ADD && ir_is_const(e->a, &k) && var_plus_const(e->b, v, &rest)) {
        *c = rest + k;
        return true;
    }
    return false;
}

/* A bound on hi - lo: the lowering's (a producer's region), else C where hi is min(lo + C, ...)
 * or lo + C (a stage's own tile); 0 if none is known. */
static int64_t span_bound(const ir_stmt *loop)
{
    if (loop->span > 0)
        return loop->span;
    const ir_expr *hi = loop->hi;
    const ir_expr *cand[2] = { hi, NULL };
    if (hi->kind == IR_BIN && hi->op == IR_MIN) {
        cand[0] = hi->a;
        cand[1] = hi->b;
    }
    for (int i = 0; i < 2 && cand[i]; i++) {
        const ir_expr *e = cand[i];
        int64_t k;
        if (e->kind == IR_BIN && e->op == IR_ADD && ir_is_const(e->b, &k) && k > 0 &&
            ir_expr_equal(e->a, loop->lo))
            return k;
    }
    return 0;
}

/* The x thread loop that is the whole body of the row loop, or NULL. */
static const ir_stmt *sole_column_loop(const ir_stmt *rows)
{
    const ir_stmt *b = rows->then_s;
    while (b && b->kind == IR_S_BLOCK && b->n == 1)
        b = b->body[0];
    if (!b || b->kind != IR_S_FOR || b->loop_kind != IR_LOOP_GPU_THREAD || b->gpu_dim != 0)
        return NULL;
    if (ir_expr_uses_var(b->lo, rows->var) || ir_expr_uses_var(b->hi, rows->var) ||
        ir_expr_uses_var(b->step, rows->var))
        return NULL;
    return b;
}

/* Marks the buffers s stores or hands to a runtime call. */
static void mark_stored(const ir_stmt *s, char *stored)
{
    if (!s)
        return;
    if (s->kind == IR_S_STORE)
        stored[s->buf->id] = 1;
    for (int i = 0; s->kind == IR_S_RTCALL && i < s->n_bufs; i++)
        stored[s->bufs[i]->id] = 1;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        mark_stored(s->body[i], stored);
    if (s->kind != IR_S_BLOCK) {
        mark_stored(s->then_s, stored);
        mark_stored(s->else_s, stored);
    }
}

/* ---- the loads ---- */

static bool uses_inside(const rows_ctx *c, const ir_expr *e)
{
    if (!e)
        return false;
    if (e->kind == IR_VARREF && (e->var->id >= c->n_inside || c->inside[e->var->id]))
        return true;
    if (uses_inside(c, e->a) || uses_inside(c, e->b) || uses_inside(c, e->c))
        return true;
    for (int i = 0; e->kind != IR_INTERP && i < e->n_args; i++)
        if (uses_inside(c, e->args[i]))
            return true;
    return e->kind == IR_INTERP;  /* its lattice expressions are not looked into */
}

static bool folded(const ir_buffer *b)
{
    for (int d = 0; d < b->ndims; d++)
        if (b->fold[d])
            return true;
    return false;
}

/* The group and offset of load e, or -1: a load the window may take (*off its row offset). */
static int group_of(rows_ctx *c, const ir_expr *e, int64_t *off)
{
    if (e->kind != IR_LOAD || e->clamp_mask || folded(e->buf) || c->stored[e->buf->id])
        return -1;
    int dim = -1;
    for (int d = 0; d < e->n_args; d++) {
        if (!ir_expr_uses_var(e->args[d], c->yb))
            continue;
        if (dim >= 0 || !var_plus_const(e->args[d], c->yb, off))
            return -1;
        dim = d;
    }
    if (dim < 0 || *off < -(1 << 20) || *off > (1 << 20))
        return -1;
    for (int d = 0; d < e->n_args; d++)
        if (d != dim && uses_inside(c, e->args[d]))
            return -1;
    for (int i = 0; i < c->n_groups; i++) {
        const ir_expr *l = c->g[i].load;
        bool same = l->buf == e->buf && c->g[i].dim == dim;
        for (int d = 0; d < e->n_args && same; d++)
            same = d == dim || ir_expr_equal(l->args[d], e->args[d]);
        if (same)
            return i;
    }
    if (!c->collect || c->n_groups == MAX_GROUPS)
        return -1;
    c->g[c->n_groups] = (group){ .load = e, .dim = dim };
    return c->n_groups++;
}

/* The slot of offset off in group g (added when collecting), or -1. */
static int offset_slot(rows_ctx *c, group *g, int64_t off)
{
    for (int i = 0; i < g->n_off; i++)
        if (g->off[i] == off) {
            g->shared = g->shared || (c->collect && g->first[i] != c->row);
            return i;
        }
    if (!c->collect || g->n_off == MAX_OFFSETS)
        return -1;
    g->off[g->n_off] = off;
    g->first[g->n_off] = c->row;
    return g->n_off++;
}

/* Collecting: notes e's window loads. Replacing: e with them read from the window (e itself
 * when nothing in it changes). */
static ir_expr *map_expr(rows_ctx *c, ir_expr *e)
{
    if (!e || e->kind == IR_CONST || e->kind == IR_VARREF || e->kind == IR_INTERP)
        return e;
    int64_t off;
    int gi = group_of(c, e, &off);
    int slot = gi >= 0 ? offset_slot(c, &c->g[gi], off) : -1;
    if (slot >= 0 && !c->collect && c->g[gi].w[slot])
        return ir_ref(c->f, c->g[gi].w[slot]);
    ir_expr *a = map_expr(c, e->a), *b = map_expr(c, e->b), *x = map_expr(c, e->c);
    ir_expr **args = e->args;
    for (int i = 0; i < e->n_args; i++) {
        ir_expr *m = map_expr(c, e->args[i]);
        if (m != e->args[i] && args == e->args) {
            args = pf_arena_alloc(c->f->arena, sizeof *args * (size_t)(e->n_args + 1));
            memcpy(args, e->args, sizeof *args * (size_t)e->n_args);
        }
        args[i] = m;
    }
    if (a == e->a && b == e->b && x == e->c && args == e->args)
        return e;
    ir_expr *r = pf_arena_memdup(c->f->arena, e, sizeof *e);
    r->a = a;
    r->b = b;
    r->c = x;
    r->args = args;
    return r;
}

/* The expressions of an array, mapped (a fresh array where one changes). */
static ir_expr **map_array(rows_ctx *c, ir_expr **v, int n)
{
    ir_expr **r = v;
    for (int i = 0; v && i < n; i++) {
        ir_expr *m = map_expr(c, v[i]);
        if (m != v[i] && r == v) {
            r = pf_arena_alloc(c->f->arena, sizeof *r * (size_t)(n + 1));
            memcpy(r, v, sizeof *r * (size_t)n);
        }
        r[i] = m;
    }
    return r;
}

/* Maps every expression of s, a copy the row made (its statements are its own). */
static void map_stmt(rows_ctx *c, ir_stmt *s)
{
    if (!s)
        return;
    s->value = map_expr(c, s->value);
    s->index = map_expr(c, s->index);
    s->lo = map_expr(c, s->lo);
    s->hi = map_expr(c, s->hi);
    s->step = map_expr(c, s->step);
    s->align = map_expr(c, s->align);
    s->cond = map_expr(c, s->cond);
    if (s->kind == IR_S_STORE)
        s->idx = map_array(c, s->idx, s->n);
    if (s->kind == IR_S_RTCALL)
        s->args = map_array(c, s->args, s->n);
    if (s->kind == IR_S_ALLOC && s->window)
        s->window = map_array(c, s->window, 2 * s->buf->ndims);
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        map_stmt(c, s->body[i]);
    if (s->kind != IR_S_BLOCK) {
        map_stmt(c, s->then_s);
        map_stmt(c, s->else_s);
    }
}

/* ---- the rewrite ---- */

/* lo_i <= i && i <= hi_i, where [lo_i, hi_i] is what b holds along d: a window's
 * [origin, origin + size), else the extent. */
static ir_expr *held(ir_func *f, const ir_buffer *b, int d, ir_expr *lo_i, ir_expr *hi_i)
{
    ir_expr *lo = b->window ? ir_ref(f, b->origin[d]) : ir_const_i32(f, 0);
    ir_expr *n = ir_ref(f, b->window ? b->size[d] : b->extent[d]);
    return irf_bin(f, IR_AND, irf_bin(f, IR_LE, lo, lo_i),
                   irf_bin(f, IR_LT, hi_i, irf_bin(f, IR_ADD, lo, n)));
}

static ir_expr *row_at(rows_ctx *c, int64_t off)
{
    return irf_bin(c->f, IR_ADD, ir_ref(c->f, (ir_var *)c->yb), ir_const_i32(c->f, (int32_t)off));
}

/* Whether every row of the hoisted windows, at their other indices, is inside what their
 * buffers hold (true: the fast version may load them all unconditionally). */
static ir_expr *windows_held(rows_ctx *c)
{
    ir_func *f = c->f;
    ir_expr *all = ir_const_bool(f, true);
    for (int i = 0; i < c->n_groups; i++) {
        const group *g = &c->g[i];
        if (!g->hoisted)
            continue;
        int64_t lo = g->off[0], hi = g->off[0];
        for (int k = 1; k < g->n_off; k++) {
            lo = g->off[k] < lo ? g->off[k] : lo;
            hi = g->off[k] > hi ? g->off[k] : hi;
        }
        for (int d = 0; d < g->load->n_args; d++) {
            ir_expr *a = g->load->args[d];
            all = irf_bin(f, IR_AND, all, d == g->dim ? held(f, g->load->buf, d, row_at(c, lo),
                                                              row_at(c, hi))
                                                      : held(f, g->load->buf, d, a, a));
        }
    }
    return all;
}

/* The window values of group g that row copy `row` reads first, as lets pushed to l: each
 * loaded just before the first row that needs it, so that a thread holds about one stencil's
 * rows at a time. */
static void hoist(rows_ctx *c, group *g, int row, ir_list *l)
{
    ir_func *f = c->f;
    const ir_expr *e = g->load;
    for (int i = 0; i < g->n_off; i++) {
        if (g->first[i] != row)
            continue;
        ir_expr **idx = pf_arena_alloc(f->arena, sizeof *idx * (size_t)(e->n_args + 1));
        for (int d = 0; d < e->n_args; d++)
            idx[d] = d == g->dim ? row_at(c, g->off[i]) : e->args[d];
        g->w[i] = ir_var_new(f, "win", IR_F32, IR_VAR_LET);
        ir_list_push(f, l, ir_let(f, g->w[i], ir_load(f, e->buf, idx, 0)));
    }
}

/* A copy of body with the row loop's variable replaced by `row`. */
static ir_stmt *body_at(rows_ctx *c, const ir_stmt *rows, const ir_stmt *body, ir_expr *row)
{
    ir_subst sub;
    ir_subst_init(&sub, c->f);
    sub.to[rows->var->id] = row;
    ir_stmt *r = ir_clone_stmt(c->f, &sub, body);
    ir_subst_free(&sub);
    return r;
}

/* Row copy j pushed to l, under `row < hi` but for the first. */
static void push_row(rows_ctx *c, const ir_stmt *rows, ir_stmt *copy, int64_t j, int64_t s,
                     ir_list *l)
{
    ir_func *f = c->f;
    ir_list_push(f, l, j == 0 ? copy : ir_if(f, irf_bin(f, IR_LT, row_at(c, j * s), rows->hi),
                                             copy, NULL));
}

/* Collects the groups of the R row copies; marks those with reuse hoisted. Returns how many
 * values the windows hold. */
static int find_windows(rows_ctx *c, ir_stmt **copy, int64_t r)
{
    c->n_inside = c->f->n_vars + 1;
    c->inside = pf_xcalloc((size_t)c->n_inside, 1);
    for (int64_t j = 0; j < r; j++)
        ir_defined_vars(copy[j], c->inside);
    c->collect = true;
    for (c->row = 0; c->row < r; c->row++)
        map_stmt(c, copy[c->row]);  /* collects: the copies are not changed */
    c->collect = false;
    int hoisted = 0;
    for (int i = 0; i < c->n_groups; i++)
        if (c->g[i].shared && hoisted + c->g[i].n_off <= MAX_WINDOW) {
            c->g[i].hoisted = true;
            hoisted += c->g[i].n_off;
        }
    return hoisted;
}

/* Elsewhere: the thread's rows one at a time, loading their taps as before (a loop, not
 * copies: the copies' row addresses, hoisted out of the column loop by LLVM, took 126
 * registers a thread). */
static ir_stmt *rows_one_by_one(rows_ctx *c, const ir_stmt *rows, const ir_stmt *body,
                                int64_t r, int64_t s)
{
    ir_func *f = c->f;
    ir_var *y = ir_var_new(f, rows->var->name, IR_I32, IR_VAR_LOOP);
    ir_expr *hi = irf_bin(f, IR_MIN, row_at(c, r * s), rows->hi);
    return ir_for(f, y, ir_ref(f, (ir_var *)c->yb), hi, ir_const_i32(f, (int32_t)s),
                  IR_LOOP_SERIAL, body_at(c, rows, body, ir_ref(f, y)));
}

/* The loop `rows` over blocks of r of its lines (rows, or columns), each iteration running
 * `body` for its lines, or NULL when no load is read by two of them. The body becomes two
 * versions: where every window line is inside what its buffer holds (every block but those at
 * the image's edges), the windows are loaded once and the lines read them; elsewhere the lines
 * run as before. */
static ir_stmt *register_window(rows_ctx *c, const ir_stmt *rows, const ir_stmt *body,
                                int64_t r, int64_t s)
{
    ir_func *f = c->f;
    c->yb = ir_var_new(f, rows->var->name, IR_I32, IR_VAR_LOOP);
    ir_stmt *copy[MAX_ROWS];
    for (int64_t j = 0; j < r; j++)
        copy[j] = body_at(c, rows, body, row_at(c, j * s));
    int hoisted = find_windows(c, copy, r);
    if (!hoisted) {
        free(c->inside);
        return NULL;
    }
    ir_list fast = { 0 };
    for (int64_t j = 0; j < r; j++) {
        for (int i = 0; i < c->n_groups; i++)
            if (c->g[i].hoisted)
                hoist(c, &c->g[i], (int)j, &fast);
        map_stmt(c, copy[j]);
        push_row(c, rows, copy[j], j, s, &fast);
    }
    ir_stmt *y = pf_arena_memdup(f->arena, rows, sizeof *rows);
    y->var = (ir_var *)c->yb;
    y->step = ir_const_i32(f, (int32_t)(r * s));
    y->align = NULL;
    free(c->inside);
    y->then_s = ir_if(f, windows_held(c), ir_list_block(f, &fast),
                      rows_one_by_one(c, rows, body, r, s));
    if (c->stats)
        c->stats->gpu_row_windows++;
    return y;
}

/* A GPU thread loop over rows (around a loop over columns) or over columns (around no loop)
 * rewritten, or NULL to look inside. */
static ir_stmt *try_loop(void *ctx, const ir_stmt *s)
{
    rows_ctx *c = ctx;
    if (s->loop_kind != IR_LOOP_GPU_THREAD || s->width < 1)
        return NULL;
    const ir_stmt *cols = s->gpu_dim == 1 ? sole_column_loop(s) : NULL;
    const ir_stmt *body = cols ? cols->then_s : s->then_s;
    int64_t step = 1, span = span_bound(s);
    if ((s->gpu_dim == 1 && !cols) || s->gpu_dim > 1 || ir_has_loop(body) ||
        (s->step && !ir_is_const(s->step, &step)) || step < 1)
        return NULL;
    int64_t r = span / ((int64_t)s->width * step);
    r = r > MAX_ROWS ? MAX_ROWS : r;
    if (r < 2)
        return NULL;
    char *stored = pf_xcalloc((size_t)c->f->n_buffers + 1, 1);
    mark_stored(s->then_s, stored);
    c->stored = stored;
    c->n_groups = 0;
    ir_stmt *out = register_window(c, s, body, r, step);
    free(stored);
    if (out && cols) {
        /* The column loop outside the rows: inside it, LLVM hoisted what the row copies
         * compute from the row alone (16 output row addresses, the rows' guards) out of the
         * column loop, which runs once a thread: 98 registers a thread, 63 so. */
        ir_stmt *x = pf_arena_memdup(c->f->arena, cols, sizeof *cols);
        x->then_s = out;
        out = x;
    }
    return out;
}

ir_func *pf_pass_gpu_rows(ir_func *f, pf_pass_stats *stats)
{
    rows_ctx c = { 0 };
    c.stats = stats;
    c.f = pf_arena_memdup(f->arena, f, sizeof *f);
    c.f->body = ir_rewrite_loops(c.f, f->body, try_loop, &c);
    return c.f;
}
