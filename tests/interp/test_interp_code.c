/* The interpreter's register code: the rewrites that keep its arithmetic exact but cheaper
 * (folding, fused product-sums, jumps on comparisons) show up in the dump and do not change
 * results; the verifier accepts what the translator produces; threads give bit-identical
 * images. */
#include "base/strbuf.h"
#include "interp/interp_internal.h"
#include "tests/harness/harness.h"
#include "tests/interp/test_interp_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char rewrite_src[] =
    "const int N = 4;\n"
    "float folded(float x) { return x * (float(N) / 2.0 + sqrt(4.0)); }\n"
    "float lerp(float a, float b, float t) { return (1.0 - t) * a + t * b; }\n"
    "float acc(float a, float b) { float s = 0.5; s += a * b; s -= a * 2.0; return s; }\n"
    "float branch(int i, float f) {\n"
    "    if (i < 3 && !(f >= 2.0)) { return 1.0; }\n"
    "    if (i == 7 || f < -1.0) { return 2.0; }\n"
    "    return i > 10 ? 3.0 : 4.0;\n"
    "}\n"
    "float dot(int n) { return sum(float(i) * 0.5, i = 0 .. n); }\n"
    "pipeline p(image in[W]) -> (image out[W]) { for each (x) of out as s out[x] = in[x]; }\n";

static char *dump_of(const pf_program *p)
{
    pf_icode ic;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_icode_build(&ic, p, NULL, &err), 0);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_icode_dump(&ic, &sb);
    pf_icode_free(&ic);
    return pf_sb_take(&sb);
}

/* The text of one unit of a dump (up to the next unit header). */
static char *unit_text(const char *dump, const char *header)
{
    const char *s = strstr(dump, header);
    if (!s)
        return strdup("");
    const char *e = strstr(s + 1, "\nfunction ");
    if (!e)
        e = strstr(s + 1, "\nstage ");
    size_t n = e ? (size_t)(e - s) : strlen(s);
    return strndup(s, n);
}

static void test_rewrites_in_dump(void)
{
    pf_program *p = ti_compile(rewrite_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    char *dump = dump_of(p);
    char *folded = unit_text(dump, "function folded");
    /* float(N) / 2.0 + sqrt(4.0) is the literal 4: one multiply is left */
    CU_ASSERT_PTR_NULL(strstr(folded, "I2F"));
    CU_ASSERT_PTR_NULL(strstr(folded, "SQRT"));
    CU_ASSERT_PTR_NOT_NULL(strstr(folded, "value 4\n"));
    char *lerp = unit_text(dump, "function lerp");
    CU_ASSERT_PTR_NOT_NULL(strstr(lerp, "ADDMUL_F") ? strstr(lerp, "ADDMUL_F")
                                                    : strstr(lerp, "MULADD_F"));
    char *accs = unit_text(dump, "function acc");
    CU_ASSERT_PTR_NOT_NULL(strstr(accs, "ADDMUL_F"));
    CU_ASSERT_PTR_NOT_NULL(strstr(accs, "SUBMUL_F"));
    char *br = unit_text(dump, "function branch");
    CU_ASSERT_PTR_NOT_NULL(strstr(br, "JNLT_I"));
    CU_ASSERT_PTR_NULL(strstr(br, " LT_I"));
    char *dot = unit_text(dump, "function dot");
    CU_ASSERT_PTR_NOT_NULL(strstr(dot, "ADDMUL_F"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dot, "FOR_NEXT"));
    free(folded);
    free(lerp);
    free(accs);
    free(br);
    free(dot);
    free(dump);
    pf_program_free(p);
}

static float call3(const pf_program *p, const char *f, pf_value a, pf_value b, pf_value c)
{
    pf_value args[3] = { a, b, c };
    return ti_call(p, f, 3, args).f;
}

/* The rewritten code computes what the tree says, rounding step by rounding step. */
static void test_rewrites_keep_values(void)
{
    pf_program *p = ti_compile(rewrite_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_value x = ti_f(1.7f);
    CU_ASSERT_EQUAL(ti_call(p, "folded", 1, &x).f, 1.7f * 4.0f);
    volatile float a = 0.3f, b = 0.9f, t = 0.123f;
    float u = 1.0f - t, ua = u * a, tb = t * b;
    CU_ASSERT_EQUAL(call3(p, "lerp", ti_f(a), ti_f(b), ti_f(t)), ua + tb);
    pf_value ab[2] = { ti_f(a), ti_f(b) };
    float s = 0.5f, prod = a * b;
    s = s + prod;
    prod = a * 2.0f;
    s = s - prod;
    CU_ASSERT_EQUAL(ti_call(p, "acc", 2, ab).f, s);
    struct { int i; float f; float want; } cases[] = {
        { 1, 0.0f, 1 }, { 1, 2.0f, 4 }, { 1, NAN, 1 }, { 7, 5.0f, 2 }, { 4, -3.0f, 2 },
        { 12, NAN, 3 }, { 4, 0.0f, 4 }, { 7, NAN, 2 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pf_value args[2] = { ti_i(cases[k].i), ti_f(cases[k].f) };
        CU_ASSERT_EQUAL(ti_call(p, "branch", 2, args).f, cases[k].want);
    }
    pf_value n = ti_i(3);
    CU_ASSERT_EQUAL(ti_call(p, "dot", 1, &n).f, 3.0f);
    pf_program_free(p);
}

/* A program with helper calls, local arrays, named loops and scatters: every thread count
 * gives the same bits. */
static const char threads_src[] =
    "float wt(int d) { float v[3]; v[0] = 0.25; v[1] = 0.5; v[2] = 0.25; return v[d + 1]; }\n"
    "pipeline p(image in[W, H, C]) -> (image out[W, H, C], image hist[16]) {\n"
    "    image T[W, H, C] boundary mirror;\n"
    "    for each (x, y, c) of T as s1\n"
    "        T[x, y, c] = sum(wt(d) * in[x + d, y, c], d = -1 .. 1);\n"
    "    for each (x, y) of out as s2 {\n"
    "        for (c) of 0 .. C - 1 as chans {\n"
    "            float m = 0.0;\n"
    "            for (d) of -2 .. 2 { m = max(m, T[x, y + d, c] * noise(x, y, c)); }\n"
    "            out[x, y, c] = m + sin(float(x) * 0.1);\n"
    "        }\n"
    "    }\n"
    "    for each (x, y) of in as s3 hist[int(in[x, y, 0] * 16.0)] += 1.0;\n"
    "}\n";

static void test_threads_bit_identical(void)
{
    pf_program *p = ti_compile(threads_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ti_image in = ti_new(3, 97, 61, 3, 1);
    for (int i = 0; i < 97 * 61 * 3; i++)
        in.data[i] = (float)((i * 7919) % 1000) / 1000.0f;
    ti_image ref[2], out[2];
    pf_error err;
    pf_interp_threads = 1;
    CU_ASSERT_EQUAL_FATAL(ti_run(p, NULL, 0, &in, ref, &err), 0);
    for (int threads = 2; threads <= 5; threads += 3) {
        pf_interp_threads = threads;
        CU_ASSERT_EQUAL_FATAL(ti_run(p, NULL, 0, &in, out, &err), 0);
        for (int k = 0; k < 2; k++) {
            size_t n = (size_t)(out[k].ext[0] * out[k].ext[1] * out[k].ext[2]);
            CU_ASSERT(memcmp(out[k].data, ref[k].data, n * sizeof(float)) == 0);
            ti_free(&out[k]);
        }
    }
    pf_interp_threads = 0;
    float total = 0;
    for (int b = 0; b < 16; b++)
        total += ref[1].data[b];
    CU_ASSERT_EQUAL(total, 97.0f * 61.0f);
    ti_free(&ref[0]);
    ti_free(&ref[1]);
    ti_free(&in);
    pf_program_free(p);
}

/* f0 calls f1 ... calls f(n-1): each adds 1. */
static char *call_chain(int n)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    for (int i = 0; i < n; i++) {
        if (i + 1 < n)
            pf_sb_printf(&sb, "int f%d(int x) { return f%d(x) + 1; }\n", i, i + 1);
        else
            pf_sb_printf(&sb, "int f%d(int x) { return x + 1; }\n", i);
    }
    pf_sb_puts(&sb, "pipeline p(image in[W]) -> (image out[W]) {\n"
                    "    for each (x) of out as s out[x] = float(f0(x));\n}\n");
    return pf_sb_take(&sb);
}

/* Calls nest as deep as the program says, up to a bound that keeps the C stack safe. */
static void test_call_depth(void)
{
    char *src = call_chain(200);
    pf_program *p = ti_compile(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ti_image in = ti_new(1, 3, 1, 1, 1), out;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(ti_run(p, NULL, 0, &in, &out, &err), 0);
    CU_ASSERT_EQUAL(out.data[2], 202.0f);
    ti_free(&out);
    pf_program_free(p);
    free(src);
    src = call_chain(PF_ICALL_DEPTH_MAX + 10);
    p = ti_compile(src);
    if (p) {
        CU_ASSERT_EQUAL(ti_run(p, NULL, 0, &in, &out, &err), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nest too deeply"));
        ti_free(&out);
        pf_program_free(p);
    }
    free(src);
    ti_free(&in);
}

PF_TEST_SUITE(interp_code,
              PF_TEST(test_rewrites_in_dump), PF_TEST(test_rewrites_keep_values),
              PF_TEST(test_threads_bit_identical), PF_TEST(test_call_depth))
