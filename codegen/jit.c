/* Native compilation through LLVM's new pass manager and ORC LLJIT (see jit.h). */
#include "codegen/jit_internal.h"

#include "base/arena.h"
#include "base/clock.h"
#include "codegen/ir_clone.h"
#include "codegen/llvm_contract.h"
#include "codegen/llvm_emit.h"
#include "codegen/llvm_internal.h"
#include "codegen/llvm_recip.h"
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
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static char host_cpu[256];

/* The CPU family of an AMD x86 processor (0 on other vendors and architectures). */
static unsigned amd_family(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541u /* "Auth" */ ||
        !__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    unsigned base = (a >> 8) & 0xfu;
    return base == 0xfu ? base + ((a >> 20) & 0xffu) : base;
#else
    return 0;
#endif
}

static void init_llvm(void)
{
    /* Loop strength reduction costs more than half of instruction selection time on stencil
     * loops (many address expressions) and buys little once addresses are plain offsets.
     * InstCombine stops after one sweep instead of sweeping again until nothing changes (what
     * LLVM 18 does by default): the second sweep rarely changes our IR and costs as much as
     * the first. Full unrolling of constant loops keeps O3's size threshold (300) in the
     * explicit pass list of opt level 3, where loop-unroll-full would take O2's (150). */
    const char *argv[] = { "perfora", "-disable-lsr", "-instcombine-max-iterations=1",
                           "-unroll-threshold-default=300" };
    LLVMParseCommandLineOptions((int)(sizeof argv / sizeof *argv), argv, NULL);
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    char *cpu = LLVMGetHostCPUName();
    snprintf(host_cpu, sizeof host_cpu, "%s", cpu);
    LLVMDisposeMessage(cpu);
    /* LLVM 16 predates AMD's Zen 5 (family 1Ah) and names it "generic": no scheduling model,
     * and pf_jit_wide_float_lanes took it for a CPU that should keep to 256-bit vectors, so
     * variants vectorized 8-wide instead of 16 and their outputs differed from a Zen 4's in the
     * last ulp (search_hashes). Zen 5 runs every instruction Zen 4 does, so it gets Zen 4's
     * name; the features still come from LLVMGetHostCPUFeatures. */
    if (!strcmp(host_cpu, "generic") && amd_family() >= 0x1a)
        snprintf(host_cpu, sizeof host_cpu, "znver4");
}

void jit_init_llvm(void)
{
    pthread_once(&init_once, init_llvm);
}

const char *pf_jit_host_cpu(void)
{
    jit_init_llvm();
    return host_cpu;
}

int pf_jit_wide_float_lanes(void)
{
    const char *cpu = pf_jit_host_cpu();
    if (strncmp(cpu, "znver", 5) != 0 || atoi(cpu + 5) < 4)
        return 8;
    return em_host_has_feature("avx512f") ? 16 : 8;
}

/* Adds the calling thread's CPU time since *t to *acc (when acc is not NULL), restarts *t. */
void jit_lap(double *t, double *acc)
{
    double now = pf_thread_cpu_ms();
    if (acc)
        *acc += now - *t;
    *t = now;
}

int jit_llvm_error(LLVMErrorRef e, const char *what, pf_error *err)
{
    char *msg = LLVMGetErrorMessage(e);
    pf_fail(err, "internal error: %s: %.1500s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return -1;
}

/* Code generation at Aggressive for opt level 3: Default (or Less, without post-RA scheduling)
 * saved no measurable time there; instruction selection and register allocation dominate.
 * An object file (jit_object.c) is position-independent, for shared libraries too. */
LLVMTargetMachineRef jit_host_machine(int opt_level, bool object, pf_error *err)
{
    char *triple = LLVMGetDefaultTargetTriple(), *msg = NULL;
    LLVMTargetRef target;
    if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
        pf_fail(err, "internal error: no LLVM target for %s: %s", triple, msg);
        LLVMDisposeMessage(msg);
        LLVMDisposeMessage(triple);
        return NULL;
    }
    char *features = LLVMGetHostCPUFeatures();
    const char *cpu = pf_jit_host_cpu();
    LLVMCodeGenOptLevel lvl = opt_level >= 3 ? LLVMCodeGenLevelAggressive
                            : opt_level == 0 ? LLVMCodeGenLevelNone : LLVMCodeGenLevelDefault;
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
        target, triple, cpu, features, lvl, object ? LLVMRelocPIC : LLVMRelocDefault,
        object ? LLVMCodeModelDefault : LLVMCodeModelJITDefault);
    LLVMDisposeMessage(triple);
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

/* SimplifyCFG as LLVM's function simplification runs it (loops kept in shape for the loop
 * passes), and the variant that also hoists and sinks instructions common to both arms. */
#define SIMPLIFY_CFG                                                                        \
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;"      \
    "no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts>"
#define SIMPLIFY_CFG_HOIST                                                                  \
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;"      \
    "no-switch-to-lookup;keep-loops;hoist-common-insts;sink-common-insts>"

/* Opt level 3: the passes of LLVM's default<O3> that change our IR, each run once over the
 * inlined code. default<O3> simplifies every function, then each caller again after inlining,
 * then runs a second pipeline of loop and vectorization passes: about twice the time of this
 * list (which was 60-80% of a compile), for code that runs as fast on the apps. Outputs are
 * identical (tests/codegen/test_jit.c); before indvars was dropped (below) the instructions
 * run were within 3% of default<O3>'s, except mosaic's (8% more, its run time within noise).
 * Our IR keeps loop variables in allocas, its vectorized loops are explicit 8-lane code, and
 * short reductions and `for` loops have constant trip counts. Left out: the inliner
 * (single-call functions are inlined first instead), loop unswitching (blur ran 5% more
 * instructions with it), and passes that moved the apps' instruction counts by under 2% (jump
 * threading, correlated value propagation, SCCP, BDCE, reassociation, loop distribution, loop
 * load elimination). */
static const char *const o3_function_passes[] = {
    /* Variables out of their allocas, then the first cleanup. */
    "sroa<modify-cfg>", "early-cse<memssa>", "instcombine", SIMPLIFY_CFG,
    /* Rotated loops with their invariant row addresses hoisted. */
    "loop-mssa(loop-rotate,licm<allowspeculation>)", SIMPLIFY_CFG,
    /* Short constant loops unrolled away (demosaic runs 1.6x slower without). No induction
     * variable widening (indvars): it was 20-33% of this list's time, and without it the
     * apps run 1-2.5% more instructions (blur 8% fewer). */
    "loop(loop-deletion,loop-unroll-full)",
    /* Common loads and index arithmetic of the unrolled bodies (no partial redundancy
     * elimination: it found nothing the apps run, for 0.5-1.7% of their compiles). */
    "gvn<no-pre>", "instcombine", "loop-mssa(licm<allowspeculation>)", SIMPLIFY_CFG_HOIST,
    /* Loops a schedule leaves scalar (border loops, stages without `vectorize`); no
     * interleaving (pixels are independent). */
    "loop-vectorize<interleave-forced-only;no-vectorize-forced-only;>",
    /* The unroll counts of the IR's loop metadata (a schedule's `unroll`). */
    "loop-unroll<O3>",
};

/* Left out of the list above on 2026-11-26, each measured with callgrind on the apps' one-module
 * compiles and 820x614 runs (tests/codegen/test_jit.c checks the outputs are unchanged), the
 * run instructions within 0.2% unless said:
 *  - the SLP vectorizer, the costliest pass on blur and unsharp (a fifth of the list, matching
 *    the scalar tails' long sums as reductions it may not reorder), which only paid on
 *    demosaic by joining its per-lane table reads into gathers; the vector emitter gathers
 *    them itself now. Compile -6.5% (blur) to -25% (demosaic, with the gathers); runs blur
 *    -2%, unsharp -3%, grid -9%, demosaic +6%;
 *  - loop-idiom (zero-fill loops as memset): blur compile -10%, the others -0.5 to -1.6%;
 *  - DSE, ADCE, vector-combine, the first LICM (before rotation) and the instcombine after
 *    it: together -3% (bilateral filter) to -10% (grid, mosaic);
 *  - the LICM after GVN stays: without it the median ran 2% and demosaic 5.6% more. */
/* After unrolling, a cleanup of the copies' index arithmetic. Without a schedule's `unroll`
 * there is nothing to clean up: on every app (no `unroll` in their default schedules) the
 * instructions run were the same without these passes, and the compile 2-5% shorter. */
static const char *const o3_after_unroll[] = {
    "instcombine", "loop-mssa(licm<allowspeculation>)",
};

/* "always-inline,function(P1,P2,...)" from o3_function_passes (with o3_after_unroll when the
 * IR has unrolled loops), then the last SimplifyCFG. */
static void o3_pipeline(char *out, size_t n, bool unrolled)
{
    size_t len = (size_t)snprintf(out, n, "always-inline,function(");
    size_t k = sizeof o3_function_passes / sizeof *o3_function_passes;
    for (size_t i = 0; i < k && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s,", o3_function_passes[i]);
    k = unrolled ? sizeof o3_after_unroll / sizeof *o3_after_unroll : 0;
    for (size_t i = 0; i < k && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s,", o3_after_unroll[i]);
    if (len < n)
        snprintf(out + len, n - len, "%s)", SIMPLIFY_CFG);
}

/* A cold loop's function (llvm_internal.h: em_cold_loop). */
static bool is_cold(LLVMValueRef fn)
{
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    return len >= strlen(EM_COLD_NAME) && strncmp(name, EM_COLD_NAME, strlen(EM_COLD_NAME)) == 0;
}

/* Cold loops' functions are compiled by LLVM's O0 code generator (FastISel, and the machine
 * passes that skip optnone functions) once the IR passes have optimized them: they run a
 * few iterations per row, and a third of a blur compile went into their code. */
static void cold_code_optnone(LLVMModuleRef mod)
{
    LLVMContextRef ctx = LLVMGetModuleContext(mod);
    unsigned kind = LLVMGetEnumAttributeKindForName("optnone", 7);
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        if (!LLVMIsDeclaration(fn) && is_cold(fn))
            LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                    LLVMCreateEnumAttribute(ctx, kind, 0));
}

/* An internal function with one call site (the pipeline body, each parallel loop's chunk)
 * goes into its caller, as LLVM's inliner would put it: the passes then see the code once, as
 * it will run. */
static void inline_single_callees(LLVMModuleRef mod)
{
    unsigned kind = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    LLVMContextRef ctx = LLVMGetModuleContext(mod);
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        if (LLVMIsDeclaration(fn) || LLVMGetLinkage(fn) != LLVMInternalLinkage || is_cold(fn))
            continue;
        LLVMUseRef u = LLVMGetFirstUse(fn);
        if (!u || LLVMGetNextUse(u) || !LLVMIsACallInst(LLVMGetUser(u)) ||
            LLVMGetCalledValue(LLVMGetUser(u)) != fn)
            continue;
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(ctx, kind, 0));
    }
}

unsigned jit_float_rewrites(const pf_jit_options *opt)
{
    if (!opt)
        return 0;
    return (opt->fp_contract || opt->fast_math ? JIT_CONTRACT : 0) |
           (opt->fast_math ? JIT_RECIPROCALS : 0) | (opt->no_vector_math ? JIT_SCALAR_MATH : 0);
}

int jit_optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level, bool llvm_default,
                 bool unrolled, unsigned rewrites, pf_error *err)
{
    if (rewrites & JIT_CONTRACT)
        pf_llvm_contract(mod);
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMSetTarget(mod, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(mod, dl);
    LLVMDisposeTargetData(dl);
    char passes[2048];
    if (opt_level >= 3 && !llvm_default) {
        inline_single_callees(mod);
        o3_pipeline(passes, sizeof passes, unrolled);
    } else {
        snprintf(passes, sizeof passes, "default<O%d>", opt_level < 0 ? 3 : opt_level);
    }
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
    LLVMPassBuilderOptionsSetLoopUnrolling(po, 1);
    /* Pixels are independent: interleaving adds code without hiding any dependence. */
    LLVMPassBuilderOptionsSetLoopInterleaving(po, 0);
    LLVMErrorRef e = LLVMRunPasses(mod, passes, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e)
        return jit_llvm_error(e, "LLVM optimization", err);
    if (rewrites & JIT_RECIPROCALS)  /* after: divisions by one value then share its SSA name */
        pf_llvm_reciprocals(mod);
    if (opt_level >= 3 && !llvm_default)
        cold_code_optnone(mod);
    return 0;
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
        return jit_llvm_error(e, "defining runtime symbols", err);
    /* libm (expf, tanf, ...) comes from the process. */
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen,
                                                             LLVMOrcLLJITGetGlobalPrefix(jit),
                                                             NULL, NULL);
    if (e)
        return jit_llvm_error(e, "process symbol generator", err);
    LLVMOrcJITDylibAddGenerator(jd, gen);
    return 0;
}

LLVMOrcLLJITRef jit_create(int opt_level, pf_error *err)
{
    LLVMTargetMachineRef tm = jit_host_machine(opt_level, false, err);
    if (!tm)
        return NULL;
    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
        builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
    LLVMOrcLLJITRef jit;
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&jit, builder);
    if (e) {
        jit_llvm_error(e, "creating the JIT", err);
        return NULL;
    }
    if (define_runtime(jit, err) != 0) {
        LLVMOrcDisposeLLJIT(jit);
        return NULL;
    }
    return jit;
}

int jit_lookup(pf_jit *j, pf_error *err)
{
    LLVMOrcExecutorAddress addr = 0;
    LLVMErrorRef e = LLVMOrcLLJITLookup(j->jit, &addr, JIT_ENTRY);
    if (e)
        return jit_llvm_error(e, "looking up the compiled pipeline", err);
    j->fn = (pf_pipeline_fn)(uintptr_t)addr;
    return 0;
}

static int add_and_lookup(pf_jit *j, LLVMOrcThreadSafeContextRef tsc, LLVMModuleRef mod,
                          pf_error *err)
{
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
    LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModule(j->jit, LLVMOrcLLJITGetMainJITDylib(j->jit), tsm);
    if (e) {
        LLVMOrcDisposeThreadSafeModule(tsm);
        return jit_llvm_error(e, "adding the module to the JIT", err);
    }
    return jit_lookup(j, err);
}

pf_jit *pf_jit_compile(const ir_func *f, const pf_jit_options *opt, pf_error *err)
{
    pthread_once(&init_once, init_llvm);
    int level = opt ? opt->opt_level : 3;
    bool llvm_default = opt && opt->llvm_default_passes;
    pf_jit_times scratch, *times = opt && opt->times ? opt->times : &scratch;
    memset(times, 0, sizeof *times);
    pf_split *plan = jit_split_plan(f, opt);
    times->modules = plan ? plan->n_modules : 1;
    if (plan) {
        pf_jit *j = jit_compile_split(f, plan, level, jit_float_rewrites(opt), times, err);
        pf_split_free(plan);
        return j;
    }
    double t = pf_thread_cpu_ms();
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
    LLVMModuleRef mod = pf_llvm_emit(f, ctx, JIT_ENTRY, !(opt && opt->no_vector_math), err);
    jit_lap(&t, &times->emit_ms);
    pf_jit *j = NULL;
    LLVMTargetMachineRef tm = NULL;
    if (!mod)
        goto done;
    if (opt && opt->dump_llvm_unoptimized && write_module(mod, opt->dump_llvm_unoptimized, err))
        goto fail_mod;
    tm = jit_host_machine(level, false, err);
    jit_lap(&t, &times->jit_ms);
    if (!tm || jit_optimize(mod, tm, level, llvm_default, ir_has_unroll(f->body),
                            jit_float_rewrites(opt), err) != 0)
        goto fail_mod;
    jit_lap(&t, &times->optimize_ms);
    if (opt && opt->dump_llvm && write_module(mod, opt->dump_llvm, err))
        goto fail_mod;
    jit_lap(&t, NULL);
    j = pf_xcalloc(1, sizeof *j);
    j->jit = jit_create(level, err);
    jit_lap(&t, &times->jit_ms);
    if (!j->jit)
        goto fail_mod;
    if (add_and_lookup(j, tsc, mod, err) != 0) {
        pf_jit_free(j);
        j = NULL;
    }
    jit_lap(&t, &times->codegen_ms);
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
