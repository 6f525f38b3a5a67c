/* The runtime's median (codegen/runtime.c) against a full sort: every window size from 1 to
 * 200 (both selection paths: rank counting up to 128 values, quickselect above), values with
 * many ties, signed zeros, and NaNs (whose order the stable sort defines). */
#include "codegen/runtime.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffff;
}

static void test_median_matches_sort(void)
{
    unsigned seed = 7;
    float v[200], sorted[200];
    for (int n = 1; n <= 200; n++)
        for (int rep = 0; rep < 20; rep++) {
            int levels = rep % 2 ? 5 : 1000;  /* many ties, or few */
            for (int i = 0; i < n; i++) {
                v[i] = (float)(lcg(&seed) % levels) / 7.0f - 3.0f;
                if (v[i] == 0.0f && lcg(&seed) % 2)
                    v[i] = -0.0f;
            }
            memcpy(sorted, v, sizeof v[0] * (size_t)n);
            qsort(sorted, (size_t)n, sizeof sorted[0], cmp_float);
            float m = pf_rt_median_f32(v, n);
            CU_ASSERT(m == sorted[n / 2]);
        }
}

static void test_median_with_nan_and_ints(void)
{
    float v[9] = { 3, NAN, 1, 2, NAN, 5, 4, 0, 6 }, s[9];
    memcpy(s, v, sizeof v);
    pf_rt_sort_f32(s, 9);
    float m = pf_rt_median_f32(v, 9);
    CU_ASSERT(memcmp(&m, &s[4], sizeof m) == 0);
    int32_t w[6] = { 9, -2, 7, 7, 0, 3 };
    CU_ASSERT_EQUAL(pf_rt_median_i32(w, 6), 7);  /* sorted -2 0 3 7 7 9: element 3 */
    CU_ASSERT_EQUAL(pf_rt_median_f32(v, 0), v[0]);  /* n < 1 counts as 1 */
}

/* The runtime's per-phase timers: off, nothing is counted; on, an adaptive variant's masks and
 * reconstruction are, and a grid variant reconstructed by generated code counts no mask. */
static void test_phase_timers(void)
{
    pf_program *prog = cg_load_app("blur");
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_image *in = cg_synthetic(64, 48, 3, 5u);
    const char *scheds[2] = { "loop_output adaptive 2 0.4 reconstruct store nearest\n",
                              "loop_output grid 2 2 1 reconstruct store linear\n" };
    for (int i = 0; i < 2; i++) {
        pf_plan *plan = cg_plan(prog, scheds[i]);
        pf_compile_options o = { 0 };
        pf_variant *v = cg_compile(prog, &pv, plan, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        cg_run r;
        pf_rt_phase_timing(false);
        CU_ASSERT_EQUAL_FATAL(cg_run_variant(v, prog, &pv, &in, 1, &r), 0);
        cg_run_free(&r);
        for (int p = 0; p < PF_RT_PHASE_COUNT; p++)
            CU_ASSERT_EQUAL(pf_rt_phase_ms((pf_rt_phase)p), 0.0);
        pf_rt_phase_timing(true);
        CU_ASSERT_EQUAL_FATAL(cg_run_variant(v, prog, &pv, &in, 1, &r), 0);
        cg_run_free(&r);
        double mask = pf_rt_phase_ms(PF_RT_PHASE_MASK);
        double recon = pf_rt_phase_ms(PF_RT_PHASE_RECONSTRUCT);
        pf_rt_phase_timing(false);
        CU_ASSERT(i == 0 ? mask > 0.0 && recon > 0.0 : mask == 0.0);
        pf_variant_free(v);
        pf_plan_free(plan);
    }
    pf_image_free(in);
    pf_params_free(&pv);
    pf_program_free(prog);
}

PF_TEST_SUITE(codegen_runtime, PF_TEST(test_median_matches_sort),
              PF_TEST(test_median_with_nan_and_ints), PF_TEST(test_phase_timers))
