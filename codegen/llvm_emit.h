/* LLVM IR emission of a loop-IR function through the LLVM-C API (LLVM 16).
 *
 * The module defines `int32_t NAME(const pf_buffer *buffers)` (inputs then outputs, see
 * base/buffer.h) returning 0 on success and 1 when an allocation failed, plus an internal
 * `NAME.body` taking each buffer's data pointer as a `noalias` argument with its extents and
 * strides, so LLVM knows distinct images never alias. Callers must not pass overlapping
 * buffers, and every buffer's x stride must be 1 (the function returns 2 otherwise). */
#ifndef PF_CODEGEN_LLVM_EMIT_H
#define PF_CODEGEN_LLVM_EMIT_H

#include "base/error.h"
#include "codegen/ir.h"

#include <llvm-c/Core.h>

/* Builds the module in ctx. The entry point is named `name`. Returns NULL with err set when
 * LLVM's verifier rejects the result (a perfora bug, reported rather than crashing). */
LLVMModuleRef pf_llvm_emit(const ir_func *f, LLVMContextRef ctx, const char *name,
                           pf_error *err);

#endif
