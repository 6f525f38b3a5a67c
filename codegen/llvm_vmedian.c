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
