/* Opt-in division by reciprocals (`perfora run --fast-math`, pf_compile_options fast_math), on
 * the optimized module: x / c for a constant c becomes x * (1 / c), and divisions of one block
 * by the same value d become one 1 / d and multiplications (the bilateral filter's three
 * channel sums over one weight sum). A division costs 3-5 times a multiplication's throughput
 * and sits in the bilateral filter's per-tap chain twice. Halide compiles float division by a
 * constant this way unless the target has strict_float; results differ from the quotient by
 * at most about 1.5 ulp, so the default (exact) compile never does it. */
#include "codegen/llvm_recip.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

/* A vector constant of n lanes (at most 64) of the scalar constant s. */
static LLVMValueRef const_splat(LLVMValueRef s, unsigned n)
{
    LLVMValueRef lanes[64];
    for (unsigned i = 0; i < n; i++)
        lanes[i] = s;
    return LLVMConstVector(lanes, n);
}

/* Whether t is a float type, or a vector of at most 64 of them. */
static bool float_or_vector(LLVMTypeRef t)
{
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
        if (LLVMGetVectorSize(t) > 64)
            return false;
        t = LLVMGetElementType(t);
    }
    return LLVMGetTypeKind(t) == LLVMFloatTypeKind;
}

/* 1 / c as a float when c is a constant (scalar, or a vector of one value) whose reciprocal
 * is a normal float; else NULL. */
static LLVMValueRef constant_reciprocal(LLVMValueRef c)
{
    LLVMTypeRef t = LLVMTypeOf(c);
    bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
    LLVMValueRef s = c;
    if (vec) {
        if (!LLVMIsAConstantDataVector(c) && !LLVMIsAConstantVector(c))
            return NULL;
        s = LLVMGetAggregateElement(c, 0);
        for (unsigned i = 1; s && i < LLVMGetVectorSize(t); i++)
            if (LLVMGetAggregateElement(c, i) != s)  /* constants are uniqued */
                return NULL;
    }
    if (!s || !LLVMIsAConstantFP(s) || LLVMGetTypeKind(LLVMTypeOf(s)) != LLVMFloatTypeKind)
        return NULL;
    LLVMBool loses;
    double r = 1.0 / LLVMConstRealGetDouble(s, &loses);
    if (!isnormal((float)r))
        return NULL;
    LLVMValueRef rs = LLVMConstReal(LLVMTypeOf(s), (float)r);
    return vec ? const_splat(rs, LLVMGetVectorSize(t)) : rs;
}

static bool is_fdiv(LLVMValueRef i)
{
    return LLVMIsAInstruction(i) && LLVMGetInstructionOpcode(i) == LLVMFDiv;
}

/* How many divisions of bb after `from` (itself included) divide by d. */
static int divisions_by(LLVMValueRef from, LLVMValueRef d)
{
    int n = 0;
    for (LLVMValueRef i = from; i; i = LLVMGetNextInstruction(i))
        n += is_fdiv(i) && LLVMGetOperand(i, 1) == d;
    return n;
}

/* One over d, placed before `at`: a constant of that type's 1.0 divided by d. */
static LLVMValueRef reciprocal_before(LLVMBuilderRef b, LLVMValueRef at, LLVMValueRef d)
{
    LLVMTypeRef t = LLVMTypeOf(d);
    bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
    LLVMValueRef one = LLVMConstReal(vec ? LLVMGetElementType(t) : t, 1.0);
    if (vec)
        one = const_splat(one, LLVMGetVectorSize(t));
    LLVMPositionBuilderBefore(b, at);
    return LLVMBuildFDiv(b, one, d, "recip");
}

/* Rewrites the divisions of bb; returns how many became multiplications. */
static int rewrite_block(LLVMBuilderRef b, LLVMBasicBlockRef bb)
{
    int n = 0;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i;) {
        LLVMValueRef next = LLVMGetNextInstruction(i);
        if (!is_fdiv(i) || !float_or_vector(LLVMTypeOf(i))) {
            i = next;
            continue;
        }
        LLVMValueRef d = LLVMGetOperand(i, 1);
        LLVMValueRef r = constant_reciprocal(d);
        if (!r && !LLVMIsAConstant(d) && divisions_by(i, d) >= 2)
            r = reciprocal_before(b, i, d);
        if (!r) {
            i = next;
            continue;
        }
        /* every later division of this block by d shares r (a constant r is shared anyway) */
        for (LLVMValueRef j = i; j;) {
            LLVMValueRef after = LLVMGetNextInstruction(j);
            if (is_fdiv(j) && LLVMGetOperand(j, 1) == d) {
                LLVMPositionBuilderBefore(b, j);
                LLVMValueRef m = LLVMBuildFMul(b, LLVMGetOperand(j, 0), r, "");
                LLVMReplaceAllUsesWith(j, m);
                if (j == next)
                    next = m;
                LLVMInstructionEraseFromParent(j);
                n++;
            }
            j = after;
        }
        i = next;
    }
    return n;
}

int pf_llvm_reciprocals(LLVMModuleRef mod)
{
    int n = 0;
    LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            n += rewrite_block(b, bb);
    LLVMDisposeBuilder(b);
    return n;
}
