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
#include "codegen/split.h"

#include <llvm-c/Core.h>

/* Builds the module in ctx. The entry point is named `name`. vector_math: exp, log, pow... on
 * vectors as perfora's inline code and libmvec (llvm_vmath.c), else one libm call per lane.
 * Returns NULL with err set when LLVM's verifier rejects the result (a perfora bug, reported
 * rather than crashing). */
LLVMModuleRef pf_llvm_emit(const ir_func *f, LLVMContextRef ctx, const char *name,
                           bool vector_math, pf_error *err);

/* Module `module` of a split compile (split.h): the same code, where each piece of the plan
 * is a function `pf_piece_N` defined only in its own module (declared in the others) and the
 * entry point is defined only in module 0. With split NULL or of one module, pf_llvm_emit. */
LLVMModuleRef pf_llvm_emit_part(const ir_func *f, LLVMContextRef ctx, const char *name,
                                const pf_split *split, int module, bool vector_math,
                                pf_error *err);

/* Sets the cost of every piece of p (from pf_split_candidates: each in a module of its own) to
 * the LLVM instructions emitted for it (vector ones counted half: llvm_split.c), and
 * p->load[0] to those of the rest: what compiling
 * each will cost, better than the loop IR can tell (a clamped load or a vector loop expands
 * unevenly). Returns 0, or -1 with err set. */
int pf_llvm_measure_pieces(const ir_func *f, pf_split *p, bool vector_math, pf_error *err);

/* The vector exp (llvm_vexp.c) scales by 2^n with AVX-512's vscalefps where the host has it;
 * set this to emit the other hosts' way (two exponent fields) instead: for tests, so both
 * ways are checked on one machine. */
extern bool pf_llvm_exp_no_scalef;

#endif
