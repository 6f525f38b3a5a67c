/* The reference interpreter: runs a checked program exactly as docs/language.md defines it.
 * It is the semantic oracle every backend is compared against, so it shares no lowering code
 * with codegen/: it walks the checked AST directly. */
#ifndef PF_INTERP_H
#define PF_INTERP_H

#include "base/buffer.h"
#include "base/error.h"
#include "perforate/approx.h"
#include "lang/lang.h"

/* Runs the pipeline once. `binding` comes from pf_bind() with the same params; inputs[i] and
 * outputs[i] follow prog->inputs / prog->outputs and have the bound extents (the caller
 * allocates the outputs; the interpreter overwrites every element, unwritten ones with 0).
 * Intermediate images are allocated and freed inside. Returns 0, or -1 with err set (e.g. an
 * extent mismatch). A program carrying approximation annotations (lang/approx.h) is refused:
 * it needs pf_interp_run_approx. */
int pf_interp_run(const pf_program *prog, const pf_param_values *params,
                  const pf_binding *binding, const pf_buffer *inputs, const pf_buffer *outputs,
                  pf_error *err);

/* The same for an approximated program: every annotation is executed as docs/perforation.md
 * defines (sampling, loop perforation, store and on-demand reconstruction, channels), with
 * masks and reconstruction computed by `rt` (reconstruct/stage_rt.h's pf_srt_table(); lang/
 * cannot call reconstruct/ itself). rt may be NULL only for an exact program. Annotations that
 * do not fit the program (e.g. on-demand storage of an image two stages write) are refused
 * with a message naming the stage. */
int pf_interp_run_approx(const pf_program *prog, const pf_param_values *params,
                         const pf_binding *binding, const pf_buffer *inputs,
                         const pf_buffer *outputs, const pf_approx_runtime *rt, pf_error *err);

/* Evaluates a helper function on scalar arguments (for tests and constant folding). */
int pf_interp_call(const pf_program *prog, const pf_param_values *params, const pf_func *f,
                   const pf_value *args, pf_value *result, pf_error *err);

#endif
