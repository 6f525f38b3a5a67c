/* Windows of read indices (perforate/read_window.h): constants, sums, differences, products by
 * a constant, negation, reduction and `for` variables with constant or moving bounds, and what
 * is not a window (another variable, a division, a product of variables). */
#include "perforate/read_window.h"

#include "tests/harness/harness.h"
#include "tests/perforate/perf_test_util.h"

#include <string.h>

static const char src[] =
    "const int R = 2;\n"
    "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
    "    image A[W, H];\n"
    "    for each (x, y) of A as pa A[x, y] = in[x, y];\n"
    "    for each (x, y) of out as po {\n"
    "        float s = A[x, y + 1] + A[x, 2 * y - 3] + A[x, -y] + A[x, y / 2] + A[x, y * x];\n"
    "        s += sum(A[x, y + i], i = -R .. R);\n"
    "        for (k) of y - 1 .. y + 4 as L { s += A[x, k] + A[x, k + y]; }\n"
    "        out[x, y] = s + A[W - 1 - x, y];\n"
    "    }\n"
    "}\n";

typedef struct seen {
    int n;
    pf_window w[16];
    int dim;
} seen;

static void record(void *ctx, const pf_expr *read, const pf_window_scope *scope)
{
    seen *S = ctx;
    if (S->n < 16)
        S->w[S->n++] = pf_window_of(scope, read->args[S->dim]);
}

static bool is(pf_window w, int64_t coef, int64_t lo, int64_t hi)
{
    return w.ok && w.coef == coef && w.lo == lo && w.hi == hi;
}

static void test_windows(void)
{
    pf_program *p = pt_compile("w.pf", src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const pf_stage *po = p->stages[1];
    const pf_image_decl *a = pf_program_find_image(p, "A");
    seen S = { .dim = 1 };
    pf_read_windows(po, a, po->vars[1], record, &S);
    CU_ASSERT_EQUAL_FATAL(S.n, 9);
    CU_ASSERT(is(S.w[0], 1, 1, 1));    /* y + 1 */
    CU_ASSERT(is(S.w[1], 2, -3, -3));  /* 2 * y - 3 */
    CU_ASSERT(is(S.w[2], -1, 0, 0));   /* -y */
    CU_ASSERT(!S.w[3].ok);             /* y / 2 */
    CU_ASSERT(!S.w[4].ok);             /* y * x */
    CU_ASSERT(is(S.w[5], 1, -2, 2));   /* y + i, i = -R .. R */
    CU_ASSERT(is(S.w[6], 1, -1, 4));   /* k = y - 1 .. y + 4 */
    CU_ASSERT(is(S.w[7], 2, -1, 4));   /* k + y */
    CU_ASSERT(is(S.w[8], 1, 0, 0));    /* y */
    /* along x, in terms of x: W - 1 - x is not a window (W is not a constant) */
    seen X = { .dim = 0 };
    pf_read_windows(po, a, po->vars[0], record, &X);
    CU_ASSERT_EQUAL_FATAL(X.n, 9);
    CU_ASSERT(is(X.w[0], 1, 0, 0));
    CU_ASSERT(!X.w[8].ok);
    pf_program_free(p);
}

PF_TEST_SUITE(perforate_read_window, PF_TEST(test_windows))
