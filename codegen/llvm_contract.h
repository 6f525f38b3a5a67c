/* Opt-in floating-point contraction of an emitted LLVM module (llvm_contract.c): a product
 * used only by an add becomes llvm.fmuladd, one fused multiply-add on targets with FMA. */
#ifndef PF_CODEGEN_LLVM_CONTRACT_H
#define PF_CODEGEN_LLVM_CONTRACT_H

#include <llvm-c/Core.h>

/* Rewrites every `fadd (fmul a, b), c` and `fadd c, (fmul a, b)` whose fmul has no other use
 * into `llvm.fmuladd(a, b, c)`; returns how many. */
int pf_llvm_contract(LLVMModuleRef mod);

#endif
