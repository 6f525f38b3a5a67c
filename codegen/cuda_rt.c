/* An exported CUDA library's calls on the device (cuda_rt.h): the driver opened at the first
 * call (dlopen; without it a clear NO_DEVICE error), the PTX loaded, the plan made once per
 * argument extents and replayed between two CUDA events, device memory kept across calls. */
#include "codegen/cuda_rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double rt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- the driver and the module ---- */

static int rt_open(pf_crt_state *s, pf_error *err)
{
    const pf_crt_program *p = s->prog;
    if (!s->cuda && !(s->cuda = pf_cuda_open(err)))
        return strncmp(err->msg, "no CUDA", 7) == 0 ? PF_CRT_NO_DEVICE : PF_CRT_CUDA;
    if (pf_cuda_make_current(s->cuda, err))
        return PF_CRT_CUDA;
    if (s->module)
        return 0;
    size_t nb = (size_t)p->n_buffers + 1;
    if (!s->fns && !(s->fns = calloc((size_t)p->n_kernels + 1, sizeof *s->fns)))
        return PF_CRT_MEMORY;
    if (!s->own && !(s->own = calloc(nb, sizeof *s->own)))
        return PF_CRT_MEMORY;
    if (!s->cap && !(s->cap = calloc(nb, sizeof *s->cap)))
        return PF_CRT_MEMORY;
    if (pf_cuda_load_ptx(s->cuda, p->ptx, &s->module, err))
        return PF_CRT_CUDA;
    for (int k = 0; k < p->n_kernels; k++)
        if (pf_cuda_kernel(s->cuda, s->module, p->kernels[k].name, &s->fns[k], err))
            return PF_CRT_CUDA;
    for (int i = 0; i < 2; i++)
        if (!s->ev[i] && pf_cuda_event_new(s->cuda, &s->ev[i], err))
            return PF_CRT_CUDA;
    return 0;
}

/* At least `bytes` of the library's device memory for buffer id (kept when it fits). */
static int rt_ensure(pf_crt_state *s, int id, size_t bytes, pf_error *err)
{
    if (s->own[id] && s->cap[id] >= bytes)
        return 0;
    pf_cuda_free(s->cuda, s->own[id]);
    s->own[id] = 0;
    s->cap[id] = 0;
    if (pf_cuda_alloc(s->cuda, bytes, &s->own[id], err))
        return PF_CRT_MEMORY;
    s->cap[id] = bytes;
    return 0;
}

/* The plan for these extents: the kept one when they are the same. */
static int rt_plan_for(pf_crt_state *s, const int64_t (*ext)[PF_CRT_MAX_DIMS], pf_error *err)
{
    size_t bytes = sizeof *ext * (size_t)(s->prog->n_inputs + s->prog->n_outputs);
    if (s->planned && memcmp(s->plan_ext, ext, bytes) == 0)
        return 0;
    pf_crt_plan_free(&s->plan);
    s->planned = false;
    int rc = pf_crt_plan_make(s->prog, ext, &s->plan, err);
    for (int id = 0; rc == 0 && id < s->prog->n_buffers; id++)
        if (s->plan.most[id] > 0)
            rc = rt_ensure(s, id, (size_t)s->plan.most[id], err);
    if (rc)
        return rc;
    memcpy(s->plan_ext, ext, bytes);
    s->planned = true;  /* with its device memory */
    return 0;
}

/* ---- the replay ---- */

static int rt_replay_action(pf_crt_state *s, const pf_crt_action *a, const uint64_t *dptr,
                         int64_t *used, uint64_t *slots, void **params, pf_error *err)
{
    if (a->op == PF_CRT_ALLOC) {
        used[a->buf] = a->bytes;
        return a->zero ? pf_cuda_zero(s->cuda, dptr[a->buf], (size_t)a->bytes, err) : 0;
    }
    if (a->op == PF_CRT_ZERO)
        return pf_cuda_zero(s->cuda, dptr[a->buf], (size_t)used[a->buf], err);
    if (pf_crt_params(&s->plan, a, dptr, slots, params, err))
        return -1;
    return pf_cuda_launch(s->cuda, s->fns[a->kernel], a->grid, a->block, a->shared, params,
                          err);
}

/* The plan's actions between the two events; a failure that leaves the context unusable (a
 * kernel's fault) marks the library lost. */
static int rt_replay(pf_crt_state *s, const uint64_t *dptr, const int64_t *arg_bytes,
                     pf_crt_times *t, pf_error *err)
{
    const pf_crt_program *p = s->prog;
    int most = 1;
    for (int k = 0; k < p->n_kernels; k++)
        most = p->kernels[k].n_bufs + p->kernels[k].n_vars > most
                   ? p->kernels[k].n_bufs + p->kernels[k].n_vars : most;
    int64_t *used = calloc((size_t)p->n_buffers + 1, sizeof *used);
    uint64_t *slots = calloc((size_t)most, sizeof *slots);
    void **params = calloc((size_t)most, sizeof *params);
    if (!used || !slots || !params) {
        free(used), free(slots), free(params);
        return PF_CRT_MEMORY;
    }
    for (int i = 0; i < p->n_inputs + p->n_outputs; i++)
        used[p->arg_bufs[i]] = arg_bytes[i];
    int rc = pf_cuda_event_record(s->cuda, s->ev[0], err);
    for (int i = 0; rc == 0 && i < s->plan.n_acts; i++) {
        rc = rt_replay_action(s, &s->plan.acts[i], dptr, used, slots, params, err);
        t->launches += rc == 0 && s->plan.acts[i].op == PF_CRT_LAUNCH;
    }
    if (rc == 0)
        rc = pf_cuda_event_record(s->cuda, s->ev[1], err);
    if (rc == 0)
        rc = pf_cuda_event_ms(s->cuda, s->ev[0], s->ev[1], &t->kernel_ms, err);
    free(used), free(slots), free(params);
    if (rc && pf_cuda_synchronize(s->cuda, NULL)) {
        s->lost = true;
        snprintf(s->lost_msg, sizeof s->lost_msg, "%.*s (the CUDA context is lost)",
                 PF_ERROR_MAX - 32, err->msg);
        pf_fail(err, "%s", s->lost_msg);
    }
    return rc ? PF_CRT_CUDA : 0;
}

/* ---- transfers ---- */

static float *rt_staging(pf_crt_state *s, size_t bytes)
{
    if (s->stage_cap < bytes) {
        free(s->stage);
        s->stage = malloc(bytes);
        s->stage_cap = s->stage ? bytes : 0;
    }
    return s->stage;
}

static int rt_transfer(pf_crt_state *s, const pf_buffer *b, uint64_t dev, bool up, pf_error *err)
{
    size_t bytes = (size_t)pf_buffer_count(b) * 4;
    float *flat = pf_buffer_dense(b) ? b->data : rt_staging(s, bytes);
    if (!flat)
        return PF_CRT_MEMORY;
    if (up && flat != b->data)
        pf_buffer_pack(b, flat, true);
    int rc = up ? pf_cuda_upload(s->cuda, dev, flat, bytes, err)
                : pf_cuda_download(s->cuda, flat, dev, bytes, err);
    if (rc == 0 && !up && flat != b->data)
        pf_buffer_pack(b, flat, false);
    return rc ? PF_CRT_CUDA : 0;
}

/* ---- calls ---- */

static int rt_run_locked(pf_crt_state *s, const pf_buffer *args, const uint64_t *user_dptr,
                      const int64_t (*ext)[PF_CRT_MAX_DIMS], pf_error *err)
{
    const pf_crt_program *p = s->prog;
    int n = p->n_inputs + p->n_outputs;
    if (s->lost)
        return pf_fail(err, "%s", s->lost_msg), PF_CRT_CUDA;
    int rc = rt_open(s, err);
    if (rc == 0)
        rc = rt_plan_for(s, ext, err);
    if (rc)
        return rc;
    int64_t arg_bytes[16];
    for (int i = 0; i < n; i++) {
        arg_bytes[i] = 4;
        for (int d = 0; d < PF_CRT_MAX_DIMS; d++)
            arg_bytes[i] *= ext[i][d];
    }
    uint64_t *dptr = calloc((size_t)p->n_buffers + 1, sizeof *dptr);
    if (!dptr)
        return PF_CRT_MEMORY;
    memcpy(dptr, s->own, sizeof *dptr * (size_t)p->n_buffers);  /* the internal images */
    pf_crt_times t = { 0 };
    double t0 = rt_now_ms();
    for (int i = 0; rc == 0 && i < n; i++) {  /* the arguments: the caller's, or copies */
        int id = p->arg_bufs[i];
        if (user_dptr) {
            dptr[id] = user_dptr[i];
            continue;
        }
        rc = rt_ensure(s, id, (size_t)arg_bytes[i], err);
        dptr[id] = s->own[id];
        if (rc == 0 && i < p->n_inputs)
            rc = rt_transfer(s, &args[i], dptr[id], true, err);
    }
    t.upload_ms = user_dptr ? 0 : rt_now_ms() - t0;
    if (rc == 0)
        rc = rt_replay(s, dptr, arg_bytes, &t, err);
    t0 = rt_now_ms();
    for (int i = p->n_inputs; rc == 0 && !user_dptr && i < n; i++)
        rc = rt_transfer(s, &args[i], dptr[p->arg_bufs[i]], false, err);
    t.download_ms = user_dptr ? 0 : rt_now_ms() - t0;
    if (rc == 0)
        s->times = t;
    free(dptr);
    return rc;
}

int pf_crt_run(pf_crt_state *s, const pf_buffer *args, pf_error *err)
{
    int64_t ext[16][PF_CRT_MAX_DIMS];
    for (int i = 0; i < s->prog->n_inputs + s->prog->n_outputs; i++)
        for (int d = 0; d < PF_CRT_MAX_DIMS; d++)
            ext[i][d] = d < args[i].ndims ? args[i].extent[d] : 1;
    pthread_mutex_lock(&s->lock);
    int rc = rt_run_locked(s, args, NULL, (const int64_t(*)[PF_CRT_MAX_DIMS])ext, err);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int pf_crt_run_device(pf_crt_state *s, const uint64_t *dptr,
                      const int64_t (*ext)[PF_CRT_MAX_DIMS], pf_error *err)
{
    pthread_mutex_lock(&s->lock);
    int rc = rt_run_locked(s, NULL, dptr, ext, err);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

pf_crt_times pf_crt_last_times(pf_crt_state *s)
{
    pthread_mutex_lock(&s->lock);
    pf_crt_times t = s->times;
    pthread_mutex_unlock(&s->lock);
    return t;
}

void pf_crt_release(pf_crt_state *s)
{
    pthread_mutex_lock(&s->lock);
    for (int i = 0; s->cuda && s->own && i < s->prog->n_buffers; i++)
        pf_cuda_free(s->cuda, s->own[i]);
    for (int i = 0; s->cuda && i < 2; i++)
        pf_cuda_event_free(s->cuda, s->ev[i]);
    if (s->cuda)
        pf_cuda_unload(s->cuda, s->module);
    pf_cuda_close(s->cuda);
    pf_crt_plan_free(&s->plan);
    free(s->fns), free(s->own), free(s->cap), free(s->stage);
    s->cuda = NULL, s->module = NULL, s->fns = NULL, s->own = NULL, s->cap = NULL;
    s->ev[0] = s->ev[1] = NULL;
    s->stage = NULL, s->stage_cap = 0, s->planned = false;
    pthread_mutex_unlock(&s->lock);
}
