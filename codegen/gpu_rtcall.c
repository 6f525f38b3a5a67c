/* The stage-runtime calls the CUDA host runs itself (gpu_host.h, docs/gpu.md §5): which, what
 * each reads and writes, and the call on host copies of its buffers, with the views and
 * arguments the JIT's code passes (llvm_srt.c), so the result is the CPU's bit for bit.
 *
 * Why on the host: importance sampling's mask is an error diffusion (Ostromoukhov), strictly
 * sequential over the plane; adaptive sampling's refinement ranks every tile's priority and
 * marks blocks until a count is reached, a global order. A reconstruction from such a mask
 * (nearest by distance transform, Gaussian by recursive filters over the irregular samples)
 * runs here too, for now, so that adaptive and importance variants run at all; the coarse mask
 * of adaptive sampling is a kernel (lower_mask.c). */
#include "codegen/gpu_host.h"

#include "codegen/runtime.h"

#include <string.h>

bool pf_gpu_rtcall_on_host(const ir_stmt *s)
{
    switch (s->rt) {
    case IR_RT_IMPORTANCE_MASK:
    case IR_RT_ADAPTIVE_COARSE:
    case IR_RT_ADAPTIVE_REFINE:
        return true;
    case IR_RT_RECONSTRUCT:
        return s->n_bufs == 3;  /* from an adaptive or importance mask */
    default:
        return false;
    }
}

bool pf_gpu_rtcall_reads(const ir_stmt *s, int i)
{
    switch (s->rt) {
    case IR_RT_IMPORTANCE_MASK:
    case IR_RT_ADAPTIVE_REFINE:
        return i == 0;  /* the reference; the coarse samples */
    case IR_RT_RECONSTRUCT:
        return true;    /* the samples (it writes only the skipped elements), mask, aux */
    default:
        return false;
    }
}

bool pf_gpu_rtcall_writes(const ir_stmt *s, int i)
{
    switch (s->rt) {
    case IR_RT_IMPORTANCE_MASK:
    case IR_RT_ADAPTIVE_REFINE:
        return i >= 1;  /* mask, aux */
    case IR_RT_ADAPTIVE_COARSE:
    case IR_RT_RECONSTRUCT:
        return i == 0;
    default:
        return false;
    }
}

/* Buffer i whole, or its lattice view when view gives (lo, step, n) for the first k
 * dimensions (llvm_srt.c's em_view). */
static pf_buffer view_of(const pf_gpu_rtcall *c, float *const *data, int i,
                         const pf_gpu_value *view, int k)
{
    const ir_buffer *b = c->s->bufs[i];
    pf_buffer v = { data[i], b->ndims, { 1, 1, 1, 1 }, { 0, 0, 0, 0 } };
    int64_t off = 0;
    for (int d = 0; d < b->ndims; d++) {
        v.extent[d] = c->extent[i][d];
        v.stride[d] = c->stride[i][d];
        if (view && d < k) {
            off += view[3 * d].i * v.stride[d];
            v.extent[d] = view[3 * d + 2].i;
            v.stride[d] *= view[3 * d + 1].i;
        }
    }
    v.data += off;
    return v;
}

static int importance(const pf_gpu_rtcall *c, float *const *data)
{
    const pf_gpu_value *a = c->args;
    pf_buffer ref = view_of(c, data, 0, NULL, 0);
    int64_t lo[2] = { a[0].i, a[2].i }, step[2] = { a[1].i, a[3].i };
    return pf_srt_importance_mask(&ref, lo, step, (int32_t)a[4].i, (int32_t)a[5].i, a[6].f,
                                  a[7].f, data[1], data[2]);
}

static int reconstruct(const pf_gpu_rtcall *c, float *const *data)
{
    int k = c->s->view_dims;
    const pf_gpu_value *a = c->args + 3 * k;
    pf_recon_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.sample = (pf_sample_kind)a[0].i;
    spec.recon = (pf_recon_kind)a[1].i;
    for (int d = 0; d < 4; d++)
        spec.spacing[d] = (int32_t)a[2 + d].i;
    spec.k = (int32_t)a[6].i;
    spec.frac = a[7].f;
    spec.sigma = a[8].f;
    pf_buffer v = view_of(c, data, 0, c->args, k);
    return pf_rt_reconstruct(&v, &spec, data[1], data[2]);
}

int pf_gpu_rtcall_run(const pf_gpu_rtcall *c, float *const *data, pf_error *err)
{
    const ir_stmt *s = c->s;
    const pf_gpu_value *a = c->args;
    int k = s->view_dims, rc;
    switch (s->rt) {
    case IR_RT_IMPORTANCE_MASK:
        rc = importance(c, data);
        break;
    case IR_RT_ADAPTIVE_COARSE:
        rc = pf_srt_adaptive_coarse((int32_t)a[0].i, (int32_t)a[1].i, (int32_t)a[2].i, data[0]);
        break;
    case IR_RT_ADAPTIVE_REFINE: {
        pf_buffer v = view_of(c, data, 0, a, k);
        rc = pf_srt_adaptive_refine(&v, (int32_t)a[3 * k].i, a[3 * k + 1].f, data[1], data[2]);
        break;
    }
    case IR_RT_RECONSTRUCT:
        rc = reconstruct(c, data);
        break;
    default:
        return pf_fail(err, "CUDA host: the runtime call %s does not run on the host",
                       ir_rt_name(s->rt));
    }
    return rc < 0 ? pf_fail(err, "CUDA host: the runtime call %s failed (status %d)",
                            ir_rt_name(s->rt), rc) : 0;
}
