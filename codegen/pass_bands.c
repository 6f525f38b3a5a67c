/* Bands for serial scatter stages: the rows of a scatter loop run in parallel bands split where
 * the scatter's row index changes, so no two bands write one cell.
 *
 * A scatter stage runs in order by the language's rules (`+=` into a cell reads what an earlier
 * iteration wrote), so its loop stays serial. The bilateral grid's splat
 *   for y = 0 .. H
 *       for x = 0 .. W
 *           let gy = i32(round(f32(y) / ss)); ...
 *           grid[gx, gy, gz, i]{scatter} = grid[gx, gy, gz, i] + ...
 * writes only cells whose row index gy is a function of y alone, and rows of equal gy are
 * consecutive when that function is monotone. Bands of rows that start where gy changes then
 * write disjoint sets of cells, and every cell still receives its values in the serial order
 * (all of them come from one band, run in order): the result is the serial one bit for bit.
 *
 * When the schedule asks (`parallel` on a serial stage: FOR.banded) and the loop qualifies, it
 * becomes
 *   (serial) for t = lo + 1 .. hi: is key(t) monotone in t, and how long is its longest run?
 *   if monotone
 *       parallel<bands> for b = 0 .. nb          (nb = min(N_BANDS, rows))
 *           s0 = the first row >= from(b) where key changes (or hi), s1 likewise for b + 1
 *           for y = s0 .. s1: the original body
 *   else
 *       the original loop
 * A run of equal keys is at most `longest` rows, so each band finds its start within
 * longest + 1 rows of its even share. The loop qualifies when some index dimension d of every
 * scatter store, and of every read of a buffer the loop scatters into, is one expression `key`
 * of the loop variable and values fixed outside the loop (lets resolved; no memory read);
 * nothing else the loop stores is read in it; it assigns no mutable and stores into no array
 * declared outside it, and makes no runtime call. A loop that does not qualify stays serial:
 * the result is the same, only slower (stats: bands_refused). */
#include "codegen/passes.h"

#include "base/arena.h"
#include "codegen/ir_audit.h"
#include "codegen/ir_clone.h"
#include "codegen/ir_simplify.h"

#include <stdlib.h>

#define N_BANDS 32  /* enough for a pool of a few threads to balance uneven bands */

typedef struct band_ctx {
    ir_func *f;
    const ir_stmt *loop;
    char *inner;          /* by var id: defined inside the loop (its variable included) */
    char *stored;         /* by buffer id: stored in the loop (2: by a scatter) */
    ir_subst lets;        /* the loop's lets, resolved to expressions of outer values */
    bool ok;
} band_ctx;

/* ---- legality ---- */

/* Whether e reads only the loop variable and values fixed outside the loop, with no memory
 * read and no multiply feeding an add (fp-contract could compute it differently in the two
 * places it is evaluated). */
static bool row_only(const band_ctx *c, const ir_expr *e)
{
    if (!e)
        return true;
    switch (e->kind) {
    case IR_CONST:
        return true;
    case IR_VARREF:
        return e->var->kind != IR_VAR_ARRAY &&
               (e->var == c->loop->var || !c->inner[e->var->id]);
    case IR_BIN:
        if (e->type == IR_F32 && (e->op == IR_ADD || e->op == IR_SUB) &&
            ((e->a->kind == IR_BIN && e->a->op == IR_MUL) ||
             (e->b->kind == IR_BIN && e->b->op == IR_MUL)))
            return false;
        return row_only(c, e->a) && row_only(c, e->b);
    case IR_UN:
    case IR_CAST:
        return row_only(c, e->a);
    case IR_SELECT:
        return row_only(c, e->a) && row_only(c, e->b) && row_only(c, e->c);
    case IR_CALL:
        if (e->fn >= IR_FN_NOISE)
            return false;
        for (int i = 0; i < e->n_args; i++)
            if (!row_only(c, e->args[i]))
                return false;
        return true;
    case IR_LOAD:
    case IR_ALOAD:
    case IR_INTERP:
        return false;
    }
    return false;
}

/* Records the loop's lets (resolved) and what it stores; clears ok on what bands cannot keep. */
static void scan_stmt(band_ctx *c, const ir_stmt *s)
{
    if (!s || !c->ok)
        return;
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n; i++)
            scan_stmt(c, s->body[i]);
        return;
    case IR_S_LET:
        c->lets.to[s->var->id] = ir_subst_expr(c->f, &c->lets, s->value);
        return;
    case IR_S_ASSIGN:
    case IR_S_ARRAY_STORE:
    case IR_S_SORT:
        if (!c->inner[s->var->id])
            c->ok = false;
        return;
    case IR_S_STORE:
        if (c->stored[s->buf->id] < 2)
            c->stored[s->buf->id] = s->scatter ? 2 : 1;
        return;
    case IR_S_RTCALL:
        c->ok = false;
        return;
    default:
        scan_stmt(c, s->then_s);
        scan_stmt(c, s->else_s);
        return;
    }
}

typedef struct key_search {
    band_ctx *c;
    int dim;
    ir_expr *key;    /* resolved index along dim; NULL until the first access */
    bool ok;
} key_search;

/* One access to a buffer the loop stores: a scattered buffer must be indexed by the key along
 * dim (a read whose index may leave the buffer only with a constant boundary, which reads no
 * cell); a buffer stored pointwise must not be read at all. */
static void check_access(key_search *k, const ir_buffer *b, ir_expr **idx, bool read,
                         uint8_t clamp_mask)
{
    int st = k->c->stored[b->id];
    if (!st || !k->ok)
        return;
    if (st == 1) {
        k->ok = !read;
        return;
    }
    if (k->dim >= b->ndims) {
        k->ok = false;
        return;
    }
    if (read && (clamp_mask >> k->dim & 1) && b->boundary != PF_BOUNDARY_CONSTANT) {
        k->ok = false;
        return;
    }
    ir_expr *e = ir_subst_expr(k->c->f, &k->c->lets, idx[k->dim]);
    if (!k->key)
        k->key = e;
    else if (!ir_expr_equal(k->key, e))
        k->ok = false;
}

static void check_expr(key_search *k, ir_expr *e)
{
    if (!e || !k->ok)
        return;
    if (e->kind == IR_LOAD)
        check_access(k, e->buf, e->args, true, e->clamp_mask);
    else if (e->kind == IR_INTERP && k->c->stored[e->buf->id])
        k->ok = false;  /* reads neighbouring samples: not one cell */
    check_expr(k, e->a);
    check_expr(k, e->b);
    check_expr(k, e->c);
    for (int i = 0; i < e->n_args; i++)
        check_expr(k, e->args[i]);
}

static void check_stmt(key_search *k, const ir_stmt *s)
{
    if (!s || !k->ok)
        return;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        check_stmt(k, s->body[i]);
    if (s->kind == IR_S_STORE) {
        for (int i = 0; i < s->n; i++)
            check_expr(k, s->idx[i]);
        check_access(k, s->buf, s->idx, false, 0);
    }
    check_expr(k, s->value);
    check_expr(k, s->index);
    check_expr(k, s->lo);
    check_expr(k, s->hi);
    check_expr(k, s->cond);
    if (s->kind != IR_S_BLOCK) {
        check_stmt(k, s->then_s);
        check_stmt(k, s->else_s);
    }
}

/* The key of the loop: the first dimension along which every access to a scattered buffer has
 * the same row-only index; NULL when there is none. */
static ir_expr *find_key(band_ctx *c)
{
    for (int d = 0; d < IR_MAX_DIMS; d++) {
        key_search k = { c, d, NULL, true };
        check_stmt(&k, c->loop->then_s);
        if (k.ok && k.key && row_only(c, k.key) && ir_expr_uses_var(k.key, c->loop->var))
            return k.key;
    }
    return NULL;
}

static ir_expr *analyze(band_ctx *c)
{
    int64_t step;
    if (!ir_is_const(c->loop->step, &step) || step != 1)
        return NULL;
    scan_stmt(c, c->loop->then_s);
    bool scatters = false;
    for (int i = 0; i < c->f->n_buffers; i++)
        scatters |= c->stored[i] == 2;
    return c->ok && scatters ? find_key(c) : NULL;
}

/* ---- the banded loop ---- */

static ir_expr *i32(ir_func *f, int v)
{
    return ir_const_i32(f, v);
}

/* key with the loop variable replaced by row. */
static ir_expr *key_at(ir_func *f, const ir_var *v, ir_expr *key, ir_expr *row)
{
    ir_subst s;
    ir_subst_init(&s, f);
    s.to[v->id] = row;
    ir_expr *r = ir_subst_expr(f, &s, key);
    ir_subst_free(&s);
    return r;
}

/* Row t starts a run: t == lo or key(t) != key(t - 1). */
static ir_expr *run_starts(ir_func *f, const ir_stmt *L, ir_expr *key, ir_var *t)
{
    ir_expr *row = ir_ref(f, t);
    ir_expr *prev = irf_bin(f, IR_ADD, ir_ref(f, t), i32(f, -1));
    return irf_bin(f, IR_OR, irf_bin(f, IR_EQ, ir_ref(f, t), L->lo),
                   irf_bin(f, IR_NE, key_at(f, L->var, key, row), key_at(f, L->var, key, prev)));
}

/* decl s = hi; for t = from .. min(hi, from + longest + 1): s = min(s, starts(t) ? t : hi) */
static ir_var *first_start(ir_func *f, ir_list *out, const ir_stmt *L, ir_expr *key,
                           ir_expr *from, ir_var *longest, const char *name)
{
    ir_var *s = ir_var_new(f, name, IR_I32, IR_VAR_MUT);
    ir_var *t = ir_var_new(f, "t", IR_I32, IR_VAR_LOOP);
    ir_list_push(f, out, ir_decl(f, s, L->hi));
    ir_expr *after_longest = irf_bin(f, IR_ADD, ir_ref(f, longest), i32(f, 1));
    ir_expr *end = irf_bin(f, IR_MIN, L->hi, irf_bin(f, IR_ADD, from, after_longest));
    ir_expr *pick = irf_select(f, run_starts(f, L, key, t), ir_ref(f, t), L->hi);
    ir_stmt *upd = ir_assign(f, s, irf_bin(f, IR_MIN, ir_ref(f, s), pick));
    ir_stmt *scan = ir_for(f, t, from, end, NULL, IR_LOOP_SERIAL, upd);
    scan->cold = true;  /* a few rows: not worth LLVM's vectorizer (compile time) */
    ir_list_push(f, out, scan);
    ir_var *r = ir_var_new(f, name, IR_I32, IR_VAR_LET);
    ir_list_push(f, out, ir_let(f, r, ir_ref(f, s)));
    return r;
}

/* The serial pass over the rows: whether the key is monotone, and its longest run. */
static void survey(ir_func *f, ir_list *out, const ir_stmt *L, ir_expr *key, ir_var **monotone,
                   ir_var **longest)
{
    ir_var *up = ir_var_new(f, "key_up", IR_BOOL, IR_VAR_MUT);
    ir_var *down = ir_var_new(f, "key_down", IR_BOOL, IR_VAR_MUT);
    ir_var *run = ir_var_new(f, "run", IR_I32, IR_VAR_MUT);
    ir_var *most = ir_var_new(f, "most", IR_I32, IR_VAR_MUT);
    ir_list_push(f, out, ir_decl(f, up, ir_const_bool(f, true)));
    ir_list_push(f, out, ir_decl(f, down, ir_const_bool(f, true)));
    ir_list_push(f, out, ir_decl(f, run, i32(f, 1)));
    ir_list_push(f, out, ir_decl(f, most, i32(f, 1)));
    ir_var *t = ir_var_new(f, "t", IR_I32, IR_VAR_LOOP);
    ir_var *k1 = ir_var_new(f, "key", key->type, IR_VAR_LET);
    ir_var *k0 = ir_var_new(f, "key", key->type, IR_VAR_LET);
    ir_list body = { 0 };
    ir_list_push(f, &body, ir_let(f, k1, key_at(f, L->var, key, ir_ref(f, t))));
    ir_list_push(f, &body, ir_let(f, k0, key_at(f, L->var, key,
                                                irf_bin(f, IR_ADD, ir_ref(f, t), i32(f, -1)))));
    ir_expr *a = ir_ref(f, k0), *b = ir_ref(f, k1);
    ir_expr *still_up = irf_bin(f, IR_AND, ir_ref(f, up), irf_bin(f, IR_LE, a, b));
    ir_expr *still_down = irf_bin(f, IR_AND, ir_ref(f, down), irf_bin(f, IR_LE, b, a));
    ir_list_push(f, &body, ir_assign(f, up, still_up));
    ir_list_push(f, &body, ir_assign(f, down, still_down));
    ir_expr *longer = irf_bin(f, IR_ADD, ir_ref(f, run), i32(f, 1));
    ir_list_push(f, &body, ir_assign(f, run, irf_select(f, irf_bin(f, IR_EQ, a, b), longer,
                                                        i32(f, 1))));
    ir_list_push(f, &body, ir_assign(f, most, irf_bin(f, IR_MAX, ir_ref(f, most), ir_ref(f, run))));
    ir_stmt *rows = ir_for(f, t, irf_bin(f, IR_ADD, L->lo, i32(f, 1)), L->hi, NULL,
                           IR_LOOP_SERIAL, ir_list_block(f, &body));
    rows->cold = true;  /* once per row: scalar code compiles faster than LLVM's vector loop */
    ir_list_push(f, out, rows);
    *monotone = ir_var_new(f, "monotone", IR_BOOL, IR_VAR_LET);
    *longest = ir_var_new(f, "longest", IR_I32, IR_VAR_LET);
    ir_list_push(f, out, ir_let(f, *monotone, irf_bin(f, IR_OR, ir_ref(f, up), ir_ref(f, down))));
    ir_list_push(f, out, ir_let(f, *longest, ir_ref(f, most)));
}

/* lo + b * q + min(b, r): the start of band b of an even split of n rows into nb. */
static ir_expr *share(ir_func *f, ir_expr *lo, ir_expr *b, ir_var *q, ir_var *r)
{
    return irf_bin(f, IR_ADD, lo, irf_bin(f, IR_ADD, irf_bin(f, IR_MUL, b, ir_ref(f, q)),
                                          irf_bin(f, IR_MIN, b, ir_ref(f, r))));
}

static ir_stmt *banded(ir_func *f, ir_stmt *L, ir_expr *key)
{
    ir_list out = { 0 }, inner = { 0 };
    ir_list_push(f, &out, ir_comment(f, "rows in bands that start where the scatter's row "
                                        "index changes (pass_bands)"));
    ir_var *monotone, *longest;
    survey(f, &out, L, key, &monotone, &longest);
    ir_var *n = ir_var_new(f, "rows", IR_I32, IR_VAR_LET);
    ir_var *nb = ir_var_new(f, "bands", IR_I32, IR_VAR_LET);
    ir_var *q = ir_var_new(f, "q", IR_I32, IR_VAR_LET), *r = ir_var_new(f, "r", IR_I32, IR_VAR_LET);
    ir_list_push(f, &inner, ir_let(f, n, irf_bin(f, IR_SUB, L->hi, L->lo)));
    ir_list_push(f, &inner, ir_let(f, nb, irf_bin(f, IR_MIN, ir_ref(f, n), i32(f, N_BANDS))));
    ir_list_push(f, &inner, ir_let(f, q, irf_bin(f, IR_DIV, ir_ref(f, n), ir_ref(f, nb))));
    ir_list_push(f, &inner, ir_let(f, r, irf_bin(f, IR_MOD, ir_ref(f, n), ir_ref(f, nb))));
    ir_var *b = ir_var_new(f, "band", IR_I32, IR_VAR_LOOP);
    ir_list band = { 0 };
    ir_expr *from = share(f, L->lo, ir_ref(f, b), q, r);
    ir_expr *to = share(f, L->lo, irf_bin(f, IR_ADD, ir_ref(f, b), i32(f, 1)), q, r);
    ir_var *s0 = first_start(f, &band, L, key, from, longest, "band_lo");
    ir_var *s1 = first_start(f, &band, L, key, to, longest, "band_hi");
    ir_subst none;
    ir_subst_init(&none, f);
    ir_stmt *rows = ir_clone_stmt(f, &none, L);
    ir_subst_free(&none);
    rows->lo = ir_ref(f, s0);
    rows->hi = ir_ref(f, s1);
    rows->banded = false;
    ir_list_push(f, &band, rows);
    ir_stmt *bands = ir_for(f, b, i32(f, 0), ir_ref(f, nb), NULL, IR_LOOP_PARALLEL,
                            ir_list_block(f, &band));
    bands->banded = true;
    ir_list_push(f, &inner, bands);
    L->banded = false;
    L->cold = true;  /* the fallback, for keys found unordered when run: compiled for size */
    L->serial_why = IR_SERIAL_SCATTER;
    ir_list_push(f, &out, ir_if(f, ir_ref(f, monotone), ir_list_block(f, &inner), L));
    return ir_list_block(f, &out);
}

/* ---- the walk ---- */

typedef struct walk_ctx {
    ir_func *f;
    pf_pass_stats *stats;
} walk_ctx;

static ir_stmt *try_bands(walk_ctx *w, ir_stmt *L)
{
    ir_func *f = w->f;
    band_ctx c = { f, L, NULL, NULL, { 0 }, true };
    c.inner = calloc((size_t)f->n_vars + 1, 1);
    c.stored = calloc((size_t)f->n_buffers + 1, 1);
    ir_subst_init(&c.lets, f);
    ir_defined_vars(L, c.inner);
    ir_expr *key = analyze(&c);
    ir_subst_free(&c.lets);
    free(c.inner);
    free(c.stored);
    if (!key) {
        L->banded = false;
        L->serial_why = IR_SERIAL_SCATTER;
        w->stats->bands_refused++;
        return L;
    }
    w->stats->bands_parallel++;
    return banded(f, L, key);
}

static ir_stmt *walk(walk_ctx *w, ir_stmt *s)
{
    if (!s)
        return NULL;
    if (s->kind == IR_S_FOR && s->banded && s->loop_kind == IR_LOOP_SERIAL)
        return try_bands(w, s);
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        s->body[i] = walk(w, s->body[i]);
    if (s->kind != IR_S_BLOCK) {
        s->then_s = walk(w, s->then_s);
        s->else_s = walk(w, s->else_s);
    }
    return s;
}

ir_func *pf_pass_bands(ir_func *f, pf_pass_stats *stats)
{
    walk_ctx w = { f, stats };
    f->body = walk(&w, f->body);
    return f;
}
