/* The reconstruction runtime: the sampling-mask builders and the "store" reconstruction kernels of
 * Image Perforation (Lou, Nguyen, Lawrence, Barnes, TOG 2016, Sections 3.1-3.2 and Appendix A).
 * It is called from JIT-compiled variants and from the reference interpreter, and it is shipped as
 * source inside exported C libraries, so it depends only on libc, libm and base/gauss.h, keeps no
 * state, never prints, and reports bad arguments by return code.
 *
 * Conventions shared by every function:
 * - Images are planar float: element (x, y, c) lives at data[c * plane + y * stride + x].
 * - A mask is a w * h array of uint8_t with row stride w: 1 = the sample is (to be) computed,
 *   0 = skipped. One 2-D mask serves every channel of a stage.
 * - Per-pixel maps (importance, sigma, index) are w * h arrays with row stride w.
 * - Store reconstruction writes only skipped pixels (mask 0): a computed sample keeps the value
 *   the stage produced, bit for bit. (Eq. (1) of the paper, I' = (G*I)/(G*S), would also smooth
 *   the computed samples; keeping them is never less accurate and keeps the mask meaningful.)
 * - Functions return PF_RT_OK or a negative pf_rt_status. Arguments are checked before anything is
 *   written; after PF_RT_ENOMEM outputs may be partly written.
 * - Every function runs in O(w * h) per channel, allocates its scratch with pf_rt_scratch (image
 *   sized) or malloc and frees it, and gives the same result on every call (no randomness, no
 *   state but the scratch cache: safe from many threads). A function that allocates and fails
 *   returns PF_RT_ENOMEM. (base/gauss.c's own scratch goes
 *   through pf_xmalloc, which dies on out-of-memory: the Gaussian kernels and the importance
 *   map inherit that.) */
#ifndef PF_RECONSTRUCT_RUNTIME_H
#define PF_RECONSTRUCT_RUNTIME_H

#include "base/par.h"

#include <stddef.h>
#include <stdint.h>

/* Scratch memory (rt_scratch.c): 64-byte aligned; NULL when bytes is 0 or memory is exhausted.
 * Freed blocks of 256 KB or more are kept (up to 16, 512 MB together) for the next request of
 * about their size, so a kernel called frame after frame does not fault its temporaries in
 * again; pf_rt_scratch_release frees them, as does unloading a shared object that carries
 * them. A block from pf_rt_scratch goes back through pf_rt_scratch_free, never free. */
void *pf_rt_scratch(size_t bytes);
void *pf_rt_scratch_zero(size_t bytes);
void pf_rt_scratch_free(void *p);
void pf_rt_scratch_release(void);
/* Bytes the cache keeps now (tests, diagnostics). */
size_t pf_rt_scratch_kept(void);

typedef enum pf_rt_status {
    PF_RT_OK = 0,
    PF_RT_EINVAL = -1,   /* a null pointer, a non-positive size, a fraction out of range ... */
    PF_RT_ENOMEM = -2,   /* scratch allocation failed */
    PF_RT_ENOSAMPLE = -3 /* the mask holds no sample, so nothing can be reconstructed */
} pf_rt_status;

/* ======================================================================================== */
/* Grid sampling (Section 3.1)                                                              */
/* ======================================================================================== */

/* Marks (x, y) with x = ox + i*sx, y = oy + j*sy (i, j >= 0) inside the w x h mask: the grid is
 * anchored at the loop start (ox, oy), not at 0 (paper-apps.md §0, "alignment caveat"). Requires
 * 0 <= ox < w, 0 <= oy < h, sx, sy >= 1. *count (if not NULL) receives the number of samples. */
int pf_rt_grid_mask(int w, int h, int ox, int oy, int sx, int sy, uint8_t *mask, size_t *count);

/* N-D views (ndims 1..4, like base/buffer.h's pf_buffer): element i lives at
 * data[i0*stride[0] + i1*stride[1] + ...]. A grid-sampled stage stored at full size holds computed
 * samples at origin[d] + k*spacing[d] (k >= 0, < extent[d]) in every dimension d; requires
 * 0 <= origin[d] < extent[d] and spacing[d] >= 1. Both functions fill every other element from the
 * samples, one dimension at a time (separable, so the result is the tensor-product rule):
 * - multilinear: linear between the two enclosing samples of each dimension; past the last sample
 *   the upper neighbour is clamped to the last sample (the prototype's rule), and before origin
 *   the first sample is copied;
 * - nearest: the nearest sample per dimension; a position exactly halfway takes the lower
 *   sample, so on a 2-D grid mask this equals pf_rt_recon_nearest's tie rule. */
int pf_rt_grid_multilinear(float *data, int ndims, const int64_t *extent, const int64_t *stride,
                           const int64_t *origin, const int64_t *spacing);
int pf_rt_grid_nearest(float *data, int ndims, const int64_t *extent, const int64_t *stride,
                       const int64_t *origin, const int64_t *spacing);

/* ======================================================================================== */
/* Importance sampling (Section 3.1, Appendix A)                                            */
/* ======================================================================================== */

/* Histogram bins of the Appendix A remapping (the paper's m). */
#define PF_RT_REMAP_BINS 1000
/* The importance map is floored at this fraction of its mean, so that flat regions still get
 * about 1% of the average sample density and no region is left without samples. */
#define PF_RT_IMPORTANCE_FLOOR 0.01

/* The importance map of the paper (Bae et al.'s texturedness with a Gaussian in place of the
 * bilateral filter): B = G_sigma * I0, map = G_sigma * |B - I0|, where I0 is channel 0 of the
 * reference image (ref points at that plane) and G_sigma the IIR Gaussian of base/gauss.h
 * (borders replicate the edge). sigma is in pixels: the schedule's sigma_imp is a fraction of the
 * image height, so callers pass sigma_imp * h. The map is then floored at
 * PF_RT_IMPORTANCE_FLOOR * mean; a map that is 0 everywhere (flat image) becomes 1 everywhere.
 * map is w * h (row stride w). */
int pf_rt_importance_map(const float *ref, int w, int h, size_t stride, double sigma, float *map);
/* The same, its two Gaussians split across threads (base/par.h; NULL: serial), bit-identical. */
int pf_rt_importance_map_par(const float *ref, int w, int h, size_t stride, double sigma,
                             float *map, pf_par_for par);

/* Appendix A: finds the scale s with sum_i min(s*v_i, 1) = frac*n from a histogram of
 * PF_RT_REMAP_BINS bins over [0, max v] (bin centres x_k, cumulative H_k and X_k,
 * s_k = (H_k - n(1-frac)) / X_k, the first k with s_k x_k < 1+eps and (k = m-1 or
 * s_k x_{k+1} >= 1-eps)), then writes v'_i = min(s v_i, 1) to remapped (which may alias map).
 * Appendix A alone misses eq. (2) by far more than the paper's 0.5% on heavy-tailed maps (40% on
 * a lognormal with sigma 2, 5% on one training photo's importance map at frac 0.95: bin centres
 * misplace everything that falls into the few lowest bins), so its s is then polished on the data
 * (see rt_importance.c): with the saturated set frozen eq. (2) is linear, and re-solving it until
 * the set stops changing gives the exact solution, typically in two extra O(n) passes (16 at
 * most).
 * Negative, NaN and infinite values count as 0; zeros are kept out of the histogram (they get
 * no samples at any scale) and n in s_k counts the nonzero values. A map without any positive
 * value is taken as uniform (v' = frac everywhere, s = frac). If no split point satisfies the
 * constraints (round-off), eq. (3) is solved by bisection instead. frac in (0, 1]. *scale (if not
 * NULL) receives s (+inf when every nonzero value saturates). O(n + m). */
int pf_rt_importance_remap(const float *map, size_t n, double frac, float *remapped,
                           double *scale);
/* The same with its passes over the map split by par (bit-identical at any thread count: the
 * sums stay serial). */
int pf_rt_importance_remap_par(const float *map, size_t n, double frac, float *remapped,
                               double *scale, pf_par_for par);
/* Appendix A's scale alone, before polishing (for tests and diagnostics); NaN on bad arguments. */
double pf_rt_importance_scale_appendix_a(const float *map, size_t n, double frac);

typedef enum pf_rt_dither_method {
    PF_RT_DITHER_OSTROMOUKHOV = 0,   /* variable coefficients (Ostromoukhov 2001): blue noise */
    PF_RT_DITHER_FLOYD_STEINBERG = 1 /* 7/16, 3/16, 5/16, 1/16 */
} pf_rt_dither_method;

/* Error diffusion of a density in [0, 1] (values outside are clamped) to a 0/1 mask with a
 * serpentine scan (even rows left to right), threshold 1/2. A pixel of density exactly 0 never
 * becomes a sample (Ostromoukhov's "black stays black"). Plain error diffusion loses the error
 * pushed off the image's sides and the error still in flight when the scan ends: 3-6% of the
 * budget at 256x192, f = 0.025. So (see rt_dither.c) sideways error is folded into the row below,
 * the scan starts from the error state of a warm-up pass over the last 16 rows (as if the image
 * wrapped vertically), and the count is then made exactly round(sum of densities): missing
 * samples go to the unsampled pixels whose corrected level came closest to the threshold,
 * preferring pixels with no sample among their 8 neighbours; surplus ones leave the samples that
 * fired with the least margin. If the count is still 0 but some density is positive, the first
 * pixel of highest density is marked, so a stage always has a sample. *count (if not NULL)
 * receives the number of samples. */
int pf_rt_dither(const float *density, int w, int h, pf_rt_dither_method method, uint8_t *mask,
                 size_t *count);

/* Ostromoukhov's published coefficients for input level 0..255: {right, down-left, down, sum}
 * (NULL outside). Exposed so that tests can check the table against its published sums. */
const short *pf_rt_ostromoukhov_row(int level);

/* Importance sampling of a stage: remaps map (from pf_rt_importance_map or the programmer's own
 * non-negative map) to frac*n samples and dithers it. remapped (if not NULL) receives M(x), the
 * remapped importance that pf_rt_sigma_importance needs. frac in (0, 1]. */
int pf_rt_importance_mask(const float *map, int w, int h, double frac, pf_rt_dither_method method,
                          uint8_t *mask, float *remapped, size_t *count);
/* The same with the remapping split by par (the dithering is serial: an error diffusion). */
int pf_rt_importance_mask_par(const float *map, int w, int h, double frac,
                              pf_rt_dither_method method, uint8_t *mask, float *remapped,
                              size_t *count, pf_par_for par);

/* ======================================================================================== */
/* Adaptive sampling (Section 3.1, the paper's version)                                     */
/* ======================================================================================== */

/* The coarse grid has one sample per k x k tile (tiles ceil(w/k) x ceil(h/k), tile (i, j) covers
 * x in [k*i, k*i + k)), at the tile centre k*i + k/2, clamped to the last pixel for a partial
 * last tile. The paper does not say where the coarse samples sit; the centre (the prototype's
 * choice) makes the k-hat x k-hat refinement block centred on it cover its own tile. */
static inline int pf_rt_adaptive_coarse_pos(int tile, int k, int extent)
{
    int p = k * tile + k / 2;
    return p < extent ? p : extent - 1;
}

/* First pass: the mask of the coarse samples (k >= 1). *count receives their number. The _par
 * form splits the rows with par (base/par.h), bit-identical. */
int pf_rt_adaptive_coarse(int w, int h, int k, uint8_t *mask, size_t *count);
int pf_rt_adaptive_coarse_par(int w, int h, int k, uint8_t *mask, size_t *count, pf_par_for par);
/* The coarse mask as the product of a column line and a row line: w + h bytes (free them),
 * [x] = 1 where column x holds coarse samples, [w + y] = 1 where row y does, else 0; NULL when
 * out of memory. */
uint8_t *pf_rt_adaptive_coarse_lines(int w, int h, int k);

/* Second pass, after the stage has computed its coarse samples into data (channels planes; only
 * the coarse positions are read). Each coarse sample's refinement priority is the sum over
 * channels of |v - v_n| over its 8 coarse neighbours (tiles at +-1, i.e. +-k pixels); where the
 * border removes neighbours the sum over the present ones is scaled by 8/present, so border tiles
 * compete on equal terms (a lone tile has priority 0). Tiles are refined in decreasing priority
 * (ties: lower tile index, row-major, first) by marking the k-hat x k-hat block centred on the
 * coarse sample (k-hat = k rounded up to odd, clipped to the image) until the number of distinct
 * samples, coarse ones included, reaches round(frac*w*h); it stops after the block that reaches
 * it, so it overshoots by less than k-hat^2. The order is found with O(n) histograms (refined
 * only within the bin where the count is reached), not with a sort; only priorities spread over
 * many decades need more than 8 histogram levels, and then the remaining bin is sorted.
 * Outputs: fine_mask = the samples to compute in the second pass (in a block and not coarse);
 * is_fine (if not NULL) = 1 on every pixel of a refined block (for pf_rt_sigma_adaptive);
 * *count (if not NULL) = coarse + fine samples. The full sample mask is coarse | fine_mask. */
int pf_rt_adaptive_refine(const float *data, int w, int h, int channels, size_t stride,
                          size_t plane, int k, double frac, uint8_t *fine_mask, uint8_t *is_fine,
                          size_t *count);
/* The same with the coarse mask, the priorities and the outputs split by rows with par; the
 * selection in priority order stays serial. Bit-identical. */
int pf_rt_adaptive_refine_par(const float *data, int w, int h, int channels, size_t stride,
                              size_t plane, int k, double frac, uint8_t *fine_mask,
                              uint8_t *is_fine, size_t *count, pf_par_for par);

/* ======================================================================================== */
/* Store reconstruction (Section 3.2)                                                       */
/* ======================================================================================== */

/* The nearest sample of every pixel by Manhattan distance (Rosenfeld & Pfaltz), computed
 * separably: a column pass (down, up) then a row pass (right, left), which is the same two-pass
 * city-block transform split by axis. Ties go to the sample first in row-major order (smaller y,
 * then smaller x); the split makes that rule exact, not scan-order dependent. index[p] = y*w + x
 * of the sample; dist (if not NULL) receives the distance. Returns PF_RT_ENOSAMPLE (index left
 * unwritten) if the mask is empty. Requires w*h < 2^31. */
int pf_rt_nearest_index(const uint8_t *mask, int w, int h, int32_t *index, int32_t *dist);

/* Nearest reconstruction: each skipped pixel copies every channel of its nearest sample (rule
 * above). */
int pf_rt_recon_nearest(float *data, int w, int h, int channels, size_t stride, size_t plane,
                        const uint8_t *mask);
/* The same copy, but only into the pixels where `where` (w * h) is nonzero; the Gaussian kernels
 * use it for their fallback. A sample in `where` copies itself. */
int pf_rt_recon_nearest_at(float *data, int w, int h, int channels, size_t stride, size_t plane,
                           const uint8_t *mask, const uint8_t *where);
/* Both split across threads (base/par.h; NULL: serial): the column sweeps by blocks of 64
 * columns, the row sweeps and the copy by rows; bit-identical at any thread count. */
int pf_rt_recon_nearest_par(float *data, int w, int h, int channels, size_t stride, size_t plane,
                            const uint8_t *mask, pf_par_for par);
int pf_rt_recon_nearest_at_par(float *data, int w, int h, int channels, size_t stride,
                               size_t plane, const uint8_t *mask, const uint8_t *where,
                               pf_par_for par);

/* Below this weight a Gaussian reconstruction has no sample close enough to trust the ratio and
 * the pixel falls back to nearest (the prototype used 1e-44, i.e. exactly zero in float; ours is
 * relative to a weight of 1 at the filter's centre, see rt_gauss.c). */
#define PF_RT_GAUSS_MIN_WEIGHT 1e-6

/* Gaussian reconstruction by normalised convolution, eq. (1): I' = (G*(I.S)) / (G*S) per channel
 * with the Young-van Vliet IIR Gaussian (base/gauss.h, edges replicated), written at skipped
 * pixels; where the denominator, relative to the filter's peak, is below PF_RT_GAUSS_MIN_WEIGHT
 * the pixel takes its nearest sample. sigma is the final width in pixels (> 0; base/gauss.h
 * raises it to 0.5 at least); see pf_rt_sigma_grid and pf_rt_sigma_irregular for the paper's
 * rules. */
int pf_rt_recon_gaussian(float *data, int w, int h, int channels, size_t stride, size_t plane,
                         const uint8_t *mask, double sigma);
/* The same split across threads (base/par.h; NULL: serial): the mask, numerator and division
 * by rows, the blur's x pass by rows and its y pass by column blocks; bit-identical at any
 * thread count. */
int pf_rt_recon_gaussian_par(float *data, int w, int h, int channels, size_t stride,
                             size_t plane, const uint8_t *mask, double sigma, pf_par_for par);

/* Spatially varying Gaussian by repeated integration (Heckbert 1986): two integrations per axis
 * give a separable tent per pixel, evaluated as a 5 x 5 tap second difference of summed-area
 * tables (double precision, built per 64-pixel tile plus a halo of the largest radius, so that
 * their values stay small; see rt_gauss_sv.c). The tent of integer half-width r has weights
 * r - |j| (|j| < r) and variance (r^2 - 1)/6; a fractional r = r0 + a blends the tents of r0 and
 * r0 + 1 (weights (1-a) and a on the unnormalised tents), which keeps the filter continuous in
 * sigma. r = pf_rt_tent_radius(sigma(x)) matches the variance exactly at integer r. sigma_map
 * (w * h) gives sigma(x) in pixels at every skipped pixel; samples outside the image count as
 * absent (zero weight). Numerator and denominator are one normalised convolution; where the
 * denominator is below PF_RT_SV_MIN_WEIGHT times the tent's peak weight (r^2: the weight a
 * sample would have at the pixel itself) the pixel falls back to nearest. Scratch memory is
 * about (T + 2r)^2 * 8 * (channels + 1) bytes, T = max(64, 2r): 34 MB at the cap for RGB. */
#define PF_RT_SV_MIN_WEIGHT 1e-4
#define PF_RT_SV_MAX_RADIUS 256.0 /* tents are capped here (sigma ~ 104 pixels) */
int pf_rt_recon_gaussian_sv(float *data, int w, int h, int channels, size_t stride, size_t plane,
                            const uint8_t *mask, const float *sigma_map);
/* The same with rows of tiles split across threads (base/par.h; NULL: serial), each thread
 * with its own tables; bit-identical at any thread count. */
int pf_rt_recon_gaussian_sv_par(float *data, int w, int h, int channels, size_t stride,
                                size_t plane, const uint8_t *mask, const float *sigma_map,
                                pf_par_for par);

/* r = sqrt(6 sigma^2 + 1), capped to [1, PF_RT_SV_MAX_RADIUS]; sigma <= 0 or NaN gives 1 (the
 * pixel alone, so a skipped pixel falls back to nearest). */
double pf_rt_tent_radius(double sigma);

/* The paper's sigma(x) for importance sampling in d = 2 dimensions: sigma0 / M(x)^(1/2), where M
 * is the remapped importance (pf_rt_importance_mask's remapped), clamped to at most
 * 1.5 * sigma0 / sqrt(frac) (the prototype's clamp, which also covers M = 0). */
int pf_rt_sigma_importance(const float *remapped, size_t n, double sigma0, double frac,
                           float *sigma_map);

/* sigma(x) for adaptive sampling: 0.01 where is_fine, sigma0 * k elsewhere. This is the paper's
 * rule (Section 3.2); the prototype used sigma0 * k / sqrt(2). We follow the paper so that sigma0
 * keeps one meaning (a multiple of the coarse spacing) across the paper's text and the schedule;
 * the GA's sigma0 range absorbs the constant. */
int pf_rt_sigma_adaptive(const uint8_t *is_fine, size_t n, double sigma0, int k,
                         float *sigma_map);

/* The width of a (spatially invariant) Gaussian reconstruction, as the prototype defines it:
 * sigma times the geometric mean of the grid spacings for grid sampling; sigma / sqrt(frac) for
 * importance and adaptive sampling. */
double pf_rt_sigma_grid(double sigma, int ndims, const int64_t *spacing);
double pf_rt_sigma_irregular(double sigma, double frac);

#endif
