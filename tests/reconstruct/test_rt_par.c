/* The kernels split across threads (base/par.h) give bit for bit what they give serially: the
 * recursive Gaussian, the gaussian, gaussian-sv and nearest reconstructions (with their
 * fallbacks), and the stage runtime's reconstruction, channel copy and importance mask, each run
 * serially, with a splitter that runs one-iteration chunks in reverse order (a kernel whose
 * iterations depend on each other breaks there), and with three real threads taking
 * interleaved chunks. */
#include "base/gauss.h"
#include "reconstruct/runtime.h"
#include "reconstruct/stage_rt.h"
#include "tests/reconstruct/test_rt_util.h"

#include <pthread.h>
#include <string.h>

static int32_t reversed(pf_par_task fn, void *closure, int32_t n)
{
    int32_t st = 0;
    for (int32_t i = n - 1; i >= 0; i--) {
        int32_t r = fn(closure, i, i + 1);
        st = st ? st : r;
    }
    return st;
}

typedef struct threaded_job {
    pf_par_task fn;
    void *closure;
    int32_t n, next, status;
    pthread_mutex_t lock;
} threaded_job;

static void *threaded_worker(void *arg)
{
    threaded_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        int32_t b = j->next;
        j->next += 2;
        pthread_mutex_unlock(&j->lock);
        if (b >= j->n)
            return NULL;
        int32_t r = j->fn(j->closure, b, b + 2 < j->n ? b + 2 : j->n);
        pthread_mutex_lock(&j->lock);
        j->status = j->status ? j->status : r;
        pthread_mutex_unlock(&j->lock);
    }
}

static int32_t threaded(pf_par_task fn, void *closure, int32_t n)
{
    threaded_job j = { fn, closure, n, 0, 0, PTHREAD_MUTEX_INITIALIZER };
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, threaded_worker, &j);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    return j.status;
}

static const pf_par_for splitters[2] = { reversed, threaded };

enum { W = 157, H = 93, C = 3 };

static float *image(unsigned seed)
{
    rt_rng r = { seed };
    float *d = malloc(sizeof *d * W * H * C);
    for (int i = 0; i < W * H * C; i++)
        d[i] = (float)rt_unif(&r);
    return d;
}

/* Sparse samples (every pixel far from the few samples of a corner falls back). */
static uint8_t *mask(unsigned seed, double frac)
{
    rt_rng r = { seed };
    uint8_t *m = malloc(W * H);
    for (int i = 0; i < W * H; i++)
        m[i] = rt_unif(&r) < frac;
    m[0] = 1;
    return m;
}

typedef int (*kernel)(float *data, const uint8_t *m, const float *sigma, pf_par_for par);

static int k_gauss(float *d, const uint8_t *m, const float *s, pf_par_for par)
{
    (void)s;
    return pf_rt_recon_gaussian_par(d, W, H, C, W, (size_t)W * H, m, 1.3, par);
}

static int k_gauss_sv(float *d, const uint8_t *m, const float *s, pf_par_for par)
{
    return pf_rt_recon_gaussian_sv_par(d, W, H, C, W, (size_t)W * H, m, s, par);
}

static int k_nearest(float *d, const uint8_t *m, const float *s, pf_par_for par)
{
    (void)s;
    return pf_rt_recon_nearest_par(d, W, H, C, W, (size_t)W * H, m, par);
}

static int k_blur(float *d, const uint8_t *m, const float *s, pf_par_for par)
{
    (void)m;
    (void)s;
    return pf_gauss_iir_2d_par(d, W, H, W, 2.5, 4.0, par);
}

static void check(kernel k, double frac)
{
    float *want = image(7);
    uint8_t *m = mask(11, frac);
    float *sigma = malloc(sizeof *sigma * W * H);
    for (int i = 0; i < W * H; i++)
        sigma[i] = 0.5f + (float)(i % 37) * 0.2f;  /* some tents too small: fallbacks */
    CU_ASSERT_EQUAL_FATAL(k(want, m, sigma, NULL), 0);
    for (int s = 0; s < 2; s++) {
        float *got = image(7);
        CU_ASSERT_EQUAL(k(got, m, sigma, splitters[s]), 0);
        CU_ASSERT(memcmp(got, want, sizeof *got * W * H * C) == 0);
        free(got);
    }
    free(want);
    free(m);
    free(sigma);
}

static void test_kernels_split_bit_identical(void)
{
    check(k_blur, 0.5);
    check(k_gauss, 0.2);
    check(k_gauss, 0.002);  /* most pixels fall back to nearest */
    check(k_gauss_sv, 0.1);
    check(k_nearest, 0.05);
}

/* The stage runtime on a lattice view that is not planar (a gather), grid gaussian, and the
 * channel copy. */
static void test_stage_runtime_split_bit_identical(void)
{
    float *base = image(3), *ref = image(5);
    pf_buffer view = { base, 3, { W / 2, H, C }, { 2, W, (int64_t)W * H } };
    pf_buffer rbuf = { ref, 3, { W, H, C }, { 1, W, (int64_t)W * H } };
    pf_recon_spec spec = { PF_SAMPLE_GRID, PF_RECON_GAUSSIAN, { 3, 2, 1, 1 }, 0, 0.0f, 1.0f };
    int64_t lo[3] = { 1, 0, 0 }, step[3] = { 2, 1, 1 };
    CU_ASSERT_EQUAL_FATAL(pf_srt_reconstruct_par(&view, &spec, NULL, NULL, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(pf_srt_copy_channels_par(&view, 2, lo, step, &rbuf, 1, NULL), 0);
    for (int s = 0; s < 2; s++) {
        float *got = image(3);
        view.data = got;
        CU_ASSERT_EQUAL(pf_srt_reconstruct_par(&view, &spec, NULL, NULL, splitters[s]), 0);
        CU_ASSERT_EQUAL(pf_srt_copy_channels_par(&view, 2, lo, step, &rbuf, 1, splitters[s]), 0);
        CU_ASSERT(memcmp(got, base, sizeof *got * W * H * C) == 0);
        free(got);
    }
    free(base);
    free(ref);
}

/* Importance sampling's mask (its map's two Gaussians split) and remapped density. */
static void test_importance_mask_split_bit_identical(void)
{
    float *ref = image(13);
    pf_buffer rbuf = { ref, 3, { W, H, C }, { 1, W, (int64_t)W * H } };
    int64_t lo[2] = { 0, 0 }, step[2] = { 1, 1 };
    float *want = malloc(sizeof *want * W * H), *want_m = malloc(sizeof *want_m * W * H);
    CU_ASSERT_EQUAL_FATAL(pf_srt_importance_mask_par(&rbuf, lo, step, W, H, 0.2f, 0.05f, want,
                                                     want_m, NULL), 0);
    for (int s = 0; s < 2; s++) {
        float *got = malloc(sizeof *got * W * H), *got_m = malloc(sizeof *got_m * W * H);
        CU_ASSERT_EQUAL(pf_srt_importance_mask_par(&rbuf, lo, step, W, H, 0.2f, 0.05f, got,
                                                   got_m, splitters[s]), 0);
        CU_ASSERT(memcmp(got, want, sizeof *got * W * H) == 0);
        CU_ASSERT(memcmp(got_m, want_m, sizeof *got_m * W * H) == 0);
        free(got);
        free(got_m);
    }
    free(want);
    free(want_m);
    free(ref);
}

/* Adaptive sampling's masks (coarse mask, priorities and outputs split by rows), on a planar
 * view and on one with x stride 2 (gathered into a scratch copy), for two block sizes. */
static void test_adaptive_masks_split_bit_identical(void)
{
    float *img = image(17);
    pf_buffer views[2] = { { img, 3, { W, H, C }, { 1, W, (int64_t)W * H } },
                           { img, 3, { W / 2, H, C }, { 2, W, (int64_t)W * H } } };
    size_t n = (size_t)W * H, bytes = sizeof(float) * n;
    float *want = malloc(bytes), *want_f = malloc(bytes), *got = malloc(bytes),
          *got_f = malloc(bytes);
    for (int v = 0; v < 2; v++)
        for (int32_t k = 2; k <= 3; k++) {
            int32_t n1 = (int32_t)views[v].extent[0];
            CU_ASSERT_EQUAL_FATAL(pf_srt_adaptive_coarse_par(n1, H, k, want, NULL), 0);
            for (int s = 0; s < 2; s++) {
                CU_ASSERT_EQUAL(pf_srt_adaptive_coarse_par(n1, H, k, got, splitters[s]), 0);
                CU_ASSERT(memcmp(got, want, sizeof *got * (size_t)n1 * H) == 0);
            }
            CU_ASSERT_EQUAL_FATAL(
                pf_srt_adaptive_refine_par(&views[v], k, 0.3f, want, want_f, NULL), 0);
            for (int s = 0; s < 2; s++) {
                CU_ASSERT_EQUAL(
                    pf_srt_adaptive_refine_par(&views[v], k, 0.3f, got, got_f, splitters[s]), 0);
                CU_ASSERT(memcmp(got, want, sizeof *got * (size_t)n1 * H) == 0);
                CU_ASSERT(memcmp(got_f, want_f, sizeof *got * (size_t)n1 * H) == 0);
            }
        }
    free(want);
    free(want_f);
    free(got);
    free(got_f);
    free(img);
}

PF_TEST_SUITE(reconstruct_par, PF_TEST(test_kernels_split_bit_identical),
              PF_TEST(test_stage_runtime_split_bit_identical),
              PF_TEST(test_importance_mask_split_bit_identical),
              PF_TEST(test_adaptive_masks_split_bit_identical))
