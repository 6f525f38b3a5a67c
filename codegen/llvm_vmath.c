/* Vector math for the explicit vectorizer: exp inline (llvm_vexp.c), and log, pow, sin and cos
 * on 8 lanes through glibc's libmvec (_ZGVdN8v_logf ...: AVX2; glibc documents at most 4 ulp
 * of error), instead of LLVM's default of one scalar libm call per lane (the compile option
 * no_vector_math keeps that for all five; see docs/bench.md). libmvec is used when the host has
 * AVX2 and it loads; otherwise em_vector_math returns NULL and the caller scalarizes. The JIT
 * resolves the symbols from the process (libmvec is loaded RTLD_GLOBAL). */
#include "codegen/llvm_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/TargetMachine.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool available;

/* Whether the comma-separated feature list f has "+name" (not just a longer name). */
static bool has_feature(const char *f, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = f ? strstr(f, name) : NULL; p; p = strstr(p + 1, name))
        if (p > f && p[-1] == '+' && (p[n] == ',' || p[n] == 0))
            return true;
    return false;
}

bool em_host_has_feature(const char *name)
{
    char *f = LLVMGetHostCPUFeatures();
    bool has = has_feature(f, name);
    LLVMDisposeMessage(f);
    return has;
}

static void probe(void)
{
    if (!em_host_has_feature("avx2"))
        return;
    /* Kept loaded for the life of the process: compiled variants call into it. */
    void *h = dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL);
    available = h && dlsym(h, "_ZGVdN8v_logf") && dlsym(h, "_ZGVdN8vv_powf");
}

bool em_vector_math_available(void)
{
    pthread_once(&once, probe);
    return available;
}

static const char *name_of(ir_fn fn)
{
    switch (fn) {
    case IR_FN_LOG: return "_ZGVdN8v_logf";
    case IR_FN_SIN: return "_ZGVdN8v_sinf";
    case IR_FN_COS: return "_ZGVdN8v_cosf";
    case IR_FN_POW: return "_ZGVdN8vv_powf";
    default: return NULL;
    }
}

/* Lanes [from, from + 8) of x (a <W x float>). */
static LLVMValueRef chunk(emit *e, LLVMValueRef x, int W, int from)
{
    if (W == 8)
        return x;
    LLVMValueRef m[8];
    for (int l = 0; l < 8; l++)
        m[l] = em_i32(e, from + l);
    return LLVMBuildShuffleVector(e->b, x, LLVMGetPoison(LLVMTypeOf(x)), LLVMConstVector(m, 8),
                                  "");
}

/* Concatenates parts[0..n) (each <8 x float>) into one <8n x float>. */
static LLVMValueRef concat(emit *e, LLVMValueRef *parts, int n)
{
    int width = 8;
    while (n > 1) {
        LLVMValueRef m[128];
        for (int l = 0; l < 2 * width; l++)
            m[l] = em_i32(e, l);
        for (int c = 0; c < n / 2; c++)
            parts[c] = LLVMBuildShuffleVector(e->b, parts[2 * c], parts[2 * c + 1],
                                              LLVMConstVector(m, (unsigned)(2 * width)), "");
        n /= 2;
        width *= 2;
    }
    return parts[0];
}

LLVMValueRef em_vector_math(emit *e, ir_fn fn, LLVMValueRef *args, int n_args, int W)
{
    if (e->scalar_math)  /* pf_compile_options.no_vector_math: libm per lane */
        return NULL;
    if (fn == IR_FN_EXP && W >= 2 && W <= 64)  /* inline (llvm_vexp.c), at any width */
        return em_vector_exp(e, args[0], W);
    const char *name = name_of(fn);
    /* whole 8-lane chunks, a power of two of them (so concat pairs them up) */
    if (!name || W < 8 || W > 64 || (W & (W - 1)) || !em_vector_math_available())
        return NULL;
    LLVMTypeRef v8 = LLVMVectorType(e->t_f32, 8), ps[2] = { v8, v8 };
    LLVMValueRef parts[8];
    for (int c = 0; c < W / 8; c++) {
        LLVMValueRef a[2];
        for (int i = 0; i < n_args; i++)
            a[i] = chunk(e, args[i], W, 8 * c);
        parts[c] = em_call_known(e, name, v8, ps, n_args, a, EM_MEMORY_NONE);
    }
    return concat(e, parts, W / 8);
}
