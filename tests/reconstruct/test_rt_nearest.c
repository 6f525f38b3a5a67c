/* Tests for nearest-sample reconstruction: the Manhattan distance transform against a brute-force
 * search with the documented tie rule (first sample in row-major order), on random masks of every
 * density and on degenerate shapes; the copy into skipped pixels; the empty-mask error. */
#include "reconstruct/runtime.h"
#include "tests/reconstruct/test_rt_util.h"

#include <string.h>

/* Brute force: the smallest (distance, row-major index) over all samples. */
static void brute_nearest(const uint8_t *m, int w, int h, int32_t *idx, int32_t *dist)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int32_t bd = INT32_MAX, bi = -1;
            for (int sy = 0; sy < h; sy++)
                for (int sx = 0; sx < w; sx++) {
                    if (!m[sy * w + sx])
                        continue;
                    int32_t d = abs(sx - x) + abs(sy - y);
                    if (d < bd) { /* scanning in row-major order keeps the first on ties */
                        bd = d;
                        bi = sy * w + sx;
                    }
                }
            idx[y * w + x] = bi;
            dist[y * w + x] = bd;
        }
}

static int check_against_brute(const uint8_t *m, int w, int h)
{
    size_t n = (size_t)w * (size_t)h;
    int32_t *i1 = malloc(n * 4), *d1 = malloc(n * 4), *i2 = malloc(n * 4), *d2 = malloc(n * 4);
    brute_nearest(m, w, h, i2, d2);
    int ok = pf_rt_nearest_index(m, w, h, i1, d1) == PF_RT_OK && memcmp(i1, i2, n * 4) == 0 &&
             memcmp(d1, d2, n * 4) == 0;
    free(i1);
    free(d1);
    free(i2);
    free(d2);
    return ok;
}

static void test_nearest_index_matches_brute_force(void)
{
    rt_rng r = { 21 };
    const double dens[] = { 0.001, 0.01, 0.05, 0.2, 0.5, 0.9, 1.0 };
    int cases = 0, ok = 0;
    for (int rep = 0; rep < 6; rep++)
        for (size_t k = 0; k < sizeof dens / sizeof dens[0]; k++) {
            int w = 1 + rt_int(&r, 60), h = 1 + rt_int(&r, 45);
            uint8_t *m = rt_random_mask(&r, w, h, dens[k]);
            ok += check_against_brute(m, w, h);
            cases++;
            free(m);
        }
    CU_ASSERT_EQUAL(ok, cases);
}

/* Masks full of ties: a regular lattice, a checkerboard, symmetric pairs. */
static void test_nearest_index_tie_rule(void)
{
    enum { W = 31, H = 24 };
    uint8_t m[W * H];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            m[y * W + x] = (x % 4 == 2 && y % 4 == 1);
    CU_ASSERT(check_against_brute(m, W, H));
    for (int i = 0; i < W * H; i++)
        m[i] = ((i % W) + (i / W)) % 2 == 0 && (i % 7 == 0);
    m[0] = 1;
    CU_ASSERT(check_against_brute(m, W, H));
    memset(m, 0, sizeof m);
    m[5 * W + 3] = m[5 * W + 27] = m[20 * W + 15] = 1; /* equidistant from pixels between */
    CU_ASSERT(check_against_brute(m, W, H));
    int32_t idx[W * H];
    pf_rt_nearest_index(m, W, H, idx, NULL);
    CU_ASSERT_EQUAL(idx[5 * W + 15], 5 * W + 3); /* tie between (3,5) and (27,5): the left one */
}

static void test_nearest_degenerate_shapes(void)
{
    rt_rng r = { 22 };
    const int shapes[][2] = { { 1, 1 }, { 1, 50 }, { 50, 1 }, { 2, 2 }, { 3, 97 } };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        uint8_t *m = rt_random_mask(&r, shapes[k][0], shapes[k][1], 0.1);
        CU_ASSERT(check_against_brute(m, shapes[k][0], shapes[k][1]));
        free(m);
    }
    uint8_t none[12] = { 0 };
    int32_t idx[12];
    CU_ASSERT_EQUAL(pf_rt_nearest_index(none, 4, 3, idx, NULL), PF_RT_ENOSAMPLE);
    float data[12] = { 0 };
    CU_ASSERT_EQUAL(pf_rt_recon_nearest(data, 4, 3, 1, 4, 12, none), PF_RT_ENOSAMPLE);
    CU_ASSERT_EQUAL(pf_rt_nearest_index(none, 0, 3, idx, NULL), PF_RT_EINVAL);
}

/* Every channel of a skipped pixel is its nearest sample's; samples and row padding are kept. */
static void test_recon_nearest_copies_channels(void)
{
    enum { W = 37, H = 26, C = 3, S = 40 };
    rt_rng r = { 23 };
    size_t plane = (size_t)S * H;
    float *data = malloc(C * plane * sizeof *data), *orig = malloc(C * plane * sizeof *orig);
    for (size_t i = 0; i < C * plane; i++)
        orig[i] = data[i] = (float)rt_unif(&r);
    uint8_t *m = rt_random_mask(&r, W, H, 0.05);
    int32_t idx[W * H];
    CU_ASSERT_EQUAL_FATAL(pf_rt_nearest_index(m, W, H, idx, NULL), PF_RT_OK);
    CU_ASSERT_EQUAL_FATAL(pf_rt_recon_nearest(data, W, H, C, S, plane, m), PF_RT_OK);
    int bad = 0;
    for (int c = 0; c < C; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < S; x++) {
                size_t o = c * plane + (size_t)y * S + x;
                float want = orig[o];
                if (x < W && !m[y * W + x]) {
                    int q = idx[y * W + x];
                    want = orig[c * plane + (size_t)(q / W) * S + q % W];
                }
                bad += data[o] != want;
            }
    CU_ASSERT_EQUAL(bad, 0);
    free(data);
    free(orig);
    free(m);
}

/* The _at variant touches only the selected pixels. */
static void test_recon_nearest_at_only_where(void)
{
    enum { W = 20, H = 10 };
    rt_rng r = { 24 };
    float data[W * H], orig[W * H];
    for (int i = 0; i < W * H; i++)
        orig[i] = data[i] = (float)rt_unif(&r);
    uint8_t *m = rt_random_mask(&r, W, H, 0.1), where[W * H];
    for (int i = 0; i < W * H; i++)
        where[i] = !m[i] && (i % 3 == 0);
    CU_ASSERT_EQUAL(pf_rt_recon_nearest_at(data, W, H, 1, W, W * H, m, where), PF_RT_OK);
    int32_t idx[W * H];
    pf_rt_nearest_index(m, W, H, idx, NULL);
    for (int i = 0; i < W * H; i++)
        CU_ASSERT_EQUAL(data[i], where[i] ? orig[idx[i]] : orig[i]);
    free(m);
}

PF_TEST_SUITE(rt_nearest, PF_TEST(test_nearest_index_matches_brute_force),
              PF_TEST(test_nearest_index_tie_rule), PF_TEST(test_nearest_degenerate_shapes),
              PF_TEST(test_recon_nearest_copies_channels),
              PF_TEST(test_recon_nearest_at_only_where))
