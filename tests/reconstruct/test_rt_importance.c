/* Tests for importance sampling: the Appendix A remapping against the exact solution of eq. (2)
 * on random maps of several distributions (the paper's 0.5% claim), the dithered sample counts on
 * the training photos and on synthetic maps (within 1% of f*n), blue-noise spacing, the
 * Ostromoukhov table's transcription, the importance map itself, and determinism. */
#include "reconstruct/runtime.h"
#include "tests/reconstruct/test_rt_util.h"

#include <string.h>

static const double fracs[] = { 0.025, 0.1, 0.25, 0.5, 0.95 };
#define NFRACS 5

/* sum_i min(s v_i, 1), the left side of eq. (2). */
static double eq2_total(const float *v, size_t n, double s)
{
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        double x = v[i] > 0 ? s * v[i] : 0;
        t += x < 1 ? x : 1;
    }
    return t;
}

/* Eq. (2) solved by bisection on the data itself (the exact answer the histogram approximates). */
static double eq2_bisect(const float *v, size_t n, double fn)
{
    double vmin = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (v[i] > 0 && v[i] < vmin)
            vmin = v[i];
    double lo = 0, hi = 1 / vmin;
    for (int it = 0; it < 64; it++) {
        double mid = 0.5 * (lo + hi);
        if (eq2_total(v, n, mid) < fn)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

typedef enum dist { D_UNIFORM, D_EXP, D_LOGN1, D_LOGN2, D_BIMODAL, D_SPIKY, NDIST } dist;
static const char *const dist_name[NDIST] = { "uniform", "exponential", "lognormal(1)",
                                              "lognormal(2)", "bimodal", "spiky" };

static double normal(rt_rng *r)
{
    double u = rt_unif(r) + 1e-12, v = rt_unif(r);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static void fill_dist(rt_rng *r, dist d, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double u = rt_unif(r) + 1e-12;
        switch (d) {
        case D_UNIFORM: v[i] = (float)u; break;
        case D_EXP: v[i] = (float)-log(u); break;
        case D_LOGN1: v[i] = (float)exp(normal(r)); break;
        case D_LOGN2: v[i] = (float)exp(2 * normal(r)); break;
        case D_BIMODAL: v[i] = (float)(u < 0.7 ? 0.01 * u : 1 + u); break;
        default: v[i] = (float)(u < 0.001 ? 100 : 0.1 + 0.01 * u); break; /* rare huge values */
        }
    }
}

/* Worst errors seen: of the final remap and of Appendix A's histogram scale alone. */
typedef struct remap_stats {
    double sum, scale, paper_sum;
} remap_stats;

/* One map: the remap's sum error against f*n and its scale against the bisection's. */
static void check_remap(const char *name, const float *v, size_t n, remap_stats *st)
{
    float *out = malloc(n * sizeof *out);
    for (int k = 0; k < NFRACS; k++) {
        double s, fn = fracs[k] * (double)n;
        CU_ASSERT_EQUAL_FATAL(pf_rt_importance_remap(v, n, fracs[k], out, &s), PF_RT_OK);
        double total = 0;
        for (size_t i = 0; i < n; i++)
            total += out[i];
        double sum_err = fabs(total - fn) / fn;
        double exact = eq2_bisect(v, n, fn), s_err = fabs(s - exact) / exact;
        double s_paper = pf_rt_importance_scale_appendix_a(v, n, fracs[k]);
        double paper_err = fabs(eq2_total(v, n, s_paper) - fn) / fn;
        rt_report("remap %-13s n=%-7zu f=%.3f: |sum - fn|/fn %.2e  |s - s*|/s* %.2e  "
                  "(Appendix A alone: %.3f%%)\n",
                  name, n, fracs[k], sum_err, s_err, 100 * paper_err);
        CU_ASSERT(sum_err <= 0.005);
        CU_ASSERT(s_err <= 1e-4);
        CU_ASSERT(fabs(eq2_total(v, n, s) - total) <= 1e-6 * n); /* out is min(s v, 1) */
        st->sum = fmax(st->sum, sum_err);
        st->scale = fmax(st->scale, s_err);
        st->paper_sum = fmax(st->paper_sum, paper_err);
    }
    free(out);
}

static void test_remap_meets_paper_accuracy(void)
{
    rt_rng r = { 61 };
    remap_stats st = { 0, 0, 0 };
    for (int d = 0; d < NDIST; d++) {
        size_t n = d < 2 ? 1000000 : 200000;
        float *v = malloc(n * sizeof *v);
        fill_dist(&r, (dist)d, v, n);
        check_remap(dist_name[d], v, n, &st);
        free(v);
    }
    rt_report("remap worst on random maps: sum error %.2e, scale error %.2e; Appendix A alone "
              "%.2f%%\n", st.sum, st.scale, 100 * st.paper_sum);
}

/* Importance maps of the photos, remapped: the same claim on the maps the tuner will see. */
static void test_remap_on_photo_importance(void)
{
    remap_stats st = { 0, 0, 0 };
    for (int i = 0; i < RT_NPHOTOS; i++) {
        pf_image *img = rt_load_photo(i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(img);
        size_t n = (size_t)img->width * img->height;
        float *map = malloc(n * sizeof *map);
        CU_ASSERT_EQUAL(pf_rt_importance_map(img->data, img->width, img->height, img->stride,
                                             img->height / 64.0, map),
                        PF_RT_OK);
        check_remap(rt_photos[i] + 18, map, n, &st);
        free(map);
        pf_image_free(img);
    }
    rt_report("remap worst on photo maps: sum error %.2e, scale error %.2e; Appendix A alone "
              "%.2f%%\n", st.sum, st.scale, 100 * st.paper_sum);
}

/* Degenerate maps: constant, with zeros, all zero, frac = 1. */
static void test_remap_edge_cases(void)
{
    enum { N = 1000 };
    float v[N], out[N];
    double s;
    for (int i = 0; i < N; i++)
        v[i] = 2.0f;
    CU_ASSERT_EQUAL(pf_rt_importance_remap(v, N, 0.25, out, &s), PF_RT_OK);
    PF_ASSERT_NEAR(out[0], 0.25, 1e-6);
    for (int i = 0; i < N; i++)
        v[i] = i % 2 ? 1.0f : 0.0f; /* half the map is zero */
    CU_ASSERT_EQUAL(pf_rt_importance_remap(v, N, 0.4, out, &s), PF_RT_OK);
    PF_ASSERT_NEAR(out[1], 0.8, 1e-6);
    CU_ASSERT_EQUAL(out[0], 0.0f);
    CU_ASSERT_EQUAL(pf_rt_importance_remap(v, N, 0.7, out, &s), PF_RT_OK); /* > nonzero count */
    CU_ASSERT(isinf(s));
    CU_ASSERT_EQUAL(out[1], 1.0f);
    CU_ASSERT_EQUAL(out[0], 0.0f);
    memset(v, 0, sizeof v);
    CU_ASSERT_EQUAL(pf_rt_importance_remap(v, N, 0.3, out, &s), PF_RT_OK); /* no information */
    PF_ASSERT_NEAR(out[7], 0.3, 1e-7);
    CU_ASSERT_EQUAL(pf_rt_importance_remap(v, N, 0.0, out, &s), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_importance_remap(v, N, 1.5, out, &s), PF_RT_EINVAL);
}

/* The sample count of a dithered map against f*n. */
static double count_error(const float *map, int w, int h, double f, pf_rt_dither_method m)
{
    size_t n = (size_t)w * h, cnt = 0, check = 0;
    uint8_t *mask = malloc(n);
    CU_ASSERT_EQUAL(pf_rt_importance_mask(map, w, h, f, m, mask, NULL, &cnt), PF_RT_OK);
    for (size_t i = 0; i < n; i++)
        check += mask[i];
    CU_ASSERT_EQUAL(cnt, check);
    free(mask);
    return fabs((double)cnt - f * n) / (f * n);
}

static void test_dither_count_on_photos(void)
{
    double worst[2] = { 0, 0 };
    for (int i = 0; i < RT_NPHOTOS; i++) {
        pf_image *img = rt_load_photo(i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(img);
        int w = img->width, h = img->height;
        float *map = malloc((size_t)w * h * sizeof *map);
        /* sigma_imp = 1/64 of the height, the prototype's default */
        pf_rt_importance_map(img->data, w, h, img->stride, h / 64.0, map);
        for (int m = 0; m < 2; m++)
            for (int k = 0; k < NFRACS; k++) {
                double e = count_error(map, w, h, fracs[k], (pf_rt_dither_method)m);
                CU_ASSERT(e <= 0.01);
                worst[m] = fmax(worst[m], e);
            }
        free(map);
        pf_image_free(img);
    }
    rt_report("dither count on photos, worst |count - fn|/fn: Ostromoukhov %.4f%%, "
              "Floyd-Steinberg %.4f%%\n", 100 * worst[0], 100 * worst[1]);
}

static void test_dither_count_on_synthetic_maps(void)
{
    rt_rng r = { 62 };
    const int W = 512, H = 384;
    float *map = malloc((size_t)W * H * sizeof *map);
    double worst = 0;
    for (int d = 0; d < NDIST + 2; d++) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float *v = &map[y * W + x];
                if (d < NDIST)
                    continue;
                *v = d == NDIST ? (float)(1 + x) /* a ramp */
                                : (float)(x < W / 2 ? 1.0 : 0.0); /* half empty */
            }
        if (d < NDIST)
            fill_dist(&r, (dist)d, map, (size_t)W * H);
        for (int m = 0; m < 2; m++)
            for (int k = 0; k < NFRACS; k++) {
                /* the half-empty map can hold at most half the pixels */
                if (d == NDIST + 1 && fracs[k] > 0.5)
                    continue;
                double e = count_error(map, W, H, fracs[k], (pf_rt_dither_method)m);
                CU_ASSERT(e <= 0.01);
                worst = fmax(worst, e);
            }
    }
    rt_report("dither count on synthetic maps, worst |count - fn|/fn %.4f%%\n", 100 * worst);
    free(map);
}

/* Mean distance from each sample to its nearest other sample (searched within radius R). */
static double mean_nn_distance(const uint8_t *mask, int W, int H, int R)
{
    double sum = 0;
    size_t cnt = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            if (!mask[y * W + x])
                continue;
            double best = R;
            for (int dy = -R; dy <= R; dy++)
                for (int dx = -R; dx <= R; dx++) {
                    int nx = x + dx, ny = y + dy;
                    if ((dx || dy) && nx >= 0 && ny >= 0 && nx < W && ny < H && mask[ny * W + nx])
                        best = fmin(best, sqrt(dx * dx + dy * dy));
                }
            sum += best;
            cnt++;
        }
    return sum / cnt;
}

/* Blue noise on a flat map at low density: no two samples side by side (4-neighbours; at 2.5%
 * not even diagonally), and nearest-neighbour distances close to the lattice spacing 1/sqrt(f)
 * (white noise would give 0.5/sqrt(f)). */
static void test_dither_blue_noise_on_flat_map(void)
{
    const int W = 256, H = 256;
    const double fr[] = { 0.025, 0.1 };
    float *map = malloc((size_t)W * H * sizeof *map);
    uint8_t *mask = malloc((size_t)W * H);
    for (int i = 0; i < W * H; i++)
        map[i] = 1.0f;
    for (int k = 0; k < 2; k++)
        for (int m = 0; m < 2; m++) {
            CU_ASSERT_EQUAL(pf_rt_importance_mask(map, W, H, fr[k], (pf_rt_dither_method)m,
                                                  mask, NULL, NULL),
                            PF_RT_OK);
            int side = 0, diag = 0;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    if (!mask[y * W + x])
                        continue;
                    side += (x + 1 < W && mask[y * W + x + 1]) +
                            (y + 1 < H && mask[(y + 1) * W + x]);
                    diag += (y + 1 < H && x + 1 < W && mask[(y + 1) * W + x + 1]) +
                            (y + 1 < H && x > 0 && mask[(y + 1) * W + x - 1]);
                }
            double nn = mean_nn_distance(mask, W, H, (int)(3 / sqrt(fr[k]))) * sqrt(fr[k]);
            rt_report("blue noise %s f=%.3f: %d side-by-side, %d diagonal pairs, mean NN "
                      "distance %.2f / sqrt(f)\n",
                      m ? "Floyd-Steinberg" : "Ostromoukhov", fr[k], side, diag, nn);
            CU_ASSERT_EQUAL(side, 0);
            if (fr[k] < 0.05)
                CU_ASSERT_EQUAL(diag, 0);
            CU_ASSERT(nn > 0.75);
        }
    free(map);
    free(mask);
}

static void test_ostromoukhov_table_transcription(void)
{
    for (int i = 0; i < 256; i++) {
        const short *k = pf_rt_ostromoukhov_row(i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        CU_ASSERT_EQUAL(k[0] + k[1] + k[2], k[3]);
        CU_ASSERT(k[0] >= 0 && k[1] >= 0 && k[2] >= 0 && k[3] > 0);
        CU_ASSERT(memcmp(k, pf_rt_ostromoukhov_row(255 - i), 4 * sizeof *k) == 0);
    }
    /* Spot checks against the published rows. */
    const short r11[4] = { 501, 224, 211, 936 }, r73[4] = { 172, 181, 37, 390 },
                r126[4] = { 395, 104, 101, 600 };
    CU_ASSERT(memcmp(pf_rt_ostromoukhov_row(11), r11, sizeof r11) == 0);
    CU_ASSERT(memcmp(pf_rt_ostromoukhov_row(182), r73, sizeof r73) == 0);
    CU_ASSERT(memcmp(pf_rt_ostromoukhov_row(129), r126, sizeof r126) == 0);
    CU_ASSERT_PTR_NULL(pf_rt_ostromoukhov_row(256));
}

static void test_importance_map_properties(void)
{
    enum { W = 120, H = 80 };
    float img[W * H], map[W * H];
    for (int i = 0; i < W * H; i++)
        img[i] = 0.5f;
    CU_ASSERT_EQUAL(pf_rt_importance_map(img, W, H, W, 2.0, map), PF_RT_OK);
    for (int i = 0; i < W * H; i++)
        CU_ASSERT_EQUAL(map[i], 1.0f); /* flat: uniform */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            img[y * W + x] = x < W / 2 ? 0.1f : 0.9f; /* a vertical edge */
    CU_ASSERT_EQUAL(pf_rt_importance_map(img, W, H, W, 2.0, map), PF_RT_OK);
    double mean = 0;
    for (int i = 0; i < W * H; i++)
        mean += map[i] / (W * H);
    CU_ASSERT(map[40 * W + W / 2] > 10 * map[40 * W + 5]); /* texture at the edge */
    for (int i = 0; i < W * H; i++)
        /* 0.98: `mean` is taken after flooring, which raised it by at most 1% */
        CU_ASSERT(map[i] >= (float)(PF_RT_IMPORTANCE_FLOOR * mean) * 0.98f);
    CU_ASSERT_EQUAL(pf_rt_importance_map(img, W, H, W, 0.0, map), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_importance_map(img, W, H, W - 1, 1.0, map), PF_RT_EINVAL);
}

/* The same inputs give the same mask, and the remapped map returned is M(x). */
static void test_importance_mask_deterministic(void)
{
    pf_image *img = rt_load_photo(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    int w = img->width, h = img->height;
    size_t n = (size_t)w * h;
    float *map = malloc(n * sizeof *map), *rem = malloc(n * sizeof *rem);
    float *rem2 = malloc(n * sizeof *rem2);
    uint8_t *a = malloc(n), *b = malloc(n);
    pf_rt_importance_map(img->data, w, h, img->stride, h / 64.0, map);
    pf_rt_importance_mask(map, w, h, 0.2, PF_RT_DITHER_OSTROMOUKHOV, a, rem, NULL);
    pf_rt_importance_mask(map, w, h, 0.2, PF_RT_DITHER_OSTROMOUKHOV, b, NULL, NULL);
    CU_ASSERT(memcmp(a, b, n) == 0);
    pf_rt_importance_remap(map, n, 0.2, rem2, NULL);
    CU_ASSERT(memcmp(rem, rem2, n * sizeof *rem) == 0);
    uint8_t *c = malloc(n);
    pf_rt_dither(rem, w, h, PF_RT_DITHER_OSTROMOUKHOV, c, NULL);
    CU_ASSERT(memcmp(a, c, n) == 0);
    free(map);
    free(rem);
    free(rem2);
    free(a);
    free(b);
    free(c);
    pf_image_free(img);
}

/* Tiny budgets still place one sample; zero density never gets one. */
static void test_dither_extremes(void)
{
    float d[16] = { 0 };
    uint8_t m[16];
    size_t cnt;
    d[9] = 0.01f;
    CU_ASSERT_EQUAL(pf_rt_dither(d, 4, 4, PF_RT_DITHER_OSTROMOUKHOV, m, &cnt), PF_RT_OK);
    CU_ASSERT_EQUAL(cnt, 1);
    CU_ASSERT_EQUAL(m[9], 1);
    memset(d, 0, sizeof d);
    CU_ASSERT_EQUAL(pf_rt_dither(d, 4, 4, PF_RT_DITHER_FLOYD_STEINBERG, m, &cnt), PF_RT_OK);
    CU_ASSERT_EQUAL(cnt, 0);
    CU_ASSERT_EQUAL(pf_rt_dither(d, 4, 4, (pf_rt_dither_method)7, m, &cnt), PF_RT_EINVAL);
    for (int i = 0; i < 16; i++)
        d[i] = 1.0f;
    CU_ASSERT_EQUAL(pf_rt_dither(d, 4, 4, PF_RT_DITHER_OSTROMOUKHOV, m, &cnt), PF_RT_OK);
    CU_ASSERT_EQUAL(cnt, 16);
}

PF_TEST_SUITE(rt_importance, PF_TEST(test_remap_meets_paper_accuracy),
              PF_TEST(test_remap_on_photo_importance), PF_TEST(test_remap_edge_cases),
              PF_TEST(test_dither_count_on_photos), PF_TEST(test_dither_count_on_synthetic_maps),
              PF_TEST(test_dither_blue_noise_on_flat_map),
              PF_TEST(test_ostromoukhov_table_transcription),
              PF_TEST(test_importance_map_properties), PF_TEST(test_importance_mask_deterministic),
              PF_TEST(test_dither_extremes))
