/* What the schedule files of perforate/ share beyond schedule.h. Not a public interface. */
#ifndef PF_PERFORATE_SCHEDULE_INTERNAL_H
#define PF_PERFORATE_SCHEDULE_INTERNAL_H

#include "perforate/schedule.h"

/* pf_schedule_validate without the per-gene checks (the parser made them line by line): the
 * rules that span genes, namely reference images stored on demand and the execution genes
 * (which refer to each other and to the approximations). */
int pf_schedule_validate_links(const pf_program *prog, const pf_schedule *s, pf_error *err);

#endif
