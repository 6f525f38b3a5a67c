/* The IR verifier: run after lowering and after every pass in tests and debug dumps, so a pass
 * that breaks an invariant is caught where it happens (QBE's ssacheck, Halide's asserts). */
#include "codegen/ir.h"

#include "base/arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct verifier {
    const ir_func *f;
    char *in_scope;      /* by var id */
    char *defined;       /* lets defined somewhere already (by var id) */
    char *buf_live;      /* by buffer id */
    int parallel_depth;  /* inside a non-serial loop */
    int cpu_parallel_depth;  /* inside a parallel (not banded) or vectorized CPU loop */
    unsigned gpu_blocks;  /* GPU block dimensions of the enclosing block loops (bit per dim) */
    unsigned gpu_threads; /* GPU thread dimensions of the enclosing thread loops */
    int gpu_block_threads;  /* product of the enclosing thread loops' widths */
    char *msg;
    size_t msg_len;
    int failed;
} verifier;

static int fail(verifier *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(verifier *v, const char *fmt, ...)
{
    if (!v->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(v->msg, v->msg_len, fmt, ap);
        va_end(ap);
    }
    v->failed = 1;
    return -1;
}

static int check_expr(verifier *v, const ir_expr *e);

static int check_args(verifier *v, ir_expr **args, int n, ir_type want)
{
    for (int i = 0; i < n; i++) {
        if (check_expr(v, args[i]))
            return -1;
        if (want != IR_BOOL && args[i]->type != want)
            return fail(v, "index %d has type %s, expected %s", i, ir_type_name(args[i]->type),
                        ir_type_name(want));
    }
    return 0;
}

static int check_var_use(verifier *v, const ir_var *var)
{
    if (var->id < 0 || var->id >= v->f->n_vars)
        return fail(v, "variable %s has an id outside the function", var->name);
    if (!v->in_scope[var->id])
        return fail(v, "variable %s used out of scope", var->name);
    return 0;
}

static int check_bin(verifier *v, const ir_expr *e)
{
    if (check_expr(v, e->a) || check_expr(v, e->b))
        return -1;
    if (e->a->type != e->b->type)
        return fail(v, "operands of %s have types %s and %s", ir_op_name(e->op),
                    ir_type_name(e->a->type), ir_type_name(e->b->type));
    if ((e->op == IR_AND || e->op == IR_OR) && e->a->type != IR_BOOL)
        return fail(v, "%s on non-bool operands", ir_op_name(e->op));
    if (e->op == IR_MOD && ir_type_is_float(e->a->type))
        return fail(v, "%% on floats");
    return 0;
}

static int check_expr(verifier *v, const ir_expr *e)
{
    if (!e)
        return fail(v, "missing expression");
    switch (e->kind) {
    case IR_CONST:
        return 0;
    case IR_VARREF:
        return check_var_use(v, e->var);
    case IR_BIN:
        return check_bin(v, e);
    case IR_UN:
        if (check_expr(v, e->a))
            return -1;
        if ((e->op == IR_NOT) != (e->a->type == IR_BOOL))
            return fail(v, "unary %s on %s", ir_op_name(e->op), ir_type_name(e->a->type));
        return 0;
    case IR_SELECT:
        if (check_expr(v, e->a) || check_expr(v, e->b) || check_expr(v, e->c))
            return -1;
        if (e->a->type != IR_BOOL || e->b->type != e->c->type)
            return fail(v, "select with bad operand types");
        return 0;
    case IR_CAST:
        return check_expr(v, e->a);
    case IR_LOAD:
        if (!v->buf_live[e->buf->id])
            return fail(v, "load from %s outside its allocation", e->buf->name);
        if (e->n_args != e->buf->ndims)
            return fail(v, "load from %s with %d indices", e->buf->name, e->n_args);
        return check_args(v, e->args, e->n_args, IR_I32);
    case IR_INTERP:
        if (!v->buf_live[e->buf->id])
            return fail(v, "on-demand read of %s outside its allocation", e->buf->name);
        if (e->n_args != e->interp->image->ndims)
            return fail(v, "on-demand read of %s with %d indices", e->buf->name, e->n_args);
        return check_args(v, e->args, e->n_args, IR_I32);
    case IR_ALOAD:
        if (check_var_use(v, e->var) || check_expr(v, e->a))
            return -1;
        return e->a->type == IR_I32 ? 0 : fail(v, "array index of %s is not i32", e->var->name);
    case IR_CALL:
        return check_args(v, e->args, e->n_args, IR_BOOL);
    }
    return fail(v, "unknown expression kind %d", (int)e->kind);
}

static int check_stmt(verifier *v, const ir_stmt *s);

static int define(verifier *v, const ir_var *var, ir_var_kind kind)
{
    if (var->kind != kind)
        return fail(v, "variable %s defined by the wrong statement", var->name);
    if (v->in_scope[var->id])
        return fail(v, "variable %s redefined while in scope", var->name);
    if (kind == IR_VAR_LET && v->defined[var->id])
        return fail(v, "let %s defined twice", var->name);
    v->defined[var->id] = 1;
    v->in_scope[var->id] = 1;
    return 0;
}

static int check_block(verifier *v, const ir_stmt *s)
{
    int rc = 0;
    for (int i = 0; i < s->n && !rc; i++)
        rc = check_stmt(v, s->body[i]);
    /* Variables declared directly in this block go out of scope at its end. */
    for (int i = 0; i < s->n; i++) {
        const ir_stmt *b = s->body[i];
        if (b->kind == IR_S_LET || b->kind == IR_S_DECL || b->kind == IR_S_ARRAY_DECL)
            v->in_scope[b->var->id] = 0;
    }
    return rc;
}

/* GPU loops: blocks outside threads, each dimension once, at most 1024 threads a block, no
 * CPU-parallel loop inside either (docs/gpu.md). *bit: the dimension bit the loop takes. */
static int check_gpu_for(verifier *v, const ir_stmt *s, unsigned *block_bit,
                         unsigned *thread_bit)
{
    bool gpu = s->loop_kind == IR_LOOP_GPU_BLOCK || s->loop_kind == IR_LOOP_GPU_THREAD;
    if (!gpu) {
        if ((v->gpu_blocks || v->gpu_threads) && s->loop_kind != IR_LOOP_SERIAL &&
            s->loop_kind != IR_LOOP_UNROLLED)
            return fail(v, "loop %s: a parallel or vectorized loop inside a GPU loop",
                        s->var->name);
        return 0;
    }
    if (s->gpu_dim < 0 || s->gpu_dim > 2)
        return fail(v, "GPU loop %s has dimension %d", s->var->name, s->gpu_dim);
    unsigned bit = 1u << s->gpu_dim;
    if (s->loop_kind == IR_LOOP_GPU_BLOCK) {
        if (v->gpu_threads || (v->gpu_blocks & bit))
            return fail(v, "GPU block loop %s inside a thread loop or a block loop of the same "
                        "dimension", s->var->name);
        *block_bit = bit;
        return 0;
    }
    if (!v->gpu_blocks || (v->gpu_threads & bit))
        return fail(v, "GPU thread loop %s outside a block loop or inside a thread loop of the "
                    "same dimension", s->var->name);
    if (s->width > 1024 || v->gpu_block_threads * s->width > 1024)
        return fail(v, "GPU thread loop %s: more than 1024 threads a block", s->var->name);
    *thread_bit = bit;
    return 0;
}

static int check_for(verifier *v, const ir_stmt *s)
{
    if (check_expr(v, s->lo) || check_expr(v, s->hi) || check_expr(v, s->step))
        return -1;
    ir_type t = s->hi->type;
    if ((t != IR_I32 && t != IR_I64) || s->lo->type != t || s->step->type != t)
        return fail(v, "loop %s bounds are not all i32 or all i64", s->var->name);
    if (t == IR_I64 && s->loop_kind != IR_LOOP_SERIAL)
        return fail(v, "loop %s has 64-bit bounds but is not serial", s->var->name);
    if (s->var->type != IR_I32)
        return fail(v, "loop variable %s is not i32", s->var->name);
    int64_t step;
    if (ir_is_const(s->step, &step) && step < 1)
        return fail(v, "loop %s has step %lld", s->var->name, (long long)step);
    if (s->loop_kind != IR_LOOP_SERIAL && s->width < 1)
        return fail(v, "loop %s has width %d", s->var->name, s->width);
    unsigned block_bit = 0, thread_bit = 0;
    if (check_gpu_for(v, s, &block_bit, &thread_bit) || define(v, s->var, IR_VAR_LOOP))
        return -1;
    /* a band loop's iterations write disjoint cells: its scatters stay in order */
    int par = (s->loop_kind == IR_LOOP_PARALLEL && !s->banded) ||
              s->loop_kind == IR_LOOP_VECTORIZED || block_bit || thread_bit;
    int threads = thread_bit ? s->width : 1;
    int cpu_par = par && !block_bit && !thread_bit;
    v->parallel_depth += par;
    v->cpu_parallel_depth += cpu_par;
    v->gpu_blocks |= block_bit;
    v->gpu_threads |= thread_bit;
    v->gpu_block_threads *= threads;
    int rc = check_stmt(v, s->then_s);
    v->gpu_block_threads /= threads;
    v->gpu_blocks &= ~block_bit;
    v->gpu_threads &= ~thread_bit;
    v->parallel_depth -= par;
    v->cpu_parallel_depth -= cpu_par;
    v->in_scope[s->var->id] = 0;
    return rc;
}

static int check_store(verifier *v, const ir_stmt *s)
{
    if (!v->buf_live[s->buf->id])
        return fail(v, "store to %s outside its allocation", s->buf->name);
    if (s->buf->kind == IR_BUF_INPUT)
        return fail(v, "store to input %s", s->buf->name);
    if (s->n != s->buf->ndims)
        return fail(v, "store to %s with %d indices", s->buf->name, s->n);
    bool negate;
    if (s->atomic && !ir_store_addend(s, &negate))
        return fail(v, "atomic store to %s is not %s[i] = %s[i] + v", s->buf->name,
                    s->buf->name, s->buf->name);
    /* an atomic add may run concurrently on the GPU; on the CPU it is a plain store */
    if (s->scatter && (v->cpu_parallel_depth || (v->parallel_depth && !s->atomic)))
        return fail(v, "scatter store to %s inside a parallel or vectorized loop", s->buf->name);
    if (check_args(v, s->idx, s->n, IR_I32) || check_expr(v, s->value))
        return -1;
    return s->value->type == IR_F32 ? 0 : fail(v, "store of non-f32 to %s", s->buf->name);
}

static int check_alloc(verifier *v, const ir_stmt *s)
{
    const ir_buffer *b = s->buf;
    if (b->kind != IR_BUF_INTERNAL || v->buf_live[b->id])
        return fail(v, "bad allocation of %s", b->name);
    for (int d = 0; d < b->ndims; d++)
        if (check_var_use(v, b->extent[d]))
            return -1;
    if (b->window != (s->window != NULL))
        return fail(v, "allocation of %s: window expressions %s", b->name,
                    b->window ? "missing" : "on a whole buffer");
    if (b->window && check_args(v, s->window, 2 * b->ndims, IR_I32))
        return -1;
    for (int d = 0; d < b->ndims; d++) {
        int64_t o, n;
        int F = b->fold[d];
        if (F && (!b->window || d == 0 || F < 0 || (F & (F - 1)) != 0 ||
                  !ir_is_const(s->window[2 * d], &o) || o != 0 ||
                  !ir_is_const(s->window[2 * d + 1], &n) || n != F))
            return fail(v, "allocation of %s: fold %d along dimension %d needs a window of origin "
                        "0 and size %d, a power of two, along a dimension other than 0", b->name,
                        F, d, F);
    }
    for (int d = 0; d < b->ndims; d++) {
        v->in_scope[b->stride[d]->id] = 1;
        if (b->window)
            v->in_scope[b->origin[d]->id] = v->in_scope[b->size[d]->id] = 1;
    }
    v->buf_live[b->id] = 1;
    int rc = check_stmt(v, s->then_s);
    v->buf_live[b->id] = 0;
    for (int d = 0; d < b->ndims; d++) {
        v->in_scope[b->stride[d]->id] = 0;
        if (b->window)
            v->in_scope[b->origin[d]->id] = v->in_scope[b->size[d]->id] = 0;
    }
    return rc;
}

static int check_assign_like(verifier *v, const ir_stmt *s)
{
    if (check_expr(v, s->value))
        return -1;
    if (s->value->type != s->var->type)
        return fail(v, "%s of %s: value has type %s", s->kind == IR_S_LET ? "let" : "assignment",
                    s->var->name, ir_type_name(s->value->type));
    switch (s->kind) {
    case IR_S_LET:
        return define(v, s->var, IR_VAR_LET);
    case IR_S_DECL:
        return define(v, s->var, IR_VAR_MUT);
    default:
        if (s->var->kind != IR_VAR_MUT)
            return fail(v, "assignment to immutable %s", s->var->name);
        return check_var_use(v, s->var);
    }
}

static int check_stmt(verifier *v, const ir_stmt *s)
{
    if (!s)
        return fail(v, "missing statement");
    switch (s->kind) {
    case IR_S_BLOCK:
        return check_block(v, s);
    case IR_S_LET:
    case IR_S_DECL:
    case IR_S_ASSIGN:
        return check_assign_like(v, s);
    case IR_S_ARRAY_DECL:
        return s->var->array_len < 1 ? fail(v, "array %s has no elements", s->var->name)
                                     : define(v, s->var, IR_VAR_ARRAY);
    case IR_S_ARRAY_STORE:
        if (check_var_use(v, s->var) || check_expr(v, s->index) || check_expr(v, s->value))
            return -1;
        return s->value->type == s->var->type ? 0 : fail(v, "array store type mismatch");
    case IR_S_SORT:
        return check_var_use(v, s->var) || check_expr(v, s->value) ? -1 : 0;
    case IR_S_STORE:
        return check_store(v, s);
    case IR_S_FOR:
        return check_for(v, s);
    case IR_S_IF:
        if (check_expr(v, s->cond) || check_stmt(v, s->then_s))
            return -1;
        return s->else_s ? check_stmt(v, s->else_s) : 0;
    case IR_S_ALLOC:
        return check_alloc(v, s);
    case IR_S_RTCALL:
        if (v->gpu_blocks)
            return fail(v, "runtime call %s inside a GPU loop", ir_rt_name(s->rt));
        for (int i = 0; i < s->n_bufs; i++)
            if (!v->buf_live[s->bufs[i]->id])
                return fail(v, "runtime call uses %s outside its allocation", s->bufs[i]->name);
            else if (s->bufs[i]->window)
                return fail(v, "runtime call takes the window buffer %s", s->bufs[i]->name);
        return check_args(v, s->args, s->n, IR_BOOL);
    case IR_S_COMMENT:
        return 0;
    case IR_S_BARRIER:
        return v->gpu_blocks && !v->gpu_threads
                   ? 0 : fail(v, "barrier outside a GPU block loop's body or inside a thread loop");
    }
    return fail(v, "unknown statement kind %d", (int)s->kind);
}

int ir_verify(const ir_func *f, char *msg, size_t msg_len)
{
    verifier v = { 0 };
    v.f = f;
    v.gpu_block_threads = 1;
    v.in_scope = pf_xcalloc((size_t)f->n_vars + 1, 1);
    v.defined = pf_xcalloc((size_t)f->n_vars + 1, 1);
    v.buf_live = pf_xcalloc((size_t)f->n_buffers + 1, 1);
    v.msg = msg;
    v.msg_len = msg_len;
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++) {
        const ir_buffer *b = f->args[i];
        v.buf_live[b->id] = 1;
        for (int d = 0; d < b->ndims; d++) {
            if (b->extent_is_param[d])
                v.in_scope[b->extent[d]->id] = v.defined[b->extent[d]->id] = 1;
            v.in_scope[b->stride[d]->id] = v.defined[b->stride[d]->id] = 1;
        }
    }
    for (int i = 0; i < f->n_tables; i++)
        v.in_scope[f->tables[i]->id] = v.defined[f->tables[i]->id] = 1;
    int rc = check_stmt(&v, f->body);
    free(v.in_scope);
    free(v.defined);
    free(v.buf_live);
    return rc;
}
