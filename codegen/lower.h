/* Lowering: a checked program, its parameter values and a plan (perforate/plan.h: what is
 * approximated and how every stage is executed) become one loop-IR function taking the
 * pipeline's input and output buffers.
 *
 * Params are compile-time constants of a compiled variant; helper functions are inlined;
 * reductions over at most PF_UNROLL_REDUCTION constant taps are unrolled, so pure kernel
 * weights fold to constants. Every image read starts with its boundary check on (clamp_mask);
 * codegen/pass_bounds removes the checks it can prove unnecessary. */
#ifndef PF_CODEGEN_LOWER_H
#define PF_CODEGEN_LOWER_H

#include "base/error.h"
#include "codegen/ir.h"
#include "lang/lang.h"
#include "perforate/plan.h"

#define PF_UNROLL_REDUCTION 32

/* The plan must be of this program; the function lives in arena. */
ir_func *pf_lower(pf_arena *arena, const pf_program *prog, const pf_param_values *params,
                  const pf_plan *plan, pf_error *err);

#endif
