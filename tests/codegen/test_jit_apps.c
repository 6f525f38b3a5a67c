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

static void compare_backends(const char *app, pf_image *in)
{
    pf_program *prog = cg_load_app(app);
    pf_param_values params;
    pf_params_init(&params, prog);
    cg_run ref;
    CU_ASSERT_EQUAL_FATAL(cg_run_backend(prog, &params, PF_BACKEND_INTERP, false, &in, 1, &ref),
                          0);
    const pf_backend backends[] = { PF_BACKEND_JIT, PF_BACKEND_C };
    for (int b = 0; b < 2; b++) {
        cg_run got;
        int rc = cg_run_backend(prog, &params, backends[b], false, &in, 1, &got);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc != 0)
            continue;
        for (int i = 0; i < ref.n_out; i++) {
            double d = cg_max_abs_diff(ref.out[i], got.out[i]);
            printf("\n    %-16s %4dx%-4d x%d %-3s max|diff| %-8.2g interp %7.1f ms, %s %6.2f ms",
                   app, in->width, in->height, in->channels, pf_backend_name(backends[b]), d,
                   ref.ms, pf_backend_name(backends[b]), got.ms);
            CU_ASSERT(d <= 1e-5);
        }
        cg_run_free(&got);
    }
    cg_run_free(&ref);
    pf_params_free(&params);
    pf_program_free(prog);
}

/* Apps whose interpreter run on 820x614 takes minutes run on the small photos plus a crop. */
static void on_photos(const char *app, bool all_sizes)
{
    for (size_t i = 0; i < sizeof photos / sizeof *photos; i++) {
        bool big = strstr(photos[i], "820x614") != NULL;
        if (big && !all_sizes)
            continue;
        pf_image *in = cg_load_photo(photos[i], 3);
        compare_backends(app, in);
        pf_image_free(in);
    }
}

static void on_odd_sizes(const char *app, int channels)
{
    static const int sizes[][2] = { { 1, 1 }, { 7, 3 }, { 1000, 1 }, { 3, 17 }, { 33, 29 } };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        pf_image *in = cg_synthetic(sizes[i][0], sizes[i][1], channels, 17u + (unsigned)i);
        compare_backends(app, in);
        pf_image_free(in);
    }
}

static void test_blur(void)
{
    on_photos("blur", true);
    on_odd_sizes("blur", 3);
    on_odd_sizes("blur", 1);
    on_odd_sizes("blur", 4);
}

static void test_unsharp_mask(void)
{
    on_photos("unsharp_mask", true);
    on_odd_sizes("unsharp_mask", 1);
    on_odd_sizes("unsharp_mask", 4);
}

static void test_demosaic(void)
{
    on_photos("demosaic", true);
    on_odd_sizes("demosaic", 3);
}

static void test_bilateral_grid(void)
{
    on_photos("bilateral_grid", true);
    on_odd_sizes("bilateral_grid", 3);
}

static void test_bilateral_filter(void)
{
    on_photos("bilateral_filter", false);
    on_odd_sizes("bilateral_filter", 3);
}

static void test_median(void)
{
    on_photos("median", false);
    on_odd_sizes("median", 3);
    on_odd_sizes("median", 1);
}

static void test_artistic_blur(void)
{
    on_photos("artistic_blur", false);
    on_odd_sizes("artistic_blur", 3);
}

static void test_mosaic(void)
{
    on_photos("mosaic", true);
}

PF_TEST_SUITE(codegen_apps, PF_TEST(test_blur), PF_TEST(test_unsharp_mask),
              PF_TEST(test_demosaic), PF_TEST(test_bilateral_grid),
              PF_TEST(test_bilateral_filter), PF_TEST(test_median),
              PF_TEST(test_artistic_blur), PF_TEST(test_mosaic))
