/* A fake stage runtime for the interpreter's tests (a link seam): the five pf_srt_* functions
 * of reconstruct/stage_rt.h defined here, so that this test executable's interpreter calls
 * them instead of the real ones, which it never links. Masks and "reconstruction" are trivial
 * patterns, and every call is logged in lg, so the tests see which lattice points each
 * sampling computes and what the runtime is handed. */
#ifndef PF_TESTS_INTERP_SEAM_FAKE_STAGE_RT_H
#define PF_TESTS_INTERP_SEAM_FAKE_STAGE_RT_H

#include "lang/approx_rt.h"

#include <stdint.h>

struct fake_log {
    int coarse, refine, importance, recon, copy;
    pf_recon_spec spec;
    pf_buffer view;              /* the last view reconstruct got */
    const float *mask, *aux;
    float aux0;                  /* aux[0] as reconstruct saw it */
    int64_t lo[2], step[2];
    int32_t n1, n2;
    float frac, sigma_imp;
    const float *ref_data;
    int32_t copy_k, copy_c0;
    int64_t copy_lo[4], copy_step[4];
    int refine_view_ok;          /* the coarse samples were computed, nothing else */
};
extern struct fake_log lg;

#endif
