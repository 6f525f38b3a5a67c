/* How a kernel that ships in exported libraries (base/gauss.c, reconstruct/) splits its rows or
 * columns across threads without depending on a thread pool: the caller passes a `pf_par_for`
 * (generated code passes codegen/runtime.h's pf_rt_parallel_for, which has this type), or NULL
 * to run serially (the interpreter, tests, dataset/). A task runs iterations [begin, end) and
 * returns 0 or a negative status; iterations must be independent, and a kernel's result must
 * not depend on how they are split (each iteration computes the same values in the same order
 * whatever the thread count, so outputs are bit-identical at any thread count). */
#ifndef PF_BASE_PAR_H
#define PF_BASE_PAR_H

#include <stdint.h>

typedef int32_t (*pf_par_task)(void *closure, int32_t begin, int32_t end);
/* Runs fn over [0, n) and returns the first non-zero status of a task. */
typedef int32_t (*pf_par_for)(pf_par_task fn, void *closure, int32_t n);

static inline int32_t pf_par_run(pf_par_for par, pf_par_task fn, void *closure, int32_t n)
{
    if (n <= 0)
        return 0;
    return par ? par(fn, closure, n) : fn(closure, 0, n);
}

#endif
