/* The stage-level runtime of image perforation: sampling masks and reconstruction on a
 * stage's lattice view and float masks, mapped onto the kernels of reconstruct/runtime.h
 * exactly as docs/perforation.md (Sections 2-3) defines. Generated code and the reference
 * interpreter (interp/) call these functions directly. Like the kernels, this file is shipped
 * as source in exported C libraries: it uses only libc, libm and the kernels, keeps no state,
 * never prints, and is safe to call from many threads at once.
 *
 * Conventions (beyond lang/approx_rt.h's):
 * - A view is any pf_buffer (1 to 4 dimensions, extents >= 1, any positive strides, x stride
 *   included). The kernels want planar images with x stride 1, so a view that is not already
 *   one is gathered into scratch memory, and the reconstructed (skipped) elements are scattered
 *   back; computed elements are never written, so they keep their values bit for bit.
 * - The **mask plane** of a view is its first two dimensions (extent[0] x extent[1]; a 1-D view
 *   has extent[1] = 1); every further dimension is reconstructed plane by plane with the same
 *   mask. A one-variable stage (mask plane n1 x 1) therefore passes to pf_srt_reconstruct a view
 *   with a unit dimension inserted after the first, e.g. (n1, 1, H, C) for a stage `(x)` over
 *   [W, H, C], with spacing[1] = 1; a one-variable stage over a 4-D image calls it once per
 *   index of the last dimension.
 * - Masks are float planes (mask plane size, row stride extent[0]): 0 = skipped, nonzero =
 *   computed (1, or 2 for adaptive sampling's first pass).
 * - Every function returns 0 (PF_RT_OK) or a negative pf_rt_status (reconstruct/runtime.h):
 *   PF_RT_EINVAL for bad arguments (checked before anything is written), PF_RT_ENOMEM, or
 *   PF_RT_ENOSAMPLE for a mask without samples. */
#ifndef PF_RECONSTRUCT_STAGE_RT_H
#define PF_RECONSTRUCT_STAGE_RT_H

#include "base/par.h"
#include "lang/approx_rt.h"

/* Importance sampling (docs/perforation.md §2). The reference R (ref: the whole image) is
 * sampled on the n1 x n2 mask plane at R0[j1, j2] = R[clamp(lo[0] + j1*step[0]),
 * clamp(lo[1] + j2*step[1]), 0, ...] (each index clamped into R's extent, channel 0). The map is
 * pf_rt_importance_map(R0, sigma = (double)sigma_imp * n2), remapped to frac*n1*n2 samples and
 * dithered with Ostromoukhov's error diffusion. mask := 1 at the samples, 0 elsewhere;
 * remapped (may be NULL) receives M(x). */
int pf_srt_importance_mask(const pf_buffer *ref, const int64_t *lo, const int64_t *step,
                           int32_t n1, int32_t n2, float frac, float sigma_imp, float *mask,
                           float *remapped);
/* The same, the map's Gaussians split across threads (par; the remapping and the error
 * diffusion stay serial), bit-identical. */
int pf_srt_importance_mask_par(const pf_buffer *ref, const int64_t *lo, const int64_t *step,
                               int32_t n1, int32_t n2, float frac, float sigma_imp, float *mask,
                               float *remapped, pf_par_for par);

/* Adaptive sampling's first pass: mask := 2 at pf_rt_adaptive_coarse's samples, 0 elsewhere.
 * The _par forms of this and the next split their pixel rows with par (the selection in
 * priority order stays serial), bit-identical. */
int pf_srt_adaptive_coarse(int32_t n1, int32_t n2, int32_t k, float *mask);
int pf_srt_adaptive_coarse_par(int32_t n1, int32_t n2, int32_t k, float *mask, pf_par_for par);

/* Adaptive sampling's second pass, after the stage computed the coarse samples into view (the
 * lattice view: mask plane = its first two dimensions, all further dimensions count as the
 * channels of the refinement priority). mask := 2 at the coarse samples, 1 at the fine samples
 * still to compute, 0 elsewhere (recomputed, so the input mask is not read); is_fine (may be
 * NULL) := 1 on every element of a refined block, 0 elsewhere. */
int pf_srt_adaptive_refine(const pf_buffer *view, int32_t k, float frac, float *mask,
                           float *is_fine);
int pf_srt_adaptive_refine_par(const pf_buffer *view, int32_t k, float frac, float *mask,
                               float *is_fine, pf_par_for par);

/* Store reconstruction (docs/perforation.md §3): fills view's skipped elements per the table
 * of §3. Grid sampling derives its mask from spec->spacing (one entry per view dimension, each
 * >= 1; 1 beyond the stage's variables), so mask and aux may be NULL; adaptive and importance
 * sampling need mask, and gaussian-sv needs aux (importance: M(x); adaptive: is_fine). A spec
 * with recon PF_RECON_NONE, or sample PF_SAMPLE_ALL, changes nothing. */
int pf_srt_reconstruct(const pf_buffer *view, const pf_recon_spec *spec, const float *mask,
                       const float *aux);
/* The same with the kernels split across threads (base/par.h; NULL: serial): nearest,
 * gaussian and gaussian-sv by rows, columns or tiles, bit-identical at any thread count.
 * Grid linear and nearest (reconstruct/rt_grid.c, reached only where codegen/lower_fill.c
 * cannot lower the fill) stay serial. */
int pf_srt_reconstruct_par(const pf_buffer *view, const pf_recon_spec *spec, const float *mask,
                           const float *aux, pf_par_for par);

/* Channel subsampling's copy (docs/perforation.md §2): for every element of view whose index
 * in the last dimension is at least c0, view[j] := ref[p'], where p_d = lo[d] + j_d*step[d]
 * for the k stage dimensions (p_d = j_d beyond them) and p' is p clamped into ref's extents.
 * ref must have as many dimensions as view. */
int pf_srt_copy_channels(const pf_buffer *view, int32_t k, const int64_t *lo,
                         const int64_t *step, const pf_buffer *ref, int32_t c0);
/* The same split across threads by rows (base/par.h; NULL: serial). */
int pf_srt_copy_channels_par(const pf_buffer *view, int32_t k, const int64_t *lo,
                             const int64_t *step, const pf_buffer *ref, int32_t c0,
                             pf_par_for par);

#endif
