/* The reference interpreter: runs a checked program, exactly or as a plan approximates it, as
 * docs/language.md and docs/perforation.md define. It is the semantic oracle every backend is
 * compared against, so it shares no lowering code with codegen/: it walks the checked AST
 * directly, reads the plan's approximations (its execution genes change no value, so it runs
 * every stage its own way), and calls the sampling and reconstruction runtime
 * (reconstruct/stage_rt.h) itself. */
#ifndef PF_INTERP_H
#define PF_INTERP_H

#include "base/buffer.h"
#include "base/error.h"
#include "lang/lang.h"
#include "perforate/plan.h"

/* Runs the pipeline once, as plan approximates it (NULL: exactly). `binding` comes from
 * pf_bind() with the same params; inputs[i] and outputs[i] follow prog->inputs /
 * prog->outputs and have the bound extents (the caller allocates the outputs; the interpreter
 * overwrites every element, unwritten ones with 0). Intermediate images are allocated and
 * freed inside. Returns 0, or -1 with err set (e.g. an extent mismatch). */
int pf_interp_run(const pf_program *prog, const pf_param_values *params, const pf_plan *plan,
                  const pf_binding *binding, const pf_buffer *inputs, const pf_buffer *outputs,
                  pf_error *err);

/* Evaluates a helper function on scalar arguments (for tests and constant folding). */
int pf_interp_call(const pf_program *prog, const pf_param_values *params, const pf_func *f,
                   const pf_value *args, pf_value *result, pf_error *err);

#endif
