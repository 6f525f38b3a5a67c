/* The median builtin's selection network (llvm_median_net.c), emitted by the vector bodies on
 * the CPU (llvm_vmedian.c: min/max across lanes) and by the GPU's device runtime (gpu_rt.c:
 * scalar min/max in registers). Not a public interface. */
#ifndef PF_CODEGEN_LLVM_MEDIAN_NET_H
#define PF_CODEGEN_LLVM_MEDIAN_NET_H

#include "codegen/llvm_internal.h"

/* Arrays up to this length get a network (81 elements: 1094 min/max, 128: 2011); longer ones
 * only the runtime's selection, whose code does not grow with the length. */
#define MEDIAN_NET_MAX_LEN 128

/* `b < a ? b : a` (max: `a < b ? b : a`), or anything equal to it where no value is NaN,
 * emitted at e->b (ctx: the caller's own state). */
typedef LLVMValueRef (*median_minmax_fn)(void *ctx, LLVMValueRef a, LLVMValueRef b, bool max);

/* At e->b: loads the len elements of type t (a scalar, or a vector of lanes on the CPU) of the
 * array at p, each where the network first uses it, and returns element len / 2 of them sorted
 * (2 <= len <= MEDIAN_NET_MAX_LEN) by the network of min/max mm. Where no element is NaN that is
 * the stable sort's element as a number (two values equal in `<` are -0 and +0 only). When nan
 * is not NULL, *nan is set to whether any element is NaN (i1, or a vector of i1 like t): then
 * the result means nothing. */
LLVMValueRef median_net_emit(emit *e, LLVMTypeRef t, LLVMValueRef p, int len, median_minmax_fn mm,
                             void *ctx, LLVMValueRef *nan);

#endif
