/* The paper's rules for the width of a Gaussian reconstruction: per pixel for the spatially
 * varying kernel (importance: sigma0 / M^(1/d); adaptive: fine vs coarse), and the single widths
 * of the spatially invariant kernel (grid: sigma times the spacings' geometric mean; irregular:
 * sigma / sqrt(frac), i.e. sigma in units of the mean sample spacing). */
#include "reconstruct/runtime.h"

#include <math.h>

/* sigma(x) at fine samples of adaptive sampling (the paper's 0.01: effectively the pixel alone). */
#define RT_SIGMA_FINE 0.01
/* The importance clamp, in units of sigma0 / sqrt(frac) (the prototype's 1.5). */
#define RT_SIGMA_IMPORTANCE_CLAMP 1.5

int pf_rt_sigma_importance(const float *remapped, size_t n, double sigma0, double frac,
                           float *sigma_map)
{
    if (!remapped || !sigma_map || n == 0 || !(sigma0 > 0.0) || !(frac > 0.0 && frac <= 1.0))
        return PF_RT_EINVAL;
    double cap = RT_SIGMA_IMPORTANCE_CLAMP * sigma0 / sqrt(frac);
    for (size_t i = 0; i < n; i++) {
        double m = remapped[i];
        /* d = 2: the filter's area, not its radius, is inversely proportional to the density. */
        double s = m > 0.0 ? sigma0 / sqrt(m) : cap;
        sigma_map[i] = (float)(s < cap ? s : cap);
    }
    return PF_RT_OK;
}

int pf_rt_sigma_adaptive(const uint8_t *is_fine, size_t n, double sigma0, int k,
                         float *sigma_map)
{
    if (!is_fine || !sigma_map || n == 0 || !(sigma0 > 0.0) || k < 1)
        return PF_RT_EINVAL;
    float coarse = (float)(sigma0 * k), fine = (float)RT_SIGMA_FINE;
    for (size_t i = 0; i < n; i++)
        sigma_map[i] = is_fine[i] ? fine : coarse;
    return PF_RT_OK;
}

double pf_rt_sigma_grid(double sigma, int ndims, const int64_t *spacing)
{
    if (ndims < 1 || !spacing)
        return sigma;
    double logsum = 0.0;
    for (int d = 0; d < ndims; d++)
        logsum += log((double)(spacing[d] > 1 ? spacing[d] : 1));
    return sigma * exp(logsum / ndims);
}

double pf_rt_sigma_irregular(double sigma, double frac)
{
    return frac > 0.0 ? sigma / sqrt(frac) : sigma;
}
