/* The JIT and C backends against the reference interpreter on every app (issue 4: max abs
 * difference <= 1e-5 on every bundled photo, on odd sizes, and on 1- and 4-channel inputs
 * where the app allows). Interpreter outputs are computed once per (app, input) and shared by
 * the backends. */
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <string.h>

static const char *photos[] = {
    "man_made_1_256x192.png", "natural_29_256x192.png", "people_0_256x192.png",
    "man_made_55_820x614.png", "natural_0_820x614.png", "people_56_820x614.png",
};

/* One app: the interpreter, the JIT and the C backend each compiled once, then run on every
 * input (compiling per input would dominate the suite's time). */
typedef struct app_variants {
    pf_program *prog;
    pf_param_values params;
    pf_variant *v[3];  /* interp, jit, c */
} app_variants;

static const pf_backend backends[3] = { PF_BACKEND_INTERP, PF_BACKEND_JIT, PF_BACKEND_C };

static void open_app(app_variants *a, const char *app)
{
    a->prog = cg_load_app(app);
    pf_params_init(&a->params, a->prog);
    for (int b = 0; b < 3; b++) {
        pf_compile_options o = { 0 };
        o.backend = backends[b];
        a->v[b] = cg_compile(a->prog, &a->params, NULL, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a->v[b]);
    }
}

static void close_app(app_variants *a)
{
    for (int b = 0; b < 3; b++)
        pf_variant_free(a->v[b]);
    pf_params_free(&a->params);
    pf_program_free(a->prog);
}

static void compare_on(app_variants *a, pf_image *in)
{
    cg_run ref;
    CU_ASSERT_EQUAL_FATAL(cg_run_variant(a->v[0], a->prog, &a->params, &in, 1, &ref), 0);
    for (int b = 1; b < 3; b++) {
        cg_run got;
        int rc = cg_run_variant(a->v[b], a->prog, &a->params, &in, 1, &got);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc != 0)
            continue;
        for (int i = 0; i < ref.n_out; i++) {
            double d = cg_max_abs_diff(ref.out[i], got.out[i]);
            printf("\n    %-16s %4dx%-4d x%d %-3s max|diff| %-8.2g interp %7.1f ms, %s %6.2f ms",
                   a->prog->name, in->width, in->height, in->channels,
                   pf_backend_name(backends[b]), d, ref.ms, pf_backend_name(backends[b]),
                   got.ms);
            CU_ASSERT(d <= 1e-5);
        }
        cg_run_free(&got);
    }
    cg_run_free(&ref);
}

/* Apps whose interpreter run on 820x614 takes minutes (artistic blur: ~80 s, median ~12 s)
 * run on the 256x192 photos only. */
static void on_photos(app_variants *a, bool all_sizes)
{
    for (size_t i = 0; i < sizeof photos / sizeof *photos; i++) {
        bool big = strstr(photos[i], "820x614") != NULL;
        if (big && !all_sizes)
            continue;
        pf_image *in = cg_load_photo(photos[i], 3);
        compare_on(a, in);
        pf_image_free(in);
    }
}

static void on_odd_sizes(app_variants *a, int channels)
{
    static const int sizes[][2] = { { 1, 1 }, { 7, 3 }, { 1000, 1 }, { 3, 17 }, { 33, 29 } };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        pf_image *in = cg_synthetic(sizes[i][0], sizes[i][1], channels, 17u + (unsigned)i);
        compare_on(a, in);
        pf_image_free(in);
    }
}

static void check_app(const char *app, bool all_sizes, const int *channels, int n_channels)
{
    app_variants a;
    open_app(&a, app);
    on_photos(&a, all_sizes);
    for (int i = 0; i < n_channels; i++)
        on_odd_sizes(&a, channels[i]);
    close_app(&a);
}

static void test_blur(void)
{
    check_app("blur", true, (const int[]){ 3, 1, 4 }, 3);
}

static void test_unsharp_mask(void)
{
    check_app("unsharp_mask", true, (const int[]){ 1, 4 }, 2);
}

static void test_demosaic(void)
{
    check_app("demosaic", true, (const int[]){ 3 }, 1);
}

static void test_bilateral_grid(void)
{
    check_app("bilateral_grid", true, (const int[]){ 3 }, 1);
}

static void test_bilateral_filter(void)
{
    check_app("bilateral_filter", false, (const int[]){ 3 }, 1);
}

static void test_median(void)
{
    check_app("median", false, (const int[]){ 3, 1 }, 2);
}

static void test_artistic_blur(void)
{
    check_app("artistic_blur", false, (const int[]){ 3 }, 1);
}

static void test_mosaic(void)
{
    check_app("mosaic", true, NULL, 0);
}

PF_TEST_SUITE(codegen_apps, PF_TEST(test_blur), PF_TEST(test_unsharp_mask),
              PF_TEST(test_demosaic), PF_TEST(test_bilateral_grid),
              PF_TEST(test_bilateral_filter), PF_TEST(test_median),
              PF_TEST(test_artistic_blur), PF_TEST(test_mosaic))
