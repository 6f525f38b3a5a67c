/* The part of the approximation vocabulary that the runtime of generated code needs too:
 * sampling and reconstruction kinds, and a reconstruction's parameters. Plain C with no
 * dependence on the AST, because reconstruct/stage_rt.c is shipped inside exported C libraries.
 * See perforate/approx.h and docs/perforation.md. */
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

#endif
