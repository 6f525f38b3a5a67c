/* The interpreter running approximated programs (plans made by hand) with the real stage
 * runtime (reconstruct/stage_rt.h): every sampling x reconstruction combination
 * docs/perforation.md allows, on a synthetic pointwise stage and on apps/blur.pf. For the
 * pointwise stage the expected image is computed directly: the exact image, the sampling's
 * mask from pf_srt_* on the same lattice, the skipped samples zeroed, pf_srt_reconstruct, so
 * the interpreter must match bit for bit.
 * Also: sample counts, computed samples keeping their exact values, one-variable stages (the
 * unit-dimension view), channel copies, and store versus on-demand reconstruction. */
#include "reconstruct/runtime.h"
#include "reconstruct/stage_rt.h"
#include "tests/interp/test_interp_approx_util.h"

#include <math.h>

/* out = in * 2 + 0.25, per channel. */
static const char point_src[] =
    "pipeline p(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
    "    for each (x, y, c) of out as s out[x, y, c] = in[x, y, c] * 2.0 + 0.25;\n"
    "}\n";

enum { PW = 37, PH = 29 };

static float point_exact(float v)
{
    float t = v * 2.0f;
    return t + 0.25f;
}

static ta_image exact_of(const ta_image *in)
{
    ta_image e = ta_new(3, in->ext[0], in->ext[1], in->ext[2]);
    for (int64_t i = 0; i < ta_count(in); i++)
        e.data[i] = point_exact(in->data[i]);
    return e;
}

/* The sampling's mask plane (and aux) computed as docs/perforation.md §2 says, on the whole
 * image (lo 0, step 1); for adaptive, from the exact image's coarse samples. */
static void direct_mask(const pf_stage_approx *a, const ta_image *in, const ta_image *e,
                        float *mask, float *aux)
{
    int w = (int)in->ext[0], h = (int)in->ext[1];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            mask[y * w + x] = x % a->spacing[0] == 0 && y % a->spacing[1] == 0;
    int64_t lo[2] = { 0, 0 }, st[2] = { 1, 1 };
    pf_buffer ib = ta_buffer(in);
    if (a->sample == PF_SAMPLE_IMPORTANCE)
        CU_ASSERT_EQUAL(pf_srt_importance_mask(&ib, lo, st, w, h, a->frac, a->sigma_imp, mask,
                                               aux), 0);
    if (a->sample != PF_SAMPLE_ADAPTIVE)
        return;
    CU_ASSERT_EQUAL(pf_srt_adaptive_coarse(w, h, a->k, mask), 0);
    ta_image coarse = ta_new(3, w, h, e->ext[2]);
    for (int64_t i = 0; i < ta_count(e); i++)
        coarse.data[i] = mask[i % (w * h)] == 2.0f ? e->data[i] : 0.0f;
    pf_buffer cb = ta_buffer(&coarse);
    CU_ASSERT_EQUAL(pf_srt_adaptive_refine(&cb, a->k, a->frac, mask, aux), 0);
    ta_free(&coarse);
}

/* The exact image with the skipped samples zeroed, then reconstructed. */
static ta_image direct_expected(const pf_stage_approx *a, const ta_image *in, float *mask)
{
    ta_image e = exact_of(in);
    int64_t n = in->ext[0] * in->ext[1];
    float *aux = calloc((size_t)n, sizeof *aux);
    direct_mask(a, in, &e, mask, aux);
    for (int64_t i = 0; i < ta_count(&e); i++)
        if (mask[i % n] == 0.0f)
            e.data[i] = 0.0f;
    pf_recon_spec spec = { .sample = a->sample, .recon = a->recon, .k = a->k, .frac = a->frac,
                           .sigma = a->sigma, .spacing = { a->spacing[0], a->spacing[1], 1, 1 } };
    if (a->sample != PF_SAMPLE_GRID)
        spec.spacing[0] = spec.spacing[1] = 1;
    pf_buffer eb = ta_buffer(&e);
    CU_ASSERT_EQUAL(pf_srt_reconstruct(&eb, &spec, mask, aux), 0);
    free(aux);
    return e;
}

static pf_stage_approx *annotate(pf_plan *pl, pf_sample_kind sample, pf_recon_kind recon,
                                 float sigma)
{
    pf_stage_approx *a = ta_approx(pl, "s");
    a->sample = sample;
    a->recon = recon;
    a->sigma = sigma;
    a->spacing[0] = 2, a->spacing[1] = 3, a->spacing[2] = 1;
    a->k = 4;
    a->frac = 0.3f;
    a->sigma_imp = 0.1f;
    a->ref = ta_image_decl(pl->prog, "in");
    return a;
}

static double mean_abs_diff(const ta_image *a, const ta_image *b)
{
    double s = 0;
    for (int64_t i = 0; i < ta_count(a); i++)
        s += fabs((double)a->data[i] - (double)b->data[i]);
    return s / (double)ta_count(a);
}

/* The error, printed with PF_RT_VERBOSE=1 (like the runtime's own accuracy tests). */
static double report_error(const char *what, int sample, int recon, double err)
{
    if (getenv("PF_RT_VERBOSE"))
        printf("\n  %s: sampling %d, reconstruction %d: mean abs error %.4f\n", what, sample,
               recon, err);
    return err;
}

static bool all_finite(const ta_image *a)
{
    for (int64_t i = 0; i < ta_count(a); i++)
        if (!isfinite(a->data[i]))
            return false;
    return true;
}

/* One combination: the interpreter equals the direct computation, samples are exact, and the
 * image stays close to the exact one. */
static void check_combination(pf_sample_kind sample, pf_recon_kind recon, float sigma)
{
    pf_program *p = ta_compile(point_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    pf_stage_approx *a = annotate(pl, sample, recon, sigma);
    ta_image in = ta_pattern(3, PW, PH, 3);
    ta_image out = ta_run1(pl, &in);
    float *mask = calloc(PW * PH, sizeof *mask);
    ta_image want = direct_expected(a, &in, mask), exact = exact_of(&in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out.data);
    bool same = memcmp(out.data, want.data, sizeof(float) * (size_t)ta_count(&out)) == 0;
    if (!same)
        fprintf(stderr, "\n--- sampling %d, reconstruction %d differs\n", sample, recon);
    CU_ASSERT(same);
    int kept = 1;
    for (int64_t i = 0; i < ta_count(&out); i++)
        if (mask[i % (PW * PH)] != 0.0f)
            kept &= out.data[i] == exact.data[i];
    CU_ASSERT(kept);
    CU_ASSERT(all_finite(&out));
    /* a gross mistake (skipped samples left 0) costs about 0.9 here; the speckles of the
     * pattern cost the good reconstructions about 0.1 */
    CU_ASSERT(report_error("point", sample, recon, mean_abs_diff(&out, &exact)) < 0.2);
    free(mask);
    ta_free(&want), ta_free(&exact), ta_free(&out), ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

static void test_every_combination_matches_direct(void)
{
    const pf_recon_kind grid[] = { PF_RECON_NEAREST, PF_RECON_LINEAR, PF_RECON_GAUSSIAN,
                                   PF_RECON_GAUSSIAN_SV };
    for (int i = 0; i < 4; i++)
        check_combination(PF_SAMPLE_GRID, grid[i], 0.8f);
    const pf_recon_kind irregular[] = { PF_RECON_NEAREST, PF_RECON_GAUSSIAN,
                                        PF_RECON_GAUSSIAN_SV };
    for (int i = 0; i < 3; i++) {
        check_combination(PF_SAMPLE_ADAPTIVE, irregular[i], 0.9f);
        check_combination(PF_SAMPLE_IMPORTANCE, irregular[i], 0.73f);
    }
}

/* ---- sample counts (no reconstruction: skipped samples stay 0, computed ones are > 0) ---- */

static int count_samples(pf_sample_kind sample, int s0, int s1, float frac)
{
    pf_program *p = ta_compile(point_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    pf_stage_approx *a = annotate(pl, sample, PF_RECON_NONE, 0);
    a->spacing[0] = s0, a->spacing[1] = s1;
    a->frac = frac;
    ta_image in = ta_pattern(3, PW, PH, 3);
    ta_image out = ta_run1(pl, &in);
    int n = 0;
    for (int64_t i = 0; out.data && i < PW * PH; i++)
        n += out.data[i] != 0.0f;
    for (int64_t i = PW * PH; out.data && i < ta_count(&out); i++)  /* every channel alike */
        CU_ASSERT_EQUAL(out.data[i] != 0.0f, out.data[i % (PW * PH)] != 0.0f);
    ta_free(&out), ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
    return n;
}

static void test_sample_counts(void)
{
    CU_ASSERT_EQUAL(count_samples(PF_SAMPLE_GRID, 4, 3, 0), 10 * 10);
    CU_ASSERT_EQUAL(count_samples(PF_SAMPLE_GRID, 1, 1, 0), PW * PH);
    double n = PW * PH;
    for (float f = 0.1f; f < 0.6f; f += 0.2f) {
        int imp = count_samples(PF_SAMPLE_IMPORTANCE, 1, 1, f);
        CU_ASSERT(fabs(imp - f * n) <= 0.01 * f * n + 1.0);
        int target = (int)floor(f * n + 0.5);
        int ad = count_samples(PF_SAMPLE_ADAPTIVE, 1, 1, f);
        CU_ASSERT(ad >= target && ad < target + 25);  /* k-hat = 5 */
    }
}

/* ---- a one-variable stage: mask plane n1 x 1, rows reconstructed alone ---- */

static void test_one_variable_stage(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    for each (x) of out as s { for (y) of 0 .. H - 1 out[x, y] = in[x, y] + 1.0; }\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    ta_grid(pl, "s", 3, 1, 1, PF_RECON_GAUSSIAN)->sigma = 1.0f;
    ta_image in = ta_pattern(2, 20, 4, 1);
    ta_image out = ta_run1(pl, &in);
    uint8_t m8[20];
    pf_rt_grid_mask(20, 1, 0, 0, 3, 1, m8, NULL);
    int64_t sp[2] = { 3, 1 };
    int ok = 1;
    for (int y = 0; y < 4; y++) {
        float row[20];
        for (int x = 0; x < 20; x++)
            row[x] = m8[x] ? *ta_at(&in, x, y, 0) + 1.0f : 0.0f;
        pf_rt_recon_gaussian(row, 20, 1, 1, 20, 20, m8, pf_rt_sigma_grid(1.0f, 2, sp));
        ok &= memcmp(row, ta_at(&out, 0, y, 0), sizeof row) == 0;
    }
    CU_ASSERT(ok);
    ta_free(&out), ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

/* The same over a 4-D image: reconstructed one index of the last dimension at a time. */
static void test_one_variable_stage_4d(void)
{
    pf_program *p = ta_compile(
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    image F[W, 2, 3, 2];\n"
        "    for each (x) of F as s {\n"
        "        for (a) of 0 .. 1 for (b) of 0 .. 2 for (d) of 0 .. 1\n"
        "            F[x, a, b, d] = in[x, a] * float(b + 1) + float(d);\n"
        "    }\n"
        "    for each (x, y) of out as t out[x, y] = F[x, y % 2, y % 3, y % 2];\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    ta_grid(pl, "s", 4, 1, 1, PF_RECON_GAUSSIAN)->sigma = 0.7f;
    ta_image in = ta_pattern(2, 18, 6, 1);
    ta_image out = ta_run1(pl, &in);
    uint8_t m8[18];
    pf_rt_grid_mask(18, 1, 0, 0, 4, 1, m8, NULL);
    int64_t sp[2] = { 4, 1 };
    int ok = 1;
    for (int y = 0; y < 6; y++) {
        int a = y % 2, b = y % 3, d = y % 2;
        float row[18];
        for (int x = 0; x < 18; x++) {
            float t = *ta_at(&in, x, a, 0) * (float)(b + 1);
            row[x] = m8[x] ? t + (float)d : 0.0f;
        }
        pf_rt_recon_gaussian(row, 18, 1, 1, 18, 18, m8, pf_rt_sigma_grid(0.7f, 2, sp));
        ok &= memcmp(row, ta_at(&out, 0, y, 0), sizeof row) == 0;
    }
    CU_ASSERT(ok);
    ta_free(&out), ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

/* ---- channels ---- */

static void test_channels_copied_from_reference(void)
{
    pf_program *p = ta_compile(point_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    pf_stage_approx *a = annotate(pl, PF_SAMPLE_GRID, PF_RECON_LINEAR, 0);
    ta_image in = ta_pattern(3, PW, PH, 3);
    float *mask = calloc(PW * PH, sizeof *mask);
    ta_image want = direct_expected(a, &in, mask);
    a->channels = 1;
    ta_image out = ta_run1(pl, &in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out.data);
    CU_ASSERT(memcmp(out.data, want.data, sizeof(float) * PW * PH) == 0);
    CU_ASSERT(memcmp(out.data + PW * PH, in.data + PW * PH, sizeof(float) * PW * PH * 2) == 0);
    free(mask);
    ta_free(&want), ta_free(&out), ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
}

/* ---- store versus on-demand ---- */

static const char two_stage_src[] =
    "pipeline p(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
    "    image A[W, H, 3];\n"
    "    for each (x, y, c) of A as s1 A[x, y, c] = in[x, y, c] * 2.0 + 0.25;\n"
    "    for each (x, y, c) of out as s2\n"
    "        out[x, y, c] = 0.5 * (A[x, y, c] + A[x + 1, y - 1, c]);\n"
    "}\n";

static ta_image run_two_stage(pf_recon_kind recon, bool on_demand)
{
    pf_program *p = ta_compile(two_stage_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    ta_grid(pl, "s1", 3, 2, 1, recon)->on_demand = on_demand;
    if (on_demand)
        ta_on_demand(pl, "s1");
    ta_image in = ta_pattern(3, PW, PH, 3);
    ta_image out = ta_run1(pl, &in);
    ta_free(&in);
    pf_plan_free(pl);
    pf_program_free(p);
    return out;
}

static float max_abs_diff(const ta_image *a, const ta_image *b)
{
    float m = 0;
    for (int64_t i = 0; i < ta_count(a); i++)
        m = fmaxf(m, fabsf(a->data[i] - b->data[i]));
    return m;
}

static void test_store_and_on_demand_agree(void)
{
    ta_image st = run_two_stage(PF_RECON_LINEAR, false), od = run_two_stage(PF_RECON_LINEAR, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st.data);
    CU_ASSERT_PTR_NOT_NULL_FATAL(od.data);
    CU_ASSERT(max_abs_diff(&st, &od) < 1e-5f);
    ta_free(&st), ta_free(&od);
    /* nearest picks the same sample either way */
    st = run_two_stage(PF_RECON_NEAREST, false), od = run_two_stage(PF_RECON_NEAREST, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st.data);
    CU_ASSERT(memcmp(st.data, od.data, sizeof(float) * (size_t)ta_count(&st)) == 0);
    ta_free(&st), ta_free(&od);
}

/* ---- apps/blur.pf ---- */

static pf_program *load_blur(void)
{
    pf_error err;
    pf_program *p = pf_load_program(pf_test_src("apps/blur.pf"), &err);
    if (!p)
        fprintf(stderr, "\n--- %s\n", err.msg);
    return p;
}

static ta_image run_blur(void (*annotate_fn)(pf_plan *), const ta_image *in)
{
    pf_program *p = load_blur();
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_plan *pl = ta_plan(p);
    if (annotate_fn)
        annotate_fn(pl);
    ta_image out = ta_run1(pl, (ta_image *)in);
    pf_plan_free(pl);
    pf_program_free(p);
    return out;
}

/* The paper's 5.6x variant: loop_temp grid 4 1 1 on-demand linear, loop_output grid 4 4 1. */
static void paper_variant(pf_plan *pl)
{
    ta_grid(pl, "loop_temp", 4, 1, 1, PF_RECON_LINEAR)->on_demand = true;
    ta_on_demand(pl, "loop_temp");
    ta_grid(pl, "loop_output", 4, 4, 1, PF_RECON_LINEAR);
}

static void paper_variant_store(pf_plan *pl)
{
    ta_grid(pl, "loop_temp", 4, 1, 1, PF_RECON_LINEAR);
    ta_grid(pl, "loop_output", 4, 4, 1, PF_RECON_LINEAR);
}

static void test_blur_paper_variant(void)
{
    ta_image in = ta_pattern(3, 48, 40, 3);
    ta_image exact = run_blur(NULL, &in);
    ta_image od = run_blur(paper_variant, &in), st = run_blur(paper_variant_store, &in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(od.data);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st.data);
    CU_ASSERT(max_abs_diff(&od, &st) < 1e-5f);
    double err = mean_abs_diff(&od, &exact);
    CU_ASSERT(err > 0.0 && err < 0.05);
    ta_free(&exact), ta_free(&od), ta_free(&st), ta_free(&in);
}

/* Every combination on loop_output: its computed samples equal the exact blur (loop_temp is
 * exact), found as the nonzero samples of the same sampling without reconstruction. */
static pf_sample_kind blur_sample;
static pf_recon_kind blur_recon;

static void blur_combination(pf_plan *pl)
{
    pf_stage_approx *a = ta_approx(pl, "loop_output");
    a->sample = blur_sample;
    a->recon = blur_recon;
    a->sigma = 0.8f;
    a->spacing[0] = 3, a->spacing[1] = 2, a->spacing[2] = 1;
    a->k = 4;
    a->frac = 0.25f;
    a->sigma_imp = 0.1f;
    a->ref = ta_image_decl(pl->prog, "in");
}

static void check_blur_combination(const ta_image *in, const ta_image *exact,
                                   pf_sample_kind sample, pf_recon_kind recon)
{
    blur_sample = sample;
    blur_recon = PF_RECON_NONE;
    ta_image bare = run_blur(blur_combination, in);
    blur_recon = recon;
    ta_image out = run_blur(blur_combination, in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out.data);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bare.data);
    int kept = 1, samples = 0;
    for (int64_t i = 0; i < ta_count(&out); i++) {
        kept &= bare.data[i] == 0.0f || bare.data[i] == exact->data[i];
        if (bare.data[i] != 0.0f) {
            samples++;
            kept &= out.data[i] == exact->data[i];
        }
    }
    CU_ASSERT(kept);
    CU_ASSERT(samples > 0);
    CU_ASSERT(all_finite(&out));
    /* skipped samples left 0 would cost about 0.35 */
    CU_ASSERT(report_error("blur", sample, recon, mean_abs_diff(&out, exact)) < 0.15);
    ta_free(&bare), ta_free(&out);
}

static void test_blur_every_combination(void)
{
    ta_image in = ta_pattern(3, 48, 40, 3);
    ta_image exact = run_blur(NULL, &in);
    const pf_recon_kind grid[] = { PF_RECON_NEAREST, PF_RECON_LINEAR, PF_RECON_GAUSSIAN,
                                   PF_RECON_GAUSSIAN_SV };
    for (int i = 0; i < 4; i++)
        check_blur_combination(&in, &exact, PF_SAMPLE_GRID, grid[i]);
    for (int i = 0; i < 4; i++) {
        if (grid[i] == PF_RECON_LINEAR)
            continue;
        check_blur_combination(&in, &exact, PF_SAMPLE_ADAPTIVE, grid[i]);
        check_blur_combination(&in, &exact, PF_SAMPLE_IMPORTANCE, grid[i]);
    }
    ta_free(&exact), ta_free(&in);
}

PF_TEST_SUITE(interp_approx_rt, PF_TEST(test_every_combination_matches_direct),
              PF_TEST(test_sample_counts), PF_TEST(test_one_variable_stage),
              PF_TEST(test_one_variable_stage_4d), PF_TEST(test_channels_copied_from_reference),
              PF_TEST(test_store_and_on_demand_agree), PF_TEST(test_blur_paper_variant),
              PF_TEST(test_blur_every_combination))
