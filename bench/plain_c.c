/* Plain C versions of the benched apps, as a user without perfora would write them, computing
 * exactly what the apps/ pipelines compute (same formulas, same binary32 operation order, so
 * they agree with perfora to rounding):
 *   naive       the obvious loops: a bounds test (or a clamp) on every tap, per-channel passes
 *               over whole images, qsort-free insertion sort for the median;
 *   reasonable  what a careful programmer writes without SIMD intrinsics: interior/border split
 *               so the common path has no tests, row-wise loops the compiler vectorizes
 *               (-O3 -march=native), hoisted constants, quickselect for the median.
 * Single-threaded. */
#include "bench/cmp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI_F 3.14159265358979f

/* ---- context ---- */

typedef struct pc_ctx {
    bench_app app;
    int naive;
    bench_img in, out;
    float *temp;   /* W x H x 3 scratch (blur, unsharp), or the grid (bilateral grid) */
    float *temp2;  /* a second scratch of the same size */
    size_t temp_n;
} pc_ctx;

#define AT(im, x, y, c) ((im)->data[(long)(c) * (im)->plane + (long)(y) * (im)->stride + (x)])

static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void bench_blur_taps(float a[17])
{
    const float s2 = 2.0f * 4.0f * 4.0f;
    float g[9];
    for (int k = 0; k <= 8; k++)
        g[k] = expf(-(float)(k * k) / s2);
    float sum = 0.0f;
    for (int k = -8; k <= 8; k++)
        sum += g[abs(k)];
    for (int k = -8; k <= 8; k++)
        a[k + 8] = g[abs(k)] / sum;
}

/* ---- blur (apps/blur.pf) ---- */

static void blur_naive(pc_ctx *p)
{
    const bench_img *in = &p->in, *out = &p->out;
    bench_img t = *in;
    t.data = p->temp;
    int W = in->w, H = in->h;
    float A[17];
    bench_blur_taps(A);
    for (int c = 0; c < in->c; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float v = 0.0f;
                if (x >= 8 && x < W - 8)
                    for (int k = -8; k <= 8; k++)
                        v += A[k + 8] * AT(in, clampi(x + k, 0, W - 1), y, c);
                AT(&t, x, y, c) = v;
            }
    for (int c = 0; c < in->c; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float v = 0.0f;
                if (y >= 8 && y < H - 8)
                    for (int k = -8; k <= 8; k++)
                        v += A[k + 8] * AT(&t, x, clampi(y + k, 0, H - 1), c);
                AT(out, x, y, c) = v;
            }
}

/* t[x] = sum_k A[k] r[x + k - 8] for x in [x0, x1); k ascending, as perfora's sum. */
static void hpass_row(const float *restrict r, float *restrict t, int x0, int x1,
                      const float *A)
{
    for (int x = x0; x < x1; x++)
        t[x] = 0.0f;
    for (int k = 0; k < 17; k++) {
        const float a = A[k];
        const float *rk = r + k - 8;
        for (int x = x0; x < x1; x++)
            t[x] += a * rk[x];
    }
}

/* The horizontal pass of one plane over rows [y0, y1) into t (same layout as in). */
static void hpass_plane(const bench_img *in, float *t, int c, int y0, int y1, const float *A)
{
    int W = in->w;
    for (int y = y0; y < y1; y++) {
        const float *r = in->data + c * in->plane + y * in->stride;
        float *tr = t + c * in->plane + y * in->stride;
        for (int x = 0; x < 8 && x < W; x++)
            tr[x] = 0.0f;
        for (int x = W - 8 > 8 ? W - 8 : 8; x < W; x++)
            tr[x] = 0.0f;
        hpass_row(r, tr, 8, W - 8, A);
    }
}

static void blur_reasonable(pc_ctx *p)
{
    const bench_img *in = &p->in, *out = &p->out;
    int W = in->w, H = in->h;
    float A[17];
    bench_blur_taps(A);
    for (int c = 0; c < in->c; c++) {
        hpass_plane(in, p->temp, c, 0, H, A);
        for (int y = 0; y < H; y++) {
            float *restrict o = out->data + c * out->plane + y * out->stride;
            for (int x = 0; x < W; x++)
                o[x] = 0.0f;
            if (y < 8 || y >= H - 8)
                continue;
            for (int k = 0; k < 17; k++) {
                const float a = A[k];
                const float *restrict tr = p->temp + c * in->plane + (y + k - 8) * in->stride;
                for (int x = 0; x < W; x++)
                    o[x] += a * tr[x];
            }
        }
    }
}

/* ---- unsharp mask (apps/unsharp_mask.pf): out = s in + (1 - s) mask, s = 3 ---- */

#define UNSHARP_S 3.0f

static void unsharp_naive(pc_ctx *p)
{
    const bench_img *in = &p->in, *out = &p->out;
    bench_img t = *in, m = *in;
    t.data = p->temp;
    m.data = p->temp2;
    int W = in->w, H = in->h;
    float A[17];
    bench_blur_taps(A);
    memset(p->temp, 0, p->temp_n * sizeof(float));
    memset(p->temp2, 0, p->temp_n * sizeof(float));
    for (int c = 0; c < in->c; c++)
        for (int y = 8; y < H - 8; y++)
            for (int x = 8; x < W - 8; x++) {
                float v = 0.0f;
                for (int k = -8; k <= 8; k++)
                    v += A[k + 8] * AT(in, clampi(x + k, 0, W - 1), y, c);
                AT(&t, x, y, c) = v;
            }
    for (int c = 0; c < in->c; c++)
        for (int y = 8; y < H - 8; y++)
            for (int x = 8; x < W - 8; x++) {
                float v = 0.0f;
                for (int k = -8; k <= 8; k++)
                    v += A[k + 8] * AT(&t, x, clampi(y + k, 0, H - 1), c);
                AT(&m, x, y, c) = v;
            }
    for (int c = 0; c < in->c; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                AT(out, x, y, c) = UNSHARP_S * AT(in, x, y, c)
                                   + (1.0f - UNSHARP_S) * AT(&m, x, y, c);
}

static void unsharp_reasonable(pc_ctx *p)
{
    const bench_img *in = &p->in, *out = &p->out;
    int W = in->w, H = in->h;
    float A[17];
    bench_blur_taps(A);
    float *m = p->temp2;  /* one row */
    const float s = UNSHARP_S, s1 = 1.0f - UNSHARP_S;
    for (int c = 0; c < in->c; c++) {
        for (int y = 8; y < H - 8; y++)
            hpass_row(in->data + c * in->plane + y * in->stride,
                      p->temp + c * in->plane + y * in->stride, 8, W - 8, A);
        for (int y = 0; y < H; y++) {
            const float *restrict r = in->data + c * in->plane + y * in->stride;
            float *restrict o = out->data + c * out->plane + y * out->stride;
            if (y < 8 || y >= H - 8 || W < 17) {
                for (int x = 0; x < W; x++)
                    o[x] = s * r[x] + s1 * 0.0f;
                continue;
            }
            for (int x = 8; x < W - 8; x++)
                m[x] = 0.0f;
            for (int k = 0; k < 17; k++) {
                int yy = y + k - 8;
                if (yy < 8 || yy >= H - 8)  /* temp rows never written: 0, adds nothing */
                    continue;
                const float a = A[k];
                const float *restrict tr = p->temp + c * in->plane + yy * in->stride;
                for (int x = 8; x < W - 8; x++)
                    m[x] += a * tr[x];
            }
            for (int x = 0; x < 8; x++)
                o[x] = s * r[x] + s1 * 0.0f;
            for (int x = 8; x < W - 8; x++)
                o[x] = s * r[x] + s1 * m[x];
            for (int x = W - 8; x < W; x++)
                o[x] = s * r[x] + s1 * 0.0f;
        }
    }
}

/* ---- bilateral filter (apps/bilateral_filter.pf) ---- */

#define BF_SS 4.0f
#define BF_SR 0.08f

static void bf_table(float sp[9][9])
{
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 9; j++)
            sp[i][j] = expf(-(float)(i * i + j * j) / (2.0f * BF_SS * BF_SS))
                       / (2.0f * PI_F * BF_SS * BF_SS);
}

/* One output pixel; `check` tests every tap against the image. */
static inline void bf_pixel(const bench_img *in, const bench_img *out, float sp[9][9], int x,
                            int y, int check)
{
    const float k2 = 2.0f * BF_SR * BF_SR, kn = BF_SR * sqrtf(2.0f * PI_F);
    float c0 = AT(in, x, y, 0), c1 = AT(in, x, y, 1), c2 = AT(in, x, y, 2);
    float wsum = 0.0f, s0 = 0.0f, s1 = 0.0f, s2 = 0.0f;
    for (int r = -4; r <= 4; r++)
        for (int c = -4; c <= 4; c++) {
            int xx = x + c, yy = y + r;
            if (check && !(xx >= 0 && xx < in->w && yy >= 0 && yy < in->h))
                continue;
            float n0 = AT(in, xx, yy, 0), n1 = AT(in, xx, yy, 1), n2 = AT(in, xx, yy, 2);
            float d = 0.299f * (c0 - n0) + 0.587f * (c1 - n1) + 0.114f * (c2 - n2);
            float w = sp[c + 4][r + 4] * expf(-(d * d) / k2) / kn;
            wsum += w;
            s0 += w * n0;
            s1 += w * n1;
            s2 += w * n2;
        }
    AT(out, x, y, 0) = s0 / wsum;
    AT(out, x, y, 1) = s1 / wsum;
    AT(out, x, y, 2) = s2 / wsum;
}

static void bilateral_run(pc_ctx *p)
{
    float sp[9][9];
    bf_table(sp);
    int W = p->in.w, H = p->in.h;
    for (int y = 0; y < H; y++) {
        int row_inside = y >= 4 && y < H - 4;
        for (int x = 0; x < W; x++) {
            int inside = !p->naive && row_inside && x >= 4 && x < W - 4;
            bf_pixel(&p->in, &p->out, sp, x, y, !inside);
        }
    }
}

/* ---- bilateral grid (apps/bilateral_grid.pf) ---- */

#define BG_SR 0.1f
#define BG_NZ 11

typedef struct bg_dims {
    int ss_px, gw, gh;
    float ss;
    long n;  /* cells per channel: gw * gh * NZ */
} bg_dims;

static bg_dims bg_size(int W, int H)
{
    bg_dims d;
    d.ss_px = (W > H ? W : H) / 64;
    if (d.ss_px < 1)
        d.ss_px = 1;
    d.ss = (float)d.ss_px;
    d.gw = (W + d.ss_px - 1) / d.ss_px + 1;
    d.gh = (H + d.ss_px - 1) / d.ss_px + 1;
    d.n = (long)d.gw * d.gh * BG_NZ;
    return d;
}

static float bg_lerp(float a, float b, float t)
{
    return (1.0f - t) * a + t * b;
}

static void bg_kernel(float g[5])
{
    const float gn = 1.5f * sqrtf(2.0f * PI_F), gd = 2.0f * 1.5f * 1.5f;
    g[0] = expf(-4.0f / gd) / gn;
    g[1] = expf(-1.0f / gd) / gn;
    g[2] = 1.0f / gn;
    g[3] = g[1];
    g[4] = g[0];
}

#define GI(d, x, y, z, i) ((((long)(i) * BG_NZ + (z)) * (d)->gh + (y)) * (d)->gw + (x))

/* Reads the grid with the constant-0 boundary. */
static inline float bg_at(const float *g, const bg_dims *d, int x, int y, int z, int i)
{
    if (x < 0 || x >= d->gw || y < 0 || y >= d->gh || z < 0 || z >= BG_NZ)
        return 0.0f;
    return g[GI(d, x, y, z, i)];
}

/* One blur along axis (0 x, 1 y, 2 z), every tap read through the boundary test. */
static void bg_blur(const float *src, float *dst, const bg_dims *d, int axis, const float G[5])
{
    for (int i = 0; i < 4; i++)
        for (int z = 0; z < BG_NZ; z++)
            for (int y = 0; y < d->gh; y++)
                for (int x = 0; x < d->gw; x++) {
                    float v = 0.0f;
                    for (int k = -2; k <= 2; k++)
                        v += G[k + 2] * bg_at(src, d, x + (axis == 0) * k, y + (axis == 1) * k,
                                              z + (axis == 2) * k, i);
                    dst[GI(d, x, y, z, i)] = v;
                }
}

static void bg_yuv_splat(pc_ctx *p, const bg_dims *d, float *yuv, float *grid)
{
    const bench_img *in = &p->in;
    int W = in->w, H = in->h;
    long pl = (long)W * H;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float r = AT(in, x, y, 0), g = AT(in, x, y, 1), b = AT(in, x, y, 2);
            long o = (long)y * W + x;
            yuv[o] = 0.299f * r + 0.587f * g + 0.114f * b;
            yuv[pl + o] = -0.14713f * r - 0.28886f * g + 0.436f * b;
            yuv[2 * pl + o] = 0.615f * r - 0.51499f * g - 0.10001f * b;
        }
    memset(grid, 0, sizeof(float) * 4 * d->n);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            long o = (long)y * W + x;
            int gx = (int)roundf((float)x / d->ss);
            int gy = (int)roundf((float)y / d->ss);
            int gz = (int)roundf(yuv[o] / BG_SR);
            if (gz < 0 || gz >= BG_NZ)  /* outside [0, 1]: perfora would fail its bound */
                continue;
            grid[GI(d, gx, gy, gz, 0)] += yuv[o];
            grid[GI(d, gx, gy, gz, 1)] += yuv[pl + o];
            grid[GI(d, gx, gy, gz, 2)] += yuv[2 * pl + o];
            grid[GI(d, gx, gy, gz, 3)] += 1.0f;
        }
}

/* Trilinear read of channel i of g at the truncated corner (xi, yi, zi). */
static inline float bg_tri(const float *g, const bg_dims *d, int xi, int yi, int zi, int i,
                           float fx, float fy, float fz, int check)
{
#define B(dx, dy, dz) (check ? bg_at(g, d, xi + dx, yi + dy, zi + dz, i) \
                             : g[GI(d, xi + dx, yi + dy, zi + dz, i)])
    return bg_lerp(bg_lerp(bg_lerp(B(0, 0, 0), B(1, 0, 0), fx),
                           bg_lerp(B(0, 1, 0), B(1, 1, 0), fx), fy),
                   bg_lerp(bg_lerp(B(0, 0, 1), B(1, 0, 1), fx),
                           bg_lerp(B(0, 1, 1), B(1, 1, 1), fx), fy),
                   fz);
#undef B
}

static void bgrid_run(pc_ctx *p)
{
    const bench_img *in = &p->in, *out = &p->out;
    int W = in->w, H = in->h;
    bg_dims d = bg_size(W, H);
    float G[5];
    bg_kernel(G);
    float *grid = p->temp, *g2 = grid + 4 * d.n, *yuv = p->temp2;
    bg_yuv_splat(p, &d, yuv, grid);
    bg_blur(grid, g2, &d, 1, G);
    bg_blur(g2, grid, &d, 0, G);
    bg_blur(grid, g2, &d, 2, G);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            long o = (long)y * W + x;
            float xf = (float)x / d.ss, yf = (float)y / d.ss, zf = yuv[o] / BG_SR;
            int xi = (int)xf, yi = (int)yf, zi = (int)zf;
            float fx = xf - (float)xi, fy = yf - (float)yi, fz = zf - (float)zi;
            /* Only the upper z corner can leave the grid (Y = 1 gives zi = 10). */
            int check = p->naive || zi + 1 >= BG_NZ || zi < 0;
            float wgt = bg_tri(g2, &d, xi, yi, zi, 3, fx, fy, fz, check);
            float s[3];
            for (int c = 0; c < 3; c++)
                s[c] = bg_tri(g2, &d, xi, yi, zi, c, fx, fy, fz, check) / wgt;
            AT(out, x, y, 0) = s[0] + 1.13983f * s[2];
            AT(out, x, y, 1) = s[0] - 0.39465f * s[1] - 0.58060f * s[2];
            AT(out, x, y, 2) = s[0] + 2.03211f * s[1];
        }
}

/* ---- median (apps/median.pf): sorted(window)[n / 2] ---- */

static float median_sort(float *v, int n)
{
    for (int i = 1; i < n; i++) {
        float x = v[i];
        int j = i - 1;
        for (; j >= 0 && v[j] > x; j--)
            v[j + 1] = v[j];
        v[j + 1] = x;
    }
    return v[n / 2];
}

/* The k-th smallest of v[0 .. n-1] (Hoare's quickselect; reorders v). */
static float select_kth(float *v, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        float pivot = v[(lo + hi) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

static void median_run(pc_ctx *p)
{
    const bench_img *in = &p->in, *out = &p->out;
    int W = in->w, H = in->h;
    float win[81];
    for (int c = 0; c < in->c; c++)
        for (int y = 0; y < H; y++) {
            int row_inside = y >= 4 && y < H - 4;
            for (int x = 0; x < W; x++) {
                int n = 0;
                if (!p->naive && row_inside && x >= 4 && x < W - 4) {
                    for (int r = -4; r <= 4; r++) {
                        const float *row = &AT(in, x - 4, y + r, c);
                        for (int k = 0; k < 9; k++)
                            win[n++] = row[k];
                    }
                    AT(out, x, y, c) = select_kth(win, 81, 40);
                    continue;
                }
                for (int r = -4; r <= 4; r++)
                    for (int k = -4; k <= 4; k++) {
                        int xx = x + k, yy = y + r;
                        if (xx >= 0 && xx < W && yy >= 0 && yy < H)
                            win[n++] = AT(in, xx, yy, c);
                    }
                AT(out, x, y, c) = p->naive ? median_sort(win, n) : select_kth(win, n, n / 2);
            }
        }
}

/* ---- the paper's blur variant by hand (bench_perforation's reference) ----
 * loop_temp on the (4, 1) grid: temp_grid[i] = horizontal blur at x = 4 i, stored downsampled;
 * loop_output on the (4, 4) grid: samples at x, y multiples of 4 read temp_grid[x / 4] (the
 * on-demand read of a congruent index is a plain load); then bilinear reconstruction between
 * the samples (the last row / column of samples repeated past the last sample). */

typedef struct pv_ctx {
    bench_img in, out;
    float *grid;  /* W/4 x H per channel */
} pv_ctx;

static int blur_variant_run(void *ctx)
{
    pv_ctx *p = ctx;
    const bench_img *in = &p->in, *out = &p->out;
    int W = in->w, H = in->h, GW = (W + 3) / 4;
    float A[17];
    bench_blur_taps(A);
    for (int c = 0; c < in->c; c++) {
        float *g = p->grid + (long)c * GW * H;
        for (int y = 0; y < H; y++) {
            const float *r = in->data + c * in->plane + y * in->stride;
            float *gr = g + (long)y * GW;
            for (int i = 0; i < GW; i++) {
                int x = 4 * i;
                float v = 0.0f;
                if (x >= 8 && x < W - 8)
                    for (int k = 0; k < 17; k++)
                        v += A[k] * r[x + k - 8];
                gr[i] = v;
            }
        }
        /* Samples of the output at multiples of 4, written in place. */
        for (int y = 0; y < H; y += 4) {
            float *o = out->data + c * out->plane + y * out->stride;
            float s[4096];
            int n = GW < 4096 ? GW : 4096;
            for (int i = 0; i < n; i++)
                s[i] = 0.0f;
            if (y >= 8 && y < H - 8)
                for (int k = 0; k < 17; k++) {
                    const float a = A[k];
                    const float *gr = g + (long)(y + k - 8) * GW;
                    for (int i = 0; i < n; i++)
                        s[i] += a * gr[i];
                }
            for (int i = 0; i < n; i++)
                o[4 * i] = s[i];
        }
        /* Bilinear fill: rows of samples first (x), then between sample rows (y). */
        for (int y = 0; y < H; y += 4) {
            float *o = out->data + c * out->plane + y * out->stride;
            for (int x = 0; x < W; x++) {
                int x0 = x & ~3, x1 = x0 + 4 < W ? x0 + 4 : x0;
                float t = (float)(x - x0) * 0.25f;
                o[x] = (1.0f - t) * o[x0] + t * o[x1];
            }
        }
        for (int y = 0; y < H; y++) {
            if (y % 4 == 0)
                continue;
            int y0 = y & ~3, y1 = y0 + 4 < H ? y0 + 4 : y0;
            float t = (float)(y - y0) * 0.25f;
            const float *r0 = out->data + c * out->plane + y0 * out->stride;
            const float *r1 = out->data + c * out->plane + y1 * out->stride;
            float *o = out->data + c * out->plane + y * out->stride;
            for (int x = 0; x < W; x++)
                o[x] = (1.0f - t) * r0[x] + t * r1[x];
        }
    }
    return 0;
}

static void blur_variant_destroy(void *ctx)
{
    pv_ctx *p = ctx;
    free(p->grid);
    free(p);
}

int bench_plainc_blur_variant_make(const bench_img *in, const bench_img *out, bench_method *m)
{
    memset(m, 0, sizeof *m);
    pv_ctx *p = calloc(1, sizeof *p);
    if (!p || in->w > 4 * 4096)
        return free(p), -1;
    p->in = *in;
    p->out = *out;
    p->grid = calloc((size_t)((in->w + 3) / 4) * (size_t)in->h * (size_t)in->c, sizeof(float));
    if (!p->grid)
        return blur_variant_destroy(p), -1;
    m->ctx = p;
    m->run = blur_variant_run;
    m->destroy = blur_variant_destroy;
    return 0;
}

/* ---- the method interface ---- */

static int pc_run(void *ctx)
{
    pc_ctx *p = ctx;
    switch (p->app) {
    case BENCH_BLUR: p->naive ? blur_naive(p) : blur_reasonable(p); break;
    case BENCH_UNSHARP: p->naive ? unsharp_naive(p) : unsharp_reasonable(p); break;
    case BENCH_BILATERAL: bilateral_run(p); break;
    case BENCH_BGRID: bgrid_run(p); break;
    case BENCH_MEDIAN: median_run(p); break;
    default: return -1;
    }
    return 0;
}

static void pc_destroy(void *ctx)
{
    pc_ctx *p = ctx;
    free(p->temp);
    free(p->temp2);
    free(p);
}

int bench_plainc_make(bench_app app, int naive, const bench_img *in, const bench_img *out,
                      bench_method *m)
{
    memset(m, 0, sizeof *m);
    pc_ctx *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->app = app;
    p->naive = naive;
    p->in = *in;
    p->out = *out;
    size_t n = (size_t)in->plane * (size_t)in->c;
    if (app == BENCH_BGRID) {
        bg_dims d = bg_size(in->w, in->h);
        p->temp_n = (size_t)(8 * d.n);
        p->temp = calloc(p->temp_n, sizeof(float));
        p->temp2 = calloc((size_t)in->w * (size_t)in->h * 3, sizeof(float));
    } else if (app == BENCH_BLUR || app == BENCH_UNSHARP) {
        p->temp_n = n;
        p->temp = calloc(n, sizeof(float));
        p->temp2 = calloc(n, sizeof(float));
    }
    if ((app == BENCH_BGRID || app == BENCH_BLUR || app == BENCH_UNSHARP)
        && (!p->temp || !p->temp2)) {
        pc_destroy(p);
        return -1;
    }
    m->ctx = p;
    m->run = pc_run;
    m->destroy = pc_destroy;
    m->check = 1;
    m->x1 = in->w;
    m->y1 = in->h;
    return 0;
}
