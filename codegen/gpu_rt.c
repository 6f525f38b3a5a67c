/* The device side of the generated code's runtime (gpu_internal.h): the functions the shared
 * emitter calls by name (codegen/runtime.c on the CPU) get bodies in the GPU module, built
 * here with the same arithmetic as their C versions, so a kernel computes what the CPU does:
 * the noise and perforation hashes (base/noise.h), the insertion sort and the median (one
 * function per array length: the selection network of the CPU's vector bodies in registers for
 * a whole window without NaN, else a sorted copy in local memory). Math intrinsics become
 * calls of CUDA's libdevice (__nv_expf, ...), which is linked in. */
#include "codegen/gpu_internal.h"
#include "codegen/llvm_median_net.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A definition for declared function fn: the builder b at its entry. */
static LLVMBuilderRef define(emit *e, LLVMValueRef fn)
{
    LLVMBuilderRef b = LLVMCreateBuilderInContext(e->ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(e->ctx, fn, "entry"));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    return b;
}

static LLVMValueRef u32(emit *e, uint32_t v)
{
    return LLVMConstInt(e->t_i32, v, 0);
}

/* The i32 n clamped into [lo, hi]. */
static LLVMValueRef clamp(LLVMBuilderRef b, emit *e, LLVMValueRef n, int lo, int hi)
{
    n = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, n, u32(e, (uint32_t)lo), ""),
                        u32(e, (uint32_t)lo), n, "");
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, n, u32(e, (uint32_t)hi), ""),
                           u32(e, (uint32_t)hi), n, "");
}

static LLVMValueRef fmix(LLVMBuilderRef b, emit *e, LLVMValueRef h)
{
    h = LLVMBuildXor(b, h, LLVMBuildLShr(b, h, u32(e, 16), ""), "");
    h = LLVMBuildMul(b, h, u32(e, 0x85EBCA6Bu), "");
    h = LLVMBuildXor(b, h, LLVMBuildLShr(b, h, u32(e, 13), ""), "");
    h = LLVMBuildMul(b, h, u32(e, 0xC2B2AE35u), "");
    return LLVMBuildXor(b, h, LLVMBuildLShr(b, h, u32(e, 16), ""), "");
}

/* pf_noise_hash(n, args) of base/noise.h, n clamped into [0, 4] as pf_rt_noise does. */
static LLVMValueRef noise_hash(LLVMBuilderRef b, emit *e, LLVMValueRef n, LLVMValueRef *args)
{
    n = clamp(b, e, n, 0, 4);
    LLVMValueRef h = LLVMBuildXor(b, u32(e, 0x6A09E667u), n, "");
    for (int i = 0; i < 4; i++) {
        LLVMValueRef x = LLVMBuildXor(b, h, LLVMBuildMul(b, args[i], u32(e, 0x9E3779B1u), ""), "");
        LLVMValueRef next = fmix(b, e, LLVMBuildAdd(b, x, u32(e, (uint32_t)i), ""));
        h = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, u32(e, (uint32_t)i), n, ""), next, h,
                            "");
    }
    LLVMValueRef f = LLVMBuildUIToFP(b, LLVMBuildLShr(b, h, u32(e, 8), ""), e->t_f32, "");
    return LLVMBuildFMul(b, f, LLVMConstReal(e->t_f32, 1.0 / 16777216.0), "");
}

static void define_noise(emit *e, LLVMValueRef fn)
{
    LLVMBuilderRef b = define(e, fn);
    LLVMValueRef args[4];
    for (int i = 0; i < 4; i++)
        args[i] = LLVMGetParam(fn, (unsigned)i + 1);
    LLVMBuildRet(b, noise_hash(b, e, LLVMGetParam(fn, 0), args));
    LLVMDisposeBuilder(b);
}

static void define_perf_hash(emit *e, LLVMValueRef fn)
{
    LLVMBuilderRef b = define(e, fn);
    LLVMValueRef args[4] = { LLVMBuildAdd(b, LLVMGetParam(fn, 0), u32(e, 0x5bd1e995u), ""),
                             LLVMGetParam(fn, 1), LLVMGetParam(fn, 2), LLVMGetParam(fn, 3) };
    LLVMBuildRet(b, noise_hash(b, e, u32(e, 4), args));
    LLVMDisposeBuilder(b);
}

/* pf_rt_sort_*: the stable insertion sort (NaNs keep their order, as on the CPU). */
static void define_sort(emit *e, LLVMValueRef fn, LLVMTypeRef t)
{
    LLVMBuilderRef b = define(e, fn);
    LLVMValueRef v = LLVMGetParam(fn, 0), n = LLVMGetParam(fn, 1);
    LLVMValueRef ia = LLVMBuildAlloca(b, e->t_i32, "i"), ja = LLVMBuildAlloca(b, e->t_i32, "j");
    LLVMValueRef xa = LLVMBuildAlloca(b, t, "x");
    LLVMBuildStore(b, u32(e, 1), ia);
    LLVMBasicBlockRef outer = LLVMAppendBasicBlockInContext(e->ctx, fn, "outer"),
                      take = LLVMAppendBasicBlockInContext(e->ctx, fn, "take"),
                      inner = LLVMAppendBasicBlockInContext(e->ctx, fn, "inner"),
                      cmp = LLVMAppendBasicBlockInContext(e->ctx, fn, "cmp"),
                      shift = LLVMAppendBasicBlockInContext(e->ctx, fn, "shift"),
                      place = LLVMAppendBasicBlockInContext(e->ctx, fn, "place"),
                      done = LLVMAppendBasicBlockInContext(e->ctx, fn, "done");
    LLVMBuildBr(b, outer);
    LLVMPositionBuilderAtEnd(b, outer);
    LLVMValueRef i = LLVMBuildLoad2(b, e->t_i32, ia, "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, n, ""), take, done);
    LLVMPositionBuilderAtEnd(b, take);
    LLVMBuildStore(b, LLVMBuildLoad2(b, t, LLVMBuildGEP2(b, t, v, &i, 1, ""), ""), xa);
    LLVMBuildStore(b, LLVMBuildSub(b, i, u32(e, 1), ""), ja);
    LLVMBuildBr(b, inner);
    LLVMPositionBuilderAtEnd(b, inner);
    LLVMValueRef j = LLVMBuildLoad2(b, e->t_i32, ja, "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGE, j, u32(e, 0), ""), cmp, place);
    LLVMPositionBuilderAtEnd(b, cmp);
    LLVMValueRef vj = LLVMBuildLoad2(b, t, LLVMBuildGEP2(b, t, v, &j, 1, ""), "");
    LLVMValueRef x = LLVMBuildLoad2(b, t, xa, "");
    LLVMValueRef less = t == e->t_f32 ? LLVMBuildFCmp(b, LLVMRealOLT, x, vj, "")
                                      : LLVMBuildICmp(b, LLVMIntSLT, x, vj, "");
    LLVMBuildCondBr(b, less, shift, place);
    LLVMPositionBuilderAtEnd(b, shift);
    LLVMValueRef j1 = LLVMBuildAdd(b, j, u32(e, 1), "");
    LLVMBuildStore(b, vj, LLVMBuildGEP2(b, t, v, &j1, 1, ""));
    LLVMBuildStore(b, LLVMBuildSub(b, j, u32(e, 1), ""), ja);
    LLVMBuildBr(b, inner);
    LLVMPositionBuilderAtEnd(b, place);
    LLVMValueRef jp = LLVMBuildAdd(b, LLVMBuildLoad2(b, e->t_i32, ja, ""), u32(e, 1), "");
    LLVMBuildStore(b, LLVMBuildLoad2(b, t, xa, ""), LLVMBuildGEP2(b, t, v, &jp, 1, ""));
    LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, e->t_i32, ia, ""), u32(e, 1), ""), ia);
    LLVMBuildBr(b, outer);
    LLVMPositionBuilderAtEnd(b, done);
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
}

static LLVMValueRef sort_fn(emit *e, LLVMTypeRef t)
{
    const char *name = t == e->t_f32 ? "pf_rt_sort_f32" : "pf_rt_sort_i32";
    LLVMValueRef fn = LLVMGetNamedFunction(e->mod, name);
    if (!fn) {
        LLVMTypeRef ps[2] = { e->t_ptr, e->t_i32 };
        fn = LLVMAddFunction(e->mod, name, LLVMFunctionType(e->t_void, ps, 2, 0));
    }
    return fn;
}

/* The network's min and max: llvm.minnum / maxnum (PTX min.f32 / max.f32, one instruction
 * each, equal to `b < a ? b : a` where neither is NaN, the sign of a zero aside), smin / smax
 * for ints. */
static LLVMValueRef device_minmax(void *ctx, LLVMValueRef a, LLVMValueRef b, bool max)
{
    emit *e = ctx;
    LLVMValueRef args[2] = { a, b };
    const char *name = LLVMTypeOf(a) == e->t_f32 ? (max ? "llvm.maxnum" : "llvm.minnum")
                                                 : (max ? "llvm.smax" : "llvm.smin");
    return em_intrinsic(e, name, LLVMTypeOf(a), args, 2);
}

/* Where n >= len (a whole window) the median by the selection network in registers
 * (llvm_median_net.c, as the CPU's vector bodies do), unless an element is NaN; every other
 * case goes on at `sort`. */
static void median_network(emit *e, LLVMBuilderRef b, LLVMValueRef fn, LLVMTypeRef t, int len,
                           LLVMBasicBlockRef sort)
{
    LLVMValueRef v = LLVMGetParam(fn, 0), n = LLVMGetParam(fn, 1);
    LLVMBasicBlockRef net = LLVMAppendBasicBlockInContext(e->ctx, fn, "network");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGE, n, u32(e, (uint32_t)len), ""), net, sort);
    LLVMPositionBuilderAtEnd(b, net);
    LLVMBuilderRef outer = e->b;
    e->b = b;
    LLVMValueRef nan = NULL;
    LLVMValueRef r = median_net_emit(e, t, v, len, device_minmax, e,
                                     t == e->t_f32 ? &nan : NULL);
    e->b = outer;
    if (nan) {
        LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(e->ctx, fn, "network_done");
        LLVMBuildCondBr(b, nan, sort, ok);
        LLVMPositionBuilderAtEnd(b, ok);
    }
    LLVMBuildRet(b, r);
}

/* pf_gpu_median_T_LEN(v, n): element n / 2 of the first n elements sorted, n clamped into
 * [1, LEN] (what the CPU's selection returns, NaNs included): by the network where it applies,
 * else of a sorted copy in local memory. */
static void define_median(emit *e, LLVMValueRef fn, LLVMTypeRef t, int len)
{
    LLVMBuilderRef b = define(e, fn);
    LLVMValueRef v = LLVMGetParam(fn, 0), n = LLVMGetParam(fn, 1);
    LLVMValueRef tmp = LLVMBuildAlloca(b, LLVMArrayType(t, (unsigned)len), "copy");
    LLVMValueRef ia = LLVMBuildAlloca(b, e->t_i32, "i");
    LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(e->ctx, fn, "copy_start"),
                      head = LLVMAppendBasicBlockInContext(e->ctx, fn, "copy"),
                      body = LLVMAppendBasicBlockInContext(e->ctx, fn, "copy_body"),
                      done = LLVMAppendBasicBlockInContext(e->ctx, fn, "sorted");
    if (len <= MEDIAN_NET_MAX_LEN)
        median_network(e, b, fn, t, len, copy);
    else
        LLVMBuildBr(b, copy);
    LLVMPositionBuilderAtEnd(b, copy);
    /* n clamped into [1, len] as pf_rt_median_* are called (em_runtime_median clamps already) */
    n = clamp(b, e, n, 1, len);
    LLVMBuildStore(b, u32(e, 0), ia);
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, head);
    LLVMValueRef i = LLVMBuildLoad2(b, e->t_i32, ia, "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, n, ""), body, done);
    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef x = LLVMBuildLoad2(b, t, LLVMBuildGEP2(b, t, v, &i, 1, ""), "");
    LLVMBuildStore(b, x, LLVMBuildGEP2(b, t, tmp, &i, 1, ""));
    LLVMBuildStore(b, LLVMBuildAdd(b, i, u32(e, 1), ""), ia);
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, done);
    LLVMValueRef sort = sort_fn(e, t), args[2] = { tmp, n };
    LLVMBuildCall2(b, LLVMGlobalGetValueType(sort), sort, args, 2, "");
    LLVMValueRef mid = LLVMBuildSDiv(b, n, u32(e, 2), "");
    LLVMBuildRet(b, LLVMBuildLoad2(b, t, LLVMBuildGEP2(b, t, tmp, &mid, 1, ""), ""));
    LLVMDisposeBuilder(b);
}

/* Math the NVPTX target does not lower by itself, and libdevice's name for it. */
static const char *const math[][2] = {
    { "llvm.exp.f32", "__nv_expf" }, { "llvm.log.f32", "__nv_logf" },
    { "llvm.sin.f32", "__nv_sinf" }, { "llvm.cos.f32", "__nv_cosf" },
    { "llvm.pow.f32", "__nv_powf" }, { "tanf", "__nv_tanf" }, { "atan2f", "__nv_atan2f" },
};

static bool rename_math(emit *e, LLVMValueRef fn, const char *name)
{
    for (size_t i = 0; i < sizeof math / sizeof *math; i++) {
        if (strcmp(name, math[i][0]) != 0)
            continue;
        LLVMValueRef nv = LLVMGetNamedFunction(e->mod, math[i][1]);
        if (!nv)
            nv = LLVMAddFunction(e->mod, math[i][1], LLVMGlobalGetValueType(fn));
        LLVMReplaceAllUsesWith(fn, nv);
        return true;
    }
    return false;
}

bool gpu_device_runtime(emit *e)
{
    bool libdevice = false;
    int n = 0;
    for (LLVMValueRef fn = LLVMGetFirstFunction(e->mod); fn; fn = LLVMGetNextFunction(fn))
        n++;
    LLVMValueRef *fns = pf_xmalloc(sizeof *fns * (size_t)(n + 1));
    n = 0;
    for (LLVMValueRef fn = LLVMGetFirstFunction(e->mod); fn; fn = LLVMGetNextFunction(fn))
        fns[n++] = fn;
    for (int i = 0; i < n; i++) {
        size_t len;
        const char *name = LLVMGetValueName2(fns[i], &len);
        int mlen = 0;
        if (!LLVMIsDeclaration(fns[i]))
            continue;
        if (rename_math(e, fns[i], name)) {
            libdevice = true;
            LLVMDeleteFunction(fns[i]);
        } else if (strcmp(name, "pf_rt_noise") == 0) {
            define_noise(e, fns[i]);
        } else if (strcmp(name, "pf_rt_perf_hash") == 0) {
            define_perf_hash(e, fns[i]);
        } else if (sscanf(name, "pf_gpu_median_f32_%d", &mlen) == 1) {
            define_median(e, fns[i], e->t_f32, mlen);
        } else if (sscanf(name, "pf_gpu_median_i32_%d", &mlen) == 1) {
            define_median(e, fns[i], e->t_i32, mlen);
        }
    }
    free(fns);
    /* the sorts last: the medians call them */
    LLVMValueRef sorts[2] = { LLVMGetNamedFunction(e->mod, "pf_rt_sort_f32"),
                              LLVMGetNamedFunction(e->mod, "pf_rt_sort_i32") };
    for (int i = 0; i < 2; i++)
        if (sorts[i] && LLVMIsDeclaration(sorts[i]))
            define_sort(e, sorts[i], i == 0 ? e->t_f32 : e->t_i32);
    return libdevice;
}

int gpu_link_libdevice(emit *e, const char *path, pf_error *err)
{
    LLVMMemoryBufferRef buf;
    char *msg = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
        pf_fail(err, "%s: cannot read CUDA's libdevice: %s", path, msg);
        LLVMDisposeMessage(msg);
        return -1;
    }
    LLVMModuleRef lib;
    int bad = LLVMParseBitcodeInContext2(e->ctx, buf, &lib);
    LLVMDisposeMemoryBuffer(buf);
    if (bad)
        return pf_fail(err, "%s: not an LLVM bitcode file (CUDA's libdevice)", path);
    /* libdevice's own triple and data layout are the generic NVPTX ones */
    LLVMSetTarget(lib, LLVMGetTarget(e->mod));
    if (LLVMLinkModules2(e->mod, lib))
        return pf_fail(err, "%s: linking CUDA's libdevice failed", path);
    return 0;
}
