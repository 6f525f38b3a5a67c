/* The default execution schedule (see default_schedule.h). Today a deliberately plain rule:
 * every stage is computed root, in program order, exactly as written (the exact-time reference
 * of the search is this schedule). */
#include "codegen/default_schedule.h"

#include "perforate/exec.h"

void pf_default_exec(const pf_program *prog, int stage, pf_exec_gene *out)
{
    (void)prog;
    (void)stage;
    *out = pf_exec_default();
}
