/* pass_bands: the bilateral grid's splat runs in parallel bands of rows that start where its
 * row index changes, with results identical bit for bit to the serial loop; scatters whose
 * cells are not told apart by the row, or loops that read what they store elsewhere, stay
 * serial; a key that is not monotone when the code runs falls back to the serial loop. */
#include "codegen/compile.h"
#include "lang/lang.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_splat_runs_in_bands(void)
{
    pf_program *p = cg_load_app("bilateral_grid");
    char *ir = cg_ir_dump(p, "");
    const char *splat = strstr(ir, "// stage populate_b_grid_loop");
    CU_ASSERT_PTR_NOT_NULL_FATAL(splat);
    const char *bands = strstr(splat, "parallel for<bands> band_");
    const char *next = strstr(splat, "// stage blur_y_loop");
    CU_ASSERT_FATAL(bands && next && bands < next);
    /* the key is the scatter's row index; the serial loop stays as the fallback */
    CU_ASSERT_PTR_NOT_NULL(strstr(splat, "let key_"));
    CU_ASSERT(strstr(splat, "i32(round((f32(t_") < bands);
    const char *fallback = strstr(bands, "else\n");
    CU_ASSERT_FATAL(fallback && fallback < next);
    CU_ASSERT_PTR_NOT_NULL(strstr(fallback, "for y_"));
    free(ir);
    /* asked with 'parallel', the splat is banded; without it, serial */
    ir = cg_ir_dump(p, "populate_b_grid_loop exec root\n");
    CU_ASSERT_PTR_NULL(strstr(ir, "<bands>"));
    free(ir);
    pf_program_free(p);
}

/* prog with and without pass_bands on `in`: identical outputs; the pass's counts. */
static void expect_same(const pf_program *p, pf_image *in, int banded, int refused,
                        const char *what)
{
    pf_compile_options o[2] = { { 0 }, { 0 } };
    o[1].no_bands = true;
    pf_variant_stats st[2] = { { 0 }, { 0 } };
    double d = cg_diff_options(p, in, o, st);
    if (d != 0)
        printf("\n    %s: max |bands - serial| = %g", what, d);
    CU_ASSERT_EQUAL(d, 0);
    CU_ASSERT_EQUAL(st[0].bands_parallel, banded);
    CU_ASSERT_EQUAL(st[0].bands_refused, refused);
    CU_ASSERT_EQUAL(st[1].bands_parallel + st[1].bands_refused, 0);
}

static void test_bands_change_no_result(void)
{
    pf_program *p = cg_load_app("bilateral_grid");
    pf_image *photo = cg_load_photo("natural_0_820x614.png", 3);
    expect_same(p, photo, 1, 0, "photo");
    pf_image_free(photo);
    static const int sizes[][2] = { { 130, 67 }, { 67, 130 }, { 9, 17 }, { 7, 3 }, { 1, 1 },
                                    { 300, 40 } };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        pf_image *in = cg_synthetic(sizes[i][0], sizes[i][1], 3, 5u + (unsigned)i);
        char what[32];
        snprintf(what, sizeof what, "%dx%d", sizes[i][0], sizes[i][1]);
        expect_same(p, in, 1, 0, what);
        pf_image_free(in);
    }
    pf_program_free(p);
}

/* A histogram of rows: hist[k, (expr of y)] += in[x, y, 0] for a few row keys. */
static pf_program *row_histogram(const char *key, const char *extra)
{
    char src[1024];
    snprintf(src, sizeof src,
             "pipeline p(image in[W, H, 1]) -> (image out[8, 40, 1]) {\n"
             "    image hist[8, 40] boundary constant(0.0);\n"
             "    for each (x, y) of in as splat {\n"
             "        int k = int(in[x, y, 0] * 7.99);\n"
             "        int r = %s;\n"
             "        hist[k, r] += in[x, y, 0] * 0.37 + float(x) * 0.001;\n"
             "        %s\n"
             "    }\n"
             "    for each (x, y, c) of out as copy\n"
             "        out[x, y, c] = hist[x, y];\n"
             "}\n",
             key, extra);
    pf_error err;
    pf_program *p = pf_compile_string("hist.pf", src, &err);
    if (!p)
        fprintf(stderr, "\n    %s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

/* Each key's histogram gets its bands (the pass applies) and the serial result. */
static void expect_keys_banded(pf_image *in, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        pf_program *p = row_histogram(keys[i], "");
        expect_same(p, in, 1, 0, keys[i]);
        pf_program_free(p);
    }
}

static void test_keys_that_band(void)
{
    pf_image *in = cg_synthetic(61, 400, 1, 7u);
    static const char *keys[] = {
        "y / 3",                  /* runs of 3 */
        "y / 37",                 /* runs longer than a band */
        "(H - 1 - y) / 11",       /* decreasing */
        "int(floor(float(y) / 2.5))",
        "min(y, 7) + 30",         /* one long run at the end */
        "max(y - 390, 0)",        /* ... at the start */
        "y / 500",                /* a single key: one band takes every row */
    };
    expect_keys_banded(in, keys, sizeof keys / sizeof *keys);
    pf_image_free(in);
}

/* Not monotone when run: the bands are built into the code, the run takes the serial loop. */
static void test_unordered_key_runs_serially(void)
{
    pf_image *in = cg_synthetic(41, 60, 1, 8u);
    static const char *keys[] = { "(y * 7) % 5", "y % 2", "y / 3 % 4 + (y / 30) * 4" };
    expect_keys_banded(in, keys, sizeof keys / sizeof *keys);
    pf_image_free(in);
}

static void test_loops_that_stay_serial(void)
{
    pf_image *in = cg_synthetic(29, 31, 1, 9u);
    static const struct { const char *key, *extra, *why; } cases[] = {
        { "int(in[x, y, 0] * 39.0)", "", "data-dependent row" },
        { "x % 40", "", "row from x" },
        { "y / 4", "hist[k, r + 1] += 1.0;", "a second cell row" },
        { "y / 4", "float z = hist[k, r - 1]; hist[k, r] += z * 0.5;", "reads another row" },
        { "7", "", "a constant row" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pf_program *p = row_histogram(cases[i].key, cases[i].extra);
        expect_same(p, in, 0, 1, cases[i].why);
        pf_program_free(p);
    }
    pf_image_free(in);
}

PF_TEST_SUITE(codegen_bands, PF_TEST(test_splat_runs_in_bands),
              PF_TEST(test_bands_change_no_result), PF_TEST(test_keys_that_band),
              PF_TEST(test_unordered_key_runs_serially), PF_TEST(test_loops_that_stay_serial))
