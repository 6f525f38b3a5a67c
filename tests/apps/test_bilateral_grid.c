/* apps/bilateral_grid.pf against a plain-C reference written from
 * ../shared/docs/paper-apps.md, section 4 (not from the .pf): YUV, ss = floor(max(H,W)/64),
 * sr = 0.1, an [x][y][z][4] grid with splat rounding and slice truncation, the unnormalised
 * 5-tap blur along y, x, z with out-of-grid taps skipped, value / weight, YUV -> RGB. */
#include "tests/apps/apps_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define BG_PI 3.14159265358979f

typedef struct grid4 {
    int nx, ny, nz;
    float *v; /* [y][x][z][4]: the prototype's (y, x, z, i) order */
} grid4;

static grid4 grid_new(int nx, int ny, int nz)
{
    grid4 g = { nx, ny, nz, calloc((size_t)nx * ny * nz * 4, sizeof(float)) };
    CU_ASSERT_PTR_NOT_NULL_FATAL(g.v);
    return g;
}

/* The cell value, or 0 outside the grid (skipped taps / zero padding). */
static float grid_get(const grid4 *g, int x, int y, int z, int i)
{
    if (x < 0 || x >= g->nx || y < 0 || y >= g->ny || z < 0 || z >= g->nz)
        return 0.0f;
    return g->v[(((size_t)y * g->nx + x) * g->nz + z) * 4 + i];
}

static float *grid_ref(grid4 *g, int x, int y, int z, int i)
{
    return &g->v[(((size_t)y * g->nx + x) * g->nz + z) * 4 + i];
}

/* The paper's YUV of one pixel (step 1). */
static void rgb_to_yuv(const pf_image *in, int x, int y, float yuv[3])
{
    float R = *pf_image_at(in, x, y, 0), G = *pf_image_at(in, x, y, 1),
          B = *pf_image_at(in, x, y, 2);
    yuv[0] = 0.299f * R + 0.587f * G + 0.114f * B;
    yuv[1] = -0.14713f * R - 0.28886f * G + 0.436f * B;
    yuv[2] = 0.615f * R - 0.51499f * G - 0.10001f * B;
}

/* Step 4: rows in order, x inner; a cell outside the grid cannot occur for inputs in [0, 1]. */
static void splat(const pf_image *in, float ss, float sr, grid4 *g)
{
    for (int y = 0; y < in->height; y++)
        for (int x = 0; x < in->width; x++) {
            float yuv[3];
            rgb_to_yuv(in, x, y, yuv);
            int gx = (int)roundf((float)x / ss), gy = (int)roundf((float)y / ss);
            int gz = (int)roundf(yuv[0] / sr);
            if (gx < 0 || gx >= g->nx || gy < 0 || gy >= g->ny || gz < 0 || gz >= g->nz)
                continue;
            for (int i = 0; i < 3; i++)
                *grid_ref(g, gx, gy, gz, i) += yuv[i];
            *grid_ref(g, gx, gy, gz, 3) += 1.0f;
        }
}

/* Step 5, one axis (0 = x, 1 = y, 2 = z): sum_{k=-2..2} G(|k|) src[.. + k ..], taps outside the
 * grid skipped; G(k) = exp(-k^2 / 4.5) / (1.5 sqrt(2 pi)). */
static void blur_axis(const grid4 *src, grid4 *dst, int axis)
{
    float G[3];
    for (int k = 0; k < 3; k++)
        G[k] = expf(-(float)(k * k) / 4.5f) / (1.5f * sqrtf(2.0f * BG_PI));
    for (int y = 0; y < src->ny; y++)
        for (int x = 0; x < src->nx; x++)
            for (int z = 0; z < src->nz; z++)
                for (int i = 0; i < 4; i++) {
                    float acc = 0.0f;
                    for (int k = -2; k <= 2; k++) {
                        int xx = x + (axis == 0) * k, yy = y + (axis == 1) * k,
                            zz = z + (axis == 2) * k;
                        if (xx < 0 || xx >= src->nx || yy < 0 || yy >= src->ny || zz < 0 ||
                            zz >= src->nz)
                            continue;
                        acc += G[abs(k)] * grid_get(src, xx, yy, zz, i);
                    }
                    *grid_ref(dst, x, y, z, i) = acc;
                }
}

static float lerp(float a, float b, float t)
{
    return (1.0f - t) * a + t * b;
}

/* Step 6's trilinear read of channel i at (xf, yf, zf), lower corner by truncation. */
static float trilerp(const grid4 *g, float xf, float yf, float zf, int i)
{
    int xi = (int)xf, yi = (int)yf, zi = (int)zf;
    float fx = xf - (float)xi, fy = yf - (float)yi, fz = zf - (float)zi;
    float c[2];
    for (int dz = 0; dz < 2; dz++) {
        float r0 = lerp(grid_get(g, xi, yi, zi + dz, i), grid_get(g, xi + 1, yi, zi + dz, i), fx);
        float r1 = lerp(grid_get(g, xi, yi + 1, zi + dz, i),
                        grid_get(g, xi + 1, yi + 1, zi + dz, i), fx);
        c[dz] = lerp(r0, r1, fy);
    }
    return lerp(c[0], c[1], fz);
}

/* Steps 6 and 7 for one pixel. */
static void slice_pixel(const pf_image *in, const grid4 *g, float ss, float sr, int x, int y,
                        pf_image *out)
{
    float yuv[3], s[3];
    rgb_to_yuv(in, x, y, yuv);
    float xf = (float)x / ss, yf = (float)y / ss, zf = yuv[0] / sr;
    float weight = trilerp(g, xf, yf, zf, 3);
    for (int c = 0; c < 3; c++)
        s[c] = trilerp(g, xf, yf, zf, c) / weight;
    *pf_image_at(out, x, y, 0) = s[0] + 1.13983f * s[2];
    *pf_image_at(out, x, y, 1) = s[0] - 0.39465f * s[1] - 0.58060f * s[2];
    *pf_image_at(out, x, y, 2) = s[0] + 2.03211f * s[1];
}

static pf_image *bilateral_grid_reference(const pf_image *in)
{
    int W = in->width, H = in->height;
    /* ss = floor(max(H, W) / 64); the app defines ss = 1 where that is 0 (documented). */
    int ss_px = (W > H ? W : H) / 64;
    float ss = (float)(ss_px > 0 ? ss_px : 1);
    float sr = 0.1f;
    int nx = (int)ceilf((float)W / ss) + 1, ny = (int)ceilf((float)H / ss) + 1;
    int nz = (int)ceilf(1.0f / sr) + 1;
    grid4 g = grid_new(nx, ny, nz), by = grid_new(nx, ny, nz), bx = grid_new(nx, ny, nz),
          bz = grid_new(nx, ny, nz);
    splat(in, ss, sr, &g);
    blur_axis(&g, &by, 1);
    blur_axis(&by, &bx, 0);
    blur_axis(&bx, &bz, 2);
    pf_error err;
    pf_image *out = pf_image_new(W, H, 3, &err);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            slice_pixel(in, &bz, ss, sr, x, y, out);
    free(g.v);
    free(by.v);
    free(bx.v);
    free(bz.v);
    return out;
}

static void check_one(const pf_program *prog, const pf_image *in, const char *label)
{
    double secs = 0.0;
    pf_image *got = apps_run(prog, in, NULL, &secs);
    pf_image *want = bilateral_grid_reference(in);
    apps_expect_match("bilateral_grid", label, got, want, secs);
    pf_image_free(got);
    pf_image_free(want);
}

static void test_bilateral_grid_photos(void)
{
    pf_program *prog = apps_load("bilateral_grid");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (int i = 0; i < APPS_N_PHOTOS; i++) {
        pf_image *in = apps_photo(apps_photos[i]);
        if (in)
            check_one(prog, in, apps_photos[i]);
        pf_image_free(in);
    }
    pf_program_free(prog);
}

/* Sizes around the ss steps (64, 128) and degenerate ones (ss defined as 1 below 64). */
static void test_bilateral_grid_shapes(void)
{
    static const int shapes[][2] = { { 1, 1 },  { 7, 3 },  { 1000, 1 }, { 64, 1 },
                                     { 63, 40 }, { 128, 5 }, { 3, 200 } };
    pf_program *prog = apps_load("bilateral_grid");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char label[64];
        snprintf(label, sizeof label, "noise_%dx%d", shapes[i][0], shapes[i][1]);
        pf_image *in = apps_noise_image(shapes[i][0], shapes[i][1], 3, (unsigned)i + 21);
        check_one(prog, in, label);
        pf_image_free(in);
    }
    pf_program_free(prog);
}

/* A flat image comes back unchanged: every slice reads one colour over a positive weight. */
static void test_bilateral_grid_flat(void)
{
    pf_program *prog = apps_load("bilateral_grid");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_error err;
    pf_image *in = pf_image_new(100, 70, 3, &err);
    static const float rgb[3] = { 0.2f, 0.6f, 0.9f };
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 70; y++)
            for (int x = 0; x < 100; x++)
                *pf_image_at(in, x, y, c) = rgb[c];
    pf_image *out = apps_run(prog, in, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT(apps_max_diff(in, out) < 1e-4f);
    pf_image_free(out);
    pf_image_free(in);
    pf_program_free(prog);
}

PF_TEST_SUITE(apps_bilateral_grid,
              PF_TEST(test_bilateral_grid_photos),
              PF_TEST(test_bilateral_grid_shapes),
              PF_TEST(test_bilateral_grid_flat))
