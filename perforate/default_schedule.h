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

#endif
