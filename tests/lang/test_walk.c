/* The read visitor (lang/walk.h): every image read once, with exactly the reduction and `for`
 * variables around it in scope, a reduction's bounds outside its own scope, and each enter
 * matched by a leave. */
#include "lang/walk.h"
#include "tests/harness/harness.h"
#include "tests/lang/test_front_util.h"

#include <string.h>

typedef struct seen {
    int depth, max_depth, reads;
    char trail[256];  /* per read of a: its name and the variables in scope */
    const char *scope[8];
} seen;

static void enter(void *ctx, const pf_symbol *var, const pf_expr *lo, const pf_expr *hi)
{
    seen *s = ctx;
    CU_ASSERT_PTR_NOT_NULL(lo);
    CU_ASSERT_PTR_NOT_NULL(hi);
    if (s->depth < 8)
        s->scope[s->depth] = var->name;
    s->depth++;
    s->max_depth = s->depth > s->max_depth ? s->depth : s->max_depth;
}

static void leave(void *ctx)
{
    ((seen *)ctx)->depth--;
}

static void on_read(void *ctx, const pf_expr *e)
{
    seen *s = ctx;
    s->reads++;
    size_t n = strlen(s->trail);
    snprintf(s->trail + n, sizeof s->trail - n, "%s(", e->sym->name);
    for (int i = 0; i < s->depth && i < 8; i++) {
        n = strlen(s->trail);
        snprintf(s->trail + n, sizeof s->trail - n, "%s%s", i ? "," : "", s->scope[i]);
    }
    n = strlen(s->trail);
    snprintf(s->trail + n, sizeof s->trail - n, ") ");
}

static void test_visit_reads_scopes(void)
{
    static const char src[] =
        "pipeline p(image a[W, H], image b[W]) -> (image out[W, H]) {\n"
        "    for each (x, y) of out as s {\n"
        "        float t = a[x, y];\n"
        "        for (i) of 0 .. 2 {\n"
        "            t += sum(a[x + k, y + i], k = int(b[0]) .. 3);\n"
        "        }\n"
        "        out[x, y] = t;\n"
        "    }\n"
        "}\n";
    pf_error err;
    pf_program *p = pf_compile_string("w.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    seen s = { 0 };
    pf_read_visitor v = { &s, enter, leave, on_read };
    pf_visit_reads_stmt(p->stages[0]->body, &v);
    CU_ASSERT_EQUAL(s.reads, 3);
    CU_ASSERT_EQUAL(s.depth, 0);
    CU_ASSERT_EQUAL(s.max_depth, 2);
    CU_ASSERT_STRING_EQUAL(s.trail, "a() b(i) a(i,k) ");
    pf_program_free(p);
}

PF_TEST_SUITE(lang_walk, PF_TEST(test_visit_reads_scopes))
