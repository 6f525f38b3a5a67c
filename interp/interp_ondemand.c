/* Images stored on demand in the interpreter (docs/perforation.md §4, the paper's Section
 * 3.3): the writer's grid samples live in a downsampled array S (lattice point j at J = j / s),
 * the writer reads and writes its own pixel at J, and every later read maps its indices through
 * the boundary mode and the writer's lattice, then interpolates between stored samples (linear,
 * one dimension at a time with dimension 1 outermost, or nearest). Written directly from §4, so
 * that codegen's rewritten reads (and their congruence simplification) have an oracle. */
#include "interp/interp_internal.h"

#include <stdlib.h>

/* S for the writer's lattice: extent ceil(n_d / s_d) in the stage dimensions, the image's own
 * extent in the others, dense and zeroed (like every image at the start of a run). The
 * pf_iimage keeps the image's extents, which reads need for the boundary mode. */
int pf_iod_begin(pf_ijob *job, pf_error *err)
{
    const pf_stage_approx *a = pf_iapprox_of(job->base->ic, job->st);
    pf_iimage *im = &job->base->images[job->st->image->image->index];
    pf_iod *od = im->od;
    od->k = job->n_vars;
    int64_t total = 1;
    for (int d = 0; d < PF_MAX_DIMS; d++) {
        int64_t ext = im->extent[d];
        if (d < od->k) {
            od->lo[d] = job->r[d].first;
            od->step[d] = job->r[d].step;
            od->n[d] = job->r[d].count;
            od->s[d] = a->spacing[d];
            od->ns[d] = (od->n[d] + od->s[d] - 1) / od->s[d];
            ext = od->ns[d] > 0 ? od->ns[d] : 1;
        }
        im->stride[d] = total;
        total *= ext;
    }
    od->linear = a->recon == PF_RECON_LINEAR;
    od->channels = a->channels;
    od->ref = a->ref ? a->ref->index : -1;
    im->data = calloc((size_t)total, sizeof *im->data);
    if (!im->data)
        return pf_fail(err, "interpreter: stage '%s': out of memory for its on-demand array",
                       job->st->name);
    od->ready = true;
    return 0;
}

/* ---- the writer's own pixel ---- */

/* The offset of the writer's own pixel in S: J_d = ((i_d - lo_d) / step_d) / s_d in the stage
 * dimensions, i_d beyond (through the boundary mode when `read`). 0 when the pixel is not a
 * stored sample (the writer only runs its samples, so only a bad index gets there); -1 for a
 * constant-boundary read outside. */
static int own_offset(const pf_iimage *im, const int32_t *idx, const pf_value *R, bool read,
                      int64_t *off)
{
    const pf_iod *od = im->od;
    *off = 0;
    for (int d = 0; d < im->ndims; d++) {
        int64_t i = R[idx[d]].i;
        if (d < od->k) {
            int64_t t = i - od->lo[d];
            if (t < 0 || t % (od->step[d] * od->s[d]) != 0 || t / od->step[d] >= od->n[d])
                return 0;
            i = t / od->step[d] / od->s[d];
        } else if (i < 0 || i >= im->extent[d]) {
            if (!read)
                return 0;
            i = pf_iboundary_index(i, im->extent[d], im->boundary);
            if (i < 0)
                return -1;
        }
        *off += i * im->stride[d];
    }
    return 1;
}

float pf_iread_own(const pf_iimage *im, const int32_t *idx, const pf_value *R)
{
    int64_t off;
    int rc = own_offset(im, idx, R, true, &off);
    return rc > 0 ? im->data[off] : rc < 0 ? im->constant : 0.0f;
}

void pf_iwrite_own(const pf_iimage *im, int op, float v, const int32_t *idx, const pf_value *R)
{
    int64_t off;
    if (own_offset(im, idx, R, false, &off) > 0)
        pf_iassign(&im->data[off], op, v);
}

/* ---- later stages' reads ---- */

/* Where a read falls on the writer's grid, per stage dimension: the stored neighbours q and
 * q1 and the remainder r (step 2 of §4), and u, the lattice coordinate. */
typedef struct pf_iod_point {
    int64_t q[PF_MAX_DIMS], q1[PF_MAX_DIMS], r[PF_MAX_DIMS], u[PF_MAX_DIMS];
    int64_t rest;  /* the offset of the dimensions beyond the stage's */
} pf_iod_point;

/* Step 2: false when p is off the lattice (the exact program never writes it). */
static bool od_locate(const pf_iimage *im, const int64_t *p, pf_iod_point *pt)
{
    const pf_iod *od = im->od;
    pt->rest = 0;
    for (int d = 0; d < im->ndims; d++) {
        if (d >= od->k) {
            pt->rest += p[d] * im->stride[d];
            continue;
        }
        int64_t t = p[d] - od->lo[d];
        if (t < 0 || t % od->step[d] != 0 || t / od->step[d] >= od->n[d])
            return false;
        pt->u[d] = t / od->step[d];
        pt->q[d] = pt->u[d] / od->s[d];
        pt->r[d] = pt->u[d] % od->s[d];
        pt->q1[d] = pt->q[d] + 1 < od->ns[d] ? pt->q[d] + 1 : od->ns[d] - 1;
    }
    return true;
}

/* L_d of step 3: (r == 0) ? a : (1 - w) * a + w * b with w = float(r) / float(s), a and b
 * the interpolations of the dimensions after d at q and q1 (each product rounded on its own). */
static float od_linear(const pf_iimage *im, const pf_iod_point *pt, int d, int64_t off)
{
    const pf_iod *od = im->od;
    /* d < k <= the point's dimensions; the second test lets the compiler see the recursion
     * stops (it otherwise warns about indices past the arrays at -O3) */
    if (d == od->k || d >= (int)(sizeof pt->q / sizeof pt->q[0]))
        return im->data[off];
    float a = od_linear(im, pt, d + 1, off + pt->q[d] * im->stride[d]);
    if (pt->r[d] == 0)
        return a;
    float b = od_linear(im, pt, d + 1, off + pt->q1[d] * im->stride[d]);
    float w = (float)pt->r[d] / (float)od->s[d];
    float wa = (1.0f - w) * a;
    float wb = w * b;
    return wa + wb;
}

/* Nearest: q when 2r <= s (halfway goes to the lower sample), else q1, in every dimension. */
static float od_nearest(const pf_iimage *im, const pf_iod_point *pt)
{
    const pf_iod *od = im->od;
    int64_t off = pt->rest;
    for (int d = 0; d < od->k; d++)
        off += (2 * pt->r[d] <= od->s[d] ? pt->q[d] : pt->q1[d]) * im->stride[d];
    return im->data[off];
}

/* Channel subsampling: the reference image at the read's (boundary-mapped) coordinates,
 * clamped into its extents. */
static float od_reference(const pf_ictx *x, const pf_iod *od, const int64_t *p)
{
    const pf_iimage *ref = &x->images[od->ref];
    int64_t off = 0;
    for (int d = 0; d < ref->ndims; d++) {
        int64_t i = p[d] < 0 ? 0 : p[d] >= ref->extent[d] ? ref->extent[d] - 1 : p[d];
        off += i * ref->stride[d];
    }
    return ref->data[off];
}

float pf_iread_od(const pf_ictx *x, const pf_iimage *im, const int32_t *idx, const pf_value *R)
{
    int64_t p[PF_MAX_DIMS] = { 0, 0, 0, 0 };
    for (int d = 0; d < im->ndims; d++) {  /* step 1: the boundary mode */
        p[d] = R[idx[d]].i;
        if (p[d] < 0 || p[d] >= im->extent[d]) {
            p[d] = pf_iboundary_index(p[d], im->extent[d], im->boundary);
            if (p[d] < 0)
                return im->constant;
        }
    }
    const pf_iod *od = im->od;
    pf_iod_point pt;
    if (!od->ready || !od_locate(im, p, &pt))
        return 0.0f;
    if (od->channels > 0 && pt.u[od->k - 1] >= od->channels)
        return od_reference(x, od, p);
    return od->linear ? od_linear(im, &pt, 0, pt.rest) : od_nearest(im, &pt);
}
