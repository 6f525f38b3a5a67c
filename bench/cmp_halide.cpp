// Halide 14 comparators for bench_pipelines: the five apps written as Halide pipelines that
// compute what apps/*.pf compute (same formulas and binary32 operation order where Halide lets
// us), JIT-compiled for the host with a hand schedule (what a Halide user would write after
// reading the Halide papers: sliding windows, tiles, vectorize 8, parallel rows) or with the
// Adams2019 autoscheduler (the plugin, Halide 14's Pipeline::auto_schedule API).
//
// Where a pipeline's border rule is not a boundary condition Halide has (blur's black frame,
// unsharp's bright frame, the median's truncated window), the Halide pipeline is realized over
// the interior and the frame is written by the timed run in C or by a second Halide pipeline,
// as a user would. See docs/bench.md for the exact differences.
#include "bench/cmp.h"

#include <Halide.h>

#include <algorithm>
#include <cmath>
#include <cpuid.h>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace Halide;

#ifndef BENCH_HALIDE_VERSION
#define BENCH_HALIDE_VERSION "14"
#endif
#ifndef BENCH_ADAMS2019_PLUGIN
#define BENCH_ADAMS2019_PLUGIN "/usr/lib/x86_64-linux-gnu/halide14/libautoschedule_adams2019.so"
#endif

namespace {

const float PI_F = 3.14159265358979f;

// Halide 14 reads AVX512-BF16 as a Sapphire Rapids, and then emits AVX-VNNI's VEX-encoded
// vpdpwssd, which AMD Zen 4 (AVX512-BF16 and AVX512-VNNI, no AVX-VNNI) does not have: the
// bilateral grid's pipelines died of SIGILL there. Without AVX-VNNI the feature goes.
Target jit_target()
{
    Target t = get_jit_target_from_environment();
    unsigned a = 0, b = 0, c = 0, d = 0;
    bool avx_vnni = __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));
    if (t.has_feature(Target::AVX512_SapphireRapids) && !avx_vnni)
        t = t.without_feature(Target::AVX512_SapphireRapids);
    return t;
}

Buffer<float> wrap(const bench_img *im)
{
    halide_dimension_t d[3] = { { 0, im->w, 1 },
                                { 0, im->h, (int32_t)im->stride },
                                { 0, im->c, (int32_t)im->plane } };
    return Buffer<float>(im->data, 3, d);
}

// A view of b restricted to [x0, x1) x [y0, y1) (coordinates stay global).
Buffer<float> crop(const Buffer<float> &b, int x0, int y0, int x1, int y1)
{
    return Buffer<float>(b.get()->cropped(0, x0, x1 - x0).cropped(1, y0, y1 - y0));
}

// Silences stderr while the autoscheduler prints its progress.
struct quiet_stderr {
    int saved;
    quiet_stderr()
    {
        saved = -1;
        if (getenv("BENCH_HALIDE_VERBOSE"))
            return;
        fflush(stderr);
        saved = dup(2);
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        close(fd);
    }
    ~quiet_stderr()
    {
        if (saved < 0)
            return;
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
    }
};

bool adams_loaded = false;

// Autoschedules p with Adams2019 for `parallelism` cores; returns "" or why it failed.
std::string adams(Pipeline &p)
{
    if (!adams_loaded) {
        load_plugin(BENCH_ADAMS2019_PLUGIN);
        adams_loaded = true;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    MachineParams mp((int)(cores > 0 ? cores : 1), 32u << 20, 40);
    quiet_stderr q;
    AutoSchedulerResults r = p.auto_schedule("Adams2019", jit_target(), mp);
    if (const char *dir = getenv("BENCH_HALIDE_SCHEDULES")) {
        std::string path = std::string(dir) + "/" + p.outputs()[0].name() + ".adams2019.h";
        if (FILE *f = fopen(path.c_str(), "w")) {
            fputs(r.schedule_source.c_str(), f);
            fclose(f);
        }
    }
    return "";
}

// sum_k w[k] f(k), k ascending, starting from the first term (perfora's sum starts at 0.0,
// and 0 + a == a).
template<typename F>
Expr wsum(const float *w, int n, F f)
{
    Expr s = w[0] * f(0);
    for (int k = 1; k < n; k++)
        s = s + w[k] * f(k);
    return s;
}

// ---- the context of one method ----

struct region {
    int x0, y0, x1, y1;
};

struct hl_ctx {
    bench_app app;
    bench_img in_img, out_img;
    ImageParam input{ Float(32), 3, "input" };
    Buffer<float> in, out;
    Pipeline main;                     // realized over main_region
    region main_region;
    Pipeline border;                   // median: realized over border_regions
    std::vector<region> border_regions;
    Buffer<float> main_out;            // views of `out` over those regions
    std::vector<Buffer<float>> border_out;
};

// The 8-pixel frame: blur 0, unsharp 3 in - 2 * 0.
void write_frame(hl_ctx *h, int f, bool unsharp)
{
    const bench_img &in = h->in_img, &out = h->out_img;
    for (int c = 0; c < out.c; c++)
        for (int y = 0; y < out.h; y++) {
            float *o = out.data + c * out.plane + y * out.stride;
            const float *r = in.data + c * in.plane + y * in.stride;
            bool full = y < f || y >= out.h - f;
            for (int x = 0; x < out.w; x++) {
                if (!full && x == f) {
                    x = out.w - f - 1;
                    continue;
                }
                o[x] = unsharp ? 3.0f * r[x] + (1.0f - 3.0f) * 0.0f : 0.0f;
            }
        }
}

// ---- blur ----

std::string build_blur(hl_ctx *h, bool use_adams)
{
    ImageParam &in = h->input;
    float A[17];
    bench_blur_taps(A);
    Var x("x"), y("y"), c("c"), yo("yo"), yi("yi"), t("t");
    Func bx("blur_x"), by("blur");
    bx(x, y, c) = wsum(A, 17, [&](int k) { return in(x + k - 8, y, c); });
    by(x, y, c) = wsum(A, 17, [&](int k) { return bx(x, y + k - 8, c); });
    int W = h->in_img.w, H = h->in_img.h;
    h->main_region = { 8, 8, W - 8, H - 8 };
    if (use_adams) {
        in.set_estimates({ { 0, W }, { 0, H }, { 0, 3 } });
        by.set_estimates({ { 8, W - 16 }, { 8, H - 16 }, { 0, 3 } });
        h->main = Pipeline(by);
        return adams(h->main);
    }
    if (getenv("BENCH_HL_TILE")) {
        Var xo("xo"), xi("xi");
        by.tile(x, y, xo, yo, xi, yi, 256, 32).fuse(yo, c, t).parallel(t).vectorize(xi, 8);
        bx.compute_at(by, xo).vectorize(x, 8);
    } else {
    // Sliding window: each row of blur_x computed once per strip of 32 output rows, kept in a
    // folded buffer; strips of every channel on the thread pool.
    by.split(y, yo, yi, 32).fuse(yo, c, t).parallel(t).vectorize(x, 8);
    bx.store_at(by, t).compute_at(by, yi).vectorize(x, 8);
    }
    h->main = Pipeline(by);
    return "";
}

// ---- unsharp mask ----

std::string build_unsharp(hl_ctx *h, bool use_adams)
{
    ImageParam &in = h->input;
    float A[17];
    bench_blur_taps(A);
    int W = h->in_img.w, H = h->in_img.h;
    Var x("x"), y("y"), c("c"), yo("yo"), yi("yi"), t("t");
    Func bx("blur_x"), tz("temp"), mask("mask"), out("unsharp");
    bx(x, y, c) = wsum(A, 17, [&](int k) { return in(x + k - 8, y, c); });
    // temp rows outside [8, H - 8) were never written in the .pf: they read as 0.
    tz(x, y, c) = select(y >= 8 && y < H - 8, bx(x, y, c), 0.0f);
    mask(x, y, c) = wsum(A, 17, [&](int k) { return tz(x, y + k - 8, c); });
    out(x, y, c) = 3.0f * in(x, y, c) + (1.0f - 3.0f) * mask(x, y, c);
    h->main_region = { 8, 8, W - 8, H - 8 };
    if (use_adams) {
        in.set_estimates({ { 0, W }, { 0, H }, { 0, 3 } });
        out.set_estimates({ { 8, W - 16 }, { 8, H - 16 }, { 0, 3 } });
        h->main = Pipeline(out);
        return adams(h->main);
    }
    if (getenv("BENCH_HL_TILE")) {
        Var xo("xo"), xi("xi");
        out.tile(x, y, xo, yo, xi, yi, 256, 32).fuse(yo, c, t).parallel(t).vectorize(xi, 8);
        tz.compute_at(out, xo).vectorize(x, 8);
    } else {
    out.split(y, yo, yi, 32).fuse(yo, c, t).parallel(t).vectorize(x, 8);
    tz.store_at(out, t).compute_at(out, yi).vectorize(x, 8);
    }
    h->main = Pipeline(out);
    return "";
}

// ---- bilateral filter ----

std::string build_bilateral(hl_ctx *h, bool use_adams)
{
    ImageParam &in = h->input;
    int W = h->in_img.w, H = h->in_img.h;
    const float ss = 4.0f, sr = 0.08f;
    const float k2 = 2.0f * sr * sr, kn = sr * std::sqrt(2.0f * PI_F);
    Var x("x"), y("y"), c("c"), i("i"), j("j"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func spatial("spatial"), sums("sums"), out("bilateral");
    spatial(i, j) = exp(-cast<float>(i * i + j * j) / (2.0f * ss * ss)) / (2.0f * PI_F * ss * ss);
    // The clamp is written inline, not as BoundaryConditions::repeat_edge: Adams2019 computes
    // a repeat_edge Func at an inner level of the RVar loop (compute_at sums r.y inner, store_at
    // r.y outer), and Halide 14 then produces NaN for most pixels.
    auto cl = [&](Expr px, Expr py, Expr ch) {
        return in(clamp(px, 0, W - 1), clamp(py, 0, H - 1), ch);
    };
    RDom r(-4, 9, -4, 9, "r");  // r.x: column offset (inner), r.y: row offset
    Expr xx = x + r.x, yy = y + r.y;
    Expr inside = xx >= 0 && xx < W && yy >= 0 && yy < H;
    Expr d = 0.299f * (cl(x, y, 0) - cl(xx, yy, 0)) + 0.587f * (cl(x, y, 1) - cl(xx, yy, 1))
             + 0.114f * (cl(x, y, 2) - cl(xx, yy, 2));
    Expr w = select(inside, spatial(r.x + 4, r.y + 4) * exp(-(d * d) / k2) / kn, 0.0f);
    sums(x, y) = Tuple(0.0f, 0.0f, 0.0f, 0.0f);
    sums(x, y) = Tuple(sums(x, y)[0] + w, sums(x, y)[1] + w * cl(xx, yy, 0),
                       sums(x, y)[2] + w * cl(xx, yy, 1), sums(x, y)[3] + w * cl(xx, yy, 2));
    out(x, y, c) = mux(c, { sums(x, y)[1] / sums(x, y)[0], sums(x, y)[2] / sums(x, y)[0],
                            sums(x, y)[3] / sums(x, y)[0] });
    h->main_region = { 0, 0, W, H };
    if (use_adams) {
        in.set_estimates({ { 0, W }, { 0, H }, { 0, 3 } });
        out.set_estimates({ { 0, W }, { 0, H }, { 0, 3 } });
        h->main = Pipeline(out);
        return adams(h->main);
    }
    spatial.compute_root();
    out.bound(c, 0, 3).tile(x, y, xo, yo, xi, yi, 64, 8).reorder(xi, yi, c, xo, yo)
        .unroll(c).vectorize(xi, 8).parallel(yo);
    sums.compute_at(out, xo).vectorize(x, 8);
    sums.update().reorder(x, r.x, r.y, y).vectorize(x, 8);
    h->main = Pipeline(out);
    return "";
}

// ---- bilateral grid ----

std::string build_bgrid(hl_ctx *h, bool use_adams)
{
    ImageParam &in = h->input;
    int W = h->in_img.w, H = h->in_img.h;
    int ssp = std::max(std::max(W, H) / 64, 1);
    if (ssp % 2)
        return "the gathering splat assumes an even spatial rate (ss = " + std::to_string(ssp)
               + ")";
    const float ss = (float)ssp, sr = 0.1f;
    const int NZ = 11, GW = (W + ssp - 1) / ssp + 1, GH = (H + ssp - 1) / ssp + 1;
    const float gn = 1.5f * std::sqrt(2.0f * PI_F), gd = 2.0f * 1.5f * 1.5f;
    const float G[5] = { std::exp(-4.0f / gd) / gn, std::exp(-1.0f / gd) / gn, 1.0f / gn,
                         std::exp(-1.0f / gd) / gn, std::exp(-4.0f / gd) / gn };
    Var x("x"), y("y"), z("z"), c("c"), k("k"), yo("yo"), yi("yi");
    Func yuv("yuv"), grid("grid"), by("blur_y"), bx("blur_x"), bz("blur_z"), sl("slice"),
        out("bilateral_grid");
    Expr R = in(x, y, 0), Gc = in(x, y, 1), B = in(x, y, 2);
    yuv(x, y, c) = mux(c, { 0.299f * R + 0.587f * Gc + 0.114f * B,
                            -0.14713f * R - 0.28886f * Gc + 0.436f * B,
                            0.615f * R - 0.51499f * Gc - 0.10001f * B });
    // Splat as a gather: cell (x, y) of the grid collects the pixels that round to it, in the
    // order the .pf's serial scatter visits them (rows, then columns), so the float sums are
    // the same. Pixel px rounds to cell x exactly when px is in [x ss - ss/2, x ss + ss/2).
    // Boundary rules are inline clamps and selects, not BoundaryConditions Funcs: with those
    // extra Funcs Adams2019's beam search ran for minutes and grew past 4 GB.
    RDom r(0, ssp, 0, ssp, "r");
    Expr px = x * ssp - ssp / 2 + r.x, py = y * ssp - ssp / 2 + r.y;
    Expr inside = px >= 0 && px < W && py >= 0 && py < H;
    Expr pxc = clamp(px, 0, W - 1), pyc = clamp(py, 0, H - 1);
    Expr zv = yuv(pxc, pyc, 0) / sr;
    Expr zz = clamp(cast<int>(floor(zv + 0.5f)), 0, NZ - 1);  // roundf for zv >= 0
    grid(x, y, z, c) = 0.0f;
    grid(x, y, zz, c) += select(inside, select(c == 3, 1.0f, yuv(pxc, pyc, min(c, 2))), 0.0f);
    // 5-tap blurs y, x, z; taps outside the grid read 0.
    auto tap = [](Func f, Expr v, int n, Expr a, Expr b, Expr cc, Expr d, int axis) {
        Expr in_range = v >= 0 && v < n, vc = clamp(v, 0, n - 1);
        Expr val = axis == 0 ? f(vc, b, cc, d) : axis == 1 ? f(a, vc, cc, d) : f(a, b, vc, d);
        return select(in_range, val, 0.0f);
    };
    by(x, y, z, c) = wsum(G, 5, [&](int t) { return tap(grid, y + t - 2, GH, x, y, z, c, 1); });
    bx(x, y, z, c) = wsum(G, 5, [&](int t) { return tap(by, x + t - 2, GW, x, y, z, c, 0); });
    bz(x, y, z, c) = wsum(G, 5, [&](int t) { return tap(bx, z + t - 2, NZ, x, y, z, c, 2); });
    // Slice: trilinear from the truncated lower corner, channel k = 0..2 values, 3 weight.
    Expr xf = cast<float>(x) / ss, yf = cast<float>(y) / ss, zf = yuv(x, y, 0) / sr;
    // The clamps change nothing for inputs in [0, 1] (x / ss < GW - 1, Y / sr <= 10) but bound
    // the reads, which Adams2019 requires ("unbounded producer-consumer relationship").
    Expr xi = clamp(cast<int>(xf), 0, GW - 2), yi2 = clamp(cast<int>(yf), 0, GH - 2),
         zi = clamp(cast<int>(zf), 0, NZ - 1);
    Expr fx = xf - cast<float>(xi), fy = yf - cast<float>(yi2), fz = zf - cast<float>(zi);
    auto lerp3 = [](Expr a, Expr b, Expr t) { return (1.0f - t) * a + t * b; };
    auto B3 = [&](int dx, int dy, int dz) {
        Expr zt = zi + dz;  // only the upper z corner can leave the grid
        return select(zt < NZ, bz(xi + dx, yi2 + dy, min(zt, NZ - 1), k), 0.0f);
    };
    sl(x, y, k) = lerp3(lerp3(lerp3(B3(0, 0, 0), B3(1, 0, 0), fx),
                              lerp3(B3(0, 1, 0), B3(1, 1, 0), fx), fy),
                        lerp3(lerp3(B3(0, 0, 1), B3(1, 0, 1), fx),
                              lerp3(B3(0, 1, 1), B3(1, 1, 1), fx), fy),
                        fz);
    Expr s0 = sl(x, y, 0) / sl(x, y, 3), s1 = sl(x, y, 1) / sl(x, y, 3),
         s2 = sl(x, y, 2) / sl(x, y, 3);
    out(x, y, c) = mux(c, { s0 + 1.13983f * s2, s0 - 0.39465f * s1 - 0.58060f * s2,
                            s0 + 2.03211f * s1 });
    h->main_region = { 0, 0, W, H };
    if (use_adams) {
        in.set_estimates({ { 0, W }, { 0, H }, { 0, 3 } });
        out.set_estimates({ { 0, W }, { 0, H }, { 0, 3 } });
        h->main = Pipeline(out);
        return adams(h->main);
    }
    yuv.compute_root().bound(c, 0, 3).reorder(c, x, y).unroll(c).vectorize(x, 8).parallel(y, 8);
    grid.compute_root().bound(c, 0, 4).bound(x, 0, GW).bound(y, 0, GH).bound(z, 0, NZ);
    grid.update().reorder(c, r.x, r.y, x, y).unroll(c).parallel(y);
    by.compute_root().bound(c, 0, 4).reorder(x, y, z, c).vectorize(x, 8).parallel(z);
    bx.compute_root().bound(c, 0, 4).reorder(x, y, z, c).vectorize(x, 8).parallel(z);
    bz.compute_root().bound(c, 0, 4).reorder(x, y, z, c).vectorize(x, 8).parallel(y);
    out.bound(c, 0, 3).split(y, yo, yi, 8).reorder(c, x, yi, yo).unroll(c).vectorize(x, 8)
        .parallel(yo);
    sl.compute_at(out, yi).bound(k, 0, 4).reorder(k, x, y).unroll(k).vectorize(x, 8);
    h->main = Pipeline(out);
    return "";
}

// ---- median: sorting networks ----

// Batcher's odd-even merge sort for any n (Knuth 5.3.4 / the usual index formulation).
std::vector<std::pair<int, int>> batcher(int n)
{
    std::vector<std::pair<int, int>> cmp;
    for (int p = 1; p < n; p *= 2)
        for (int k = p; k >= 1; k /= 2)
            for (int j = k % p; j + k < n; j += 2 * k)
                for (int i = 0; i < std::min(k, n - j - k); i++)
                    if ((i + j) / (2 * p) == (i + j + k) / (2 * p))
                        cmp.emplace_back(i + j, i + j + k);
    return cmp;
}

// Sorts v with the network, keeping only the comparators (and the min / max halves) that
// the outputs `want` depend on; returns the sorted wires (only `want` are meaningful).
std::vector<Expr> sort_network(std::vector<Expr> v, const std::vector<int> &want)
{
    int n = (int)v.size();
    auto net = batcher(n);
    std::vector<char> need(n, 0), need_min(net.size()), need_max(net.size());
    for (int w : want)
        need[w] = 1;
    for (int q = (int)net.size() - 1; q >= 0; q--) {
        int a = net[q].first, b = net[q].second;
        need_min[q] = need[a];
        need_max[q] = need[b];
        if (need[a] || need[b])
            need[a] = need[b] = 1;
    }
    for (size_t q = 0; q < net.size(); q++) {
        int a = net[q].first, b = net[q].second;
        if (!need_min[q] && !need_max[q])
            continue;
        Expr lo = min(v[a], v[b]), hi = max(v[a], v[b]);
        if (need_min[q])
            v[a] = lo;
        if (need_max[q])
            v[b] = hi;
    }
    return v;
}

std::string build_median(hl_ctx *h, bool use_adams)
{
    ImageParam &in = h->input;
    int W = h->in_img.w, H = h->in_img.h;
    if (W < 9 || H < 9)
        return "image smaller than the 9x9 window";
    Var x("x"), y("y"), c("c"), yo("yo"), yi("yi"), t("t");
    // Interior: all 81 taps inside; the median is element 40 of the sorted window.
    Func med("median");
    std::vector<Expr> win;
    for (int r = -4; r <= 4; r++)
        for (int k = -4; k <= 4; k++)
            win.push_back(in(x + k, y + r, c));
    med(x, y, c) = sort_network(win, { 40 })[40];
    // Border: the truncated window padded with +inf; n valid taps -> sorted element n / 2.
    Func cl = BoundaryConditions::repeat_edge(in, { { 0, W }, { 0, H }, { 0, 3 } });
    Func bmed("median_border");
    std::vector<Expr> bwin;
    for (int r = -4; r <= 4; r++)
        for (int k = -4; k <= 4; k++) {
            Expr xx = x + k, yy = y + r;
            Expr ok = xx >= 0 && xx < W && yy >= 0 && yy < H;
            bwin.push_back(select(ok, cl(xx, yy, c), Float(32).max()));
        }
    std::vector<int> want;
    for (int i = 12; i <= 40; i++)
        want.push_back(i);
    std::vector<Expr> s = sort_network(bwin, want);
    Expr nx = min(x + 4, W - 1) - max(x - 4, 0) + 1, ny = min(y + 4, H - 1) - max(y - 4, 0) + 1;
    std::vector<Expr> pick(s.begin() + 12, s.begin() + 41);
    bmed(x, y, c) = mux(nx * ny / 2 - 12, pick);
    h->main_region = { 4, 4, W - 4, H - 4 };
    h->border_regions = { { 0, 0, W, 4 }, { 0, H - 4, W, H }, { 0, 4, 4, H - 4 },
                          { W - 4, 4, W, H - 4 } };
    bmed.vectorize(x, 4);  // the strips are only 4 wide at the sides
    h->border = Pipeline(bmed);
    if (use_adams) {
        in.set_estimates({ { 0, W }, { 0, H }, { 0, 3 } });
        med.set_estimates({ { 4, W - 8 }, { 4, H - 8 }, { 0, 3 } });
        h->main = Pipeline(med);
        return adams(h->main);
    }
    med.split(y, yo, yi, 16).fuse(yo, c, t).parallel(t).vectorize(x, 8);
    h->main = Pipeline(med);
    return "";
}

// ---- the method interface ----

int hl_run(void *p)
{
    hl_ctx *h = (hl_ctx *)p;
    h->input.set(h->in);
    h->main.realize(h->main_out);
    for (Buffer<float> &b : h->border_out)
        h->border.realize(b);
    if (h->app == BENCH_BLUR)
        write_frame(h, 8, false);
    else if (h->app == BENCH_UNSHARP)
        write_frame(h, 8, true);
    return 0;
}

void hl_destroy(void *p)
{
    delete (hl_ctx *)p;
}

Pipeline *thread_pipe = nullptr;
Param<int> *thread_count = nullptr;

}  // namespace

extern "C" int bench_hl_make(bench_app app, int flags, const bench_img *in,
                             const bench_img *out, bench_method *m)
{
    memset(m, 0, sizeof *m);
    hl_ctx *h = new hl_ctx;
    h->app = app;
    h->in_img = *in;
    h->out_img = *out;
    h->in = wrap(in);
    h->out = wrap(out);
    std::string why;
    bool use_adams = flags & BENCH_HL_ADAMS;
    Target target = jit_target();
    if (flags & BENCH_HL_STRICT)
        target = target.with_feature(Target::StrictFloat);
    try {
        switch (app) {
        case BENCH_BLUR: why = build_blur(h, use_adams); break;
        case BENCH_UNSHARP: why = build_unsharp(h, use_adams); break;
        case BENCH_BILATERAL: why = build_bilateral(h, use_adams); break;
        case BENCH_BGRID: why = build_bgrid(h, use_adams); break;
        case BENCH_MEDIAN: why = build_median(h, use_adams); break;
        default: why = "unknown app";
        }
        if (why.empty()) {
            const region &r = h->main_region;
            h->main_out = crop(h->out, r.x0, r.y0, r.x1, r.y1);
            for (const region &b : h->border_regions)
                h->border_out.push_back(crop(h->out, b.x0, b.y0, b.x1, b.y1));
            quiet_stderr q;  // Halide's storage-folding advice
            h->main.compile_jit(target);
            if (h->border.defined())
                h->border.compile_jit(target);
        }
    } catch (const Halide::Error &e) {
        why = std::string("Halide: ") + e.what();
    }
    if (!why.empty()) {
        snprintf(m->note, sizeof m->note, "%s", why.c_str());
        delete h;
        return -1;
    }
    m->ctx = h;
    m->run = hl_run;
    m->destroy = hl_destroy;
    m->check = 1;
    m->x1 = in->w;
    m->y1 = in->h;
    if (app == BENCH_BGRID)
        snprintf(m->note, sizeof m->note, "splat as a gather (same sums, same order)");
    return 0;
}

// halide_set_num_threads lives in the JIT's shared runtime, not in libHalide: call it from a
// tiny JIT-compiled pipeline.
extern "C" void bench_hl_set_threads(int n)
{
    if (!thread_pipe) {
        thread_count = new Param<int>("n");
        Func f("set_threads");
        f() = Internal::Call::make(Int(32), "halide_set_num_threads", { Expr(*thread_count) },
                                   Internal::Call::Extern);
        thread_pipe = new Pipeline(f);
        thread_pipe->compile_jit(jit_target());
    }
    thread_count->set(n);
    Buffer<int32_t> r = Buffer<int32_t>::make_scalar();
    thread_pipe->realize(r);
}

extern "C" const char *bench_hl_version(void)
{
    return BENCH_HALIDE_VERSION;
}
