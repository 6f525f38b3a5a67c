/* The lexer (lexer.h). Numbers follow docs/language.md Section 1: `1..2` is an int, `..`, an
 * int; `1.` and `.5` are floats; a float denotes the nearest binary32 (strtof rounds directly
 * to binary32, with no double rounding). */
#include "lang/lexer.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ORDER TOKENS */
static const char *const token_names[PF_TOK_COUNT] = {
    "end of file", "identifier", "integer literal", "float literal",
    "param", "const", "image", "pipeline", "for", "each", "of", "over", "as", "step", "if",
    "else", "return", "int", "float", "bool", "true", "false", "boundary",
    "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "!", "?", ":",
    "=", "+=", "-=", "*=", "/=", "(", ")", "[", "]", "{", "}", ",", ";", "..", "->",
};

const char *pf_tok_kind_name(pf_tok_kind k)
{
    return k < PF_TOK_COUNT ? token_names[k] : "?";
}

const char *pf_tok_describe(const pf_token *t, char *buf, size_t size)
{
    if (t->kind == PF_TOK_EOF)
        snprintf(buf, size, "end of file");
    else
        snprintf(buf, size, "'%.*s'", t->len > 40 ? 40 : (int)t->len, t->text);
    return buf;
}

void pf_lexer_init(pf_lexer *lx, const char *src, size_t len, pf_diags *diags)
{
    lx->src = src;
    lx->end = src + len;
    lx->p = src;
    lx->line = 1;
    lx->line_begin = src;
    lx->diags = diags;
    lx->n_errors = 0;
}

static void lex_error(pf_lexer *lx, pf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void lex_error(pf_lexer *lx, pf_loc loc, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    lx->n_errors++;
    pf_diag_error(lx->diags, loc, "%s", buf);
}

static pf_loc loc_at(const pf_lexer *lx, const char *p)
{
    pf_loc l = {lx->line, (int)(p - lx->line_begin) + 1};
    return l;
}

static void newline(pf_lexer *lx, const char *after)
{
    lx->line++;
    lx->line_begin = after;
}

static bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_ident_char(char c)
{
    return is_ident_start(c) || is_digit(c);
}

static bool at_comment_end(const pf_lexer *lx)
{
    return lx->p[0] == '*' && lx->p + 1 < lx->end && lx->p[1] == '/';
}

/* Skips a block comment starting at lx->p; reports one that never ends. */
static void skip_block_comment(pf_lexer *lx)
{
    pf_loc start = loc_at(lx, lx->p);
    lx->p += 2;
    while (lx->p < lx->end && !at_comment_end(lx)) {
        if (*lx->p == '\n')
            newline(lx, lx->p + 1);
        lx->p++;
    }
    if (lx->p >= lx->end)
        lex_error(lx, start, "unterminated comment");
    else
        lx->p += 2;
}

/* Skips whitespace and comments. */
static void skip_space(pf_lexer *lx)
{
    while (lx->p < lx->end) {
        const char *p = lx->p;
        bool slash = *p == '/' && p + 1 < lx->end;
        if (*p == '\n') {
            lx->p = p + 1;
            newline(lx, lx->p);
        } else if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v') {
            lx->p = p + 1;
        } else if (slash && p[1] == '/') {
            while (lx->p < lx->end && *lx->p != '\n')
                lx->p++;
        } else if (slash && p[1] == '*') {
            skip_block_comment(lx);
        } else {
            return;
        }
    }
}

typedef struct keyword {
    const char *text;
    pf_tok_kind kind;
} keyword;

static const keyword keywords[] = {
    {"param", PF_TOK_PARAM},     {"const", PF_TOK_CONST},   {"image", PF_TOK_IMAGE},
    {"pipeline", PF_TOK_PIPELINE}, {"for", PF_TOK_FOR},     {"each", PF_TOK_EACH},
    {"of", PF_TOK_OF},           {"over", PF_TOK_OVER},     {"as", PF_TOK_AS},
    {"step", PF_TOK_STEP},       {"if", PF_TOK_IF},         {"else", PF_TOK_ELSE},
    {"return", PF_TOK_RETURN},   {"int", PF_TOK_INT_KW},    {"float", PF_TOK_FLOAT_KW},
    {"bool", PF_TOK_BOOL_KW},    {"true", PF_TOK_TRUE},     {"false", PF_TOK_FALSE},
    {"boundary", PF_TOK_BOUNDARY},
};

static void lex_ident(pf_lexer *lx, pf_token *t)
{
    const char *p = lx->p;
    while (p < lx->end && is_ident_char(*p))
        p++;
    t->len = (size_t)(p - lx->p);
    lx->p = p;
    t->kind = PF_TOK_IDENT;
    if (t->len > PF_IDENT_MAX) {
        lex_error(lx, t->loc, "identifier is longer than %d characters",
                      PF_IDENT_MAX);
        t->len = PF_IDENT_MAX;
        return;
    }
    if (t->len > 8)
        return;  /* longer than any keyword */
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (keywords[i].text[0] == t->text[0] && strlen(keywords[i].text) == t->len &&
            memcmp(keywords[i].text, t->text, t->len) == 0)
            t->kind = keywords[i].kind;
}

static const char *skip_digits(const char *p, const char *end)
{
    while (p < end && is_digit(*p))
        p++;
    return p;
}

/* The end of a float's exponent starting at p ('e' or 'E'), or NULL when it has no digits. */
static const char *scan_exponent(const char *p, const char *end)
{
    p++;
    if (p < end && (*p == '+' || *p == '-'))
        p++;
    if (p >= end || !is_digit(*p))
        return NULL;
    return skip_digits(p, end);
}

static void finish_int(pf_lexer *lx, pf_token *t)
{
    int64_t v = 0;
    for (size_t i = 0; i < t->len; i++) {
        v = v * 10 + (t->text[i] - '0');
        if (v > INT32_MAX) {
            lex_error(lx, t->loc, "integer literal is too large (at most 2147483647)");
            v = 0;
            break;
        }
    }
    t->ival = (int32_t)v;
}

static void finish_float(pf_lexer *lx, pf_token *t)
{
    char buf[128];
    if (t->len >= sizeof buf) {
        /* Long literals are rare; strtof needs a terminated copy. */
        char *tmp = malloc(t->len + 1);
        memcpy(tmp, t->text, t->len);
        tmp[t->len] = '\0';
        t->fval = strtof(tmp, NULL);
        free(tmp);
    } else {
        memcpy(buf, t->text, t->len);
        buf[t->len] = '\0';
        t->fval = strtof(buf, NULL);
    }
    if (isinf(t->fval)) {
        lex_error(lx, t->loc, "float literal is out of range");
        t->fval = 0.0f;
    }
}

/* A number: digits [ "." digits ] [ exponent ], or "." digits [ exponent ]; "1..2" stops
 * before "..". A letter or digit glued to the end is an invalid suffix. */
static void lex_number(pf_lexer *lx, pf_token *t)
{
    const char *p = skip_digits(lx->p, lx->end);
    bool is_float = false, bad = false;
    if (p < lx->end && *p == '.' && !(p + 1 < lx->end && p[1] == '.')) {
        is_float = true;
        p = skip_digits(p + 1, lx->end);
    }
    if (p < lx->end && (*p == 'e' || *p == 'E')) {
        const char *q = scan_exponent(p, lx->end);
        if (q) {
            is_float = true;
            p = q;
        } else {
            bad = true;
        }
    }
    if (p < lx->end && (is_ident_char(*p) || bad)) {
        const char *s = p;
        while (p < lx->end && is_ident_char(*p))
            p++;
        lex_error(lx, loc_at(lx, s),
                      bad ? "malformed exponent in number" : "invalid suffix '%.*s' on number",
                      (int)(p - s > 20 ? 20 : p - s), s);
        bad = true;
    }
    t->len = (size_t)(p - lx->p);
    lx->p = p;
    t->kind = is_float ? PF_TOK_FLOAT : PF_TOK_INT;
    if (bad)
        return;  /* value 0: already reported */
    if (is_float)
        finish_float(lx, t);
    else
        finish_int(lx, t);
}

/* The token for c, or for c followed by `next` when that pair is a two-character token. */
static pf_tok_kind two(pf_lexer *lx, char next, pf_tok_kind pair, pf_tok_kind single)
{
    if (lx->p + 1 < lx->end && lx->p[1] == next) {
        lx->p += 2;
        return pair;
    }
    lx->p++;
    return single;
}

/* Operators and punctuation; PF_TOK_COUNT when c starts none. The longest match wins. */
static pf_tok_kind punct_kind(pf_lexer *lx, char c)
{
    switch (c) {
    case '+': return two(lx, '=', PF_TOK_PLUS_ASSIGN, PF_TOK_PLUS);
    case '*': return two(lx, '=', PF_TOK_STAR_ASSIGN, PF_TOK_STAR);
    case '/': return two(lx, '=', PF_TOK_SLASH_ASSIGN, PF_TOK_SLASH);
    case '<': return two(lx, '=', PF_TOK_LE, PF_TOK_LT);
    case '>': return two(lx, '=', PF_TOK_GE, PF_TOK_GT);
    case '=': return two(lx, '=', PF_TOK_EQ, PF_TOK_ASSIGN);
    case '!': return two(lx, '=', PF_TOK_NE, PF_TOK_NOT);
    case '&': return two(lx, '&', PF_TOK_AND, PF_TOK_COUNT);
    case '|': return two(lx, '|', PF_TOK_OR, PF_TOK_COUNT);
    case '.': return two(lx, '.', PF_TOK_DOTDOT, PF_TOK_COUNT);
    case '-':
        if (lx->p + 1 < lx->end && lx->p[1] == '>') {
            lx->p += 2;
            return PF_TOK_ARROW;
        }
        return two(lx, '=', PF_TOK_MINUS_ASSIGN, PF_TOK_MINUS);
    default: break;
    }
    static const char singles[] = "%?:()[]{},;";
    static const pf_tok_kind kinds[] = {PF_TOK_PERCENT, PF_TOK_QUESTION, PF_TOK_COLON,
                                        PF_TOK_LPAREN, PF_TOK_RPAREN, PF_TOK_LBRACKET,
                                        PF_TOK_RBRACKET, PF_TOK_LBRACE, PF_TOK_RBRACE,
                                        PF_TOK_COMMA, PF_TOK_SEMI};
    const char *at = c ? strchr(singles, c) : NULL;
    if (!at)
        return PF_TOK_COUNT;
    lx->p++;
    return kinds[at - singles];
}

static bool lex_punct(pf_lexer *lx, pf_token *t)
{
    const char *start = lx->p;
    pf_tok_kind k = punct_kind(lx, *lx->p);
    if (k == PF_TOK_COUNT) {
        lx->p = start;  /* a lone '&', '|' or '.' is not a token */
        return false;
    }
    t->kind = k;
    t->len = (size_t)(lx->p - start);
    return true;
}

/* Skips the bad character (a run of non-ASCII bytes counts as one: a UTF-8 character). */
static void bad_char(pf_lexer *lx, pf_loc loc)
{
    unsigned char c = (unsigned char)*lx->p;
    lx->p++;
    if (c >= 33 && c < 127) {
        lex_error(lx, loc, "unexpected character '%c'", c);
        return;
    }
    if (c >= 0x80) {
        while (lx->p < lx->end && (unsigned char)*lx->p >= 0x80)
            lx->p++;
        lex_error(lx, loc, "unexpected non-ASCII character (only comments may have them)");
        return;
    }
    lex_error(lx, loc, "unexpected byte 0x%02x", c);
}

pf_token pf_lexer_next(pf_lexer *lx)
{
    pf_token t;
    for (;;) {
        skip_space(lx);
        memset(&t, 0, sizeof t);
        t.loc = loc_at(lx, lx->p);
        t.text = lx->p;
        if (lx->p >= lx->end) {
            t.kind = PF_TOK_EOF;
            return t;
        }
        char c = *lx->p;
        if (is_ident_start(c))
            lex_ident(lx, &t);
        else if (is_digit(c) || (c == '.' && lx->p + 1 < lx->end && is_digit(lx->p[1])))
            lex_number(lx, &t);
        else if (!lex_punct(lx, &t)) {
            bad_char(lx, t.loc);
            continue;  /* skipped: the parser sees the next good token */
        }
        return t;
    }
}
