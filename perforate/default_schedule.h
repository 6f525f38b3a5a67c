/* The default execution schedule: what a stage without an `exec` line gets, so `perfora run`
 * is fast out of the box and the search starts from a good point. Part of making a plan
 * (plan.c); default_schedule.c says what it chooses and why. */
#ifndef PF_PERFORATE_DEFAULT_SCHEDULE_H
#define PF_PERFORATE_DEFAULT_SCHEDULE_H

#include "perforate/plan.h"

/* Sets the execution gene of every stage of the plan whose gene the schedule did not give
 * (exec_given false), from the plan's approximations, its scratch-window and per-tile-fill
 * facts and its target's vector lanes. */
void pf_default_schedule(pf_plan *plan);

/* The same for a GPU target (plan->target.gpu; default_gpu_schedule.c). */
void pf_default_gpu_schedule(pf_plan *plan);

/* Whether stage p (no exec line) may be computed per tile of its sole consumer (which has no
 * exec line and is computed root): it is exact or sampled on demand, and its consumer reads it
 * through a small stencil around its own x and y (default_schedule.c). */
bool pf_default_fusable(const pf_plan *plan, int p);

/* Whether the default schedule gives stage st the host's wider vectors (16 lanes on AVX-512):
 * its pixel calls exp, log, pow or a trigonometric function inside a loop; others get 8. */
bool pf_default_wide_math(const pf_stage *st);

#endif
