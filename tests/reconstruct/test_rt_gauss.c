/* Tests for the Gaussian reconstructions: the IIR normalised convolution against a direct
 * Gaussian (truncated at 4 sigma, normalised, edges replicated as in base/gauss.h); the spatially
 * varying tent filter against a direct per-pixel tent; their fallbacks to nearest; and the sigma
 * rules of the paper. */
#include "base/gauss.h"
#include "reconstruct/runtime.h"
#include "tests/reconstruct/test_rt_util.h"

#include <string.h>

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* A 1-D kernel k[-R..R] (stored k[j + R]) with its radius. */
typedef struct kern1d {
    int R;
    double *k;
} kern1d;

/* The true Gaussian, truncated at 4 sigma. */
static kern1d kern_gauss(double sigma)
{
    kern1d g = { (int)ceil(4 * sigma), NULL };
    g.k = malloc((2 * g.R + 1) * sizeof *g.k);
    for (int j = -g.R; j <= g.R; j++)
        g.k[j + g.R] = exp(-j * j / (2 * sigma * sigma));
    return g;
}

/* The Young-van Vliet filter's own impulse response (a unit impulse filtered far from any
 * border), truncated where it falls below 1e-9 of its peak: with it the direct convolution must
 * reproduce the IIR result up to float round-off, which checks the normalised-convolution
 * plumbing separately from the filter's approximation of a Gaussian. */
static kern1d kern_iir(double sigma)
{
    int len = (int)(60 * sigma) + 200, mid = len / 2;
    float *imp = calloc(len, sizeof *imp);
    imp[mid] = 1.0f;
    pf_gauss_iir_1d(imp, len, 1, sigma);
    kern1d g = { 0, NULL };
    while (g.R < mid - 1 && fabs(imp[mid + g.R + 1]) > 1e-9 * imp[mid])
        g.R++;
    g.k = malloc((2 * g.R + 1) * sizeof *g.k);
    for (int j = -g.R; j <= g.R; j++)
        g.k[j + g.R] = imp[mid + j];
    free(imp);
    return g;
}

/* Separable direct normalised convolution with replicated edges (base/gauss.h's border rule):
 * out = (K * (I.S)) / (K * S), both sums written out tap by tap. den receives K * S. */
static void ref_normconv(const float *pl, int w, int h, size_t stride, const uint8_t *m,
                         const kern1d *g, double *out, double *den)
{
    size_t n = (size_t)w * h;
    double *tn = calloc(n, sizeof *tn), *td = calloc(n, sizeof *td);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int j = -g->R; j <= g->R; j++) {
                int sx = clampi(x + j, 0, w - 1);
                if (m[y * w + sx]) {
                    tn[y * w + x] += g->k[j + g->R] * pl[(size_t)y * stride + sx];
                    td[y * w + x] += g->k[j + g->R];
                }
            }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double a = 0, b = 0;
            for (int j = -g->R; j <= g->R; j++) {
                int sy = clampi(y + j, 0, h - 1);
                a += g->k[j + g->R] * tn[sy * w + x];
                b += g->k[j + g->R] * td[sy * w + x];
            }
            out[y * w + x] = b > 0 ? a / b : NAN;
            den[y * w + x] = b;
        }
    free(tn);
    free(td);
}

/* The IIR reconstruction against the direct one with kernel g, over skipped pixels whose direct
 * weight is at least 1e-3 of the kernel's 2-D peak. */
static void gauss_vs_direct(int w, int h, double sigma, double density, int iir_kernel,
                            double *maxerr, double *meanerr)
{
    enum { C = 2 };
    rt_rng r = { (uint64_t)(1000 * sigma + 7 * w) };
    size_t stride = (size_t)w + 3, plane = stride * (size_t)h, n = (size_t)w * h;
    float *data = malloc(C * plane * sizeof *data), *orig = malloc(C * plane * sizeof *orig);
    rt_smooth_fill(orig, w, h, C, stride, plane, 40.0);
    memcpy(data, orig, C * plane * sizeof *data);
    uint8_t *m = rt_random_mask(&r, w, h, density);
    CU_ASSERT_EQUAL_FATAL(pf_rt_recon_gaussian(data, w, h, C, stride, plane, m, sigma), PF_RT_OK);
    kern1d g = iir_kernel ? kern_iir(sigma) : kern_gauss(sigma);
    double *ref = malloc(n * sizeof *ref), *den = malloc(n * sizeof *den);
    double peak = g.k[g.R] * g.k[g.R], mx = 0, sum = 0;
    size_t cnt = 0, kept = 1;
    for (int c = 0; c < C; c++) {
        ref_normconv(orig + c * plane, w, h, stride, m, &g, ref, den);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                size_t o = c * plane + (size_t)y * stride + x;
                if (m[y * w + x]) {
                    kept &= data[o] == orig[o];
                    continue;
                }
                if (den[y * w + x] < 1e-3 * peak)
                    continue;
                double e = fabs(data[o] - ref[y * w + x]);
                mx = e > mx ? e : mx;
                sum += e;
                cnt++;
            }
    }
    CU_ASSERT(kept);
    *maxerr = mx;
    *meanerr = cnt ? sum / cnt : 0;
    free(g.k);
    free(ref);
    free(den);
    free(data);
    free(orig);
    free(m);
}

static void test_gauss_matches_direct_iir_kernel(void)
{
    const double sig[] = { 0.7, 1.0, 2.0, 4.0, 9.0 }, dens[] = { 0.5, 0.1, 0.02 };
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++) {
            double mx, mean;
            gauss_vs_direct(96, 71, sig[i], dens[j], 1, &mx, &mean);
            rt_report("gauss sigma %.1f density %.2f: max |recon - direct(IIR kernel)| %.2g\n",
                      sig[i], dens[j], mx);
            CU_ASSERT(mx < 1e-4);
        }
}

/* How far the Young-van Vliet filter takes the result from a true Gaussian's: its tail is
 * exponential and, for sigma near 1, its shape is off (0.51 instead of 0.61 of the peak at one
 * sigma), which sparse masks amplify. Measured and bounded, on a smooth image (period 40 px). */
static void test_gauss_close_to_true_gaussian(void)
{
    const double sig[] = { 1.0, 2.0, 4.0 }, dens[] = { 0.5, 0.1 };
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            double mx, mean;
            gauss_vs_direct(96, 71, sig[i], dens[j], 0, &mx, &mean);
            rt_report("gauss sigma %.1f density %.2f: |recon - true Gaussian| max %.4f mean "
                      "%.5f\n", sig[i], dens[j], mx, mean);
            CU_ASSERT(mx < (dens[j] >= 0.5 ? 0.03 : 0.12));
            CU_ASSERT(mean < 0.01);
        }
}

/* A constant image is reconstructed exactly, whatever the mask. */
static void test_gauss_constant_is_exact(void)
{
    enum { W = 80, H = 50 };
    rt_rng r = { 31 };
    float data[W * H];
    for (int i = 0; i < W * H; i++)
        data[i] = 0.375f;
    uint8_t *m = rt_random_mask(&r, W, H, 0.03);
    CU_ASSERT_EQUAL(pf_rt_recon_gaussian(data, W, H, 1, W, W * H, m, 3.0), PF_RT_OK);
    for (int i = 0; i < W * H; i++)
        PF_ASSERT_NEAR(data[i], 0.375, 1e-5);
    free(m);
}

/* Far from every sample (more than ~12 sigma) the weight is untrustworthy and the pixel takes
 * its nearest sample; near the samples the ratio is used. */
static void test_gauss_far_pixels_fall_back_to_nearest(void)
{
    enum { W = 300, H = 20 };
    float data[W * H];
    uint8_t m[W * H] = { 0 };
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            data[y * W + x] = -1.0f;
    for (int y = 0; y < H; y++) {
        m[y * W] = m[y * W + 1] = 1;
        data[y * W] = 0.2f;
        data[y * W + 1] = 0.6f;
    }
    CU_ASSERT_EQUAL(pf_rt_recon_gaussian(data, W, H, 1, W, W * H, m, 1.0), PF_RT_OK);
    for (int y = 0; y < H; y++) {
        CU_ASSERT(data[y * W + 2] > 0.4f); /* mostly the nearer sample */
        CU_ASSERT_EQUAL(data[y * W + 299], 0.6f); /* the nearest sample, copied */
        for (int x = 2; x < W; x++)
            CU_ASSERT(data[y * W + x] >= 0.2f && data[y * W + x] <= 0.6f);
    }
}

static void test_gauss_rejects_bad_args(void)
{
    float d[4] = { 0 };
    uint8_t m[4] = { 1, 0, 0, 0 };
    CU_ASSERT_EQUAL(pf_rt_recon_gaussian(d, 2, 2, 1, 2, 4, m, 0.0), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_recon_gaussian(d, 2, 2, 1, 2, 4, m, NAN), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_recon_gaussian(d, 2, 2, 1, 1, 4, m, 1.0), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_recon_gaussian(d, 2, 2, 2, 2, 3, m, 1.0), PF_RT_EINVAL);
    uint8_t none[4] = { 0 };
    CU_ASSERT_EQUAL(pf_rt_recon_gaussian(d, 2, 2, 1, 2, 4, none, 1.0), PF_RT_ENOSAMPLE);
}

/* ---- spatially varying ---- */

/* The blended tent's 1-D weight at offset j for radius r. */
static double tent_weight(double r, int j)
{
    int r0 = (int)r;
    double a = r - r0, t0 = r0 - abs(j), t1 = r0 + 1 - abs(j);
    return (1 - a) * (t0 > 0 ? t0 : 0) + a * (t1 > 0 ? t1 : 0);
}

/* Direct tent filter of one skipped pixel, all channels; returns 0 when it falls back. */
static int ref_sv_pixel(const float *orig, int w, int h, int ch, size_t stride, size_t plane,
                        const uint8_t *m, double sigma, int x, int y, double *out)
{
    double r = pf_rt_tent_radius(sigma), den = 0;
    int R = (int)r;
    for (int c = 0; c < ch; c++)
        out[c] = 0;
    for (int dy = -R; dy <= R; dy++)
        for (int dx = -R; dx <= R; dx++) {
            int sx = x + dx, sy = y + dy;
            if (sx < 0 || sy < 0 || sx >= w || sy >= h || !m[sy * w + sx])
                continue;
            double g = tent_weight(r, dx) * tent_weight(r, dy);
            den += g;
            for (int c = 0; c < ch; c++)
                out[c] += g * orig[c * plane + (size_t)sy * stride + sx];
        }
    if (den < PF_RT_SV_MIN_WEIGHT * r * r)
        return 0;
    for (int c = 0; c < ch; c++)
        out[c] /= den;
    return 1;
}

typedef struct sv_case {
    int w, h, ch;
    double density, smin, smax;
} sv_case;

static double sv_vs_direct(const sv_case *k, uint64_t seed)
{
    rt_rng r = { seed };
    int w = k->w, h = k->h, ch = k->ch;
    size_t stride = (size_t)w + 5, plane = stride * (size_t)h, n = (size_t)w * h;
    float *data = malloc(ch * plane * sizeof *data), *orig = malloc(ch * plane * sizeof *orig);
    float *sig = malloc(n * sizeof *sig);
    for (size_t i = 0; i < ch * plane; i++)
        orig[i] = data[i] = (float)rt_unif(&r);
    for (size_t i = 0; i < n; i++)
        sig[i] = (float)(k->smin + (k->smax - k->smin) * rt_unif(&r));
    uint8_t *m = rt_random_mask(&r, w, h, k->density);
    CU_ASSERT_EQUAL_FATAL(pf_rt_recon_gaussian_sv(data, w, h, ch, stride, plane, m, sig),
                          PF_RT_OK);
    int32_t *idx = malloc(n * sizeof *idx);
    pf_rt_nearest_index(m, w, h, idx, NULL);
    double mx = 0, ref[8];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t at = (size_t)y * stride + x;
            if (m[y * w + x]) {
                for (int c = 0; c < ch; c++)
                    mx = data[c * plane + at] != orig[c * plane + at] ? 1e9 : mx;
                continue;
            }
            if (!ref_sv_pixel(orig, w, h, ch, stride, plane, m, sig[y * w + x], x, y, ref)) {
                int q = idx[y * w + x];
                for (int c = 0; c < ch; c++)
                    ref[c] = orig[c * plane + (size_t)(q / w) * stride + q % w];
            }
            for (int c = 0; c < ch; c++) {
                double e = fabs(data[c * plane + at] - ref[c]);
                mx = e > mx ? e : mx;
            }
        }
    free(data);
    free(orig);
    free(sig);
    free(m);
    free(idx);
    return mx;
}

static void test_gauss_sv_matches_direct_tent(void)
{
    const sv_case cases[] = {
        { 150, 130, 3, 0.25, 0.3, 3.0 },  /* several tiles, small kernels */
        { 97, 61, 1, 0.05, 1.0, 8.0 },    /* sparse, wide */
        { 40, 33, 8, 0.1, 0.0, 2.0 },     /* two channel groups; sigma 0 falls back */
        { 70, 90, 2, 0.02, 20.0, 40.0 },  /* kernels wider than a tile */
        { 1, 37, 1, 0.2, 0.5, 4.0 },      /* a single column */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double e = sv_vs_direct(&cases[i], 40 + i);
        rt_report("gauss_sv %dx%dx%d density %.2f sigma [%.1f, %.1f]: max |fast - direct| %.2g\n",
                  cases[i].w, cases[i].h, cases[i].ch, cases[i].density, cases[i].smin,
                  cases[i].smax, e);
        CU_ASSERT(e < 1e-5);
    }
}

/* At 2048x1536 a whole-image table would lose ~1e-4 to round-off; the tiled one must not. */
static void test_gauss_sv_precision_large_image(void)
{
    const sv_case big = { 2048, 1536, 1, 0.1, 0.5, 2.5 };
    rt_rng r = { 50 };
    int w = big.w, h = big.h;
    size_t n = (size_t)w * h;
    float *data = malloc(n * sizeof *data), *orig = malloc(n * sizeof *orig);
    float *sig = malloc(n * sizeof *sig);
    for (size_t i = 0; i < n; i++) {
        orig[i] = data[i] = (float)rt_unif(&r);
        sig[i] = (float)(big.smin + (big.smax - big.smin) * rt_unif(&r));
    }
    uint8_t *m = rt_random_mask(&r, w, h, big.density);
    CU_ASSERT_EQUAL_FATAL(pf_rt_recon_gaussian_sv(data, w, h, 1, w, n, m, sig), PF_RT_OK);
    double mx = 0, ref;
    for (int y = h - 40; y < h; y++) /* the far corner, where global sums would be largest */
        for (int x = w - 300; x < w; x++)
            if (!m[y * w + x] && ref_sv_pixel(orig, w, h, 1, w, n, m, sig[y * w + x], x, y, &ref))
                mx = fmax(mx, fabs(data[y * w + x] - ref));
    rt_report("gauss_sv 2048x1536 bottom-right corner: max |fast - direct| %.2g\n", mx);
    CU_ASSERT(mx < 1e-5);
    free(data);
    free(orig);
    free(sig);
    free(m);
}

static void test_gauss_sv_constant_is_exact(void)
{
    enum { W = 90, H = 70 };
    rt_rng r = { 51 };
    float data[W * H], sig[W * H];
    for (int i = 0; i < W * H; i++) {
        data[i] = 0.625f;
        sig[i] = (float)(0.5 + 5 * rt_unif(&r));
    }
    uint8_t *m = rt_random_mask(&r, W, H, 0.05);
    CU_ASSERT_EQUAL(pf_rt_recon_gaussian_sv(data, W, H, 1, W, W * H, m, sig), PF_RT_OK);
    for (int i = 0; i < W * H; i++)
        PF_ASSERT_NEAR(data[i], 0.625, 1e-6);
    free(m);
}

static void test_tent_radius_matches_variance(void)
{
    for (int r = 1; r <= 12; r++) {
        double sigma = sqrt((r * r - 1) / 6.0), var = 0, mass = 0;
        PF_ASSERT_NEAR(pf_rt_tent_radius(sigma), r, 1e-9);
        for (int j = -r; j <= r; j++) {
            mass += tent_weight(r, j);
            var += j * j * tent_weight(r, j);
        }
        PF_ASSERT_NEAR(var / mass, sigma * sigma, 1e-9);
    }
    CU_ASSERT_EQUAL(pf_rt_tent_radius(-1.0), 1.0);
    CU_ASSERT_EQUAL(pf_rt_tent_radius(NAN), 1.0);
    CU_ASSERT_EQUAL(pf_rt_tent_radius(1e9), PF_RT_SV_MAX_RADIUS);
}

static void test_sigma_rules(void)
{
    float rem[4] = { 1.0f, 0.25f, 0.0f, 1e-6f }, s[4];
    CU_ASSERT_EQUAL(pf_rt_sigma_importance(rem, 4, 0.5, 0.25, s), PF_RT_OK);
    PF_ASSERT_NEAR(s[0], 0.5, 1e-6);      /* sigma0 / sqrt(1) */
    PF_ASSERT_NEAR(s[1], 1.0, 1e-6);      /* sigma0 / sqrt(0.25) */
    PF_ASSERT_NEAR(s[2], 1.5, 1e-6);      /* M = 0: the clamp 1.5 sigma0 / sqrt(frac) */
    PF_ASSERT_NEAR(s[3], 1.5, 1e-6);
    uint8_t fine[3] = { 1, 0, 1 };
    CU_ASSERT_EQUAL(pf_rt_sigma_adaptive(fine, 3, 0.9, 3, s), PF_RT_OK);
    PF_ASSERT_NEAR(s[0], 0.01, 1e-7);
    PF_ASSERT_NEAR(s[1], 2.7, 1e-6); /* the paper's sigma0 * k */
    int64_t sp[2] = { 4, 1 };
    PF_ASSERT_NEAR(pf_rt_sigma_grid(0.5, 2, sp), 1.0, 1e-12);
    PF_ASSERT_NEAR(pf_rt_sigma_irregular(0.5, 0.25), 1.0, 1e-12);
    CU_ASSERT_EQUAL(pf_rt_sigma_importance(rem, 4, 0.5, 0.0, s), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_sigma_adaptive(fine, 3, 0.5, 0, s), PF_RT_EINVAL);
}

PF_TEST_SUITE(rt_gauss, PF_TEST(test_gauss_matches_direct_iir_kernel),
              PF_TEST(test_gauss_close_to_true_gaussian),
              PF_TEST(test_gauss_constant_is_exact),
              PF_TEST(test_gauss_far_pixels_fall_back_to_nearest),
              PF_TEST(test_gauss_rejects_bad_args), PF_TEST(test_gauss_sv_matches_direct_tent),
              PF_TEST(test_gauss_sv_precision_large_image),
              PF_TEST(test_gauss_sv_constant_is_exact),
              PF_TEST(test_tent_radius_matches_variance), PF_TEST(test_sigma_rules))
