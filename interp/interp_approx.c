/* How the interpreter executes an approximated stage (docs/perforation.md §1-§3 and §5): it
 * builds the pf_isample that interp_stage.c consults at every lattice point, runs the sampling
 * passes (adaptive sampling runs the stage twice), then store reconstruction and the channel
 * copy on the stage's lattice view, calling the stage runtime (reconstruct/stage_rt.h) for
 * masks and reconstruction. The loop-perforation rule lives here too: stages' row variables
 * and named `for` loops (PERF_SKIP) share it. The plan was validated when it was made; what is
 * left to check needs the bound extents. */
#include "interp/interp_internal.h"

#include "reconstruct/stage_rt.h"

#include <stdlib.h>

/* ---- loop perforation (§5) ---- */

/* (int)v for the v >= 0 of §5's rules, saturating where a cast would overflow. */
static int64_t trunc_count(float v)
{
    return v >= 2147483648.0f ? INT32_MAX : (int64_t)(int32_t)v;
}

bool pf_iperf_runs(const pf_loop_perf *p, int loop_id, int64_t j, int64_t n, int32_t a,
                   int32_t b)
{
    switch (p->kind) {
    /* `step m` multiplies the step: the iterations left are the original ones with j % m == 0 */
    case PF_PERF_STEP: return j % p->step == 0;
    /* float arithmetic, as the C of §5 reads: f * n with n converted to float */
    case PF_PERF_FIRST: return j < trunc_count(p->frac * (float)n);
    case PF_PERF_LAST: return j >= trunc_count((1.0f - p->frac) * (float)n);
    case PF_PERF_RANDOM: return pf_perf_hash(loop_id, (int32_t)j, a, b) < p->frac;
    }
    return true;
}

/* PERF_SKIP var, lo', hi', step', loop, a, b, pc: j and n of the loop's original iterations. */
bool pf_iperf_skip_runs(const pf_ictx *x, const int32_t *ip, const pf_value *R)
{
    int loop = ip[5];
    const pf_loop_perf *p = &pf_iloop_approx(x->ic, loop)->perf;
    int64_t lo = R[ip[2]].i, hi = R[ip[3]].i, st = R[ip[4]].i;
    int64_t j = ((int64_t)R[ip[1]].i - lo) / st, n = (hi - lo) / st + 1;
    return pf_iperf_runs(p, loop, j, n, R[ip[6]].i, R[ip[7]].i);
}

/* ---- one approximated stage run ---- */

typedef struct pf_iapprox {
    pf_ijob *job;
    const pf_stage_approx *a;
    pf_isample s;
    float *mask, *aux;        /* the mask plane and M (importance) or is_fine (adaptive) */
    unsigned char *rows;      /* LOOP: which rows run */
    int64_t n1, n2;           /* the mask plane */
    pf_error *err;
} pf_iapprox;

static pf_iimage *stage_image(const pf_ijob *job)
{
    return &job->base->images[job->st->image->image->index];
}

static pf_buffer image_buffer(const pf_iimage *im)
{
    pf_buffer b = { im->data, im->ndims, { 1, 1, 1, 1 }, { 0, 0, 0, 0 } };
    for (int d = 0; d < im->ndims; d++) {
        b.extent[d] = im->extent[d];
        b.stride[d] = im->stride[d];
    }
    return b;
}

/* The lattice view V of §1: the stage's image at lo + j*step in the stage dimensions. */
static pf_buffer lattice_view(const pf_ijob *job)
{
    pf_buffer v = image_buffer(stage_image(job));
    for (int d = 0; d < job->n_vars; d++) {
        v.data += job->r[d].first * v.stride[d];
        v.extent[d] = job->r[d].count;
        v.stride[d] *= job->r[d].step;
    }
    return v;
}

static int rt_fail(const pf_iapprox *r, const char *what, int code)
{
    return pf_fail(r->err, "interpreter: stage '%s': the approximation runtime's %s failed "
                   "(status %d)", r->job->st->name, what, code);
}

static bool alloc_planes(pf_iapprox *r)
{
    size_t n = (size_t)r->n1 * (size_t)r->n2;
    r->mask = calloc(n, sizeof *r->mask);
    r->aux = calloc(n, sizeof *r->aux);
    r->s.mask = r->mask;
    if (r->mask && r->aux)
        return true;
    pf_fail(r->err, "interpreter: stage '%s': out of memory for its sampling mask",
            r->job->st->name);
    return false;
}

/* §2 adaptive: coarse samples (mask 2), refinement from their values, fine samples (mask 1). */
static int sample_adaptive(pf_iapprox *r)
{
    if (!alloc_planes(r))
        return -1;
    int rc = pf_srt_adaptive_coarse((int32_t)r->n1, (int32_t)r->n2, r->a->k, r->mask);
    if (rc)
        return rt_fail(r, "adaptive_coarse", rc);
    r->s.pass = 2.0f;
    pf_ijob_run(r->job, &r->s);
    pf_buffer v = lattice_view(r->job);
    rc = pf_srt_adaptive_refine(&v, r->a->k, r->a->frac, r->mask, r->aux);
    if (rc)
        return rt_fail(r, "adaptive_refine", rc);
    r->s.pass = 1.0f;
    pf_ijob_run(r->job, &r->s);
    return 0;
}

/* §2 importance (stages of two or more variables): the mask from the reference image R at the
 * mask plane's lattice points. */
static int sample_importance(pf_iapprox *r)
{
    const pf_ijob *job = r->job;
    if (!alloc_planes(r))
        return -1;
    int64_t lo[2] = { job->r[0].first, job->r[1].first };
    int64_t step[2] = { job->r[0].step, job->r[1].step };
    pf_buffer ref = image_buffer(&job->base->images[r->a->ref->index]);
    int rc = pf_srt_importance_mask(&ref, lo, step, (int32_t)r->n1, (int32_t)r->n2, r->a->frac,
                                    r->a->sigma_imp, r->mask, r->aux);
    if (rc)
        return rt_fail(r, "importance_mask", rc);
    r->s.pass = 1.0f;
    pf_ijob_run(r->job, &r->s);
    return 0;
}

/* Loop perforation of the row variable (v2, or v1 for one variable): whole rows are kept or
 * skipped, with a = b = 0 in the random hash. */
static int sample_rows(pf_iapprox *r)
{
    int v = r->job->n_vars > 1 ? 1 : 0;
    int64_t n = r->job->r[v].count;
    r->rows = malloc((size_t)n + 1);
    if (!r->rows)
        return pf_fail(r->err, "interpreter: out of memory");
    for (int64_t j = 0; j < n; j++)
        r->rows[j] = pf_iperf_runs(&r->a->perf, r->job->st->loop_id, j, n, 0, 0);
    r->s.row_var = v;
    r->s.rows = r->rows;
    pf_ijob_run(r->job, &r->s);
    return 0;
}

static int sample(pf_iapprox *r)
{
    switch (r->a->sample) {
    case PF_SAMPLE_ADAPTIVE: return sample_adaptive(r);
    case PF_SAMPLE_IMPORTANCE: return sample_importance(r);
    case PF_SAMPLE_LOOP: return sample_rows(r);
    case PF_SAMPLE_GRID:
        for (int d = 0; d < r->job->n_vars; d++)
            r->s.spacing[d] = r->a->spacing[d];
        break;
    case PF_SAMPLE_ALL: break;
    }
    pf_ijob_run(r->job, &r->s);
    return 0;
}

/* ---- store reconstruction (§3) and channels (§2) ---- */

/* stage_rt.h's convention: the mask plane is a view's first two dimensions, so a one-variable
 * stage's view gets a unit dimension after its first (mask plane n1 x 1). */
static pf_buffer insert_unit_dim(const pf_buffer *v)
{
    pf_buffer u = *v;
    u.ndims = v->ndims + 1;
    u.extent[1] = 1;
    u.stride[1] = 0;
    for (int d = 1; d < v->ndims; d++) {
        u.extent[d + 1] = v->extent[d];
        u.stride[d + 1] = v->stride[d];
    }
    return u;
}

static pf_recon_spec recon_spec(const pf_iapprox *r)
{
    const pf_stage_approx *a = r->a;
    pf_recon_spec spec = { .sample = a->sample, .recon = a->recon, .k = a->k, .frac = a->frac,
                           .sigma = a->sigma };
    for (int d = 0; d < PF_BUFFER_MAX_DIMS; d++) {
        bool gridded = a->sample == PF_SAMPLE_GRID && d < r->job->n_vars;
        spec.spacing[d] = gridded ? a->spacing[d] : 1;
    }
    return spec;
}

static int recon_view(const pf_iapprox *r, const pf_buffer *v, const pf_recon_spec *spec)
{
    int rc = pf_srt_reconstruct(v, spec, r->mask, r->aux);
    return rc ? rt_fail(r, "reconstruct", rc) : 0;
}

/* A one-variable stage over a 4-D image is reconstructed one index of the last dimension at a
 * time (a view cannot take a fifth dimension); every other stage in one call. */
static int reconstruct(const pf_iapprox *r)
{
    if (r->a->recon == PF_RECON_NONE)
        return 0;
    pf_buffer v = lattice_view(r->job);
    pf_recon_spec spec = recon_spec(r);
    if (r->job->n_vars > 1 || v.ndims == 1)
        return recon_view(r, &v, &spec);
    if (v.ndims < PF_BUFFER_MAX_DIMS) {
        pf_buffer u = insert_unit_dim(&v);
        return recon_view(r, &u, &spec);
    }
    pf_buffer slice = v;
    slice.ndims = v.ndims - 1;
    for (int64_t i = 0; i < v.extent[v.ndims - 1]; i++) {
        slice.data = v.data + i * v.stride[v.ndims - 1];
        pf_buffer u = insert_unit_dim(&slice);
        if (recon_view(r, &u, &spec))
            return -1;
    }
    return 0;
}

static int copy_channels(const pf_iapprox *r)
{
    if (r->a->channels <= 0)
        return 0;
    const pf_ijob *job = r->job;
    int64_t lo[PF_MAX_DIMS], step[PF_MAX_DIMS];
    for (int d = 0; d < job->n_vars; d++) {
        lo[d] = job->r[d].first;
        step[d] = job->r[d].step;
    }
    pf_buffer v = lattice_view(job);
    pf_buffer ref = image_buffer(&job->base->images[r->a->ref->index]);
    int rc = pf_srt_copy_channels(&v, job->n_vars, lo, step, &ref, r->a->channels);
    return rc ? rt_fail(r, "copy_channels", rc) : 0;
}

static bool lattice_empty(const pf_ijob *job)
{
    for (int d = 0; d < job->n_vars; d++)
        if (job->r[d].count == 0)
            return true;
    return false;
}

/* Sampling, then (unless the image is stored on demand, whose reads reconstruct and copy
 * channels themselves) store reconstruction and the channel copy. */
int pf_istage_run_approx(pf_ijob *job, pf_error *err)
{
    const pf_stage *st = job->st;
    pf_iapprox r = { .job = job, .a = pf_iapprox_of(job->base->ic, st), .err = err };
    bool on_demand = job->base->ic->od_writer[st->image->image->index] == st;
    if (on_demand && pf_iod_begin(job, err))
        return -1;
    if (lattice_empty(job))
        return 0;
    r.n1 = job->r[0].count;
    r.n2 = job->n_vars > 1 ? job->r[1].count : 1;
    r.s = (pf_isample){ .kind = r.a->sample, .n_vars = job->n_vars, .n1 = r.n1,
                        .channels = r.a->channels };
    int rc = sample(&r);
    if (rc == 0 && !on_demand)
        rc = reconstruct(&r);
    if (rc == 0 && !on_demand)
        rc = copy_channels(&r);
    free(r.mask);
    free(r.aux);
    free(r.rows);
    return rc;
}
