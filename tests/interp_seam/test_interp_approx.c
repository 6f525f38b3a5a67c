/* The interpreter on approximated programs (plans made by hand), with the fake stage runtime
 * of fake_stage_rt.c linked in place of the real one, whose masks and "reconstruction" are
 * trivial patterns: which lattice points each sampling computes (grid, adaptive's two passes,
 * importance, channels), what the runtime is handed (views, lattice origins and steps, masks),
 * and loop perforation of stages and named loops against iterations computed by hand from
 * docs/perforation.md §5. On-demand reads, which need no runtime, are in
 * tests/interp/test_interp_ondemand.c. */
#include "tests/interp/test_interp_approx_util.h"
#include "tests/interp_seam/fake_stage_rt.h"

#include "interp/interp_internal.h"

#include <math.h>

static void log_reset(void)
{
    memset(&lg, 0, sizeof lg);
}

/* out[x, y] = in[x, y] + 1 (so every computed value is >= 1). */
static const char add_src[] =
    "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
    "    for each (x, y) of out as s out[x, y] = in[x, y] + 1.0;\n"
    "}\n";

static const char add_over_src[] =
    "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
    "    for each (x, y) of out over (1 .. W - 1 step 2, 0 .. H - 1) as s\n"
    "        out[x, y] = in[x, y] + 1.0;\n"
    "}\n";

static bool computed(const ta_image *out, const ta_image *in, int64_t x, int64_t y)
{
    return *ta_at(out, x, y, 0) == *ta_at(in, x, y, 0) + 1.0f;
}

/* ---- grid ---- */

/* Lattice x = 1, 3, .., 11 (n1 = 6), y = 0 .. 6 (n2 = 7); grid (2, 3) computes j1 % 2 == 0 and
 * j2 % 3 == 0: x in {1, 5, 9}, y in {0, 3, 6}. */
static void test_grid_points_and_view(void)
{
    pf_program *p = ta_compile(add_over_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    ta_image in = ta_pattern(2, 13, 7, 1);
    for (int recon = 0; recon < 2; recon++) {
        ta_grid(pl, "s", 2, 3, 1, recon ? PF_RECON_NEAREST : PF_RECON_NONE);
        log_reset();
        ta_image out = ta_run1(pl, &in);
        int ok = 1, n = 0;
        for (int64_t y = 0; y < 7; y++)
            for (int64_t x = 0; x < 13; x++) {
                bool lattice = x % 2 == 1 && x <= 11;
                bool sample = lattice && (x - 1) % 4 == 0 && y % 3 == 0;
                float v = *ta_at(&out, x, y, 0);
                n += sample;
                if (sample)
                    ok &= computed(&out, &in, x, y);
                else
                    ok &= v == (lattice && recon ? -1.0f : 0.0f);
            }
        CU_ASSERT(ok);
        CU_ASSERT_EQUAL(n, 9);
        CU_ASSERT_EQUAL(lg.recon, recon);
        if (recon) {
            CU_ASSERT_EQUAL(lg.spec.sample, PF_SAMPLE_GRID);
            CU_ASSERT(lg.spec.spacing[0] == 2 && lg.spec.spacing[1] == 3);
            CU_ASSERT(lg.view.ndims == 2 && lg.view.extent[0] == 6 && lg.view.extent[1] == 7);
            CU_ASSERT(lg.view.stride[0] == 2 && lg.view.stride[1] == 13);
        }
        ta_free(&out);
    }
    ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

/* The same grid on many threads gives the same image. */
static void test_grid_threads(void)
{
    pf_program *p = ta_compile(add_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    ta_grid(pl, "s", 3, 2, 1, PF_RECON_NEAREST);
    ta_image in = ta_pattern(2, 150, 61, 1);
    pf_interp_threads = 1;
    ta_image one = ta_run1(pl, &in);
    pf_interp_threads = 3;
    ta_image three = ta_run1(pl, &in);
    pf_interp_threads = 0;
    CU_ASSERT(memcmp(one.data, three.data, sizeof(float) * (size_t)ta_count(&one)) == 0);
    ta_free(&one);
    ta_free(&three);
    ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

/* ---- adaptive and importance ---- */

static void test_adaptive_two_passes(void)
{
    pf_program *p = ta_compile(add_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    pf_stage_approx *a = ta_approx(pl, "s");
    a->sample = PF_SAMPLE_ADAPTIVE;
    a->k = 3;
    a->frac = 0.5f;
    a->recon = PF_RECON_GAUSSIAN_SV;
    a->sigma = 0.9f;
    ta_image in = ta_pattern(2, 10, 7, 1);
    log_reset();
    ta_image out = ta_run1(pl, &in);
    CU_ASSERT(lg.coarse == 1 && lg.refine == 1 && lg.recon == 1);
    CU_ASSERT(lg.refine_view_ok);
    int ok = 1;
    for (int64_t y = 0; y < 7; y++)
        for (int64_t x = 0; x < 10; x++) {
            bool sample = y % 3 == 0 && (x % 3 == 0 || x % 3 == 1);
            ok &= sample ? computed(&out, &in, x, y) : *ta_at(&out, x, y, 0) == -1.0f;
        }
    CU_ASSERT(ok);
    CU_ASSERT(lg.spec.sample == PF_SAMPLE_ADAPTIVE && lg.spec.k == 3 && lg.spec.frac == 0.5f);
    CU_ASSERT(lg.spec.recon == PF_RECON_GAUSSIAN_SV && lg.spec.sigma == 0.9f);
    ta_free(&out);
    ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

static void test_importance_arguments(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W, H], image g[W, H]) -> (image out[W, H]) {\n"
        "    for each (x, y) of out over (2 .. W - 1, 1 .. H - 1 step 2) as s\n"
        "        out[x, y] = in[x, y] + g[x, y] * 0.0 + 1.0;\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    pf_stage_approx *a = ta_approx(pl, "s");
    a->sample = PF_SAMPLE_IMPORTANCE;
    a->frac = 0.25f;
    a->sigma_imp = 0.1f;
    a->recon = PF_RECON_NEAREST;
    a->ref = ta_image_decl(p, "g");
    ta_image ins[2] = { ta_pattern(2, 9, 8, 1), ta_pattern(2, 9, 8, 1) };
    ta_image out;
    pf_error err;
    log_reset();
    CU_ASSERT_EQUAL_FATAL(ta_run(pl, ins, &out, &err), 0);
    CU_ASSERT(lg.importance == 1 && lg.ref_data == ins[1].data);
    CU_ASSERT(lg.lo[0] == 2 && lg.lo[1] == 1 && lg.step[0] == 1 && lg.step[1] == 2);
    CU_ASSERT(lg.n1 == 7 && lg.n2 == 4 && lg.frac == 0.25f && lg.sigma_imp == 0.1f);
    int ok = 1;
    for (int64_t y = 1; y < 8; y += 2)
        for (int64_t x = 2; x < 9; x++) {
            bool sample = ((x - 2) + 2 * ((y - 1) / 2)) % 3 == 0;
            ok &= sample ? computed(&out, &ins[0], x, y) : *ta_at(&out, x, y, 0) == -1.0f;
        }
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(lg.aux0, 0.25f);  /* M went to reconstruct */
    ta_free(&out);
    ta_free(&ins[0]);
    ta_free(&ins[1]);
    pf_plan_free(pl);
    pf_program_free(p);
}

/* ---- channels ---- */

static void test_channels_alone(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
        "    for each (x, y, c) of out over (0 .. W - 1, 1 .. H - 1, 0 .. 2) as s\n"
        "        out[x, y, c] = in[x, y, c] + 1.0;\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    pf_stage_approx *a = ta_approx(pl, "s");
    a->channels = 1;
    a->ref = ta_image_decl(p, "in");
    ta_image in = ta_pattern(3, 4, 3, 3);
    log_reset();
    ta_image out = ta_run1(pl, &in);
    CU_ASSERT(lg.copy == 1 && lg.recon == 0 && lg.copy_k == 3 && lg.copy_c0 == 1);
    CU_ASSERT(lg.copy_lo[1] == 1 && lg.copy_step[0] == 1 && lg.copy_step[2] == 1);
    int ok = 1;
    for (int64_t c = 0; c < 3; c++)
        for (int64_t y = 1; y < 3; y++)
            for (int64_t x = 0; x < 4; x++)
                ok &= c == 0 ? *ta_at(&out, x, y, c) == *ta_at(&in, x, y, c) + 1.0f
                             : *ta_at(&out, x, y, c) == -2.0f;
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(*ta_at(&out, 0, 0, 1), 0.0f);  /* off the lattice */
    ta_free(&out);
    ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

/* ---- loop perforation of named loops (§5) ---- */

/* t sums 2^j over the iterations j that run, so the output names them. i runs 2, 5, .., 20
 * (n = 7). */
static const char loop_src[] =
    "pipeline p(image in[W]) -> (image out[W]) {\n"
    "    for each (x) of out as s {\n"
    "        float t = 0.0;\n"
    "        for (i) of 2 .. 20 step 3 as L { t += pow(2.0, float((i - 2) / 3)); }\n"
    "        out[x] = t;\n"
    "    }\n"
    "}\n";

static float run_loop(pf_plan *pl, pf_loop_perf_kind kind, int step, float frac, int x)
{
    ta_loop_perf(pl, "L", kind, step, frac);
    ta_image in = ta_pattern(1, 6, 1, 1);
    ta_image out = ta_run1(pl, &in);
    float v = out.data ? out.data[x] : -1.0f;
    ta_free(&out);
    ta_free(&in);
    return v;
}

static void test_named_loop_perforation(void)
{
    pf_program *p = ta_compile(loop_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    /* step 2: j = 0, 2, 4, 6 */
    CU_ASSERT_EQUAL(run_loop(pl, PF_PERF_STEP, 2, 0, 0), 1.0f + 4.0f + 16.0f + 64.0f);
    /* first 0.5: j < (int)(0.5f * 7) = 3 */
    CU_ASSERT_EQUAL(run_loop(pl, PF_PERF_FIRST, 1, 0.5f, 0), 1.0f + 2.0f + 4.0f);
    /* last 0.3: j >= (int)((1 - 0.3f) * 7) = (int)4.9 = 4 */
    CU_ASSERT_EQUAL(run_loop(pl, PF_PERF_LAST, 1, 0.3f, 0), 16.0f + 32.0f + 64.0f);
    /* first 1, last 1: everything */
    CU_ASSERT_EQUAL(run_loop(pl, PF_PERF_FIRST, 1, 1.0f, 0), 127.0f);
    CU_ASSERT_EQUAL(run_loop(pl, PF_PERF_LAST, 1, 1.0f, 0), 127.0f);
    /* random 0.5: pf_perf_hash(id, j, x, 0) < 0.5, with a = x (a one-variable stage: b = 0) */
    int id = (int)(pf_program_find_loop(p, "L") - p->loops);
    for (int x = 0; x < 6; x++) {
        float want = 0.0f;
        for (int j = 0; j < 7; j++)
            want += pf_perf_hash(id, j, x, 0) < 0.5f ? (float)(1 << j) : 0.0f;
        CU_ASSERT_EQUAL(run_loop(pl, PF_PERF_RANDOM, 1, 0.5f, x), want);
    }
    pf_plan_free(pl);
    pf_program_free(p);
}

/* j and n use lo as it was on entry, even when the body assigns the local it names; and a
 * two-variable stage hashes (x, y). */
static void test_named_loop_entry_bounds_and_hash(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    for each (x, y) of out as s {\n"
        "        float t = 0.0;\n"
        "        int a = 0;\n"
        "        for (i) of a .. 9 as L { a = 100; t += pow(2.0, float(i)); }\n"
        "        out[x, y] = t;\n"
        "    }\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    ta_image in = ta_pattern(2, 3, 4, 1);
    ta_loop_perf(pl, "L", PF_PERF_FIRST, 1, 0.5f);
    ta_image out = ta_run1(pl, &in);
    CU_ASSERT_EQUAL(*ta_at(&out, 2, 3, 0), 31.0f);  /* j < 5 of n = 10 */
    ta_free(&out);
    int id = ta_loop_perf(pl, "L", PF_PERF_RANDOM, 1, 0.3f);
    out = ta_run1(pl, &in);
    int ok = 1;
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 3; x++) {
            float want = 0.0f;
            for (int j = 0; j < 10; j++)
                want += pf_perf_hash(id, j, x, y) < 0.3f ? (float)(1 << j) : 0.0f;
            ok &= *ta_at(&out, x, y, 0) == want;
        }
    CU_ASSERT(ok);
    ta_free(&out);
    ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

/* ---- loop perforation of a stage's row variable ---- */

/* Rows y = 1, 3, .., 13 (n = 7) of a 15-row image; which rows run, by j. */
static void check_rows(const pf_plan *pl, const ta_image *in, const bool *runs)
{
    ta_image out = ta_run1(pl, (ta_image *)in);
    int ok = 1;
    for (int64_t y = 0; y < 15; y++)
        for (int64_t x = 0; x < 4; x++) {
            bool lattice = y % 2 == 1 && y <= 13;
            ok &= lattice && runs[(y - 1) / 2] ? computed(&out, in, x, y)
                                               : *ta_at(&out, x, y, 0) == 0.0f;
        }
    CU_ASSERT(ok);
    ta_free(&out);
}

static void test_stage_row_perforation(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    for each (x, y) of out over (0 .. W - 1, 1 .. H - 2 step 2) as s\n"
        "        out[x, y] = in[x, y] + 1.0;\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ta_image in = ta_pattern(2, 4, 15, 1);
    pf_plan *pl = ta_plan(p);
    pf_stage_approx *a = ta_approx(pl, "s");
    a->sample = PF_SAMPLE_LOOP;
    a->perf = (pf_loop_perf){ PF_PERF_STEP, 3, 0, 0 };
    check_rows(pl, &in, (const bool[]){ 1, 0, 0, 1, 0, 0, 1 });
    a->perf = (pf_loop_perf){ PF_PERF_FIRST, 1, 0.6f, 0 };  /* (int)(0.6f * 7) = 4 */
    check_rows(pl, &in, (const bool[]){ 1, 1, 1, 1, 0, 0, 0 });
    a->perf = (pf_loop_perf){ PF_PERF_LAST, 1, 0.6f, 0 };   /* (int)(0.4f * 7) = 2 */
    check_rows(pl, &in, (const bool[]){ 0, 0, 1, 1, 1, 1, 1 });
    int id = ta_stage(p, "s")->loop_id;
    a->perf = (pf_loop_perf){ PF_PERF_RANDOM, 1, 0.5f, id };
    bool runs[7];
    for (int j = 0; j < 7; j++)
        runs[j] = pf_perf_hash(id, j, 0, 0) < 0.5f;
    check_rows(pl, &in, runs);
    ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

PF_TEST_SUITE(interp_approx, PF_TEST(test_grid_points_and_view), PF_TEST(test_grid_threads),
              PF_TEST(test_adaptive_two_passes), PF_TEST(test_importance_arguments),
              PF_TEST(test_channels_alone), PF_TEST(test_named_loop_perforation),
              PF_TEST(test_named_loop_entry_bounds_and_hash),
              PF_TEST(test_stage_row_perforation))
