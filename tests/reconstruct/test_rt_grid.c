/* Tests for the grid kernels of the reconstruction runtime: the 2-D grid mask, and N-D multilinear
 * and nearest-grid-point filling, each against the direct tensor-product formula evaluated per
 * element; plus the agreement of grid nearest with the Manhattan nearest on a grid mask. */
#include "reconstruct/runtime.h"
#include "tests/reconstruct/test_rt_util.h"

#include <string.h>

/* The direct rule for one dimension: enclosing sample indices (as positions) and the upper
 * weight, as the header states it. */
static void ref_bracket(int64_t p, int64_t ext, int64_t o, int64_t s, int64_t *lo, int64_t *hi,
                        double *t)
{
    int64_t last = o + (ext - 1 - o) / s * s;
    if (p <= o) {
        *lo = *hi = o;
        *t = 0;
    } else if (p >= last) {
        *lo = *hi = last;
        *t = 0;
    } else {
        *lo = o + (p - o) / s * s;
        *hi = *lo + s;
        *t = (double)(p - *lo) / (double)s;
    }
}

typedef struct nd_case {
    int nd;
    int64_t ext[4], org[4], sp[4];
} nd_case;

static int64_t nd_count(const nd_case *k)
{
    int64_t n = 1;
    for (int d = 0; d < k->nd; d++)
        n *= k->ext[d];
    return n;
}

/* Dense strides with one padding element per row, so stride[1] != extent[0]. */
static void nd_strides(const nd_case *k, int64_t *st, int64_t *total)
{
    int64_t s = 1;
    for (int d = 0; d < k->nd; d++) {
        st[d] = s;
        s *= k->ext[d] + (d == 0);
    }
    *total = s;
}

static void nd_coords(const nd_case *k, int64_t lin, int64_t *p)
{
    for (int d = 0; d < k->nd; d++) {
        p[d] = lin % k->ext[d];
        lin /= k->ext[d];
    }
}

static int nd_is_sample(const nd_case *k, const int64_t *p)
{
    for (int d = 0; d < k->nd; d++)
        if (p[d] < k->org[d] || (p[d] - k->org[d]) % k->sp[d])
            return 0;
    return 1;
}

/* Reference value at p: sum over the 2^nd corners of prod weights (linear) or the nearest
 * corner (nearest). */
static double nd_ref(const nd_case *k, const float *src, const int64_t *st, const int64_t *p,
                     int nearest)
{
    int64_t lo[4], hi[4];
    double t[4];
    for (int d = 0; d < k->nd; d++) {
        ref_bracket(p[d], k->ext[d], k->org[d], k->sp[d], &lo[d], &hi[d], &t[d]);
        if (nearest) {
            lo[d] = (t[d] > 0.5) ? hi[d] : lo[d];
            t[d] = 0;
        }
    }
    double v = 0;
    for (int corner = 0; corner < (1 << k->nd); corner++) {
        double wgt = 1;
        int64_t off = 0;
        for (int d = 0; d < k->nd; d++) {
            int up = (corner >> d) & 1;
            wgt *= up ? t[d] : 1 - t[d];
            off += (up ? hi[d] : lo[d]) * st[d];
        }
        if (wgt != 0)
            v += wgt * src[off];
    }
    return v;
}

static void check_nd_case(const nd_case *k, rt_rng *r, int nearest)
{
    int64_t st[4], total;
    nd_strides(k, st, &total);
    float *src = malloc((size_t)total * sizeof *src), *out = malloc((size_t)total * sizeof *out);
    for (int64_t i = 0; i < total; i++)
        src[i] = (float)rt_unif(r);
    memcpy(out, src, (size_t)total * sizeof *out);
    int rc = nearest ? pf_rt_grid_nearest(out, k->nd, k->ext, st, k->org, k->sp)
                     : pf_rt_grid_multilinear(out, k->nd, k->ext, st, k->org, k->sp);
    CU_ASSERT_EQUAL_FATAL(rc, PF_RT_OK);
    double maxerr = 0;
    int samples_kept = 1;
    for (int64_t lin = 0; lin < nd_count(k); lin++) {
        int64_t p[4], off = 0;
        nd_coords(k, lin, p);
        for (int d = 0; d < k->nd; d++)
            off += p[d] * st[d];
        if (nd_is_sample(k, p)) {
            samples_kept &= out[off] == src[off];
            continue;
        }
        double e = fabs(out[off] - nd_ref(k, src, st, p, nearest));
        maxerr = e > maxerr ? e : maxerr;
    }
    CU_ASSERT(samples_kept);
    CU_ASSERT(maxerr < 2e-6);
    /* The padding elements are outside the view and must be untouched. */
    for (int64_t i = 0; i < total; i++)
        if (k->nd >= 2 && i % st[1] == k->ext[0])
            CU_ASSERT_EQUAL(out[i], src[i]);
    free(src);
    free(out);
}

static const nd_case nd_cases[] = {
    { 1, { 17 }, { 0 }, { 4 } },
    { 1, { 17 }, { 3 }, { 5 } },
    { 1, { 5 }, { 0 }, { 8 } }, /* one sample only */
    { 2, { 23, 17 }, { 0, 0 }, { 4, 4 } },
    { 2, { 23, 17 }, { 1, 2 }, { 3, 2 } },
    { 2, { 23, 17 }, { 0, 0 }, { 8, 1 } },
    { 2, { 23, 17 }, { 2, 0 }, { 1, 1 } }, /* origin only: copy before it */
    { 3, { 13, 11, 3 }, { 0, 1, 0 }, { 4, 2, 2 } },
    { 4, { 9, 8, 7, 4 }, { 1, 0, 2, 0 }, { 2, 4, 2, 2 } },
    { 4, { 6, 5, 4, 3 }, { 0, 0, 0, 1 }, { 8, 1, 2, 1 } },
};

static void test_grid_multilinear_matches_formula(void)
{
    rt_rng r = { 11 };
    for (size_t i = 0; i < sizeof nd_cases / sizeof nd_cases[0]; i++)
        check_nd_case(&nd_cases[i], &r, 0);
}

static void test_grid_nearest_matches_formula(void)
{
    rt_rng r = { 12 };
    for (size_t i = 0; i < sizeof nd_cases / sizeof nd_cases[0]; i++)
        check_nd_case(&nd_cases[i], &r, 1);
}

/* A linear function is reproduced exactly between samples (it is what multilinear means). */
static void test_grid_multilinear_reproduces_linear(void)
{
    enum { W = 33, H = 21 };
    float img[W * H];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            img[y * W + x] = (y % 4 == 0 && x % 8 == 0) ? 0.25f * x - 0.5f * y : -99.0f;
    int64_t ext[2] = { W, H }, st[2] = { 1, W }, org[2] = { 0, 0 }, sp[2] = { 8, 4 };
    CU_ASSERT_EQUAL(pf_rt_grid_multilinear(img, 2, ext, st, org, sp), PF_RT_OK);
    for (int y = 0; y <= 20; y++)
        for (int x = 0; x <= 32; x++)
            PF_ASSERT_NEAR(img[y * W + x], 0.25 * x - 0.5 * y, 1e-5);
}

static void test_grid_mask_anchor_and_count(void)
{
    uint8_t m[10 * 7];
    size_t n = 0;
    CU_ASSERT_EQUAL(pf_rt_grid_mask(10, 7, 1, 2, 4, 3, m, &n), PF_RT_OK);
    CU_ASSERT_EQUAL(n, 3 * 2); /* x in {1,5,9}, y in {2,5} */
    for (int y = 0; y < 7; y++)
        for (int x = 0; x < 10; x++)
            CU_ASSERT_EQUAL(m[y * 10 + x], (x % 4 == 1 && y >= 2 && (y - 2) % 3 == 0));
    CU_ASSERT_EQUAL(pf_rt_grid_mask(10, 7, 10, 0, 1, 1, m, NULL), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_grid_mask(10, 7, 0, 0, 0, 1, m, NULL), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_grid_mask(10, 7, 0, 0, 1, 1, NULL, NULL), PF_RT_EINVAL);
}

/* Grid nearest and the Manhattan transform agree on a grid mask, ties included. */
static void test_grid_nearest_equals_manhattan(void)
{
    enum { W = 29, H = 19, C = 2 };
    rt_rng r = { 13 };
    const int cfg[][4] = { { 0, 0, 4, 4 }, { 1, 2, 3, 2 }, { 0, 0, 2, 6 }, { 3, 1, 5, 5 } };
    for (size_t k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
        float a[C * W * H], b[C * W * H];
        uint8_t m[W * H];
        pf_rt_grid_mask(W, H, cfg[k][0], cfg[k][1], cfg[k][2], cfg[k][3], m, NULL);
        for (int i = 0; i < C * W * H; i++)
            a[i] = b[i] = (float)rt_unif(&r);
        int64_t ext[3] = { W, H, C }, st[3] = { 1, W, W * H };
        int64_t org[3] = { cfg[k][0], cfg[k][1], 0 }, sp[3] = { cfg[k][2], cfg[k][3], 1 };
        CU_ASSERT_EQUAL(pf_rt_grid_nearest(a, 3, ext, st, org, sp), PF_RT_OK);
        CU_ASSERT_EQUAL(pf_rt_recon_nearest(b, W, H, C, W, W * H, m), PF_RT_OK);
        CU_ASSERT(memcmp(a, b, sizeof a) == 0);
    }
}

static void test_grid_fill_rejects_bad_views(void)
{
    float d[16];
    int64_t ext[2] = { 4, 4 }, st[2] = { 1, 4 }, org[2] = { 0, 0 }, sp[2] = { 2, 2 };
    CU_ASSERT_EQUAL(pf_rt_grid_multilinear(d, 0, ext, st, org, sp), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_grid_multilinear(d, 5, ext, st, org, sp), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_grid_multilinear(NULL, 2, ext, st, org, sp), PF_RT_EINVAL);
    int64_t bad_org[2] = { 4, 0 }, bad_sp[2] = { 0, 1 };
    CU_ASSERT_EQUAL(pf_rt_grid_nearest(d, 2, ext, st, bad_org, sp), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_grid_nearest(d, 2, ext, st, org, bad_sp), PF_RT_EINVAL);
}

PF_TEST_SUITE(rt_grid, PF_TEST(test_grid_multilinear_matches_formula),
              PF_TEST(test_grid_nearest_matches_formula),
              PF_TEST(test_grid_multilinear_reproduces_linear),
              PF_TEST(test_grid_mask_anchor_and_count), PF_TEST(test_grid_nearest_equals_manhattan),
              PF_TEST(test_grid_fill_rejects_bad_views))
