/* Binding a run (extents from inputs and params, with messages naming image and dimension),
 * run-time params, shape-expression evaluation, and the scalar semantics of builtins.h. */
#include "lang/builtins.h"
#include "tests/harness/harness.h"
#include "tests/lang/test_front_util.h"

#include <limits.h>
#include <math.h>
#include <string.h>

static const char grid_src[] =
    "param int levels = 11;\n"
    "param float scale = 0.5;\n"
    "const int pad = 2;\n"
    "pipeline g(image in[W, H, 3], image mask[W, H], image lut[16]) -> (image out[W, H, 3]) {\n"
    "    int ss = max(max(W, H) / 64, 1);\n"
    "    image grid[W / ss + 1, H / ss + 1, levels, 4];\n"
    "    image half[int(float(W) * scale) + pad, H - 10];\n"
    "    for each (x, y, z, c) of grid as gs grid[x, y, z, c] = 1;\n"
    "    for each (x, y) of half as hs half[x, y] = 1;\n"
    "    for each (x, y, c) of out as os\n"
    "        out[x, y, c] = in[x, y, c] * mask[x, y] + lut[c] + grid[0, 0, 0, 0] + half[0, 0];\n"
    "}\n";

static void test_bind_extents(void)
{
    pf_program *p = ft_check_ok(grid_src);
    int64_t ext[3][PF_MAX_DIMS] = {{640, 480, 3, 0}, {640, 480, 0, 0}, {16, 0, 0, 0}};
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_binding b;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_bind(p, &pv, (const int64_t(*)[PF_MAX_DIMS])ext, &b, &err), 0);
    CU_ASSERT_EQUAL(b.n_sizes, 2);
    CU_ASSERT_EQUAL(b.sizes[0], 640);
    CU_ASSERT_EQUAL(b.sizes[1], 480);
    const pf_image_decl *grid = pf_program_find_image(p, "grid");
    CU_ASSERT_EQUAL(b.extents[grid->index][0], 65);  /* ss = 10 */
    CU_ASSERT_EQUAL(b.extents[grid->index][1], 49);
    CU_ASSERT_EQUAL(b.extents[grid->index][2], 11);
    CU_ASSERT_EQUAL(b.extents[grid->index][3], 4);
    const pf_image_decl *half = pf_program_find_image(p, "half");
    CU_ASSERT_EQUAL(b.extents[half->index][0], 322);
    CU_ASSERT_EQUAL(b.extents[half->index][1], 470);
    CU_ASSERT_EQUAL(b.extents[half->index][2], 1);  /* unused dimensions are 1 */
    CU_ASSERT_EQUAL(b.extents[p->outputs[0]->index][2], 3);
    pf_binding_free(&b);
    /* Params change extents. */
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "levels=3", &err), 0);
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "scale=0.25", &err), 0);
    CU_ASSERT_EQUAL_FATAL(pf_bind(p, &pv, (const int64_t(*)[PF_MAX_DIMS])ext, &b, &err), 0);
    CU_ASSERT_EQUAL(b.extents[grid->index][2], 3);
    CU_ASSERT_EQUAL(b.extents[half->index][0], 162);
    pf_binding_free(&b);
    /* NULL params: the defaults. */
    CU_ASSERT_EQUAL_FATAL(pf_bind(p, NULL, (const int64_t(*)[PF_MAX_DIMS])ext, &b, &err), 0);
    CU_ASSERT_EQUAL(b.extents[grid->index][2], 11);
    pf_binding_free(&b);
    pf_params_free(&pv);
    pf_program_free(p);
}

static void expect_bind_error(const pf_program *p, const pf_param_values *pv,
                              int64_t ext[][PF_MAX_DIMS], const char *msg)
{
    pf_binding b;
    pf_error err;
    CU_ASSERT_EQUAL(pf_bind(p, pv, (const int64_t(*)[PF_MAX_DIMS])ext, &b, &err), -1);
    if (!strstr(err.msg, msg))
        fprintf(stderr, "\nwanted '%s', got '%s'\n", msg, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg));
    CU_ASSERT_PTR_NULL(b.extents);
}

static void test_bind_errors(void)
{
    pf_program *p = ft_check_ok(grid_src);
    pf_param_values pv;
    pf_params_init(&pv, p);
    int64_t grey[3][PF_MAX_DIMS] = {{640, 480, 1}, {640, 480}, {16}};
    expect_bind_error(p, &pv, grey, "input 'in' has 1 channel(s) but the pipeline declares 3");
    int64_t mism[3][PF_MAX_DIMS] = {{640, 480, 3}, {640, 479}, {16}};
    expect_bind_error(p, &pv, mism, "input 'mask' has extent 479 in dimension 1, but size 'H' "
                                    "is 480 (from input 'in')");
    int64_t lut[3][PF_MAX_DIMS] = {{640, 480, 3}, {640, 480}, {15}};
    expect_bind_error(p, &pv, lut, "input 'lut' has extent 15 in dimension 0 but the pipeline "
                                   "declares 16");
    int64_t zero[3][PF_MAX_DIMS] = {{0, 480, 3}, {0, 480}, {16}};
    expect_bind_error(p, &pv, zero, "input 'in' has extent 0 in dimension 0");
    int64_t small[3][PF_MAX_DIMS] = {{640, 7, 3}, {640, 7}, {16}};
    expect_bind_error(p, &pv, small, "extent 1 of image 'half' is -3 (must be >= 1)");
    pf_error err;
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "levels=-1", &err), 0);
    int64_t ok[3][PF_MAX_DIMS] = {{640, 480, 3}, {640, 480}, {16}};
    expect_bind_error(p, &pv, ok, "extent 2 of image 'grid' is -1 (must be >= 1)");
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "levels=100000", &err), 0);
    int64_t big[3][PF_MAX_DIMS] = {{64000, 48000, 3}, {64000, 48000}, {16}};
    expect_bind_error(p, &pv, big, "more than 2^31 elements");
    /* extents stop at 2^30, so loop arithmetic over one never passes 2^31 - 1 (issue 27) */
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "levels=1", &err), 0);
    int64_t wide[3][PF_MAX_DIMS] = {{(1 << 30) + 1, 1, 3}, {(1 << 30) + 1, 1}, {16}};
    expect_bind_error(p, &pv, wide, "input 'in' has extent 1073741825 in dimension 0 (must be 1 "
                                    "to 1073741824)");
    pf_params_free(&pv);
    pf_program_free(p);
}

static void test_params(void)
{
    pf_program *p = ft_check_ok("param int n = 2 + 3;\nparam float s = 1;\nparam bool b = true;\n"
                                "pipeline q(image in[W]) -> (image out[W]) {\n"
                                "    for each (x) of out as o out[x] = b ? s * float(n) : 0.0;\n"
                                "}\n");
    pf_param_values pv;
    pf_params_init(&pv, p);
    CU_ASSERT_EQUAL(pv.n, 3);
    CU_ASSERT_EQUAL(pv.values[0].i, 5);
    CU_ASSERT_EQUAL(pv.values[1].f, 1.0f);
    CU_ASSERT_TRUE(pv.values[2].b);
    pf_error err;
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "n=-12", &err), 0);
    CU_ASSERT_EQUAL(pv.values[0].i, -12);
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "s=2", &err), 0);
    CU_ASSERT_EQUAL(pv.values[1].f, 2.0f);
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "b=false", &err), 0);
    CU_ASSERT_FALSE(pv.values[2].b);
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "n=1.5", &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "param 'n' is an int, and '1.5' is not one"));
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "n=99999999999", &err), -1);
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "s=nan", &err), -1);
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "b=yes", &err), -1);
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "q=1", &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no param 'q'"));
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "n", &err), -1);
    CU_ASSERT_EQUAL(pf_params_set(&pv, p, "=3", &err), -1);
    pf_params_free(&pv);
    pf_program_free(p);
}

static void test_eval_shape_expressions(void)
{
    pf_program *p = ft_check_ok(grid_src);
    pf_param_values pv;
    pf_params_init(&pv, p);
    int32_t sizes[2] = {100, 50};
    pf_value v;
    const pf_image_decl *half = pf_program_find_image(p, "half");
    CU_ASSERT_EQUAL(pf_eval_const_expr(half->extents[0], &pv, sizes, &v), 0);
    CU_ASSERT_EQUAL(v.i, 52);
    CU_ASSERT_EQUAL(pf_eval_const_expr(half->extents[0], NULL, sizes, &v), -1);
    CU_ASSERT_EQUAL(pf_eval_const_expr(half->extents[1], NULL, NULL, &v), -1);
    /* A pipeline scalar's shape initializer is evaluated through it. */
    const pf_image_decl *grid = pf_program_find_image(p, "grid");
    CU_ASSERT_EQUAL(pf_eval_const_expr(grid->extents[0], &pv, sizes, &v), 0);
    CU_ASSERT_EQUAL(v.i, 101);
    /* Not a shape expression: a stage body. */
    const pf_expr *body = p->stages[2]->body->value;
    CU_ASSERT_EQUAL(pf_eval_const_expr(body, &pv, sizes, &v), -1);
    pf_params_free(&pv);
    pf_program_free(p);
}

static void test_noise(void)
{
    int32_t a[4] = {1, 2, 3, 4};
    float seen[64];
    for (int n = 1; n <= 4; n++) {
        float f = pf_noise(n, a);
        CU_ASSERT(f >= 0.0f && f < 1.0f);
        CU_ASSERT_EQUAL(f, pf_noise(n, a));  /* deterministic */
    }
    /* Spread: neighbouring pixels get unrelated values in [0, 1). */
    double mean = 0;
    for (int i = 0; i < 64; i++) {
        int32_t xy[2] = {i % 8, i / 8};
        seen[i] = pf_noise(2, xy);
        mean += seen[i] / 64.0;
        CU_ASSERT(seen[i] >= 0.0f && seen[i] < 1.0f);
        if (i > 0)
            CU_ASSERT(seen[i] != seen[i - 1]);
    }
    CU_ASSERT(mean > 0.3 && mean < 0.7);
    int32_t neg[2] = {-1, INT_MIN};
    CU_ASSERT(pf_noise(2, neg) < 1.0f);
    int32_t a1[1] = {1}, a2[2] = {1, 0};
    CU_ASSERT(pf_noise(1, a1) != pf_noise(2, a2));  /* the count is hashed too */
}

static void test_sort_and_median(void)
{
    pf_value v[6];
    float in[6] = {3, -1, NAN, 2, -0.0f, 0.0f};
    for (int i = 0; i < 6; i++)
        v[i].f = in[i];
    pf_value m = pf_median_values(v, 6, 3, PF_T_FLOAT);  /* of {3, -1, nan} */
    CU_ASSERT_EQUAL(v[0].f, 3.0f);                       /* v is not modified */
    CU_ASSERT(m.f == -1.0f || m.f == 3.0f || isnan(m.f));
    pf_value w[4];
    float win[4] = {0.0f, -0.0f, 5, 1};
    for (int i = 0; i < 4; i++)
        w[i].f = win[i];
    pf_sort_values(w, 4, 99, PF_T_FLOAT);  /* n clamped to the size; stable */
    CU_ASSERT_EQUAL(w[0].f, 0.0f);
    CU_ASSERT_FALSE(signbit(w[0].f));
    CU_ASSERT(signbit(w[1].f));
    CU_ASSERT_EQUAL(w[2].f, 1.0f);
    CU_ASSERT_EQUAL(w[3].f, 5.0f);
    pf_value k[5];
    int kin[5] = {9, 4, 7, 1, 8};
    for (int i = 0; i < 5; i++)
        k[i].i = kin[i];
    CU_ASSERT_EQUAL(pf_median_values(k, 5, 5, PF_T_INT).i, 7);
    CU_ASSERT_EQUAL(pf_median_values(k, 5, 4, PF_T_INT).i, 7);  /* upper middle of 4 */
    CU_ASSERT_EQUAL(pf_median_values(k, 5, 0, PF_T_INT).i, 9);  /* n clamped to 1 */
    pf_sort_values(k, 5, -3, PF_T_INT);                         /* n clamped to 0 */
    CU_ASSERT_EQUAL(k[0].i, 9);
}

static void test_operator_semantics(void)
{
    pf_value a = {.i = INT_MIN}, b = {.i = -1}, z = {.i = 0};
    CU_ASSERT_EQUAL(pf_eval_binary(PF_OP_DIV, PF_T_INT, a, b).i, INT_MIN);
    CU_ASSERT_EQUAL(pf_eval_binary(PF_OP_MOD, PF_T_INT, a, b).i, 0);
    CU_ASSERT_EQUAL(pf_eval_binary(PF_OP_DIV, PF_T_INT, b, z).i, 0);
    CU_ASSERT_EQUAL(pf_eval_binary(PF_OP_MOD, PF_T_INT, b, z).i, 0);
    CU_ASSERT_EQUAL(pf_eval_binary(PF_OP_SUB, PF_T_INT, a, (pf_value){.i = 1}).i, INT_MAX);
    CU_ASSERT_EQUAL(pf_eval_unary(PF_OP_NEG, PF_T_INT, a).i, INT_MIN);
    CU_ASSERT_EQUAL(pf_float_to_int(2147483648.0f), INT_MAX);
    CU_ASSERT_EQUAL(pf_float_to_int(-2147483904.0f), INT_MIN);
    CU_ASSERT_EQUAL(pf_float_to_int(NAN), 0);
    CU_ASSERT_EQUAL(pf_float_to_int(-0.9f), 0);
    pf_value f1 = {.f = NAN}, f2 = {.f = 1.0f};
    /* min = b < a ? b : a; max = a < b ? b : a */
    pf_value args[2] = {f1, f2};
    CU_ASSERT(isnan(pf_eval_builtin(PF_B_MIN, PF_T_FLOAT, 2, args).f));
    CU_ASSERT(isnan(pf_eval_builtin(PF_B_MAX, PF_T_FLOAT, 2, args).f));
    pf_value rev[2] = {f2, f1};
    CU_ASSERT_EQUAL(pf_eval_builtin(PF_B_MIN, PF_T_FLOAT, 2, rev).f, 1.0f);
    CU_ASSERT_EQUAL(pf_eval_builtin(PF_B_MAX, PF_T_FLOAT, 2, rev).f, 1.0f);
    CU_ASSERT_EQUAL(pf_reduce_identity(PF_REDUCE_MIN, PF_T_FLOAT).f, INFINITY);
    CU_ASSERT_EQUAL(pf_reduce_identity(PF_REDUCE_MAX, PF_T_INT).i, INT_MIN);
    CU_ASSERT_EQUAL(pf_reduce_identity(PF_REDUCE_SUM, PF_T_INT).i, 0);
    pf_value acc = pf_reduce_step(PF_REDUCE_MAX, PF_T_INT, (pf_value){.i = 3},
                                  (pf_value){.i = 5});
    CU_ASSERT_EQUAL(acc.i, 5);
    CU_ASSERT_EQUAL(pf_eval_cast(PF_T_FLOAT, PF_T_INT, (pf_value){.i = 16777217}).f,
                    16777216.0f);
    CU_ASSERT_EQUAL(pf_eval_cast(PF_T_INT, PF_T_BOOL, (pf_value){.b = true}).i, 1);
    CU_ASSERT_STRING_EQUAL(pf_builtin_name(PF_B_YUV_B), "yuv_b");
    CU_ASSERT_EQUAL(pf_builtin_lookup("atan2"), PF_B_ATAN2);
    CU_ASSERT_EQUAL(pf_builtin_lookup("sum"), -1);
    CU_ASSERT_TRUE(pf_builtin_reserved("sum"));
    CU_ASSERT_TRUE(pf_builtin_reserved("sort"));
    for (int b = 0; b < PF_B_COUNT; b++)
        CU_ASSERT_EQUAL(pf_builtin_lookup(pf_builtin_get((pf_builtin)b)->name), b);
}

static void test_load_program_errors(void)
{
    pf_error err;
    CU_ASSERT_PTR_NULL(pf_load_program(pf_test_src("tests/lang/no-such-file.pf"), &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no-such-file.pf"));
    pf_program *p = pf_compile_string("s.pf", "const int a = b;\nconst int c = d;\n", &err);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "s.pf:1:15: error: unknown name 'b'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "s.pf:2:15: error: unknown name 'd'"));
    /* Many errors are cut to fit the message. */
    pf_strbuf sb;
    pf_sb_init(&sb);
    for (int i = 0; i < 60; i++)
        pf_sb_printf(&sb, "const int c%d = undefined_name_%d;\n", i, i);
    CU_ASSERT_PTR_NULL(pf_compile_string("many.pf", pf_sb_str(&sb), &err));
    CU_ASSERT(strlen(err.msg) < PF_ERROR_MAX);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "perfora check"));
    pf_sb_free(&sb);
    p = pf_compile_string("ok.pf", "pipeline q(image in[W]) -> (image out[W]) {\n"
                                   "    for each (x) of out as o out[x] = in[x];\n}\n", &err);
    CU_ASSERT_PTR_NOT_NULL(p);
    pf_program_free(p);
}

PF_TEST_SUITE(lang_bind,
              PF_TEST(test_bind_extents),
              PF_TEST(test_bind_errors),
              PF_TEST(test_params),
              PF_TEST(test_eval_shape_expressions),
              PF_TEST(test_noise),
              PF_TEST(test_sort_and_median),
              PF_TEST(test_operator_semantics),
              PF_TEST(test_load_program_errors))
