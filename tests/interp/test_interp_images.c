/* The interpreter on whole pipelines (docs/language.md Sections 4, 5, 8): boundary modes with
 * indices far outside, `over` ranges with steps, stage variable order and serial scatters,
 * multi-input/multi-output pipelines, 1-D and 4-D images, pipeline scalars, params, zeroing,
 * strided buffers, and plans beside the exact program. Expected values are computed by hand. */
#include "tests/harness/harness.h"
#include "tests/interp/test_interp_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_vec(const ti_image *im, int n, const float *want)
{
    CU_ASSERT_EQUAL_FATAL(im->ext[0] * im->ext[1] * im->ext[2] * im->ext[3], n);
    for (int i = 0; i < n; i++) {
        if (im->data[i] != want[i])
            fprintf(stderr, "\n  element %d: got %g, want %g", i, im->data[i], want[i]);
        CU_ASSERT_EQUAL(im->data[i], want[i]);
    }
}

static void free_all(ti_image *ims, int n)
{
    for (int i = 0; i < n; i++)
        ti_free(&ims[i]);
}

/* ---- boundary modes ---- */

static const char boundary_src[] =
    "const int IDX[10] = {-100, -12, -9, -1, 0, 4, 5, 6, 9, 100};\n"
    "pipeline p(image a[N] boundary clamp, image b[N] boundary mirror, image c[N] boundary wrap,\n"
    "           image d[N] boundary constant(7.5), image m2[Q] boundary mirror,\n"
    "           image m1[R] boundary mirror)\n"
    "    -> (image oa[10], image ob[10], image oc[10], image od[10], image o2[10],\n"
    "        image o1[10]) {\n"
    "    for each (x) of oa as s1 oa[x] = a[IDX[x]];\n"
    "    for each (x) of ob as s2 ob[x] = b[IDX[x]];\n"
    "    for each (x) of oc as s3 oc[x] = c[IDX[x]];\n"
    "    for each (x) of od as s4 od[x] = d[IDX[x]];\n"
    "    for each (x) of o2 as s5 o2[x] = m2[IDX[x]];\n"
    "    for each (x) of o1 as s6 o1[x] = m1[IDX[x]];\n"
    "}\n";

static void test_boundary_1d(void)
{
    const float v5[5] = { 10, 11, 12, 13, 14 }, v2[2] = { 20, 21 }, v1[1] = { 30 };
    ti_image in[6] = { ti_vec(5, v5), ti_vec(5, v5), ti_vec(5, v5), ti_vec(5, v5),
                       ti_vec(2, v2), ti_vec(1, v1) };
    ti_image out[6];
    CU_ASSERT_EQUAL_FATAL(ti_run_src(boundary_src, in, out), 0);
    /* indices: -100 -12 -9 -1 0 4 5 6 9 100 */
    const float clamp[10] = { 10, 10, 10, 10, 10, 14, 14, 14, 14, 14 };
    /* mirror, n = 5, period 8: -1 -> 1, 5 -> 3, 6 -> 2, 9 -> 1, -9 -> 7 -> 1, -12 -> 4 */
    const float mirror[10] = { 14, 14, 11, 11, 10, 14, 13, 12, 11, 14 };
    const float wrap[10] = { 10, 13, 11, 14, 10, 14, 10, 11, 14, 10 };
    const float constant[10] = { 7.5, 7.5, 7.5, 7.5, 10, 14, 7.5, 7.5, 7.5, 7.5 };
    /* mirror, n = 2, period 2: even -> 0, odd -> 1 */
    const float mirror2[10] = { 20, 20, 21, 21, 20, 20, 21, 20, 21, 20 };
    const float mirror1[10] = { 30, 30, 30, 30, 30, 30, 30, 30, 30, 30 };
    assert_vec(&out[0], 10, clamp);
    assert_vec(&out[1], 10, mirror);
    assert_vec(&out[2], 10, wrap);
    assert_vec(&out[3], 10, constant);
    assert_vec(&out[4], 10, mirror2);
    assert_vec(&out[5], 10, mirror1);
    free_all(in, 6);
    free_all(out, 6);
}

/* Per dimension: wrap in both dims of a 2-D image; constant when any one index is outside;
 * clamp on the channel of a 3-D image; mirror far outside in 2-D. */
static const char boundary2_src[] =
    "pipeline p(image w[W, H] boundary wrap, image k[W, H] boundary constant(-1.0),\n"
    "           image c[W, H, C], image m[W, H] boundary mirror)\n"
    "    -> (image ow[W, H], image ok[W, H], image oc[W, H, C], image om[W, H]) {\n"
    "    for each (x, y) of ow as s1 ow[x, y] = w[x - 3 * W, y + 5];\n"
    "    for each (x, y) of ok as s2 ok[x, y] = k[x + 1, y];\n"
    "    for each (x, y, ch) of oc as s3 oc[x, y, ch] = c[x, y, ch - 10] + c[x, y, ch + 10];\n"
    "    for each (x, y) of om as s4 om[x, y] = m[x - 7, y + 2];\n"
    "}\n";

static void test_boundary_2d(void)
{
    ti_image in[4] = { ti_new(2, 3, 2, 1, 1), ti_new(2, 3, 2, 1, 1), ti_new(3, 3, 2, 2, 1),
                       ti_new(2, 3, 2, 1, 1) };
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++) {
            float v = (float)(10 * y + x);
            ti_set(&in[0], x, y, 0, 0, v);
            ti_set(&in[1], x, y, 0, 0, v);
            ti_set(&in[2], x, y, 0, 0, v);
            ti_set(&in[2], x, y, 1, 0, v + 100);
            ti_set(&in[3], x, y, 0, 0, v);
        }
    ti_image out[4];
    CU_ASSERT_EQUAL_FATAL(ti_run_src(boundary2_src, in, out), 0);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++) {
            /* wrap: x - 9 -> x, y + 5 -> (y + 1) mod 2 */
            CU_ASSERT_EQUAL(ti_at(&out[0], x, y, 0, 0), (float)(10 * ((y + 1) % 2) + x));
            CU_ASSERT_EQUAL(ti_at(&out[1], x, y, 0, 0), x == 2 ? -1.0f : (float)(10 * y + x + 1));
            /* clamp on channels: ch - 10 -> 0, ch + 10 -> 1 */
            for (int ch = 0; ch < 2; ch++)
                CU_ASSERT_EQUAL(ti_at(&out[2], x, y, ch, 0), (float)(2 * (10 * y + x) + 100));
        }
    /* mirror, W = 3 (period 4): x - 7 -> {-7, -6, -5} -> {1, 2, 1}; H = 2: y + 2 -> y */
    const int mx[3] = { 1, 2, 1 };
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++)
            CU_ASSERT_EQUAL(ti_at(&out[3], x, y, 0, 0), (float)(10 * y + mx[x]));
    free_all(in, 4);
    free_all(out, 4);
}

/* ---- stages ---- */

static const char over_src[] =
    "param int st = 2;\n"
    "pipeline p(image in[W]) -> (image o1[8], image o2[10], image o3[6], image o4[4, 3],\n"
    "                           image o5[W], image o6[5]) {\n"
    "    for each (x) of o1 over (2 .. 9 step 3) as s1 o1[x] = float(x);\n"
    "    for each (x) of o2 over (-5 .. 100 step 4) as s2 o2[x] = 1.0 + float(x);\n"
    "    for each (x) of o3 over (1 .. 3 step 0) as s3 o3[x] = 1.0;\n"
    "    for each (x, y) of o4 over (1 .. 3 step 2, -4 .. 1) as s4 o4[x, y] = float(x * 10 + y);\n"
    "    for each (x) of o5 over (1 .. W - 1 step st) as s5 o5[x] = x;\n"
    "    for each (x) of o6 over (3 .. 1 step -2) as s6 o6[x] = 5.0;\n"
    "}\n";

static void test_over_ranges(void)
{
    pf_program *p = ti_compile(over_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ti_image in = ti_new(1, 7, 1, 1, 1);
    ti_image out[6];
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(ti_run(p, NULL, 0, &in, out, &err), 0);
    const float o1[8] = { 0, 0, 2, 0, 0, 5, 0, 0 };
    const float o2[10] = { 0, 0, 0, 4, 0, 0, 0, 8, 0, 0 };
    const float o3[6] = { 0, 1, 1, 1, 0, 0 };
    /* o4[x, y], x in {1, 3}, y in {0, 1}; element x + 4y */
    const float o4[12] = { 0, 10, 0, 30, 0, 11, 0, 31, 0, 0, 0, 0 };
    const float o5[7] = { 0, 1, 0, 3, 0, 5, 0 };
    const float o6[5] = { 0 };
    assert_vec(&out[0], 8, o1);
    assert_vec(&out[1], 10, o2);
    assert_vec(&out[2], 6, o3);
    assert_vec(&out[3], 12, o4);
    assert_vec(&out[4], 7, o5);
    assert_vec(&out[5], 5, o6);
    free_all(out, 6);
    /* a param in the step: st = 3 gives 1, 4 */
    const char *params[1] = { "st=3" };
    CU_ASSERT_EQUAL_FATAL(ti_run(p, params, 1, &in, out, &err), 0);
    const float o5b[7] = { 0, 1, 0, 0, 4, 0, 0 };
    assert_vec(&out[4], 7, o5b);
    free_all(out, 6);
    ti_free(&in);
    pf_program_free(p);
}

/* A stage over fewer variables than its image has dimensions writes the rest explicitly; an
 * int value converts to the float element; channels reversed through a 3-D read. */
static const char partial_src[] =
    "pipeline p(image in[W, H, 3]) -> (image a[W, H, 3], image b[W, 2]) {\n"
    "    for each (x, y) of a as s1 {\n"
    "        for (c) of 0 .. 2 { a[x, y, c] = in[x, y, 2 - c] + float(c) * 0.5; }\n"
    "    }\n"
    "    for each (x) of b as s2 { b[x, 0] = x; b[x, 1] = x * 2; }\n"
    "}\n";

static void test_partial_stage_vars(void)
{
    ti_image in = ti_new(3, 2, 2, 3, 1);
    for (int i = 0; i < 12; i++)
        in.data[i] = (float)i;
    ti_image out[2];
    CU_ASSERT_EQUAL_FATAL(ti_run_src(partial_src, &in, out), 0);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 2; x++)
            for (int c = 0; c < 3; c++)
                CU_ASSERT_EQUAL(ti_at(&out[0], x, y, c, 0),
                                ti_at(&in, x, y, 2 - c, 0) + (float)c * 0.5f);
    const float b[4] = { 0, 1, 0, 2 };
    assert_vec(&out[1], 4, b);
    ti_free(&in);
    free_all(out, 2);
}

/* A serial stage runs row by row (x inner, y outer): the float sum of
 *   1e8  1  -1e8
 *   1    1   1
 * is 3 in that order (column order would give 1). Scatters outside the image are dropped. */
static const char serial_src[] =
    "pipeline p(image in[W, H], image v[N]) -> (image acc[1], image hist[4]) {\n"
    "    for each (x, y) of in as splat acc[0] += in[x, y];\n"
    "    for each (i) of v as bins hist[int(v[i] * 4.0)] += 1.0;\n"
    "}\n";

static void test_serial_scatter_order(void)
{
    ti_image in[2] = { ti_new(2, 3, 2, 1, 1), ti_vec(7, (const float[]){ 0.1f, 0.3f, 0.6f, 0.9f,
                                                                         1.0f, -0.5f, 0.95f }) };
    const float g[6] = { 1e8f, 1, -1e8f, 1, 1, 1 };
    memcpy(in[0].data, g, sizeof g);
    ti_image out[2];
    CU_ASSERT_EQUAL_FATAL(ti_run_src(serial_src, in, out), 0);
    CU_ASSERT_EQUAL(out[0].data[0], 3.0f);
    const float hist[4] = { 1, 1, 1, 2 };
    assert_vec(&out[1], 4, hist);
    free_all(in, 2);
    free_all(out, 2);
}

static const char multi_src[] =
    "pipeline p(image a[W, H], image b[W, H]) -> (image s[W, H], image m[W, H, 2]) {\n"
    "    for each (x, y) of s as st1 s[x, y] = a[x, y] + b[x, y];\n"
    "    for each (x, y, c) of m as st2 m[x, y, c] = c == 0 ? a[x, y] * b[x, y] : s[x, y] - 1.0;\n"
    "}\n";

static void test_multi_io(void)
{
    ti_image in[2] = { ti_new(2, 3, 2, 1, 1), ti_new(2, 3, 2, 1, 1) };
    for (int i = 0; i < 6; i++) {
        in[0].data[i] = (float)i;
        in[1].data[i] = (float)(i + 1) * 0.5f;
    }
    ti_image out[2];
    CU_ASSERT_EQUAL_FATAL(ti_run_src(multi_src, in, out), 0);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++) {
            float a = ti_at(&in[0], x, y, 0, 0), b = ti_at(&in[1], x, y, 0, 0);
            CU_ASSERT_EQUAL(ti_at(&out[0], x, y, 0, 0), a + b);
            CU_ASSERT_EQUAL(ti_at(&out[1], x, y, 0, 0), a * b);
            CU_ASSERT_EQUAL(ti_at(&out[1], x, y, 1, 0), a + b - 1.0f);
        }
    free_all(out, 2);
    /* mismatched extents of one size name are refused before running */
    ti_free(&in[1]);
    in[1] = ti_new(2, 3, 3, 1, 1);
    pf_program *p = ti_compile(multi_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_error err;
    CU_ASSERT_EQUAL(ti_run(p, NULL, 0, in, out, &err), -1);
    pf_program_free(p);
    free_all(in, 2);
}

/* 1-D and 4-D intermediates; a 4-D read far outside clamps in every dimension. */
static const char dims_src[] =
    "pipeline p(image in[W]) -> (image out[W]) {\n"
    "    image T[W];\n"
    "    image G[2, 3, W, 2];\n"
    "    for each (i, j, k, l) of G as g G[i, j, k, l] = float(i + 10 * j + 100 * l) + in[k];\n"
    "    for each (x) of T as t\n"
    "        T[x] = sum(sum(sum(G[i, j, x, l], i = 0 .. 1), j = 0 .. 2), l = 0 .. 1);\n"
    "    for each (x) of out as o out[x] = T[x] + G[5, -1, x, 7];\n"
    "}\n";

static void test_1d_4d_images(void)
{
    ti_image in = ti_vec(3, (const float[]){ 0.5f, 1.0f, 2.0f });
    ti_image out;
    CU_ASSERT_EQUAL_FATAL(ti_run_src(dims_src, &in, &out), 0);
    /* T = 726 + 12 in; G[1, 0, x, 1] = 101 + in */
    const float want[3] = { 833.5f, 840.0f, 853.0f };
    assert_vec(&out, 3, want);
    ti_free(&in);
    ti_free(&out);
}

static const char scalars_src[] =
    "param int k = 3;\n"
    "param bool flag = false;\n"
    "param float gain = 1.5;\n"
    "float twice(float v) { return v * 2.0; }\n"
    "pipeline p(image in[W]) -> (image out[6]) {\n"
    "    int n = W * 2;\n"
    "    float s = sum(float(i), i = 0 .. n);\n"
    "    bool big = s > 10.0;\n"
    "    image T[W];\n"
    "    float t = twice(s) + gain;\n"
    "    for each (x) of T over (0 .. 0) as pre T[x] = 5.0;\n"
    "    for each (x) of out as st\n"
    "        out[x] = x == 0 ? float(n) : x == 1 ? s : x == 2 ? (big ? 1.0 : 0.0)\n"
    "               : x == 3 ? float(k) + (flag ? 100.0 : 0.0) : x == 4 ? t : T[1] + T[0];\n"
    "}\n";

static void test_scalars_and_params(void)
{
    pf_program *p = ti_compile(scalars_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ti_image in = ti_new(1, 3, 1, 1, 1);
    ti_image out;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(ti_run(p, NULL, 0, &in, &out, &err), 0);
    const float want[6] = { 6, 21, 1, 3, 43.5f, 5 };
    assert_vec(&out, 6, want);
    ti_free(&out);
    const char *params[3] = { "k=-7", "flag=true", "gain=0.25" };
    CU_ASSERT_EQUAL_FATAL(ti_run(p, params, 3, &in, &out, &err), 0);
    const float want2[6] = { 6, 21, 1, 93, 42.25f, 5 };
    assert_vec(&out, 6, want2);
    ti_free(&out);
    ti_free(&in);
    pf_program_free(p);
}

static const char median_src[] =
    "float med3(float a, float b, float c) {\n"
    "    float v[3]; v[0] = a; v[1] = b; v[2] = c; return median(v, 3);\n"
    "}\n"
    "pipeline p(image in[W]) -> (image o3[W], image o5[W]) {\n"
    "    for each (x) of o3 as s1 o3[x] = med3(in[x - 1], in[x], in[x + 1]);\n"
    "    for each (x) of o5 as s2 {\n"
    "        float v[9];\n"
    "        int n = 0;\n"
    "        for (d) of -2 .. 2 as taps {\n"
    "            if (x + d >= 0 && x + d < W) { v[n] = in[x + d]; n += 1; }\n"
    "        }\n"
    "        o5[x] = median(v, n);\n"
    "    }\n"
    "}\n";

static void test_median_filter(void)
{
    ti_image in = ti_vec(6, (const float[]){ 5, 1, 4, 2, 8, 3 });
    ti_image out[2];
    CU_ASSERT_EQUAL_FATAL(ti_run_src(median_src, &in, out), 0);
    const float m3[6] = { 5, 4, 2, 4, 3, 3 };
    const float m5[6] = { 4, 4, 4, 3, 4, 3 };
    assert_vec(&out[0], 6, m3);
    assert_vec(&out[1], 6, m5);
    ti_free(&in);
    free_all(out, 2);
}

/* ---- buffers, zeroing, errors ---- */

static const char scatter_src[] =
    "pipeline p(image in[W, H]) -> (image out[W, H], image tot[1]) {\n"
    "    for each (x, y) of out over (1 .. 1, 0 .. H) as s1 out[x, y] = in[x, y] + 1.0;\n"
    "    for each (x, y) of in as s2 tot[0] += in[x, y];\n"
    "}\n";

/* Caller buffers with row padding: only elements are touched, unwritten ones become 0, and a
 * second run on the same buffers starts from zero again (the scatter total is not doubled). */
static void test_strided_buffers_and_rerun(void)
{
    pf_program *p = ti_compile(scatter_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    enum { W = 3, H = 2, S = 8 };
    float in[S * H], out[S * H], tot[1] = { 42 };
    for (int i = 0; i < S * H; i++) {
        in[i] = (float)i;
        out[i] = -1.0f;
    }
    pf_buffer ib = { in, 2, { W, H, 1, 1 }, { 1, S, 0, 0 } };
    pf_buffer ob[2] = { { out, 2, { W, H, 1, 1 }, { 1, S, 0, 0 } },
                        { tot, 1, { 1, 1, 1, 1 }, { 1, 0, 0, 0 } } };
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_binding b;
    pf_error err;
    const int64_t ext[1][PF_MAX_DIMS] = { { W, H, 1, 1 } };
    CU_ASSERT_EQUAL_FATAL(pf_bind(p, &pv, ext, &b, &err), 0);
    for (int run = 0; run < 2; run++) {
        CU_ASSERT_EQUAL_FATAL(pf_interp_run(p, &pv, NULL, &b, &ib, ob, &err), 0);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < S; x++) {
                float want = x >= W ? -1.0f : x == 1 ? in[y * S + x] + 1.0f : 0.0f;
                CU_ASSERT_EQUAL(out[y * S + x], want);
            }
        CU_ASSERT_EQUAL(tot[0], 0 + 1 + 2 + 8 + 9 + 10);
    }
    /* a buffer whose extents differ from the binding is refused, naming the image */
    ob[0].extent[0] = W + 1;
    CU_ASSERT_EQUAL(pf_interp_run(p, &pv, NULL, &b, &ib, ob, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "out"));
    pf_binding_free(&b);
    pf_params_free(&pv);
    pf_program_free(p);
}

static const char approx_src[] =
    "pipeline p(image in[W]) -> (image out[W]) {\n"
    "    for each (x) of out as s {\n"
    "        float t = 0.0;\n"
    "        for (i) of 0 .. 1 as inner { t += in[x]; }\n"
    "        out[x] = t;\n"
    "    }\n"
    "}\n";

/* Runs p on in = {1, 2} under plan (NULL: exactly); returns the status, *out its output. */
static int run_plan(const pf_program *p, const pf_plan *plan, float out[2], pf_error *err)
{
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_binding b;
    const int64_t ext[1][PF_MAX_DIMS] = { { 2, 1, 1, 1 } };
    float in[2] = { 1, 2 };
    CU_ASSERT_EQUAL_FATAL(pf_bind(p, &pv, ext, &b, err), 0);
    pf_buffer ib = { in, 1, { 2, 1, 1, 1 }, { 1, 0, 0, 0 } };
    pf_buffer ob = { out, 1, { 2, 1, 1, 1 }, { 1, 0, 0, 0 } };
    int rc = pf_interp_run(p, &pv, plan, &b, &ib, &ob, err);
    pf_binding_free(&b);
    pf_params_free(&pv);
    return rc;
}

/* Approximations come from a plan, never from the program: the same program runs exactly and
 * perforated side by side, and a plan of another program is refused. */
static void test_plan_runs_beside_exact(void)
{
    pf_program *p = ti_compile(approx_src), *q = ti_compile(approx_src);
    CU_ASSERT_FATAL(p && q);
    pf_error err;
    pf_plan *plan = pf_plan_parse(p, "inner step 2\n", NULL, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    float out[2];
    CU_ASSERT_EQUAL(run_plan(p, NULL, out, &err), 0);
    CU_ASSERT(out[0] == 2.0f && out[1] == 4.0f);
    CU_ASSERT_EQUAL(run_plan(p, plan, out, &err), 0);
    CU_ASSERT(out[0] == 1.0f && out[1] == 2.0f);  /* one iteration of two */
    CU_ASSERT_EQUAL(run_plan(p, NULL, out, &err), 0);
    CU_ASSERT(out[0] == 2.0f && out[1] == 4.0f);
    CU_ASSERT_EQUAL(run_plan(q, plan, out, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "plan is of another program"));
    pf_plan_free(plan);
    pf_program_free(q);
    pf_program_free(p);
}

PF_TEST_SUITE(interp_images,
              PF_TEST(test_boundary_1d), PF_TEST(test_boundary_2d), PF_TEST(test_over_ranges),
              PF_TEST(test_partial_stage_vars), PF_TEST(test_serial_scatter_order),
              PF_TEST(test_multi_io), PF_TEST(test_1d_4d_images),
              PF_TEST(test_scalars_and_params), PF_TEST(test_median_filter),
              PF_TEST(test_strided_buffers_and_rerun), PF_TEST(test_plan_runs_beside_exact))
