/* Opt-in floating-point contraction (`perfora run --fp-contract`, pf_compile_options
 * fp_contract): `fadd (fmul a, b), c` in either order, where the product has no other use,
 * becomes llvm.fmuladd, which the backend turns into one fused multiply-add where the target
 * has FMA. The sums keep the program's order; only the products' rounding goes, so results
 * differ from the interpreter's by about an ulp per fused add (the default keeps the IR's
 * "never contracted" semantics, codegen/ir.h, and JIT = interpreter exactly). Halide lets
 * LLVM fuse unless a pipeline asks for strict_float, and a weighted sum is a chain of such
 * adds: the 17-tap
 * horizontal loop of the paper's blur variant runs 158 instructions per 16 samples instead of
 * 199 (llvm-mca, znver2: 40 cycles instead of 50). */
#include "codegen/llvm_contract.h"

#include <stdbool.h>
#include <stddef.h>

/* x is a one-use fmul: its operands in ops. */
static bool single_use_fmul(LLVMValueRef x, LLVMValueRef ops[2])
{
    if (!LLVMIsAInstruction(x) || LLVMGetInstructionOpcode(x) != LLVMFMul)
        return false;
    LLVMUseRef u = LLVMGetFirstUse(x);
    if (!u || LLVMGetNextUse(u))
        return false;
    ops[0] = LLVMGetOperand(x, 0);
    ops[1] = LLVMGetOperand(x, 1);
    return true;
}

static LLVMValueRef fmuladd(LLVMModuleRef mod, LLVMBuilderRef b, LLVMValueRef *args)
{
    LLVMTypeRef t = LLVMTypeOf(args[0]);
    unsigned id = LLVMLookupIntrinsicID("llvm.fmuladd", 12);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(mod, id, &t, 1);
    LLVMTypeRef ft = LLVMIntrinsicGetType(LLVMGetModuleContext(mod), id, &t, 1);
    return LLVMBuildCall2(b, ft, fn, args, 3, "");
}

/* Rewrites inst when it is a contractible fadd (counted in *n); returns the next instruction
 * to look at. */
static LLVMValueRef contract(LLVMModuleRef mod, LLVMBuilderRef b, LLVMValueRef inst, int *n)
{
    LLVMValueRef next = LLVMGetNextInstruction(inst);
    if (LLVMGetInstructionOpcode(inst) != LLVMFAdd)
        return next;
    LLVMValueRef ops[2], x = LLVMGetOperand(inst, 0), y = LLVMGetOperand(inst, 1), addend;
    LLVMValueRef mul;
    if (single_use_fmul(y, ops)) {  /* sums nest to the left: the product is mostly on the right */
        mul = y;
        addend = x;
    } else if (single_use_fmul(x, ops)) {
        mul = x;
        addend = y;
    } else {
        return next;
    }
    LLVMPositionBuilderBefore(b, inst);
    LLVMValueRef args[3] = { ops[0], ops[1], addend };
    LLVMValueRef r = fmuladd(mod, b, args);
    LLVMReplaceAllUsesWith(inst, r);
    LLVMInstructionEraseFromParent(inst);
    LLVMInstructionEraseFromParent(mul);
    (*n)++;
    return next;
}

int pf_llvm_contract(LLVMModuleRef mod)
{
    int n = 0;
    LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i;)
                i = contract(mod, b, i, &n);
    LLVMDisposeBuilder(b);
    return n;
}
