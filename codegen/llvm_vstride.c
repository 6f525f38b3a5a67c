/* Strided reads and writes of a vector body.
 *
 * Reads: lanes at stride s (2..4) along one row, e.g. the taps
 * in[4J + k, y] of a horizontal pass sampled every 4th column. One such read is loaded as
 * dense W-wide chunks from lane 0's element to lane W-1's and a shuffle picks every s-th
 * element (how Halide loads a strided vector; a gather costs about W scalar loads). Taps of one
 * row that differ only by a constant (k = -8..8) form a group: its span is loaded once,
 * split into its s phases (elements r, r + s, r + 2s, ...), and each tap is a window of W
 * consecutive elements of one phase — one shuffle per tap instead of s loads and a wide
 * shuffle. Blur's paper variant: 17 taps of stride 4 per sample.
 *
 * Writes: s stores at stride s whose offsets cover s consecutive elements (a grid fill writes
 * out[4X + k] for k = 0..3) are interleaved into s contiguous vector stores at the last one,
 * instead of s scatters of W single elements. */
#include "codegen/llvm_vec_internal.h"

#include "base/arena.h"
#include "codegen/ir_clone.h"

#include <stdint.h>
#include <stdlib.h>

#define MAX_SHUFFLE_STRIDE 4
#define MAX_SPAN_CHUNKS 16   /* a group's span, in vectors */
#define MAX_W 16             /* groups only for vectors up to this width */

typedef struct tap {
    const ir_expr *load;
    int group;
    int64_t off;        /* the constant part of dimension 0 */
    LLVMValueRef value; /* once the group is loaded */
    bool perm;          /* value's lanes in the order of vec_unpermute */
} tap;

typedef struct group {
    const ir_expr *first;  /* a member: the buffer and the indices after dimension 0 */
    const ir_expr *base;   /* dimension 0 without its constant */
    int64_t lo, hi;        /* the members' offsets */
    int n;
} group;

/* s stores of one row at stride s with offsets lo .. lo + s - 1. */
typedef struct sgroup {
    const ir_stmt *member[MAX_SHUFFLE_STRIDE];  /* by offset - lo */
    int s, seen;
    LLVMValueRef value[MAX_SHUFFLE_STRIDE];
} sgroup;

struct vgroups {
    tap *t;
    int nt, ct;
    group *g;
    int ng, cg;
    sgroup *sg;
    int nsg;
};

/* ---- single strided reads ---- */

/* W elements at p + c*W, masked to the first `live` (nothing past them is touched). */
static LLVMValueRef chunk(vec *v, LLVMValueRef p, int c, int live)
{
    emit *e = v->e;
    int W = v->W;
    LLVMTypeRef vf = vec_type(v, IR_F32);
    LLVMValueRef q = LLVMBuildGEP2(e->b, e->t_f32, p, (LLVMValueRef[]){ em_i32(e, c * W) }, 1,
                                   "");
    if (live >= W) {
        LLVMValueRef l = LLVMBuildLoad2(e->b, vf, q, "");
        LLVMSetAlignment(l, 4);
        return l;
    }
    LLVMValueRef m[64];
    for (int l = 0; l < W; l++)
        m[l] = LLVMConstInt(e->t_i1, l < live, 0);
    unsigned id = LLVMLookupIntrinsicID("llvm.masked.load", 16);
    LLVMTypeRef tys[2] = { vf, e->t_ptr };
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, 2);
    LLVMValueRef args[4] = { q, em_i32(e, 4), LLVMConstVector(m, (unsigned)W),
                             LLVMGetPoison(vf) };
    return LLVMBuildCall2(e->b, LLVMIntrinsicGetType(e->ctx, id, tys, 2), fn, args, 4, "");
}

/* Lanes at stride s of one row from lane 0's element p: the elements from lane 0's to lane
 * W-1's, all inside the buffer because both ends are. */
LLVMValueRef vec_strided_load_at(vec *v, LLVMValueRef p, int s)
{
    emit *e = v->e;
    int W = v->W, n = (W - 1) * s + 1, chunks = (n + W - 1) / W;
    LLVMValueRef part[2 * MAX_SHUFFLE_STRIDE];
    for (int c = 0; c < chunks; c++)
        part[c] = chunk(v, p, c, n - c * W);
    /* Concatenate pairwise (padding with poison) into one vector of chunks' elements. */
    int have = chunks, width = W;
    while (have > 1) {
        LLVMValueRef m[2 * 64 * MAX_SHUFFLE_STRIDE];
        for (int l = 0; l < 2 * width; l++)
            m[l] = em_i32(e, l);
        int next = 0;
        for (int c = 0; c < have; c += 2) {
            LLVMValueRef b = c + 1 < have ? part[c + 1] : LLVMGetPoison(LLVMTypeOf(part[c]));
            part[next++] = LLVMBuildShuffleVector(e->b, part[c], b,
                                                  LLVMConstVector(m, (unsigned)(2 * width)), "");
        }
        have = next;
        width *= 2;
    }
    LLVMValueRef m[64];
    for (int l = 0; l < W; l++)
        m[l] = em_i32(e, (int64_t)l * s);
    return LLVMBuildShuffleVector(e->b, part[0], LLVMGetPoison(LLVMTypeOf(part[0])),
                                  LLVMConstVector(m, (unsigned)W), "");
}

bool vec_shuffle_strided(const vec *v, const ir_buffer *buf, const vval *iv)
{
    if (iv[0].kind != V_AFFINE || iv[0].stride < 2 || iv[0].stride > MAX_SHUFFLE_STRIDE ||
        v->W > 64)
        return false;
    for (int d = 1; d < buf->ndims; d++)
        if (iv[d].kind != V_UNIFORM)
            return false;
    return true;
}

/* ---- groups: finding them ---- */

/* x = base + c with c constant (c = 0 when x has no constant term). */
static const ir_expr *split_offset(const ir_expr *x, int64_t *c)
{
    int64_t k;
    if (x->kind == IR_BIN && (x->op == IR_ADD || x->op == IR_SUB) && ir_is_const(x->b, &k)) {
        *c = x->op == IR_ADD ? k : -k;
        return x->a;
    }
    *c = 0;
    return x;
}

static bool same_row(const group *g, const ir_expr *load, const ir_expr *base)
{
    if (load->buf != g->first->buf || !ir_expr_equal(base, g->base))
        return false;
    for (int d = 1; d < load->n_args; d++)
        if (!ir_expr_equal(load->args[d], g->first->args[d]))
            return false;
    return true;
}

static void add_tap(vgroups *G, const ir_expr *load, const ir_expr *base, int64_t off)
{
    int gi = 0;
    while (gi < G->ng && !same_row(&G->g[gi], load, base))
        gi++;
    if (gi == G->ng) {
        if (G->ng == G->cg)
            G->g = pf_xrealloc(G->g, sizeof *G->g * (size_t)(G->cg = G->cg * 2 + 4));
        G->g[G->ng++] = (group){ load, base, off, off, 0 };
    }
    group *g = &G->g[gi];
    g->lo = off < g->lo ? off : g->lo;
    g->hi = off > g->hi ? off : g->hi;
    g->n++;
    if (G->nt == G->ct)
        G->t = pf_xrealloc(G->t, sizeof *G->t * (size_t)(G->ct = G->ct * 2 + 8));
    G->t[G->nt++] = (tap){ load, gi, off, NULL, false };
}

static void collect_expr(vec *v, vgroups *G, const ir_expr *x)
{
    if (!x)
        return;
    collect_expr(v, G, x->a);
    collect_expr(v, G, x->b);
    collect_expr(v, G, x->c);
    for (int i = 0; i < x->n_args; i++)
        collect_expr(v, G, x->args[i]);
    if (x->kind != IR_LOAD || x->clamp_mask || x->n_args < 1)
        return;
    for (int d = 0; d < x->n_args; d++)
        if (!vec_outside_only(v, x->args[d]))
            return;
    int64_t off;
    const ir_expr *base = split_offset(x->args[0], &off);
    add_tap(G, x, base, off);
}

/* The reads every iteration makes: not those under a condition or in an inner loop. */
static void collect_stmt(vec *v, vgroups *G, const ir_stmt *s)
{
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n; i++)
            collect_stmt(v, G, s->body[i]);
        return;
    case IR_S_LET:
    case IR_S_DECL:
    case IR_S_ASSIGN:
        collect_expr(v, G, s->value);
        return;
    case IR_S_STORE:
        collect_expr(v, G, s->value);
        for (int i = 0; i < s->n; i++)
            collect_expr(v, G, s->idx[i]);
        return;
    default:
        return;
    }
}

/* ---- groups: loading them ---- */

/* Even and odd elements of the concatenation of n W-wide vectors (n even). */
static void deinterleave(vec *v, LLVMValueRef *in, int n, LLVMValueRef *even, LLVMValueRef *odd)
{
    emit *e = v->e;
    LLVMValueRef me[MAX_W], mo[MAX_W];
    for (int l = 0; l < v->W; l++) {
        me[l] = em_i32(e, 2 * l);
        mo[l] = em_i32(e, 2 * l + 1);
    }
    LLVMValueRef ce = LLVMConstVector(me, (unsigned)v->W), co = LLVMConstVector(mo, (unsigned)v->W);
    for (int i = 0; i < n / 2; i++) {
        even[i] = LLVMBuildShuffleVector(e->b, in[2 * i], in[2 * i + 1], ce, "");
        odd[i] = LLVMBuildShuffleVector(e->b, in[2 * i], in[2 * i + 1], co, "");
    }
}

/* Elements q .. q + W - 1 of the concatenation of the vectors in list. */
static LLVMValueRef window(vec *v, LLVMValueRef *list, int64_t q)
{
    emit *e = v->e;
    int W = v->W, i = (int)(q / W), o = (int)(q % W);
    if (o == 0)
        return list[i];
    LLVMValueRef m[MAX_W];
    for (int l = 0; l < W; l++)
        m[l] = em_i32(e, o + l);
    return LLVMBuildShuffleVector(e->b, list[i], list[i + 1], LLVMConstVector(m, (unsigned)W), "");
}

/* ---- 8 lanes at stride 4: transposed blocks ----
 *
 * The span's blocks of 4 (block m: the 4 phases of sample J + m) are transposed 8 at a time
 * within 128-bit halves (unpack instructions), which leaves each phase with its lanes in the
 * order J + (0 2 4 6 | 1 3 5 7). In that order a tap's window, sample J + q + lane, is one
 * in-lane rotation (q even) or a half swap and rotation (q odd) of two transposed vectors,
 * instead of a shuffle across halves from a wide concatenation; the body computes in the
 * permuted order (lane-wise arithmetic does not care) and vec_unpermute restores it once. */

enum { PW = 8, PS = 4 };

static LLVMValueRef shuffle2(vec *v, LLVMValueRef a, LLVMValueRef b, const int *mask)
{
    LLVMValueRef m[PW];
    for (int l = 0; l < PW; l++)
        m[l] = em_i32(v->e, mask[l]);
    return LLVMBuildShuffleVector(v->e->b, a, b, LLVMConstVector(m, PW), "");
}

/* c[0..3] hold blocks 0..7; T[r] = phase r of blocks (0 2 4 6 | 1 3 5 7). */
static void transpose_blocks(vec *v, const LLVMValueRef *c, LLVMValueRef *T)
{
    static const int lo_ps[PW] = { 0, 8, 1, 9, 4, 12, 5, 13 }, hi_ps[PW] = { 2, 10, 3, 11, 6, 14, 7, 15 };
    static const int lo_pd[PW] = { 0, 1, 8, 9, 4, 5, 12, 13 }, hi_pd[PW] = { 2, 3, 10, 11, 6, 7, 14, 15 };
    LLVMValueRef u0 = shuffle2(v, c[0], c[1], lo_ps), u1 = shuffle2(v, c[0], c[1], hi_ps);
    LLVMValueRef u2 = shuffle2(v, c[2], c[3], lo_ps), u3 = shuffle2(v, c[2], c[3], hi_ps);
    T[0] = shuffle2(v, u0, u2, lo_pd);
    T[1] = shuffle2(v, u0, u2, hi_pd);
    T[2] = shuffle2(v, u1, u3, lo_pd);
    T[3] = shuffle2(v, u1, u3, hi_pd);
}

/* Where block m sits in the transposed vectors: vector m / 8, lane (m % 8 even: the low
 * half, else the high half). */
static int block_lane(int m)
{
    int k = m % PW;
    return (k % 2 ? PW / 2 : 0) + k / 2;
}

/* Samples J + q + (0 2 4 6 | 1 3 5 7) of phase r for an even q: each half rotates within
 * itself across two transposed vectors (T[i][r]: phase r of blocks 8i ..). */
static LLVMValueRef even_window(vec *v, LLVMValueRef (*T)[PS], int r, int q)
{
    int a = q / PW, mask[PW];
    for (int p = 0; p < PW; p++) {
        int m = q + (p < PW / 2 ? 2 * p : 2 * (p - PW / 2) + 1);
        mask[p] = (m / PW - a) * PW + block_lane(m);
    }
    return shuffle2(v, T[a][r], T[a + 1][r], mask);
}

/* An odd q's window is the high half of q - 1's and the low half of q + 1's. */
static LLVMValueRef odd_window(vec *v, LLVMValueRef below, LLVMValueRef above)
{
    static const int swap[PW] = { 4, 5, 6, 7, 8, 9, 10, 11 };
    return shuffle2(v, below, above, swap);
}

LLVMValueRef vec_unpermute(vec *v, LLVMValueRef x)
{
    static const int nat[PW] = { 0, 4, 1, 5, 2, 6, 3, 7 };
    return shuffle2(v, x, LLVMGetPoison(LLVMTypeOf(x)), nat);
}

/* The taps of a group at stride 4 on 8 lanes from p (lane 0 of offset g->lo), n elements. */
static void load_transposed(vec *v, vgroups *G, int gi, LLVMValueRef p, int64_t n)
{
    const group *g = &G->g[gi];
    int qmax = (int)((g->hi - g->lo) / PS), nt = (qmax + PW) / PW + 1;  /* transposed sets */
    int chunks = (int)((n + PW - 1) / PW);
    LLVMValueRef T[MAX_SPAN_CHUNKS / 4][PS], c[4];
    for (int i = 0; i < nt; i++) {
        for (int k = 0; k < 4; k++) {
            int ci = 4 * i + k;
            c[k] = ci < chunks ? chunk(v, p, ci, (int)(n - (int64_t)ci * PW))
                               : LLVMGetPoison(vec_type(v, IR_F32));
        }
        transpose_blocks(v, c, T[i]);
    }
    LLVMValueRef even[PS][2 * PW + 2] = { { NULL } };
    for (int t = 0; t < G->nt; t++)
        if (G->t[t].group == gi) {
            int64_t d = G->t[t].off - g->lo;
            int r = (int)(d % PS), q = (int)(d / PS);
            for (int e = q - q % 2; e <= q + q % 2; e += 2)
                if (!even[r][e])
                    even[r][e] = even_window(v, T, r, e);
            G->t[t].value = q % 2 ? odd_window(v, even[r][q - 1], even[r][q + 1]) : even[r][q];
            G->t[t].perm = true;
        }
}

/* Loads group gi when its row is strided by 2 or 4 and spans at most MAX_SPAN_CHUNKS vectors;
 * otherwise its taps stay single reads. */
static void load_group(vec *v, vgroups *G, int gi)
{
    emit *e = v->e;
    const group *g = &G->g[gi];
    const ir_buffer *buf = g->first->buf;
    int W = v->W;
    vval b = vec_x(v, g->base);
    if (b.kind != V_AFFINE || (b.stride != 2 && b.stride != 4))
        return;
    int s = (int)b.stride;
    int64_t n = g->hi - g->lo + (int64_t)(W - 1) * s + 1;
    int chunks = (int)((n + W - 1) / W), k = (chunks + s - 1) / s * s;
    if (k > MAX_SPAN_CHUNKS)
        return;
    LLVMValueRef idx[IR_MAX_DIMS];
    idx[0] = LLVMBuildAdd(e->b, b.v, LLVMConstInt(LLVMTypeOf(b.v), (unsigned long long)g->lo, 1),
                          "");
    for (int d = 1; d < buf->ndims; d++) {
        vval u = vec_x(v, g->first->args[d]);
        if (u.kind != V_UNIFORM)
            return;
        idx[d] = u.v;
    }
    LLVMValueRef p = em_element_ptr(e, buf, idx);
    /* a stencil of 4 or more taps, at most 2 * PW + 1 samples wide (transposed sets fit) */
    if (s == PS && W == PW && g->n >= 4 && (g->hi - g->lo) / PS <= 2 * PW) {
        load_transposed(v, G, gi, p, n);
        return;
    }
    LLVMValueRef span[MAX_SPAN_CHUNKS], half[2][MAX_SPAN_CHUNKS / 2];
    LLVMValueRef phase[MAX_SHUFFLE_STRIDE][MAX_SPAN_CHUNKS / 2];
    for (int c = 0; c < k; c++)
        span[c] = c < chunks ? chunk(v, p, c, (int)(n - (int64_t)c * W))
                             : LLVMGetPoison(vec_type(v, IR_F32));
    if (s == 2) {
        deinterleave(v, span, k, phase[0], phase[1]);
    } else {  /* phases 0, 2 from the even elements, 1, 3 from the odd ones */
        deinterleave(v, span, k, half[0], half[1]);
        deinterleave(v, half[0], k / 2, phase[0], phase[2]);
        deinterleave(v, half[1], k / 2, phase[1], phase[3]);
    }
    for (int t = 0; t < G->nt; t++)
        if (G->t[t].group == gi) {
            int64_t d = G->t[t].off - g->lo;
            G->t[t].value = window(v, phase[d % s], d / s);
        }
}

/* ---- store groups ---- */

static bool reads_buffer(const ir_expr *x, const ir_buffer *buf)
{
    if (!x)
        return false;
    if (x->kind == IR_LOAD && x->buf == buf)
        return true;
    if (reads_buffer(x->a, buf) || reads_buffer(x->b, buf) || reads_buffer(x->c, buf))
        return true;
    for (int i = 0; i < x->n_args; i++)
        if (reads_buffer(x->args[i], buf))
            return true;
    return false;
}

/* Whether anything in s reads buf, and how many stores to buf it holds. */
static bool touches(const ir_stmt *s, const ir_buffer *buf, int *stores)
{
    if (!s)
        return false;
    if (s->kind == IR_S_STORE && s->buf == buf)
        (*stores)++;
    bool r = reads_buffer(s->value, buf) || reads_buffer(s->index, buf) ||
             reads_buffer(s->cond, buf) || reads_buffer(s->lo, buf) || reads_buffer(s->hi, buf) ||
             reads_buffer(s->step, buf);
    for (int i = 0; s->kind == IR_S_STORE && i < s->n; i++)
        r |= reads_buffer(s->idx[i], buf);
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        r |= touches(s->body[i], buf, stores);
    if (s->kind != IR_S_BLOCK) {  /* both walked: they count stores */
        r |= touches(s->then_s, buf, stores);
        r |= touches(s->else_s, buf, stores);
    }
    return r;
}

static void top_stores(const ir_stmt *s, const ir_stmt **out, int *n, int cap)
{
    if (s->kind == IR_S_BLOCK) {
        for (int i = 0; i < s->n; i++)
            top_stores(s->body[i], out, n, cap);
    } else if (s->kind == IR_S_STORE && *n < cap) {
        out[(*n)++] = s;
    }
}

static bool same_store_row(const ir_stmt *a, const ir_stmt *b)
{
    int64_t ca, cb;
    if (a->buf != b->buf ||
        !ir_expr_equal(split_offset(a->idx[0], &ca), split_offset(b->idx[0], &cb)))
        return false;
    for (int d = 1; d < a->n; d++)
        if (!ir_expr_equal(a->idx[d], b->idx[d]))
            return false;
    return true;
}

static bool plain_store(vec *v, const ir_stmt *s)
{
    if (s->check_mask || s->scatter)
        return false;
    for (int d = 0; d < s->n; d++)
        if (!vec_outside_only(v, s->idx[d]))
            return false;
    return true;
}

/* The group of stores st[i] belongs to, when its row is strided by 2 or 4, it has exactly one
 * store per offset lo .. lo + s - 1, and nothing else in the body touches the buffer. */
static bool store_group(vec *v, const ir_stmt *body, const ir_stmt **st, int n, int i,
                        sgroup *g)
{
    if (!plain_store(v, st[i]))
        return false;
    int64_t lo = INT64_MAX, c;
    int members = 0, stores = 0;
    for (int j = 0; j < n; j++)
        if (same_store_row(st[i], st[j])) {
            if (j < i || !plain_store(v, st[j]))
                return false;  /* the first member decides */
            split_offset(st[j]->idx[0], &c);
            lo = c < lo ? c : lo;
            members++;
        }
    vval b = vec_x(v, split_offset(st[i]->idx[0], &c));
    if (b.kind != V_AFFINE || (b.stride != 2 && b.stride != 4) || members != b.stride ||
        touches(body, st[i]->buf, &stores) || stores != members)
        return false;
    *g = (sgroup){ { NULL }, (int)b.stride, 0, { NULL } };
    for (int j = 0; j < n; j++)
        if (same_store_row(st[i], st[j])) {
            split_offset(st[j]->idx[0], &c);
            if (c - lo >= g->s || g->member[c - lo])
                return false;
            g->member[c - lo] = st[j];
        }
    return true;
}

static void find_store_groups(vec *v, vgroups *G, const ir_stmt *body)
{
    const ir_stmt *st[64];
    int n = 0;
    top_stores(body, st, &n, 64);
    G->sg = pf_xcalloc((size_t)n + 1, sizeof *G->sg);
    for (int i = 0; i < n; i++)
        if (store_group(v, body, st, n, i, &G->sg[G->nsg]))
            G->nsg++;
}

/* The sequences a and b (n W-wide vectors each) interleaved: a0 b0 a1 b1 ... (2n vectors). */
static void interleave(vec *v, const LLVMValueRef *a, const LLVMValueRef *b, int n,
                       LLVMValueRef *out)
{
    emit *e = v->e;
    int W = v->W;
    LLVMValueRef lo[MAX_W], hi[MAX_W];
    for (int l = 0; l < W; l++) {
        int k = l / 2 + (l % 2) * W;
        lo[l] = em_i32(e, k);
        hi[l] = em_i32(e, k + W / 2);
    }
    LLVMValueRef cl = LLVMConstVector(lo, (unsigned)W), ch = LLVMConstVector(hi, (unsigned)W);
    for (int i = 0; i < n; i++) {
        out[2 * i] = LLVMBuildShuffleVector(e->b, a[i], b[i], cl, "");
        out[2 * i + 1] = LLVMBuildShuffleVector(e->b, a[i], b[i], ch, "");
    }
}

static void store_interleaved(vec *v, sgroup *g)
{
    emit *e = v->e;
    const ir_stmt *first = g->member[0];
    LLVMValueRef z[MAX_SHUFFLE_STRIDE];
    if (g->s == 2) {
        interleave(v, &g->value[0], &g->value[1], 1, z);
    } else {  /* (v0 v2) with (v1 v3): v0 v1 v2 v3 per lane */
        LLVMValueRef p[2], q[2];
        interleave(v, &g->value[0], &g->value[2], 1, p);
        interleave(v, &g->value[1], &g->value[3], 1, q);
        interleave(v, p, q, 2, z);
    }
    vval iv[IR_MAX_DIMS];
    for (int d = 0; d < first->n; d++)
        iv[d] = vec_x(v, first->idx[d]);
    LLVMValueRef p = vec_lane0_ptr(v, first->buf, iv, first->idx);
    for (int m = 0; m < g->s; m++) {
        LLVMValueRef q = LLVMBuildGEP2(e->b, e->t_f32, p, (LLVMValueRef[]){ em_i32(e, m * v->W) },
                                       1, "");
        LLVMSetAlignment(LLVMBuildStore(e->b, z[m], q), 4);
    }
}

bool vec_group_store(vec *v, const ir_stmt *s)
{
    for (int i = 0; v->groups && i < v->groups->nsg; i++) {
        sgroup *g = &v->groups->sg[i];
        for (int k = 0; k < g->s; k++)
            if (g->member[k] == s) {
                g->value[k] = vec_as_vector(v, vec_x(v, s->value));
                if (++g->seen == g->s)
                    store_interleaved(v, g);
                return true;
            }
    }
    return false;
}

void vec_groups_begin(vec *v, const ir_stmt *body)
{
    v->groups = NULL;
    if (v->W > MAX_W)
        return;
    vgroups *G = pf_xcalloc(1, sizeof *G);
    /* Nothing of the body is defined yet: its variables count as inside from the start, so
     * only reads of outside values and the lane are grouped (computable before the body). */
    char *inside = v->inside;
    v->inside = pf_xcalloc((size_t)v->e->irf->n_vars + 1, 1);
    ir_defined_vars(body, v->inside);
    collect_stmt(v, G, body);
    for (int gi = 0; gi < G->ng; gi++)
        if (G->g[gi].n >= 2)
            load_group(v, G, gi);
    find_store_groups(v, G, body);
    free(v->inside);
    v->inside = inside;
    v->groups = G;
}

void vec_groups_end(vec *v)
{
    if (!v->groups)
        return;
    free(v->groups->sg);
    free(v->groups->t);
    free(v->groups->g);
    free(v->groups);
    v->groups = NULL;
}

bool vec_strided_load(vec *v, const ir_expr *x, vval *iv, vval *out)
{
    for (int t = 0; v->groups && t < v->groups->nt; t++) {
        const tap *p = &v->groups->t[t];
        if (p->load == x && p->value) {
            *out = (vval){ p->perm ? V_PERM : V_VECTOR, p->value, 0 };
            return true;
        }
    }
    if (!vec_shuffle_strided(v, x->buf, iv))
        return false;
    LLVMValueRef p = vec_lane0_ptr(v, x->buf, iv, x->args);
    LLVMValueRef r = vec_strided_load_at(v, p, (int)iv[0].stride);
    *out = (vval){ V_VECTOR, r, 0 };
    return true;
}
