/* The generated code's buffers (pf_rt_alloc, pf_rt_free): the runtime's scratch blocks
 * (reconstruct/rt_scratch.c: 64-byte aligned, large freed blocks kept for the next call of a
 * pipeline), zeroed or, in tests, filled with NaN. */
#include "codegen/runtime.h"
#include "reconstruct/runtime.h"

#include <math.h>

static int poison;  /* set before compiled code runs, read only while it runs */

void pf_rt_set_poison(bool on)
{
    poison = on;
}

void *pf_rt_alloc(int64_t bytes, int32_t zero)
{
    if (bytes <= 0 || (uint64_t)bytes > ((uint64_t)1 << 40))
        return NULL;
    size_t n = ((size_t)bytes + 63) & ~(size_t)63;
    float *p = zero ? pf_rt_scratch_zero(n) : pf_rt_scratch(n);
    if (p && !zero && poison)
        for (size_t i = 0; i < n / sizeof(float); i++)
            p[i] = NAN;
    return p;
}

void pf_rt_free(void *p)
{
    pf_rt_scratch_free(p);
}

void pf_rt_alloc_release(void)
{
    pf_rt_scratch_release();
}
