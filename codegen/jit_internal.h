/* What jit.c shares with jit_split.c (the compile split over threads). Not a public
 * interface. */
#ifndef PF_CODEGEN_JIT_INTERNAL_H
#define PF_CODEGEN_JIT_INTERNAL_H

#include "codegen/jit.h"
#include "codegen/split.h"

#include <llvm-c/LLJIT.h>
#include <llvm-c/TargetMachine.h>

struct pf_jit {
    LLVMOrcLLJITRef jit;
    pf_pipeline_fn fn;
};

/* The compiled pipeline's entry point, in every module. */
#define JIT_ENTRY "pf_pipeline"

/* Adds the calling thread's CPU time since *t to *acc (when acc is not NULL), restarts *t. */
void jit_lap(double *t, double *acc);
/* Sets err from an LLVM error (consumed); returns -1. */
int jit_llvm_error(LLVMErrorRef e, const char *what, pf_error *err);
/* A target machine for the host CPU and its features at the opt level's code generation. */
LLVMTargetMachineRef jit_host_machine(int opt_level, pf_error *err);
/* The opt-in float rewrites of a compile (pf_jit_options fp_contract, fast_math), and
 * no_vector_math (libm per lane instead of inline vector math, at emission). */
enum { JIT_CONTRACT = 1, JIT_RECIPROCALS = 2, JIT_SCALAR_MATH = 4 };
unsigned jit_float_rewrites(const pf_jit_options *opt);
/* Runs the opt level's pass pipeline on mod (unrolled: the IR has a schedule's unroll), with
 * the float rewrites asked for: contraction before it, reciprocals after. */
int jit_optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level, bool llvm_default,
                 bool unrolled, unsigned rewrites, pf_error *err);
/* Looks the entry point up in j's JIT (linking what was added) and sets j->fn. */
int jit_lookup(pf_jit *j, pf_error *err);
/* An LLJIT for the host with the runtime's symbols and the process's (libm) defined. */
LLVMOrcLLJITRef jit_create(int opt_level, pf_error *err);

/* jit_split.c: the split plan for this compile (codegen/split.h), or NULL when it runs as one
 * module; then the split compile itself. */
pf_split *jit_split_plan(const ir_func *f, const pf_jit_options *opt);
pf_jit *jit_compile_split(const ir_func *f, const pf_split *plan, int level, unsigned rewrites,
                          pf_jit_times *times, pf_error *err);

#endif
