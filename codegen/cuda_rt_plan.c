/* The plan of an exported CUDA library's call (cuda_rt.h): what the generated walk records,
 * without a device, and each launch's parameter block. Library code of an export: malloc
 * failures are reported, never fatal. */
#include "codegen/cuda_rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int plan_fail(pf_crt_plan *plan, int status, const char *msg)
{
    if (plan->status == 0) {
        plan->status = status;
        pf_fail(&plan->err, "%s", msg);
    }
    return -1;
}

int pf_crt_fail(pf_crt_plan *plan, const char *msg)
{
    return plan_fail(plan, PF_CRT_CUDA, msg);
}

/* Room for one more action (and n more slots): false when memory ran out. */
static bool plan_grow(pf_crt_plan *plan, size_t n)
{
    if (plan->n_acts == plan->cap_acts) {
        int cap = plan->cap_acts ? 2 * plan->cap_acts : 16;
        pf_crt_action *a = realloc(plan->acts, sizeof *a * (size_t)cap);
        if (!a)
            return false;
        plan->acts = a;
        plan->cap_acts = cap;
    }
    if (plan->n_slots + n > plan->cap_slots) {
        size_t cap = 2 * (plan->n_slots + n) + 16;
        uint64_t *s = realloc(plan->slots, sizeof *s * cap);
        if (!s)
            return false;
        plan->slots = s;
        plan->cap_slots = cap;
    }
    return true;
}

static pf_crt_action *plan_append(pf_crt_plan *plan, pf_crt_op op, int buf, size_t slots)
{
    if (plan->status)
        return NULL;
    if (!plan_grow(plan, slots)) {
        plan_fail(plan, PF_CRT_MEMORY, "memory ran out recording the launches");
        return NULL;
    }
    pf_crt_action *a = &plan->acts[plan->n_acts++];
    memset(a, 0, sizeof *a);
    a->op = op;
    a->buf = buf;
    return a;
}

int pf_crt_alloc(pf_crt_plan *plan, int buf, int64_t bytes, bool zero)
{
    pf_crt_action *a = plan_append(plan, PF_CRT_ALLOC, buf, 0);
    if (!a)
        return -1;
    a->bytes = bytes;
    a->zero = zero;
    if (bytes > plan->most[buf])
        plan->most[buf] = bytes;
    return 0;
}

int pf_crt_zero(pf_crt_plan *plan, int buf)
{
    return plan_append(plan, PF_CRT_ZERO, buf, 0) ? 0 : -1;
}

uint64_t *pf_crt_launch(pf_crt_plan *plan, int k, const unsigned grid[3],
                        const unsigned block[3], int64_t shared_bytes)
{
    const pf_crt_kernel *kn = &plan->prog->kernels[k];
    if (shared_bytes > PF_CRT_MAX_SHARED) {
        char msg[256];
        snprintf(msg, sizeof msg, "CUDA: %s needs %lld bytes of shared memory a block (227 KiB "
                 "at most): the schedule's tiles are too large for this image", kn->name,
                 (long long)shared_bytes);
        plan_fail(plan, PF_CRT_CUDA, msg);
        return NULL;
    }
    pf_crt_action *a = plan_append(plan, PF_CRT_LAUNCH, -1, (size_t)kn->n_vars);
    if (!a)
        return NULL;
    a->kernel = k;
    memcpy(a->grid, grid, sizeof a->grid);
    memcpy(a->block, block, sizeof a->block);
    a->shared = (unsigned)shared_bytes;
    a->first_slot = plan->n_slots;
    uint64_t *slots = plan->slots + plan->n_slots;
    memset(slots, 0, sizeof *slots * (size_t)kn->n_vars);
    plan->n_slots += (size_t)kn->n_vars;
    return slots;
}

int pf_crt_plan_make(const pf_crt_program *prog, const int64_t (*ext)[PF_CRT_MAX_DIMS],
                     pf_crt_plan *plan, pf_error *err)
{
    memset(plan, 0, sizeof *plan);
    plan->prog = prog;
    plan->most = calloc((size_t)prog->n_buffers + 1, sizeof *plan->most);
    if (!plan->most)
        plan_fail(plan, PF_CRT_MEMORY, "memory ran out recording the launches");
    else if (prog->walk(plan, ext) != 0 && plan->status == 0)
        plan_fail(plan, PF_CRT_CUDA, "internal error: the host walk failed without a reason");
    if (plan->status)
        pf_fail(err, "%s", plan->err.msg);
    return plan->status;
}

void pf_crt_plan_free(pf_crt_plan *plan)
{
    free(plan->acts);
    free(plan->slots);
    free(plan->most);
    memset(plan, 0, sizeof *plan);
}

int pf_crt_params(const pf_crt_plan *plan, const pf_crt_action *a, const uint64_t *dptr,
                  uint64_t *slots, void **params, pf_error *err)
{
    const pf_crt_kernel *kn = &plan->prog->kernels[a->kernel];
    int n = 0;
    for (int i = 0; i < kn->n_bufs; i++, n++) {
        int id = kn->bufs[i];
        slots[n] = id < 0 ? 0 : dptr[id];  /* a shared window's parameter is unused: 0 */
        if (id >= 0 && !dptr[id])
            return pf_fail(err, "CUDA: %s uses buffer %d, which has no device memory",
                           kn->name, id);
        params[n] = &slots[n];
    }
    for (int i = 0; i < kn->n_vars; i++, n++) {
        slots[n] = plan->slots[a->first_slot + (size_t)i];
        params[n] = &slots[n];
    }
    return 0;
}
