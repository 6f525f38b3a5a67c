/* Multi-fidelity measurement: the promotion rule and the measured relation between the two
 * resolutions (search/fidelity.h). */
#include "search/fidelity.h"

#include "base/arena.h"
#include "search/evaluate.h"
#include "search/model_fit.h"

#include <math.h>
#include <stdlib.h>

double pf_fidelity_draw(const char *text, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = text; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    h ^= seed + 0x9e3779b97f4a7c15ull;  /* splitmix64's finaliser: every bit depends on both */
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    return (double)(h >> 11) / 9007199254740992.0;  /* 53 bits */
}

bool pf_fidelity_promote(const pf_front_point *low_front, int n, double error, double time,
                         double margin, double explore, const char *text, uint64_t seed,
                         bool *random)
{
    if (random)
        *random = false;
    if (!isfinite(error) || !isfinite(time))
        return false;
    if (pf_screen_may_reach(low_front, n, error, time, margin))
        return true;
    bool drawn = pf_fidelity_draw(text, seed) < explore;
    if (random)
        *random = drawn;
    return drawn;
}

void pf_fidelity_relate(const double *low_time, const double *low_error,
                        const double *full_time, const double *full_error, int n,
                        pf_fidelity_relation *out)
{
    double *v = pf_xmalloc(sizeof *v * 2 * (size_t)(n + 1)), *w = v + n;
    out->pairs = n;
    out->time_rho = pf_spearman(low_time, full_time, n);
    out->error_rho = pf_spearman(low_error, full_error, n);
    for (int i = 0; i < n; i++)
        v[i] = full_time[i] / low_time[i];
    out->time_ratio = n > 0 ? pf_fit_median(v, n) : 1;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (low_error[i] >= 0.01 && full_error[i] >= 0.01)
            v[m++] = full_error[i] / low_error[i];
    out->error_ratio = m > 0 ? pf_fit_median(v, m) : 1;
    for (int i = 0; i < n; i++)
        w[i] = fabs(out->time_ratio * low_time[i] - full_time[i]) / full_time[i];
    out->time_rel_err = n > 0 ? pf_fit_median(w, n) : NAN;
    free(v);
}
