/* Tests for the stage-level runtime (reconstruct/stage_rt.h): every pf_srt_* function against
 * the direct computation docs/perforation.md §2-§3 describes, i.e. the kernel of
 * reconstruct/runtime.h called by hand on a dense planar copy of the lattice view. Views are
 * strided (x stride 2, inside a larger image) so that the gather/scatter path runs, and dense
 * so that the in-place path runs; both must give the kernel's result bit for bit, write only
 * skipped elements, and leave the rest of the image alone. */
#include "reconstruct/stage_rt.h"

#include "reconstruct/runtime.h"
#include "tests/reconstruct/test_rt_util.h"

#include <string.h>

/* A W x H x C image (dense) and a lattice view into it. */
#define IW 23
#define IH 17
#define IC 3

typedef struct srt_case {
    float img[IW * IH * IC];
    pf_buffer view;
} srt_case;

static void fill_random(rt_rng *r, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)rt_unif(r);
}

/* The lattice x = 1, 3, ..., 21 (n1 = 11), y = 2 .. 16 (n2 = 15), all channels; or the dense
 * view of the whole image when `dense`. */
static void make_case(srt_case *k, rt_rng *r, int dense)
{
    fill_random(r, k->img, sizeof k->img / sizeof k->img[0]);
    pf_buffer v = { k->img, 3, { IW, IH, IC, 1 }, { 1, IW, IW * IH, 0 } };
    if (!dense) {
        v.data = k->img + 1 + 2 * IW;
        v.extent[0] = 11;
        v.extent[1] = 15;
        v.stride[0] = 2;
    }
    k->view = v;
}

static size_t view_count(const pf_buffer *v)
{
    return (size_t)pf_buffer_count(v);
}

static float *view_at(const pf_buffer *v, int64_t x, int64_t y, int64_t c)
{
    return v->data + x * v->stride[0] + y * v->stride[1] + c * v->stride[2];
}

/* A dense planar copy (x fastest, then y, then c) of a 3-D view. */
static float *gather(const pf_buffer *v)
{
    float *p = malloc(view_count(v) * sizeof *p);
    size_t i = 0;
    for (int64_t c = 0; c < v->extent[2]; c++)
        for (int64_t y = 0; y < v->extent[1]; y++)
            for (int64_t x = 0; x < v->extent[0]; x++)
                p[i++] = *view_at(v, x, y, c);
    return p;
}

/* Every element of the view equals the dense copy, bit for bit. */
static int view_equals(const pf_buffer *v, const float *p)
{
    size_t i = 0;
    for (int64_t c = 0; c < v->extent[2]; c++)
        for (int64_t y = 0; y < v->extent[1]; y++)
            for (int64_t x = 0; x < v->extent[0]; x++)
                if (memcmp(view_at(v, x, y, c), &p[i++], sizeof(float)) != 0)
                    return 0;
    return 1;
}

/* The elements of img that are not in the view are those of `before`. */
static int outside_untouched(const srt_case *k, const float *before)
{
    for (size_t i = 0; i < IW * IH * IC; i++) {
        int64_t x = (int64_t)(i % IW), y = (int64_t)(i / IW % IH);
        int in_view = k->view.stride[0] == 1 || (x % 2 == 1 && y >= 2);
        if (!in_view && memcmp(&k->img[i], &before[i], sizeof(float)) != 0)
            return 0;
    }
    return 1;
}

static uint8_t *to_u8(const float *m, size_t n)
{
    uint8_t *u = malloc(n);
    for (size_t i = 0; i < n; i++)
        u[i] = m[i] != 0.0f;
    return u;
}

/* ---- importance ---- */

static void test_srt_importance_matches_kernels(void)
{
    rt_rng r = { 11 };
    enum { RW = 20, RH = 15, N1 = 12, N2 = 6 };
    float ref[RW * RH * 2];
    fill_random(&r, ref, RW * RH * 2);
    pf_buffer rb = { ref, 3, { RW, RH, 2, 1 }, { 1, RW, RW * RH, 0 } };
    int64_t lo[2] = { 1, 2 }, step[2] = { 2, 3 };
    float mask[N1 * N2], m_got[N1 * N2];
    CU_ASSERT_EQUAL_FATAL(pf_srt_importance_mask(&rb, lo, step, N1, N2, 0.3f, 0.1f, mask, m_got),
                          0);
    /* R0 by hand: x = 1 + 2*j1 runs past the edge (clamped to 19), y = 2 + 3*j2 too (to 14) */
    float r0[N1 * N2], map[N1 * N2], m_want[N1 * N2];
    for (int j2 = 0; j2 < N2; j2++)
        for (int j1 = 0; j1 < N1; j1++) {
            int x = 1 + 2 * j1 > RW - 1 ? RW - 1 : 1 + 2 * j1;
            int y = 2 + 3 * j2 > RH - 1 ? RH - 1 : 2 + 3 * j2;
            r0[j2 * N1 + j1] = ref[y * RW + x];
        }
    uint8_t want[N1 * N2];
    CU_ASSERT_EQUAL_FATAL(pf_rt_importance_map(r0, N1, N2, N1, (double)0.1f * N2, map), 0);
    CU_ASSERT_EQUAL_FATAL(pf_rt_importance_mask(map, N1, N2, 0.3f, PF_RT_DITHER_OSTROMOUKHOV, want,
                                                m_want, NULL), 0);
    int same = 1, count = 0;
    for (int i = 0; i < N1 * N2; i++) {
        same &= mask[i] == (want[i] ? 1.0f : 0.0f);
        same &= memcmp(&m_got[i], &m_want[i], sizeof(float)) == 0;
        count += mask[i] != 0.0f;
    }
    CU_ASSERT(same);
    CU_ASSERT(count >= 20 && count <= 23);  /* round(0.3 * 72) = 22, give or take the remap */
    /* remapped may be NULL */
    float mask2[N1 * N2];
    CU_ASSERT_EQUAL(pf_srt_importance_mask(&rb, lo, step, N1, N2, 0.3f, 0.1f, mask2, NULL), 0);
    CU_ASSERT(memcmp(mask, mask2, sizeof mask) == 0);
}

/* ---- adaptive ---- */

static void test_srt_adaptive_matches_kernels(void)
{
    rt_rng r = { 12 };
    for (int dense = 0; dense < 2; dense++) {
        srt_case k;
        make_case(&k, &r, dense);
        int w = (int)k.view.extent[0], h = (int)k.view.extent[1];
        size_t n = (size_t)w * (size_t)h;
        float *mask = calloc(n, sizeof *mask), *fine = calloc(n, sizeof *fine);
        uint8_t *c8 = malloc(n), *f8 = malloc(n), *b8 = malloc(n);
        CU_ASSERT_EQUAL(pf_srt_adaptive_coarse(w, h, 3, mask), 0);
        CU_ASSERT_EQUAL(pf_rt_adaptive_coarse(w, h, 3, c8, NULL), 0);
        int same = 1;
        for (size_t i = 0; i < n; i++)
            same &= mask[i] == (c8[i] ? 2.0f : 0.0f);
        CU_ASSERT(same);
        float *before = malloc(sizeof k.img), *p = gather(&k.view);
        memcpy(before, k.img, sizeof k.img);
        CU_ASSERT_EQUAL(pf_srt_adaptive_refine(&k.view, 3, 0.4f, mask, fine), 0);
        CU_ASSERT_EQUAL(pf_rt_adaptive_refine(p, w, h, IC, (size_t)w, n, 3, 0.4f, f8, b8, NULL), 0);
        for (size_t i = 0; i < n; i++) {
            same &= mask[i] == (c8[i] ? 2.0f : f8[i] ? 1.0f : 0.0f);
            same &= fine[i] == (b8[i] ? 1.0f : 0.0f);
        }
        CU_ASSERT(same);
        CU_ASSERT(memcmp(before, k.img, sizeof k.img) == 0);  /* refine only reads */
        free(mask), free(fine), free(c8), free(f8), free(b8), free(before), free(p);
    }
}

/* ---- store reconstruction ---- */

/* Runs pf_srt_reconstruct on the view and `direct` on its dense copy; both must agree, the
 * computed samples (mask8 != 0, or NULL: check skipped) must be unchanged and nothing outside
 * the view may change. */
typedef int (*direct_fn)(float *p, int w, int h, const uint8_t *m8, const void *arg);

static void check_recon(srt_case *k, const pf_recon_spec *spec, const float *mask,
                        const float *aux, const uint8_t *m8, direct_fn direct, const void *arg)
{
    float *before = malloc(sizeof k->img), *p = gather(&k->view), *orig = gather(&k->view);
    memcpy(before, k->img, sizeof k->img);
    int w = (int)k->view.extent[0], h = (int)k->view.extent[1];
    CU_ASSERT_EQUAL(pf_srt_reconstruct(&k->view, spec, mask, aux), 0);
    CU_ASSERT_EQUAL(direct(p, w, h, m8, arg), 0);
    CU_ASSERT(view_equals(&k->view, p));
    CU_ASSERT(outside_untouched(k, before));
    size_t n = (size_t)w * (size_t)h;
    int kept = 1;
    for (size_t i = 0; m8 && i < n * IC; i++)
        if (m8[i % n])
            kept &= memcmp(&p[i], &orig[i], sizeof(float)) == 0;
    CU_ASSERT(kept);
    free(before), free(p), free(orig);
}

static int direct_multilinear(float *p, int w, int h, const uint8_t *m8, const void *arg)
{
    (void)m8;
    const int64_t *sp = arg;
    int64_t ext[3] = { w, h, IC }, st[3] = { 1, w, (int64_t)w * h }, org[3] = { 0, 0, 0 };
    return pf_rt_grid_multilinear(p, 3, ext, st, org, sp);
}

static int direct_grid_nearest(float *p, int w, int h, const uint8_t *m8, const void *arg)
{
    (void)m8;
    const int64_t *sp = arg;
    int64_t ext[3] = { w, h, IC }, st[3] = { 1, w, (int64_t)w * h }, org[3] = { 0, 0, 0 };
    return pf_rt_grid_nearest(p, 3, ext, st, org, sp);
}

static void test_srt_grid_linear_nearest(void)
{
    rt_rng r = { 13 };
    for (int dense = 0; dense < 2; dense++) {
        srt_case k;
        make_case(&k, &r, dense);
        pf_recon_spec spec = { .sample = PF_SAMPLE_GRID, .recon = PF_RECON_LINEAR,
                               .spacing = { 3, 2, 1, 1 } };
        int64_t sp[3] = { 3, 2, 1 };
        check_recon(&k, &spec, NULL, NULL, NULL, direct_multilinear, sp);
        make_case(&k, &r, dense);
        spec.recon = PF_RECON_NEAREST;
        check_recon(&k, &spec, NULL, NULL, NULL, direct_grid_nearest, sp);
    }
}

typedef struct gauss_arg {
    double sigma;
    const float *sigma_map;  /* NULL: invariant Gaussian */
} gauss_arg;

static int direct_gauss(float *p, int w, int h, const uint8_t *m8, const void *arg)
{
    const gauss_arg *g = arg;
    size_t n = (size_t)w * (size_t)h;
    if (g->sigma_map)
        return pf_rt_recon_gaussian_sv(p, w, h, IC, (size_t)w, n, m8, g->sigma_map);
    return pf_rt_recon_gaussian(p, w, h, IC, (size_t)w, n, m8, g->sigma);
}

static int direct_nearest(float *p, int w, int h, const uint8_t *m8, const void *arg)
{
    (void)arg;
    return pf_rt_recon_nearest(p, w, h, IC, (size_t)w, (size_t)w * (size_t)h, m8);
}

static void test_srt_grid_gaussian(void)
{
    rt_rng r = { 14 };
    for (int dense = 0; dense < 2; dense++) {
        srt_case k;
        make_case(&k, &r, dense);
        int w = (int)k.view.extent[0], h = (int)k.view.extent[1];
        size_t n = (size_t)w * (size_t)h;
        uint8_t *m8 = malloc(n);
        pf_rt_grid_mask(w, h, 0, 0, 3, 2, m8, NULL);
        int64_t sp2[2] = { 3, 2 };
        double width = pf_rt_sigma_grid(0.8f, 2, sp2);
        pf_recon_spec spec = { .sample = PF_SAMPLE_GRID, .recon = PF_RECON_GAUSSIAN,
                               .spacing = { 3, 2, 1, 1 }, .sigma = 0.8f };
        gauss_arg g = { width, NULL };
        check_recon(&k, &spec, NULL, NULL, m8, direct_gauss, &g);
        float *map = malloc(n * sizeof *map);
        for (size_t i = 0; i < n; i++)
            map[i] = (float)width;
        make_case(&k, &r, dense);
        spec.recon = PF_RECON_GAUSSIAN_SV;
        gauss_arg gs = { 0, map };
        check_recon(&k, &spec, NULL, NULL, m8, direct_gauss, &gs);
        /* a grid gaussian needs spacing 1 beyond the mask plane */
        spec.spacing[2] = 2;
        CU_ASSERT_EQUAL(pf_srt_reconstruct(&k.view, &spec, NULL, NULL), PF_RT_EINVAL);
        free(m8), free(map);
    }
}

/* A random float mask with values 0, 1 and 2 (about 30% samples). */
static float *random_mask(rt_rng *r, size_t n)
{
    float *m = malloc(n * sizeof *m);
    for (size_t i = 0; i < n; i++) {
        double u = rt_unif(r);
        m[i] = u < 0.1 ? 2.0f : u < 0.3 ? 1.0f : 0.0f;
    }
    m[0] = 1.0f;
    return m;
}

static void test_srt_irregular(void)
{
    rt_rng r = { 15 };
    for (int dense = 0; dense < 2; dense++) {
        srt_case k;
        make_case(&k, &r, dense);
        size_t n = (size_t)k.view.extent[0] * (size_t)k.view.extent[1];
        float *mask = random_mask(&r, n), *aux = malloc(n * sizeof *aux);
        uint8_t *m8 = to_u8(mask, n);
        for (size_t i = 0; i < n; i++)
            aux[i] = 0.05f + 0.95f * (float)rt_unif(&r);
        pf_recon_spec spec = { .sample = PF_SAMPLE_IMPORTANCE, .recon = PF_RECON_NEAREST,
                               .frac = 0.3f, .sigma = 0.7f, .k = 4 };
        check_recon(&k, &spec, mask, aux, m8, direct_nearest, NULL);
        make_case(&k, &r, dense);
        spec.recon = PF_RECON_GAUSSIAN;
        gauss_arg g = { pf_rt_sigma_irregular(0.7f, 0.3f), NULL };
        check_recon(&k, &spec, mask, aux, m8, direct_gauss, &g);
        /* importance gaussian-sv: sigma map from M */
        float *map = malloc(n * sizeof *map);
        pf_rt_sigma_importance(aux, n, 0.7f, 0.3f, map);
        make_case(&k, &r, dense);
        spec.recon = PF_RECON_GAUSSIAN_SV;
        gauss_arg gs = { 0, map };
        check_recon(&k, &spec, mask, aux, m8, direct_gauss, &gs);
        /* adaptive gaussian-sv: sigma map from is_fine */
        uint8_t *fine = malloc(n);
        for (size_t i = 0; i < n; i++)
            fine[i] = aux[i] < 0.5f;
        for (size_t i = 0; i < n; i++)
            aux[i] = fine[i] ? 1.0f : 0.0f;
        pf_rt_sigma_adaptive(fine, n, 0.7f, 4, map);
        make_case(&k, &r, dense);
        spec.sample = PF_SAMPLE_ADAPTIVE;
        check_recon(&k, &spec, mask, aux, m8, direct_gauss, &gs);
        free(mask), free(aux), free(m8), free(map), free(fine);
    }
}

/* A one-variable stage over [W, H]: the view (n1, 1, H) reconstructs each row alone. */
static void test_srt_unit_dim_rows(void)
{
    rt_rng r = { 16 };
    enum { W = 19, H = 5 };
    float img[W * H], want[W * H];
    fill_random(&r, img, W * H);
    memcpy(want, img, sizeof img);
    pf_buffer v = { img, 3, { W, 1, H, 1 }, { 1, 0, W, 0 } };
    pf_recon_spec spec = { .sample = PF_SAMPLE_GRID, .recon = PF_RECON_GAUSSIAN,
                           .spacing = { 4, 1, 1, 1 }, .sigma = 1.0f };
    CU_ASSERT_EQUAL_FATAL(pf_srt_reconstruct(&v, &spec, NULL, NULL), 0);
    uint8_t m8[W];
    pf_rt_grid_mask(W, 1, 0, 0, 4, 1, m8, NULL);
    int64_t sp2[2] = { 4, 1 };
    for (int y = 0; y < H; y++)
        pf_rt_recon_gaussian(want + y * W, W, 1, 1, W, W, m8, pf_rt_sigma_grid(1.0, 2, sp2));
    CU_ASSERT(memcmp(img, want, sizeof img) == 0);
}

/* ---- channels ---- */

static void test_srt_copy_channels(void)
{
    rt_rng r = { 17 };
    srt_case k;
    make_case(&k, &r, 0);
    enum { RW = 8, RH = 10 };
    float ref[RW * RH * IC];
    fill_random(&r, ref, RW * RH * IC);
    pf_buffer rb = { ref, 3, { RW, RH, IC, 1 }, { 1, RW, RW * RH, 0 } };
    int64_t lo[3] = { 1, 2, 0 }, step[3] = { 2, 1, 1 };
    float *orig = gather(&k.view);
    CU_ASSERT_EQUAL_FATAL(pf_srt_copy_channels(&k.view, 3, lo, step, &rb, 1), 0);
    int ok = 1;
    for (int64_t c = 0; c < IC; c++)
        for (int64_t y = 0; y < k.view.extent[1]; y++)
            for (int64_t x = 0; x < k.view.extent[0]; x++) {
                int64_t px = 1 + 2 * x, py = 2 + y;
                px = px > RW - 1 ? RW - 1 : px;
                py = py > RH - 1 ? RH - 1 : py;
                float want = c >= 1 ? ref[c * RW * RH + py * RW + px]
                                    : orig[(c * k.view.extent[1] + y) * k.view.extent[0] + x];
                ok &= *view_at(&k.view, x, y, c) == want;
            }
    CU_ASSERT(ok);
    /* ref must have the view's dimensions */
    rb.ndims = 2;
    CU_ASSERT_EQUAL(pf_srt_copy_channels(&k.view, 3, lo, step, &rb, 1), PF_RT_EINVAL);
    free(orig);
}

/* ---- arguments ---- */

static void test_srt_rejects_bad_arguments(void)
{
    rt_rng r = { 18 };
    srt_case k;
    make_case(&k, &r, 0);
    float *orig = gather(&k.view);
    size_t n = (size_t)k.view.extent[0] * (size_t)k.view.extent[1];
    float *mask = random_mask(&r, n);
    pf_recon_spec spec = { .sample = PF_SAMPLE_IMPORTANCE, .recon = PF_RECON_LINEAR,
                           .frac = 0.3f, .sigma = 1.0f };
    CU_ASSERT_EQUAL(pf_srt_reconstruct(&k.view, &spec, mask, NULL), PF_RT_EINVAL);
    spec.recon = PF_RECON_GAUSSIAN_SV;  /* needs aux */
    CU_ASSERT_EQUAL(pf_srt_reconstruct(&k.view, &spec, mask, NULL), PF_RT_EINVAL);
    spec.recon = PF_RECON_NEAREST;  /* needs the mask */
    CU_ASSERT_EQUAL(pf_srt_reconstruct(&k.view, &spec, NULL, NULL), PF_RT_EINVAL);
    spec.sample = PF_SAMPLE_LOOP;
    CU_ASSERT_EQUAL(pf_srt_reconstruct(&k.view, &spec, mask, NULL), PF_RT_EINVAL);
    spec.sample = PF_SAMPLE_GRID;
    spec.spacing[0] = 0;
    CU_ASSERT_EQUAL(pf_srt_reconstruct(&k.view, &spec, NULL, NULL), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_srt_reconstruct(NULL, &spec, NULL, NULL), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_srt_reconstruct(&k.view, NULL, NULL, NULL), PF_RT_EINVAL);
    CU_ASSERT(view_equals(&k.view, orig));
    /* nothing to do */
    spec.recon = PF_RECON_NONE;
    CU_ASSERT_EQUAL(pf_srt_reconstruct(&k.view, &spec, NULL, NULL), 0);
    spec.sample = PF_SAMPLE_ALL;
    spec.recon = PF_RECON_NEAREST;
    CU_ASSERT_EQUAL(pf_srt_reconstruct(&k.view, &spec, NULL, NULL), 0);
    CU_ASSERT(view_equals(&k.view, orig));
    int64_t lo[2] = { 0, 0 }, st[2] = { 1, 1 };
    CU_ASSERT_EQUAL(pf_srt_importance_mask(&k.view, lo, st, 4, 4, 0.0f, 0.1f, mask, NULL),
                    PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_srt_importance_mask(&k.view, lo, st, 0, 4, 0.5f, 0.1f, mask, NULL),
                    PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_srt_adaptive_coarse(4, 4, 0, mask), PF_RT_EINVAL);
    CU_ASSERT_EQUAL(pf_srt_adaptive_refine(&k.view, 2, 1.5f, mask, NULL), PF_RT_EINVAL);
    free(orig), free(mask);
}

PF_TEST_SUITE(stage_rt, PF_TEST(test_srt_importance_matches_kernels),
              PF_TEST(test_srt_adaptive_matches_kernels), PF_TEST(test_srt_grid_linear_nearest),
              PF_TEST(test_srt_grid_gaussian), PF_TEST(test_srt_irregular),
              PF_TEST(test_srt_unit_dim_rows), PF_TEST(test_srt_copy_channels),
              PF_TEST(test_srt_rejects_bad_arguments))
