/* The thread pool of generated code: a few persistent pthreads that run the iterations of
 * parallel loops (outlined loop bodies with a closure). No thread is created per call; a
 * parallel loop inside a parallel loop runs serially on the thread that reached it. Shipped
 * inside exported libraries with the rest of the runtime (libc + pthreads only). */
#include "codegen/runtime.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#define PF_RT_MAX_THREADS 64
/* How long a thread spins (pause instructions; about 50-100 us) for the next job or for the
 * workers to finish before it sleeps on a condition variable. Waking a sleeping thread costs
 * tens of microseconds on a VM, and a pipeline runs its parallel loops back to back (unsharp
 * mask at 820x614: a dozen in 2.5 ms), so the other thread used to join each loop late. */
#define SPIN_ROUNDS 2000
#define CHUNKS_PER_THREAD 16

/* A parallel loop. Its fields are written under pool_lock while no worker is inside a job
 * (running == 0); a worker joins under pool_lock and leaves without it. The iterations are cut
 * into one contiguous range per thread; each thread claims chunks of its own range first
 * (with an atomic add on the range's `next`, not under the lock: on 16 cores, 16 threads
 * taking one mutex per chunk made the lock the bottleneck of short loops), then of the others'
 * ranges, so that a thread that is late or slow loses its iterations to the others. In the
 * usual case the same thread runs the same rows on every call: the rows it writes are still in
 * its core's cache, instead of in another core's from the call before (claimed in one shared
 * order, the rows went to whichever thread came first). */
typedef struct pf_rt_range {
    int64_t next;        /* next unclaimed iteration (atomic; may pass end) */
    int64_t end;
    char pad[48];        /* one cache line per range: threads claim in their own */
} pf_rt_range;

typedef struct pf_rt_job {
    pf_rt_task fn;
    void *closure;
    int32_t n, chunk;
    int32_t used;        /* threads of this job: ranges[0 .. used), the caller's is 0 */
    int32_t running;     /* threads inside the job (atomic) */
    int32_t status;      /* first non-zero status of a task (atomic) */
    int32_t epoch;       /* counts jobs (atomic stores, under lock; wraps) */
} pf_rt_job;

static pf_rt_range ranges[PF_RT_MAX_THREADS] __attribute__((aligned(64)));
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t work_done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER;  /* one parallel loop at a time */
static pf_rt_job job;
static int n_workers;            /* started workers (threads - 1) */
static pthread_t workers[PF_RT_MAX_THREADS];
static int stopping;             /* pf_rt_pool_stop: workers return (under pool_lock) */
static int wanted_threads;       /* 0: all cores */
static __thread int in_parallel; /* this thread is running a task: nested loops go serial */

/* The online cores, asked once: glibc answers sysconf(_SC_NPROCESSORS_ONLN) by opening and
 * reading /sys/devices/system/cpu/online, three system calls that every parallel loop paid
 * (a perforated blur at 820x614: 0.36 ms a call by default against 0.34 with --threads 2). */
static int default_threads(void)
{
    static int cores;  /* 0: not asked yet (a race asks twice and stores the same value) */
    int n = __atomic_load_n(&cores, __ATOMIC_RELAXED);
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c < 1 ? 1 : c > PF_RT_MAX_THREADS ? PF_RT_MAX_THREADS : (int)c;
        __atomic_store_n(&cores, n, __ATOMIC_RELAXED);
    }
    return n;
}

void pf_rt_set_threads(int32_t n)
{
    pthread_mutex_lock(&pool_lock);
    wanted_threads = n < 0 ? 0 : n > PF_RT_MAX_THREADS ? PF_RT_MAX_THREADS : n;
    pthread_mutex_unlock(&pool_lock);
}

int32_t pf_rt_threads(void)
{
    return wanted_threads > 0 ? wanted_threads : default_threads();
}

/* Generated code writes output rows with non-temporal stores (IR stores marked `stream`),
 * which x86 does not order with later stores: fence them before the chunk counts as done, so
 * the thread that waits for the job sees them. */
static void stores_visible(void)
{
#if defined(__SSE__)
    _mm_sfence();
#endif
}

static void cpu_relax(void)
{
#if defined(__SSE__)
    _mm_pause();
#endif
}

/* Spins (without the lock) for at most SPIN_ROUNDS while *v equals `value` (or, with
 * `positive`, while *v > 0). The variable is written under pool_lock with atomic stores. */
static void spin_while(const int32_t *v, int32_t value, int positive)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        int32_t now = __atomic_load_n(v, __ATOMIC_ACQUIRE);
        if (positive ? now <= 0 : now != value)
            return;
        cpu_relax();
    }
}

/* Runs chunks of range r until it has none left (without pool_lock). */
static void run_range(int r)
{
    pf_rt_range *g = &ranges[r];
    for (;;) {
        int64_t begin = __atomic_fetch_add(&g->next, job.chunk, __ATOMIC_RELAXED);
        if (begin >= g->end)
            return;
        int64_t end = begin + job.chunk < g->end ? begin + job.chunk : g->end;
        in_parallel = 1;
        int32_t st = job.fn(job.closure, (int32_t)begin, (int32_t)end);
        stores_visible();
        in_parallel = 0;
        int32_t none = 0;
        if (st != 0)
            __atomic_compare_exchange_n(&job.status, &none, st, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED);
    }
}

/* Thread `slot` (0 the caller, 1.. the workers) runs its own range, then helps with the
 * others' until no iteration is left. */
static void run_chunks(int slot)
{
    for (int k = 0; k < job.used; k++)
        run_range((slot + k) % job.used);
}

/* Leaves the job: the last thread out wakes a caller waiting in wait_idle. */
static void leave_job(void)
{
    if (__atomic_sub_fetch(&job.running, 1, __ATOMIC_ACQ_REL) == 0) {
        pthread_mutex_lock(&pool_lock);
        pthread_cond_broadcast(&work_done);
        pthread_mutex_unlock(&pool_lock);
    }
}

static int32_t running(void)
{
    return __atomic_load_n(&job.running, __ATOMIC_ACQUIRE);
}

/* Waits, with pool_lock held, until no thread is inside a job (spinning first, without it). */
static void wait_idle(void)
{
    if (running() > 0) {
        pthread_mutex_unlock(&pool_lock);
        spin_while(&job.running, 0, 1);
        pthread_mutex_lock(&pool_lock);
    }
    while (running() > 0)
        pthread_cond_wait(&work_done, &pool_lock);
}

/* arg: the worker's slot (1 ..). A worker beyond the job's threads (the count was lowered
 * after it started) sits the job out. */
static void *worker(void *arg)
{
    int slot = (int)(intptr_t)arg;
    int32_t seen = 0;
    pthread_mutex_lock(&pool_lock);
    for (;;) {
        if (job.epoch == seen && !stopping) {
            pthread_mutex_unlock(&pool_lock);
            spin_while(&job.epoch, seen, 0);
            pthread_mutex_lock(&pool_lock);
        }
        while (job.epoch == seen && !stopping)
            pthread_cond_wait(&work_ready, &pool_lock);
        if (stopping)
            break;
        seen = job.epoch;
        if (slot >= job.used)
            continue;
        __atomic_add_fetch(&job.running, 1, __ATOMIC_ACQ_REL);  /* under the lock: the job's
                                                                   fields stay until we leave */
        pthread_mutex_unlock(&pool_lock);
        run_chunks(slot);
        leave_job();
        pthread_mutex_lock(&pool_lock);
    }
    pthread_mutex_unlock(&pool_lock);
    return NULL;
}

/* Starts workers up to threads - 1 (they live until the process ends, or pf_rt_pool_stop). */
static void grow_pool(int threads)
{
    while (n_workers < threads - 1) {
        if (pthread_create(&workers[n_workers], NULL, worker, (void *)(intptr_t)(n_workers + 1))
            != 0)
            break;  /* run with the workers we have */
        n_workers++;
    }
}

void pf_rt_pool_stop(void)
{
    pthread_mutex_lock(&call_lock);  /* no parallel loop is running, none starts */
    pthread_mutex_lock(&pool_lock);
    stopping = 1;
    pthread_cond_broadcast(&work_ready);
    int n = n_workers;
    pthread_mutex_unlock(&pool_lock);
    for (int i = 0; i < n; i++)
        pthread_join(workers[i], NULL);
    pthread_mutex_lock(&pool_lock);
    n_workers = 0;
    stopping = 0;
    pthread_mutex_unlock(&pool_lock);
    pthread_mutex_unlock(&call_lock);
}

static int32_t run_serial(pf_rt_task fn, void *closure, int32_t n)
{
    return n > 0 ? fn(closure, 0, n) : 0;
}

int32_t pf_rt_parallel_for(pf_rt_task fn, void *closure, int32_t n)
{
    int threads = pf_rt_threads();
    if (n <= 1 || threads <= 1 || in_parallel)
        return run_serial(fn, closure, n);
    pthread_mutex_lock(&call_lock);
    pthread_mutex_lock(&pool_lock);
    grow_pool(threads);
    wait_idle();  /* a worker that joined the last job after its iterations ran out */
    int32_t used = n_workers + 1 < threads ? n_workers + 1 : threads;
    job.fn = fn;
    job.closure = closure;
    job.n = n;
    /* Chunks small enough that the thread finishing last waits for little (16 per thread:
     * at most 1/16 of a thread's share), large enough that claiming is rare. */
    job.chunk = n / (used * CHUNKS_PER_THREAD) > 0 ? n / (used * CHUNKS_PER_THREAD) : 1;
    job.used = used;
    for (int t = 0; t < used; t++) {
        __atomic_store_n(&ranges[t].next, (int64_t)n * t / used, __ATOMIC_RELAXED);
        ranges[t].end = (int64_t)n * (t + 1) / used;
    }
    __atomic_store_n(&job.status, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&job.running, 1, __ATOMIC_RELAXED);  /* the caller */
    __atomic_store_n(&job.epoch, (int32_t)((uint32_t)job.epoch + 1u), __ATOMIC_RELEASE);
    pthread_cond_broadcast(&work_ready);
    pthread_mutex_unlock(&pool_lock);
    run_chunks(0);
    __atomic_sub_fetch(&job.running, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&pool_lock);
    wait_idle();
    int32_t status = __atomic_load_n(&job.status, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&pool_lock);
    pthread_mutex_unlock(&call_lock);
    return status;
}
