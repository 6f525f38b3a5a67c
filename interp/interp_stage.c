/* Running one stage of a pipeline in the interpreter: its `over` ranges, and its iterations,
 * in the order docs/language.md defines for serial stages (last variable outermost); an
 * approximated stage runs only the lattice points its sampling keeps (interp_approx.c).
 *
 * A stage that does not scatter (not serial) has independent iterations by construction: each
 * writes only its own elements and reads no element another iteration writes. Its iterations are
 * therefore split among threads (blocks of up to PF_IBLOCK iterations of the first variable, taken
 * from a shared counter); every element is still computed by the same sequential code, so the
 * result is bit-identical to a single-threaded run. Serial stages run on the calling thread. */
#include "interp/interp_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define PF_IBLOCK 64
#define PF_IMAX_THREADS 16
/* Below this many iterations a stage is not worth starting threads for. */
#define PF_IPARALLEL_MIN 4096

int pf_interp_threads = 0;

/* Without `over`: the whole dimension. With it: lo, lo + step, ... <= hi, intersected with
 * [0, extent - 1] (the progression stays anchored at lo); a step below 1 counts as 1. */
static pf_irange stage_range(const pf_iunit *u, const pf_value *F, int v, int64_t extent)
{
    pf_irange r = { 0, extent, 1 };
    if (u->over_slot[v][0] < 0)
        return r;
    int64_t lo = F[u->over_slot[v][0]].i, hi = F[u->over_slot[v][1]].i;
    r.step = u->over_slot[v][2] >= 0 ? F[u->over_slot[v][2]].i : 1;
    if (r.step < 1)
        r.step = 1;
    if (hi > extent - 1)
        hi = extent - 1;
    if (lo < 0)
        lo += (-lo + r.step - 1) / r.step * r.step;
    r.first = lo;
    r.count = lo > hi ? 0 : (hi - lo) / r.step + 1;
    return r;
}

/* A frame for the stage with its `over` bounds evaluated (the prologue). */
static pf_value *stage_frame(const pf_iunit *u, pf_ictx *x)
{
    pf_value *F = pf_xcalloc((size_t)u->n_slots + 1, sizeof *F);
    pf_iunit_fill(u, x, F);
    pf_iexec(x, u, 0, F);
    return F;
}

/* Runs block `b`: one row (values of variables 1..n-1, variable n-1 slowest) and a run of
 * up to PF_IBLOCK values of variable 0; with a sample, only the lattice points j it keeps. */
static void run_block(const pf_ijob *job, pf_ictx *x, pf_value *F, int64_t b)
{
    const pf_iunit *u = job->u;
    int64_t row = b / job->blocks_per_row, i0 = (b % job->blocks_per_row) * PF_IBLOCK;
    int64_t j[PF_MAX_DIMS] = { 0, 0, 0, 0 };
    for (int v = 1; v < job->n_vars; v++) {
        j[v] = row % job->r[v].count;
        row /= job->r[v].count;
        F[u->var_slot[v]].i = (int32_t)(job->r[v].first + j[v] * job->r[v].step);
    }
    int64_t end = i0 + PF_IBLOCK < job->r[0].count ? i0 + PF_IBLOCK : job->r[0].count;
    const int s0 = u->var_slot[0];
    for (j[0] = i0; j[0] < end; j[0]++) {
        if (job->sample && !pf_isample_keeps(job->sample, j))
            continue;
        F[s0].i = (int32_t)(job->r[0].first + j[0] * job->r[0].step);
        pf_iexec(x, u, u->body_pc, F);
    }
}

/* Takes blocks until none is left. Each worker has its own function frames and stage frame:
 * frames are the only state the code writes besides images. */
static void *worker(void *arg)
{
    pf_ijob *job = arg;
    pf_ictx x = *job->base;
    pf_ictx_own_frames(&x);
    pf_value *F = stage_frame(job->u, &x);
    int64_t n = job->rows * job->blocks_per_row;
    for (;;) {
        int64_t b = atomic_fetch_add(&job->next, 1);
        if (b >= n)
            break;
        run_block(job, &x, F, b);
    }
    free(F);
    pf_ictx_free_frames(&x);
    return NULL;
}

static int thread_count(int64_t iterations)
{
    int n = pf_interp_threads;
    if (n <= 0) {
        if (iterations < PF_IPARALLEL_MIN)
            return 1;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus < 1 ? 1 : cpus > PF_IMAX_THREADS ? PF_IMAX_THREADS : (int)cpus;
    }
    return n > PF_IMAX_THREADS ? PF_IMAX_THREADS : n;
}

/* Runs the job's blocks on n threads (the caller's included); falls back to fewer threads if
 * one cannot be started. */
static void run_parallel(pf_ijob *job, int n)
{
    pthread_t tid[PF_IMAX_THREADS];
    int started = 0;
    for (int t = 1; t < n; t++) {
        if (pthread_create(&tid[started], NULL, worker, job) != 0)
            break;
        started++;
    }
    worker(job);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

/* Iterates lexicographically with the last variable outermost, on the calling thread. */
static void run_serial(const pf_ijob *job, pf_ictx *x, pf_value *F)
{
    int64_t n = job->rows * job->blocks_per_row;
    for (int64_t b = 0; b < n; b++)
        run_block(job, x, F, b);
}

void pf_ijob_run(pf_ijob *job, const pf_isample *sample)
{
    job->sample = sample;
    atomic_store(&job->next, 0);
    bool serial = job->st->serial || job->u->serial;
    int threads = serial ? 1 : thread_count(job->rows * job->r[0].count);
    if (threads > 1 && job->rows * job->blocks_per_row > 1) {
        run_parallel(job, threads);
        return;
    }
    pf_value *F = stage_frame(job->u, job->base);
    run_serial(job, job->base, F);
    free(F);
}

int pf_istage_run(pf_ictx *x, const pf_stage *st, const int64_t *extent, pf_error *err)
{
    pf_ijob job = { .base = x, .st = st, .u = &x->ic->stages[st->index], .n_vars = st->n_vars };
    atomic_init(&job.next, 0);
    pf_value *F = stage_frame(job.u, x);
    job.rows = 1;
    for (int v = 0; v < job.n_vars; v++) {
        job.r[v] = stage_range(job.u, F, v, extent[v]);
        if (v > 0)
            job.rows *= job.r[v].count;
    }
    free(F);
    job.blocks_per_row = (job.r[0].count + PF_IBLOCK - 1) / PF_IBLOCK;
    if (pf_iapprox_of(x->ic, st))
        return pf_istage_run_approx(&job, err);
    pf_ijob_run(&job, NULL);
    return 0;
}
