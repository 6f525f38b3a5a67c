/* The fake stage runtime (fake_stage_rt.h): its definitions of reconstruct/stage_rt.h's
 * functions replace the real ones in this test executable. */
#include "tests/interp_seam/fake_stage_rt.h"

#include "reconstruct/stage_rt.h"

#include <stdbool.h>
#include <string.h>

struct fake_log lg;

/* Importance: samples where (j1 + 2 j2) % 3 == 0; M = 0.25. */
int pf_srt_importance_mask(const pf_buffer *ref, const int64_t *lo, const int64_t *step,
                           int32_t n1, int32_t n2, float frac, float sigma_imp, float *mask,
                           float *remapped)
{
    lg.importance++;
    lg.ref_data = ref->data;
    memcpy(lg.lo, lo, sizeof lg.lo);
    memcpy(lg.step, step, sizeof lg.step);
    lg.n1 = n1, lg.n2 = n2, lg.frac = frac, lg.sigma_imp = sigma_imp;
    for (int32_t j2 = 0; j2 < n2; j2++)
        for (int32_t j1 = 0; j1 < n1; j1++) {
            mask[j2 * n1 + j1] = (j1 + 2 * j2) % 3 == 0 ? 1.0f : 0.0f;
            remapped[j2 * n1 + j1] = 0.25f;
        }
    return 0;
}

int pf_srt_adaptive_coarse(int32_t n1, int32_t n2, int32_t k, float *mask)
{
    lg.coarse++;
    for (int32_t j2 = 0; j2 < n2; j2++)
        for (int32_t j1 = 0; j1 < n1; j1++)
            mask[j2 * n1 + j1] = j1 % k == 0 && j2 % k == 0 ? 2.0f : 0.0f;
    return 0;
}

/* Fine samples: one to the right of each coarse sample. Checks that only the coarse samples
 * were computed (the stage writes values >= 1). */
int pf_srt_adaptive_refine(const pf_buffer *view, int32_t k, float frac, float *mask,
                           float *is_fine)
{
    (void)frac;
    lg.refine++;
    lg.refine_view_ok = 1;
    int32_t n1 = (int32_t)view->extent[0], n2 = (int32_t)view->extent[1];
    for (int32_t j2 = 0; j2 < n2; j2++)
        for (int32_t j1 = 0; j1 < n1; j1++) {
            float v = view->data[j1 * view->stride[0] + j2 * view->stride[1]];
            bool coarse = mask[j2 * n1 + j1] == 2.0f;
            lg.refine_view_ok &= coarse ? v >= 1.0f : v == 0.0f;
            bool fine = j1 % k == 1 && j2 % k == 0;
            if (fine)
                mask[j2 * n1 + j1] = 1.0f;
            is_fine[j2 * n1 + j1] = fine ? 1.0f : 0.0f;
        }
    return 0;
}

/* Whether lattice point (j1, j2) of the mask plane is a sample for `spec`. */
static bool fake_is_sample(const pf_recon_spec *spec, const float *mask, int64_t n1, int64_t j1,
                           int64_t j2)
{
    if (spec->sample == PF_SAMPLE_GRID)
        return j1 % spec->spacing[0] == 0 && j2 % spec->spacing[1] == 0;
    return mask[j2 * n1 + j1] != 0.0f;
}

/* "Reconstruction": every skipped element of a 2-D or 3-D view becomes -1. */
int pf_srt_reconstruct(const pf_buffer *view, const pf_recon_spec *spec, const float *mask,
                       const float *aux)
{
    lg.recon++;
    lg.spec = *spec;
    lg.view = *view;
    lg.mask = mask;
    lg.aux = aux;
    lg.aux0 = aux ? aux[0] : -1.0f;
    int64_t n1 = view->extent[0], n2 = view->ndims > 1 ? view->extent[1] : 1;
    int64_t n3 = view->ndims > 2 ? view->extent[2] : 1;
    for (int64_t j3 = 0; j3 < n3; j3++)
        for (int64_t j2 = 0; j2 < n2; j2++)
            for (int64_t j1 = 0; j1 < n1; j1++)
                if (!fake_is_sample(spec, mask, n1, j1, j2))
                    view->data[j1 * view->stride[0] + j2 * view->stride[1] +
                               j3 * view->stride[2]] = -1.0f;
    return 0;
}

/* "Channel copy": channels >= c0 of a 3-D view become -2. */
int pf_srt_copy_channels(const pf_buffer *view, int32_t k, const int64_t *lo,
                         const int64_t *step, const pf_buffer *ref, int32_t c0)
{
    (void)ref;
    lg.copy++;
    lg.copy_k = k, lg.copy_c0 = c0;
    memcpy(lg.copy_lo, lo, sizeof(int64_t) * (size_t)k);
    memcpy(lg.copy_step, step, sizeof(int64_t) * (size_t)k);
    for (int64_t c = c0; c < view->extent[2]; c++)
        for (int64_t y = 0; y < view->extent[1]; y++)
            for (int64_t x = 0; x < view->extent[0]; x++)
                view->data[x * view->stride[0] + y * view->stride[1] + c * view->stride[2]] =
                    -2.0f;
    return 0;
}
