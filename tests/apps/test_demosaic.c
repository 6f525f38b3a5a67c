/* apps/demosaic.pf and apps/mosaic.pf against plain-C references written from
 * ../shared/docs/paper-apps.md, section 5 (not from the .pf files): the RGGB sites, the weight
 * table A = [0.5, 0, 0, 1, 0.5, 0], the loop table's ranges and phases, the 2-pixel black frame;
 * and the mosaic that keeps each site's channel (optionally after Test.cpp's 5x5, sigma 0.95
 * Gaussian pre-blur). */
#include "tests/apps/apps_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const float A[6] = { 0.5f, 0.0f, 0.0f, 1.0f, 0.5f, 0.0f };

/* A W x H plane, zero-initialised (the prototype's temporaries, cleared once). */
typedef struct plane {
    int w, h;
    float *v;
} plane;

static plane plane_new(int w, int h)
{
    plane p = { w, h, calloc((size_t)w * h, sizeof(float)) };
    CU_ASSERT_PTR_NOT_NULL_FATAL(p.v);
    return p;
}

static float *at(const plane *p, int x, int y)
{
    return &p->v[(size_t)y * p->w + x];
}

/* An X pass (loop_*x): rows y0, y0 + ystep, ... < H - yend; x in [1, W-1); phase from `phase`;
 * taps in[x + dx - 1, y, ch]. */
static void interp_x(const pf_image *in, int ch, int y0, int ystep, int yend,
                     int (*phase)(int x, int y), plane *dst)
{
    for (int y = y0; y < in->height - yend; y += ystep)
        for (int x = 1; x < in->width - 1; x++) {
            int p = phase(x, y);
            float acc = 0.0f;
            for (int dx = 0; dx < 3; dx++)
                acc += A[2 * dx + p] * *pf_image_at(in, x + dx - 1, y, ch);
            *at(dst, x, y) = acc;
        }
}

/* A Y pass (loop_*out): [2, W-2) x [2, H-2); taps src[x, y + dx - 1]. */
static void interp_y(const plane *src, int (*phase)(int x, int y), plane *dst)
{
    for (int y = 2; y < src->h - 2; y++)
        for (int x = 2; x < src->w - 2; x++) {
            int p = phase(x, y);
            float acc = 0.0f;
            for (int dx = 0; dx < 3; dx++)
                acc += A[2 * dx + p] * *at(src, x, y + dx - 1);
            *at(dst, x, y) = acc;
        }
}

static int phase_xy(int x, int y) { return (x + y) % 2; }
static int phase_x(int x, int y) { (void)y; return x % 2; }
static int phase_x1(int x, int y) { (void)y; return (x + 1) % 2; }
static int phase_y(int x, int y) { (void)x; return y % 2; }
static int phase_y1(int x, int y) { (void)x; return (y + 1) % 2; }

static pf_image *demosaic_reference(const pf_image *in)
{
    int W = in->width, H = in->height;
    plane tg = plane_new(W, H), tb = plane_new(W, H), tr = plane_new(W, H);
    plane og = plane_new(W, H), ob = plane_new(W, H), orr = plane_new(W, H);
    interp_x(in, 1, 1, 1, 1, phase_xy, &tg); /* loop_gx: y in [1, H-1) */
    interp_y(&tg, phase_xy, &og);            /* loop_gout */
    interp_x(in, 2, 1, 2, 1, phase_x, &tb);  /* loop_bx: y = 1, 3, ... < H-1 */
    interp_y(&tb, phase_y, &ob);             /* loop_bout */
    interp_x(in, 0, 0, 2, 0, phase_x1, &tr); /* loop_rx: y = 0, 2, ... < H */
    interp_y(&tr, phase_y1, &orr);           /* loop_rout */
    pf_error err;
    pf_image *out = pf_image_new(W, H, 3, &err);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) { /* loop_combine */
            *pf_image_at(out, x, y, 0) = *at(&orr, x, y);
            *pf_image_at(out, x, y, 1) = *at(&og, x, y);
            *pf_image_at(out, x, y, 2) = *at(&ob, x, y);
        }
    plane all[6] = { tg, tb, tr, og, ob, orr };
    for (int i = 0; i < 6; i++)
        free(all[i].v);
    return out;
}

/* RGGB: R at (even x, even y), G where x + y is odd, B at (odd x, odd y). */
static int site_channel(int x, int y)
{
    return (x + y) % 2 ? 1 : (y % 2 ? 2 : 0);
}

/* Reflect-101 (OpenCV's default border): -1 -> 1, n -> n - 2; period 2(n - 1). */
static int reflect101(int i, int n)
{
    if (n == 1)
        return 0;
    int p = 2 * (n - 1);
    i %= p;
    if (i < 0)
        i += p;
    return i < n ? i : p - i;
}

/* Test.cpp's pre-blur: separable normalised 5-tap Gaussian, sigma 0.95, in float. */
static pf_image *preblur(const pf_image *in)
{
    float g[5], sum = 0.0f;
    for (int k = -2; k <= 2; k++) {
        g[k + 2] = expf(-(float)(k * k) / (2.0f * 0.95f * 0.95f));
        sum += g[k + 2];
    }
    for (int k = 0; k < 5; k++)
        g[k] /= sum;
    pf_error err;
    int W = in->width, H = in->height;
    pf_image *t = pf_image_new(W, H, 3, &err), *o = pf_image_new(W, H, 3, &err);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float a = 0.0f;
                for (int k = -2; k <= 2; k++)
                    a += g[k + 2] * *pf_image_at(in, reflect101(x + k, W), y, c);
                *pf_image_at(t, x, y, c) = a;
            }
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float a = 0.0f;
                for (int k = -2; k <= 2; k++)
                    a += g[k + 2] * *pf_image_at(t, x, reflect101(y + k, H), c);
                *pf_image_at(o, x, y, c) = a;
            }
    pf_image_free(t);
    return o;
}

static pf_image *mosaic_reference(const pf_image *in, int blur)
{
    pf_image *src = blur ? preblur(in) : pf_image_clone(in);
    pf_error err;
    pf_image *out = pf_image_new(in->width, in->height, 3, &err);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < in->height; y++)
            for (int x = 0; x < in->width; x++)
                *pf_image_at(out, x, y, c) =
                    c == site_channel(x, y) ? *pf_image_at(src, x, y, c) : 0.0f;
    pf_image_free(src);
    return out;
}

static void check_demosaic(const pf_program *prog, const pf_image *in, const char *label)
{
    double secs = 0.0;
    pf_image *got = apps_run(prog, in, NULL, &secs);
    pf_image *want = demosaic_reference(in);
    apps_expect_match("demosaic", label, got, want, secs);
    pf_image_free(got);
    pf_image_free(want);
}

static void test_demosaic_photos(void)
{
    pf_program *prog = apps_load("demosaic");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (int i = 0; i < APPS_N_PHOTOS; i++) {
        pf_image *in = apps_photo(apps_photos[i]);
        if (in)
            check_demosaic(prog, in, apps_photos[i]);
        pf_image_free(in);
    }
    pf_program_free(prog);
}

/* Below 5x5 every interior loop is empty and the output is black; odd and even sizes. */
static void test_demosaic_shapes(void)
{
    static const int shapes[][2] = { { 1, 1 }, { 7, 3 }, { 1000, 1 }, { 4, 4 },
                                     { 5, 5 }, { 6, 7 }, { 33, 20 }, { 2, 50 } };
    pf_program *prog = apps_load("demosaic");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char label[64];
        snprintf(label, sizeof label, "noise_%dx%d", shapes[i][0], shapes[i][1]);
        pf_image *in = apps_noise_image(shapes[i][0], shapes[i][1], 3, (unsigned)i + 31);
        check_demosaic(prog, in, label);
        pf_image_free(in);
    }
    pf_program_free(prog);
}

/* Where the input is the mosaic of a flat colour, the inside of the output is that colour, and
 * the 2-pixel frame is black. */
static void test_demosaic_flat_and_frame(void)
{
    pf_program *prog = apps_load("demosaic");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_error err;
    pf_image *in = pf_image_new(12, 9, 3, &err);
    static const float rgb[3] = { 0.25f, 0.5f, 0.75f };
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 9; y++)
            for (int x = 0; x < 12; x++)
                *pf_image_at(in, x, y, c) = rgb[c];
    pf_image *out = apps_run(prog, in, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 9; y++)
            for (int x = 0; x < 12; x++) {
                int frame = x < 2 || x >= 10 || y < 2 || y >= 7;
                CU_ASSERT_EQUAL(*pf_image_at(out, x, y, c), frame ? 0.0f : rgb[c]);
            }
    pf_image_free(out);
    pf_image_free(in);
    pf_program_free(prog);
}

static void check_mosaic(const pf_program *prog, const pf_image *in, int blur,
                         const char *label)
{
    static const char *const on[] = { "preblur=true", NULL };
    double secs = 0.0;
    pf_image *got = apps_run(prog, in, blur ? on : NULL, &secs);
    pf_image *want = mosaic_reference(in, blur);
    apps_expect_match("mosaic", label, got, want, secs);
    pf_image_free(got);
    pf_image_free(want);
}

static void test_mosaic_photos(void)
{
    pf_program *prog = apps_load("mosaic");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (int i = 0; i < APPS_N_PHOTOS; i++) {
        pf_image *in = apps_photo(apps_photos[i]);
        char label[96];
        snprintf(label, sizeof label, "preblur_%s", apps_photos[i]);
        if (in) {
            check_mosaic(prog, in, 0, apps_photos[i]);
            check_mosaic(prog, in, 1, label);
        }
        pf_image_free(in);
    }
    pf_program_free(prog);
}

static void test_mosaic_shapes(void)
{
    static const int shapes[][2] = { { 1, 1 }, { 7, 3 }, { 1000, 1 }, { 2, 2 }, { 3, 40 } };
    pf_program *prog = apps_load("mosaic");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char label[64];
        pf_image *in = apps_noise_image(shapes[i][0], shapes[i][1], 3, (unsigned)i + 41);
        for (int blur = 0; blur < 2; blur++) {
            snprintf(label, sizeof label, "%snoise_%dx%d", blur ? "preblur_" : "",
                     shapes[i][0], shapes[i][1]);
            check_mosaic(prog, in, blur, label);
        }
        pf_image_free(in);
    }
    pf_program_free(prog);
}

/* demosaic reads only each site's channel, so feeding it the mosaic changes nothing. */
static void test_demosaic_of_mosaic(void)
{
    pf_program *mos = apps_load("mosaic"), *dem = apps_load("demosaic");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mos);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dem);
    pf_image *in = apps_photo(apps_photos[1]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    pf_image *m = apps_run(mos, in, NULL, NULL);
    pf_image *direct = apps_run(dem, in, NULL, NULL), *via = apps_run(dem, m, NULL, NULL);
    CU_ASSERT(apps_max_diff(direct, via) == 0.0f);
    pf_image_free(m);
    pf_image_free(direct);
    pf_image_free(via);
    pf_image_free(in);
    pf_program_free(mos);
    pf_program_free(dem);
}

PF_TEST_SUITE(apps_demosaic,
              PF_TEST(test_demosaic_photos),
              PF_TEST(test_demosaic_shapes),
              PF_TEST(test_demosaic_flat_and_frame),
              PF_TEST(test_mosaic_photos),
              PF_TEST(test_mosaic_shapes),
              PF_TEST(test_demosaic_of_mosaic))
