/* The stage-level runtime (reconstruct/stage_rt.h): lattice views and float masks in, the
 * kernels of reconstruct/runtime.h called on planar scratch copies (or on the view itself when
 * it already is planar with x stride 1), skipped elements scattered back. Only libc, libm and
 * the kernels: this file ships inside exported C libraries. */
#include "reconstruct/stage_rt.h"

#include "reconstruct/runtime.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- views ---- */

/* A view's extents padded to 4 dimensions, and its mask plane. */
typedef struct srt_shape {
    int64_t e[4], s[4];  /* extents and strides (unused dimensions: extent 1, stride 0) */
    int w, h;            /* the mask plane: e[0] x e[1] */
    int planes;          /* e[2] * e[3]: the "channels" of the kernels */
} srt_shape;

static int view_shape(const pf_buffer *v, srt_shape *sh)
{
    if (!v || !v->data || v->ndims < 1 || v->ndims > 4)
        return PF_RT_EINVAL;
    for (int d = 0; d < 4; d++) {
        sh->e[d] = d < v->ndims ? v->extent[d] : 1;
        sh->s[d] = d < v->ndims ? v->stride[d] : 0;
        if (sh->e[d] < 1 || sh->e[d] > INT_MAX || sh->s[d] < 0)
            return PF_RT_EINVAL;
    }
    /* The kernels index a plane with int and a mask with size_t; keep w*h below 2^31. */
    if (sh->e[0] * sh->e[1] >= INT_MAX || sh->e[2] * sh->e[3] > INT_MAX)
        return PF_RT_EINVAL;
    sh->w = (int)sh->e[0];
    sh->h = (int)sh->e[1];
    sh->planes = (int)(sh->e[2] * sh->e[3]);
    return PF_RT_OK;
}

static size_t plane_size(const srt_shape *sh)
{
    return (size_t)sh->w * (size_t)sh->h;
}

static float *elem(const pf_buffer *v, const srt_shape *sh, int x, int y, int p)
{
    int64_t i2 = p % sh->e[2], i3 = p / sh->e[2];
    return v->data + x * sh->s[0] + y * sh->s[1] + i2 * sh->s[2] + i3 * sh->s[3];
}

/* The view as the kernels want it: planar, x stride 1, element (x, y, p) at
 * data[p * plane + y * stride + x]. Either the view's own memory or a scratch copy. */
typedef struct srt_planar {
    float *data;
    size_t stride, plane;
    int owned;
} srt_planar;

/* Whether the view already is such an image: x stride 1, rows that do not overlap, and the
 * planes beyond the mask plane one uniform stride apart, past the last row. */
static int planar_in_place(const srt_shape *sh, srt_planar *pl)
{
    size_t row = sh->h == 1 ? (size_t)sh->w : (size_t)sh->s[1];
    int64_t plane = sh->e[3] == 1 ? sh->s[2] : sh->e[2] == 1 ? sh->s[3] : sh->s[2];
    if (sh->e[2] > 1 && sh->e[3] > 1 && sh->s[3] != sh->e[2] * sh->s[2])
        return 0;
    if (sh->s[0] != 1 || row < (size_t)sh->w)
        return 0;
    if (sh->planes > 1 && (plane < 1 || (size_t)plane < row * (size_t)sh->h))
        return 0;
    pl->stride = row;
    pl->plane = sh->planes > 1 ? (size_t)plane : row * (size_t)sh->h;
    return 1;
}

static int planar_acquire(const pf_buffer *v, const srt_shape *sh, srt_planar *pl)
{
    pl->owned = 0;
    if (planar_in_place(sh, pl)) {
        pl->data = v->data;
        return PF_RT_OK;
    }
    size_t n = plane_size(sh);
    pl->data = pf_rt_scratch(n * (size_t)sh->planes * sizeof *pl->data);
    if (!pl->data)
        return PF_RT_ENOMEM;
    pl->owned = 1;
    pl->stride = (size_t)sh->w;
    pl->plane = n;
    for (int p = 0; p < sh->planes; p++)
        for (int y = 0; y < sh->h; y++)
            for (int x = 0; x < sh->w; x++)
                pl->data[(size_t)p * n + (size_t)y * (size_t)sh->w + (size_t)x] =
                    *elem(v, sh, x, y, p);
    return PF_RT_OK;
}

/* Copies the skipped elements (mask 0) of a scratch copy back into the view (when
 * skipped_only is NULL nothing is written: the kernel only read) and frees the copy. */
static void planar_release(const pf_buffer *v, const srt_shape *sh, srt_planar *pl,
                           const uint8_t *skipped_only)
{
    if (!pl->owned)
        return;
    size_t n = plane_size(sh);
    for (int p = 0; skipped_only && p < sh->planes; p++)
        for (int y = 0; y < sh->h; y++)
            for (int x = 0; x < sh->w; x++) {
                size_t i = (size_t)y * (size_t)sh->w + (size_t)x;
                if (!skipped_only[i])
                    *elem(v, sh, x, y, p) = pl->data[(size_t)p * n + i];
            }
    pf_rt_scratch_free(pl->data);
    pl->data = NULL;
}

/* ---- masks ---- */

static uint8_t *mask_from_floats(const float *mask, size_t n)
{
    uint8_t *m = pf_rt_scratch(n ? n : 1);
    for (size_t i = 0; m && i < n; i++)
        m[i] = mask[i] != 0.0f;
    return m;
}

/* A 0/1 mask as floats 1/0, rows [begin, end) of `row` elements. */
typedef struct float_mask {
    const uint8_t *m;
    size_t row;
    float *out;
} float_mask;

static int32_t mask_to_floats(void *closure, int32_t begin, int32_t end)
{
    const float_mask *j = closure;
    for (size_t i = (size_t)begin * j->row; i < (size_t)end * j->row; i++)
        j->out[i] = j->m[i] ? 1.0f : 0.0f;
    return 0;
}

static int plane_ok(int32_t n1, int32_t n2)
{
    return n1 >= 1 && n2 >= 1 && (int64_t)n1 * n2 < INT_MAX;
}

/* ---- importance sampling ---- */

static int64_t clamp_index(int64_t i, int64_t n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* R0 of docs/perforation.md §2: channel 0 (index 0 beyond the first two dimensions) of ref at
 * the lattice points of the mask plane, clamped into ref; rows [begin, end) of r0 (n1 a row). */
typedef struct reference_job {
    const pf_buffer *ref;
    const int64_t *lo, *step;
    int32_t n1;
    float *r0;
} reference_job;

static int32_t sample_reference(void *closure, int32_t begin, int32_t end)
{
    const reference_job *j = closure;
    const pf_buffer *ref = j->ref;
    int64_t e1 = ref->ndims > 1 ? ref->extent[1] : 1, s1 = ref->ndims > 1 ? ref->stride[1] : 0;
    for (int32_t j2 = begin; j2 < end; j2++) {
        int64_t y = clamp_index(j->lo[1] + j2 * j->step[1], e1);
        for (int32_t j1 = 0; j1 < j->n1; j1++) {
            int64_t x = clamp_index(j->lo[0] + j1 * j->step[0], ref->extent[0]);
            float v = ref->data[x * ref->stride[0] + y * s1];
            j->r0[(size_t)j2 * (size_t)j->n1 + (size_t)j1] = v;
        }
    }
    return 0;
}

static int buffer_ok(const pf_buffer *b)
{
    if (!b || !b->data || b->ndims < 1 || b->ndims > 4)
        return 0;
    for (int d = 0; d < b->ndims; d++)
        if (b->extent[d] < 1)
            return 0;
    return 1;
}

int pf_srt_importance_mask(const pf_buffer *ref, const int64_t *lo, const int64_t *step,
                           int32_t n1, int32_t n2, float frac, float sigma_imp, float *mask,
                           float *remapped)
{
    return pf_srt_importance_mask_par(ref, lo, step, n1, n2, frac, sigma_imp, mask, remapped,
                                      NULL);
}

int pf_srt_importance_mask_par(const pf_buffer *ref, const int64_t *lo, const int64_t *step,
                               int32_t n1, int32_t n2, float frac, float sigma_imp, float *mask,
                               float *remapped, pf_par_for par)
{
    if (!buffer_ok(ref) || !lo || !step || !mask || !plane_ok(n1, n2) ||
        !(frac > 0.0f && frac <= 1.0f) || !(sigma_imp > 0.0f) || !isfinite(sigma_imp))
        return PF_RT_EINVAL;
    size_t n = (size_t)n1 * (size_t)n2;
    float *r0 = pf_rt_scratch(n * sizeof *r0), *map = pf_rt_scratch(n * sizeof *map);
    uint8_t *m8 = pf_rt_scratch(n);
    int rc = PF_RT_ENOMEM;
    if (r0 && map && m8) {
        reference_job j = { ref, lo, step, n1, r0 };
        pf_par_run(par, sample_reference, &j, n2);
        rc = pf_rt_importance_map_par(r0, n1, n2, (size_t)n1, (double)sigma_imp * (double)n2,
                                      map, par);
        if (rc == PF_RT_OK)
            rc = pf_rt_importance_mask_par(map, n1, n2, frac, PF_RT_DITHER_OSTROMOUKHOV, m8,
                                           remapped, NULL, par);
        float_mask fm = { m8, (size_t)n1, mask };
        if (rc == PF_RT_OK)
            pf_par_run(par, mask_to_floats, &fm, n2);
    }
    pf_rt_scratch_free(r0);
    pf_rt_scratch_free(map);
    pf_rt_scratch_free(m8);
    return rc;
}

/* ---- adaptive sampling ---- */

/* Adaptive sampling's float planes by rows: mask := 2 on the coarse samples (the product of
 * the column and row lines), else 1 where `fine` is set (NULL: none), else 0; is_fine (may be
 * NULL) := in_block. */
typedef struct adaptive_out {
    const uint8_t *cols, *rows, *fine, *in_block;
    float *mask, *is_fine;
    size_t w;
} adaptive_out;

static int32_t adaptive_out_rows(void *closure, int32_t begin, int32_t end)
{
    const adaptive_out *j = closure;
    for (int32_t y = begin; y < end; y++) {
        size_t o = (size_t)y * j->w;
        for (size_t x = 0; x < j->w; x++) {
            j->mask[o + x] = j->rows[y] && j->cols[x] ? 2.0f
                             : j->fine && j->fine[o + x] ? 1.0f : 0.0f;
            if (j->is_fine)
                j->is_fine[o + x] = j->in_block[o + x] ? 1.0f : 0.0f;
        }
    }
    return 0;
}

/* Writes the planes of adaptive_out (h rows of w) with par. */
static int adaptive_outputs(int w, int h, int32_t k, const uint8_t *fine, const uint8_t *in_block,
                            float *mask, float *is_fine, pf_par_for par)
{
    uint8_t *lines = pf_rt_adaptive_coarse_lines(w, h, k);
    if (!lines)
        return PF_RT_ENOMEM;
    adaptive_out j = { lines, lines + w, fine, in_block, mask, is_fine, (size_t)w };
    pf_par_run(par, adaptive_out_rows, &j, h);
    free(lines);
    return PF_RT_OK;
}

int pf_srt_adaptive_coarse_par(int32_t n1, int32_t n2, int32_t k, float *mask, pf_par_for par)
{
    if (!mask || !plane_ok(n1, n2) || k < 1)
        return PF_RT_EINVAL;
    return adaptive_outputs(n1, n2, k, NULL, NULL, mask, NULL, par);
}

int pf_srt_adaptive_coarse(int32_t n1, int32_t n2, int32_t k, float *mask)
{
    return pf_srt_adaptive_coarse_par(n1, n2, k, mask, NULL);
}

int pf_srt_adaptive_refine_par(const pf_buffer *view, int32_t k, float frac, float *mask,
                               float *is_fine, pf_par_for par)
{
    srt_shape sh;
    int rc = view_shape(view, &sh);
    if (rc != PF_RT_OK || !mask || k < 1 || !(frac > 0.0f && frac <= 1.0f))
        return PF_RT_EINVAL;
    size_t n = plane_size(&sh);
    uint8_t *fine = pf_rt_scratch(n), *in_block = pf_rt_scratch(n);
    srt_planar pl = { NULL, 0, 0, 0 };
    rc = fine && in_block ? planar_acquire(view, &sh, &pl) : PF_RT_ENOMEM;
    if (rc == PF_RT_OK)
        rc = pf_rt_adaptive_refine_par(pl.data, sh.w, sh.h, sh.planes, pl.stride, pl.plane, k,
                                       frac, fine, in_block, NULL, par);
    if (rc == PF_RT_OK)
        rc = adaptive_outputs(sh.w, sh.h, k, fine, in_block, mask, is_fine, par);
    if (pl.data)
        planar_release(view, &sh, &pl, NULL);
    pf_rt_scratch_free(fine);
    pf_rt_scratch_free(in_block);
    return rc;
}

int pf_srt_adaptive_refine(const pf_buffer *view, int32_t k, float frac, float *mask,
                           float *is_fine)
{
    return pf_srt_adaptive_refine_par(view, k, frac, mask, is_fine, NULL);
}

/* ---- store reconstruction ---- */

/* The mask-plane kernels of §3 on a planar image; sigma_map is NULL for the invariant Gaussian
 * (width sigma), else the per-pixel widths of gaussian-sv. */
static int run_kernel(pf_recon_kind recon, const srt_shape *sh, const srt_planar *pl,
                      const uint8_t *m8, double sigma, const float *sigma_map, pf_par_for par)
{
    switch (recon) {
    case PF_RECON_NEAREST:
        return pf_rt_recon_nearest_par(pl->data, sh->w, sh->h, sh->planes, pl->stride,
                                       pl->plane, m8, par);
    case PF_RECON_GAUSSIAN:
        return pf_rt_recon_gaussian_par(pl->data, sh->w, sh->h, sh->planes, pl->stride,
                                        pl->plane, m8, sigma, par);
    case PF_RECON_GAUSSIAN_SV:
        return pf_rt_recon_gaussian_sv_par(pl->data, sh->w, sh->h, sh->planes, pl->stride,
                                           pl->plane, m8, sigma_map, par);
    default:
        return PF_RT_EINVAL;
    }
}

/* Gathers the view if needed, runs the kernel, scatters the skipped elements back. */
static int recon_planar(const pf_buffer *view, const srt_shape *sh, pf_recon_kind recon,
                        const uint8_t *m8, double sigma, const float *sigma_map, pf_par_for par)
{
    srt_planar pl;
    int rc = planar_acquire(view, sh, &pl);
    if (rc != PF_RT_OK)
        return rc;
    rc = run_kernel(recon, sh, &pl, m8, sigma, sigma_map, par);
    planar_release(view, sh, &pl, m8);
    return rc;
}

/* Grid + gaussian or gaussian-sv: the grid mask of the mask plane, width
 * pf_rt_sigma_grid(sigma, 2, {s1, s2}) (constant over the plane for gaussian-sv). */
static int recon_grid_gauss(const pf_buffer *view, const srt_shape *sh, const pf_recon_spec *sp,
                            pf_par_for par)
{
    for (int d = 2; d < view->ndims; d++)
        if (sp->spacing[d] != 1)
            return PF_RT_EINVAL;
    int64_t sp2[2] = { sp->spacing[0], view->ndims > 1 ? sp->spacing[1] : 1 };
    size_t n = plane_size(sh);
    uint8_t *m8 = pf_rt_scratch(n);
    float *map = sp->recon == PF_RECON_GAUSSIAN_SV ? pf_rt_scratch(n * sizeof *map) : NULL;
    double width = pf_rt_sigma_grid(sp->sigma, 2, sp2);
    int rc = PF_RT_ENOMEM;
    if (m8 && (map || sp->recon == PF_RECON_GAUSSIAN))
        rc = pf_rt_grid_mask(sh->w, sh->h, 0, 0, (int)sp2[0], (int)sp2[1], m8, NULL);
    for (size_t i = 0; rc == PF_RT_OK && map && i < n; i++)
        map[i] = (float)width;
    if (rc == PF_RT_OK)
        rc = recon_planar(view, sh, sp->recon, m8, width, map, par);
    pf_rt_scratch_free(m8);
    pf_rt_scratch_free(map);
    return rc;
}

static int recon_grid(const pf_buffer *view, const srt_shape *sh, const pf_recon_spec *sp,
                      pf_par_for par)
{
    int64_t origin[4] = { 0, 0, 0, 0 }, spacing[4] = { 1, 1, 1, 1 };
    for (int d = 0; d < view->ndims; d++) {
        if (sp->spacing[d] < 1)
            return PF_RT_EINVAL;
        spacing[d] = sp->spacing[d];
    }
    switch (sp->recon) {
    case PF_RECON_LINEAR:
        return pf_rt_grid_multilinear(view->data, view->ndims, view->extent, view->stride, origin,
                                      spacing);
    case PF_RECON_NEAREST:
        return pf_rt_grid_nearest(view->data, view->ndims, view->extent, view->stride, origin,
                                  spacing);
    case PF_RECON_GAUSSIAN:
    case PF_RECON_GAUSSIAN_SV:
        return recon_grid_gauss(view, sh, sp, par);
    default:
        return PF_RT_EINVAL;
    }
}

/* gaussian-sv's sigma map for adaptive (from is_fine) or importance (from M) sampling. */
static int irregular_sigma_map(const pf_recon_spec *sp, const float *aux, size_t n, float *map)
{
    if (sp->sample == PF_SAMPLE_IMPORTANCE)
        return pf_rt_sigma_importance(aux, n, sp->sigma, sp->frac, map);
    uint8_t *fine = mask_from_floats(aux, n);
    if (!fine)
        return PF_RT_ENOMEM;
    int rc = pf_rt_sigma_adaptive(fine, n, sp->sigma, sp->k, map);
    pf_rt_scratch_free(fine);
    return rc;
}

/* Adaptive and importance sampling: nearest, gaussian (width pf_rt_sigma_irregular) or
 * gaussian-sv (the per-sampling sigma map). */
static int recon_irregular(const pf_buffer *view, const srt_shape *sh, const pf_recon_spec *sp,
                           const float *mask, const float *aux, pf_par_for par)
{
    int sv = sp->recon == PF_RECON_GAUSSIAN_SV;
    if (!mask || (sv && !aux) || sp->recon == PF_RECON_LINEAR)
        return PF_RT_EINVAL;
    size_t n = plane_size(sh);
    uint8_t *m8 = mask_from_floats(mask, n);
    float *map = sv ? pf_rt_scratch(n * sizeof *map) : NULL;
    int rc = m8 && (map || !sv) ? PF_RT_OK : PF_RT_ENOMEM;
    if (rc == PF_RT_OK && sv)
        rc = irregular_sigma_map(sp, aux, n, map);
    if (rc == PF_RT_OK)
        rc = recon_planar(view, sh, sp->recon, m8, pf_rt_sigma_irregular(sp->sigma, sp->frac),
                          map, par);
    pf_rt_scratch_free(m8);
    pf_rt_scratch_free(map);
    return rc;
}

int pf_srt_reconstruct_par(const pf_buffer *view, const pf_recon_spec *spec, const float *mask,
                           const float *aux, pf_par_for par)
{
    srt_shape sh;
    if (!spec || view_shape(view, &sh) != PF_RT_OK)
        return PF_RT_EINVAL;
    if (spec->recon == PF_RECON_NONE || spec->sample == PF_SAMPLE_ALL)
        return PF_RT_OK;
    switch (spec->sample) {
    case PF_SAMPLE_GRID: return recon_grid(view, &sh, spec, par);
    case PF_SAMPLE_ADAPTIVE:
    case PF_SAMPLE_IMPORTANCE: return recon_irregular(view, &sh, spec, mask, aux, par);
    default: return PF_RT_EINVAL;
    }
}

int pf_srt_reconstruct(const pf_buffer *view, const pf_recon_spec *spec, const float *mask,
                       const float *aux)
{
    return pf_srt_reconstruct_par(view, spec, mask, aux, NULL);
}


/* ---- channel subsampling ---- */

static int copy_args_ok(const pf_buffer *view, int32_t k, const int64_t *lo,
                        const int64_t *step, const pf_buffer *ref, int32_t c0)
{
    return buffer_ok(view) && buffer_ok(ref) && ref->ndims == view->ndims && k >= 1 &&
           k <= view->ndims && lo && step && c0 >= 0;
}

/* The offset in ref of the image point of lattice index j, clamped into ref. */
static int64_t ref_offset(const pf_buffer *ref, int32_t k, const int64_t *lo, const int64_t *step,
                          const int64_t *j)
{
    int64_t off = 0;
    for (int d = 0; d < ref->ndims; d++) {
        int64_t p = d < k ? lo[d] + j[d] * step[d] : j[d];
        off += clamp_index(p, ref->extent[d]) * ref->stride[d];
    }
    return off;
}

/* What the row tasks of a channel copy share. */
typedef struct copy_job {
    const pf_buffer *view, *ref;
    srt_shape sh;
    int32_t k, c0;
    const int64_t *lo, *step;
} copy_job;

/* Rows [begin, end) of the copy, a row being (j1, j2, j3) in row-major order. */
static int32_t copy_rows(void *closure, int32_t begin, int32_t end)
{
    const copy_job *c = closure;
    const srt_shape *sh = &c->sh;
    int last = c->view->ndims - 1;
    int64_t j[4];
    for (int32_t r = begin; r < end; r++) {
        j[1] = r % sh->e[1];
        j[2] = r / sh->e[1] % sh->e[2];
        j[3] = r / sh->e[1] / sh->e[2];
        for (j[0] = 0; j[0] < sh->e[0]; j[0]++) {
            if (j[last] < c->c0)
                continue;
            int64_t off = j[0] * sh->s[0] + j[1] * sh->s[1] + j[2] * sh->s[2] + j[3] * sh->s[3];
            c->view->data[off] = c->ref->data[ref_offset(c->ref, c->k, c->lo, c->step, j)];
        }
    }
    return 0;
}

int pf_srt_copy_channels_par(const pf_buffer *view, int32_t k, const int64_t *lo,
                             const int64_t *step, const pf_buffer *ref, int32_t c0,
                             pf_par_for par)
{
    copy_job c = { view, ref, { { 0 }, { 0 }, 0, 0, 0 }, k, c0, lo, step };
    if (!copy_args_ok(view, k, lo, step, ref, c0) || view_shape(view, &c.sh) != PF_RT_OK)
        return PF_RT_EINVAL;
    int64_t rows = c.sh.e[1] * c.sh.e[2] * c.sh.e[3];
    if (rows > INT32_MAX)
        return PF_RT_EINVAL;
    return pf_par_run(par, copy_rows, &c, (int32_t)rows);
}

int pf_srt_copy_channels(const pf_buffer *view, int32_t k, const int64_t *lo,
                         const int64_t *step, const pf_buffer *ref, int32_t c0)
{
    return pf_srt_copy_channels_par(view, k, lo, step, ref, c0, NULL);
}
