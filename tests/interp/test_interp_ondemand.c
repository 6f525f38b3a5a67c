/* On-demand reconstruction in the interpreter (docs/perforation.md §4), against values computed
 * here from §4's formulas: the downsampled storage at J, the writer's own reads and compound
 * writes, boundary modes applied first, off-lattice reads giving 0, linear interpolation nested
 * with dimension 1 outermost, nearest's tie rule, channels from the reference image, and the
 * refusals. No runtime function is called for on-demand images (the table here fails every
 * call), except the store reconstruction of an output. */
#include "tests/interp/test_interp_approx_util.h"

#include "base/strbuf.h"
#include "interp/interp_internal.h"

static int recon_calls;

static int no_importance(const pf_buffer *r, const int64_t *lo, const int64_t *st, int32_t n1,
                         int32_t n2, float f, float s, float *m, float *x)
{
    (void)r, (void)lo, (void)st, (void)n1, (void)n2, (void)f, (void)s, (void)m, (void)x;
    return -1;
}

static int no_coarse(int32_t n1, int32_t n2, int32_t k, float *m)
{
    (void)n1, (void)n2, (void)k, (void)m;
    return -1;
}

static int no_refine(const pf_buffer *v, int32_t k, float f, float *m, float *x)
{
    (void)v, (void)k, (void)f, (void)m, (void)x;
    return -1;
}

static int count_recon(const pf_buffer *v, const pf_recon_spec *s, const float *m,
                       const float *x)
{
    (void)v, (void)s, (void)m, (void)x;
    recon_calls++;
    return 0;
}

static int no_copy(const pf_buffer *v, int32_t k, const int64_t *lo, const int64_t *st,
                   const pf_buffer *r, int32_t c)
{
    (void)v, (void)k, (void)lo, (void)st, (void)r, (void)c;
    return -1;
}

static const pf_approx_runtime od_rt = { no_importance, no_coarse, no_refine, count_recon,
                                         no_copy };

/* §4 step 3 for one dimension: (r == 0) ? a : (1 - w) * a + w * b, w = float(r) / float(s). */
static float lerp4(float a, float b, int r, int s)
{
    if (r == 0)
        return a;
    float w = (float)r / (float)s;
    float wa = (1.0f - w) * a;
    float wb = w * b;
    return wa + wb;
}

/* ---- 1-D ---- */

static const char src_1d[] =
    "pipeline p(image in[W]) -> (image out[W]) {\n"
    "    image A[W];\n"
    "    for each (x) of A as s1 { A[x] = float(x * x); A[x] += 1.0; }\n"
    "    for each (x) of out as s2 out[x] = A[x];\n"
    "}\n";

/* W = 11, grid 4: S = {A[0], A[4], A[8]} = {1, 17, 65}; q1 is clamped to 2. */
static void test_linear_1d(void)
{
    for (int marked = 0; marked < 2; marked++) {
        pf_program *p = ta_compile(src_1d);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        ta_grid(p, "s1", 4, 1, 1, PF_RECON_LINEAR)->on_demand = true;
        if (marked)
            CU_ASSERT_EQUAL(ta_mark_on_demand_reads(p, "s1"), 1);
        ta_image in = ta_new(1, 11, 1, 1);
        recon_calls = 0;
        ta_image out = ta_run1(p, &in, &od_rt);
        const float S[3] = { 1.0f, 17.0f, 65.0f };
        int ok = 1;
        for (int x = 0; x < 11; x++) {
            int q = x / 4, r = x % 4, q1 = q + 1 < 3 ? q + 1 : 2;
            ok &= out.data[x] == lerp4(S[q], S[q1], r, 4);
        }
        CU_ASSERT(ok);
        CU_ASSERT_EQUAL(out.data[5], 0.75f * 17.0f + 0.25f * 65.0f);
        CU_ASSERT_EQUAL(out.data[10], 65.0f);
        CU_ASSERT_EQUAL(recon_calls, 0);
        ta_free(&out);
        ta_free(&in);
        pf_program_free(p);
    }
}

/* Nearest: q while 2r <= s (a tie goes to the lower sample), else q1. */
static void test_nearest_1d(void)
{
    pf_program *p = ta_compile(src_1d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ta_grid(p, "s1", 4, 1, 1, PF_RECON_NEAREST)->on_demand = true;
    ta_image in = ta_new(1, 11, 1, 1);
    ta_image out = ta_run1(p, &in, &od_rt);
    const float want[11] = { 1, 1, 1, 17, 17, 17, 17, 65, 65, 65, 65 };
    CU_ASSERT(memcmp(out.data, want, sizeof want) == 0);
    ta_free(&out);
    ta_free(&in);
    pf_program_free(p);
}

/* A stepped writer: lattice x = 1, 3, .., 9 (n = 5), grid 2 stores j = 0, 2, 4 (x = 1, 5, 9).
 * Even x is off the lattice (0); boundary modes apply before the lattice. */
static void test_lattice_and_boundary(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W]) -> (image out[W], image o2[W], image o3[W]) {\n"
        "    image A[W] boundary mirror;\n"
        "    image B[W] boundary constant(7.0);\n"
        "    for each (x) of A over (1 .. W - 2 step 2) as s1 A[x] = float(x);\n"
        "    for each (x) of B as s2 B[x] = float(x);\n"
        "    for each (x) of out as s3 out[x] = A[x];\n"
        "    for each (x) of o2 as s4 o2[x] = A[x - 4];\n"
        "    for each (x) of o3 as s5 o3[x] = B[x - 3];\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ta_grid(p, "s1", 2, 1, 1, PF_RECON_LINEAR)->on_demand = true;
    ta_grid(p, "s2", 3, 1, 1, PF_RECON_NEAREST)->on_demand = true;
    ta_image in = ta_new(1, 11, 1, 1), outs[3];
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(ta_run(p, &in, outs, &od_rt, &err), 0);
    /* S = {1, 5, 9}: x = 3 (j = 1) is halfway between 1 and 5, x = 7 between 5 and 9 */
    const float want[11] = { 0, 1, 0, 3, 0, 5, 0, 7, 0, 9, 0 };
    CU_ASSERT(memcmp(outs[0].data, want, sizeof want) == 0);
    /* mirror: A[-4] = A[4] (off the lattice), A[-3] = A[3], A[-1] = A[1] */
    const float want2[11] = { 0, 3, 0, 1, 0, 1, 0, 3, 0, 5, 0 };
    CU_ASSERT(memcmp(outs[1].data, want2, sizeof want2) == 0);
    /* B: constant 7 outside; inside nearest of S = {0, 3, 6, 9}: B[0..7] = 0 0 3 3 3 6 6 6 */
    const float want3[11] = { 7, 7, 7, 0, 0, 3, 3, 3, 6, 6, 6 };
    CU_ASSERT(memcmp(outs[2].data, want3, sizeof want3) == 0);
    for (int i = 0; i < 3; i++)
        ta_free(&outs[i]);
    ta_free(&in);
    pf_program_free(p);
}

/* ---- 2-D: the nesting order ---- */

static float a_value(int x, int y)
{
    return sinf(0.7f * (float)x + 0.3f) * expf(0.2f * (float)y) + 0.01f * (float)(x * y);
}

static void test_linear_2d_nesting(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    image A[W, H];\n"
        "    for each (x, y) of A as s1 A[x, y] = in[x, y];\n"
        "    for each (x, y) of out as s2 out[x, y] = A[x, y];\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ta_grid(p, "s1", 3, 2, 1, PF_RECON_LINEAR)->on_demand = true;
    enum { W = 11, H = 8, NX = 4, NY = 4 };
    ta_image in = ta_new(2, W, H, 1);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            *ta_at(&in, x, y, 0) = a_value(x, y);
    ta_image out = ta_run1(p, &in, &od_rt);
    int ok = 1;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int qx = x / 3, rx = x % 3, qx1 = qx + 1 < NX ? qx + 1 : NX - 1;
            int qy = y / 2, ry = y % 2, qy1 = qy + 1 < NY ? qy + 1 : NY - 1;
            float a = lerp4(a_value(3 * qx, 2 * qy), a_value(3 * qx, 2 * qy1), ry, 2);
            float b = lerp4(a_value(3 * qx1, 2 * qy), a_value(3 * qx1, 2 * qy1), ry, 2);
            float want = rx == 0 ? a : lerp4(a, b, rx, 3);
            ok &= memcmp(ta_at(&out, x, y, 0), &want, sizeof want) == 0;
        }
    CU_ASSERT(ok);
    ta_free(&out);
    ta_free(&in);
    pf_program_free(p);
}

/* Channels >= c come from the reference at the read's coordinates; channel 0 interpolates. */
static void test_channels_from_reference(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
        "    image A[W, H, 3];\n"
        "    for each (x, y, c) of A as s1 A[x, y, c] = in[x, y, c] * 2.0;\n"
        "    for each (x, y, c) of out as s2 out[x, y, c] = A[x + 1, y, c];\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_stage_approx *a = ta_grid(p, "s1", 2, 1, 1, PF_RECON_LINEAR);
    a->on_demand = true;
    a->channels = 1;
    a->ref = ta_image_decl(p, "in");
    ta_image in = ta_pattern(3, 7, 3, 3);
    ta_image out = ta_run1(p, &in, &od_rt);
    int ok = 1;
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 7; x++) {
            int xr = x + 1 > 6 ? 6 : x + 1;  /* A's clamp, then the lattice */
            int q = xr / 2, r = xr % 2, q1 = q + 1 < 4 ? q + 1 : 3;
            float s0 = *ta_at(&in, 2 * q, y, 0) * 2.0f, s1 = *ta_at(&in, 2 * q1, y, 0) * 2.0f;
            ok &= *ta_at(&out, x, y, 0) == lerp4(s0, s1, r, 2);
            for (int c = 1; c < 3; c++)
                ok &= *ta_at(&out, x, y, c) == *ta_at(&in, xr, y, c);
        }
    CU_ASSERT(ok);
    ta_free(&out);
    ta_free(&in);
    pf_program_free(p);
}

/* On an output, on-demand runs as store: the runtime reconstructs it. */
static void test_output_runs_as_store(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W]) -> (image out[W]) {\n"
        "    for each (x) of out as s out[x] = in[x] + 1.0;\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ta_grid(p, "s", 2, 1, 1, PF_RECON_LINEAR)->on_demand = true;
    ta_image in = ta_pattern(1, 9, 1, 1);
    recon_calls = 0;
    ta_image out = ta_run1(p, &in, &od_rt);
    CU_ASSERT_EQUAL(recon_calls, 1);
    CU_ASSERT_EQUAL(out.data[4], in.data[4] + 1.0f);
    CU_ASSERT_EQUAL(out.data[3], 0.0f);  /* the fake reconstruction does nothing */
    ta_free(&out);
    ta_free(&in);
    pf_program_free(p);
}

/* The code of an approximated program: on-demand reads and writes, perforated loops. */
static void test_dump_shows_approximations(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W]) -> (image out[W]) {\n"
        "    image A[W];\n"
        "    for each (x) of A as s1 { A[x] = in[x]; A[x] = A[x] * 2.0; }\n"
        "    for each (x) of out as s2 {\n"
        "        float t = 0.0;\n"
        "        for (i) of 0 .. 3 as L t += A[x + i];\n"
        "        out[x] = t;\n"
        "    }\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ta_grid(p, "s1", 2, 1, 1, PF_RECON_LINEAR)->on_demand = true;
    ta_loop_perf(p, "L", PF_PERF_STEP, 2, 0);
    pf_icode ic;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_icode_build_mode(&ic, p, PF_IAPPROX_RUN, &err), 0);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_icode_dump(&ic, &sb);
    char *d = pf_sb_take(&sb);
    CU_ASSERT(strstr(d, "READ_J") && strstr(d, "WRITE_J") && strstr(d, "READ_OD"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "PERF_SKIP"));
    free(d);
    pf_icode_free(&ic);
    /* pf_icode_build (the exact interpreter's) refuses them */
    CU_ASSERT_EQUAL(pf_icode_build(&ic, p, &err), -1);
    pf_program_free(p);
}

/* ---- refusals ---- */

static void refuse(const char *src, const char *stage, pf_sample_kind kind, const char *want)
{
    pf_program *p = ta_compile(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_stage_approx *a = ta_grid(p, stage, 2, 1, 1, PF_RECON_LINEAR);
    a->on_demand = true;
    if (kind == PF_SAMPLE_IMPORTANCE) {
        a->sample = kind;
        a->frac = 0.5f;
        a->sigma_imp = 0.1f;
        a->ref = ta_image_decl(p, "in");
        a->recon = PF_RECON_NEAREST;
    }
    ta_image in = ta_pattern(1, 8, 1, 1);
    ta_run_fails(p, &in, &od_rt, want);
    ta_free(&in);
    pf_program_free(p);
}

static void test_refusals(void)
{
    refuse("pipeline p(image in[W]) -> (image out[W]) {\n"
           "    image A[W];\n"
           "    for each (x) of A as s1 A[x] = in[x];\n"
           "    for each (x) of A as s2 A[x] += 1.0;\n"
           "    for each (x) of out as s3 out[x] = A[x];\n"
           "}\n",
           "s1", PF_SAMPLE_GRID, "more than one stage writes");
    refuse("pipeline p(image in[W]) -> (image out[W]) {\n"
           "    image A[W];\n"
           "    for each (x) of A as s1 A[x] = in[x];\n"
           "    for each (x) of out as s3 out[x] = A[x];\n"
           "}\n",
           "s1", PF_SAMPLE_IMPORTANCE, "on-demand reconstruction needs grid sampling");
    /* a read marked for a stage that does not store its image on demand */
    pf_program *p = ta_compile("pipeline p(image in[W]) -> (image out[W]) {\n"
                               "    image A[W];\n"
                               "    for each (x) of A as s1 A[x] = in[x];\n"
                               "    for each (x) of out as s2 out[x] = A[x];\n"
                               "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ta_grid(p, "s1", 2, 1, 1, PF_RECON_LINEAR);
    ta_mark_on_demand_reads(p, "s1");
    ta_image in = ta_pattern(1, 8, 1, 1);
    ta_run_fails(p, &in, &od_rt, "not stored on demand");
    /* the reference of a later stage's channels cannot be an on-demand image */
    ta_stage(p, "s1")->approx->on_demand = true;
    pf_stage_approx *a = ta_approx(p, "s2");
    a->channels = 1;
    a->ref = ta_image_decl(p, "A");
    ta_run_fails(p, &in, &od_rt, "stored on demand");
    ta_free(&in);
    pf_program_free(p);
}

PF_TEST_SUITE(interp_ondemand, PF_TEST(test_linear_1d), PF_TEST(test_nearest_1d),
              PF_TEST(test_lattice_and_boundary), PF_TEST(test_linear_2d_nesting),
              PF_TEST(test_channels_from_reference), PF_TEST(test_output_runs_as_store),
              PF_TEST(test_dump_shows_approximations), PF_TEST(test_refusals))
