/* Error metrics: the paper's mean Lab Delta E (raw and 8-bit "paper mode"), PSNR and SSIM. The
 * Lab path runs in double like the prototype's numpy code; paper mode linearises through a
 * 256-entry table, since after the 8-bit save only 256 values can occur. */
#include "dataset/metrics.h"

#include "dataset/image_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PF_SSIM_RADIUS 5
#define PF_SSIM_SIGMA 1.5
#define PF_SSIM_C1 (0.01 * 0.01)
#define PF_SSIM_C2 (0.03 * 0.03)

static int check_same_size(const pf_image *a, const pf_image *b, pf_error *err)
{
    if (a->width != b->width || a->height != b->height)
        return pf_fail(err, "cannot compare a %dx%d image with a %dx%d one", a->width,
                       a->height, b->width, b->height);
    return 0;
}

static int check_same_shape(const pf_image *a, const pf_image *b, pf_error *err)
{
    if (check_same_size(a, b, err) != 0)
        return -1;
    if (a->channels != b->channels)
        return pf_fail(err, "cannot compare a %d-channel image with a %d-channel one",
                       a->channels, b->channels);
    return 0;
}

/* --- Lab Delta E ----------------------------------------------------------------------------- */

/* imdist.py's constants (see colour.h, pf_srgb_to_lab_proto). */
static const double proto_m[3][3] = {
    { 0.4360747, 0.3850649, 0.1430804 },
    { 0.2225045, 0.7168786, 0.0606169 },
    { 0.0139322, 0.0971045, 0.7141733 },
};
static const double proto_white[3] = { 0.9642, 1.0, 0.8249 };

/* Cube root of t > 0: a bit-level first guess (exponent / 3, about 3% off) and two Halley steps
 * (cubic convergence: 2e-5, then below 1e-14 relative). Five times faster than libm's cbrt,
 * which dominated the metric; the error is far below what reaches a Delta E's printed digits. */
static double cbrt_pos(double t)
{
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = bits / 3 + 0x2A9F7893782DA1CEULL;
    double y;
    memcpy(&y, &bits, sizeof y);
    for (int k = 0; k < 2; k++) {
        double y3 = y * y * y;
        y *= (y3 + 2.0 * t) / (2.0 * y3 + t);
    }
    return y;
}

static double proto_f(double t)
{
    return t > 0.008856 ? cbrt_pos(t) : (903.3 * t + 16.0) / 116.0;
}

static double srgb_linear(double v)
{
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static void linear_to_lab(const double lin[3], double lab[3])
{
    double f[3];
    for (int i = 0; i < 3; i++) {
        double t = proto_m[i][0] * lin[0] + proto_m[i][1] * lin[1] + proto_m[i][2] * lin[2];
        f[i] = proto_f(t / proto_white[i]);
    }
    lab[0] = 116.0 * f[1] - 16.0;
    lab[1] = 500.0 * (f[0] - f[1]);
    lab[2] = 200.0 * (f[1] - f[2]);
}

/* Linear values of the 256 codes of an 8-bit save, in double as numpy computes them. */
typedef struct pf_lab_ctx {
    int paper;
    double lin8[256];
} pf_lab_ctx;

static void lab_ctx_init(pf_lab_ctx *ctx, int paper)
{
    ctx->paper = paper;
    for (int k = 0; k < 256; k++)
        ctx->lin8[k] = srgb_linear(k / 255.0);
}

/* The three planes that act as R, G, B: gray channels stand in for all three. */
static void rgb_rows(const pf_image *img, int y, const float *rows[3])
{
    for (int c = 0; c < 3; c++)
        rows[c] = pf_image_at(img, 0, y, img->channels >= 3 ? c : 0);
}

static void pixel_lab(const pf_lab_ctx *ctx, const float *rows[3], int x, double lab[3])
{
    double lin[3];
    for (int c = 0; c < 3; c++)
        lin[c] = ctx->paper ? ctx->lin8[pf_image_q8_trunc(rows[c][x])] : srgb_linear(rows[c][x]);
    linear_to_lab(lin, lab);
}

/* Whether pixel x has the same 8-bit codes in both images: in paper mode its Delta E is then
 * exactly 0, and skipping its two Lab conversions is what makes good candidates cheap to
 * score (the search measures thousands). */
static bool same_q8(const float *ra[3], const float *rb[3], int x)
{
    for (int c = 0; c < 3; c++)
        if (pf_image_q8_trunc(ra[c][x]) != pf_image_q8_trunc(rb[c][x]))
            return false;
    return true;
}

/* Delta E of row y into de[0..width); returns the row's sum. */
static double de_row(const pf_lab_ctx *ctx, const pf_image *a, const pf_image *b, int y,
                     float *de)
{
    const float *ra[3], *rb[3];
    rgb_rows(a, y, ra);
    rgb_rows(b, y, rb);
    double sum = 0.0;
    for (int x = 0; x < a->width; x++) {
        if (ctx->paper && same_q8(ra, rb, x)) {  /* the same 8-bit colour: exactly 0 */
            if (de)
                de[x] = 0.0f;
            continue;
        }
        double la[3], lb[3];
        pixel_lab(ctx, ra, x, la);
        pixel_lab(ctx, rb, x, lb);
        double d0 = la[0] - lb[0], d1 = la[1] - lb[1], d2 = la[2] - lb[2];
        double d = sqrt(d0 * d0 + d1 * d1 + d2 * d2);
        if (de)
            de[x] = (float)d;
        sum += d;
    }
    return sum;
}

static int lab_mean(const pf_image *a, const pf_image *b, int paper, double *out, pf_error *err)
{
    if (check_same_size(a, b, err) != 0)
        return -1;
    pf_lab_ctx ctx;
    lab_ctx_init(&ctx, paper);
    double sum = 0.0;
    for (int y = 0; y < a->height; y++)
        sum += de_row(&ctx, a, b, y, NULL);
    *out = sum / ((double)a->width * (double)a->height);
    return 0;
}

int pf_metric_lab_de76(const pf_image *a, const pf_image *b, double *out, pf_error *err)
{
    return lab_mean(a, b, 0, out, err);
}

int pf_metric_lab_de76_paper(const pf_image *a, const pf_image *b, double *out, pf_error *err)
{
    return lab_mean(a, b, 1, out, err);
}

pf_image *pf_metric_lab_de76_map(const pf_image *a, const pf_image *b, int paper_mode,
                                 pf_error *err)
{
    if (check_same_size(a, b, err) != 0)
        return NULL;
    pf_image *map = pf_image_new(a->width, a->height, 1, err);
    if (!map)
        return NULL;
    pf_lab_ctx ctx;
    lab_ctx_init(&ctx, paper_mode != 0);
    for (int y = 0; y < a->height; y++)
        de_row(&ctx, a, b, y, pf_image_at(map, 0, y, 0));
    return map;
}

/* --- PSNR ------------------------------------------------------------------------------------ */

int pf_metric_psnr(const pf_image *a, const pf_image *b, double *out, pf_error *err)
{
    if (check_same_shape(a, b, err) != 0)
        return -1;
    double sum = 0.0;
    for (int c = 0; c < a->channels; c++) {
        for (int y = 0; y < a->height; y++) {
            const float *ra = pf_image_at(a, 0, y, c), *rb = pf_image_at(b, 0, y, c);
            for (int x = 0; x < a->width; x++) {
                double d = (double)ra[x] - (double)rb[x];
                sum += d * d;
            }
        }
    }
    double mse = sum / ((double)a->width * a->height * a->channels);
    *out = mse == 0.0 ? INFINITY : 10.0 * log10(1.0 / mse);
    return 0;
}

/* --- SSIM ------------------------------------------------------------------------------------ */

/* The five local statistics SSIM needs, each filtered by the window: E[a], E[b], E[a^2], E[b^2],
 * E[ab]. Each input row is filtered horizontally into a ring of the last 11 rows (valid columns
 * only); once the ring is full, one valid output row is filtered vertically from it. Loops run
 * over x innermost on restrict pointers so they vectorise, and memory stays O(width). */
enum { PF_S_A, PF_S_B, PF_S_AA, PF_S_BB, PF_S_AB, PF_S_N };
#define PF_SSIM_TAPS (2 * PF_SSIM_RADIUS + 1)

typedef struct pf_ssim_ctx {
    double w[PF_SSIM_TAPS];
    int width, vw;                     /* image width; valid width = width - 2 * radius */
    double *ring[PF_S_N][PF_SSIM_TAPS]; /* vw each: horizontal results of the last 11 rows */
    double *src[PF_S_N];               /* width each: one row of a, b, a^2, b^2, ab */
    double *acc[PF_S_N];               /* vw each: one row of the vertical pass */
} pf_ssim_ctx;

static void ssim_window(double *w)
{
    double sum = 0.0;
    for (int i = -PF_SSIM_RADIUS; i <= PF_SSIM_RADIUS; i++) {
        w[i + PF_SSIM_RADIUS] = exp(-(double)(i * i) / (2.0 * PF_SSIM_SIGMA * PF_SSIM_SIGMA));
        sum += w[i + PF_SSIM_RADIUS];
    }
    for (int i = 0; i < PF_SSIM_TAPS; i++)
        w[i] /= sum;
}

/* Two doubles in one vector register (GCC/Clang vector extension, SSE2 on x86-64): the taps run
 * innermost with the sums in registers, two outputs at a time, since -O2 does not vectorise
 * loops of unknown length by itself. */
typedef double pf_v2d __attribute__((vector_size(16)));

static pf_v2d v2d_load(const double *p)
{
    pf_v2d v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* out[x] = sum_k w[k] rows[k][x] for x < n: rows[k] = in + k filters a row horizontally, the
 * ring's rows filter vertically. */
static void ssim_filter(double *restrict out, const double *const rows[PF_SSIM_TAPS],
                        const double *w, int n)
{
    int x = 0;
    for (; x + 4 <= n; x += 4) {
        pf_v2d s0 = { 0.0, 0.0 }, s1 = { 0.0, 0.0 };
        for (int k = 0; k < PF_SSIM_TAPS; k++) {
            s0 += w[k] * v2d_load(rows[k] + x);
            s1 += w[k] * v2d_load(rows[k] + x + 2);
        }
        memcpy(out + x, &s0, sizeof s0);
        memcpy(out + x + 2, &s1, sizeof s1);
    }
    for (; x < n; x++) {
        double sum = 0.0;
        for (int k = 0; k < PF_SSIM_TAPS; k++)
            sum += w[k] * rows[k][x];
        out[x] = sum;
    }
}

static void ssim_horizontal(pf_ssim_ctx *s, const float *ra, const float *rb, int slot)
{
    double *restrict pa = s->src[PF_S_A], *restrict pb = s->src[PF_S_B];
    double *restrict paa = s->src[PF_S_AA], *restrict pbb = s->src[PF_S_BB];
    double *restrict pab = s->src[PF_S_AB];
    for (int x = 0; x < s->width; x++) {
        double a = ra[x], b = rb[x];
        pa[x] = a;
        pb[x] = b;
        paa[x] = a * a;
        pbb[x] = b * b;
        pab[x] = a * b;
    }
    for (int q = 0; q < PF_S_N; q++) {
        const double *rows[PF_SSIM_TAPS];
        for (int k = 0; k < PF_SSIM_TAPS; k++)
            rows[k] = s->src[q] + k;
        ssim_filter(s->ring[q][slot], rows, s->w, s->vw);
    }
}

static double ssim_formula(double mu_a, double mu_b, double aa, double bb, double ab)
{
    double var_a = aa - mu_a * mu_a, var_b = bb - mu_b * mu_b, cov = ab - mu_a * mu_b;
    return ((2.0 * mu_a * mu_b + PF_SSIM_C1) * (2.0 * cov + PF_SSIM_C2)) /
           ((mu_a * mu_a + mu_b * mu_b + PF_SSIM_C1) * (var_a + var_b + PF_SSIM_C2));
}

/* The SSIM row centred on input row last - radius, from the ring (input rows last-10..last). */
static double ssim_vertical_row(pf_ssim_ctx *s, int last)
{
    for (int q = 0; q < PF_S_N; q++) {
        const double *rows[PF_SSIM_TAPS];
        for (int k = 0; k < PF_SSIM_TAPS; k++)
            rows[k] = s->ring[q][(last + 1 + k) % PF_SSIM_TAPS];
        ssim_filter(s->acc[q], rows, s->w, s->vw);
    }
    double total = 0.0;
    for (int x = 0; x < s->vw; x++)
        total += ssim_formula(s->acc[PF_S_A][x], s->acc[PF_S_B][x], s->acc[PF_S_AA][x],
                              s->acc[PF_S_BB][x], s->acc[PF_S_AB][x]);
    return total;
}

static double ssim_channel_sum(pf_ssim_ctx *s, const pf_image *a, const pf_image *b, int c)
{
    double total = 0.0;
    for (int y = 0; y < a->height; y++) {
        ssim_horizontal(s, pf_image_at(a, 0, y, c), pf_image_at(b, 0, y, c), y % PF_SSIM_TAPS);
        if (y >= PF_SSIM_TAPS - 1)
            total += ssim_vertical_row(s, y);
    }
    return total;
}

int pf_metric_ssim(const pf_image *a, const pf_image *b, double *out, pf_error *err)
{
    if (check_same_shape(a, b, err) != 0)
        return -1;
    if (a->width < PF_SSIM_TAPS || a->height < PF_SSIM_TAPS)
        return pf_fail(err, "SSIM needs images of at least %dx%d, not %dx%d", PF_SSIM_TAPS,
                       PF_SSIM_TAPS, a->width, a->height);
    pf_ssim_ctx s;
    ssim_window(s.w);
    s.width = a->width;
    s.vw = a->width - 2 * PF_SSIM_RADIUS;
    size_t per = (size_t)s.vw * (PF_SSIM_TAPS + 1) + (size_t)s.width;
    double *block = malloc(sizeof(double) * per * PF_S_N);
    if (!block)
        return pf_fail(err, "out of memory for SSIM of a %dx%d image", a->width, a->height);
    for (int q = 0; q < PF_S_N; q++) {
        double *p = block + per * (size_t)q;
        for (int k = 0; k < PF_SSIM_TAPS; k++)
            s.ring[q][k] = p + (size_t)k * s.vw;
        s.acc[q] = p + (size_t)PF_SSIM_TAPS * s.vw;
        s.src[q] = s.acc[q] + s.vw;
    }
    double total = 0.0;
    for (int c = 0; c < a->channels; c++)
        total += ssim_channel_sum(&s, a, b, c);
    free(block);
    double valid = (double)s.vw * (double)(a->height - 2 * PF_SSIM_RADIUS);
    *out = total / (valid * a->channels);
    return 0;
}
