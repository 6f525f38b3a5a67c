/* Ahead-of-time compilation (Halide's way of exporting): the module the JIT compiles when it
 * compiles in one piece (pf_llvm_emit, then jit_optimize with the same options and passes),
 * written by LLVM's code generator as a position-independent object file for the host CPU
 * and its features instead of being handed to ORC. */
#include "codegen/jit_internal.h"

#include "codegen/ir_clone.h"
#include "codegen/llvm_emit.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Runs the pipeline's passes on mod and writes it to path. */
static int emit_file(LLVMModuleRef mod, const ir_func *f, const pf_jit_options *opt,
                     int level, const char *path, pf_error *err)
{
    LLVMTargetMachineRef tm = jit_host_machine(level, true, err);
    if (!tm)
        return -1;
    bool llvm_default = opt && opt->llvm_default_passes;
    int rc = jit_optimize(mod, tm, level, llvm_default, ir_has_unroll(f->body),
                          jit_float_rewrites(opt), err);
    char *msg = NULL;
    if (rc == 0 && LLVMTargetMachineEmitToFile(tm, mod, (char *)path, LLVMObjectFile, &msg)) {
        rc = pf_fail(err, "%s: LLVM cannot write the object: %s", path, msg);
        LLVMDisposeMessage(msg);
    }
    LLVMDisposeTargetMachine(tm);
    return rc;
}

int pf_jit_write_object(const ir_func *f, const pf_jit_options *opt, const char *entry,
                        const char *path, pf_error *err)
{
    jit_init_llvm();
    int level = opt && opt->opt_level ? opt->opt_level : 3;
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = pf_llvm_emit(f, ctx, entry, !(opt && opt->no_vector_math), err);
    /* Hidden: a shared library exports only its own wrapper, never this entry. */
    LLVMValueRef fn = mod ? LLVMGetNamedFunction(mod, entry) : NULL;
    if (fn)
        LLVMSetVisibility(fn, LLVMHiddenVisibility);
    int rc = mod ? emit_file(mod, f, opt, level, path, err) : -1;
    if (mod)
        LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return rc;
}

static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static char features[8192], triple[256];

static void read_host(void)
{
    jit_init_llvm();
    char *f = LLVMGetHostCPUFeatures(), *t = LLVMGetDefaultTargetTriple();
    snprintf(features, sizeof features, "%s", f);
    snprintf(triple, sizeof triple, "%s", t);
    LLVMDisposeMessage(f);
    LLVMDisposeMessage(t);
}

const char *pf_jit_host_features(void)
{
    pthread_once(&host_once, read_host);
    return features;
}

const char *pf_jit_host_triple(void)
{
    pthread_once(&host_once, read_host);
    return triple;
}
