/* The approximations a schedule resolves to: what a plan (perforate/plan.h) holds per stage and
 * per named loop, and what every backend (the reference interpreter, codegen) executes. NULL
 * means exact. The semantics are defined in docs/perforation.md; this header is the data.
 *
 * Vocabulary: a stage's *lattice* is its iteration set, lo_d + j*step_d for j in [0, n_d) per
 * stage variable d (without `over`: lo 0, step 1, n = the extent). Sampling picks lattice
 * points; reconstruction fills the skipped lattice points (pixels off the lattice stay 0, as in
 * the exact program). Lattice coordinates (j) are what masks, grids and reconstruction use. */
#ifndef PF_PERFORATE_APPROX_H
#define PF_PERFORATE_APPROX_H

#include "base/buffer.h"
#include "lang/approx_rt.h"
#include "lang/ast.h"

#include <stdint.h>

/* Loop perforation (Sidiroglou-Douskos et al.), on a `for` loop or a stage's row variable. */
typedef enum pf_loop_perf_kind {
    PF_PERF_STEP,    /* the step is multiplied by `step` */
    PF_PERF_FIRST,   /* only the first (int)(frac * n) iterations run */
    PF_PERF_LAST,    /* iterations before (int)((1 - frac) * n) are skipped */
    PF_PERF_RANDOM,  /* iteration j runs iff pf_perf_hash(id, j, ...) < frac */
} pf_loop_perf_kind;

typedef struct pf_loop_perf {
    pf_loop_perf_kind kind;
    int step;     /* STEP: >= 1 */
    float frac;   /* FIRST, LAST, RANDOM: in (0, 1] */
    int id;       /* RANDOM: the loop's index in pf_program.loops (seeds the hash) */
} pf_loop_perf;

typedef struct pf_loop_approx {
    pf_loop_perf perf;
} pf_loop_approx;

typedef struct pf_stage_approx {
    pf_sample_kind sample;
    int spacing[PF_BUFFER_MAX_DIMS];  /* GRID: per stage variable, >= 1 */
    int k;                    /* ADAPTIVE: coarse spacing (>= 2) */
    float frac;               /* ADAPTIVE, IMPORTANCE: target fraction of lattice points */
    float sigma_imp;          /* IMPORTANCE: Gaussian of the importance map, fraction of height */
    pf_loop_perf perf;        /* LOOP */
    int channels;             /* > 0: compute only channels [0, channels) of the last stage
                                 variable; the rest are copied from the reference image */
    pf_recon_kind recon;
    float sigma;              /* GAUSSIAN, GAUSSIAN_SV: the schedule's sigma (before the rule) */
    bool on_demand;           /* GRID with LINEAR or NEAREST: stored downsampled, reads
                                 interpolate (pf_plan_read_writer) */
    const pf_image_decl *ref; /* IMPORTANCE, channels: the reference image */
} pf_stage_approx;

/* A read of an image that a grid-sampled stage stores on demand (pf_plan_read_writer) is
 * reconstructed from the downsampled stored grid (paper Section 3.3): the stored array holds
 * lattice point j at index j / spacing (per dimension of the writer stage); the read maps its
 * image coordinate through the image's boundary mode, then to lattice coordinates, and
 * interpolates. */

/* The random-skip hash of loop perforation is pf_perf_hash in base/noise.h (shared with the
 * runtime of generated code). */
#include "base/noise.h"

#endif
