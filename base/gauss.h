/* Recursive (IIR) Gaussian blur of Young and van Vliet 1995 ("Recursive implementation of the
 * Gaussian filter", Signal Processing 44), on one float plane with a row stride. Shared by the
 * texturedness measure (dataset/) and the reconstruction kernels (reconstruct/). Cost is O(1)
 * per pixel whatever sigma. Borders are handled by replicating the edge sample. */
#ifndef PF_BASE_GAUSS_H
#define PF_BASE_GAUSS_H

#include "base/par.h"

#include <stddef.h>

/* Blurs a width x height plane in place along x then y with standard deviation sigma (pixels).
 * sigma <= 0 means no blur along that axis; 0 < sigma < 0.5 is raised to 0.5, the smallest
 * sigma the recursion's coefficient formula supports. Returns 0, or -1 when scratch memory ran
 * out (the plane is then left partly blurred). Depends on libc and libm only: it ships inside
 * exported libraries. */
int pf_gauss_iir_2d(float *plane, int width, int height, size_t stride, double sigma_x,
                    double sigma_y);

/* The same, its x pass split across threads by blocks of 16 rows and its y pass by blocks of 32
 * columns (base/par.h; NULL: serial). Each row and column is filtered exactly as
 * pf_gauss_iir_1d filters it, so the result is bit-identical at any thread count. */
int pf_gauss_iir_2d_par(float *plane, int width, int height, size_t stride, double sigma_x,
                        double sigma_y, pf_par_for par);

/* One axis's filter: w[n] = B x[n] + a1 w[n-1] + a2 w[n-2] + a3 w[n-3] (evaluated in double in
 * that order, the causal pass starting in the steady state of x[0]), then the same backwards.
 * m is the 3x3 map from the causal pass's last three states (minus the edge value) to the
 * anti-causal pass's first three states (minus the edge value) for a signal that continues with
 * its last sample. Exposed so that code generators (codegen/lower_gauss_gpu.c) filter with the
 * very same coefficients. */
typedef struct pf_yvv {
    double B, a1, a2, a3;
    double m[3][3];
} pf_yvv;

/* The filter of sigma (raised to 0.5 when below); 0 (nothing filled) when sigma <= 0 or NaN,
 * which means no blur along that axis; 1 otherwise. */
int pf_gauss_yvv(double sigma, pf_yvv *c);

/* One dimension: n samples spaced `step` floats apart. */
int pf_gauss_iir_1d(float *data, int n, size_t step, double sigma);

#endif
