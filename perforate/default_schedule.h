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
/* The part of that which holds for every plan of the program: stage p has a sole consumer,
 * both run over x and y in parallel, and the consumer reads p through a small stencil. When
 * false the default never computes p at its consumer (the bilateral filter's table). */
bool pf_default_may_fuse(const pf_program *prog, int p);
/* Whether the default computes stage s at the root with no stage computed at it, whatever the
 * approximations: neither s nor a producer whose sole consumer it is may be fused (the
 * bilateral filter's pixels and table; every stage that pf_exec_runs_alone). An execution gene
 * there changes nothing but what its own fields say. */
bool pf_default_alone(const pf_program *prog, int s);

/* Whether the default schedule gives stage st the host's wider vectors (16 lanes on AVX-512):
 * its pixel calls exp, log, pow or a trigonometric function inside a loop; others get 8. */
bool pf_default_wide_math(const pf_stage *st);
/* The vector width the default gives stage st on a target whose preferred registers hold
 * wide_lanes floats: 0 for a serial stage, wide_lanes for wide math, else 8. */
int pf_default_width(const pf_stage *st, int wide_lanes);

#endif
