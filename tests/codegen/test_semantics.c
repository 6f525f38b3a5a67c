/* Small programs, one language feature each, compiled by the JIT and the C backend and compared
 * with the reference interpreter on random images (max abs difference <= 1e-5; most are exact).
 * Every bug found in lowering gets a program here. */
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>

typedef struct sem_case {
    const char *name;
    const char *source;
    int channels;  /* of the input */
} sem_case;

static const sem_case cases[] = {
    { "helper with several returns (regression: returns after the first were not guarded)",
      "int pick(int x, int y) { if ((x + y) % 2 == 1) return 1; if (y % 2 == 0) return 0;\n"
      "  return 2; }\n"
      "pipeline p(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
      "  for each (x, y, c) of out as s\n"
      "    out[x, y, c] = c == pick(x, y) ? in[x, y, c] : 0.0;\n}\n", 3 },
    { "returns inside loops",
      "float firstbig(float v) { for (i) of 0 .. 9 { if (float(i) * 0.1 > v) return float(i); }\n"
      "  return -1.0; }\n"
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  for each (x, y) of out as s out[x, y] = firstbig(in[x, y]);\n}\n", 1 },
    { "integer semantics: division, modulo, wrapping, abs",
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  for each (x, y) of out as s {\n"
      "    int a = x - 7; int b = y - 3;\n"
      "    int q = a / b + a % b + (2147483647 + x) / 1000000 + abs(a - 5) - (-2147483647 - 1) / -1;\n"
      "    out[x, y] = float(q) * 0.001 + in[x, y];\n  }\n}\n", 1 },
    { "float to int saturation and truncation",
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  for each (x, y) of out as s\n"
      "    out[x, y] = float(int((in[x, y] - 0.5) * 7.0)) + float(int(in[x, y] * 3.0e10) % 17);\n}\n", 1 },
    { "float to int in vector lanes: NaN, infinities, the ends of the int range",
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  for each (x, y) of out as s {\n    float v = in[x, y]; float z = v - v;\n"
      "    int a = int((v - 0.5) * 6.0e9); int b = int(z / z); int c = int(1.0 / z);\n"
      "    int d = int(-1.0 / z); int e = int(2147483520.0 + v); int f = int(-2147483648.0 - v);\n"
      "    int g = int(2147483648.0 + v * 1000.0); int h = int(v * 9.0 - 4.5);\n"
      "    out[x, y] = float(a % 1000) + float(b) + float(c % 7) + float(d % 11)\n"
      "              + float(e % 13) + float(f % 17) + float(g % 19) + float(h);\n  }\n}\n", 1 },
    { "min max clamp and comparisons with NaN-free floats",
      "pipeline p(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
      "  for each (x, y, c) of out as s\n"
      "    out[x, y, c] = clamp(in[x, y, c] * 2.0 - 0.5, 0.1, 0.9) + min(x, y) - max(in[x, y, 0], in[x, y, 1]);\n}\n", 3 },
    { "math builtins",
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  for each (x, y) of out as s {\n    float v = in[x, y];\n"
      "    out[x, y] = exp(v) + log(v + 1.0) + sqrt(v) + sin(v) + cos(v) + tan(v * 0.5) + pow(v, 1.7)\n"
      "              + atan2(v - 0.5, 0.3) + floor(v * 5.0) + ceil(v * 5.0) + round(v * 5.0 - 2.5);\n  }\n}\n", 1 },
    { "reductions: sum, min, max, empty, unrolled and looped",
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  for each (x, y) of out as s\n"
      "    out[x, y] = sum(in[x + i, y], i = -2 .. 2) + min(in[x, y + i], i = -40 .. 40)\n"
      "              + max(in[x + i, y - i], i = 0 .. 1) + sum(in[x, y], i = 3 .. 2)\n"
      "              + float(max(i * i, i = 5 .. 4) == -2147483647 - 1);\n}\n", 1 },
    { "boundary modes far outside",
      "pipeline p(image in[W, H] boundary mirror) -> (image out[W, H]) {\n"
      "  image a[W, H] boundary wrap; image b[W, H] boundary constant(0.25);\n"
      "  for each (x, y) of a as sa a[x, y] = in[x * 3 - 50, y - 31];\n"
      "  for each (x, y) of b as sb b[x, y] = a[x + 1000, y - 999];\n"
      "  for each (x, y) of out as so out[x, y] = b[x - 2, y + 2] + in[-x, H + y];\n}\n", 1 },
    { "local arrays, sort and median",
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  for each (x, y) of out as s {\n    float v[9]; int n = 0;\n"
      "    for (i) of -1 .. 1 for (j) of -1 .. 1 { v[n] = in[x + i, y + j]; n += 1; }\n"
      "    float m = median(v, n); sort(v, 5);\n    out[x, y] = m + v[0] + v[4] * 0.5 + v[20];\n  }\n}\n", 1 },
    { "over ranges with steps and negative starts",
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  image a[W, H];\n"
      "  for each (x, y) of a over (-5 .. W + 3 step 3, 1 .. H - 2 step 2) as sa a[x, y] = in[x, y] + 1.0;\n"
      "  for each (x, y) of out as so out[x, y] = a[x, y] + a[x - 1, y];\n}\n", 1 },
    { "serial scatter (histogram-like splat) and 4-D images",
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  image g[4, 3, 2, 2];\n"
      "  for each (x, y) of in as splat {\n"
      "    g[x % 4, y % 3, int(in[x, y] * 1.99), 0] += in[x, y];\n"
      "    g[x % 4, y % 3, int(in[x, y] * 1.99), 1] += 1.0;\n    g[x + 100, 0, 0, 0] += 5.0;\n  }\n"
      "  for each (x, y) of out as so out[x, y] = g[x % 4, y % 3, 1, 0] / max(g[x % 4, y % 3, 1, 1], 1.0);\n}\n", 1 },
    { "const arrays indexed at run time, params and noise",
      "param float gain = 1.5;\nparam int shift = 2;\nconst float T[4] = {0.1, 0.2, 0.3, 0.4};\n"
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  for each (x, y) of out as s\n"
      "    out[x, y] = gain * T[(x + shift) % 4] + noise(x, y) + noise(x) * in[x, y] + T[x - 100];\n}\n", 1 },
    { "pipeline scalars and extents from sizes",
      "float k(int i) { float s = 0.0; for (j) of 0 .. i { s += float(j); } return s; }\n"
      "pipeline p(image in[W, H]) -> (image out[W / 2 + 1, H]) {\n"
      "  float norm = sum(k(i), i = 0 .. 50);\n  int half = W / 2;\n"
      "  for each (x, y) of out as s out[x, y] = (in[x * 2, y] + float(half)) / norm;\n}\n", 1 },
    { "yuv builtins and channel-only writes",
      "pipeline p(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
      "  for each (x, y) of out as s {\n    float r = in[x, y, 0]; float g = in[x, y, 1]; float b = in[x, y, 2];\n"
      "    float Y = yuv_y(r, g, b); float U = yuv_u(r, g, b); float V = yuv_v(r, g, b);\n"
      "    out[x, y, 0] = yuv_r(Y, U, V); out[x, y, 1] = yuv_g(Y, U, V); out[x, y, 2] = yuv_b(Y, U, V) + 0.0 * in[x, y, 5];\n"
      "    out[x, y, 3] = 1.0;\n  }\n}\n", 3 },
    { "nested ifs and compound assignments",
      "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
      "  for each (x, y) of out as s {\n    float a = in[x, y]; int n = x;\n"
      "    if (a > 0.5) { a *= 2.0; n -= 3; } else if (a < 0.2) { a /= 3.0; n *= 2; } else a -= 1.0;\n"
      "    out[x, y] = a + float(n / 7);\n    out[x, y] += 0.5;\n  }\n}\n", 1 },
};

/* The three backend configurations: the JIT with and without the bounds pass, the C backend. */
static const struct { pf_backend backend; bool no_bounds; } configs[] = {
    { PF_BACKEND_JIT, false }, { PF_BACKEND_JIT, true }, { PF_BACKEND_C, false },
};

static void run_case(const sem_case *sc)
{
    pf_error err;
    pf_program *prog = pf_compile_string(sc->name, sc->source, &err);
    if (!prog)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_param_values params;
    pf_params_init(&params, prog);
    static const int sizes[][2] = { { 1, 1 }, { 13, 7 }, { 64, 33 } };
    pf_image *in[3];
    cg_run ref[3];
    for (int si = 0; si < 3; si++) {
        in[si] = cg_synthetic(sizes[si][0], sizes[si][1], sc->channels, 5u + (unsigned)si);
        CU_ASSERT_EQUAL_FATAL(cg_run_backend(prog, &params, PF_BACKEND_INTERP, false, &in[si], 1,
                                             &ref[si]), 0);
    }
    for (size_t b = 0; b < sizeof configs / sizeof *configs; b++) {
        pf_compile_options o = { 0 };
        o.backend = configs[b].backend;
        o.no_bounds_pass = configs[b].no_bounds;
        pf_variant *v = cg_compile(prog, &params, NULL, &o);  /* once; runs on every size */
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        for (int si = 0; si < 3; si++) {
            cg_run got;
            CU_ASSERT_EQUAL_FATAL(cg_run_variant(v, prog, &params, &in[si], 1, &got), 0);
            double d = cg_max_abs_diff(ref[si].out[0], got.out[0]);
            if (d > 1e-5)
                fprintf(stderr, "\n    %s: %s%s at %dx%d differs by %g", sc->name,
                        pf_backend_name(o.backend), o.no_bounds_pass ? " (no bounds pass)" : "",
                        sizes[si][0], sizes[si][1], d);
            CU_ASSERT(d <= 1e-5);
            cg_run_free(&got);
        }
        pf_variant_free(v);
    }
    for (int si = 0; si < 3; si++) {
        cg_run_free(&ref[si]);
        pf_image_free(in[si]);
    }
    pf_params_free(&params);
    pf_program_free(prog);
}

static void test_semantics_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_case(&cases[i]);
}

PF_TEST_SUITE(codegen_semantics, PF_TEST(test_semantics_cases))
