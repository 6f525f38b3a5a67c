/* The comparators of bench_pipelines: what a user who does not use perfora would run instead
 * (plain C, OpenCV 4.6, Halide 14), each bound to one input and one output image so that a
 * timed call does only the work. Plain C (plain_c.c) is always built; OpenCV (cmp_opencv.cpp)
 * and Halide (cmp_halide.cpp) only when CMake finds them, and then define BENCH_HAVE_OPENCV /
 * BENCH_HAVE_HALIDE for the driver. Shared by C and C++. */
#ifndef PF_BENCH_CMP_H
#define PF_BENCH_CMP_H

#ifdef __cplusplus
extern "C" {
#endif

/* A planar float image: sample (x, y, c) at data[c * plane + y * stride + x] (pf_image's
 * layout), values nominally in [0, 1]. */
typedef struct bench_img {
    float *data;
    int w, h, c;
    long stride, plane;
} bench_img;

/* The pipelines compared (the apps/ files). ORDER APPS: keep in step with bench_app_names. */
typedef enum bench_app {
    BENCH_BLUR,       /* apps/blur.pf: 17-tap separable Gaussian, 8-pixel black frame */
    BENCH_UNSHARP,    /* apps/unsharp_mask.pf: 3 in - 2 blur, interior-only blur */
    BENCH_BILATERAL,  /* apps/bilateral_filter.pf: 9x9, luma range term, uncentred table */
    BENCH_BGRID,      /* apps/bilateral_grid.pf: YUV grid, 5-tap blurs y, x, z */
    BENCH_MEDIAN,     /* apps/median.pf: 9x9, truncated window, upper middle */
    BENCH_APP_COUNT
} bench_app;

/* One comparator, ready to run. `run` does the timed work (input -> output); `finish`, when not
 * NULL, moves the result into the float output for the agreement check (untimed: e.g. OpenCV's
 * 8-bit median back to float). */
typedef struct bench_method {
    void *ctx;
    int (*run)(void *ctx);
    void (*finish)(void *ctx);
    void (*destroy)(void *ctx);
    /* The pixel rectangle [x0, x1) x [y0, y1) where it computes what perfora computes (up to
     * float rounding); check = 0: it computes something else (no agreement check). */
    int check, x0, y0, x1, y1;
    /* Why it is not available (when make fails), or how its semantics differ. */
    char note[320];
} bench_method;

/* Each fills *m and returns 0, or returns -1 with the reason in m->note. `in` and `out` are
 * W x H x 3 and must outlive the method. */
int bench_plainc_make(bench_app app, int naive, const bench_img *in, const bench_img *out,
                      bench_method *m);
/* The paper's blur variant (grid (4, 1) on demand, then (4, 4), bilinear) written by hand in
 * plain C: what perforation of plain loops gives (issue 7's 5.6-6x over plain exact C). */
int bench_plainc_blur_variant_make(const bench_img *in, const bench_img *out, bench_method *m);
int bench_cv_make(bench_app app, const bench_img *in, const bench_img *out, bench_method *m);
/* flags 0: the hand schedule; BENCH_HL_ADAMS: the Adams2019 autoscheduler (parallelism =
 * threads of the machine); with BENCH_HL_STRICT: compiled with Halide's strict_float target
 * feature. By default Halide lets LLVM reassociate and contract float arithmetic (its
 * CodeGen_LLVM sets the reassoc and contract fast-math flags on every float operation), which
 * perfora's exact code never does. The Halide pipeline is JIT-compiled here, not in run. */
#define BENCH_HL_ADAMS 1
#define BENCH_HL_STRICT 2
int bench_hl_make(bench_app app, int flags, const bench_img *in, const bench_img *out,
                  bench_method *m);

/* Worker threads of every later run (OpenCV: cv::setNumThreads; Halide: its JIT runtime's
 * halide_set_num_threads). */
void bench_cv_set_threads(int n);
void bench_hl_set_threads(int n);
/* The library versions, for the table header ("4.6.0", "14.0.0"). */
const char *bench_cv_version(void);
const char *bench_hl_version(void);

/* The blur's 17 weights as apps/blur.pf folds them (binary32: g(k) = exp(-k^2 / 32), divided by
 * their sum taken in ascending k). */
void bench_blur_taps(float a[17]);

static inline void bench_method_free(bench_method *m)
{
    if (m->destroy && m->ctx)
        m->destroy(m->ctx);
    m->ctx = 0;
}

#ifdef __cplusplus
}
#endif

#endif
