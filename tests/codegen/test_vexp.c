/* The inline vector exp (codegen/llvm_vexp.c) against libm's expf, lane by lane, at every
 * vector width a schedule can ask for, both ways of scaling by 2^n: within 2 ulp over the whole range where exp is finite
 * and non-zero, and exact where it is not (infinity, zero, gradual underflow, NaN). */
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include "codegen/llvm_emit.h"
#include "perforate/schedule.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *source =
    "pipeline e(image in[W, H]) -> (image out[W, H]) {\n"
    "  for each (x, y) of out as s out[x, y] = exp(in[x, y]);\n}\n";

/* Distance in units in the last place between two finite floats of the same sign (the
 * difference of their ordered bit patterns). */
static int64_t ulp_distance(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    if (ia < 0)
        ia = INT32_MIN - ia;
    if (ib < 0)
        ib = INT32_MIN - ib;
    return ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia;
}

/* The inputs: the specials and edges first, then an even sweep of [-104.5, 89.5]. */
static pf_image *inputs(int w, int h, int *n_special)
{
    static const float special[] = {
        NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -1e-30f, 1.0f, -1.0f,
        88.7228f, 88.72284f, 88.7229f, 89.0f, 89.5f, 1000.0f, 3e38f,
        -87.33f, -87.34f, -100.0f, -103.27893f, -103.972f, -103.973f, -104.0f, -104.5f,
        -1000.0f, -3e38f, 0.34657359f, -0.34657359f, 0.5f, 20.0f, -20.0f,
    };
    int ns = (int)(sizeof special / sizeof *special);
    pf_error err;
    pf_image *im = pf_image_new(w, h, 1, &err);
    for (int i = 0; i < w * h; i++) {
        double t = (double)i / (w * h - 1);
        *pf_image_at(im, i % w, i / w, 0) = i < ns ? special[i] : (float)(-104.5 + 194.0 * t);
    }
    *n_special = ns;
    return im;
}

/* 0 when got is what exp(x) must give; else how far off it is (ulp, or a huge number). */
static int64_t error_of(float x, float got)
{
    float want = expf(x);
    if (isnan(want))
        return isnan(got) ? 0 : INT32_MAX;
    if (isinf(want) || want == 0.0f)
        return got == want ? 0 : INT32_MAX;
    if (!isfinite(got) || got < 0.0f)
        return INT32_MAX;
    return ulp_distance(got, want);
}

/* The program above, compiled (its params in *pv). */
static pf_program *exp_program(pf_param_values *pv)
{
    pf_error err;
    pf_program *prog = pf_compile_string("exp.pf", source, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_params_init(pv, prog);
    return prog;
}

/* Runs it on in with its x loop `width` lanes wide. */
static void run_exp(pf_program *prog, pf_param_values *pv, pf_image *in, int width, cg_run *r)
{
    char text[64];
    snprintf(text, sizeof text, "s exec vectorize %d", width);
    pf_plan *plan = cg_plan(prog, text);
    CU_ASSERT_EQUAL_FATAL(cg_run_plan(prog, pv, plan, PF_BACKEND_JIT, &in, 1, r), 0);
    pf_plan_free(plan);
}

static void check_width(pf_program *prog, pf_param_values *pv, pf_image *in, int width)
{
    cg_run r;
    run_exp(prog, pv, in, width, &r);
    int64_t worst = 0;
    float worst_x = 0;
    for (int y = 0; y < in->height; y++)
        for (int x = 0; x < in->width; x++) {
            float v = *pf_image_at(in, x, y, 0);
            int64_t e = error_of(v, *pf_image_at(r.out[0], x, y, 0));
            if (e > worst) {
                worst = e;
                worst_x = v;
            }
        }
    if (worst > 2)
        printf("\n    vectorize %d: %lld ulp from expf at x = %a", width, (long long)worst,
               worst_x);
    CU_ASSERT(worst <= 2);
    cg_run_free(&r);
}

static void test_vector_exp_accuracy(void)
{
    pf_param_values pv;
    pf_program *prog = exp_program(&pv);
    /* 509 columns: every width ends its rows with a scalar tail, so the specials also meet the
     * scalar path (libm) in other rows' positions. */
    int ns;
    pf_image *in = inputs(509, 400, &ns);
    static const int widths[] = { 4, 8, 16 };
    for (int fields = 0; fields < 2; fields++) {  /* vscalefps (AVX-512 hosts), then without */
        pf_llvm_exp_no_scalef = fields;
        for (int i = 0; i < 3; i++)
            check_width(prog, &pv, in, widths[i]);
    }
    pf_llvm_exp_no_scalef = false;
    pf_image_free(in);
    pf_params_free(&pv);
    pf_program_free(prog);
}

/* A lane's NaN or infinity does not disturb its neighbours (no lane-crossing special case). */
static void test_vector_exp_lanes_independent(void)
{
    pf_param_values pv;
    pf_program *prog = exp_program(&pv);
    pf_error err;
    pf_image *in = pf_image_new(32, 1, 1, &err);
    for (int x = 0; x < 32; x++)
        *pf_image_at(in, x, 0, 0) = x % 3 == 0 ? NAN : x % 3 == 1 ? INFINITY : 0.5f;
    cg_run r;
    run_exp(prog, &pv, in, 16, &r);
    for (int x = 0; x < 32; x++) {
        float got = *pf_image_at(r.out[0], x, 0, 0);
        bool ok = x % 3 == 0 ? isnan(got)
                : x % 3 == 1 ? isinf(got) && got > 0
                             : ulp_distance(got, expf(0.5f)) <= 2;
        CU_ASSERT(ok);
    }
    cg_run_free(&r);
    pf_image_free(in);
    pf_params_free(&pv);
    pf_program_free(prog);
}

PF_TEST_SUITE(codegen_vexp, PF_TEST(test_vector_exp_accuracy),
              PF_TEST(test_vector_exp_lanes_independent))
