/* The device side of the CUDA backend (gpu_device.h): device memory by buffer id, kept across
 * calls; the host walk's operations on the driver; the parameter blocks of the launches. */
#include "codegen/gpu_device.h"

#include "base/arena.h"
#include "base/clock.h"
#include "codegen/cuda_driver.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { ACT_ALLOC, ACT_ZERO, ACT_LAUNCH, ACT_RTCALL } act_kind;

/* One operation of the host walk, as it ran. */
typedef struct action {
    act_kind kind;
    int buf;              /* ALLOC, ZERO: the buffer id */
    size_t bytes;         /* ALLOC */
    bool zero;            /* ALLOC: zeroed */
    int kernel;           /* LAUNCH: its index, grid, block, shared memory and parameters */
    unsigned grid[3], block[3], shared;
    int first_slot, n_slots;
    int call;             /* RTCALL: its index in calls */
} action;

struct pf_gpu_program {
    const ir_func *f;
    pf_gpu_module m;
    pf_cuda *cuda;
    void *module;
    void **fns;          /* by kernel */
    uint64_t *dptr;      /* by buffer id: its device memory, or 0 */
    size_t *cap;         /* by buffer id: bytes allocated */
    size_t *used;        /* by buffer id: bytes of the current image */
    void *ev[2];         /* before the first launch, after the last */
    float *stage;        /* host staging for arguments that are not dense */
    size_t stage_cap;
    int launches;
    int64_t (*ext)[IR_MAX_DIMS];  /* the arguments' extents at the last call */
    bool resident;       /* the last call's inputs are on the device */
    /* The host walk's operations, recorded at the first call with these extents and replayed
     * after: the walk's host work (window sizes of every block) would otherwise sit between
     * the launches, inside the timed region, with the GPU idle. */
    action *acts;
    int n_acts, cap_acts;
    uint64_t *slots;     /* the launches' parameter blocks, one after the other */
    int n_slots, cap_slots;
    pf_gpu_rtcall *calls; /* the runtime calls the host runs, as recorded */
    int n_calls, cap_calls;
    float **host;         /* by buffer id: a host copy for those calls, or NULL */
    size_t *host_cap;
    int64_t (*rec_ext)[IR_MAX_DIMS];  /* the extents the recording is for */
    bool recorded;
    bool lost;           /* a kernel faulted: the context is unusable */
    char lost_msg[PF_ERROR_MAX + 32];
};

/* ---- device memory ---- */

/* At least `bytes` of device memory for buffer id (kept from an earlier call when it fits). */
static int ensure(pf_gpu_program *p, int id, size_t bytes, pf_error *err)
{
    p->used[id] = bytes;
    if (p->dptr[id] && p->cap[id] >= bytes)
        return 0;
    pf_cuda_free(p->cuda, p->dptr[id]);
    p->dptr[id] = 0;
    p->cap[id] = 0;
    if (pf_cuda_alloc(p->cuda, bytes, &p->dptr[id], err))
        return -1;
    p->cap[id] = bytes;
    return 0;
}

static action *record(pf_gpu_program *p, act_kind kind, int buf)
{
    if (p->n_acts == p->cap_acts) {
        p->cap_acts = p->cap_acts ? 2 * p->cap_acts : 16;
        p->acts = pf_xrealloc(p->acts, sizeof *p->acts * (size_t)p->cap_acts);
    }
    action *a = &p->acts[p->n_acts++];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->buf = buf;
    return a;
}

static int op_alloc(void *ctx, const ir_buffer *b, size_t bytes, bool zero, pf_error *err)
{
    pf_gpu_program *p = ctx;
    action *a = record(p, ACT_ALLOC, b->id);
    a->bytes = bytes;
    a->zero = zero;
    if (ensure(p, b->id, bytes, err))
        return -1;
    return zero ? pf_cuda_zero(p->cuda, p->dptr[b->id], bytes, err) : 0;
}

static void op_release(void *ctx, const ir_buffer *b)
{
    (void)ctx, (void)b;  /* kept for the next call */
}

static int op_zero(void *ctx, const ir_buffer *b, pf_error *err)
{
    pf_gpu_program *p = ctx;
    if (!p->dptr[b->id])
        return pf_fail(err, "CUDA: %s is zeroed before it has device memory", b->name);
    record(p, ACT_ZERO, b->id);
    return pf_cuda_zero(p->cuda, p->dptr[b->id], p->used[b->id], err);
}

/* ---- runtime calls the host runs (masks: docs/gpu.md §5) ---- */

static float *host_copy(pf_gpu_program *p, int id)
{
    if (p->host_cap[id] < p->used[id]) {
        free(p->host[id]);
        p->host[id] = pf_xmalloc(p->used[id]);
        p->host_cap[id] = p->used[id];
    }
    return p->host[id];
}

/* The device's copies of what the call reads down, the call on the host, what it writes up:
 * inside the timed region, so the kernel time includes the round trip. */
static int rtcall_action(pf_gpu_program *p, const pf_gpu_rtcall *c, pf_error *err)
{
    const ir_stmt *s = c->s;
    float *data[3] = { NULL, NULL, NULL };
    int rc = 0;
    for (int i = 0; i < s->n_bufs && rc == 0; i++) {
        int id = s->bufs[i]->id;
        if (!p->dptr[id])
            return pf_fail(err, "CUDA: %s takes %s, which has no device memory",
                           ir_rt_name(s->rt), s->bufs[i]->name);
        data[i] = host_copy(p, id);
        if (pf_gpu_rtcall_reads(s, i))
            rc = pf_cuda_download(p->cuda, data[i], p->dptr[id], p->used[id], err);
    }
    if (rc == 0)
        rc = pf_gpu_rtcall_run(c, data, err);
    for (int i = 0; i < s->n_bufs && rc == 0; i++)
        if (pf_gpu_rtcall_writes(s, i))
            rc = pf_cuda_upload(p->cuda, p->dptr[s->bufs[i]->id], data[i],
                                p->used[s->bufs[i]->id], err);
    return rc;
}

static int op_rtcall(void *ctx, const pf_gpu_rtcall *c, pf_error *err)
{
    pf_gpu_program *p = ctx;
    if (p->n_calls == p->cap_calls) {
        p->cap_calls = p->cap_calls ? 2 * p->cap_calls : 4;
        p->calls = pf_xrealloc(p->calls, sizeof *p->calls * (size_t)p->cap_calls);
    }
    p->calls[p->n_calls] = *c;
    record(p, ACT_RTCALL, -1)->call = p->n_calls++;
    return rtcall_action(p, c, err);
}

/* ---- launches ---- */

int pf_gpu_kernel_params(const ir_func *f, const pf_gpu_kernel *k, const uint64_t *dptr,
                         const pf_gpu_value *vars, const char *known, uint64_t *slots,
                         void **params, pf_error *err)
{
    int n = 0;
    for (int i = 0; i < k->n_buf_params; i++, n++) {
        const ir_buffer *b = f->buffers[k->buf_params[i]];
        if (!dptr[b->id] && !b->gpu_shared)
            return pf_fail(err, "CUDA: %s uses %s, which has no device memory", k->name,
                           b->name);
        slots[n] = dptr[b->id];  /* a shared window's parameter is unused: 0 */
        params[n] = &slots[n];
    }
    for (int i = 0; i < k->n_var_params; i++, n++) {
        int id = k->var_params[i];
        if (!known[id])
            return pf_fail(err, "CUDA: %s takes a variable (id %d) the host has no value for "
                           "(a value a kernel computes)", k->name, id);
        slots[n] = 0;
        int32_t i32 = (int32_t)vars[id].i;
        uint8_t u8 = vars[id].i != 0;
        switch (k->var_types[i]) {
        case IR_BOOL: memcpy(&slots[n], &u8, 1); break;
        case IR_I32: memcpy(&slots[n], &i32, 4); break;
        case IR_I64: memcpy(&slots[n], &vars[id].i, 8); break;
        case IR_F32: memcpy(&slots[n], &vars[id].f, 4); break;
        case IR_F64:  /* only kernels make f64 values (codegen/lower_gauss_gpu.c) */
            return pf_fail(err, "CUDA: %s takes an f64 host value", k->name);
        }
        params[n] = &slots[n];
    }
    return 0;
}

/* The parameter block of kernel k's launch l, appended to p->slots. */
static int param_block(pf_gpu_program *p, int k, const pf_gpu_launch *l, pf_error *err)
{
    const pf_gpu_kernel *kn = &p->m.kernels[k];
    int np = kn->n_params;
    if (p->n_slots + np > p->cap_slots) {
        p->cap_slots = 2 * (p->n_slots + np) + 16;
        p->slots = pf_xrealloc(p->slots, sizeof *p->slots * (size_t)p->cap_slots);
    }
    void **params = pf_xmalloc(sizeof *params * (size_t)(np + 1));
    int rc = pf_gpu_kernel_params(p->f, kn, p->dptr, l->vars, l->known, p->slots + p->n_slots,
                                  params, err);
    free(params);
    p->n_slots += rc == 0 ? np : 0;
    return rc;
}

static int launch_action(pf_gpu_program *p, const action *a, pf_error *err)
{
    void **params = pf_xmalloc(sizeof *params * (size_t)(a->n_slots + 1));
    for (int i = 0; i < a->n_slots; i++)
        params[i] = &p->slots[a->first_slot + i];
    int rc = pf_cuda_launch(p->cuda, p->fns[a->kernel], a->grid, a->block, a->shared, params,
                            err);
    free(params);
    p->launches += rc == 0;
    return rc;
}

static int op_launch(void *ctx, const pf_gpu_launch *l, pf_error *err)
{
    pf_gpu_program *p = ctx;
    int k = 0;
    while (k < p->m.n_kernels && p->m.kernels[k].nest != l->nest)
        k++;
    if (k == p->m.n_kernels)
        return pf_fail(err, "internal error: CUDA: the host launches a nest with no kernel");
    if (l->shared_bytes > 227 * 1024)  /* sm_80/sm_90's most per block */
        return pf_fail(err, "CUDA: %s needs %zu bytes of shared memory a block (227 KiB at "
                       "most): smaller tiles", p->m.kernels[k].name, l->shared_bytes);
    action a = { .kind = ACT_LAUNCH, .kernel = k, .shared = (unsigned)l->shared_bytes,
                 .first_slot = p->n_slots, .n_slots = p->m.kernels[k].n_params };
    memcpy(a.grid, l->grid, sizeof a.grid);
    memcpy(a.block, l->block, sizeof a.block);
    if (param_block(p, k, l, err))
        return -1;
    *record(p, ACT_LAUNCH, -1) = a;
    return launch_action(p, &a, err);
}

/* The recorded walk again: allocations (kept, so the parameters' addresses hold), zeroing,
 * launches. */
static int replay(pf_gpu_program *p, pf_error *err)
{
    int rc = 0;
    for (int i = 0; i < p->n_acts && rc == 0; i++) {
        const action *a = &p->acts[i];
        if (a->kind == ACT_LAUNCH)
            rc = launch_action(p, a, err);
        else if (a->kind == ACT_RTCALL)
            rc = rtcall_action(p, &p->calls[a->call], err);
        else if (a->kind == ACT_ZERO || a->zero)
            rc = pf_cuda_zero(p->cuda, p->dptr[a->buf], a->kind == ACT_ZERO ? p->used[a->buf]
                                                                           : a->bytes, err);
    }
    return rc;
}

/* ---- transfers ---- */

static float *staging(pf_gpu_program *p, size_t bytes)
{
    if (p->stage_cap < bytes) {
        free(p->stage);
        p->stage = pf_xmalloc(bytes);
        p->stage_cap = bytes;
    }
    return p->stage;
}

static int upload(pf_gpu_program *p, const pf_buffer *b, uint64_t dst, pf_error *err)
{
    size_t bytes = (size_t)pf_buffer_count(b) * 4;
    if (pf_buffer_dense(b))
        return pf_cuda_upload(p->cuda, dst, b->data, bytes, err);
    float *flat = staging(p, bytes);
    pf_buffer_pack(b, flat, true);
    return pf_cuda_upload(p->cuda, dst, flat, bytes, err);
}

static int download(pf_gpu_program *p, const pf_buffer *b, uint64_t src, pf_error *err)
{
    size_t bytes = (size_t)pf_buffer_count(b) * 4;
    if (pf_buffer_dense(b))
        return pf_cuda_download(p->cuda, b->data, src, bytes, err);
    float *flat = staging(p, bytes);
    if (pf_cuda_download(p->cuda, flat, src, bytes, err))
        return -1;
    pf_buffer_pack(b, flat, false);
    return 0;
}

/* ---- the program ---- */

/* One driver handle for the process, opened by the first program and kept: opening retains
 * the device's primary context, and releasing the last reference destroys it, so a process
 * that builds variant after variant (tests, the search) would create a context each time. */
static pthread_mutex_t cuda_lock = PTHREAD_MUTEX_INITIALIZER;
static pf_cuda *cuda_handle;
static bool context_lost;  /* a kernel faulted: every program of the process is unusable */

bool pf_gpu_context_lost(void)
{
    return context_lost;
}

static pf_cuda *process_cuda(pf_error *err)
{
    pthread_mutex_lock(&cuda_lock);
    if (!cuda_handle)
        cuda_handle = pf_cuda_open(err);
    pf_cuda *c = cuda_handle;
    pthread_mutex_unlock(&cuda_lock);
    return c && pf_cuda_make_current(c, err) == 0 ? c : NULL;
}

pf_gpu_program *pf_gpu_program_new(const ir_func *f, pf_gpu_module *m, pf_error *err)
{
    pf_gpu_program *p = pf_xcalloc(1, sizeof *p);
    p->f = f;
    p->m = *m;
    memset(m, 0, sizeof *m);
    size_t nb = (size_t)f->n_buffers + 1;
    p->dptr = pf_xcalloc(nb, sizeof *p->dptr);
    p->cap = pf_xcalloc(nb, sizeof *p->cap);
    p->used = pf_xcalloc(nb, sizeof *p->used);
    p->fns = pf_xcalloc((size_t)p->m.n_kernels + 1, sizeof *p->fns);
    p->host = pf_xcalloc(nb, sizeof *p->host);
    p->host_cap = pf_xcalloc(nb, sizeof *p->host_cap);
    p->ext = pf_xcalloc((size_t)(f->n_inputs + f->n_outputs) + 1, sizeof *p->ext);
    p->rec_ext = pf_xcalloc((size_t)(f->n_inputs + f->n_outputs) + 1, sizeof *p->rec_ext);
    int rc = (p->cuda = process_cuda(err)) ? 0 : -1;
    if (rc == 0)
        rc = pf_cuda_load_ptx(p->cuda, p->m.ptx, &p->module, err);
    for (int i = 0; rc == 0 && i < p->m.n_kernels; i++)
        rc = pf_cuda_kernel(p->cuda, p->module, p->m.kernels[i].name, &p->fns[i], err);
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = pf_cuda_event_new(p->cuda, &p->ev[i], err);
    if (rc) {
        pf_gpu_program_free(p);
        return NULL;
    }
    return p;
}

/* The host walk for the arguments' extents in p->ext, recorded for the calls after. */
static int walk(pf_gpu_program *p, pf_error *err)
{
    size_t bytes = sizeof *p->ext * (size_t)(p->f->n_inputs + p->f->n_outputs);
    p->n_acts = p->n_slots = p->n_calls = 0;
    pf_gpu_host_ops ops = { p, op_alloc, op_release, op_zero, op_launch, op_rtcall };
    int rc = pf_gpu_host_run(p->f, (const int64_t(*)[IR_MAX_DIMS])p->ext, &ops, err);
    p->recorded = rc == 0;
    memcpy(p->rec_ext, p->ext, bytes);
    return rc;
}

/* After a failed call: when the context no longer synchronizes, a kernel faulted (a fault is
 * reported by whichever call comes next, a launch, an event, a copy) and nothing runs on this
 * context again; the message says so. */
static void check_lost(pf_gpu_program *p, pf_error *err)
{
    if (p->lost || !pf_cuda_synchronize(p->cuda, NULL))
        return;
    p->lost = context_lost = true;
    snprintf(p->lost_msg, sizeof p->lost_msg, "%.*s (the CUDA context is lost)",
             PF_ERROR_MAX - 32, err->msg);
    pf_fail(err, "%s", p->lost_msg);
}

/* The launches of one call, between the two events: the recorded walk when the extents are
 * those it was recorded for, else the walk (recorded). */
static int run_kernels(pf_gpu_program *p, pf_device_times *t, pf_error *err)
{
    size_t bytes = sizeof *p->ext * (size_t)(p->f->n_inputs + p->f->n_outputs);
    bool same = p->recorded && memcmp(p->rec_ext, p->ext, bytes) == 0;
    p->launches = 0;
    int rc = pf_cuda_event_record(p->cuda, p->ev[0], err);
    if (rc == 0)
        rc = same ? replay(p, err) : walk(p, err);
    if (rc == 0)
        rc = pf_cuda_event_record(p->cuda, p->ev[1], err);
    if (rc == 0)
        rc = pf_cuda_event_ms(p->cuda, p->ev[0], p->ev[1], &t->kernel_ms, err);
    t->launches = p->launches;
    return rc;
}

int pf_gpu_program_run(pf_gpu_program *p, const pf_buffer *args, pf_device_times *t,
                       pf_error *err)
{
    memset(t, 0, sizeof *t);
    if (p->lost)
        return pf_fail(err, "%s", p->lost_msg);
    const ir_func *f = p->f;
    p->resident = false;
    int rc = pf_cuda_make_current(p->cuda, err);
    double t0 = pf_now_ms();
    for (int i = 0; rc == 0 && i < f->n_inputs + f->n_outputs; i++) {
        const ir_buffer *b = f->args[i];
        for (int d = 0; d < IR_MAX_DIMS; d++)
            p->ext[i][d] = d < args[i].ndims ? args[i].extent[d] : 1;
        rc = ensure(p, b->id, (size_t)pf_buffer_count(&args[i]) * 4, err);
        if (rc == 0 && i < f->n_inputs)
            rc = upload(p, &args[i], p->dptr[b->id], err);
    }
    double t1 = pf_now_ms();
    t->upload_ms = t1 - t0;
    if (rc == 0)
        rc = run_kernels(p, t, err);
    t1 = pf_now_ms();
    for (int i = f->n_inputs; rc == 0 && i < f->n_inputs + f->n_outputs; i++)
        rc = download(p, &args[i], p->dptr[f->args[i]->id], err);
    t->download_ms = pf_now_ms() - t1;
    p->resident = rc == 0;
    if (rc)
        check_lost(p, err);
    return rc;
}

int pf_gpu_program_rerun(pf_gpu_program *p, pf_device_times *t, pf_error *err)
{
    memset(t, 0, sizeof *t);
    if (p->lost)
        return pf_fail(err, "%s", p->lost_msg);
    if (!p->resident)
        return pf_fail(err, "internal error: CUDA: a run again without a run before it");
    int rc = pf_cuda_make_current(p->cuda, err);
    if (rc == 0 && (rc = run_kernels(p, t, err)) != 0)
        check_lost(p, err);
    return rc;
}

const char *pf_gpu_program_device(const pf_gpu_program *p)
{
    return pf_cuda_device_name(p->cuda);
}

void pf_gpu_program_free(pf_gpu_program *p)
{
    if (!p)
        return;
    for (int i = 0; p->cuda && i < p->f->n_buffers; i++)
        pf_cuda_free(p->cuda, p->dptr[i]);
    for (int i = 0; p->cuda && i < 2; i++)
        pf_cuda_event_free(p->cuda, p->ev[i]);
    if (p->cuda)
        pf_cuda_unload(p->cuda, p->module);
    pf_gpu_module_free(&p->m);
    free(p->fns);
    free(p->ext);
    free(p->rec_ext);
    free(p->acts);
    free(p->slots);
    free(p->calls);
    for (int i = 0; i < p->f->n_buffers; i++)
        free(p->host[i]);
    free(p->host);
    free(p->host_cap);
    free(p->dptr);
    free(p->cap);
    free(p->used);
    free(p->stage);
    free(p);
}
