/* Printer round trips: parse -> print -> parse gives an equal program (and the same text when
 * printed again), for inline programs, every app in apps/, every valid code block of the
 * language reference, and synthesized trees the parser never makes (negative literals,
 * infinities, an `else` after an open `if`). */
#include "tests/harness/harness.h"
#include "tests/lang/test_front_util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pf_program *parse_only(const char *src)
{
    pf_diags d;
    pf_diags_init(&d, "t.pf", src);
    pf_program *p = pf_parse("t.pf", src, strlen(src), &d);
    pf_diags_free(&d);
    CU_ASSERT_PTR_NOT_NULL(p);
    return p;
}

static const char *const programs[] = {
    "const float z = a ? b ? c : d : e ? f : g;\n",
    "const float z = (a ? b : c) + (d || e ? 1 : 2) * -(x - y) - -x - (y - (z - w));\n",
    "const float z = !(a && b) || !!c == (d < e) != (f >= g);\n",
    "const float z = a / (b * c) % (d / e) - (f + g) * h;\n",
    "const float z = 0.1 + 1e-30 + 3.4028235e38 + 1e16 + 123456.78 + 0.0001 + 100.0 + 2.;\n",
    "const float z = 16777216.0 + 1.17549435e-38 + 1.4e-45 + 0.30000001;\n",
    "const int A[4] = {1, 2, 3, 4};\nconst int B = {5};\nconst float C[9] = {1,2,3,4,5,6,7,8,9};\n",
    "param bool b = !true;\nparam int i = -2147483647 - 1;\nparam float f = -0.0;\n",
    "float f(int a, float b, bool c) {\n"
    "    if (c) if (a > 0) return b; else return -b;\n"
    "    if (c) { if (a > 0) return b; } else return 0.0;\n"
    "    if (a == 1) return 1.0; else if (a == 2) return 2.0; else { return 3.0; }\n"
    "    for (i) of 0 .. a step 2 as L for (j) of i .. 3 { b += float(i * j); }\n"
    "    float v[4]; int n; sort(v, n); v[n] /= 2;\n"
    "    {} { { } }\n"
    "    return sum(min(float(i), j = 0 .. i), i = 0 .. 3) + max(b, i = 1 .. 0);\n"
    "}\n",
    "pipeline p(image in[W, H, 3] boundary mirror, image k[5] boundary constant(-1.5))\n"
    "  -> (image out[W, H, 3] boundary wrap, image h[256] boundary clamp) {\n"
    "    image A[W / 2 + 1, H, 2, 1];\n"
    "    int s = max(W, H) / 64;\n"
    "    for each (x, y, c) of out over (1 .. W - 2, 0 .. H step s, 0 .. 2 step 1) as st\n"
    "        out[x, y, c] = in[x, y, c] + A[x, y, 0, 0] + k[c];\n"
    "    for each (i) of h as hs { h[i] = 1; }\n"
    "}\n",
};

static void test_inline_programs(void)
{
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++) {
        pf_program *p = parse_only(programs[i]);
        if (p)
            CU_ASSERT(ft_roundtrip(p));
        pf_program_free(p);
    }
}

/* Every *.pf in a directory of the source tree parses, checks, and round-trips. */
static int roundtrip_dir(const char *rel, bool must_check)
{
    const char *dir = pf_test_src(rel);
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 4 || strcmp(de->d_name + l - 3, ".pf") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        char *src = ft_read(path, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(src);
        char *errors;
        pf_program *p = ft_compile(src, &errors);
        if (!p && must_check)
            fprintf(stderr, "\n%s does not check:\n%s", path, errors);
        CU_ASSERT(p != NULL || !must_check);
        if (p) {
            CU_ASSERT(ft_roundtrip(p));
            n++;
        }
        pf_program_free(p);
        free(errors);
        free(src);
    }
    closedir(dp);
    return n;
}

static void test_apps(void)
{
    int n = roundtrip_dir("apps", true);
    if (n == 0)
        fprintf(stderr, "\nSKIP: no apps/*.pf yet\n");
}

/* The reference's code blocks that are whole programs check and round-trip. */
static void test_language_reference_examples(void)
{
    char *doc = ft_read(pf_test_src("docs/language.md"), NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    int programs_seen = 0;
    for (char *p = strstr(doc, "```\n"); p; ) {
        char *body = p + 4, *end = strstr(body, "```");
        if (!end)
            break;
        *end = '\0';
        if (strstr(body, "pipeline ") && strstr(body, "-> (") && strstr(body, "for each (x")) {
            char *errors;
            pf_program *prog = ft_compile(body, &errors);
            if (!prog)
                fprintf(stderr, "\nexample does not check:\n%s\n%s", body, errors);
            CU_ASSERT_PTR_NOT_NULL(prog);
            if (prog)
                CU_ASSERT(ft_roundtrip(prog));
            pf_program_free(prog);
            free(errors);
            programs_seen++;
        }
        p = strstr(end + 3, "```\n");
    }
    CU_ASSERT(programs_seen >= 1);
    free(doc);
}

/* Trees only a transform makes: literal values the parser never produces. */
static void test_synthesized_literals(void)
{
    pf_program *p = parse_only("const float a = 1.0;\nconst int b = 1;\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    float fl[] = {-2.5f, -0.0f, INFINITY, -INFINITY};
    int32_t il[] = {-7, INT32_MIN};
    const char *fwant[] = {"-2.5", "-0.0", "1.0 / 0.0", "-1.0 / 0.0"};
    const char *iwant[] = {"-7", "-2147483647 - 1"};
    pf_strbuf sb;
    pf_sb_init(&sb);
    for (int i = 0; i < 4; i++) {
        p->consts[0]->init[0]->fval = fl[i];
        pf_sb_clear(&sb);
        pf_print_expr(p->consts[0]->init[0], &sb);
        CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb), fwant[i]);
    }
    for (int i = 0; i < 2; i++) {
        p->consts[1]->init[0]->ival = il[i];
        pf_sb_clear(&sb);
        pf_print_expr(p->consts[1]->init[0], &sb);
        CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb), iwant[i]);
    }
    /* As an operand, each keeps its value: 2 * (-1.0 / 0.0), 2 - (-2147483647 - 1). */
    pf_program *q = parse_only("const float a = 2.0 * x;\nconst int b = 2 - x;\n");
    q->consts[0]->init[0]->b = p->consts[0]->init[0];
    q->consts[1]->init[0]->b = p->consts[1]->init[0];
    pf_sb_clear(&sb);
    pf_print_program(q, &sb);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb), "const float a = 2.0 * (-1.0 / 0.0);\n"
                                           "const int b = 2 - (-2147483647 - 1);\n");
    pf_sb_free(&sb);
    pf_program_free(q);
    pf_program_free(p);
}

static void test_else_after_open_if_gets_braces(void)
{
    pf_program *p = parse_only("float f(bool a, bool b) {\n"
                               "    if (a) { if (b) return 1.0; } else return 2.0;\n"
                               "    return 0.0;\n}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    /* Drop the braces the source had: the printer must bring them back. */
    pf_stmt *outer = p->funcs[0]->body->body[0];
    outer->then_s = outer->then_s->body[0];
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_print_program(p, &sb);
    CU_ASSERT_PTR_NOT_NULL(strstr(pf_sb_str(&sb), "if (a) {\n        if (b)\n"));
    pf_sb_free(&sb);
    pf_program_free(p);
}

static void test_equality_sees_differences(void)
{
    const char *base = "const float z = a + 1.0;\n";
    const char *other[] = {"const float z = a - 1.0;\n", "const float z = a + 2.0;\n",
                           "const float z = b + 1.0;\n", "const int z = a + 1.0;\n",
                           "const float y = a + 1.0;\n", "const float z = 1.0 + a;\n",
                           "param float z = a + 1.0;\n",
                           "const float z = a + 1.0;\nconst int q = 1;\n"};
    pf_program *a = parse_only(base);
    pf_program *a2 = parse_only(base);
    CU_ASSERT(pf_program_equal(a, a2));
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        pf_program *b = parse_only(other[i]);
        CU_ASSERT_FALSE(pf_program_equal(a, b));
        pf_program_free(b);
    }
    pf_program_free(a);
    pf_program_free(a2);
}

PF_TEST_SUITE(lang_roundtrip,
              PF_TEST(test_inline_programs),
              PF_TEST(test_apps),
              PF_TEST(test_language_reference_examples),
              PF_TEST(test_synthesized_literals),
              PF_TEST(test_else_after_open_if_gets_braces),
              PF_TEST(test_equality_sees_differences))
