/* The runtime's thread pool (codegen/runtime_pool.c): every iteration of a parallel loop runs
 * exactly once, back-to-back loops (the workers spinning between them) and loops of every
 * size, a failing task's status comes back, a nested loop runs serially on its thread, one
 * thread means no worker, a lowered thread count is honoured, and a thread runs its own range
 * of iterations first. This file is also built with ThreadSanitizer together with the
 * pool's source (test_pool_tsan, CTest `pool_tsan`), so the pool's synchronization is checked
 * on every test run, not only these results. */
#include "codegen/runtime.h"
#include "tests/harness/harness.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_N 5000

typedef struct counts {
    int32_t hits[MAX_N];     /* iterations seen (each by one thread: no two share an index) */
    int32_t fail_at;         /* the iteration whose chunk reports status 7, or -1 */
    int32_t inner_n;         /* > 0: each iteration runs a nested parallel loop of this size */
    int32_t nested_hits;     /* iterations of nested loops (atomically) */
    int32_t nested_elsewhere; /* nested iterations that ran on another thread */
} counts;

typedef struct nested {
    counts *c;
    pthread_t owner;
} nested;

static int32_t nested_task(void *closure, int32_t begin, int32_t end)
{
    nested *n = closure;
    for (int32_t i = begin; i < end; i++) {
        __atomic_add_fetch(&n->c->nested_hits, 1, __ATOMIC_RELAXED);
        if (!pthread_equal(pthread_self(), n->owner))
            __atomic_add_fetch(&n->c->nested_elsewhere, 1, __ATOMIC_RELAXED);
    }
    return 0;
}

static int32_t count_task(void *closure, int32_t begin, int32_t end)
{
    counts *c = closure;
    int32_t status = 0;
    for (int32_t i = begin; i < end; i++) {
        c->hits[i]++;
        if (i == c->fail_at)
            status = 7;
        if (c->inner_n > 0) {
            nested n = { c, pthread_self() };
            if (pf_rt_parallel_for(nested_task, &n, c->inner_n) != 0)
                status = 9;
        }
    }
    return status;
}

static int run_once(counts *c, int32_t n)
{
    memset(c->hits, 0, sizeof c->hits);
    return pf_rt_parallel_for(count_task, c, n);
}

static int32_t misses(const counts *c, int32_t n)
{
    int32_t bad = 0;
    for (int32_t i = 0; i < MAX_N; i++)
        bad += c->hits[i] != (i < n ? 1 : 0);
    return bad;
}

static void test_every_iteration_once(void)
{
    counts *c = calloc(1, sizeof *c);
    c->fail_at = -1;
    static const int32_t sizes[] = { 0, 1, 2, 3, 7, 31, 32, 33, 100, 1536, MAX_N };
    for (int threads = 1; threads <= 4; threads++) {
        pf_rt_set_threads(threads);
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            CU_ASSERT_EQUAL(run_once(c, sizes[k]), 0);
            CU_ASSERT_EQUAL(misses(c, sizes[k]), 0);
        }
    }
    pf_rt_set_threads(0);
    free(c);
}

/* A pipeline's loops come back to back: the workers are spinning or just asleep. With more
 * threads than cores, a worker often joins a job after its iterations ran out (it must leave
 * before the next job's fields are written). */
static void test_back_to_back_loops(void)
{
    counts *c = calloc(1, sizeof *c);
    c->fail_at = -1;
    int32_t bad = 0;
    static const int threads[] = { 2, 8 };
    for (int t = 0; t < 2; t++) {
        pf_rt_set_threads(threads[t]);
        for (int round = 0; round < 3000; round++) {
            int32_t n = 1 + round % 97;
            bad += run_once(c, n) != 0;
            bad += misses(c, n);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    pf_rt_set_threads(0);
    free(c);
}

static void test_status_of_a_failing_chunk(void)
{
    counts *c = calloc(1, sizeof *c);
    pf_rt_set_threads(2);
    for (int32_t at = 0; at < 300; at += 37) {
        c->fail_at = at;
        CU_ASSERT_EQUAL(run_once(c, 300), 7);
        CU_ASSERT_EQUAL(misses(c, 300), 0);  /* the other chunks still ran */
    }
    c->fail_at = -1;
    CU_ASSERT_EQUAL(run_once(c, 300), 0);  /* the next job starts clean */
    pf_rt_set_threads(0);
    free(c);
}

static void test_nested_loops_run_serially(void)
{
    counts *c = calloc(1, sizeof *c);
    c->fail_at = -1;
    c->inner_n = 13;
    pf_rt_set_threads(3);
    CU_ASSERT_EQUAL(run_once(c, 64), 0);
    CU_ASSERT_EQUAL(misses(c, 64), 0);
    CU_ASSERT_EQUAL(c->nested_hits, 64 * 13);
    CU_ASSERT_EQUAL(c->nested_elsewhere, 0);
    pf_rt_set_threads(0);
    free(c);
}

/* An exported library stops its workers before it is unloaded; loops after that start them
 * again, and every iteration still runs once. */
static void test_stop_and_restart(void)
{
    counts *c = calloc(1, sizeof *c);
    c->fail_at = -1;
    pf_rt_set_threads(3);
    for (int round = 0; round < 5; round++) {
        CU_ASSERT_EQUAL(run_once(c, 500), 0);
        CU_ASSERT_EQUAL(misses(c, 500), 0);
        pf_rt_pool_stop();
    }
    pf_rt_pool_stop();  /* with no worker: nothing to do */
    CU_ASSERT_EQUAL(run_once(c, 500), 0);
    CU_ASSERT_EQUAL(misses(c, 500), 0);
    pf_rt_set_threads(0);
    free(c);
}

/* Records which thread ran each iteration; each iteration takes `sleep_ms`. */
typedef struct who {
    pthread_t thread[64];
    int sleep_ms;
} who;

static int32_t who_task(void *closure, int32_t begin, int32_t end)
{
    who *w = closure;
    for (int32_t i = begin; i < end; i++) {
        w->thread[i] = pthread_self();
        struct timespec ts = { 0, (long)w->sleep_ms * 1000000L };
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int distinct_threads(const who *w, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= pthread_equal(w->thread[i], w->thread[j]);
        d += !seen;
    }
    return d;
}

/* Workers started for 4 threads sit out the loops run after the count went down to 2: at
 * most 2 threads run the iterations (before, every started worker joined every loop). */
static void test_lowered_thread_count(void)
{
    who w = { .sleep_ms = 2 };
    pf_rt_set_threads(4);
    CU_ASSERT_EQUAL(pf_rt_parallel_for(who_task, &w, 16), 0);
    pf_rt_set_threads(2);
    for (int round = 0; round < 5; round++) {
        CU_ASSERT_EQUAL(pf_rt_parallel_for(who_task, &w, 16), 0);
        CU_ASSERT(distinct_threads(&w, 16) <= 2);
    }
    pf_rt_set_threads(0);
}

/* Two threads, four iterations of 20 ms in chunks of one: the caller's range is iterations 0
 * and 1, the worker's 2 and 3, and each runs its own before the other's, so the caller runs
 * both of its own on every call (a worker late to join leaves it all four). Claimed in one
 * shared order, the worker took iteration 1 while the caller ran 0. */
static void test_own_range_first(void)
{
    who w = { .sleep_ms = 20 };
    pf_rt_set_threads(2);
    for (int round = 0; round < 5; round++) {
        CU_ASSERT_EQUAL(pf_rt_parallel_for(who_task, &w, 4), 0);
        CU_ASSERT(pthread_equal(w.thread[0], pthread_self()));
        CU_ASSERT(pthread_equal(w.thread[1], pthread_self()));
    }
    pf_rt_set_threads(0);
}

PF_TEST_SUITE(codegen_pool, PF_TEST(test_every_iteration_once), PF_TEST(test_back_to_back_loops),
              PF_TEST(test_status_of_a_failing_chunk), PF_TEST(test_nested_loops_run_serially),
              PF_TEST(test_stop_and_restart), PF_TEST(test_lowered_thread_count),
              PF_TEST(test_own_range_first))
