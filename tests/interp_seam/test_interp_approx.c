/* The interpreter on approximated programs, with a hand-made pf_approx_runtime whose masks and
 * "reconstruction" are trivial patterns: which lattice points each sampling computes (grid,
 * adaptive's two passes, importance, channels), what the runtime is handed (views, lattice
 * origins and steps, masks), loop perforation of stages and named loops against iterations
 * computed by hand from docs/perforation.md §5, and the refusals. On-demand reads, which need
 * no runtime, are in test_interp_ondemand.c. */
#include "tests/interp/test_interp_approx_util.h"

#include "interp/interp_internal.h"

#include <math.h>

/* ---- a fake runtime that logs its calls ---- */

static struct fake_log {
    int coarse, refine, importance, recon, copy;
    pf_recon_spec spec;
    pf_buffer view;              /* the last view reconstruct got */
    const float *mask, *aux;
    float aux0;                  /* aux[0] as reconstruct saw it */
    int64_t lo[2], step[2];
    int32_t n1, n2;
    float frac, sigma_imp;
    const float *ref_data;
    int32_t copy_k, copy_c0;
    int64_t copy_lo[4], copy_step[4];
    int refine_view_ok;          /* the coarse samples were computed, nothing else */
} lg;

/* Importance: samples where (j1 + 2 j2) % 3 == 0; M = 0.25. */
static int fake_importance(const pf_buffer *ref, const int64_t *lo, const int64_t *step,
                           int32_t n1, int32_t n2, float frac, float sigma_imp, float *mask,
                           float *remapped)
{
    lg.importance++;
    lg.ref_data = ref->data;
    memcpy(lg.lo, lo, sizeof lg.lo);
    memcpy(lg.step, step, sizeof lg.step);
    lg.n1 = n1, lg.n2 = n2, lg.frac = frac, lg.sigma_imp = sigma_imp;
    for (int32_t j2 = 0; j2 < n2; j2++)
        for (int32_t j1 = 0; j1 < n1; j1++) {
            mask[j2 * n1 + j1] = (j1 + 2 * j2) % 3 == 0 ? 1.0f : 0.0f;
            remapped[j2 * n1 + j1] = 0.25f;
        }
    return 0;
}

static int fake_coarse(int32_t n1, int32_t n2, int32_t k, float *mask)
{
    lg.coarse++;
    for (int32_t j2 = 0; j2 < n2; j2++)
        for (int32_t j1 = 0; j1 < n1; j1++)
            mask[j2 * n1 + j1] = j1 % k == 0 && j2 % k == 0 ? 2.0f : 0.0f;
    return 0;
}

/* Fine samples: one to the right of each coarse sample. Checks that only the coarse samples
 * were computed (the stage writes values >= 1). */
static int fake_refine(const pf_buffer *view, int32_t k, float frac, float *mask,
                       float *is_fine)
{
    (void)frac;
    lg.refine++;
    lg.refine_view_ok = 1;
    int32_t n1 = (int32_t)view->extent[0], n2 = (int32_t)view->extent[1];
    for (int32_t j2 = 0; j2 < n2; j2++)
        for (int32_t j1 = 0; j1 < n1; j1++) {
            float v = view->data[j1 * view->stride[0] + j2 * view->stride[1]];
            bool coarse = mask[j2 * n1 + j1] == 2.0f;
            lg.refine_view_ok &= coarse ? v >= 1.0f : v == 0.0f;
            bool fine = j1 % k == 1 && j2 % k == 0;
            if (fine)
                mask[j2 * n1 + j1] = 1.0f;
            is_fine[j2 * n1 + j1] = fine ? 1.0f : 0.0f;
        }
    return 0;
}

/* Whether lattice point (j1, j2) of the mask plane is a sample for `spec`. */
static bool fake_is_sample(const pf_recon_spec *spec, const float *mask, int64_t n1, int64_t j1,
                           int64_t j2)
{
    if (spec->sample == PF_SAMPLE_GRID)
        return j1 % spec->spacing[0] == 0 && j2 % spec->spacing[1] == 0;
    return mask[j2 * n1 + j1] != 0.0f;
}

/* "Reconstruction": every skipped element of a 2-D or 3-D view becomes -1. */
static int fake_reconstruct(const pf_buffer *view, const pf_recon_spec *spec, const float *mask,
                            const float *aux)
{
    lg.recon++;
    lg.spec = *spec;
    lg.view = *view;
    lg.mask = mask;
    lg.aux = aux;
    lg.aux0 = aux ? aux[0] : -1.0f;
    int64_t n1 = view->extent[0], n2 = view->ndims > 1 ? view->extent[1] : 1;
    int64_t n3 = view->ndims > 2 ? view->extent[2] : 1;
    for (int64_t j3 = 0; j3 < n3; j3++)
        for (int64_t j2 = 0; j2 < n2; j2++)
            for (int64_t j1 = 0; j1 < n1; j1++)
                if (!fake_is_sample(spec, mask, n1, j1, j2))
                    view->data[j1 * view->stride[0] + j2 * view->stride[1] +
                               j3 * view->stride[2]] = -1.0f;
    return 0;
}

/* "Channel copy": channels >= c0 of a 3-D view become -2. */
static int fake_copy(const pf_buffer *view, int32_t k, const int64_t *lo, const int64_t *step,
                     const pf_buffer *ref, int32_t c0)
{
    (void)ref;
    lg.copy++;
    lg.copy_k = k, lg.copy_c0 = c0;
    memcpy(lg.copy_lo, lo, sizeof(int64_t) * (size_t)k);
    memcpy(lg.copy_step, step, sizeof(int64_t) * (size_t)k);
    for (int64_t c = c0; c < view->extent[2]; c++)
        for (int64_t y = 0; y < view->extent[1]; y++)
            for (int64_t x = 0; x < view->extent[0]; x++)
                view->data[x * view->stride[0] + y * view->stride[1] + c * view->stride[2]] =
                    -2.0f;
    return 0;
}

static const pf_approx_runtime fake_rt = { fake_importance, fake_coarse, fake_refine,
                                           fake_reconstruct, fake_copy };

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

/* ---- refusals ---- */

static void test_refused_without_runtime(void)
{
    pf_program *p = ta_compile(add_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ta_image in = ta_pattern(2, 5, 4, 1);
    ta_image out = ta_run1(p, &in, NULL);  /* exact: no runtime needed */
    CU_ASSERT(computed(&out, &in, 4, 3));
    ta_free(&out);
    ta_grid(p, "s", 2, 2, 1, PF_RECON_NONE);
    ta_run_fails(p, &in, NULL, "no approximation runtime was given");
    /* pf_interp_run refuses any annotation */
    pf_param_values pv;
    pf_params_init(&pv, p);
    int64_t ext[1][PF_MAX_DIMS] = { { 5, 4, 1, 1 } };
    pf_binding b;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_bind(p, &pv, (const int64_t(*)[PF_MAX_DIMS])ext, &b, &err), 0);
    out = ta_new(2, 5, 4, 1);
    pf_buffer ib = ta_buffer(&in), ob = ta_buffer(&out);
    CU_ASSERT_EQUAL(pf_interp_run(p, &pv, &b, &ib, &ob, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "does not run approximations yet"));
    pf_binding_free(&b);
    pf_params_free(&pv);
    ta_free(&out);
    ta_free(&in);
    pf_program_free(p);
}

/* ---- grid ---- */

/* Lattice x = 1, 3, .., 11 (n1 = 6), y = 0 .. 6 (n2 = 7); grid (2, 3) computes j1 % 2 == 0 and
 * j2 % 3 == 0: x in {1, 5, 9}, y in {0, 3, 6}. */
static void test_grid_points_and_view(void)
{
    pf_program *p = ta_compile(add_over_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ta_image in = ta_pattern(2, 13, 7, 1);
    for (int recon = 0; recon < 2; recon++) {
        ta_grid(p, "s", 2, 3, 1, recon ? PF_RECON_NEAREST : PF_RECON_NONE);
        log_reset();
        ta_image out = ta_run1(p, &in, &fake_rt);
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
    pf_program_free(p);
}

/* The same grid on many threads gives the same image. */
static void test_grid_threads(void)
{
    pf_program *p = ta_compile(add_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ta_grid(p, "s", 3, 2, 1, PF_RECON_NEAREST);
    ta_image in = ta_pattern(2, 150, 61, 1);
    pf_interp_threads = 1;
    ta_image one = ta_run1(p, &in, &fake_rt);
    pf_interp_threads = 3;
    ta_image three = ta_run1(p, &in, &fake_rt);
    pf_interp_threads = 0;
    CU_ASSERT(memcmp(one.data, three.data, sizeof(float) * (size_t)ta_count(&one)) == 0);
    ta_free(&one);
    ta_free(&three);
    ta_free(&in);
    pf_program_free(p);
}

/* ---- adaptive and importance ---- */

static void test_adaptive_two_passes(void)
{
    pf_program *p = ta_compile(add_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_stage_approx *a = ta_approx(p, "s");
    a->sample = PF_SAMPLE_ADAPTIVE;
    a->k = 3;
    a->frac = 0.5f;
    a->recon = PF_RECON_GAUSSIAN_SV;
    a->sigma = 0.9f;
    ta_image in = ta_pattern(2, 10, 7, 1);
    log_reset();
    ta_image out = ta_run1(p, &in, &fake_rt);
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
    pf_stage_approx *a = ta_approx(p, "s");
    a->sample = PF_SAMPLE_IMPORTANCE;
    a->frac = 0.25f;
    a->sigma_imp = 0.1f;
    a->recon = PF_RECON_NEAREST;
    a->ref = ta_image_decl(p, "g");
    ta_image ins[2] = { ta_pattern(2, 9, 8, 1), ta_pattern(2, 9, 8, 1) };
    ta_image out;
    pf_error err;
    log_reset();
    CU_ASSERT_EQUAL_FATAL(ta_run(p, ins, &out, &fake_rt, &err), 0);
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
    pf_stage_approx *a = ta_approx(p, "s");
    a->channels = 1;
    a->ref = ta_image_decl(p, "in");
    ta_image in = ta_pattern(3, 4, 3, 3);
    log_reset();
    ta_image out = ta_run1(p, &in, &fake_rt);
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

static float run_loop(pf_program *p, pf_loop_perf_kind kind, int step, float frac, int x)
{
    ta_loop_perf(p, "L", kind, step, frac);
    ta_image in = ta_pattern(1, 6, 1, 1);
    ta_image out = ta_run1(p, &in, &fake_rt);
    float v = out.data ? out.data[x] : -1.0f;
    ta_free(&out);
    ta_free(&in);
    return v;
}

static void test_named_loop_perforation(void)
{
    pf_program *p = ta_compile(loop_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    /* step 2: j = 0, 2, 4, 6 */
    CU_ASSERT_EQUAL(run_loop(p, PF_PERF_STEP, 2, 0, 0), 1.0f + 4.0f + 16.0f + 64.0f);
    /* first 0.5: j < (int)(0.5f * 7) = 3 */
    CU_ASSERT_EQUAL(run_loop(p, PF_PERF_FIRST, 1, 0.5f, 0), 1.0f + 2.0f + 4.0f);
    /* last 0.3: j >= (int)((1 - 0.3f) * 7) = (int)4.9 = 4 */
    CU_ASSERT_EQUAL(run_loop(p, PF_PERF_LAST, 1, 0.3f, 0), 16.0f + 32.0f + 64.0f);
    /* first 1, last 1: everything */
    CU_ASSERT_EQUAL(run_loop(p, PF_PERF_FIRST, 1, 1.0f, 0), 127.0f);
    CU_ASSERT_EQUAL(run_loop(p, PF_PERF_LAST, 1, 1.0f, 0), 127.0f);
    /* random 0.5: pf_perf_hash(id, j, x, 0) < 0.5, with a = x (a one-variable stage: b = 0) */
    int id = (int)(pf_program_find_loop(p, "L") - p->loops);
    for (int x = 0; x < 6; x++) {
        float want = 0.0f;
        for (int j = 0; j < 7; j++)
            want += pf_perf_hash(id, j, x, 0) < 0.5f ? (float)(1 << j) : 0.0f;
        CU_ASSERT_EQUAL(run_loop(p, PF_PERF_RANDOM, 1, 0.5f, x), want);
    }
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
    ta_image in = ta_pattern(2, 3, 4, 1);
    ta_loop_perf(p, "L", PF_PERF_FIRST, 1, 0.5f);
    ta_image out = ta_run1(p, &in, &fake_rt);
    CU_ASSERT_EQUAL(*ta_at(&out, 2, 3, 0), 31.0f);  /* j < 5 of n = 10 */
    ta_free(&out);
    int id = ta_loop_perf(p, "L", PF_PERF_RANDOM, 1, 0.3f);
    out = ta_run1(p, &in, &fake_rt);
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
    pf_program_free(p);
}

/* ---- loop perforation of a stage's row variable ---- */

/* Rows y = 1, 3, .., 13 (n = 7) of a 15-row image; which rows run, by j. */
static void check_rows(pf_program *p, const ta_image *in, const bool *runs)
{
    ta_image out = ta_run1(p, (ta_image *)in, &fake_rt);
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
    pf_stage_approx *a = ta_approx(p, "s");
    a->sample = PF_SAMPLE_LOOP;
    a->perf = (pf_loop_perf){ PF_PERF_STEP, 3, 0, 0 };
    check_rows(p, &in, (const bool[]){ 1, 0, 0, 1, 0, 0, 1 });
    a->perf = (pf_loop_perf){ PF_PERF_FIRST, 1, 0.6f, 0 };  /* (int)(0.6f * 7) = 4 */
    check_rows(p, &in, (const bool[]){ 1, 1, 1, 1, 0, 0, 0 });
    a->perf = (pf_loop_perf){ PF_PERF_LAST, 1, 0.6f, 0 };   /* (int)(0.4f * 7) = 2 */
    check_rows(p, &in, (const bool[]){ 0, 0, 1, 1, 1, 1, 1 });
    int id = ta_stage(p, "s")->loop_id;
    a->perf = (pf_loop_perf){ PF_PERF_RANDOM, 1, 0.5f, id };
    bool runs[7];
    for (int j = 0; j < 7; j++)
        runs[j] = pf_perf_hash(id, j, 0, 0) < 0.5f;
    check_rows(p, &in, runs);
    ta_free(&in);
    pf_program_free(p);
}

/* ---- refusals of annotations that do not fit ---- */

static void expect_refusal(const char *src, void (*annotate)(pf_program *), const char *want)
{
    pf_program *p = ta_compile(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    annotate(p);
    ta_image ins[2] = { ta_pattern(2, 6, 5, 1), ta_pattern(2, 6, 5, 1) };
    ta_run_fails(p, ins, &fake_rt, want);
    ta_free(&ins[0]);
    ta_free(&ins[1]);
    pf_program_free(p);
}

static void linear_importance(pf_program *p)
{
    pf_stage_approx *a = ta_approx(p, "s");
    a->sample = PF_SAMPLE_IMPORTANCE;
    a->frac = 0.5f;
    a->sigma_imp = 0.1f;
    a->ref = ta_image_decl(p, "in");
    a->recon = PF_RECON_LINEAR;
}

static void zero_spacing(pf_program *p)
{
    ta_grid(p, "s", 2, 0, 1, PF_RECON_NONE);
}

static void bad_random_id(pf_program *p)
{
    pf_stage_approx *a = ta_approx(p, "s");
    a->sample = PF_SAMPLE_LOOP;
    a->perf = (pf_loop_perf){ PF_PERF_RANDOM, 1, 0.5f, 77 };
}

static void channels_without_ref(pf_program *p)
{
    ta_approx(p, "s")->channels = 1;
}

static void serial_reconstructed(pf_program *p)
{
    ta_grid(p, "splat", 2, 2, 1, PF_RECON_NEAREST);
}

static void adaptive_one_var(pf_program *p)
{
    pf_stage_approx *a = ta_approx(p, "s");
    a->sample = PF_SAMPLE_ADAPTIVE;
    a->k = 2;
    a->frac = 0.5f;
}

static void test_refusals(void)
{
    expect_refusal(add_src, linear_importance, "linear reconstruction needs grid sampling");
    expect_refusal(add_src, zero_spacing, "grid spacing below 1");
    expect_refusal(add_src, bad_random_id, "not the loop's index");
    expect_refusal(add_src, channels_without_ref, "channel subsampling needs a reference");
    expect_refusal("pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
                   "    for each (x, y) of in as splat out[x / 2, y] += in[x, y];\n"
                   "}\n",
                   serial_reconstructed, "serial (scatter) stage cannot be reconstructed");
    expect_refusal("pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
                   "    for each (x) of out as s { for (y) of 0 .. H - 1 out[x, y] = 1.0; }\n"
                   "}\n",
                   adaptive_one_var, "at least two variables");
    expect_refusal("pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
                   "    for each (x) of out as s { for (y) of 0 .. H - 1 out[x, y] = 1.0; }\n"
                   "}\n",
                   channels_without_ref, "channel subsampling needs the stage's last");
}

PF_TEST_SUITE(interp_approx, PF_TEST(test_refused_without_runtime),
              PF_TEST(test_grid_points_and_view), PF_TEST(test_grid_threads),
              PF_TEST(test_adaptive_two_passes), PF_TEST(test_importance_arguments),
              PF_TEST(test_channels_alone), PF_TEST(test_named_loop_perforation),
              PF_TEST(test_named_loop_entry_bounds_and_hash),
              PF_TEST(test_stage_row_perforation), PF_TEST(test_refusals))
