/* Parser tests: the tree's shape (precedence, associativity, reductions, statements, the
 * pipeline), error recovery (several errors per run), and the nesting bound. */
#include "tests/harness/harness.h"
#include "tests/lang/test_front_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An s-expression of a parsed expression, to compare shapes. */
static void sx(const pf_expr *e, pf_strbuf *sb)
{
    switch (e->kind) {
    case PF_E_INT: pf_sb_printf(sb, "%d", (int)e->ival); return;
    case PF_E_FLOAT: pf_sb_printf(sb, "%gf", (double)e->fval); return;
    case PF_E_BOOL: pf_sb_puts(sb, e->bval ? "true" : "false"); return;
    case PF_E_NAME: pf_sb_puts(sb, e->name); return;
    case PF_E_UNARY:
        pf_sb_printf(sb, "(%s ", e->op == PF_OP_NEG ? "neg" : "!");
        sx(e->a, sb);
        break;
    case PF_E_BINARY:
        pf_sb_printf(sb, "(%s ", pf_op_name(e->op));
        sx(e->a, sb);
        pf_sb_putc(sb, ' ');
        sx(e->b, sb);
        break;
    case PF_E_COND:
        pf_sb_puts(sb, "(? ");
        sx(e->a, sb);
        pf_sb_putc(sb, ' ');
        sx(e->b, sb);
        pf_sb_putc(sb, ' ');
        sx(e->c, sb);
        break;
    case PF_E_CAST:
        pf_sb_printf(sb, "(%s ", pf_type_name(e->type));
        sx(e->a, sb);
        break;
    case PF_E_REDUCE:
        pf_sb_printf(sb, "(%s %s ", e->reduce_op == PF_REDUCE_SUM ? "sum"
                                    : e->reduce_op == PF_REDUCE_MIN ? "min" : "max", e->name);
        sx(e->a, sb);
        pf_sb_putc(sb, ' ');
        sx(e->b, sb);
        pf_sb_putc(sb, ' ');
        sx(e->args[0], sb);
        break;
    default:
        pf_sb_printf(sb, "(%s%s", e->name, e->kind == PF_E_INDEX ? "[]" : "()");
        for (int i = 0; i < e->n_args; i++) {
            pf_sb_putc(sb, ' ');
            sx(e->args[i], sb);
        }
        break;
    }
    pf_sb_putc(sb, ')');
}

/* Parses `const float z = EXPR;` (no checking) and returns the shape of EXPR. */
static char *shape(const char *expr)
{
    char src[1024];
    snprintf(src, sizeof src, "const float z = %s;", expr);
    pf_diags d;
    pf_diags_init(&d, "t.pf", src);
    pf_program *p = pf_parse("t.pf", src, strlen(src), &d);
    pf_strbuf sb;
    pf_sb_init(&sb);
    if (p)
        sx(p->consts[0]->init[0], &sb);
    else
        pf_sb_puts(&sb, "<error>");
    pf_program_free(p);
    pf_diags_free(&d);
    char *r = pf_sb_take(&sb);
    return r ? r : pf_xstrdup("");
}

#define ASSERT_SHAPE(expr, want)                                                  \
    do {                                                                          \
        char *got_ = shape(expr);                                                 \
        if (strcmp(got_, want) != 0)                                              \
            fprintf(stderr, "\n%s: got %s, want %s\n", expr, got_, want);         \
        CU_ASSERT_STRING_EQUAL(got_, want);                                       \
        free(got_);                                                               \
    } while (0)

static void test_precedence(void)
{
    ASSERT_SHAPE("a + b * c", "(+ a (* b c))");
    ASSERT_SHAPE("a - b - c", "(- (- a b) c)");
    ASSERT_SHAPE("a / b % c * d", "(* (% (/ a b) c) d)");
    ASSERT_SHAPE("-a * b", "(* (neg a) b)");
    ASSERT_SHAPE("- -a", "(neg (neg a))");
    ASSERT_SHAPE("!a && b || c", "(|| (&& (! a) b) c)");
    ASSERT_SHAPE("a || b && c", "(|| a (&& b c))");
    ASSERT_SHAPE("a < b == c >= d", "(== (< a b) (>= c d))");
    ASSERT_SHAPE("a + b < c * d", "(< (+ a b) (* c d))");
    ASSERT_SHAPE("(a + b) * c", "(* (+ a b) c)");
    ASSERT_SHAPE("a ? b : c ? d : e", "(? a b (? c d e))");
    ASSERT_SHAPE("a ? b ? c : d : e", "(? a (? b c d) e)");
    ASSERT_SHAPE("a || b ? c + 1 : d", "(? (|| a b) (+ c 1) d)");
}

static void test_primaries(void)
{
    ASSERT_SHAPE("float(i) + int(2.5)", "(+ (float i) (int 2.5f))");
    ASSERT_SHAPE("A[x - 1, y]", "(A[] (- x 1) y)");
    ASSERT_SHAPE("f()", "(f())");
    ASSERT_SHAPE("min(a, b)", "(min() a b)");
    ASSERT_SHAPE("sum(K(i), i = -h .. h)", "(sum i (neg h) h (K() i))");
    ASSERT_SHAPE("min(v[i], i = 0 .. n - 1)", "(min i 0 (- n 1) (v[] i))");
    ASSERT_SHAPE("max(1.0, j = 1 .. 0)", "(max j 1 0 1f)");
    ASSERT_SHAPE("true == !false", "(== true (! false))");
    ASSERT_SHAPE("1.5e3 + .25", "(+ 1500f 0.25f)");
}

static pf_program *parse_ok(const char *src)
{
    pf_diags d;
    pf_diags_init(&d, "t.pf", src);
    pf_program *p = pf_parse("t.pf", src, strlen(src), &d);
    if (!p) {
        pf_strbuf sb;
        pf_sb_init(&sb);
        pf_diags_render(&d, &sb);
        fprintf(stderr, "\n%s\n", pf_sb_str(&sb));
        pf_sb_free(&sb);
    }
    CU_ASSERT_PTR_NOT_NULL(p);
    pf_diags_free(&d);
    return p;
}

static void test_top_level_order(void)
{
    pf_program *p = parse_ok("const int h = 1;\nparam float s = 2.0;\n"
                             "float f(int a, bool b) { return 1.0; }\n"
                             "pipeline q(image in[W]) -> (image out[W]) {}\n"
                             "const float A[2] = {1.0, 2.0};\n");
    CU_ASSERT_EQUAL_FATAL(p->n_decls, 5);
    CU_ASSERT_EQUAL(p->decls[0].kind, PF_DECL_CONST);
    CU_ASSERT_EQUAL(p->decls[1].kind, PF_DECL_PARAM);
    CU_ASSERT_EQUAL(p->decls[2].kind, PF_DECL_FUNC);
    CU_ASSERT_EQUAL(p->decls[3].kind, PF_DECL_PIPELINE);
    CU_ASSERT_EQUAL(p->decls[4].kind, PF_DECL_CONST);
    CU_ASSERT_EQUAL(p->decls[4].index, 1);
    CU_ASSERT_EQUAL(p->consts[1]->n_init, 2);
    CU_ASSERT_PTR_NOT_NULL(p->consts[1]->len_expr);
    const pf_func *f = p->funcs[0];
    CU_ASSERT_EQUAL(f->n_params, 2);
    CU_ASSERT_EQUAL(f->param_types[1], PF_T_BOOL);
    CU_ASSERT_STRING_EQUAL(f->param_names[1], "b");
    CU_ASSERT_EQUAL(f->param_locs[1].col, 21);
    CU_ASSERT_STRING_EQUAL(p->name, "q");
    pf_program_free(p);
}

static void test_pipeline_structure(void)
{
    pf_program *p = parse_ok(
        "pipeline q(image in[W, H, 3] boundary mirror, image m[W, H] boundary wrap)\n"
        "    -> (image out[W, H, 3] boundary constant(0.5)) {\n"
        "    image A[W, H] boundary clamp;\n"
        "    float k = 2.0;\n"
        "    for each (x, y) of A over (1 .. W - 2, 0 .. H step 2) as s1\n"
        "        A[x, y] = 1;\n"
        "}\n");
    CU_ASSERT_EQUAL_FATAL(p->n_inputs, 2);
    CU_ASSERT_EQUAL(p->inputs[0]->boundary, PF_BOUNDARY_MIRROR);
    CU_ASSERT_EQUAL(p->inputs[1]->boundary, PF_BOUNDARY_WRAP);
    CU_ASSERT_EQUAL(p->inputs[0]->ndims, 3);
    CU_ASSERT_EQUAL(p->outputs[0]->boundary, PF_BOUNDARY_CONSTANT);
    CU_ASSERT_EQUAL(p->outputs[0]->boundary_value->fval, 0.5f);
    CU_ASSERT_EQUAL_FATAL(p->n_items, 3);
    CU_ASSERT_EQUAL(p->items[0]->kind, PF_ITEM_IMAGE);
    CU_ASSERT_EQUAL(p->items[0]->image->role, PF_IMAGE_LOCAL);
    CU_ASSERT_EQUAL(p->items[1]->kind, PF_ITEM_SCALAR);
    CU_ASSERT_STRING_EQUAL(p->items[1]->scalar_name, "k");
    const pf_stage *st = p->items[2]->stage;
    CU_ASSERT_STRING_EQUAL(st->name, "s1");
    CU_ASSERT_STRING_EQUAL(st->image_name, "A");
    CU_ASSERT_EQUAL(st->n_vars, 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st->over);
    CU_ASSERT_PTR_NULL(st->over[0].step);
    CU_ASSERT_PTR_NOT_NULL(st->over[1].step);
    CU_ASSERT_EQUAL(st->loc.line, 5);
    CU_ASSERT_EQUAL(st->loc.col, 5);
    CU_ASSERT_EQUAL(st->name_loc.col, 62);
    CU_ASSERT_EQUAL(st->image_loc.col, 24);
    CU_ASSERT_EQUAL(st->var_locs[1].col, 18);
    CU_ASSERT_EQUAL(st->body->kind, PF_S_ASSIGN);
    pf_program_free(p);
}

static const pf_stmt *stage_body(const pf_program *p)
{
    return p->items[p->n_items - 1]->stage->body;
}

static void test_statements(void)
{
    pf_program *p = parse_ok(
        "pipeline q(image in[W]) -> (image out[W]) {\n"
        "    for each (x) of out as s {\n"
        "        float v[9];\n"
        "        int n;\n"
        "        float t = 1.0;\n"
        "        v[0] += 1; t -= 1; t *= 2; t /= 3; n = 1;\n"
        "        if (a) if (b) t = 1; else t = 2;\n"
        "        for (i) of 0 .. 8 step 2 as inner { sort(v, i); }\n"
        "        for (j) of 1 .. 2 t = 0;\n"
        "        return 1;\n"
        "    }\n"
        "}\n");
    const pf_stmt *b = stage_body(p);
    CU_ASSERT_EQUAL_FATAL(b->kind, PF_S_BLOCK);
    CU_ASSERT_EQUAL_FATAL(b->n_body, 12);
    CU_ASSERT_EQUAL(b->body[0]->kind, PF_S_DECL);
    CU_ASSERT_PTR_NOT_NULL(b->body[0]->len_expr);
    CU_ASSERT_EQUAL(b->body[0]->name_loc.col, 15);
    CU_ASSERT_PTR_NULL(b->body[1]->value);
    CU_ASSERT_EQUAL(b->body[1]->decl_type, PF_T_INT);
    CU_ASSERT_EQUAL(b->body[3]->assign_op, PF_ASSIGN_ADD);
    CU_ASSERT_EQUAL(b->body[3]->target.n_index, 1);
    CU_ASSERT_EQUAL(b->body[4]->assign_op, PF_ASSIGN_SUB);
    CU_ASSERT_EQUAL(b->body[5]->assign_op, PF_ASSIGN_MUL);
    CU_ASSERT_EQUAL(b->body[6]->assign_op, PF_ASSIGN_DIV);
    const pf_stmt *outer = b->body[8];
    CU_ASSERT_EQUAL(outer->kind, PF_S_IF);
    CU_ASSERT_PTR_NULL(outer->else_s);  /* the else binds to the inner if */
    CU_ASSERT_PTR_NOT_NULL(outer->then_s->else_s);
    const pf_stmt *loop = b->body[9];
    CU_ASSERT_EQUAL(loop->kind, PF_S_FOR);
    CU_ASSERT_STRING_EQUAL(loop->loop_name, "inner");
    CU_ASSERT_PTR_NOT_NULL(loop->step);
    CU_ASSERT_EQUAL(loop->then_s->body[0]->kind, PF_S_SORT);
    CU_ASSERT_PTR_NULL(b->body[10]->loop_name);
    CU_ASSERT_EQUAL(b->body[11]->kind, PF_S_RETURN);
    pf_program_free(p);
}

static int count_errors(const char *src, char **first)
{
    pf_diags d;
    pf_diags_init(&d, "t.pf", src);
    pf_program *p = pf_parse("t.pf", src, strlen(src), &d);
    CU_ASSERT_PTR_NULL(p);
    int n = d.count + d.dropped;
    if (first)
        *first = d.count ? pf_xstrdup(d.items[0].message) : NULL;
    pf_program_free(p);
    pf_diags_free(&d);
    return n;
}

static void test_recovery_reports_each_statement(void)
{
    const char *src =
        "const int a = ;\n"
        "param float b 1.0;\n"
        "float f(int x) {\n"
        "    int y = x +;\n"
        "    y = * 2;\n"
        "    if (y > 1 { y = 1; }\n"
        "    return y;\n"
        "}\n"
        "pipeline q(image in[W]) -> (image out[W]) {\n"
        "    image A[W;\n"
        "    for each (x) of out as s out[x] = ;\n"
        "}\n";
    CU_ASSERT_EQUAL(count_errors(src, NULL), 7);
}

static void test_missing_brace_at_top_keyword(void)
{
    /* A function missing its '}' stops at the next top-level keyword. */
    const char *src = "float f(int x) {\n    return 1.0;\n"
                      "const int h = 3;\n"
                      "pipeline q(image in[W]) -> (image out[W]) { image A[W; }\n";
    CU_ASSERT_EQUAL(count_errors(src, NULL), 2);
}

static char *repeat(const char *unit, int n, const char *mid, const char *tail)
{
    size_t u = strlen(unit), t = strlen(tail), m = strlen(mid);
    char *s = malloc(u * (size_t)n + m + t * (size_t)n + 64);
    char *q = s;
    q += sprintf(q, "const float z = ");
    for (int i = 0; i < n; i++, q += u)
        memcpy(q, unit, u);
    memcpy(q, mid, m);
    q += m;
    for (int i = 0; i < n; i++, q += t)
        memcpy(q, tail, t);
    strcpy(q, ";");
    return s;
}

static void test_nesting_is_bounded(void)
{
    const char *units[][2] = {{"(", ")"}, {"-", ""}, {"!", ""}, {"f(", ")"}, {"a[", "]"},
                              {"1 + ", ""}, {"x ? 1 : ", ""}, {"sum(", ", i = 0 .. 1)"}};
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        char *src = repeat(units[k][0], 100000, "1", units[k][1]);
        char *msg = NULL;
        CU_ASSERT(count_errors(src, &msg) >= 1);
        CU_ASSERT_PTR_NOT_NULL(msg ? strstr(msg, "nested too deeply") : NULL);
        free(msg);
        free(src);
    }
    /* Statements too. */
    size_t n = 100000;
    char *src = malloc(n * 2 + 200);
    char *q = src + sprintf(src, "float f() ");
    for (size_t i = 0; i < n; i++)
        *q++ = '{';
    for (size_t i = 0; i < n; i++)
        *q++ = '}';
    *q = '\0';
    CU_ASSERT(count_errors(src, NULL) >= 1);
    free(src);
    /* And 200 levels are fine. */
    src = repeat("(", 200, "1.0", ")");
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_printf(&sb, "%s\npipeline q(image i[W]) -> (image o[W]) {"
                      "for each (x) of o as s o[x] = z; }", src);
    pf_program *p = ft_check_ok(pf_sb_str(&sb));
    pf_program_free(p);
    pf_sb_free(&sb);
    free(src);
}

static void test_error_limit(void)
{
    /* Thousands of errors are cut at PF_DIAG_MAX and counted. */
    size_t n = 20000;
    char *src = malloc(n * 4 + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(src + i * 4, "@ ;\n", 4);
    src[n * 4] = '\0';
    pf_diags d;
    pf_diags_init(&d, "t.pf", src);
    CU_ASSERT_PTR_NULL(pf_parse("t.pf", src, strlen(src), &d));
    CU_ASSERT_EQUAL(d.count, PF_DIAG_MAX);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_diags_render(&d, &sb);
    CU_ASSERT_PTR_NOT_NULL(strstr(pf_sb_str(&sb), ": note: "));
    pf_sb_free(&sb);
    pf_diags_free(&d);
    free(src);
}

static void test_source_size_limit(void)
{
    size_t n = PF_SOURCE_MAX_BYTES + 1;
    char *src = malloc(n + 1);
    memset(src, ' ', n);
    src[n] = '\0';
    char *msg = NULL;
    CU_ASSERT_EQUAL(count_errors(src, &msg), 1);
    CU_ASSERT_PTR_NOT_NULL(msg ? strstr(msg, "larger than") : NULL);
    free(msg);
    free(src);
}

static void test_node_limit(void)
{
    /* 600000 initializers: the parser stops at its node limit instead of using ever more
     * memory. */
    size_t n = 600000;
    char *src = malloc(n * 2 + 64);
    char *q = src + sprintf(src, "const int A[3] = {");
    for (size_t i = 0; i < n; i++, q += 2)
        memcpy(q, "1,", 2);
    strcpy(q, "1};");
    char *msg = NULL;
    CU_ASSERT_EQUAL(count_errors(src, &msg), 1);
    CU_ASSERT_PTR_NOT_NULL(msg ? strstr(msg, "too large") : NULL);
    free(msg);
    free(src);
}

static void test_rendering(void)
{
    char *errors;
    pf_program *p = ft_compile("const int h = 1;\nconst float g =\t foo(h);\n", &errors);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_STRING_EQUAL(errors, "test.pf:2:18: error: unknown function 'foo'\n"
                                   "const float g =\t foo(h);\n"
                                   "               \t ^\n"
                                   "test.pf:1:1: error: the file declares no pipeline\n"
                                   "const int h = 1;\n"
                                   "^\n");
    free(errors);
}

PF_TEST_SUITE(lang_parser,
              PF_TEST(test_precedence),
              PF_TEST(test_primaries),
              PF_TEST(test_top_level_order),
              PF_TEST(test_pipeline_structure),
              PF_TEST(test_statements),
              PF_TEST(test_recovery_reports_each_statement),
              PF_TEST(test_missing_brace_at_top_keyword),
              PF_TEST(test_nesting_is_bounded),
              PF_TEST(test_error_limit),
              PF_TEST(test_source_size_limit),
              PF_TEST(test_node_limit),
              PF_TEST(test_rendering))
