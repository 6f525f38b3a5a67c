/* The median's selection network (llvm_median_net.h): Parberry's pairwise sorting network on
 * len wires, pruned at compile time to the comparators (and the min or max halves of them)
 * that output wire len / 2 depends on, emitted in an order that keeps few values live. */
#include "codegen/llvm_median_net.h"

#include "base/arena.h"

#include <stdlib.h>

typedef struct comparator {
    int lo, hi;             /* wires: min goes to lo, max to hi */
    bool want_min, want_max;
} comparator;

typedef struct network {
    comparator *c;
    int n, cap;
} network;

static void push(network *net, int lo, int hi)
{
    if (net->n == net->cap) {
        net->cap = net->cap ? 2 * net->cap : 256;
        net->c = pf_xrealloc(net->c, sizeof *net->c * (size_t)net->cap);
    }
    comparator c = { lo, hi, true, true };
    net->c[net->n++] = c;
}

/* Comparators (b - step, b) for b from `first` while below `size`, in runs of `run` wires
 * separated by gaps of `run`: one layer of Parberry's pairwise network. Comparators that
 * reach wire len or beyond are left out: padding len .. size-1 with +inf, a comparator there
 * never moves anything (the max stays on the higher wire), so the rest sorts len wires. */
static void layer(network *net, int len, int size, int first, int step, int run)
{
    int b = first, c = 0;
    while (b < size) {
        if (b < len)
            push(net, b - step, b);
        b++;
        c = (c + 1) % run;
        if (c == 0)
            b += run;
    }
}

/* Parberry's pairwise sorting network (1992) on the next power of two. Pruned to the median it
 * keeps fewer comparators than Batcher's odd-even merge sort, which Halide's median uses: for
 * 81 wires 1094 min/max against 1324. */
static void pairwise_network(network *net, int len)
{
    int size = 1;
    while (size < len)
        size *= 2;
    int a = 1;
    for (; a < size; a *= 2)  /* sort pairs, then pairs of pairs, ... */
        layer(net, len, size, a, a, a);
    int e = 1;
    for (a /= 4; a > 0; a /= 2, e = 2 * e + 1)  /* the pairwise merges */
        for (int d = e; d > 0; d /= 2)
            layer(net, len, size, (d + 1) * a, d * a, a);
}

/* Keeps the comparators, and of each the min or max half, that wire `out` depends on at the
 * end (walking back from it: a comparator needed for either output needs both inputs). */
static void prune(network *net, int len, int out)
{
    char *need = pf_xcalloc((size_t)len, 1);
    need[out] = 1;
    int kept = 0;
    for (int i = net->n - 1; i >= 0; i--) {
        comparator *c = &net->c[i];
        c->want_min = need[c->lo];
        c->want_max = need[c->hi];
        if (c->want_min || c->want_max)
            need[c->lo] = need[c->hi] = 1;
    }
    for (int i = 0; i < net->n; i++)
        if (net->c[i].want_min || net->c[i].want_max)
            net->c[kept++] = net->c[i];
    net->n = kept;
    free(need);
}

/* ---- the order of the comparators ---- */

/* A network's layers each touch every wire, so in the generated order all len values are live
 * at once and most of them sit in stack slots (x86 has 16 vector registers): for 81 wires that
 * is ~1500 spill instructions and twice the time of the min/max themselves, and a long
 * register allocation. Emitted instead in postorder from the output (each comparator right
 * after the ones it depends on, the deeper dependency first, as Sethi-Ullman order for trees),
 * a comparator mostly consumes what the previous ones produced: a third of the spills, and
 * the inputs are loaded when first used. */
typedef struct order_ctx {
    const network *net;
    int *prev;    /* [2i], [2i+1]: the comparator before i on its lo / hi wire, or -1 */
    int *depth;   /* longest chain of comparators ending at i */
    char *seen;
    int *order, n;
} order_ctx;

static void visit(order_ctx *o, int i)
{
    if (i < 0 || o->seen[i])
        return;
    o->seen[i] = 1;
    int a = o->prev[2 * i], b = o->prev[2 * i + 1];
    int da = a < 0 ? 0 : o->depth[a], db = b < 0 ? 0 : o->depth[b];
    visit(o, da >= db ? a : b);
    visit(o, da >= db ? b : a);
    o->order[o->n++] = i;
}

/* The comparators of a pruned network in postorder from wire out; returns their count. */
static int schedule(const network *net, int len, int out, int *order)
{
    order_ctx o = { net, pf_xmalloc(sizeof *o.prev * 2 * (size_t)(net->n + 1)),
                    pf_xmalloc(sizeof *o.depth * (size_t)(net->n + 1)),
                    pf_xcalloc((size_t)net->n + 1, 1), order, 0 };
    int *last = pf_xmalloc(sizeof *last * (size_t)len);
    for (int w = 0; w < len; w++)
        last[w] = -1;
    for (int i = 0; i < net->n; i++) {
        const comparator *c = &net->c[i];
        o.prev[2 * i] = last[c->lo];
        o.prev[2 * i + 1] = last[c->hi];
        int da = last[c->lo] < 0 ? 0 : o.depth[last[c->lo]],
            db = last[c->hi] < 0 ? 0 : o.depth[last[c->hi]];
        o.depth[i] = 1 + (da > db ? da : db);
        last[c->lo] = last[c->hi] = i;
    }
    visit(&o, last[out]);
    free(last);
    free(o.prev);
    free(o.depth);
    free(o.seen);
    return o.n;
}

/* ---- emission ---- */

/* The inputs, loaded when first used; for a NaN check every two loads add one unordered
 * comparison to a running or. */
typedef struct wires {
    emit *e;
    LLVMTypeRef t, arr;
    LLVMValueRef base;
    LLVMValueRef *w;            /* by wire: its input, then the network's value on it */
    bool check_nan;
    LLVMValueRef pending, nan;  /* a loaded value not yet compared; the or so far */
} wires;

static void nan_check(wires *ws, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef u = LLVMBuildFCmp(ws->e->b, LLVMRealUNO, a, b, "");
    ws->nan = ws->nan ? LLVMBuildOr(ws->e->b, ws->nan, u, "") : u;
}

static LLVMValueRef wire(wires *ws, int i)
{
    emit *e = ws->e;
    if (ws->w[i])
        return ws->w[i];
    LLVMValueRef ix[2] = { em_i32(e, 0), em_i32(e, i) };
    ws->w[i] = LLVMBuildLoad2(e->b, ws->t, LLVMBuildInBoundsGEP2(e->b, ws->arr, ws->base, ix, 2,
                                                                 ""), "");
    if (ws->check_nan) {
        if (ws->pending) {
            nan_check(ws, ws->pending, ws->w[i]);
            ws->pending = NULL;
        } else {
            ws->pending = ws->w[i];
        }
    }
    return ws->w[i];
}

LLVMValueRef median_net_emit(emit *e, LLVMTypeRef t, LLVMValueRef p, int len, median_minmax_fn mm,
                             void *ctx, LLVMValueRef *nan)
{
    wires ws = { e, t, LLVMArrayType(t, (unsigned)len), p, pf_xcalloc((size_t)len, sizeof *ws.w),
                 nan != NULL, NULL, NULL };
    network net = { 0 };
    pairwise_network(&net, len);
    prune(&net, len, len / 2);
    int *order = pf_xmalloc(sizeof *order * (size_t)(net.n + 1));
    int n = schedule(&net, len, len / 2, order);
    for (int k = 0; k < n; k++) {
        const comparator *c = &net.c[order[k]];
        LLVMValueRef a = wire(&ws, c->lo), b = wire(&ws, c->hi);
        if (c->want_min)
            ws.w[c->lo] = mm(ctx, a, b, false);
        if (c->want_max)
            ws.w[c->hi] = mm(ctx, a, b, true);
    }
    free(order);
    free(net.c);
    LLVMValueRef r = wire(&ws, len / 2);
    if (nan) {
        for (int i = 0; i < len; i++)  /* a NaN anywhere decides the order, used or not */
            wire(&ws, i);
        if (ws.pending)
            nan_check(&ws, ws.pending, ws.pending);
        *nan = ws.nan;
    }
    free(ws.w);
    return r;
}
