/* Lowering: a checked program (with its approximation annotations) and its parameter values
 * become one loop-IR function taking the pipeline's input and output buffers.
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

#define PF_UNROLL_REDUCTION 32

struct pf_exec_gene;

/* exec: the execution gene of each stage (by stage index; an unset gene or a NULL array means
 * the default schedule of codegen/default_schedule.c). */
ir_func *pf_lower(pf_arena *arena, const pf_program *prog, const pf_param_values *params,
                  const struct pf_exec_gene *exec, pf_error *err);

/* Whether a producer computed at its consumer keeps its image in a per-tile scratch window
 * (lower_at.c) rather than in full-size storage. */
bool pf_lower_at_scratch_ok(const pf_program *prog, const pf_stage *p);

/* Whether a store-mode grid stage, tiled along x and y, reconstructs its image per tile
 * (lower_fill.c): linear or nearest, over the whole image, spacing 1 beyond x and y, and
 * nothing else touches the image. */
bool pf_lower_tile_fill_ok(const pf_program *prog, const pf_stage *st);

#endif
