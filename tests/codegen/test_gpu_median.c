/* The GPU's median function (codegen/gpu_rt.c: the selection network in registers for a whole
 * window without NaN, else a sorted copy) run on the CPU: the same builder emits
 * pf_gpu_median_T_LEN into a module for the host, LLVM's ORC JIT compiles it (unoptimized, and
 * with the JIT's O3 passes), and it is compared with the runtime's pf_rt_median_* on random
 * arrays: whole windows, short ones (border pixels), n out of [1, len], NaNs, zeros of both
 * signs, ties, infinities and subnormals. The kernels only run it on a GPU; this is where its
 * arithmetic is checked. */
#include "base/arena.h"
#include "codegen/gpu_internal.h"
#include "codegen/jit_internal.h"
#include "codegen/llvm_median_net.h"
#include "codegen/runtime.h"
#include "tests/harness/harness.h"

#include <llvm-c/Analysis.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef float (*median_f32_fn)(const float *v, int32_t n);
typedef int32_t (*median_i32_fn)(const int32_t *v, int32_t n);

typedef struct jitted {
    LLVMOrcLLJITRef jit;
    void *fn;
    int min_max;   /* min/max calls in the function as built */
    bool branches_on_n;  /* its entry ends in a branch on n >= len */
} jitted;

/* Counts the calls of min/max intrinsics in fn and looks at its entry's branch. */
static void inspect(LLVMValueRef fn, int len, jitted *j)
{
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
            LLVMValueRef callee = LLVMIsACallInst(i) ? LLVMGetCalledValue(i) : NULL;
            size_t n;
            const char *name = callee ? LLVMGetValueName2(callee, &n) : "";
            j->min_max += strstr(name, "llvm.minnum") || strstr(name, "llvm.maxnum") ||
                          strstr(name, "llvm.smin") || strstr(name, "llvm.smax");
        }
    LLVMValueRef br = LLVMGetBasicBlockTerminator(LLVMGetEntryBasicBlock(fn));
    LLVMValueRef cond = LLVMIsConditional(br) ? LLVMGetCondition(br) : NULL;
    long long k = 0;
    if (cond && LLVMIsAICmpInst(cond) && LLVMGetICmpPredicate(cond) == LLVMIntSGE &&
        LLVMIsAConstantInt(LLVMGetOperand(cond, 1)))
        k = LLVMConstIntGetSExtValue(LLVMGetOperand(cond, 1));
    j->branches_on_n = cond && LLVMGetOperand(cond, 0) == LLVMGetParam(fn, 1) && k == len;
}

/* pf_gpu_median_{f32,i32}_len built by the device runtime into a host module and compiled. */
static jitted jit_median(bool is_float, int len, int opt_level)
{
    jitted j = { 0 };
    jit_init_llvm();
    emit e;
    memset(&e, 0, sizeof e);
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    e.ctx = LLVMOrcThreadSafeContextGetContext(tsc);
    e.mod = LLVMModuleCreateWithNameInContext("gpu_median_on_cpu", e.ctx);
    LLVMSetTarget(e.mod, pf_jit_host_triple());
    e.b = LLVMCreateBuilderInContext(e.ctx);
    em_init_types(&e);
    char name[64];
    snprintf(name, sizeof name, "pf_gpu_median_%s_%d", is_float ? "f32" : "i32", len);
    LLVMTypeRef t = is_float ? e.t_f32 : e.t_i32, ps[2] = { e.t_ptr, e.t_i32 };
    LLVMValueRef fn = LLVMAddFunction(e.mod, name, LLVMFunctionType(t, ps, 2, 0));
    CU_ASSERT_FALSE(gpu_device_runtime(&e));  /* no libdevice: nothing but integer and fmin */
    CU_ASSERT_FALSE_FATAL(LLVMIsDeclaration(fn));
    inspect(fn, len, &j);
    LLVMSetLinkage(fn, LLVMExternalLinkage);  /* the runtime makes it internal to the kernels */
    char *msg = NULL;
    CU_ASSERT_FALSE_FATAL(LLVMVerifyModule(e.mod, LLVMReturnStatusAction, &msg));
    LLVMDisposeMessage(msg);
    pf_error err;
    if (opt_level > 0) {
        LLVMTargetMachineRef tm = jit_host_machine(opt_level, false, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(tm);
        CU_ASSERT_EQUAL_FATAL(jit_optimize(e.mod, tm, opt_level, false, false, 0, &err), 0);
        LLVMDisposeTargetMachine(tm);
    }
    LLVMDisposeBuilder(e.b);
    j.jit = jit_create(opt_level, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j.jit);
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(e.mod, tsc);
    LLVMOrcDisposeThreadSafeContext(tsc);
    CU_ASSERT_FATAL(LLVMOrcLLJITAddLLVMIRModule(j.jit, LLVMOrcLLJITGetMainJITDylib(j.jit), tsm) ==
                    NULL);
    LLVMOrcExecutorAddress addr = 0;
    CU_ASSERT_FATAL(LLVMOrcLLJITLookup(j.jit, &addr, name) == NULL);
    j.fn = (void *)(uintptr_t)addr;
    return j;
}

/* ---- the arrays ---- */

static uint32_t next(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* One of the value kinds the test mixes: spread, few levels (ties), zeros of both signs,
 * infinities and subnormals; with a few NaNs in some arrays. */
static float value(uint32_t *s, int kind)
{
    uint32_t r = next(s);
    switch (kind) {
    case 0: return (float)(r % 100000) / 977.0f - 50.0f;
    case 1: return (float)(r % 4) * 0.25f;
    case 2: return r % 3 == 0 ? -0.0f : r % 3 == 1 ? 0.0f : (float)(r % 5) - 2.0f;
    default: {
        static const float odd[] = { INFINITY, -INFINITY, 1e-40f, -1e-40f, 1.0f, -3.0f };
        return odd[r % 6];
    }
    }
}

/* n for trial k: mostly whole windows (and more), else a border's shorter one, sometimes
 * below 1. */
static int32_t count_for(uint32_t *s, int len)
{
    uint32_t r = next(s) % 10;
    return r < 5 ? len : r < 7 ? len + 1 + (int32_t)(next(s) % 5)
                              : r < 9 ? 1 + (int32_t)(next(s) % (uint32_t)len)
                                      : -(int32_t)(next(s) % 3);
}

static int32_t clamped(int32_t n, int len)
{
    return n < 1 ? 1 : n > len ? len : n;
}

/* Equal results: the same NaN-ness, else equal numbers (the network may return the other zero
 * of a tie of -0 and +0, as documented) of the same bits otherwise. */
static bool same(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    uint32_t ba, bb;
    memcpy(&ba, &a, 4);
    memcpy(&bb, &b, 4);
    return ba == bb || (a == 0.0f && b == 0.0f);
}

static void check_f32(int len, int opt_level, int trials)
{
    jitted j = jit_median(true, len, opt_level);
    CU_ASSERT(j.branches_on_n == (len <= MEDIAN_NET_MAX_LEN));
    CU_ASSERT((j.min_max > 0) == (len > 1 && len <= MEDIAN_NET_MAX_LEN));
    median_f32_fn fn = (median_f32_fn)j.fn;
    float *v = pf_xmalloc(sizeof *v * (size_t)(len + 8));
    uint32_t s = 12345u + (uint32_t)len;
    int bad = 0, nans = 0, full = 0;
    for (int k = 0; k < trials; k++) {
        int kind = (int)(next(&s) % 4);
        for (int i = 0; i < len + 8; i++)
            v[i] = value(&s, kind);
        if (next(&s) % 5 == 0) {  /* NaNs: inside the window or beyond n */
            v[next(&s) % (uint32_t)len] = NAN;
            nans++;
        }
        int32_t n = count_for(&s, len);
        full += n >= len;
        float want = pf_rt_median_f32(v, clamped(n, len)), got = fn(v, n);
        if (!same(want, got) && bad++ < 5)
            printf("\n    len %d n %d: %g, the runtime %g", len, n, (double)got, (double)want);
    }
    printf("\n    f32 len %3d O%d: %d arrays (%d whole windows, %d with a NaN), %d min/max, "
           "%d differ", len, opt_level, trials, full, nans, j.min_max, bad);
    CU_ASSERT_EQUAL(bad, 0);
    free(v);
    LLVMOrcDisposeLLJIT(j.jit);
}

static void check_i32(int len, int opt_level, int trials)
{
    jitted j = jit_median(false, len, opt_level);
    CU_ASSERT(j.branches_on_n && j.min_max > 0);
    median_i32_fn fn = (median_i32_fn)j.fn;
    int32_t *v = pf_xmalloc(sizeof *v * (size_t)(len + 8));
    uint32_t s = 777u + (uint32_t)len;
    int bad = 0;
    for (int k = 0; k < trials; k++) {
        uint32_t kind = next(&s) % 3;
        for (int i = 0; i < len + 8; i++) {
            uint32_t r = next(&s);
            v[i] = kind == 0 ? (int32_t)(r % 7) - 3 : kind == 1 ? (int32_t)(r * 2654435761u)
                                                                : (r & 1 ? INT32_MIN : INT32_MAX);
        }
        int32_t n = count_for(&s, len);
        bad += pf_rt_median_i32(v, clamped(n, len)) != fn(v, n);
    }
    printf("\n    i32 len %3d O%d: %d arrays, %d min/max, %d differ", len, opt_level, trials,
           j.min_max, bad);
    CU_ASSERT_EQUAL(bad, 0);
    free(v);
    LLVMOrcDisposeLLJIT(j.jit);
}

/* The 9x9 median's 81 and a 3x3's 9, as built and optimized. */
static void test_gpu_median_f32_matches_runtime(void)
{
    check_f32(81, 0, 4000);
    check_f32(81, 3, 4000);
    check_f32(9, 0, 4000);
    check_f32(9, 3, 4000);
}

/* Even lengths (the upper middle), one element, the network's largest length and one past it
 * (the sort alone). */
static void test_gpu_median_f32_lengths(void)
{
    static const int lens[] = { 1, 2, 10, 25, 128, 129 };
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        check_f32(lens[i], 3, 1000);
}

static void test_gpu_median_i32_matches_runtime(void)
{
    check_i32(81, 0, 2000);
    check_i32(81, 3, 2000);
    check_i32(9, 3, 2000);
    check_i32(10, 3, 2000);
}

PF_TEST_SUITE(codegen_gpu_median, PF_TEST(test_gpu_median_f32_matches_runtime),
              PF_TEST(test_gpu_median_f32_lengths), PF_TEST(test_gpu_median_i32_matches_runtime))
