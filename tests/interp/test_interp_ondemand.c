/* On-demand reconstruction in the interpreter (docs/perforation.md §4), against values computed
 * here from §4's formulas: the downsampled storage at J, the writer's own reads and compound
 * writes, boundary modes applied first, off-lattice reads giving 0, linear interpolation nested
 * with dimension 1 outermost, nearest's tie rule, channels from the reference image, and an
 * output reconstructed in store instead. Plans are made by hand (test_interp_approx_util.h). */
#include "tests/interp/test_interp_approx_util.h"

#include "base/strbuf.h"
#include "interp/interp_internal.h"

/* A grid stage stored on demand, as a plan resolves it: on an output it runs as store. */
static pf_stage_approx *grid_od(pf_plan *pl, const char *stage, int s0, pf_recon_kind recon)
{
    pf_stage_approx *a = ta_grid(pl, stage, s0, 1, 1, recon);
    a->on_demand = true;
    if (ta_stage(pl->prog, stage)->image->image->role != PF_IMAGE_OUTPUT)
        ta_on_demand(pl, stage);
    return a;
}

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
    pf_program *p = ta_compile(src_1d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    grid_od(pl, "s1", 4, PF_RECON_LINEAR);
    ta_image in = ta_new(1, 11, 1, 1);
    ta_image out = ta_run1(pl, &in);
    const float S[3] = { 1.0f, 17.0f, 65.0f };
    int ok = 1;
    for (int x = 0; x < 11; x++) {
        int q = x / 4, r = x % 4, q1 = q + 1 < 3 ? q + 1 : 2;
        ok &= out.data[x] == lerp4(S[q], S[q1], r, 4);
    }
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(out.data[5], 0.75f * 17.0f + 0.25f * 65.0f);
    CU_ASSERT_EQUAL(out.data[10], 65.0f);
    ta_free(&out);
    ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

/* Nearest: q while 2r <= s (a tie goes to the lower sample), else q1. */
static void test_nearest_1d(void)
{
    pf_program *p = ta_compile(src_1d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    grid_od(pl, "s1", 4, PF_RECON_NEAREST);
    ta_image in = ta_new(1, 11, 1, 1);
    ta_image out = ta_run1(pl, &in);
    const float want[11] = { 1, 1, 1, 17, 17, 17, 17, 65, 65, 65, 65 };
    CU_ASSERT(memcmp(out.data, want, sizeof want) == 0);
    ta_free(&out);
    ta_free(&in);
    pf_plan_free(pl);
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
    pf_plan *pl = ta_plan(p);
    grid_od(pl, "s1", 2, PF_RECON_LINEAR);
    grid_od(pl, "s2", 3, PF_RECON_NEAREST);
    ta_image in = ta_new(1, 11, 1, 1), outs[3];
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(ta_run(pl, &in, outs, &err), 0);
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
    pf_plan_free(pl);
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
    pf_plan *pl = ta_plan(p);
    ta_grid(pl, "s1", 3, 2, 1, PF_RECON_LINEAR)->on_demand = true;
    ta_on_demand(pl, "s1");
    enum { W = 11, H = 8, NX = 4, NY = 4 };
    ta_image in = ta_new(2, W, H, 1);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            *ta_at(&in, x, y, 0) = a_value(x, y);
    ta_image out = ta_run1(pl, &in);
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
    pf_plan_free(pl);
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
    pf_plan *pl = ta_plan(p);
    pf_stage_approx *a = grid_od(pl, "s1", 2, PF_RECON_LINEAR);
    a->channels = 1;
    a->ref = ta_image_decl(p, "in");
    ta_image in = ta_pattern(3, 7, 3, 3);
    ta_image out = ta_run1(pl, &in);
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
    pf_plan_free(pl);
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
    pf_plan *pl = ta_plan(p);
    grid_od(pl, "s", 2, PF_RECON_LINEAR);
    ta_image in = ta_pattern(1, 9, 1, 1);
    ta_image out = ta_run1(pl, &in);
    CU_ASSERT_EQUAL(out.data[4], in.data[4] + 1.0f);
    /* the skipped sample between two computed ones, reconstructed linearly */
    PF_ASSERT_NEAR(out.data[3], 0.5f * (in.data[2] + in.data[4]) + 1.0f, 1e-6);
    ta_free(&out);
    ta_free(&in);
    pf_plan_free(pl);
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
    pf_plan *pl = ta_plan(p);
    grid_od(pl, "s1", 2, PF_RECON_LINEAR);
    ta_loop_perf(pl, "L", PF_PERF_STEP, 2, 0);
    pf_icode ic;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_icode_build(&ic, p, pl, &err), 0);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_icode_dump(&ic, &sb);
    char *d = pf_sb_take(&sb);
    CU_ASSERT(strstr(d, "READ_J") && strstr(d, "WRITE_J") && strstr(d, "READ_OD"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "PERF_SKIP"));
    free(d);
    pf_icode_free(&ic);
    /* the exact program's code has none of them */
    CU_ASSERT_EQUAL_FATAL(pf_icode_build(&ic, p, NULL, &err), 0);
    pf_sb_init(&sb);
    pf_icode_dump(&ic, &sb);
    CU_ASSERT(!strstr(pf_sb_str(&sb), "READ_OD") && !strstr(pf_sb_str(&sb), "PERF_SKIP"));
    pf_sb_free(&sb);
    pf_icode_free(&ic);
    pf_plan_free(pl);
    pf_program_free(p);
}

PF_TEST_SUITE(interp_ondemand, PF_TEST(test_linear_1d), PF_TEST(test_nearest_1d),
              PF_TEST(test_lattice_and_boundary), PF_TEST(test_linear_2d_nesting),
              PF_TEST(test_channels_from_reference), PF_TEST(test_output_runs_as_store),
              PF_TEST(test_dump_shows_approximations))
