/* Reconstructing on demand or storing the fill computes the same image: for every app, every
 * loop that takes on-demand reconstruction and both interpolations, the output of
 * `reconstruct on-demand` equals that of `reconstruct store`. The error model relies on it: it
 * treats the two as one approximation and measures the error once (search/model_error.c). */
#include "codegen/compile.h"
#include "dataset/image.h"
#include "perforate/plan.h"
#include "perforate/schedule.h"

#include "tests/harness/harness.h"
#include "tests/search/search_test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Outputs may differ by float rounding: the interpolation is evaluated in another order. */
#define TOLERANCE 1e-5f

static pf_image *run(const pf_program *prog, const pf_param_values *pv, const char *text,
                     const pf_image *in)
{
    pf_error err;
    pf_plan_target t = pf_host_plan_target();
    pf_plan *plan = pf_plan_parse(prog, text, "<on-demand>", &t, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    pf_compile_options o = { 0 };
    o.backend = PF_BACKEND_JIT;
    o.threads = 2;
    pf_variant *v = pf_variant_build(prog, pv, plan, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    pf_image *out = pf_image_new(in->width, in->height, in->channels, &err);
    pf_buffer b[2] = { pf_image_buffer(in, 0), pf_image_buffer(out, 0) };
    CU_ASSERT_EQUAL(pf_variant_run(v, b, &err), 0);
    pf_variant_free(v);
    pf_plan_free(plan);
    return out;
}

static float max_difference(const pf_image *a, const pf_image *b)
{
    float d = 0;
    for (int c = 0; c < a->channels; c++)
        for (int y = 0; y < a->height; y++)
            for (int x = 0; x < a->width; x++)
                d = fmaxf(d, fabsf(*pf_image_at(a, x, y, c) - *pf_image_at(b, x, y, c)));
    return d;
}

/* The schedule of loop `info` on a grid of spacings sx x sy (1 for further variables). */
static void schedule_text(const pf_perforable *info, int sx, int sy, const char *mode,
                          const char *recon, char *buf, size_t size)
{
    int n = snprintf(buf, size, "# perfora schedule 1\n%s grid %d %d", info->name, sx, sy);
    for (int d = 2; d < info->n_vars; d++)
        n += snprintf(buf + n, size - (size_t)n, " 1");
    snprintf(buf + n, size - (size_t)n, " reconstruct %s %s\n", mode, recon);
}

/* Compares both modes on every loop of one app; returns how many pairs it compared. */
static int compare_app(const char *app, const pf_image *in)
{
    static const char *const recons[] = { "linear", "nearest" };
    static const int lattices[][2] = { { 4, 2 } };
    pf_program *prog = st_load_app(app);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    int pairs = 0;
    for (int l = 0; l < prog->n_loops; l++) {
        pf_perforable info;
        pf_perforable_info(prog, l, &info);
        if (!info.on_demand || info.output || info.n_vars < 2)
            continue;
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < (int)(sizeof lattices / sizeof lattices[0]); k++) {
                char store[256], demand[256];
                schedule_text(&info, lattices[k][0], lattices[k][1], "store", recons[r], store,
                              sizeof store);
                schedule_text(&info, lattices[k][0], lattices[k][1], "on-demand", recons[r],
                              demand, sizeof demand);
                pf_image *a = run(prog, &pv, store, in), *b = run(prog, &pv, demand, in);
                float d = max_difference(a, b);
                if (!(d <= TOLERANCE))
                    fprintf(stderr, "\n%s: %s and on demand differ by %g\n", app, store, d);
                CU_ASSERT(d <= TOLERANCE);
                pairs++;
                pf_image_free(a);
                pf_image_free(b);
            }
    }
    pf_params_free(&pv);
    pf_program_free(prog);
    return pairs;
}


static void test_on_demand_equals_store(void)
{
    pf_image *in = st_train_crop(80, 60, 96, 64);  /* small: the suite stays quick */
    int pairs = 0;
    for (int i = 0; st_apps[i]; i++)
        pairs += compare_app(st_apps[i], in);
    CU_ASSERT(pairs >= 30);  /* the apps' stages take it: the test compares something */
    pf_image_free(in);
}

PF_TEST_SUITE(search_on_demand, PF_TEST(test_on_demand_equals_store))
