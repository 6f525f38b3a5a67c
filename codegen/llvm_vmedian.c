/* median(a, n) in a vector body, across lanes: each lane (pixel) has its own window, the
 * elements of an array of the body being vectors of lanes (llvm_vec.c). This is how Halide's
 * hand schedule runs the 9x9 median filter: one sorting network, 8 pixels per min/max.
 *
 * The builtin is sorted(a[0 .. n-1])[n / 2] with n clamped into [1, len] and the language's
 * stable insertion sort by `<` (lang/builtins.c; the runtime's pf_rt_median_* compute the same
 * value). Where every lane's n covers the whole array (n >= len: the interior of a window
 * filter, where no neighbour is skipped) and no element is NaN, element len / 2 of the sorted
 * values is unique as a number, so a network of exact min/max computes it: a comparator
 * network sorting len wires, pruned at compile time to the comparators (and the min or max
 * halves of them) that output wire len / 2 depends on (llvm_median_net.c, which the GPU's
 * device runtime emits too, on scalars). Two values equal in `<` are -0 and +0
 * only, so the result can differ from the stable sort in the sign of a zero (as the runtime's
 * rank selection already does). Otherwise (a border pixel's shorter window, a NaN) each lane
 * copies its elements out and calls the runtime, exactly the scalar code's result. */
#include "codegen/llvm_median_net.h"
#include "codegen/llvm_vec_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ---- min and max ---- */

/* x86's minps / maxps as intrinsics where the vector is one register (the JIT's target is the
 * host): the optimizer passes them through untouched, where `b < a ? b : a` as fcmp + select
 * (the IR's IR_MIN, which instruction selection turns into the same minps) costs it a few
 * times longer over a thousand of them. Without NaNs the two agree. */
static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static bool host_avx, host_sse;

static void probe_host(void)
{
    host_avx = em_host_has_feature("avx");
    host_sse = em_host_has_feature("sse");
}

typedef struct minmax {
    emit *e;
    bool is_float;
    LLVMValueRef fn[2];   /* min, max: x86 intrinsics, or NULL */
    LLVMTypeRef type[2];
} minmax;

static minmax minmax_for(emit *e, bool is_float, int W)
{
    minmax m = { e, is_float, { NULL, NULL }, { NULL, NULL } };
    pthread_once(&host_once, probe_host);
    const char *names[2] = { NULL, NULL };
    if (is_float && W == 8 && host_avx) {
        names[0] = "llvm.x86.avx.min.ps.256";
        names[1] = "llvm.x86.avx.max.ps.256";
    } else if (is_float && W == 4 && host_sse) {
        names[0] = "llvm.x86.sse.min.ps";
        names[1] = "llvm.x86.sse.max.ps";
    }
    for (int k = 0; k < 2 && names[0]; k++) {
        unsigned id = LLVMLookupIntrinsicID(names[k], strlen(names[k]));
        if (!id)
            return (minmax){ e, is_float, { NULL, NULL }, { NULL, NULL } };
        m.fn[k] = LLVMGetIntrinsicDeclaration(e->mod, id, NULL, 0);
        m.type[k] = LLVMIntrinsicGetType(e->ctx, id, NULL, 0);
    }
    return m;
}

/* `b < a ? b : a` (max: `a < b ? b : a`), exact for values without NaNs. */
static LLVMValueRef min_or_max(void *ctx, LLVMValueRef a, LLVMValueRef b, bool max)
{
    const minmax *m = ctx;
    emit *e = m->e;
    if (m->fn[max]) {  /* minps(b, a) = b < a ? b : a; maxps(b, a) = b > a ? b : a */
        LLVMValueRef args[2] = { b, a };
        return LLVMBuildCall2(e->b, m->type[max], m->fn[max], args, 2, "");
    }
    if (!m->is_float) {
        LLVMValueRef args[2] = { a, b };
        return em_intrinsic(e, max ? "llvm.smax" : "llvm.smin", LLVMTypeOf(a), args, 2);
    }
    LLVMValueRef lt = max ? LLVMBuildFCmp(e->b, LLVMRealOLT, a, b, "")
                          : LLVMBuildFCmp(e->b, LLVMRealOLT, b, a, "");
    return LLVMBuildSelect(e->b, lt, b, a, "");
}

/* ---- the network function ---- */

/* The fast path as a function of the array (its address) that stores the median vector at
 * `out` and returns true, or returns false when some element is NaN. One per module and shape:
 * the network is the bulk of the code, and the border copies of a loop (pass_bounds) would
 * otherwise each compile their own. */
static LLVMValueRef network_fn(vec *v, const ir_var *a)
{
    emit *e = v->e;
    int len = a->array_len;
    bool is_float = a->type == IR_F32;
    char name[64];
    snprintf(name, sizeof name, "pf_vmedian_%s_%dx%d", is_float ? "f32" : "i32", len, v->W);
    LLVMValueRef fn = LLVMGetNamedFunction(e->mod, name);
    if (fn)
        return fn;
    LLVMTypeRef ps[2] = { e->t_ptr, e->t_ptr };
    fn = LLVMAddFunction(e->mod, name, LLVMFunctionType(e->t_i1, ps, 2, 0));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    LLVMBuilderRef outer = e->b;
    e->b = LLVMCreateBuilderInContext(e->ctx);
    LLVMPositionBuilderAtEnd(e->b, LLVMAppendBasicBlockInContext(e->ctx, fn, "entry"));
    minmax m = minmax_for(e, is_float, v->W);
    LLVMValueRef nan = NULL;
    LLVMValueRef r = median_net_emit(e, vec_type(v, a->type), LLVMGetParam(fn, 0), len,
                                     min_or_max, &m, is_float ? &nan : NULL);
    LLVMBuildStore(e->b, r, LLVMGetParam(fn, 1));
    if (is_float) {
        LLVMValueRef any = em_intrinsic(e, "llvm.vector.reduce.or", LLVMTypeOf(nan), &nan, 1);
        LLVMBuildRet(e->b, LLVMBuildNot(e->b, any, ""));
    } else {
        LLVMBuildRet(e->b, LLVMConstInt(e->t_i1, 1, 0));
    }
    LLVMDisposeBuilder(e->b);
    e->b = outer;
    return fn;
}

/* ---- the call ---- */

/* Every lane's median by the runtime (pf_rt_median_lanes_*), stored at out. */
static void lanes_median(vec *v, const ir_var *a, LLVMValueRef nv, LLVMValueRef out)
{
    emit *e = v->e;
    LLVMValueRef n = entry_alloca(e, LLVMTypeOf(nv), "median_n");
    LLVMBuildStore(e->b, nv, n);
    /* elements of the array are vectors of W lanes, each padded to its allocation size */
    LLVMValueRef bytes = LLVMSizeOf(vec_type(v, a->type));
    LLVMValueRef stride = LLVMBuildTrunc(e->b, LLVMBuildUDiv(e->b, bytes, em_i64(e, 4), ""),
                                         e->t_i32, "");
    LLVMValueRef args[6] = { v->vslot[a->id], em_i32(e, a->array_len), stride, em_i32(e, v->W),
                             n, out };
    LLVMTypeRef ps[6] = { e->t_ptr, e->t_i32, e->t_i32, e->t_i32, e->t_ptr, e->t_ptr };
    em_call_known(e, a->type == IR_F32 ? "pf_rt_median_lanes_f32" : "pf_rt_median_lanes_i32",
                  e->t_void, ps, 6, args, EM_MEMORY_ARGS);
}

/* An array from outside the body (scalar storage): one call when n is uniform, else one per
 * lane. */
static vval outside_median(vec *v, const ir_expr *x, vval n)
{
    emit *e = v->e;
    const ir_var *a = x->args[0]->var;
    if (n.kind == V_UNIFORM)
        return (vval){ V_UNIFORM, em_runtime_median(e, a, e->var[a->id], n.v), 0 };
    LLVMValueRef nv = vec_as_vector(v, n);
    LLVMValueRef r = LLVMGetPoison(vec_type(v, a->type));
    for (int l = 0; l < v->W; l++) {
        LLVMValueRef nl = LLVMBuildExtractElement(e->b, nv, em_i32(e, l), "");
        r = LLVMBuildInsertElement(e->b, r, em_runtime_median(e, a, e->var[a->id], nl),
                                   em_i32(e, l), "");
    }
    return (vval){ V_VECTOR, r, 0 };
}

/* Whether every lane's n is at least len (where the mask is off, any n will do). */
static LLVMValueRef all_full(vec *v, vval n, int len)
{
    emit *e = v->e;
    if (n.kind == V_UNIFORM)
        return LLVMBuildICmp(e->b, LLVMIntSGE, n.v, em_i32(e, len), "");
    LLVMValueRef nv = vec_as_vector(v, n);
    LLVMValueRef ok = LLVMBuildICmp(e->b, LLVMIntSGE, nv,
                                    vec_as_vector(v, (vval){ V_UNIFORM, em_i32(e, len), 0 }), "");
    if (v->mask)
        ok = LLVMBuildOr(e->b, ok, LLVMBuildNot(e->b, v->mask, ""), "");
    return em_intrinsic(e, "llvm.vector.reduce.and", LLVMTypeOf(ok), &ok, 1);
}

/* ---- windows that need no zeroing ---- */

/* An array filled in order, `window[n] = ...; n += 1;` from `int n = 0` declared after it, and
 * read only by median(window, n): whenever the median reads, lane l has written elements
 * 0 .. n_l - 1 (an index past the end stores to the last element, after the others were
 * written), and the median reads max(n_l, 1) of them (n is clamped into [1, len]). Only element
 * 0 can be read unwritten (n_l = 0), so only it needs the zero of the array's declaration: the
 * 9x9 median's 2.6 KB memset per 8 pixels was 7% of its time. */
typedef struct fill {
    const ir_var *a;
    const ir_var *count;  /* the counter of the first store */
    bool ok;
} fill;

/* n + 1 */
static bool is_increment(const ir_expr *e, const ir_var *n)
{
    int64_t one;
    return e->kind == IR_BIN && e->op == IR_ADD && e->a->kind == IR_VARREF && e->a->var == n &&
           ir_is_const(e->b, &one) && one == 1;
}

/* Every mention of the array in e is median(a, count). */
static void fill_expr(fill *f, const ir_expr *e)
{
    if (!e || !f->ok)
        return;
    if (e->kind == IR_CALL && e->fn == IR_FN_MEDIAN && e->args[0]->var == f->a) {
        f->ok = e->args[1]->kind == IR_VARREF && e->args[1]->var == f->count;
        return;
    }
    if ((e->kind == IR_VARREF || e->kind == IR_ALOAD) && e->var == f->a)
        f->ok = false;
    fill_expr(f, e->a);
    fill_expr(f, e->b);
    fill_expr(f, e->c);
    for (int i = 0; i < e->n_args; i++)
        fill_expr(f, e->args[i]);
}

/* Statement j of block b, a store to the array: `let i = n; a[i] = v; n = n + 1;`. */
static bool is_fill_store(fill *f, const ir_stmt *b, int j)
{
    const ir_stmt *let = j > 0 ? b->body[j - 1] : NULL, *st = b->body[j];
    const ir_stmt *inc = j + 1 < b->n ? b->body[j + 1] : NULL;
    if (!let || !inc || let->kind != IR_S_LET || let->value->kind != IR_VARREF ||
        st->index->kind != IR_VARREF || st->index->var != let->var || inc->kind != IR_S_ASSIGN)
        return false;
    const ir_var *n = let->value->var;
    if (n->kind != IR_VAR_MUT || inc->var != n || !is_increment(inc->value, n))
        return false;
    if (!f->count)
        f->count = n;
    return n == f->count;
}

static void fill_stmt(fill *f, const ir_stmt *s)
{
    if (!s || !f->ok)
        return;
    for (int j = 0; s->kind == IR_S_BLOCK && j < s->n && f->ok; j++) {
        const ir_stmt *t = s->body[j];
        if (t->kind == IR_S_ARRAY_STORE && t->var == f->a && !is_fill_store(f, s, j))
            f->ok = false;
        /* the counter changes only right after a store */
        if (t->kind == IR_S_ASSIGN && f->count && t->var == f->count &&
            !(j > 0 && s->body[j - 1]->kind == IR_S_ARRAY_STORE &&
              s->body[j - 1]->var == f->a && is_fill_store(f, s, j - 1)))
            f->ok = false;
        if (t->kind == IR_S_SORT && t->var == f->a)
            f->ok = false;
        fill_stmt(f, t);
    }
    if (s->kind == IR_S_BLOCK)
        return;
    fill_expr(f, s->value);
    fill_expr(f, s->cond);
    fill_expr(f, s->lo);
    fill_expr(f, s->hi);
    for (int i = 0; s->kind == IR_S_STORE && i < s->n; i++)
        fill_expr(f, s->idx[i]);
    fill_stmt(f, s->then_s);
    fill_stmt(f, s->else_s);
}

/* Whether `int count = 0` follows the array's declaration in its block. */
static bool counter_declared_after(const ir_stmt *s, const ir_var *a, const ir_var *count)
{
    if (!s)
        return false;
    for (int j = 0; s->kind == IR_S_BLOCK && j < s->n; j++) {
        const ir_stmt *t = s->body[j];
        if (t->kind == IR_S_ARRAY_DECL && t->var == a) {
            int64_t zero;
            for (int k = j + 1; k < s->n; k++)
                if (s->body[k]->kind == IR_S_DECL && s->body[k]->var == count)
                    return ir_is_const(s->body[k]->value, &zero) && zero == 0;
            return false;
        }
        if (counter_declared_after(t, a, count))
            return true;
    }
    return s->kind != IR_S_BLOCK &&
           (counter_declared_after(s->then_s, a, count) ||
            counter_declared_after(s->else_s, a, count));
}

bool vec_fills_in_order(const ir_stmt *body, const ir_var *a)
{
    fill f = { a, NULL, true };
    fill_stmt(&f, body);
    if (f.ok && f.count)  /* the counter is known now: check its increments everywhere */
        fill_stmt(&f, body);
    return f.ok && f.count && counter_declared_after(body, a, f.count);
}

vval vec_median(vec *v, const ir_expr *x)
{
    emit *e = v->e;
    const ir_var *a = x->args[0]->var;
    vval n = vec_x(v, x->args[1]);
    if (!v->inside[a->id])
        return outside_median(v, x, n);
    int len = a->array_len;
    LLVMTypeRef vt = vec_type(v, a->type);
    LLVMValueRef nv = vec_as_vector(v, n), out = entry_alloca(e, vt, "median");
    if (len > MEDIAN_NET_MAX_LEN) {
        lanes_median(v, a, nv, out);
        return (vval){ V_VECTOR, LLVMBuildLoad2(e->b, vt, out, ""), 0 };
    }
    LLVMBasicBlockRef call = new_block(e, "vmedian_net"), slow = new_block(e, "vmedian_lanes"),
                      done = new_block(e, "vmedian_done");
    LLVMBuildCondBr(e->b, all_full(v, n, len), call, slow);
    LLVMPositionBuilderAtEnd(e->b, call);
    LLVMValueRef fn = network_fn(v, a);
    LLVMValueRef args[2] = { v->vslot[a->id], out };
    LLVMTypeRef ps[2] = { e->t_ptr, e->t_ptr };
    LLVMValueRef ok = LLVMBuildCall2(e->b, LLVMFunctionType(e->t_i1, ps, 2, 0), fn, args, 2, "");
    LLVMBuildCondBr(e->b, ok, done, slow);
    LLVMPositionBuilderAtEnd(e->b, slow);
    lanes_median(v, a, nv, out);
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
    return (vval){ V_VECTOR, LLVMBuildLoad2(e->b, vt, out, "median"), 0 };
}
