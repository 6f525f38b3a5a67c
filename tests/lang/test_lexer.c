/* Lexer tests: token kinds, numbers (ranges vs floats, binary32 rounding), comments,
 * locations, and lexical errors. */
#include "lang/lexer.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <string.h>

#define MAX_TOKS 64

typedef struct lexed {
    int n;
    pf_token t[MAX_TOKS];
    pf_diags d;
} lexed;

static void lex_all(lexed *out, const char *src)
{
    pf_lexer lx;
    pf_diags_init(&out->d, "t.pf", src);
    pf_lexer_init(&lx, src, strlen(src), &out->d);
    out->n = 0;
    do {
        out->t[out->n] = pf_lexer_next(&lx);
    } while (out->t[out->n++].kind != PF_TOK_EOF && out->n < MAX_TOKS);
}

static void test_kinds(void)
{
    lexed l;
    lex_all(&l, "param x_1 += -> .. <= == != && || ! ? : ( ) [ ] { } , ; for each of over");
    pf_tok_kind want[] = {PF_TOK_PARAM, PF_TOK_IDENT, PF_TOK_PLUS_ASSIGN, PF_TOK_ARROW,
                          PF_TOK_DOTDOT, PF_TOK_LE, PF_TOK_EQ, PF_TOK_NE, PF_TOK_AND,
                          PF_TOK_OR, PF_TOK_NOT, PF_TOK_QUESTION, PF_TOK_COLON, PF_TOK_LPAREN,
                          PF_TOK_RPAREN, PF_TOK_LBRACKET, PF_TOK_RBRACKET, PF_TOK_LBRACE,
                          PF_TOK_RBRACE, PF_TOK_COMMA, PF_TOK_SEMI, PF_TOK_FOR, PF_TOK_EACH,
                          PF_TOK_OF, PF_TOK_OVER, PF_TOK_EOF};
    CU_ASSERT_EQUAL_FATAL(l.n, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < l.n; i++)
        CU_ASSERT_EQUAL(l.t[i].kind, want[i]);
    CU_ASSERT_EQUAL(l.d.count, 0);
    pf_diags_free(&l.d);
}

static void test_keywords_and_builtin_names(void)
{
    lexed l;
    lex_all(&l, "step as image boundary true false sort clamp constant steps");
    pf_tok_kind want[] = {PF_TOK_STEP, PF_TOK_AS, PF_TOK_IMAGE, PF_TOK_BOUNDARY, PF_TOK_TRUE,
                          PF_TOK_FALSE, PF_TOK_IDENT, PF_TOK_IDENT, PF_TOK_IDENT, PF_TOK_IDENT,
                          PF_TOK_EOF};
    for (int i = 0; i < l.n; i++)
        CU_ASSERT_EQUAL(l.t[i].kind, want[i]);
    pf_diags_free(&l.d);
}

static void test_ranges_are_not_floats(void)
{
    lexed l;
    lex_all(&l, "0..2 1. .5 1.5..2 -3 .. 4");
    CU_ASSERT_EQUAL(l.t[0].kind, PF_TOK_INT);
    CU_ASSERT_EQUAL(l.t[0].ival, 0);
    CU_ASSERT_EQUAL(l.t[1].kind, PF_TOK_DOTDOT);
    CU_ASSERT_EQUAL(l.t[2].kind, PF_TOK_INT);
    CU_ASSERT_EQUAL(l.t[2].ival, 2);
    CU_ASSERT_EQUAL(l.t[3].kind, PF_TOK_FLOAT);
    CU_ASSERT_EQUAL(l.t[3].fval, 1.0f);
    CU_ASSERT_EQUAL(l.t[4].kind, PF_TOK_FLOAT);
    CU_ASSERT_EQUAL(l.t[4].fval, 0.5f);
    CU_ASSERT_EQUAL(l.t[5].kind, PF_TOK_FLOAT);
    CU_ASSERT_EQUAL(l.t[6].kind, PF_TOK_DOTDOT);
    CU_ASSERT_EQUAL(l.t[7].kind, PF_TOK_INT);
    CU_ASSERT_EQUAL(l.t[8].kind, PF_TOK_MINUS);
    CU_ASSERT_EQUAL(l.d.count, 0);
    pf_diags_free(&l.d);
}

static void test_float_literals_round_to_binary32(void)
{
    lexed l;
    lex_all(&l, "0.1 16777217.0 4e-3 2.5E+2 1.e2 3.4028235e38 1e-50 0.00000000000000000000001");
    CU_ASSERT_EQUAL(l.t[0].fval, 0.1f);
    CU_ASSERT_EQUAL(l.t[1].fval, 16777216.0f);  /* nearest binary32, ties to even */
    CU_ASSERT_EQUAL(l.t[2].fval, 4e-3f);
    CU_ASSERT_EQUAL(l.t[3].fval, 250.0f);
    CU_ASSERT_EQUAL(l.t[4].fval, 100.0f);
    CU_ASSERT_EQUAL(l.t[5].fval, 3.4028235e38f);
    CU_ASSERT_EQUAL(l.t[6].fval, 0.0f);         /* underflow is not an error */
    CU_ASSERT_EQUAL(l.t[7].fval, 1e-23f);
    CU_ASSERT_EQUAL(l.d.count, 0);
    pf_diags_free(&l.d);
}

static void test_int_limits(void)
{
    lexed l;
    lex_all(&l, "2147483647 2147483648 007");
    CU_ASSERT_EQUAL(l.t[0].ival, 2147483647);
    CU_ASSERT_EQUAL(l.t[1].kind, PF_TOK_INT);
    CU_ASSERT_EQUAL(l.t[2].ival, 7);
    CU_ASSERT_EQUAL_FATAL(l.d.count, 1);
    CU_ASSERT_EQUAL(l.d.items[0].loc.col, 12);
    CU_ASSERT_PTR_NOT_NULL(strstr(l.d.items[0].message, "too large"));
    pf_diags_free(&l.d);
}

static void test_comments_and_locations(void)
{
    lexed l;
    lex_all(&l, "a // one\n  /* two\n three */ b\n\tc");
    CU_ASSERT_EQUAL(l.n, 4);
    CU_ASSERT_EQUAL(l.t[0].loc.line, 1);
    CU_ASSERT_EQUAL(l.t[0].loc.col, 1);
    CU_ASSERT_EQUAL(l.t[1].loc.line, 3);
    CU_ASSERT_EQUAL(l.t[1].loc.col, 11);
    CU_ASSERT_EQUAL(l.t[2].loc.line, 4);
    CU_ASSERT_EQUAL(l.t[2].loc.col, 2);  /* columns count bytes; a tab is one */
    pf_diags_free(&l.d);
}

static void test_lexical_errors(void)
{
    struct {
        const char *src, *msg;
        int col;
    } cases[] = {
        {"a @ b", "unexpected character '@'", 3},
        {"x /* open", "unterminated comment", 3},
        {"1.0f", "invalid suffix 'f'", 4},
        {"12abc", "invalid suffix 'abc'", 3},
        {"1e+", "malformed exponent", 2},
        {"1e39", "out of range", 1},
        {"a \x01", "unexpected byte 0x01", 3},
        {"\xe2\x82\xac x", "non-ASCII", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lexed l;
        lex_all(&l, cases[i].src);
        CU_ASSERT_EQUAL(l.d.count, 1);
        if (l.d.count == 1) {
            CU_ASSERT_PTR_NOT_NULL(strstr(l.d.items[0].message, cases[i].msg));
            CU_ASSERT_EQUAL(l.d.items[0].loc.col, cases[i].col);
        }
        pf_diags_free(&l.d);
    }
}

static void test_long_identifier(void)
{
    char src[600];
    memset(src, 'q', 300);
    src[300] = '\0';
    lexed l;
    lex_all(&l, src);
    CU_ASSERT_EQUAL(l.t[0].kind, PF_TOK_IDENT);
    CU_ASSERT_EQUAL(l.t[0].len, PF_IDENT_MAX);
    CU_ASSERT_EQUAL(l.d.count, 1);
    memset(src, 'q', 255);
    src[255] = '\0';
    pf_diags_free(&l.d);
    lex_all(&l, src);
    CU_ASSERT_EQUAL(l.d.count, 0);
    pf_diags_free(&l.d);
}

static void test_embedded_nul(void)
{
    const char src[] = "a\0b";
    pf_diags d;
    pf_diags_init(&d, "t.pf", NULL);
    pf_lexer lx;
    pf_lexer_init(&lx, src, 3, &d);
    CU_ASSERT_EQUAL(pf_lexer_next(&lx).kind, PF_TOK_IDENT);
    pf_token t = pf_lexer_next(&lx);
    CU_ASSERT_EQUAL(t.kind, PF_TOK_IDENT);
    CU_ASSERT_EQUAL(t.text[0], 'b');
    CU_ASSERT_EQUAL(pf_lexer_next(&lx).kind, PF_TOK_EOF);
    CU_ASSERT_EQUAL(d.count, 1);
    pf_diags_free(&d);
}

PF_TEST_SUITE(lang_lexer,
              PF_TEST(test_kinds),
              PF_TEST(test_keywords_and_builtin_names),
              PF_TEST(test_ranges_are_not_floats),
              PF_TEST(test_float_literals_round_to_binary32),
              PF_TEST(test_int_limits),
              PF_TEST(test_comments_and_locations),
              PF_TEST(test_lexical_errors),
              PF_TEST(test_long_identifier),
              PF_TEST(test_embedded_nul))
