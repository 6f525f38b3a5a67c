/* The default execution schedule: what a stage without an `exec` line gets, so `perfora run`
 * is fast out of the box and the search starts from a good point. */
#ifndef PF_CODEGEN_DEFAULT_SCHEDULE_H
#define PF_CODEGEN_DEFAULT_SCHEDULE_H

#include "lang/ast.h"
#include "perforate/schedule.h"

/* out[i] = given[i] where that is set (an `exec` line), else the default gene of stage i;
 * given may be NULL. */
void pf_default_schedule(const pf_program *prog, const pf_exec_gene *given, pf_exec_gene *out);
/* The same for a host whose preferred vector registers hold wide_lanes floats (8 or 16;
 * pf_default_schedule passes pf_jit_wide_float_lanes()). */
void pf_default_schedule_for(const pf_program *prog, const pf_exec_gene *given, int wide_lanes,
                             pf_exec_gene *out);

#endif
