/* The lexer: turns source text into tokens on demand (docs/language.md Section 1). Lexical
 * errors are reported into the diagnostics and the lexer goes on with a sensible token (a bad
 * number becomes 0, an unknown character is skipped), so they cause no cascade in the parser. */
#ifndef PF_LANG_LEXER_H
#define PF_LANG_LEXER_H

#include "lang/ast.h"
#include "lang/diag.h"

#include <stddef.h>

#define PF_IDENT_MAX 255

/* ORDER TOKENS: keep in step with token_names in lexer.c. */
typedef enum pf_tok_kind {
    PF_TOK_EOF,
    PF_TOK_IDENT,
    PF_TOK_INT,
    PF_TOK_FLOAT,
    /* keywords */
    PF_TOK_PARAM, PF_TOK_CONST, PF_TOK_IMAGE, PF_TOK_PIPELINE, PF_TOK_FOR, PF_TOK_EACH,
    PF_TOK_OF, PF_TOK_OVER, PF_TOK_AS, PF_TOK_STEP, PF_TOK_IF, PF_TOK_ELSE, PF_TOK_RETURN,
    PF_TOK_INT_KW, PF_TOK_FLOAT_KW, PF_TOK_BOOL_KW, PF_TOK_TRUE, PF_TOK_FALSE, PF_TOK_BOUNDARY,
    /* operators and punctuation */
    PF_TOK_PLUS, PF_TOK_MINUS, PF_TOK_STAR, PF_TOK_SLASH, PF_TOK_PERCENT,
    PF_TOK_LT, PF_TOK_LE, PF_TOK_GT, PF_TOK_GE, PF_TOK_EQ, PF_TOK_NE,
    PF_TOK_AND, PF_TOK_OR, PF_TOK_NOT, PF_TOK_QUESTION, PF_TOK_COLON,
    PF_TOK_ASSIGN, PF_TOK_PLUS_ASSIGN, PF_TOK_MINUS_ASSIGN, PF_TOK_STAR_ASSIGN,
    PF_TOK_SLASH_ASSIGN,
    PF_TOK_LPAREN, PF_TOK_RPAREN, PF_TOK_LBRACKET, PF_TOK_RBRACKET, PF_TOK_LBRACE,
    PF_TOK_RBRACE, PF_TOK_COMMA, PF_TOK_SEMI, PF_TOK_DOTDOT, PF_TOK_ARROW,
    PF_TOK_COUNT
} pf_tok_kind;

typedef struct pf_token {
    pf_tok_kind kind;
    pf_loc loc;
    const char *text;  /* points into the source */
    size_t len;
    int32_t ival;      /* INT */
    float fval;        /* FLOAT */
} pf_token;

typedef struct pf_lexer {
    const char *src;   /* NUL-terminated; `end` marks the real end (NULs inside are errors) */
    const char *end;
    const char *p;
    int line;
    const char *line_begin;
    pf_diags *diags;
    int n_errors;      /* lexical errors reported */
} pf_lexer;

void pf_lexer_init(pf_lexer *lx, const char *src, size_t len, pf_diags *diags);
/* The next token (EOF forever at the end). */
pf_token pf_lexer_next(pf_lexer *lx);
/* "'+'", "identifier", "end of file" ... for messages. */
const char *pf_tok_kind_name(pf_tok_kind k);
/* Writes a short description of a token ("'foo'", "end of file") into buf. */
const char *pf_tok_describe(const pf_token *t, char *buf, size_t size);

#endif
