/* Tests for adaptive sampling: the coarse grid's anchor, the refinement against a sort-based
 * reference (same priorities, tiles sorted by priority then index, blocks marked until the
 * budget), the sample counts on the training photos (within 1% of f*n whenever f*n is at least
 * the coarse count), and the outputs' consistency. */
#include "reconstruct/runtime.h"
#include "tests/reconstruct/test_rt_util.h"

#include <string.h>

typedef struct tile_key {
    double p;
    int t;
} tile_key;

static int key_cmp(const void *a, const void *b)
{
    const tile_key *x = a, *y = b;
    if (x->p != y->p)
        return x->p > y->p ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

/* The header's priority, written out independently: neighbours at +-1 tile, |difference| summed
 * over channels, scaled by 8 / present. */
static double ref_priority(const float *d, int w, int h, int ch, size_t plane, int k, int i,
                           int j)
{
    int nx = (w + k - 1) / k, ny = (h + k - 1) / k, present = 0;
    double sum = 0;
    int x = pf_rt_adaptive_coarse_pos(i, k, w), y = pf_rt_adaptive_coarse_pos(j, k, h);
    for (int dj = -1; dj <= 1; dj++)
        for (int di = -1; di <= 1; di++) {
            int ni = i + di, nj = j + dj;
            if ((!di && !dj) || ni < 0 || nj < 0 || ni >= nx || nj >= ny)
                continue;
            present++;
            int u = pf_rt_adaptive_coarse_pos(ni, k, w), v = pf_rt_adaptive_coarse_pos(nj, k, h);
            for (int c = 0; c < ch; c++)
                sum += fabs((double)d[c * plane + (size_t)y * w + x] -
                            (double)d[c * plane + (size_t)v * w + u]);
        }
    return present ? sum * 8.0 / present : 0.0;
}

/* Sort-based reference: returns the full sample mask (coarse | fine) and the count. */
static size_t ref_refine(const float *d, int w, int h, int ch, int k, double f, uint8_t *all)
{
    int nx = (w + k - 1) / k, ny = (h + k - 1) / k, half = k / 2;
    size_t n = (size_t)w * h, cnt;
    pf_rt_adaptive_coarse(w, h, k, all, &cnt);
    size_t target = (size_t)floor(f * n + 0.5);
    tile_key *keys = malloc((size_t)nx * ny * sizeof *keys);
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
            keys[j * nx + i] = (tile_key){ ref_priority(d, w, h, ch, n, k, i, j), j * nx + i };
    qsort(keys, (size_t)nx * ny, sizeof *keys, key_cmp);
    for (int t = 0; t < nx * ny && cnt < target; t++) {
        int cx = pf_rt_adaptive_coarse_pos(keys[t].t % nx, k, w);
        int cy = pf_rt_adaptive_coarse_pos(keys[t].t / nx, k, h);
        for (int y = cy - half; y <= cy + half; y++)
            for (int x = cx - half; x <= cx + half; x++)
                if (x >= 0 && y >= 0 && x < w && y < h && !all[y * w + x]) {
                    all[y * w + x] = 1;
                    cnt++;
                }
    }
    free(keys);
    return cnt;
}

typedef enum data_kind { DATA_INT, DATA_BINARY, DATA_GEOMETRIC, DATA_RAMP } data_kind;

/* Integer-valued data keeps every priority exact, so the two implementations order tiles the
 * same way; binary data is all ties; geometric data spreads priorities over decades (the deep
 * histogram path); the ramp 2^-(i/3) gives every tile of a one-tile-high image its own decade, so
 * that ordering the low end takes more histogram levels than allowed (the qsort escape). */
static void fill_data(rt_rng *r, data_kind kind, float *d, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (kind == DATA_INT)
            d[i] = (float)rt_int(r, 256);
        else if (kind == DATA_BINARY)
            d[i] = (float)(rt_unif(r) < 0.1);
        else if (kind == DATA_GEOMETRIC)
            d[i] = ldexpf(1.0f, -rt_int(r, 120));
        else /* a 360-wide ramp: one decade per 3-pixel tile, every row alike */
            d[i] = ldexpf(1.0f, -(int)(i % 360 / 3));
    }
}

static void check_against_sort(int w, int h, int ch, int k, double f, data_kind kind,
                               uint64_t seed, int *ok, int *runs)
{
    rt_rng r = { seed };
    size_t n = (size_t)w * h;
    float *d = malloc(ch * n * sizeof *d);
    fill_data(&r, kind, d, ch * n);
    uint8_t *fine = malloc(n), *isf = malloc(n), *coarse = malloc(n), *ref = malloc(n);
    size_t cnt, rcnt = ref_refine(d, w, h, ch, k, f, ref);
    CU_ASSERT_EQUAL_FATAL(pf_rt_adaptive_refine(d, w, h, ch, w, n, k, f, fine, isf, &cnt),
                          PF_RT_OK);
    pf_rt_adaptive_coarse(w, h, k, coarse, NULL);
    int same = cnt == rcnt;
    for (size_t i = 0; i < n; i++) {
        same &= (coarse[i] | fine[i]) == ref[i];
        same &= !(coarse[i] && fine[i]); /* fine excludes the coarse samples */
        same &= !fine[i] || isf[i];      /* every fine sample lies in a block */
    }
    *ok += same;
    (*runs)++;
    free(d);
    free(fine);
    free(isf);
    free(coarse);
    free(ref);
}

static void test_refine_matches_sort_reference(void)
{
    int ok = 0, runs = 0;
    const double fr[] = { 0.1, 0.3, 0.6, 0.95 };
    const int ks[] = { 1, 2, 3, 4, 5 };
    uint64_t seed = 70;
    for (int kind = 0; kind < 3; kind++)
        for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++)
            for (size_t b = 0; b < sizeof fr / sizeof fr[0]; b++) {
                check_against_sort(83, 61, 1 + (int)(seed % 3), ks[a], fr[b], (data_kind)kind,
                                   seed, &ok, &runs);
                seed++;
            }
    check_against_sort(640, 480, 3, 2, 0.5, DATA_INT, 99, &ok, &runs);
    /* more tiles than one histogram level's bins (AD_MAX_BINS): 196,608 */
    check_against_sort(1024, 768, 1, 2, 0.4, DATA_GEOMETRIC, 95, &ok, &runs);
    check_against_sort(1024, 768, 3, 2, 0.4, DATA_INT, 94, &ok, &runs);
    check_against_sort(640, 480, 1, 3, 0.4, DATA_GEOMETRIC, 98, &ok, &runs);
    check_against_sort(640, 480, 1, 4, 0.7, DATA_BINARY, 97, &ok, &runs);
    check_against_sort(360, 3, 1, 3, 0.95, DATA_RAMP, 96, &ok, &runs);
    rt_report("adaptive: %d of %d refinements equal the sort-based reference\n", ok, runs);
    CU_ASSERT_EQUAL(ok, runs);
}

static void test_coarse_grid_anchor(void)
{
    uint8_t m[10 * 7];
    size_t cnt;
    CU_ASSERT_EQUAL(pf_rt_adaptive_coarse(10, 7, 4, m, &cnt), PF_RT_OK);
    CU_ASSERT_EQUAL(cnt, 3 * 2);
    /* tile centres k*i + k/2 = 2, 6, and the partial last tile's 10 clamped to 9; rows 2, 6 */
    for (int y = 0; y < 7; y++)
        for (int x = 0; x < 10; x++)
            CU_ASSERT_EQUAL(m[y * 10 + x], (x == 2 || x == 6 || x == 9) && (y == 2 || y == 6));
    CU_ASSERT_EQUAL(pf_rt_adaptive_coarse_pos(0, 3, 100), 1);
    CU_ASSERT_EQUAL(pf_rt_adaptive_coarse_pos(2, 3, 100), 7);
    CU_ASSERT_EQUAL(pf_rt_adaptive_coarse(10, 7, 0, m, &cnt), PF_RT_EINVAL);
}

/* On the photos the total lands within 1% of f*n (it overshoots by less than one block). */
static void test_refine_count_on_photos(void)
{
    const double fr[] = { 0.3, 0.5, 0.9 };
    double worst = 0;
    for (int p = 0; p < RT_NPHOTOS; p++) {
        pf_image *img = rt_load_photo(p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(img);
        int w = img->width, h = img->height;
        size_t n = (size_t)w * h;
        uint8_t *fine = malloc(n), *isf = malloc(n);
        for (int k = 2; k <= 4; k++)
            for (int b = 0; b < 3; b++) {
                size_t cnt, coarse;
                pf_rt_adaptive_coarse(w, h, k, fine, &coarse);
                CU_ASSERT_EQUAL(pf_rt_adaptive_refine(img->data, w, h, 3, img->stride,
                                                      img->plane, k, fr[b], fine, isf, &cnt),
                                PF_RT_OK);
                double fn = fr[b] * n;
                if (fn < coarse)
                    continue;
                double e = fabs(cnt - fn) / fn;
                worst = fmax(worst, e);
                CU_ASSERT(e <= 0.01);
            }
        free(fine);
        free(isf);
        pf_image_free(img);
    }
    rt_report("adaptive count on photos, worst |count - fn|/fn %.4f%%\n", 100 * worst);
}

/* A budget below the coarse count refines nothing; a full budget refines everything. */
static void test_refine_budget_extremes(void)
{
    enum { W = 40, H = 30 };
    rt_rng r = { 71 };
    float d[W * H];
    uint8_t fine[W * H], isf[W * H], coarse[W * H];
    fill_data(&r, DATA_INT, d, W * H);
    size_t cnt, nc;
    pf_rt_adaptive_coarse(W, H, 4, coarse, &nc);
    CU_ASSERT_EQUAL(pf_rt_adaptive_refine(d, W, H, 1, W, W * H, 4, 0.01, fine, isf, &cnt),
                    PF_RT_OK);
    CU_ASSERT_EQUAL(cnt, nc);
    for (int i = 0; i < W * H; i++)
        CU_ASSERT(!fine[i] && !isf[i]);
    CU_ASSERT_EQUAL(pf_rt_adaptive_refine(d, W, H, 1, W, W * H, 4, 1.0, fine, NULL, &cnt),
                    PF_RT_OK);
    CU_ASSERT_EQUAL(cnt, W * H);
    for (int i = 0; i < W * H; i++)
        CU_ASSERT_EQUAL(fine[i] | coarse[i], 1);
    CU_ASSERT_EQUAL(pf_rt_adaptive_refine(d, W, H, 1, W, W * H, 4, 0.0, fine, NULL, &cnt),
                    PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_rt_adaptive_refine(d, W, H, 2, W, W * H - 1, 4, 0.5, fine, NULL, &cnt),
                    PF_RT_EINVAL);
}

/* Only the coarse positions are read: garbage elsewhere changes nothing. */
static void test_refine_reads_only_coarse_samples(void)
{
    enum { W = 50, H = 40, S = 53 };
    rt_rng r = { 72 };
    float a[S * H], b[S * H];
    uint8_t coarse[W * H], fa[W * H], fb[W * H];
    pf_rt_adaptive_coarse(W, H, 3, coarse, NULL);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < S; x++) {
            a[y * S + x] = (float)rt_unif(&r);
            b[y * S + x] = x < W && coarse[y * W + x] ? a[y * S + x] : NAN;
        }
    pf_rt_adaptive_refine(a, W, H, 1, S, S * H, 3, 0.5, fa, NULL, NULL);
    pf_rt_adaptive_refine(b, W, H, 1, S, S * H, 3, 0.5, fb, NULL, NULL);
    CU_ASSERT(memcmp(fa, fb, sizeof fa) == 0);
}

PF_TEST_SUITE(rt_adaptive, PF_TEST(test_refine_matches_sort_reference),
              PF_TEST(test_coarse_grid_anchor), PF_TEST(test_refine_count_on_photos),
              PF_TEST(test_refine_budget_extremes), PF_TEST(test_refine_reads_only_coarse_samples))
