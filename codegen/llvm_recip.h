/* Opt-in division by reciprocals of an optimized LLVM module (llvm_recip.c): x / c becomes
 * x * (1 / c) for constant c, and divisions of a block by one value share its reciprocal. */
#ifndef PF_CODEGEN_LLVM_RECIP_H
#define PF_CODEGEN_LLVM_RECIP_H

#include <llvm-c/Core.h>

/* Rewrites the module's float divisions as above; returns how many became multiplications. */
int pf_llvm_reciprocals(LLVMModuleRef mod);

#endif
