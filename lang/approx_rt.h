/* The part of the approximation vocabulary that the runtime of generated code needs too:
 * sampling and reconstruction kinds, a reconstruction's parameters, and the stage runtime's
 * function table. Plain C with no dependence on the AST, because reconstruct/stage_rt.c is
 * shipped inside exported C libraries. See perforate/approx.h and docs/perforation.md. */
#ifndef PF_LANG_APPROX_RT_H
#define PF_LANG_APPROX_RT_H

#include "base/buffer.h"

#include <stdint.h>

typedef enum pf_sample_kind {
    PF_SAMPLE_ALL,         /* every lattice point (e.g. only channel subsampling) */
    PF_SAMPLE_GRID,        /* j_d % spacing[d] == 0 in every stage dimension */
    PF_SAMPLE_ADAPTIVE,    /* coarse grid of spacing k refined where the output varies */
    PF_SAMPLE_IMPORTANCE,  /* dithered from the reference image's texturedness */
    PF_SAMPLE_LOOP,        /* loop perforation of the row variable, no reconstruction */
} pf_sample_kind;

typedef enum pf_recon_kind {
    PF_RECON_NONE,         /* skipped points keep 0 (loop perforation, serial stages) */
    PF_RECON_NEAREST,
    PF_RECON_GAUSSIAN,     /* sigma: see docs/perforation.md for the width rule */
    PF_RECON_GAUSSIAN_SV,  /* spatially varying (repeated integration) */
    PF_RECON_LINEAR,       /* multilinear between grid samples (grid only) */
} pf_recon_kind;

/* What a stage's reconstruction needs to know (docs/perforation.md, Section 3). */
typedef struct pf_recon_spec {
    pf_sample_kind sample;
    pf_recon_kind recon;
    int32_t spacing[PF_BUFFER_MAX_DIMS];  /* GRID */
    int32_t k;                            /* ADAPTIVE */
    float frac;                           /* ADAPTIVE, IMPORTANCE */
    float sigma;                          /* GAUSSIAN, GAUSSIAN_SV */
} pf_recon_spec;

/* The stage-level runtime both backends call for sampling and reconstruction (implemented in
 * reconstruct/stage_rt.c; generated code calls those functions directly, the interpreter
 * through this table, since lang/ may not depend on reconstruct/). Masks are float planes of
 * n1 x n2 values, row stride n1: 0 = skipped, 1 = computed in the current pass, 2 = computed in
 * adaptive sampling's first pass. `view` is a stage's lattice view (docs/perforation.md §1).
 * Each returns 0, or a negative value when the kernel failed (memory, bad arguments). */
typedef struct pf_approx_runtime {
    /* Importance mask over the mask plane; `remapped` (n1 x n2) receives M(x). lo/step are the
     * stage's first two lattice origins and steps (image coordinates). */
    int (*importance_mask)(const pf_buffer *ref, const int64_t *lo, const int64_t *step,
                           int32_t n1, int32_t n2, float frac, float sigma_imp, float *mask,
                           float *remapped);
    /* mask := 2 at adaptive sampling's coarse samples, 0 elsewhere. */
    int (*adaptive_coarse)(int32_t n1, int32_t n2, int32_t k, float *mask);
    /* Given V with its coarse samples computed: mask := 1 at the fine samples still to compute
     * (coarse ones keep 2), is_fine := 1 on refined blocks. */
    int (*adaptive_refine)(const pf_buffer *view, int32_t k, float frac, float *mask,
                           float *is_fine);
    /* Fills V's skipped points. mask/aux: the sampling's mask and its auxiliary plane (M for
     * importance, is_fine for adaptive; NULL for grid). */
    int (*reconstruct)(const pf_buffer *view, const pf_recon_spec *spec, const float *mask,
                       const float *aux);
    /* Channel subsampling's copy: for every lattice point of V and channel c' >= c0 of its last
     * dimension, V[j, c'] := ref[p'] (docs/perforation.md §2); lo/step give the image
     * coordinates of the k stage dimensions. */
    int (*copy_channels)(const pf_buffer *view, int32_t k, const int64_t *lo,
                         const int64_t *step, const pf_buffer *ref, int32_t c0);
} pf_approx_runtime;

#endif
