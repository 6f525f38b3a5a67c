/* Applying a schedule: fills the approximation annotations of lang/approx.h on a checked
 * program, and removes them again, so one parsed program serves many candidates (the search
 * parses once and applies / clears per candidate).
 *
 * Before:  stage loop_temp: approx NULL;  temp[...] reads in loop_output: approx NULL
 * After `loop_temp grid 4 1 1 reconstruct on-demand linear`:
 *          loop_temp->approx = {GRID, spacing 4 1 1, LINEAR, on_demand}
 *          every temp[...] read in a LATER stage: approx = {writer = loop_temp}
 *
 * Guarantees: an exact schedule leaves every annotation NULL; the annotations point only into
 * prog->arena (never into the schedule, which may be freed at once); a failed apply leaves the
 * program exact. */
#ifndef PF_PERFORATE_APPLY_H
#define PF_PERFORATE_APPLY_H

#include "base/error.h"
#include "lang/ast.h"
#include "perforate/schedule.h"

/* Clears, validates, then annotates: pf_stage_approx on approximated stages (with `ref` and,
 * for loop perforation, perf.id = the loop's index), pf_loop_approx on approximated named for
 * loops, and for an on-demand stage whose image is not a pipeline output a pf_read_approx
 * (writer = the stage) on every read of its image in later stages. On a pipeline output,
 * on-demand runs as store (on_demand false). Each call allocates a few hundred bytes at most
 * in prog->arena (freed with the program): cheap, but not free for millions of candidates. */
int pf_schedule_apply(pf_program *prog, const pf_schedule *s, pf_error *err);

/* Removes every approximation annotation (stages, named loops, image reads). */
void pf_schedule_clear(pf_program *prog);

/* Calls fn on every PF_E_IMAGE_READ of a stage's body (statement order, operands left to
 * right), including reads nested in indices, bounds and reductions. */
typedef void (*pf_read_visitor)(pf_expr *read, void *ctx);
void pf_stage_visit_reads(pf_stage *st, pf_read_visitor fn, void *ctx);

#endif
