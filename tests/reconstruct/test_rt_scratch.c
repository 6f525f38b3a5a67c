/* The runtime's scratch blocks (reconstruct/rt_scratch.c): alignment and zeroing, a freed large
 * block taken again by the next request of about its size, and the kernels of the runtime
 * taking their image-sized temporaries there, so that a second call runs on memory already
 * mapped (the cache keeps what the first call freed and does not grow on the second). */
#include "reconstruct/runtime.h"
#include "tests/harness/harness.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MB ((size_t)1 << 20)

static void test_aligned_zeroed_reused(void)
{
    pf_rt_scratch_release();
    CU_ASSERT_EQUAL(pf_rt_scratch_kept(), 0);
    unsigned char *a = pf_rt_scratch(3 * MB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL((uintptr_t)a % 64, 0);
    memset(a, 0x5a, 3 * MB);
    pf_rt_scratch_free(a);
    CU_ASSERT(pf_rt_scratch_kept() >= 3 * MB);
    unsigned char *b = pf_rt_scratch_zero(3 * MB - 1000);
    CU_ASSERT_PTR_EQUAL(b, a);  /* the same memory: no new pages */
    CU_ASSERT(b[0] == 0 && b[3 * MB - 1001] == 0);
    CU_ASSERT_EQUAL(pf_rt_scratch_kept(), 0);
    pf_rt_scratch_free(b);
    unsigned char *small = pf_rt_scratch(1000);  /* small blocks are not kept */
    CU_ASSERT_PTR_NOT_NULL_FATAL(small);
    CU_ASSERT_EQUAL((uintptr_t)small % 64, 0);
    size_t kept = pf_rt_scratch_kept();
    pf_rt_scratch_free(small);
    CU_ASSERT_EQUAL(pf_rt_scratch_kept(), kept);
    CU_ASSERT_PTR_NULL(pf_rt_scratch(0));
    pf_rt_scratch_free(NULL);
    pf_rt_scratch_release();
    CU_ASSERT_EQUAL(pf_rt_scratch_kept(), 0);
}

/* A random mask with about one sample in `every` pixels. */
static uint8_t *random_mask(int w, int h, int every, unsigned seed)
{
    uint8_t *m = malloc((size_t)w * (size_t)h);
    srand(seed);
    for (int i = 0; i < w * h; i++)
        m[i] = rand() % every == 0;
    m[0] = 1;
    return m;
}

/* The nearest reconstruction's pairs (8 bytes a pixel) and keys (4) come from the cache: after
 * one call it keeps at least that much, and a second call takes them again instead of
 * allocating (the cache keeps exactly as much afterwards), with the same result. */
static void test_kernels_keep_their_temporaries(void)
{
    enum { W = 400, H = 300, C = 3 };
    size_t n = (size_t)W * H;
    uint8_t *m = random_mask(W, H, 5, 7);
    float *img = malloc(n * C * sizeof *img), *first = malloc(n * C * sizeof *img);
    for (size_t i = 0; i < n * C; i++)
        img[i] = (float)(i % 97) / 97.0f;
    pf_rt_scratch_release();
    CU_ASSERT_EQUAL_FATAL(pf_rt_recon_nearest(img, W, H, C, W, n, m), PF_RT_OK);
    size_t kept = pf_rt_scratch_kept();
    CU_ASSERT(kept >= n * 12);
    memcpy(first, img, n * C * sizeof *img);
    CU_ASSERT_EQUAL_FATAL(pf_rt_recon_nearest(img, W, H, C, W, n, m), PF_RT_OK);
    CU_ASSERT_EQUAL(pf_rt_scratch_kept(), kept);
    CU_ASSERT_EQUAL(memcmp(first, img, n * C * sizeof *img), 0);
    /* adaptive refinement: its tile values, priorities and orders */
    uint8_t *fine = malloc(n), *is_fine = malloc(n);
    pf_rt_scratch_release();
    CU_ASSERT_EQUAL_FATAL(pf_rt_adaptive_refine(img, W, H, C, W, n, 2, 0.4, fine, is_fine, NULL),
                          PF_RT_OK);
    kept = pf_rt_scratch_kept();
    CU_ASSERT(kept > 0);
    CU_ASSERT_EQUAL(pf_rt_adaptive_refine(img, W, H, C, W, n, 2, 0.4, fine, is_fine, NULL),
                    PF_RT_OK);
    CU_ASSERT_EQUAL(pf_rt_scratch_kept(), kept);
    pf_rt_scratch_release();
    free(m);
    free(img);
    free(first);
    free(fine);
    free(is_fine);
}

PF_TEST_SUITE(rt_scratch, PF_TEST(test_aligned_zeroed_reused),
              PF_TEST(test_kernels_keep_their_temporaries))
