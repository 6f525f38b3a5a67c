/* Native compilation through LLVM's new pass manager and ORC LLJIT (see jit.h). */
#include "codegen/jit.h"

#include "base/arena.h"
#include "codegen/llvm_emit.h"
#include "codegen/runtime.h"

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pf_jit {
    LLVMOrcLLJITRef jit;
    pf_pipeline_fn fn;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static char host_cpu[256];

static void init_llvm(void)
{
    /* Loop strength reduction costs more than half of instruction selection time on stencil
     * loops (many address expressions) and buys little once addresses are plain offsets. */
    const char *argv[] = { "perfora", "-disable-lsr" };
    LLVMParseCommandLineOptions(2, argv, NULL);
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    char *cpu = LLVMGetHostCPUName();
    snprintf(host_cpu, sizeof host_cpu, "%s", cpu);
    LLVMDisposeMessage(cpu);
}

const char *pf_jit_host_cpu(void)
{
    pthread_once(&init_once, init_llvm);
    return host_cpu;
}

static int llvm_error(LLVMErrorRef e, const char *what, pf_error *err)
{
    char *msg = LLVMGetErrorMessage(e);
    pf_fail(err, "internal error: %s: %.1500s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return -1;
}

static LLVMTargetMachineRef host_machine(int opt_level, pf_error *err)
{
    char *triple = LLVMGetDefaultTargetTriple(), *msg = NULL;
    LLVMTargetRef target;
    if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
        pf_fail(err, "internal error: no LLVM target for %s: %s", triple, msg);
        LLVMDisposeMessage(msg);
        LLVMDisposeMessage(triple);
        return NULL;
    }
    char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
    LLVMCodeGenOptLevel lvl = opt_level >= 3 ? LLVMCodeGenLevelAggressive
                            : opt_level == 0 ? LLVMCodeGenLevelNone : LLVMCodeGenLevelDefault;
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, cpu, features, lvl,
                                                      LLVMRelocDefault, LLVMCodeModelJITDefault);
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    return tm;
}

static int write_module(LLVMModuleRef mod, const char *path, pf_error *err)
{
    char *msg = NULL;
    if (LLVMPrintModuleToFile(mod, path, &msg)) {
        pf_fail(err, "%s: cannot write LLVM IR: %s", path, msg);
        LLVMDisposeMessage(msg);
        return -1;
    }
    return 0;
}

static int optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level, pf_error *err)
{
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMSetTarget(mod, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(mod, dl);
    LLVMDisposeTargetData(dl);
    char passes[512];
    snprintf(passes, sizeof passes, "default<O%d>", opt_level < 0 ? 3 : opt_level);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
    LLVMPassBuilderOptionsSetLoopUnrolling(po, 1);
    /* Pixels are independent: interleaving adds code without hiding any dependence. */
    LLVMPassBuilderOptionsSetLoopInterleaving(po, 0);
    LLVMErrorRef e = LLVMRunPasses(mod, passes, tm, po);
    LLVMDisposePassBuilderOptions(po);
    return e ? llvm_error(e, "LLVM optimization", err) : 0;
}

static int define_runtime(LLVMOrcLLJITRef jit, pf_error *err)
{
    int n;
    const pf_rt_symbol *syms = pf_rt_symbols(&n);
    LLVMOrcCSymbolMapPair *pairs = pf_xcalloc((size_t)n, sizeof *pairs);
    for (int i = 0; i < n; i++) {
        pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit, syms[i].name);
        pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)syms[i].address;
        pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported |
                                          LLVMJITSymbolGenericFlagsCallable;
    }
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
    LLVMErrorRef e = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, (size_t)n));
    free(pairs);
    if (e)
        return llvm_error(e, "defining runtime symbols", err);
    /* libm (expf, tanf, ...) comes from the process. */
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen,
                                                             LLVMOrcLLJITGetGlobalPrefix(jit),
                                                             NULL, NULL);
    if (e)
        return llvm_error(e, "process symbol generator", err);
    LLVMOrcJITDylibAddGenerator(jd, gen);
    return 0;
}

static LLVMOrcLLJITRef create_jit(int opt_level, pf_error *err)
{
    LLVMTargetMachineRef tm = host_machine(opt_level, err);
    if (!tm)
        return NULL;
    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
        builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
    LLVMOrcLLJITRef jit;
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&jit, builder);
    if (e) {
        llvm_error(e, "creating the JIT", err);
        return NULL;
    }
    if (define_runtime(jit, err) != 0) {
        LLVMOrcDisposeLLJIT(jit);
        return NULL;
    }
    return jit;
}

static int add_and_lookup(pf_jit *j, LLVMOrcThreadSafeContextRef tsc, LLVMModuleRef mod,
                          const char *name, pf_error *err)
{
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
    LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModule(j->jit, LLVMOrcLLJITGetMainJITDylib(j->jit), tsm);
    if (e) {
        LLVMOrcDisposeThreadSafeModule(tsm);
        return llvm_error(e, "adding the module to the JIT", err);
    }
    LLVMOrcExecutorAddress addr = 0;
    e = LLVMOrcLLJITLookup(j->jit, &addr, name);
    if (e)
        return llvm_error(e, "looking up the compiled pipeline", err);
    j->fn = (pf_pipeline_fn)(uintptr_t)addr;
    return 0;
}

pf_jit *pf_jit_compile(const ir_func *f, const pf_jit_options *opt, pf_error *err)
{
    pthread_once(&init_once, init_llvm);
    int level = opt ? opt->opt_level : 3;
    const char *name = "pf_pipeline";
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
    LLVMModuleRef mod = pf_llvm_emit(f, ctx, name, err);
    pf_jit *j = NULL;
    LLVMTargetMachineRef tm = NULL;
    if (!mod)
        goto done;
    if (opt && opt->dump_llvm_unoptimized && write_module(mod, opt->dump_llvm_unoptimized, err))
        goto fail_mod;
    tm = host_machine(level, err);
    if (!tm || optimize(mod, tm, level, err) != 0)
        goto fail_mod;
    if (opt && opt->dump_llvm && write_module(mod, opt->dump_llvm, err))
        goto fail_mod;
    j = pf_xcalloc(1, sizeof *j);
    j->jit = create_jit(level, err);
    if (!j->jit)
        goto fail_mod;
    if (add_and_lookup(j, tsc, mod, name, err) != 0) {
        pf_jit_free(j);
        j = NULL;
    }
    goto done;
fail_mod:
    LLVMDisposeModule(mod);
    free(j);
    j = NULL;
done:
    if (tm)
        LLVMDisposeTargetMachine(tm);
    LLVMOrcDisposeThreadSafeContext(tsc);
    return j;
}

pf_pipeline_fn pf_jit_function(const pf_jit *j)
{
    return j->fn;
}

void pf_jit_free(pf_jit *j)
{
    if (!j)
        return;
    if (j->jit) {
        LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->jit);
        if (e)
            LLVMConsumeError(e);
    }
    free(j);
}
