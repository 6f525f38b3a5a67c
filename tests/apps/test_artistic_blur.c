/* apps/artistic_blur.pf against a plain-C reference written from
 * ../shared/docs/paper-apps.md, section 7 (not from the .pf): integer centre, r_min / r_max,
 * the 33 x 17 tangential x radial pattern with the deterministic jitter, truncation-based
 * bilinear taps with the prototype's edge rules, scale 1/561. */
#include "tests/apps/apps_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdio.h>

typedef struct blur_geometry {
    int cx, cy;
    float r_min, r_max, size0_u, size0_v;
} blur_geometry;

static blur_geometry geometry(int W, int H)
{
    blur_geometry g;
    g.cx = W / 2;
    g.cy = H / 2;
    g.r_min = (float)g.cx * 0.35f;
    g.r_max = sqrtf((float)(g.cx * g.cx + g.cy * g.cy));
    g.size0_u = 0.4f * g.r_max;
    g.size0_v = 0.2f * g.r_max;
    return g;
}

/* The prototype's index rule along one axis of extent n: truncate; below 0 -> (0, 0);
 * at or past the last pair -> (n - 2, 1). */
static void tap_index(float s, int n, int *i, float *f)
{
    *i = (int)s;
    *f = s - (float)*i;
    if (*i < 0) {
        *i = 0;
        *f = 0.0f;
    } else if (*i + 1 >= n) {
        *i = n - 2;
        *f = 1.0f;
    }
}

/* Bilinear sample; n - 2 = -1 for a 1-wide image is read clamped, with weight 0. */
static float bilinear(const pf_image *in, float sx, float sy, int c)
{
    int xi, yi;
    float fx, fy;
    tap_index(sx, in->width, &xi, &fx);
    tap_index(sy, in->height, &yi, &fy);
    float top = (1.0f - fx) * apps_at_clamped(in, xi, yi, c) +
                fx * apps_at_clamped(in, xi + 1, yi, c);
    float bottom = (1.0f - fx) * apps_at_clamped(in, xi, yi + 1, c) +
                   fx * apps_at_clamped(in, xi + 1, yi + 1, c);
    return (1.0f - fy) * top + fy * bottom;
}

/* The blurred value of (x, y, c) at radius r >= r_min. */
static float blurred(const pf_image *in, const blur_geometry *g, int x, int y, int c, float r)
{
    const int Nu = 16, Nv = 8;
    const float scale = 1.0f / 561.0f;
    float theta = atan2f((float)(y - g->cy), (float)(x - g->cx));
    float ux = sinf(theta), uy = -cosf(theta); /* tangential */
    float vx = cosf(theta), vy = sinf(theta);  /* radial */
    float size = (r - g->r_min) / (g->r_max - g->r_min);
    float size_u = g->size0_u * size, size_v = g->size0_v * size;
    float u0 = sinf(50.0f * size) * size;
    float acc = 0.0f;
    for (int u = -Nu; u <= Nu; u++)
        for (int v = -Nv; v <= Nv; v++) {
            float a = ((float)u + u0) / (float)Nu * size_u, b = (float)v / (float)Nv * size_v;
            float sx = (float)x + a * ux + b * vx, sy = (float)y + a * uy + b * vy;
            acc += scale * bilinear(in, sx, sy, c);
        }
    return acc;
}

static pf_image *artistic_reference(const pf_image *in)
{
    blur_geometry g = geometry(in->width, in->height);
    pf_error err;
    pf_image *out = pf_image_new(in->width, in->height, in->channels, &err);
    for (int c = 0; c < in->channels; c++)
        for (int y = 0; y < in->height; y++)
            for (int x = 0; x < in->width; x++) {
                int dx = x - g.cx, dy = y - g.cy;
                float r = sqrtf((float)(dx * dx + dy * dy));
                /* r_max <= r_min only for 1x1, where the prototype divides 0 by 0: copied. */
                int sharp = r < g.r_min || g.r_max <= g.r_min;
                *pf_image_at(out, x, y, c) =
                    sharp ? *pf_image_at(in, x, y, c) : blurred(in, &g, x, y, c, r);
            }
    return out;
}

static void check_one(const pf_program *prog, const pf_image *in, const char *label)
{
    double secs = 0.0;
    pf_image *got = apps_run(prog, in, NULL, &secs);
    pf_image *want = artistic_reference(in);
    apps_expect_match("artistic_blur", label, got, want, secs);
    pf_image_free(got);
    pf_image_free(want);
}

/* The three 256x192 photos (about 6 s each in the interpreter); PF_APPS_FULL adds the
 * 820x614 ones (over a minute each, several under the sanitizers). */
static void test_artistic_blur_photos(void)
{
    pf_program *prog = apps_load("artistic_blur");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (int i = 0; i < APPS_N_PHOTOS; i++) {
        if (i >= APPS_N_SMALL_PHOTOS && !apps_full())
            break;
        pf_image *in = apps_photo(apps_photos[i]);
        if (in)
            check_one(prog, in, apps_photos[i]);
        pf_image_free(in);
    }
    pf_program_free(prog);
}

static void test_artistic_blur_shapes(void)
{
    static const int shapes[][3] = { { 40, 30, 1 }, { 37, 29, 4 }, { 1, 1, 3 }, { 7, 3, 3 },
                                     { 1000, 1, 3 }, { 1, 9, 2 }, { 2, 2, 3 } };
    pf_program *prog = apps_load("artistic_blur");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int *s = shapes[i];
        char label[64];
        snprintf(label, sizeof label, "noise_%dx%dx%d", s[0], s[1], s[2]);
        pf_image *in = apps_noise_image(s[0], s[1], s[2], (unsigned)i + 61);
        check_one(prog, in, label);
        pf_image_free(in);
    }
    pf_program_free(prog);
}

/* The centre disc (r < r_min = 0.35 cx) is copied exactly; a flat image stays flat (the 561
 * weights sum to about 1). */
static void test_artistic_blur_centre_and_flat(void)
{
    pf_program *prog = apps_load("artistic_blur");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_image *in = apps_noise_image(64, 48, 1, 5);
    pf_image *out = apps_run(prog, in, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(*pf_image_at(out, 32, 24, 0), *pf_image_at(in, 32, 24, 0));
    CU_ASSERT_EQUAL(*pf_image_at(out, 40, 24, 0), *pf_image_at(in, 40, 24, 0)); /* r = 8 < 11.2 */
    CU_ASSERT_NOT_EQUAL(*pf_image_at(out, 0, 0, 0), *pf_image_at(in, 0, 0, 0));
    pf_image_free(out);
    for (int y = 0; y < 48; y++)
        for (int x = 0; x < 64; x++)
            *pf_image_at(in, x, y, 0) = 0.5f;
    out = apps_run(prog, in, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    PF_ASSERT_NEAR(*pf_image_at(out, 0, 0, 0), 0.5, 1e-5);
    pf_image_free(out);
    pf_image_free(in);
    pf_program_free(prog);
}

PF_TEST_SUITE(apps_artistic_blur,
              PF_TEST(test_artistic_blur_photos),
              PF_TEST(test_artistic_blur_shapes),
              PF_TEST(test_artistic_blur_centre_and_flat))
