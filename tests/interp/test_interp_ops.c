/* The interpreter's scalar semantics (docs/language.md Sections 2, 7, 9), through helper
 * functions called with pf_interp_call: int wrapping and division edge cases, saturating casts,
 * binary32 evaluation in source order without contraction, min/max with NaN and -0, builtins,
 * reductions, local arrays, sort and median. Expected values are computed by hand. */
#include "lang/builtins.h"
#include "tests/harness/harness.h"
#include "tests/interp/test_interp_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define TRIVIAL_PIPELINE \
    "pipeline p(image in[W]) -> (image out[W]) { for each (x) of out as s out[x] = in[x]; }\n"

static const char ops_src[] =
    "int add(int a, int b) { return a + b; }\n"
    "int sub(int a, int b) { return a - b; }\n"
    "int mul(int a, int b) { return a * b; }\n"
    "int idiv(int a, int b) { return a / b; }\n"
    "int imod(int a, int b) { return a % b; }\n"
    "int ineg(int a) { return -a; }\n"
    "int iabs(int a) { return abs(a); }\n"
    "int imin(int a, int b) { return min(a, b); }\n"
    "int imax(int a, int b) { return max(a, b); }\n"
    "int iclamp(int x, int lo, int hi) { return clamp(x, lo, hi); }\n"
    "float fmuladd(float a, float b, float c) { return a * b + c; }\n"
    "float fsum3(float a, float b, float c) { return a + b + c; }\n"
    "float fsum3r(float a, float b, float c) { return a + (b + c); }\n"
    "float fdiv(float a, float b) { return a / b; }\n"
    "float fneg(float a) { return -a; }\n"
    "float fmin(float a, float b) { return min(a, b); }\n"
    "float fmax(float a, float b) { return max(a, b); }\n"
    "float fclamp(float x, float lo, float hi) { return clamp(x, lo, hi); }\n"
    "float mixed(int a, float b) { return a / 2 + b; }\n"
    "int toint(float f) { return int(f); }\n"
    "float tofloat(int i) { return float(i); }\n"
    "int btoi(bool b) { return int(b); }\n"
    "float btof(bool b) { return float(b); }\n"
    "bool flt(float a, float b) { return a < b; }\n"
    "bool fle(float a, float b) { return a <= b; }\n"
    "bool feq(float a, float b) { return a == b; }\n"
    "bool fne(float a, float b) { return a != b; }\n"
    "bool ige(int a, int b) { return a >= b; }\n"
    "bool igt(int a, int b) { return a > b; }\n"
    "bool beq(bool a, bool b) { return a == b; }\n"
    "bool logic(bool a, bool b, bool c) { return a && !b || c; }\n"
    "float sel(bool c, int a, float b) { return c ? a : b; }\n"
    "float fround(float a) { return round(a); }\n"
    "float ffloor(float a) { return floor(a); }\n"
    "float fceil(float a) { return ceil(a); }\n"
    "float fabs_(float a) { return abs(a); }\n"
    "float fsqrt(float a) { return sqrt(a); }\n"
    "float fexp(float a) { return exp(a); }\n"
    "float flog(float a) { return log(a); }\n"
    "float fpow(float a, float b) { return pow(a, b); }\n"
    "float fatan2(float a, float b) { return atan2(a, b); }\n"
    "float fsin(float a) { return sin(a) + cos(a) + tan(a); }\n"
    "float to_y(float r, float g, float b) { return yuv_y(r, g, b); }\n"
    "float to_u(float r, float g, float b) { return yuv_u(r, g, b); }\n"
    "float to_v(float r, float g, float b) { return yuv_v(r, g, b); }\n"
    "float to_r(float y, float u, float v) { return yuv_r(y, u, v); }\n"
    "float to_g(float y, float u, float v) { return yuv_g(y, u, v); }\n"
    "float to_b(float y, float u, float v) { return yuv_b(y, u, v); }\n"
    "float n1(int a) { return noise(a); }\n"
    "float n4(int a, int b, int c, int d) { return noise(a, b, c, d); }\n"
    TRIVIAL_PIPELINE;

static pf_program *ops_prog;

static int32_t call_i2(const char *f, int32_t a, int32_t b)
{
    pf_value args[2] = { ti_i(a), ti_i(b) };
    return ti_call(ops_prog, f, 2, args).i;
}

static float call_f2(const char *f, float a, float b)
{
    pf_value args[2] = { ti_f(a), ti_f(b) };
    return ti_call(ops_prog, f, 2, args).f;
}

static float call_f3(const char *f, float a, float b, float c)
{
    pf_value args[3] = { ti_f(a), ti_f(b), ti_f(c) };
    return ti_call(ops_prog, f, 3, args).f;
}

static float call_f1(const char *f, float a)
{
    pf_value arg = ti_f(a);
    return ti_call(ops_prog, f, 1, &arg).f;
}

static bool call_b2f(const char *f, float a, float b)
{
    pf_value args[2] = { ti_f(a), ti_f(b) };
    return ti_call(ops_prog, f, 2, args).b;
}

static int same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void load_ops(void)
{
    if (!ops_prog)
        ops_prog = ti_compile(ops_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ops_prog);
}

static void test_int_wrapping(void)
{
    load_ops();
    CU_ASSERT_EQUAL(call_i2("add", INT32_MAX, 1), INT32_MIN);
    CU_ASSERT_EQUAL(call_i2("sub", INT32_MIN, 1), INT32_MAX);
    CU_ASSERT_EQUAL(call_i2("mul", 65536, 65536), 0);
    CU_ASSERT_EQUAL(call_i2("mul", 65537, 65537), 131073);  /* 2^32 + 2^17 + 1 wraps */
    CU_ASSERT_EQUAL(call_i2("mul", -3, 7), -21);
    pf_value m = ti_i(INT32_MIN);
    CU_ASSERT_EQUAL(ti_call(ops_prog, "ineg", 1, &m).i, INT32_MIN);
    CU_ASSERT_EQUAL(ti_call(ops_prog, "iabs", 1, &m).i, INT32_MIN);
    pf_value five = ti_i(-5);
    CU_ASSERT_EQUAL(ti_call(ops_prog, "iabs", 1, &five).i, 5);
}

static void test_int_division(void)
{
    load_ops();
    CU_ASSERT_EQUAL(call_i2("idiv", 7, 2), 3);
    CU_ASSERT_EQUAL(call_i2("idiv", -7, 2), -3);
    CU_ASSERT_EQUAL(call_i2("idiv", 7, -2), -3);
    CU_ASSERT_EQUAL(call_i2("imod", -7, 2), -1);
    CU_ASSERT_EQUAL(call_i2("imod", 7, -2), 1);
    CU_ASSERT_EQUAL(call_i2("idiv", 5, 0), 0);
    CU_ASSERT_EQUAL(call_i2("imod", 5, 0), 0);
    CU_ASSERT_EQUAL(call_i2("idiv", INT32_MIN, 0), 0);
    CU_ASSERT_EQUAL(call_i2("idiv", INT32_MIN, -1), INT32_MIN);
    CU_ASSERT_EQUAL(call_i2("imod", INT32_MIN, -1), 0);
    CU_ASSERT_EQUAL(call_i2("imod", INT32_MIN, 3), -2);
}

static void test_int_min_max_clamp(void)
{
    load_ops();
    CU_ASSERT_EQUAL(call_i2("imin", 3, -4), -4);
    CU_ASSERT_EQUAL(call_i2("imax", 3, -4), 3);
    pf_value a[3] = { ti_i(10), ti_i(0), ti_i(5) };
    CU_ASSERT_EQUAL(ti_call(ops_prog, "iclamp", 3, a).i, 5);
    a[0] = ti_i(-10);
    CU_ASSERT_EQUAL(ti_call(ops_prog, "iclamp", 3, a).i, 0);
    /* clamp = min(max(x, lo), hi): with lo > hi, hi wins */
    pf_value b[3] = { ti_i(3), ti_i(9), ti_i(1) };
    CU_ASSERT_EQUAL(ti_call(ops_prog, "iclamp", 3, b).i, 1);
}

static int32_t toint(float f)
{
    pf_value a = ti_f(f);
    return ti_call(ops_prog, "toint", 1, &a).i;
}

static void test_casts(void)
{
    load_ops();
    CU_ASSERT_EQUAL(toint(3.9f), 3);
    CU_ASSERT_EQUAL(toint(-3.9f), -3);
    CU_ASSERT_EQUAL(toint(-0.5f), 0);
    CU_ASSERT_EQUAL(toint(1e10f), INT32_MAX);
    CU_ASSERT_EQUAL(toint(2147483648.0f), INT32_MAX);
    CU_ASSERT_EQUAL(toint(-2147483648.0f), INT32_MIN);
    CU_ASSERT_EQUAL(toint(-1e10f), INT32_MIN);
    CU_ASSERT_EQUAL(toint(INFINITY), INT32_MAX);
    CU_ASSERT_EQUAL(toint(-INFINITY), INT32_MIN);
    CU_ASSERT_EQUAL(toint(NAN), 0);
    CU_ASSERT_EQUAL(toint(2147483520.0f), 2147483520);  /* largest float below 2^31 */
    pf_value big = ti_i(16777217);  /* rounds to nearest even: 16777216 */
    CU_ASSERT_EQUAL(ti_call(ops_prog, "tofloat", 1, &big).f, 16777216.0f);
    pf_value t = ti_b(true), f = ti_b(false);
    CU_ASSERT_EQUAL(ti_call(ops_prog, "btoi", 1, &t).i, 1);
    CU_ASSERT_EQUAL(ti_call(ops_prog, "btoi", 1, &f).i, 0);
    CU_ASSERT_EQUAL(ti_call(ops_prog, "btof", 1, &t).f, 1.0f);
    /* mixed(a, b) = a / 2 + b: int division first, then the implicit conversion */
    pf_value m[2] = { ti_i(7), ti_f(0.25f) };
    CU_ASSERT_EQUAL(ti_call(ops_prog, "mixed", 2, m).f, 3.25f);
}

/* a * b + c is two roundings: with a = b = 1 + 2^-12, a * b = 1 + 2^-11 + 2^-24 rounds (ties to
 * even) to 1 + 2^-11, so adding -(1 + 2^-11) gives exactly 0; a fused multiply-add gives
 * 2^-24, and double evaluation gives 2^-24 as well. */
static void test_float_no_contraction(void)
{
    load_ops();
    float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
    CU_ASSERT_EQUAL(call_f3("fmuladd", a, a, c), 0.0f);
    /* binary32 sums: (2^24 + 1) - 2^24 is 0 in float, 1 in double; order matters */
    CU_ASSERT_EQUAL(call_f3("fsum3", 16777216.0f, 1.0f, -16777216.0f), 0.0f);
    CU_ASSERT_EQUAL(call_f3("fsum3", 1.0f, 16777216.0f, -16777216.0f), 0.0f);
    CU_ASSERT_EQUAL(call_f3("fsum3", 16777216.0f, -16777216.0f, 1.0f), 1.0f);
    CU_ASSERT_EQUAL(call_f3("fsum3r", 1.0f, 16777216.0f, -16777216.0f), 1.0f);
}

static void test_float_ieee(void)
{
    load_ops();
    CU_ASSERT(isinf(call_f2("fdiv", 1.0f, 0.0f)) && call_f2("fdiv", 1.0f, 0.0f) > 0);
    CU_ASSERT(isinf(call_f2("fdiv", -1.0f, 0.0f)) && call_f2("fdiv", -1.0f, 0.0f) < 0);
    CU_ASSERT(isnan(call_f2("fdiv", 0.0f, 0.0f)));
    CU_ASSERT(same_bits(call_f1("fneg", 0.0f), -0.0f));
    CU_ASSERT_EQUAL(call_f2("fdiv", 1.0f, 3.0f), 1.0f / 3.0f);
    CU_ASSERT(!call_b2f("flt", NAN, 1.0f));
    CU_ASSERT(!call_b2f("fle", NAN, NAN));
    CU_ASSERT(!call_b2f("feq", NAN, NAN));
    CU_ASSERT(call_b2f("fne", NAN, NAN));
    CU_ASSERT(call_b2f("feq", 0.0f, -0.0f));
    CU_ASSERT(call_b2f("fle", 2.0f, 2.0f));
    CU_ASSERT(call_i2("ige", 2, 2) && !call_i2("igt", 2, 2));
}

/* min = b < a ? b : a and max = a < b ? b : a: the first argument wins ties and NaN. */
static void test_float_min_max(void)
{
    load_ops();
    CU_ASSERT(isnan(call_f2("fmin", NAN, 1.0f)));
    CU_ASSERT_EQUAL(call_f2("fmin", 1.0f, NAN), 1.0f);
    CU_ASSERT(isnan(call_f2("fmax", NAN, 1.0f)));
    CU_ASSERT_EQUAL(call_f2("fmax", 1.0f, NAN), 1.0f);
    CU_ASSERT(same_bits(call_f2("fmin", 0.0f, -0.0f), 0.0f));
    CU_ASSERT(same_bits(call_f2("fmin", -0.0f, 0.0f), -0.0f));
    CU_ASSERT(same_bits(call_f2("fmax", -0.0f, 0.0f), -0.0f));
    CU_ASSERT_EQUAL(call_f2("fmin", 2.5f, -1.5f), -1.5f);
    CU_ASSERT_EQUAL(call_f2("fmax", 2.5f, -1.5f), 2.5f);
    CU_ASSERT_EQUAL(call_f3("fclamp", 7.0f, 0.0f, 1.0f), 1.0f);
    CU_ASSERT_EQUAL(call_f3("fclamp", -7.0f, 0.0f, 1.0f), 0.0f);
    /* clamp(NaN, lo, hi) = min(max(NaN, lo), hi) = min(NaN, hi) = NaN */
    CU_ASSERT(isnan(call_f3("fclamp", NAN, 0.0f, 1.0f)));
}

static void test_logic_and_select(void)
{
    load_ops();
    for (int k = 0; k < 8; k++) {
        bool a = k & 1, b = k & 2, c = k & 4;
        pf_value args[3] = { ti_b(a), ti_b(b), ti_b(c) };
        CU_ASSERT_EQUAL(ti_call(ops_prog, "logic", 3, args).b, (a && !b) || c);
    }
    pf_value e[2] = { ti_b(true), ti_b(false) };
    CU_ASSERT_EQUAL(ti_call(ops_prog, "beq", 2, e).b, false);
    pf_value s1[3] = { ti_b(true), ti_i(4), ti_f(0.5f) };
    CU_ASSERT_EQUAL(ti_call(ops_prog, "sel", 3, s1).f, 4.0f);
    pf_value s2[3] = { ti_b(false), ti_i(4), ti_f(0.5f) };
    CU_ASSERT_EQUAL(ti_call(ops_prog, "sel", 3, s2).f, 0.5f);
}

static void test_math_builtins(void)
{
    load_ops();
    CU_ASSERT_EQUAL(call_f1("fround", 2.5f), 3.0f);
    CU_ASSERT_EQUAL(call_f1("fround", -2.5f), -3.0f);
    CU_ASSERT_EQUAL(call_f1("fround", 0.49999997f), 0.0f);
    CU_ASSERT_EQUAL(call_f1("ffloor", -0.5f), -1.0f);
    CU_ASSERT_EQUAL(call_f1("fceil", -0.5f), 0.0f);
    CU_ASSERT_EQUAL(call_f1("fabs_", -3.5f), 3.5f);
    CU_ASSERT_EQUAL(call_f1("fsqrt", 2.0f), sqrtf(2.0f));
    CU_ASSERT(isnan(call_f1("fsqrt", -1.0f)));
    CU_ASSERT_EQUAL(call_f1("fexp", 1.0f), expf(1.0f));
    CU_ASSERT(isinf(call_f1("flog", 0.0f)));
    CU_ASSERT_EQUAL(call_f2("fpow", 2.0f, 10.0f), 1024.0f);
    CU_ASSERT_EQUAL(call_f2("fatan2", 1.0f, -1.0f), atan2f(1.0f, -1.0f));
    volatile float x = 0.7f;
    float s = sinf(x), c = cosf(x), t = tanf(x);
    float want = s + c;
    want = want + t;
    CU_ASSERT_EQUAL(call_f1("fsin", 0.7f), want);
}

/* The YUV formulas of Section 9, evaluated left to right in binary32. */
static void test_yuv(void)
{
    load_ops();
    volatile float r = 0.8f, g = 0.3f, b = 0.1f;
    float p = 0.299f * r, q = 0.587f * g, w = 0.114f * b;
    float yv = p + q;
    yv = yv + w;
    CU_ASSERT_EQUAL(call_f3("to_y", r, g, b), yv);
    p = -0.14713f * r;
    q = 0.28886f * g;
    w = 0.436f * b;
    float uv = p - q;
    uv = uv + w;
    CU_ASSERT_EQUAL(call_f3("to_u", r, g, b), uv);
    p = 0.615f * r;
    q = 0.51499f * g;
    w = 0.10001f * b;
    float vv = p - q;
    vv = vv - w;
    CU_ASSERT_EQUAL(call_f3("to_v", r, g, b), vv);
    float t = 1.13983f * vv;
    CU_ASSERT_EQUAL(call_f3("to_r", yv, uv, vv), yv + t);
    float g1 = 0.39465f * uv, g2 = 0.58060f * vv;
    float gv = yv - g1;
    gv = gv - g2;
    CU_ASSERT_EQUAL(call_f3("to_g", yv, uv, vv), gv);
    t = 2.03211f * uv;
    CU_ASSERT_EQUAL(call_f3("to_b", yv, uv, vv), yv + t);
    /* the round trip is close to the identity */
    PF_ASSERT_NEAR(call_f3("to_r", yv, uv, vv), 0.8, 1e-4);
}

static void test_noise(void)
{
    load_ops();
    pf_value a = ti_i(12345);
    int32_t ints[4] = { 12345, -7, 0, 2147483647 };
    float n1 = ti_call(ops_prog, "n1", 1, &a).f;
    CU_ASSERT_EQUAL(n1, pf_noise(1, ints));
    CU_ASSERT(n1 >= 0.0f && n1 < 1.0f);
    pf_value b[4] = { ti_i(12345), ti_i(-7), ti_i(0), ti_i(2147483647) };
    float n4 = ti_call(ops_prog, "n4", 4, b).f;
    CU_ASSERT_EQUAL(n4, pf_noise(4, ints));
    CU_ASSERT(n4 >= 0.0f && n4 < 1.0f && n4 != n1);
}

/* ---- reductions, loops, arrays ---- */

static const char loops_src[] =
    "const float A[3] = {1.0, 100000000.0, -100000000.0};\n"
    "param int base = 10;\n"
    "float sum_asc(int k) { return sum(A[i], i = 0 .. 2); }\n"
    "float sum_desc(int k) { return sum(A[2 - i], i = 0 .. 2); }\n"
    "float fsum_empty(int k) { return sum(1.5, i = 1 .. 0); }\n"
    "int isum_empty(int k) { return sum(k, i = 1 .. 0); }\n"
    "float fmin_empty(int k) { return min(float(i), i = 5 .. 4); }\n"
    "float fmax_empty(int k) { return max(float(i), i = 5 .. 4); }\n"
    "int imin_empty(int k) { return min(i, i = 5 .. 4); }\n"
    "int imax_empty(int k) { return max(i, i = 5 .. 4); }\n"
    "int imin_r(int k) { return min((i - 3) * (i - 3), i = 0 .. k); }\n"
    "float fmax_r(int k) { return max(A[i], i = 0 .. k); }\n"
    "int isum_wrap(int k) { return sum(2147483647, i = 1 .. k); }\n"
    "float min_nan(int k) { float v[3]; v[0] = 0.0 / 0.0; v[1] = 2.0; v[2] = v[0];\n"
    "    return min(v[i], i = 0 .. 2) + 10.0 * max(v[i], i = 1 .. 2); }\n"
    "float max_all_nan(int k) { float v[2]; v[0] = 0.0 / 0.0; return max(v[0], i = 0 .. k); }\n"
    "int sum_top(int k) { return sum(1, i = 2147483646 .. 2147483647); }\n"
    "int sum_nested(int k) { return sum(sum(i * j, j = 0 .. i), i = 0 .. k); }\n"
    "int loop_step(int st) { int s = 0;\n"
    "    for (i) of 0 .. 10 step st { s = s * 100 + i; } return s; }\n"
    "int loop_once(int k) { int n = 3; int c = 0;\n"
    "    for (i) of 0 .. n { n = 100; c += 1; } return c * 1000 + n; }\n"
    "int loop_top(int k) { int c = 0;\n"
    "    for (i) of 2147483640 .. 2147483647 step 3 { c += 1; } return c; }\n"
    "int loop_empty(int k) { int c = 7; for (i) of 5 .. 4 { c = 0; } return c; }\n"
    "int compound(int a) { int x = a; x += 3; x -= 1; x *= 5; x /= 0; return x; }\n"
    "int compound2(int a) { int x = a; x += 3; x -= 1; x *= 5; x /= 4; return x; }\n"
    "float fcompound(float a) { float x = a; x += 1; x *= 3.0; x -= 0.5; x /= 2; return x; }\n"
    "int arr_clamp(int i) { int v[4]; v[0] = 10; v[1] = 11; v[2] = 12; v[3] = 13;\n"
    "    v[i] += 100; return v[0] * 1000000 + v[3] * 1000 + v[i]; }\n"
    "int arr_zeroed(int k) { int t = 0;\n"
    "    for (j) of 0 .. 2 { int v[3]; v[j] += j + 1; t = t * 10 + v[0] + v[1] + v[2]; }\n"
    "    return t; }\n"
    "int decl_zeroed(int k) { int t = 0;\n"
    "    for (j) of 0 .. 2 {\n"
    "        int z; float f; bool b; if (b || f != 0.0) { t = 99; } z += j; t += z;\n"
    "    }\n"
    "    return t; }\n"
    "float const_arr(int i) { return A[i]; }\n"
    "int sort_i(int n) { int v[5]; v[0] = 4; v[1] = -2; v[2] = 9; v[3] = 0; v[4] = 3;\n"
    "    sort(v, n); return v[0] * 10000 + v[1] * 1000 + v[2] * 100 + v[3] * 10 + v[4]; }\n"
    "float sort_nan(int k) { float v[5]; v[0] = 3.0; v[1] = 1.0; v[2] = 0.0 / 0.0; v[3] = 2.0;\n"
    "    v[4] = 0.0; sort(v, 5);\n"
    "    return (v[2] != v[2] ? 1.0 : 0.0) + 10.0 * v[0] + 100.0 * v[1] + 1000.0 * v[3]\n"
    "         + 10000.0 * v[4]; }\n"
    "int median_i(int n) { int v[6]; v[0] = 5; v[1] = 1; v[2] = 4; v[3] = 2; v[4] = 8; v[5] = 7;\n"
    "    int m = median(v, n); return m * 1000 + v[0] * 100 + v[1] * 10 + v[2]; }\n"
    "int uses_param(int k) { return base + k; }\n"
    "float helper(float x) { return x * 2.0 + float(base); }\n"
    "float calls(float x) { return helper(helper(x)) + helper(1.0); }\n"
    "bool early(int k) { if (k > 0) { return true; } return false; }\n"
    TRIVIAL_PIPELINE;

static pf_program *loops_prog;

static void load_loops(void)
{
    if (!loops_prog)
        loops_prog = ti_compile(loops_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(loops_prog);
}

static pf_value call1(const char *f, pf_value a)
{
    return ti_call(loops_prog, f, 1, &a);
}

static void test_reduction_order_and_identities(void)
{
    load_loops();
    /* ascending: ((0 + 1) + 1e8) - 1e8 = 0; descending: ((0 - 1e8) + 1e8) + 1 = 1 */
    CU_ASSERT_EQUAL(call1("sum_asc", ti_i(0)).f, 0.0f);
    CU_ASSERT_EQUAL(call1("sum_desc", ti_i(0)).f, 1.0f);
    CU_ASSERT(same_bits(call1("fsum_empty", ti_i(0)).f, 0.0f));
    CU_ASSERT_EQUAL(call1("isum_empty", ti_i(5)).i, 0);
    CU_ASSERT_EQUAL(call1("fmin_empty", ti_i(0)).f, INFINITY);
    CU_ASSERT_EQUAL(call1("fmax_empty", ti_i(0)).f, -INFINITY);
    CU_ASSERT_EQUAL(call1("imin_empty", ti_i(0)).i, INT32_MAX);
    CU_ASSERT_EQUAL(call1("imax_empty", ti_i(0)).i, INT32_MIN);
    CU_ASSERT_EQUAL(call1("imin_r", ti_i(2)).i, 1);
    CU_ASSERT_EQUAL(call1("imin_r", ti_i(6)).i, 0);
    CU_ASSERT_EQUAL(call1("fmax_r", ti_i(0)).f, 1.0f);
    CU_ASSERT_EQUAL(call1("fmax_r", ti_i(2)).f, 100000000.0f);
    /* NaN terms never win acc = min(acc, e) = e < acc ? e : acc */
    CU_ASSERT_EQUAL(call1("min_nan", ti_i(0)).f, 22.0f);
    CU_ASSERT_EQUAL(call1("max_all_nan", ti_i(3)).f, -INFINITY);
    CU_ASSERT_EQUAL(call1("isum_wrap", ti_i(2)).i, -2);
    CU_ASSERT_EQUAL(call1("sum_top", ti_i(0)).i, 2);
    /* sum over i of i * i(i+1)/2 for i = 0..3: 0 + 1 + 6 + 18 */
    CU_ASSERT_EQUAL(call1("sum_nested", ti_i(3)).i, 25);
}

static void test_for_loops(void)
{
    load_loops();
    CU_ASSERT_EQUAL(call1("loop_step", ti_i(3)).i, 30609);        /* 0, 3, 6, 9 */
    CU_ASSERT_EQUAL(call1("loop_step", ti_i(4)).i, 408);          /* 0, 4, 8 */
    CU_ASSERT_EQUAL(call1("loop_step", ti_i(20)).i, 0);           /* 0 only */
    /* a step below 1 counts as 1: 0..10 is 11 iterations; s overflows, compare with C */
    int32_t want = 0;
    for (int i = 0; i <= 10; i++)
        want = (int32_t)((uint32_t)want * 100u + (uint32_t)i);
    CU_ASSERT_EQUAL(call1("loop_step", ti_i(0)).i, want);
    CU_ASSERT_EQUAL(call1("loop_step", ti_i(-5)).i, want);
    /* bounds are evaluated once on entry */
    CU_ASSERT_EQUAL(call1("loop_once", ti_i(0)).i, 4100);
    /* 2147483640, 43, 46: stops without overflowing */
    CU_ASSERT_EQUAL(call1("loop_top", ti_i(0)).i, 3);
    CU_ASSERT_EQUAL(call1("loop_empty", ti_i(0)).i, 7);
}

static void test_compound_assignment(void)
{
    load_loops();
    CU_ASSERT_EQUAL(call1("compound", ti_i(1)).i, 0);
    CU_ASSERT_EQUAL(call1("compound2", ti_i(1)).i, 3);  /* (1 + 3 - 1) * 5 / 4 */
    CU_ASSERT_EQUAL(call1("fcompound", ti_f(1.0f)).f, 2.75f);
}

static void test_local_arrays(void)
{
    load_loops();
    /* v[i] clamped into [0, 3] for both the write and the read */
    CU_ASSERT_EQUAL(call1("arr_clamp", ti_i(-5)).i, 110013110);
    CU_ASSERT_EQUAL(call1("arr_clamp", ti_i(99)).i, 10113113);
    CU_ASSERT_EQUAL(call1("arr_clamp", ti_i(1)).i, 10013111);
    /* re-declared each iteration: zeroed each time (1, 2, 3, not 1, 3, 6) */
    CU_ASSERT_EQUAL(call1("arr_zeroed", ti_i(0)).i, 123);
    CU_ASSERT_EQUAL(call1("decl_zeroed", ti_i(0)).i, 3);
    CU_ASSERT_EQUAL(call1("const_arr", ti_i(-3)).f, 1.0f);
    CU_ASSERT_EQUAL(call1("const_arr", ti_i(7)).f, -100000000.0f);
}

static void test_sort_and_median(void)
{
    load_loops();
    /* v = 4 -2 9 0 3 */
    CU_ASSERT_EQUAL(call1("sort_i", ti_i(5)).i, -2 * 10000 + 0 + 300 + 40 + 9);
    CU_ASSERT_EQUAL(call1("sort_i", ti_i(99)).i, -2 * 10000 + 0 + 300 + 40 + 9);  /* n clamped */
    CU_ASSERT_EQUAL(call1("sort_i", ti_i(3)).i, -2 * 10000 + 4000 + 900 + 0 + 3);
    CU_ASSERT_EQUAL(call1("sort_i", ti_i(-1)).i, 4 * 10000 - 2000 + 900 + 0 + 3);
    CU_ASSERT_EQUAL(call1("sort_i", ti_i(1)).i, 4 * 10000 - 2000 + 900 + 0 + 3);
    /* NaN: the stable insertion sort by `<` of lang/builtins.c never moves an element past a
     * NaN: 3 1 NaN 2 0 -> 1 3 NaN 0 2 */
    CU_ASSERT_EQUAL(call1("sort_nan", ti_i(0)).f, 1.0f + 10.0f + 300.0f + 0.0f + 20000.0f);
    /* median of v = 5 1 4 2 8 7: n clamped into [1, 6], element n/2 of the sorted prefix,
     * v unchanged */
    CU_ASSERT_EQUAL(call1("median_i", ti_i(0)).i, 5514);   /* n = 1: 5 */
    CU_ASSERT_EQUAL(call1("median_i", ti_i(3)).i, 4514);   /* 1 4 5 -> 4 */
    CU_ASSERT_EQUAL(call1("median_i", ti_i(4)).i, 4514);   /* 1 2 4 5 -> 4 */
    CU_ASSERT_EQUAL(call1("median_i", ti_i(6)).i, 5514);   /* 1 2 4 5 7 8 -> 5 */
    CU_ASSERT_EQUAL(call1("median_i", ti_i(100)).i, 5514);
}

static void test_helpers_and_params(void)
{
    load_loops();
    CU_ASSERT_EQUAL(call1("uses_param", ti_i(5)).i, 15);
    /* helper(helper(3)) + helper(1) = (3*2+10)*2+10 + 12 */
    CU_ASSERT_EQUAL(call1("calls", ti_f(3.0f)).f, 54.0f);
    CU_ASSERT_EQUAL(call1("early", ti_i(1)).b, true);
    CU_ASSERT_EQUAL(call1("early", ti_i(0)).b, false);
    /* an overridden param reaches helper functions */
    pf_param_values pv;
    pf_params_init(&pv, loops_prog);
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_params_set(&pv, loops_prog, "base=-4", &err), 0);
    const pf_func *f = NULL;
    for (int i = 0; i < loops_prog->n_funcs; i++)
        if (strcmp(loops_prog->funcs[i]->name, "uses_param") == 0)
            f = loops_prog->funcs[i];
    pf_value arg = ti_i(5), r;
    CU_ASSERT_EQUAL(pf_interp_call(loops_prog, &pv, f, &arg, &r, &err), 0);
    CU_ASSERT_EQUAL(r.i, 1);
    pf_params_free(&pv);
}

static void test_free_programs(void)
{
    if (ops_prog)
        pf_program_free(ops_prog);
    if (loops_prog)
        pf_program_free(loops_prog);
    ops_prog = loops_prog = NULL;
}

PF_TEST_SUITE(interp_ops,
              PF_TEST(test_int_wrapping), PF_TEST(test_int_division),
              PF_TEST(test_int_min_max_clamp), PF_TEST(test_casts),
              PF_TEST(test_float_no_contraction), PF_TEST(test_float_ieee),
              PF_TEST(test_float_min_max), PF_TEST(test_logic_and_select),
              PF_TEST(test_math_builtins), PF_TEST(test_yuv), PF_TEST(test_noise),
              PF_TEST(test_reduction_order_and_identities), PF_TEST(test_for_loops),
              PF_TEST(test_compound_assignment), PF_TEST(test_local_arrays),
              PF_TEST(test_sort_and_median), PF_TEST(test_helpers_and_params),
              PF_TEST(test_free_programs))
