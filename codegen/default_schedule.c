/* The default execution schedule (see default_schedule.h): every stage is computed root in
 * program order; a stage whose iterations are independent runs its rows on the thread pool and
 * its x loop as 8-lane vector code (AVX2 width for floats). Serial (scatter) stages run as
 * written. The search starts from this schedule and measures speedups against it, so a speedup
 * is never just a better schedule of the exact program. */
#include "codegen/default_schedule.h"

#include "perforate/exec.h"

void pf_default_exec(const pf_program *prog, int stage, pf_exec_gene *out)
{
    *out = pf_exec_default();
    const pf_stage *st = prog->stages[stage];
    if (st->serial)
        return;
    out->vectorize = 8;
    out->parallel = true;
}
