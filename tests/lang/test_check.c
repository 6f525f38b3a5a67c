/* Checker tests on valid programs: the tables and annotations later passes rely on (symbols,
 * slots, implicit casts, seriality, data flow, loops, folded constants). */
#include "lang/builtins.h"
#include "tests/harness/harness.h"
#include "tests/lang/test_front_util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char blur_src[] =
    "param float sigma = 4.0;\n"
    "const int h = 8;\n"
    "float K(int i) { return exp(-float(i * i) / (2.0 * sigma * sigma)); }\n"
    "pipeline blur(image in[W, H, C]) -> (image out[W, H, C]) {\n"
    "    image A[W, H, C];\n"
    "    float norm = sum(K(i), i = -h .. h);\n"
    "    for each (x, y, c) of A as stage1\n"
    "        A[x, y, c] = sum(K(i) * in[x - i, y, c], i = -h .. h) / norm;\n"
    "    for each (x, y, c) of out as stage2\n"
    "        out[x, y, c] = sum(K(i) * A[x, y - i, c], i = -h .. h) / norm;\n"
    "}\n";

static void test_blur_tables(void)
{
    pf_program *p = ft_check_ok(blur_src);
    CU_ASSERT_FATAL(p != NULL);
    CU_ASSERT(p->checked);
    CU_ASSERT_EQUAL_FATAL(p->n_images, 3);
    CU_ASSERT_STRING_EQUAL(p->images[0]->name, "in");
    CU_ASSERT_STRING_EQUAL(p->images[1]->name, "out");
    CU_ASSERT_STRING_EQUAL(p->images[2]->name, "A");
    CU_ASSERT_EQUAL(p->images[2]->role, PF_IMAGE_LOCAL);
    CU_ASSERT_EQUAL(p->images[2]->role_index, 0);
    CU_ASSERT_EQUAL(p->images[1]->index, 1);
    CU_ASSERT_EQUAL_FATAL(p->n_sizes, 3);
    CU_ASSERT_STRING_EQUAL(p->sizes[0]->name, "W");
    CU_ASSERT_STRING_EQUAL(p->sizes[2]->name, "C");
    CU_ASSERT_EQUAL(p->sizes[2]->index, 2);
    CU_ASSERT_EQUAL(p->n_scalars, 1);
    CU_ASSERT_EQUAL(p->scalars[0]->kind, PF_SYM_SCALAR);
    CU_ASSERT_FALSE(p->scalars[0]->shape);
    CU_ASSERT_PTR_NOT_NULL(p->scalars[0]->init);
    CU_ASSERT_EQUAL(p->n_scalar_slots, 1);  /* the reduction variable */
    CU_ASSERT_EQUAL_FATAL(p->n_stages, 2);
    CU_ASSERT_EQUAL_FATAL(p->n_loops, 2);
    pf_stage *s1 = p->stages[0];
    CU_ASSERT_EQUAL(p->loops[0].kind, PF_LOOP_STAGE);
    CU_ASSERT_PTR_EQUAL(p->loops[0].stage, s1);
    CU_ASSERT_EQUAL(s1->loop_id, 0);
    CU_ASSERT_EQUAL(p->stages[1]->loop_id, 1);
    CU_ASSERT_FALSE(s1->serial);
    CU_ASSERT_EQUAL(s1->n_vars, 3);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(s1->vars[i]->slot, i);
        CU_ASSERT_EQUAL(s1->vars[i]->stage_dim, i);
        CU_ASSERT_PTR_EQUAL(s1->vars[i]->stage, s1);
    }
    CU_ASSERT_EQUAL(s1->n_slots, 4);
    CU_ASSERT_EQUAL(s1->n_reads, 1);
    CU_ASSERT_PTR_EQUAL(s1->reads[0], p->images[0]);
    CU_ASSERT_EQUAL(s1->n_writes, 1);
    CU_ASSERT_PTR_EQUAL(s1->writes[0], p->images[2]);
    CU_ASSERT_PTR_EQUAL(p->images[2]->first_writer, s1);
    CU_ASSERT_PTR_EQUAL(p->images[1]->first_writer, p->stages[1]);
    CU_ASSERT_PTR_NULL(p->images[0]->first_writer);
    CU_ASSERT_EQUAL(s1->body->target.kind, PF_LV_IMAGE);
    CU_ASSERT_FALSE(s1->body->target.scatter);
    CU_ASSERT_EQUAL(p->params[0]->default_value.f, 4.0f);
    CU_ASSERT_EQUAL(p->params[0]->sym->kind, PF_SYM_PARAM);
    CU_ASSERT_EQUAL(p->consts[0]->sym->value.i, 8);
    CU_ASSERT_EQUAL(p->funcs[0]->n_slots, 1);
    CU_ASSERT_EQUAL(p->funcs[0]->params[0]->slot, 0);
    CU_ASSERT_PTR_EQUAL(pf_program_find_loop(p, "stage2"), &p->loops[1]);
    CU_ASSERT_PTR_NULL(pf_program_find_loop(p, "nope"));
    CU_ASSERT_PTR_EQUAL(pf_program_find_image(p, "A"), p->images[2]);
    CU_ASSERT(ft_roundtrip(p));
    pf_program_free(p);
}

static void test_resolved_expressions(void)
{
    pf_program *p = ft_check_ok(blur_src);
    /* A[x, y, c] = sum(K(i) * in[x - i, y, c], ...) / norm */
    const pf_expr *div = p->stages[0]->body->value;
    CU_ASSERT_EQUAL_FATAL(div->kind, PF_E_BINARY);
    CU_ASSERT_EQUAL(div->type, PF_T_FLOAT);
    const pf_expr *red = div->a;
    CU_ASSERT_EQUAL_FATAL(red->kind, PF_E_REDUCE);
    CU_ASSERT_EQUAL(red->sym->kind, PF_SYM_LOOP_VAR);
    CU_ASSERT_PTR_NULL(red->sym->stage);
    CU_ASSERT_EQUAL(red->sym->slot, 3);
    const pf_expr *mul = red->args[0];
    CU_ASSERT_EQUAL(mul->a->kind, PF_E_CALL);
    CU_ASSERT_PTR_EQUAL(mul->a->sym->func, p->funcs[0]);
    CU_ASSERT_EQUAL(mul->b->kind, PF_E_IMAGE_READ);
    CU_ASSERT_EQUAL(mul->b->sym->kind, PF_SYM_IMAGE);
    CU_ASSERT_EQUAL(div->b->kind, PF_E_NAME);
    CU_ASSERT_EQUAL(div->b->sym->kind, PF_SYM_SCALAR);
    /* K: exp(-float(i * i) / (2.0 * sigma * sigma)) */
    const pf_expr *call = p->funcs[0]->body->body[0]->value;
    CU_ASSERT_EQUAL(call->kind, PF_E_BUILTIN);
    CU_ASSERT_EQUAL(call->builtin, PF_B_EXP);
    CU_ASSERT_EQUAL(call->args[0]->a->a->kind, PF_E_CAST);
    CU_ASSERT_FALSE(call->args[0]->a->a->implicit);
    pf_program_free(p);
}

static const char *pipe_tail = "pipeline q(image in[W, H]) -> (image out[W, H]) {\n"
                               "    for each (x, y) of out as main out[x, y] = in[x, y];\n}\n";

/* A program of `pre` plus a trivial pipeline. */
static pf_program *with_pipeline(const char *pre)
{
    size_t n = strlen(pre) + strlen(pipe_tail) + 1;
    char *src = malloc(n);
    snprintf(src, n, "%s%s", pre, pipe_tail);
    pf_program *p = ft_check_ok(src);
    free(src);
    return p;
}

static pf_value const_value(const pf_program *p, const char *name)
{
    for (int i = 0; i < p->n_consts; i++)
        if (strcmp(p->consts[i]->name, name) == 0)
            return p->consts[i]->sym->value;
    CU_FAIL("no such const");
    pf_value z = {0};
    return z;
}

static void test_const_folding(void)
{
    pf_program *p = with_pipeline(
        "const float E = exp(1.0);\n"
        "const int M = 7 / 2 * 2;\n"
        "const int D = 5 / 0 + 5 % 0;\n"
        "const int WRAP = 2147483647 + 1;\n"
        "const int NEG = -2147483647 - 1;\n"
        "const int DIVMIN = NEG / -1;\n"
        "const int MODNEG = -7 % 3;\n"
        "const int T1 = int(3.7);\n"
        "const int T2 = int(-3.7);\n"
        "const int T3 = int(1e10);\n"
        "const int T4 = int(0.0 / 0.0);\n"
        "const float F = 1 / 2;\n"
        "const float G = 1.0 / 3;\n"
        "const bool B = 1 < 2 && !false;\n"
        "const int MX = max(3, 4) % 3;\n"
        "const float MF = min(2, 1.5);\n"
        "const float Q = noise(1, 2);\n"
        "const float Y = yuv_y(1, 0.5, 0.25);\n"
        "const float AR[3] = {1, 2.5, -3};\n"
        "const float AC = AR[10] + AR[-4];\n"
        "const int CL = clamp(17, 0, 9);\n"
        "const float R = round(-2.5) + floor(1.5) + ceil(1.25);\n"
        "const int AB = abs(NEG);\n"
        "const int BI = int(true) + int(false);\n"
        "const float BF = float(true);\n"
        "const int COND = M > 5 ? 10 : 20;\n");
    CU_ASSERT_EQUAL(const_value(p, "E").f, expf(1.0f));
    CU_ASSERT_EQUAL(const_value(p, "M").i, 6);
    CU_ASSERT_EQUAL(const_value(p, "D").i, 0);
    CU_ASSERT_EQUAL(const_value(p, "WRAP").i, INT_MIN);
    CU_ASSERT_EQUAL(const_value(p, "DIVMIN").i, INT_MIN);
    CU_ASSERT_EQUAL(const_value(p, "MODNEG").i, -1);
    CU_ASSERT_EQUAL(const_value(p, "T1").i, 3);
    CU_ASSERT_EQUAL(const_value(p, "T2").i, -3);
    CU_ASSERT_EQUAL(const_value(p, "T3").i, INT_MAX);
    CU_ASSERT_EQUAL(const_value(p, "T4").i, 0);
    CU_ASSERT_EQUAL(const_value(p, "F").f, 0.0f);
    CU_ASSERT_EQUAL(const_value(p, "G").f, 1.0f / 3.0f);
    CU_ASSERT_TRUE(const_value(p, "B").b);
    CU_ASSERT_EQUAL(const_value(p, "MX").i, 1);
    CU_ASSERT_EQUAL(const_value(p, "MF").f, 1.5f);
    int32_t nargs[2] = {1, 2};
    CU_ASSERT_EQUAL(const_value(p, "Q").f, pf_noise(2, nargs));
    volatile float r = 1.0f, g = 0.5f, b = 0.25f;
    CU_ASSERT_EQUAL(const_value(p, "Y").f, 0.299f * r + 0.587f * g + 0.114f * b);
    const pf_symbol *ar = p->consts[18]->sym;
    CU_ASSERT_EQUAL(ar->kind, PF_SYM_CONST_ARRAY);
    CU_ASSERT_EQUAL(ar->array_len, 3);
    CU_ASSERT_EQUAL(ar->array_values[0].f, 1.0f);
    CU_ASSERT_EQUAL(ar->array_values[2].f, -3.0f);
    CU_ASSERT_EQUAL(const_value(p, "AC").f, -2.0f);  /* indices clamp into the array */
    CU_ASSERT_EQUAL(const_value(p, "CL").i, 9);
    CU_ASSERT_EQUAL(const_value(p, "R").f, -3.0f + 1.0f + 2.0f);
    CU_ASSERT_EQUAL(const_value(p, "AB").i, INT_MIN);
    CU_ASSERT_EQUAL(const_value(p, "BI").i, 1);
    CU_ASSERT_EQUAL(const_value(p, "BF").f, 1.0f);
    CU_ASSERT_EQUAL(const_value(p, "COND").i, 10);
    CU_ASSERT(ft_roundtrip(p));
    pf_program_free(p);
}

static bool is_implicit_cast(const pf_expr *e)
{
    return e->kind == PF_E_CAST && e->implicit && e->type == PF_T_FLOAT && e->a->type == PF_T_INT;
}

static void test_implicit_casts(void)
{
    pf_program *p = with_pipeline(
        "float f(float a, int b) {\n"
        "    float s = 1;\n"
        "    s = b;\n"
        "    s += 2;\n"
        "    float t = b + 2.5;\n"
        "    float u = 2.5 < b ? b : 1.0;\n"
        "    float m = min(b, 1.5);\n"
        "    float e = exp(b);\n"
        "    return k(b, b) + b;\n"
        "}\n"
        "int g() { return 1; }\n"
        "float h() { return g(); }\n"
        "float k(float a, int b) { return a; }\n");
    pf_stmt *const *body = p->funcs[0]->body->body;
    CU_ASSERT(is_implicit_cast(body[0]->value));
    CU_ASSERT(is_implicit_cast(body[1]->value));
    CU_ASSERT(is_implicit_cast(body[2]->value));
    CU_ASSERT(is_implicit_cast(body[3]->value->a));
    CU_ASSERT_EQUAL(body[3]->value->b->kind, PF_E_FLOAT);
    const pf_expr *cond = body[4]->value;
    CU_ASSERT(is_implicit_cast(cond->a->b));
    CU_ASSERT(is_implicit_cast(cond->b));
    CU_ASSERT_EQUAL(cond->type, PF_T_FLOAT);
    CU_ASSERT(is_implicit_cast(body[5]->value->args[0]));
    CU_ASSERT_EQUAL(body[5]->value->type, PF_T_FLOAT);
    CU_ASSERT(is_implicit_cast(body[6]->value->args[0]));
    const pf_expr *ret = body[7]->value;
    CU_ASSERT(is_implicit_cast(ret->a->args[0]));
    CU_ASSERT_EQUAL(ret->a->args[1]->kind, PF_E_NAME);  /* int parameter: no cast */
    CU_ASSERT(is_implicit_cast(ret->b));
    CU_ASSERT(is_implicit_cast(p->funcs[2]->body->body[0]->value));
    /* The printer omits them. */
    CU_ASSERT(ft_roundtrip(p));
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_print_expr(body[0]->value, &sb);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb), "1");
    pf_sb_free(&sb);
    pf_program_free(p);
}

static void test_function_slots_and_forward_calls(void)
{
    pf_program *p = with_pipeline(
        "float a(float x, float y) { return b(x) + y; }\n"
        "float b(float x) {\n"
        "    float v[4];\n"
        "    if (x > 0.0) { float t = x; v[0] = t; } else { int u = 1; v[1] = float(u); }\n"
        "    for (i) of 0 .. 3 { v[i] = x; }\n"
        "    sort(v, 4);\n"
        "    return median(v, 4) + sum(float(j), j = 0 .. 2);\n"
        "}\n");
    const pf_func *b = p->funcs[1];
    pf_stmt *const *body = b->body->body;
    CU_ASSERT_EQUAL(b->params[0]->slot, 0);
    CU_ASSERT_EQUAL(body[0]->sym->kind, PF_SYM_LOCAL_ARRAY);
    CU_ASSERT_EQUAL(body[0]->sym->slot, 1);
    CU_ASSERT_EQUAL(body[0]->sym->array_len, 4);
    const pf_stmt *ifs = body[1];
    CU_ASSERT_EQUAL(ifs->then_s->body[0]->sym->slot, 5);
    CU_ASSERT_EQUAL(ifs->else_s->body[0]->sym->slot, 5);  /* sibling scopes share slots */
    CU_ASSERT_EQUAL(body[2]->sym->kind, PF_SYM_LOOP_VAR);
    CU_ASSERT_EQUAL(body[2]->sym->slot, 5);
    CU_ASSERT_EQUAL(body[2]->loop_id, -1);
    CU_ASSERT_EQUAL(body[3]->target.kind, PF_LV_ARRAY);
    CU_ASSERT_PTR_EQUAL(body[3]->target.sym, body[0]->sym);
    const pf_expr *med = body[4]->value->a;
    CU_ASSERT_EQUAL(med->builtin, PF_B_MEDIAN);
    CU_ASSERT_PTR_EQUAL(med->args[0]->sym, body[0]->sym);
    CU_ASSERT_EQUAL(med->type, PF_T_FLOAT);
    CU_ASSERT_EQUAL(b->n_slots, 6);
    CU_ASSERT_PTR_EQUAL(p->funcs[0]->body->body[0]->value->a->sym->func, b);
    pf_program_free(p);
}

static pf_program *check_pipeline_body(const char *sig, const char *body)
{
    size_t n = strlen(sig) + strlen(body) + 64;
    char *src = malloc(n);
    snprintf(src, n, "pipeline q%s {\n%s}\n", sig, body);
    pf_program *p = ft_check_ok(src);
    free(src);
    return p;
}

static void test_scatter_and_serial(void)
{
    pf_program *p = check_pipeline_body(
        "(image in[W, H, 3]) -> (image out[W, H, 3], image hist[256])",
        "    image grid[W / 4 + 1, H / 4 + 1, 11, 4];\n"
        "    image B[W, H, 3];\n"
        "    for each (x, y) of in as splat {\n"
        "        float g = yuv_y(in[x, y, 0], in[x, y, 1], in[x, y, 2]);\n"
        "        grid[x / 4, y / 4, int(round(g * 10.0)), 3] += 1;\n"
        "        hist[clamp(int(g * 255.0), 0, 255)] += 1.0;\n"
        "    }\n"
        "    for each (x, y) of B as chan {\n"
        "        B[x, y, 0] = in[x, y, 0];\n"
        "        B[x, y, 2] = B[x, y, 0] + grid[0, 0, 0, 0];\n"
        "    }\n"
        "    for each (x, y, c) of out as shift {\n"
        "        out[x, y, c] = B[x, y, c];\n"
        "        out[x + 1, y, c] += out[x, y, c] + out[x - 1, y, c];\n"
        "    }\n");
    pf_stage *splat = p->stages[0], *chan = p->stages[1], *shift = p->stages[2];
    CU_ASSERT_TRUE(splat->serial);
    CU_ASSERT(splat->body->body[1]->target.scatter);
    CU_ASSERT_EQUAL(splat->n_writes, 2);
    CU_ASSERT_EQUAL(splat->n_reads, 1);
    CU_ASSERT_FALSE(chan->serial);
    CU_ASSERT_FALSE(chan->body->body[0]->target.scatter);
    CU_ASSERT_EQUAL(chan->n_reads, 3);
    CU_ASSERT_TRUE(shift->serial);
    CU_ASSERT_FALSE(shift->body->body[0]->target.scatter);
    CU_ASSERT_TRUE(shift->body->body[1]->target.scatter);
    CU_ASSERT_PTR_EQUAL(pf_program_find_image(p, "hist")->first_writer, splat);
    CU_ASSERT(ft_roundtrip(p));
    pf_program_free(p);
}

static void test_stage_over_input_is_serial(void)
{
    pf_program *p = check_pipeline_body("(image in[W]) -> (image out[W])",
                                        "    for each (x) of in as noop { float t = in[x]; }\n"
                                        "    for each (x) of out as copy out[x] = in[x];\n");
    CU_ASSERT_TRUE(p->stages[0]->serial);
    CU_ASSERT_FALSE(p->stages[1]->serial);
    pf_program_free(p);
}

static void test_named_loops(void)
{
    pf_program *p = check_pipeline_body(
        "(image in[W, H, 3]) -> (image out[W, H, 3])",
        "    for each (x, y, c) of out as pixels {\n"
        "        float s = 0;\n"
        "        for (dy) of -4 .. 4 as ky {\n"
        "            for (dx) of -4 .. 4 step 2 as kx\n"
        "                s += in[x + dx, y + dy, c];\n"
        "            for (k) of 0 .. 1 { for (j) of 0 .. 1 as deep s += 1; }\n"
        "        }\n"
        "        out[x, y, c] = s;\n"
        "    }\n"
        "    for each (x, y, c) of out as again out[x, y, c] *= 2;\n");
    CU_ASSERT_EQUAL_FATAL(p->n_loops, 5);
    const char *names[] = {"pixels", "ky", "kx", "deep", "again"};
    int depths[] = {0, 1, 2, 3, 0};
    for (int i = 0; i < 5; i++) {
        CU_ASSERT_STRING_EQUAL(p->loops[i].name, names[i]);
        CU_ASSERT_EQUAL(p->loops[i].depth, depths[i]);
    }
    CU_ASSERT_EQUAL(p->loops[1].kind, PF_LOOP_FOR);
    CU_ASSERT_PTR_EQUAL(p->loops[1].stage, p->stages[0]);
    CU_ASSERT_EQUAL(p->loops[1].stmt->loop_id, 1);
    CU_ASSERT_PTR_EQUAL(p->loops[4].stage, p->stages[1]);
    CU_ASSERT_EQUAL(p->loops[1].loc.line, 4);
    CU_ASSERT_EQUAL(p->loops[1].loc.col, 32);
    CU_ASSERT_FALSE(p->stages[1]->serial);  /* compound assignment at own coordinates */
    pf_program_free(p);
}

static void test_shape_scalars_and_extents(void)
{
    pf_program *p = check_pipeline_body(
        "(image in[W, H, 3], image mask[W, H]) -> (image out[W, H, 3])",
        "    int ss = max(max(W, H) / 64, 1);\n"
        "    int gw = W / ss + 1;\n"
        "    float sr = 0.1;\n"
        "    int nz = int(ceil(1.0 / sr)) + 1;\n"
        "    float norm = sum(float(i), i = 0 .. 3);\n"
        "    bool big = W > 100;\n"
        "    image grid[gw, H / ss + 1, nz, 4] boundary constant(-1);\n"
        "    image edge[W, H] boundary wrap;\n"
        "    for each (x, y, z, c) of grid as g grid[x, y, z, c] = 1;\n"
        "    for each (x, y) of edge over (1 .. W - 2, 0 .. H - 1 step ss) as e\n"
        "        edge[x, y] = mask[x, y] * norm;\n"
        "    for each (x, y, c) of out as o\n"
        "        out[x, y, c] = big ? edge[x, y] : grid[x, y, c, 0];\n");
    CU_ASSERT_EQUAL_FATAL(p->n_scalars, 6);
    bool shape[] = {true, true, true, true, false, true};
    for (int i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(p->scalars[i]->shape, shape[i]);
    const pf_image_decl *grid = pf_program_find_image(p, "grid");
    CU_ASSERT_EQUAL(grid->ndims, 4);
    CU_ASSERT_EQUAL(grid->boundary, PF_BOUNDARY_CONSTANT);
    CU_ASSERT_EQUAL(grid->constant_value, -1.0f);
    CU_ASSERT_EQUAL(pf_program_find_image(p, "edge")->boundary, PF_BOUNDARY_WRAP);
    CU_ASSERT_EQUAL(p->n_sizes, 2);  /* mask's W and H are in's */
    CU_ASSERT_PTR_EQUAL(p->inputs[1]->extents[0]->sym, p->sizes[0]);
    CU_ASSERT(ft_roundtrip(p));
    pf_program_free(p);
}

static void test_every_feature(void)
{
    pf_program *p = ft_check_ok(
        "param int radius = 4;\n"
        "param bool flip = false;\n"
        "param float gain = 1;\n"
        "const float A[6] = {0.5, 0.0, 0.0, 1.0, 0.5, 0.0};\n"
        "const int N = 2 * 4 + 1;\n"
        "float lerp(float a, float b, float t) { return a + (b - a) * t; }\n"
        "bool odd(int v) { if (v % 2 == 1) return true; else { return false; } }\n"
        "int pick(int v) { if (odd(v)) { return 1; } return v; }\n"
        "pipeline all(image in[W, H, 3] boundary mirror, image k[5]) -> (image out[W, H, 3]) {\n"
        "    image t[W, H] boundary wrap;\n"
        "    for each (x, y) of t as s1\n"
        "        t[x, y] = in[x, y, 0] * A[2 + (x + y) % 2] + k[x % 5];\n"
        "    for each (x, y, c) of out as s2 {\n"
        "        float v[81];\n"
        "        int n = 0;\n"
        "        for (dy) of -radius .. radius as ly\n"
        "            for (dx) of -radius .. radius as lx\n"
        "                if (x + dx >= 0 && x + dx < W && !(y + dy < 0 || y + dy >= H)) {\n"
        "                    v[n] = in[x + dx, y + dy, c];\n"
        "                    n += 1;\n"
        "                }\n"
        "        float w = min(t[x, y], 1) + max(1, 2) + abs(-3) + pow(2, 3) + atan2(1, 2)\n"
        "            + noise(x, y) + noise(1, 2, 3, 4) + sin(1.0) * cos(2.0) / tan(0.5)\n"
        "            + log(2.0) + sqrt(4.0) + yuv_r(1, 2, 3) + yuv_g(1, 2, 3) + yuv_b(1, 2, 3)\n"
        "            + yuv_u(1, 2, 3) + yuv_v(1, 2, 3) + float(pick(N));\n"
        "        out[x, y, c] = flip ? lerp(median(v, n), w, 0.5) * gain\n"
        "                            : min(in[x - i, y, c], i = 0 .. 2)\n"
        "                              + max(float(i), i = 1 .. 0);\n"
        "        if (c == 0) out[x, y, c] *= 2; else if (c == 1) out[x, y, c] -= 1;\n"
        "        else out[x, y, c] /= 2.;\n"
        "    }\n"
        "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_FALSE(p->stages[1]->serial);
    CU_ASSERT_EQUAL(p->n_loops, 4);
    CU_ASSERT(ft_roundtrip(p));
    pf_program_free(p);
}

static void test_outputs_read_later_and_serial_reads(void)
{
    pf_program *p = check_pipeline_body(
        "(image in[N]) -> (image a[N], image b[N])",
        "    image one[1];\n"
        "    for each (i) of a as first a[i] = in[i];\n"
        "    for each (i) of b as spread { b[i] += a[i]; b[i + 1] += b[i - 1]; }\n"
        "    for each (k) of one as prefix\n"
        "        for (i) of 1 .. N - 1 a[i] = a[i - 1] + a[i];\n"
        "    for each (i) of a as again { a[i] = b[i] + a[i]; }\n");
    CU_ASSERT_FALSE(p->stages[0]->serial);
    CU_ASSERT_TRUE(p->stages[1]->serial);
    CU_ASSERT_TRUE(p->stages[2]->serial);
    CU_ASSERT_EQUAL(p->stages[2]->n_writes, 1);
    CU_ASSERT_PTR_EQUAL(p->stages[2]->writes[0], p->outputs[0]);
    CU_ASSERT_FALSE(p->stages[3]->serial);
    CU_ASSERT_PTR_EQUAL(p->outputs[0]->first_writer, p->stages[0]);
    pf_program_free(p);
}

PF_TEST_SUITE(lang_check,
              PF_TEST(test_blur_tables),
              PF_TEST(test_resolved_expressions),
              PF_TEST(test_const_folding),
              PF_TEST(test_implicit_casts),
              PF_TEST(test_function_slots_and_forward_calls),
              PF_TEST(test_scatter_and_serial),
              PF_TEST(test_stage_over_input_is_serial),
              PF_TEST(test_named_loops),
              PF_TEST(test_shape_scalars_and_extents),
              PF_TEST(test_every_feature),
              PF_TEST(test_outputs_read_later_and_serial_reads))
