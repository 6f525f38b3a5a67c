/* The default execution schedule: what a stage without an `exec` line gets, so `perfora run`
 * is fast out of the box and the search starts from a good point. */
#ifndef PF_CODEGEN_DEFAULT_SCHEDULE_H
#define PF_CODEGEN_DEFAULT_SCHEDULE_H

#include "lang/ast.h"
#include "perforate/schedule.h"

void pf_default_exec(const pf_program *prog, int stage, pf_exec_gene *out);

#endif
