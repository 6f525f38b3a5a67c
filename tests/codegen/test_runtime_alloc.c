/* The generated code's allocator (codegen/runtime_alloc.c, on reconstruct/rt_scratch.c):
 * alignment, zeroing and poison on every block, a freed large block taken again by the next
 * allocation of about its size (so a pipeline's second call does not fault its pages in
 * again), and the limits of the cache. */
#include "codegen/runtime.h"
#include "reconstruct/runtime.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define MB ((int64_t)1 << 20)

static void test_aligned_and_zeroed(void)
{
    for (int64_t bytes = 4; bytes <= 4 * MB; bytes *= 7) {
        float *p = pf_rt_alloc(bytes, 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL((uintptr_t)p % 64, 0);
        int64_t nonzero = 0;
        for (int64_t i = 0; i < bytes / 4; i++)
            nonzero += p[i] != 0.0f;
        CU_ASSERT_EQUAL(nonzero, 0);
        memset(p, 0x5a, (size_t)bytes);  /* dirty it for the next allocation */
        pf_rt_free(p);
    }
    CU_ASSERT_PTR_NULL(pf_rt_alloc(0, 0));
    CU_ASSERT_PTR_NULL(pf_rt_alloc(-8, 1));
    pf_rt_free(NULL);
    pf_rt_alloc_release();
}

/* A kept block comes back zeroed when asked, and poisoned in the tests' mode: what the last
 * call left in it never shows. */
static void test_reused_block_is_reset(void)
{
    float *a = pf_rt_alloc(2 * MB, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    for (int64_t i = 0; i < 2 * MB / 4; i++)
        a[i] = 1.0f;
    pf_rt_free(a);
    float *b = pf_rt_alloc(2 * MB, 1);
    CU_ASSERT_PTR_EQUAL(b, a);  /* the same memory: no new pages */
    CU_ASSERT(b[0] == 0.0f && b[2 * MB / 4 - 1] == 0.0f);
    pf_rt_free(b);
    pf_rt_set_poison(true);
    float *c = pf_rt_alloc(2 * MB - 100, 0);
    pf_rt_set_poison(false);
    CU_ASSERT_PTR_EQUAL(c, a);
    CU_ASSERT(isnan(c[0]) && isnan(c[(2 * MB - 100) / 4 - 1]));
    pf_rt_free(c);
    pf_rt_alloc_release();
}

/* A block more than twice the request stays for the image it was made for; two blocks alive
 * at once are two blocks. */
static void test_fit(void)
{
    char *big = pf_rt_alloc(16 * MB, 0);
    pf_rt_free(big);
    char *small = pf_rt_alloc(1 * MB, 0);
    CU_ASSERT_PTR_NOT_EQUAL(small, big);
    char *again = pf_rt_alloc(16 * MB, 0);
    CU_ASSERT_PTR_EQUAL(again, big);
    char *other = pf_rt_alloc(16 * MB, 0);
    CU_ASSERT_PTR_NOT_EQUAL(other, again);
    memset(other, 1, 16 * MB);
    memset(again, 2, 16 * MB);
    CU_ASSERT_EQUAL(other[16 * MB - 1], 1);
    pf_rt_free(small);
    pf_rt_free(again);
    pf_rt_free(other);
    pf_rt_alloc_release();
}

/* More freed blocks than the cache keeps: the smallest go, the largest stay (ASan's leak
 * check sees the ones that go freed). */
static void test_cache_limits(void)
{
    char *p[20];
    for (int i = 0; i < 20; i++)
        p[i] = pf_rt_alloc((i + 1) * MB, 0);
    for (int i = 0; i < 20; i++)
        pf_rt_free(p[i]);
    /* 16 slots: the blocks of 5..20 MB stay (headers and rounding add bytes, not megabytes) */
    size_t kept = pf_rt_scratch_kept();
    CU_ASSERT(kept >= 200 * (size_t)MB && kept < 201 * (size_t)MB);
    char *largest = pf_rt_alloc(20 * MB, 0), *smallest = pf_rt_alloc(1 * MB, 0);
    CU_ASSERT_PTR_EQUAL(largest, p[19]);
    pf_rt_free(largest);
    pf_rt_free(smallest);
    pf_rt_alloc_release();
    CU_ASSERT_PTR_NOT_NULL(largest);
}

PF_TEST_SUITE(codegen_runtime_alloc, PF_TEST(test_aligned_and_zeroed),
              PF_TEST(test_reused_block_is_reset), PF_TEST(test_fit), PF_TEST(test_cache_limits))
