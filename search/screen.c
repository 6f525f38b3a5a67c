/* Screening's rule (docs/search.md, "Screening"): a candidate timed briefly is timed in full
 * only if it may reach the training frontier. Its error is exact (the outputs are
 * deterministic); its screened time may be off by the noise of one short sample per image, so
 * it is set aside only when a point with no more error beats it by more than the margin. */
#include "search/evaluate.h"

#include "base/arena.h"

#include <string.h>

bool pf_screen_may_reach(const pf_front_point *front, int n, double error, double time,
                         double margin)
{
    double bound = time * (1 - margin);
    for (int i = 0; i < n; i++)
        if (front[i].error <= error && front[i].time < bound)
            return false;
    return true;
}

bool pf_front_add(pf_front_point **front, int *n, double error, double time)
{
    pf_front_point *f = *front;
    for (int i = 0; i < *n; i++)
        if (f[i].error <= error && f[i].time <= time)
            return false;
    int m = 0;
    for (int i = 0; i < *n; i++)
        if (!(error <= f[i].error && time <= f[i].time))
            f[m++] = f[i];
    f = pf_xrealloc(f, sizeof *f * (size_t)(m + 1));
    f[m++] = (pf_front_point){ error, time };
    *front = f;
    *n = m;
    return true;
}

pf_front_point *pf_front_copy(const pf_front_point *pts, int n)
{
    if (n <= 0)
        return NULL;
    pf_front_point *f = pf_xmalloc(sizeof *f * (size_t)n);
    memcpy(f, pts, sizeof *f * (size_t)n);
    return f;
}
