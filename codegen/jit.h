/* Compiling a loop-IR function to native code in-process: LLVM IR emission, the new pass
 * manager (at opt level 3 an explicit list of O3's passes, see jit.c) for the host CPU and its
 * features, and one ORC LLJIT instance per variant. On a machine with several cores the compile
 * is split into modules compiled on as many threads and linked by the JIT (split.h,
 * jit_split.c).
 * Freeing a pf_jit releases its code, so a search can compile thousands of variants. */
#ifndef PF_CODEGEN_JIT_H
#define PF_CODEGEN_JIT_H

#include "base/buffer.h"
#include "base/error.h"
#include "codegen/ir.h"

/* The compiled pipeline: buffers are the inputs then the outputs. Returns 0 on success, 1 when
 * an allocation failed, 2 when a buffer's x stride is not 1. */
typedef int32_t (*pf_pipeline_fn)(const pf_buffer *buffers);

typedef struct pf_jit pf_jit;

/* CPU milliseconds in each phase of one pf_jit_compile, for latency breakdowns: of the calling
 * thread (base/clock.h's pf_thread_cpu_ms: ORC materializes on the thread that looks the
 * function up, and on a shared machine CPU time is steadier than wall time), or in a split
 * compile (compile_threads) the sum over its threads. */
typedef struct pf_jit_times {
    double emit_ms;      /* loop IR -> LLVM IR */
    double optimize_ms;  /* the pass pipeline */
    double jit_ms;       /* setting up the JIT that will hold the code */
    double codegen_ms;   /* adding the module and looking up the function: machine code */
    int modules;         /* LLVM modules compiled (more than 1: a split compile) */
} pf_jit_times;

typedef struct pf_jit_options {
    int opt_level;           /* 0..3; default 3 */
    const char *dump_llvm;   /* write the optimized module's text here, or NULL */
    const char *dump_llvm_unoptimized;  /* write the module before optimization, or NULL */
    /* LLVM's own default<O3> pipeline at opt level 3 instead of perfora's shorter pass list
     * (same outputs, about twice the optimization time): for comparisons. */
    bool llvm_default_passes;
    bool fp_contract;        /* fused multiply-adds (codegen/llvm_contract.h) */
    /* Halide's float semantics: fp_contract, and divisions by a constant or by one value
     * repeatedly become multiplications by its reciprocal (codegen/llvm_recip.h) */
    bool fast_math;
    /* exp, log, pow... on vectors as one libm call per lane instead of perfora's inline
     * vector code (llvm_vmath.c, llvm_vexp.c): for comparisons */
    bool no_vector_math;
    /* Threads the compile may use: the function is split into up to this many LLVM modules
     * (codegen/split.h) compiled at once. 0: one per core this process may run on, at most 4;
     * 1: one module on the calling thread. The dumps and llvm_default_passes use one module. */
    int compile_threads;
    pf_jit_times *times;     /* filled in when not NULL */
} pf_jit_options;

pf_jit *pf_jit_compile(const ir_func *f, const pf_jit_options *opt, pf_error *err);
pf_pipeline_fn pf_jit_function(const pf_jit *j);
void pf_jit_free(pf_jit *j);

/* The host's target triple, CPU name and feature string (for reports). */
const char *pf_jit_host_cpu(void);
/* Float lanes of the host's preferred vector registers: 16 where LLVM itself vectorizes with
 * 512-bit registers (AVX-512 on AMD Zen 4 and later; on Intel's AVX-512 cores LLVM prefers
 * 256 bits, as 512-bit code lowers their clock), else 8. */
int pf_jit_wide_float_lanes(void);

#endif
