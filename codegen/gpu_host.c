/* The host side of a GPU-lowered function (gpu_host.h): an evaluator of the IR's scalar
 * expressions with the language's semantics (ir.h: wrapping integers, safe division), the walk
 * of the host's statements, and each kernel's launch geometry. */
#include "codegen/gpu_host.h"

#include "base/arena.h"
#include "codegen/ir_simplify.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct host {
    const ir_func *f;
    pf_gpu_value *v;      /* by var id */
    char *known;          /* by var id: v holds its value here */
    const pf_gpu_host_ops *ops;
    pf_error *err;
    bool failed;
} host;

static int fail(host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(host *h, const char *fmt, ...)
{
    if (!h->failed) {
        char msg[400];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        pf_fail(h->err, "CUDA host: %s", msg);
    }
    h->failed = true;
    return -1;
}

/* ---- scalars ---- */

static int64_t wrap(ir_type t, int64_t x)
{
    return t == IR_I32 ? (int64_t)(int32_t)(uint32_t)x : t == IR_BOOL ? x != 0 : x;
}

static pf_gpu_value ival(int64_t i)
{
    return (pf_gpu_value){ i, 0.0f };
}

static pf_gpu_value fval(float f)
{
    return (pf_gpu_value){ 0, f };
}

static pf_gpu_value eval(host *h, const ir_expr *e);

static pf_gpu_value float_bin(ir_op op, float a, float b)
{
    switch (op) {
    case IR_ADD: return fval(a + b);
    case IR_SUB: return fval(a - b);
    case IR_MUL: return fval(a * b);
    case IR_DIV: return fval(a / b);
    case IR_MOD: return fval(fmodf(a, b));
    case IR_MIN: return fval(b < a ? b : a);
    case IR_MAX: return fval(a < b ? b : a);
    case IR_LT: return ival(a < b);
    case IR_LE: return ival(a <= b);
    case IR_EQ: return ival(a == b);
    case IR_NE: return ival(a != b);
    default: return ival(0);
    }
}

static pf_gpu_value int_bin(ir_op op, ir_type t, int64_t a, int64_t b)
{
    bool w = t == IR_I32;
    switch (op) {
    case IR_ADD: return ival(wrap(t, (int64_t)((uint64_t)a + (uint64_t)b)));
    case IR_SUB: return ival(wrap(t, (int64_t)((uint64_t)a - (uint64_t)b)));
    case IR_MUL: return ival(wrap(t, (int64_t)((uint64_t)a * (uint64_t)b)));
    case IR_DIV: return ival(w ? ir_sem_div32((int32_t)a, (int32_t)b) : ir_sem_div64(a, b));
    case IR_MOD: return ival(w ? ir_sem_mod32((int32_t)a, (int32_t)b) : ir_sem_mod64(a, b));
    case IR_MIN: return ival(b < a ? b : a);
    case IR_MAX: return ival(a < b ? b : a);
    case IR_LT: return ival(a < b);
    case IR_LE: return ival(a <= b);
    case IR_EQ: return ival(a == b);
    case IR_NE: return ival(a != b);
    case IR_AND: return ival(a && b);
    case IR_OR: return ival(a || b);
    default: return ival(0);
    }
}

static pf_gpu_value cast(ir_type to, ir_type from, pf_gpu_value x)
{
    if (to == IR_F32)
        return from == IR_F32 ? x : fval((float)x.i);
    if (from == IR_F32)
        return ival(to == IR_BOOL ? x.f != 0.0f : ir_sem_f2i(x.f));
    return ival(wrap(to, x.i));
}

static pf_gpu_value eval_call(host *h, const ir_expr *e)
{
    if (e->fn > IR_FN_FABS || e->n_args > 2) {
        fail(h, "%s() in a scalar the host computes", ir_fn_name(e->fn));
        return ival(0);
    }
    float args[2] = { 0.0f, 0.0f };
    for (int i = 0; i < e->n_args; i++)
        args[i] = eval(h, e->args[i]).f;
    return fval(ir_sem_call_f32(e->fn, args));
}

static pf_gpu_value eval(host *h, const ir_expr *e)
{
    switch (e->kind) {
    case IR_CONST: return e->type == IR_F32 ? fval(e->fval) : ival(e->ival);
    case IR_VARREF:
        if (!h->known[e->var->id])
            fail(h, "%s has no value on the host (a kernel's grid or shared memory depends on "
                 "a value the kernel computes)", e->var->name);
        return h->v[e->var->id];
    case IR_BIN: {
        pf_gpu_value a = eval(h, e->a), b = eval(h, e->b);
        return e->a->type == IR_F32 ? float_bin(e->op, a.f, b.f)
                                    : int_bin(e->op, e->a->type, a.i, b.i);
    }
    case IR_UN: {
        pf_gpu_value a = eval(h, e->a);
        if (e->op == IR_NOT)
            return ival(!a.i);
        return e->type == IR_F32 ? fval(-a.f) : ival(wrap(e->type, (int64_t)(0 - (uint64_t)a.i)));
    }
    case IR_SELECT: return eval(h, e->a).i ? eval(h, e->b) : eval(h, e->c);
    case IR_CAST: return cast(e->type, e->a->type, eval(h, e->a));
    case IR_CALL: return eval_call(h, e);
    default:
        fail(h, "a read of an image in a scalar the host computes");
        return ival(0);
    }
}

static void set(host *h, const ir_var *v, pf_gpu_value x)
{
    h->v[v->id] = x;
    h->known[v->id] = 1;
}

/* ---- launch geometry ---- */

typedef struct geometry {
    const ir_stmt *loops[3];   /* the block loops, outermost first */
    int n;
    int64_t lo[3], step[3], count[3];
} geometry;

static int64_t trip_count(int64_t lo, int64_t hi, int64_t step)
{
    return hi <= lo || step < 1 ? 0 : (hi - lo + step - 1) / step;
}

int pf_gpu_block_loops(const ir_stmt *s, const ir_stmt **loops)
{
    int n = 0;
    while (s && n < 4) {
        if (s->kind == IR_S_BLOCK) {  /* lets and comments around one inner block loop */
            const ir_stmt *inner = NULL;
            int found = 0;
            for (int i = 0; i < s->n; i++)
                if (s->body[i]->kind == IR_S_FOR && s->body[i]->loop_kind == IR_LOOP_GPU_BLOCK) {
                    inner = s->body[i];
                    found++;
                }
            if (found != 1)
                break;
            s = inner;
            continue;
        }
        if (s->kind != IR_S_FOR || s->loop_kind != IR_LOOP_GPU_BLOCK)
            break;
        loops[n++] = s;
        s = s->then_s;
    }
    return n;
}

/* The nested block loops from s down, with their bounds. */
static int grid(host *h, const ir_stmt *s, geometry *g)
{
    const ir_stmt *loops[4];
    int n = pf_gpu_block_loops(s, loops);
    if (n > 3)
        return fail(h, "more than three block loops in one kernel");
    for (int k = 0; k < n && !h->failed; k++) {
        g->n = k + 1;
        g->loops[k] = loops[k];
        g->lo[k] = eval(h, loops[k]->lo).i;
        g->step[k] = eval(h, loops[k]->step).i;
        g->count[k] = trip_count(g->lo[k], eval(h, loops[k]->hi).i, g->step[k]);
    }
    return h->failed ? -1 : 0;
}

static void block_threads(const ir_stmt *s, unsigned *block)
{
    if (!s)
        return;
    if (s->kind == IR_S_FOR && s->loop_kind == IR_LOOP_GPU_THREAD &&
        (unsigned)s->width > block[s->gpu_dim])
        block[s->gpu_dim] = (unsigned)s->width;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        block_threads(s->body[i], block);
    if (s->kind != IR_S_BLOCK) {
        block_threads(s->then_s, block);
        block_threads(s->else_s, block);
    }
}

/* Floats of shared memory the block needs below s: a window's size plus what its body needs;
 * statements in sequence reuse the same space (gpu_ptx.c restores the offset after a window). */
static int64_t shared_need(host *h, const ir_stmt *s)
{
    if (!s || h->failed)
        return 0;
    switch (s->kind) {
    case IR_S_BLOCK: {
        int64_t most = 0;
        for (int i = 0; i < s->n; i++) {
            const ir_stmt *c = s->body[i];
            if (c->kind == IR_S_LET)  /* a let the windows may use; unknown if it cannot be */
                h->known[c->var->id] = 0;
            int64_t n = shared_need(h, c);
            most = n > most ? n : most;
        }
        return most;
    }
    case IR_S_ALLOC: {
        if (!s->buf->gpu_shared)
            return shared_need(h, s->then_s);
        int64_t n = 1;
        for (int d = 0; d < s->buf->ndims; d++)
            n *= eval(h, s->window[2 * d + 1]).i;
        return n + shared_need(h, s->then_s);
    }
    case IR_S_IF: {
        int64_t a = shared_need(h, s->then_s), b = shared_need(h, s->else_s);
        return a > b ? a : b;
    }
    case IR_S_FOR:
        return s->loop_kind == IR_LOOP_GPU_THREAD ? 0 : shared_need(h, s->then_s);
    default:
        return 0;
    }
}

/* The largest need over every block of the grid (block loops' variables set in turn). */
static int64_t shared_bytes(host *h, const geometry *g, const ir_stmt *body)
{
    int64_t blocks = 1, most = 0;
    for (int k = 0; k < g->n; k++)
        blocks *= g->count[k];
    if (blocks > ((int64_t)1 << 24))
        return fail(h, "%lld blocks: too many to size their shared memory", (long long)blocks);
    for (int64_t b = 0; b < blocks && !h->failed; b++) {
        int64_t rest = b;
        for (int k = g->n - 1; k >= 0; k--) {
            set(h, g->loops[k]->var, ival(g->lo[k] + (rest % g->count[k]) * g->step[k]));
            rest /= g->count[k];
        }
        int64_t n = shared_need(h, body);
        most = n > most ? n : most;
    }
    for (int k = 0; k < g->n; k++)
        h->known[g->loops[k]->var->id] = 0;
    return 4 * most;
}

static int launch(host *h, const ir_stmt *s)
{
    pf_gpu_launch l = { s, { 1, 1, 1 }, { 1, 1, 1 }, 0, h->v, h->known };
    if (s->kind == IR_S_FOR && s->loop_kind == IR_LOOP_GPU_BLOCK) {
        geometry g = { { NULL }, 0, { 0 }, { 0 }, { 0 } };
        if (grid(h, s, &g))
            return -1;
        for (int k = 0; k < g.n; k++) {
            if (g.count[k] == 0)
                return 0;  /* no block: nothing to launch */
            if (g.count[k] > (k == 0 && g.loops[k]->gpu_dim == 0 ? INT32_MAX : 65535))
                return fail(h, "%lld blocks along %c", (long long)g.count[k],
                            "xyz"[g.loops[k]->gpu_dim]);
            l.grid[g.loops[k]->gpu_dim] = (unsigned)g.count[k];
        }
        block_threads(s, l.block);
        int64_t bytes = shared_bytes(h, &g, g.loops[g.n - 1]->then_s);
        if (h->failed)
            return -1;
        l.shared_bytes = (size_t)bytes;
    }
    return h->ops->launch(h->ops->ctx, &l, h->err) ? (h->failed = true, -1) : 0;
}

void pf_gpu_block_threads(const ir_stmt *s, unsigned block[3])
{
    block_threads(s, block);
}

/* ---- the host's statements ---- */

bool pf_gpu_has_block_loop(const ir_stmt *s)
{
    if (!s)
        return false;
    if (s->kind == IR_S_FOR && s->loop_kind == IR_LOOP_GPU_BLOCK)
        return true;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        if (pf_gpu_has_block_loop(s->body[i]))
            return true;
    return s->kind != IR_S_BLOCK &&
           (pf_gpu_has_block_loop(s->then_s) || pf_gpu_has_block_loop(s->else_s));
}

static int walk(host *h, const ir_stmt *s);

static int host_alloc(host *h, const ir_stmt *s)
{
    const ir_buffer *b = s->buf;
    if (b->window)
        return fail(h, "a window buffer (%s) outside a kernel", b->name);
    int64_t n = 1;
    for (int d = 0; d < b->ndims; d++) {
        set(h, b->stride[d], ival(n));
        n *= h->v[b->extent[d]->id].i;
    }
    if (h->ops->alloc(h->ops->ctx, b, (size_t)n * 4, s->zero, h->err))
        return h->failed = true, -1;
    int rc = walk(h, s->then_s);
    h->ops->release(h->ops->ctx, b);
    return rc;
}

static int host_loop(host *h, const ir_stmt *s)
{
    int64_t lo = eval(h, s->lo).i, hi = eval(h, s->hi).i, step = eval(h, s->step).i;
    for (int64_t i = lo; i < hi && step > 0 && !h->failed; i += step) {
        set(h, s->var, ival(i));
        walk(h, s->then_s);
    }
    return h->failed ? -1 : 0;
}

static int64_t var_int(host *h, const ir_var *v)
{
    if (!h->known[v->id])
        fail(h, "%s has no value on the host", v->name);
    return h->v[v->id].i;
}

/* A runtime call the host runs: its arguments and its buffers' layout, then the device's op. */
static int host_rtcall(host *h, const ir_stmt *s)
{
    pf_gpu_rtcall c = { .s = s };
    if (s->n > PF_GPU_RTCALL_ARGS || s->n_bufs > 3)
        return fail(h, "the runtime call %s has too many arguments", ir_rt_name(s->rt));
    for (int i = 0; i < s->n; i++)
        c.args[i] = eval(h, s->args[i]);
    for (int i = 0; i < s->n_bufs; i++)
        for (int d = 0; d < s->bufs[i]->ndims; d++) {
            c.extent[i][d] = var_int(h, s->bufs[i]->extent[d]);
            c.stride[i][d] = var_int(h, s->bufs[i]->stride[d]);
        }
    if (h->failed)
        return -1;
    return h->ops->rtcall(h->ops->ctx, &c, h->err) ? (h->failed = true, -1) : 0;
}

static int walk(host *h, const ir_stmt *s)
{
    if (!s || h->failed)
        return h->failed ? -1 : 0;
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n && !h->failed; i++)
            walk(h, s->body[i]);
        return h->failed ? -1 : 0;
    case IR_S_LET: case IR_S_DECL: case IR_S_ASSIGN:
        set(h, s->var, eval(h, s->value));
        return h->failed ? -1 : 0;
    case IR_S_IF: return walk(h, eval(h, s->cond).i ? s->then_s : s->else_s);
    case IR_S_ALLOC: return host_alloc(h, s);
    case IR_S_FOR:
        if (s->loop_kind != IR_LOOP_GPU_BLOCK && pf_gpu_has_block_loop(s->then_s))
            return host_loop(h, s);
        return launch(h, s);
    case IR_S_STORE: case IR_S_ARRAY_DECL: case IR_S_ARRAY_STORE: case IR_S_SORT:
        return launch(h, s);
    case IR_S_RTCALL:
        if (s->rt == IR_RT_ZERO_BUFFER)
            return h->ops->zero(h->ops->ctx, s->bufs[0], h->err) ? (h->failed = true, -1) : 0;
        if (h->ops->rtcall && pf_gpu_rtcall_on_host(s))
            return host_rtcall(h, s);
        return fail(h, "the runtime call %s (reconstruction, masks) does not run with CUDA yet",
                    ir_rt_name(s->rt));
    case IR_S_BARRIER: return fail(h, "a barrier outside a kernel");
    case IR_S_COMMENT: return 0;
    }
    return 0;
}

int pf_gpu_host_run(const ir_func *f, const int64_t (*extents)[IR_MAX_DIMS],
                    const pf_gpu_host_ops *ops, pf_error *err)
{
    host h = { f, pf_xcalloc((size_t)f->n_vars + 1, sizeof *h.v),
               pf_xcalloc((size_t)f->n_vars + 1, 1), ops, err, false };
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++) {
        const ir_buffer *b = f->args[i];
        int64_t stride = 1;
        for (int d = 0; d < b->ndims; d++) {
            if (b->extent_is_param[d])
                set(&h, b->extent[d], ival(extents[i][d]));
            set(&h, b->stride[d], ival(stride));
            stride *= extents[i][d];
        }
    }
    int rc = walk(&h, f->body);
    free(h.v);
    free(h.known);
    return rc;
}
