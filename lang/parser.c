/* The recursive-descent parser (docs/language.md Section 12): one function per grammar rule,
 * with the rule above it, and a precedence table for binary operators.
 *
 * Error recovery: the first error puts the parser in panic mode, which suppresses further
 * messages; a statement, pipeline item or top-level declaration that ends in panic is followed
 * by synchronization (skip to `;` or `}` at the current brace level, or to a top-level keyword),
 * which always consumes a token when nothing else did, so recovery terminates. Nesting of
 * expressions and statements is bounded (PF_PARSE_MAX_NESTING), which bounds the height of the
 * tree and so the recursion of every later pass. */
#include "lang/lang.h"
#include "lang/lexer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deepest nesting of expressions and statements (and of chained binary operators). */
#define PF_PARSE_MAX_NESTING 256
/* Most expressions and statements in a program: bounds the tree's memory (a few hundred MB at
 * worst) whatever the 4 MiB of source hold; real programs have a few thousand. */
#define PF_PARSE_MAX_NODES 500000

typedef struct parser {
    pf_lexer lx;
    pf_token tok;        /* current */
    pf_token prev;       /* last consumed */
    pf_token ahead;      /* one token of lookahead, when has_ahead */
    bool has_ahead;
    long consumed;       /* tokens consumed so far, to prove progress during recovery */
    bool panic;
    int n_errors;        /* syntax errors reported (the lexer counts its own) */
    int lex_errors_seen; /* lexer errors before the current statement: a syntax error right
                            after a lexical one is its consequence and is not reported */
    int depth;
    int n_nodes;
    bool too_big;        /* PF_PARSE_MAX_NODES reached: parsing stops */
    bool have_pipeline;
    pf_program *prog;
    pf_arena *arena;
    pf_diags *diags;
} parser;

/* ---- growable arrays in the arena (old storage is simply abandoned) ---- */

typedef struct vec {
    char *data;
    int n, cap;
} vec;

static void *vec_push(parser *p, vec *v, size_t size)
{
    if (v->n == v->cap) {
        int cap = v->cap ? v->cap * 2 : 4;
        char *d = pf_arena_alloc(p->arena, size * (size_t)cap);
        if (v->n)
            memcpy(d, v->data, size * (size_t)v->n);
        v->data = d;
        v->cap = cap;
    }
    return v->data + size * (size_t)v->n++;
}

#define PUSH(p, v, T, x) (*(T *)vec_push((p), &(v), sizeof(T)) = (x))

/* ---- tokens ---- */

static void advance(parser *p)
{
    p->prev = p->tok;
    if (p->has_ahead) {
        p->tok = p->ahead;
        p->has_ahead = false;
    } else {
        p->tok = pf_lexer_next(&p->lx);
    }
    p->consumed++;
}

static const pf_token *peek(parser *p)
{
    if (!p->has_ahead) {
        p->ahead = pf_lexer_next(&p->lx);
        p->has_ahead = true;
    }
    return &p->ahead;
}

static bool check(const parser *p, pf_tok_kind k)
{
    return p->tok.kind == k;
}

static bool accept(parser *p, pf_tok_kind k)
{
    if (!check(p, k))
        return false;
    advance(p);
    return true;
}

static void error_at(parser *p, pf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void report(parser *p, pf_loc loc, const char *fmt, va_list ap)
{
    char buf[400];
    vsnprintf(buf, sizeof buf, fmt, ap);
    p->n_errors++;
    if (p->lx.n_errors == p->lex_errors_seen)
        pf_diag_error(p->diags, loc, "%s", buf);
}

/* A syntax error: reported unless the parser is already recovering, and recovery starts. */
static void error_at(parser *p, pf_loc loc, const char *fmt, ...)
{
    if (p->panic)
        return;
    p->panic = true;
    va_list ap;
    va_start(ap, fmt);
    report(p, loc, fmt, ap);
    va_end(ap);
}

static void soft_error_at(parser *p, pf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An error that leaves the parser in step with the grammar: no recovery needed. */
static void soft_error_at(parser *p, pf_loc loc, const char *fmt, ...)
{
    if (p->panic)
        return;
    va_list ap;
    va_start(ap, fmt);
    report(p, loc, fmt, ap);
    va_end(ap);
}

static const char *found(const parser *p, char *buf, size_t size)
{
    return pf_tok_describe(&p->tok, buf, size);
}

/* Just after the previous token: where a missing ';' belongs. */
static pf_loc after_prev(const parser *p)
{
    pf_loc l = p->prev.loc;
    if (l.line == 0)
        return p->tok.loc;
    l.col += (int)p->prev.len;
    return l;
}

static bool expect(parser *p, pf_tok_kind k)
{
    if (accept(p, k))
        return true;
    char buf[64];
    pf_loc loc = k == PF_TOK_SEMI ? after_prev(p) : p->tok.loc;
    error_at(p, loc, "expected '%s', found %s", pf_tok_kind_name(k), found(p, buf, sizeof buf));
    return false;
}

static bool is_keyword(pf_tok_kind k)
{
    return k >= PF_TOK_PARAM && k <= PF_TOK_BOUNDARY;
}

/* IDENT, naming `what` in the message when it is missing. Returns NULL on error. */
static const char *expect_ident(parser *p, const char *what, pf_loc *loc)
{
    if (loc)
        *loc = p->tok.loc;
    if (check(p, PF_TOK_IDENT)) {
        const char *s = pf_arena_strndup(p->arena, p->tok.text, p->tok.len);
        advance(p);
        return s;
    }
    char buf[64];
    if (is_keyword(p->tok.kind))
        error_at(p, p->tok.loc, "'%s' is a reserved word and cannot name %s",
                 pf_tok_kind_name(p->tok.kind), what);
    else
        error_at(p, p->tok.loc, "expected %s, found %s", what, found(p, buf, sizeof buf));
    return NULL;
}

static const char *ident_text(parser *p)
{
    return pf_arena_strndup(p->arena, p->tok.text, p->tok.len);
}

/* ---- nesting bound ---- */

static bool enter(parser *p)
{
    if (p->depth >= PF_PARSE_MAX_NESTING) {
        error_at(p, p->tok.loc, "the program is nested too deeply here (more than %d levels "
                 "of statements, operators and parentheses)", PF_PARSE_MAX_NESTING);
        return false;
    }
    p->depth++;
    return true;
}

static void leave(parser *p)
{
    p->depth--;
}

/* ---- node constructors ---- */

static void count_node(parser *p)
{
    if (++p->n_nodes <= PF_PARSE_MAX_NODES || p->too_big)
        return;
    p->too_big = true;
    p->n_errors++;
    pf_diag_error(p->diags, p->tok.loc, "the program is too large (more than %d expressions "
                  "and statements)", PF_PARSE_MAX_NODES);
    /* Stop here: the rest of the input reads as end of file, so every loop ends at once. */
    p->panic = true;
    p->lx.p = p->lx.end;
    p->has_ahead = false;
    p->tok.kind = PF_TOK_EOF;
}

static pf_expr *new_expr(parser *p, pf_expr_kind k, pf_loc loc)
{
    count_node(p);
    pf_expr *e = PF_NEW(p->arena, pf_expr);
    e->kind = k;
    e->loc = loc;
    e->type = PF_T_ERROR;
    return e;
}

/* What a failed expression parses to (the program is discarded anyway). */
static pf_expr *error_expr(parser *p)
{
    return new_expr(p, PF_E_INT, p->tok.loc);
}

static pf_stmt *new_stmt(parser *p, pf_stmt_kind k, pf_loc loc)
{
    count_node(p);
    pf_stmt *s = PF_NEW(p->arena, pf_stmt);
    s->kind = k;
    s->loc = loc;
    s->loop_id = -1;
    return s;
}

static bool is_scalar_type(pf_tok_kind k)
{
    return k == PF_TOK_INT_KW || k == PF_TOK_FLOAT_KW || k == PF_TOK_BOOL_KW;
}

/* scalar_type = "int" | "float" | "bool" */
static pf_type scalar_type(parser *p)
{
    pf_tok_kind k = p->tok.kind;
    if (!is_scalar_type(k)) {
        char buf[64];
        error_at(p, p->tok.loc, "expected a type (int, float or bool), found %s",
                 found(p, buf, sizeof buf));
        return PF_T_ERROR;
    }
    advance(p);
    return k == PF_TOK_INT_KW ? PF_T_INT : k == PF_TOK_FLOAT_KW ? PF_T_FLOAT : PF_T_BOOL;
}

/* ---- expressions ---- */

static pf_expr *expr(parser *p);

/* Binary operators, loosest first (ORDER matters only within a level). */
static const struct binop {
    pf_tok_kind tok;
    pf_op op;
    int prec;
} binops[] = {
    {PF_TOK_OR, PF_OP_OR, 1},       {PF_TOK_AND, PF_OP_AND, 2},
    {PF_TOK_EQ, PF_OP_EQ, 3},       {PF_TOK_NE, PF_OP_NE, 3},
    {PF_TOK_LT, PF_OP_LT, 4},       {PF_TOK_LE, PF_OP_LE, 4},
    {PF_TOK_GT, PF_OP_GT, 4},       {PF_TOK_GE, PF_OP_GE, 4},
    {PF_TOK_PLUS, PF_OP_ADD, 5},    {PF_TOK_MINUS, PF_OP_SUB, 5},
    {PF_TOK_STAR, PF_OP_MUL, 6},    {PF_TOK_SLASH, PF_OP_DIV, 6},
    {PF_TOK_PERCENT, PF_OP_MOD, 6},
};

static const struct binop *find_binop(pf_tok_kind k)
{
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
        if (binops[i].tok == k)
            return &binops[i];
    return NULL;
}

/* arg = expr | IDENT "=" expr ".." expr      (a reduction's range; only as the last argument) */
static bool is_range_arg(parser *p)
{
    return check(p, PF_TOK_IDENT) && peek(p)->kind == PF_TOK_ASSIGN;
}

static bool is_reduction_name(const char *name, pf_reduce_op *op)
{
    if (strcmp(name, "sum") == 0)
        *op = PF_REDUCE_SUM;
    else if (strcmp(name, "min") == 0)
        *op = PF_REDUCE_MIN;
    else if (strcmp(name, "max") == 0)
        *op = PF_REDUCE_MAX;
    else
        return false;
    return true;
}

/* The range argument of a reduction `sum(body, i = lo .. hi)`, after the body. */
static pf_expr *reduction(parser *p, pf_expr *call, vec *args)
{
    pf_reduce_op op = PF_REDUCE_SUM;
    if (!is_reduction_name(call->name, &op)) {
        error_at(p, p->tok.loc, "only sum, min and max take a range argument ('%s' does not)",
                 call->name);
        return call;
    }
    if (args->n != 1) {
        error_at(p, p->tok.loc, "a reduction has the form %s(e, i = lo .. hi)", call->name);
        return call;
    }
    pf_expr *r = new_expr(p, PF_E_REDUCE, call->loc);
    r->reduce_op = op;
    r->name = ident_text(p);
    r->var_loc = p->tok.loc;
    advance(p);
    advance(p);  /* '=' */
    r->a = expr(p);
    expect(p, PF_TOK_DOTDOT);
    r->b = expr(p);
    r->n_args = 1;
    r->args = PF_NEW_ARRAY(p->arena, pf_expr *, 1);
    r->args[0] = ((pf_expr **)args->data)[0];
    if (check(p, PF_TOK_COMMA))
        error_at(p, p->tok.loc, "the range must be the last argument of %s", call->name);
    return r;
}

/* call = IDENT "(" [ arg { "," arg } ] ")" */
static pf_expr *call(parser *p, pf_expr *e)
{
    advance(p);  /* '(' */
    e->kind = PF_E_CALL;
    vec args = {0};
    pf_expr *result = e;
    if (!check(p, PF_TOK_RPAREN)) {
        do {
            if (is_range_arg(p)) {
                result = reduction(p, e, &args);
                break;
            }
            PUSH(p, args, pf_expr *, expr(p));
        } while (!p->panic && accept(p, PF_TOK_COMMA));
    }
    expect(p, PF_TOK_RPAREN);
    e->n_args = args.n;
    e->args = (pf_expr **)args.data;
    return result;
}

/* index = "[" expr { "," expr } "]"  (fills e->args) */
static void index_list(parser *p, pf_expr *e)
{
    advance(p);  /* '[' */
    vec args = {0};
    do {
        PUSH(p, args, pf_expr *, expr(p));
    } while (!p->panic && accept(p, PF_TOK_COMMA));
    expect(p, PF_TOK_RBRACKET);
    e->n_args = args.n;
    e->args = (pf_expr **)args.data;
}

/* cast = ("int" | "float") "(" expr ")" */
static pf_expr *cast(parser *p)
{
    pf_expr *e = new_expr(p, PF_E_CAST, p->tok.loc);
    if (check(p, PF_TOK_BOOL_KW)) {
        error_at(p, p->tok.loc, "there is no cast to bool (compare instead, e.g. e != 0)");
        return e;
    }
    e->type = check(p, PF_TOK_INT_KW) ? PF_T_INT : PF_T_FLOAT;
    advance(p);
    expect(p, PF_TOK_LPAREN);
    e->a = expr(p);
    expect(p, PF_TOK_RPAREN);
    return e;
}

/* postfix = IDENT [ "[" expr { "," expr } "]" | "(" [ arg { "," arg } ] ")" ] */
static pf_expr *name_or_call(parser *p)
{
    pf_expr *e = new_expr(p, PF_E_NAME, p->tok.loc);
    e->name = ident_text(p);
    advance(p);
    if (check(p, PF_TOK_LPAREN))
        return call(p, e);
    if (check(p, PF_TOK_LBRACKET)) {
        e->kind = PF_E_INDEX;
        index_list(p, e);
    }
    return e;
}

/* primary = INT | FLOAT | "true" | "false" | "(" expr ")" | cast | postfix */
static pf_expr *primary(parser *p)
{
    pf_expr *e;
    char buf[64];
    switch (p->tok.kind) {
    case PF_TOK_INT:
        e = new_expr(p, PF_E_INT, p->tok.loc);
        e->ival = p->tok.ival;
        advance(p);
        return e;
    case PF_TOK_FLOAT:
        e = new_expr(p, PF_E_FLOAT, p->tok.loc);
        e->fval = p->tok.fval;
        advance(p);
        return e;
    case PF_TOK_TRUE:
    case PF_TOK_FALSE:
        e = new_expr(p, PF_E_BOOL, p->tok.loc);
        e->bval = check(p, PF_TOK_TRUE);
        advance(p);
        return e;
    case PF_TOK_LPAREN:
        advance(p);
        e = expr(p);
        expect(p, PF_TOK_RPAREN);
        return e;
    case PF_TOK_INT_KW:
    case PF_TOK_FLOAT_KW:
    case PF_TOK_BOOL_KW:
        return cast(p);
    case PF_TOK_IDENT:
        return name_or_call(p);
    default:
        error_at(p, p->tok.loc, "expected an expression, found %s", found(p, buf, sizeof buf));
        return error_expr(p);
    }
}

/* unary = ("-" | "!") unary | postfix */
static pf_expr *unary(parser *p)
{
    if (!enter(p))
        return error_expr(p);
    pf_expr *e;
    if (check(p, PF_TOK_MINUS) || check(p, PF_TOK_NOT)) {
        e = new_expr(p, PF_E_UNARY, p->tok.loc);
        e->op = check(p, PF_TOK_MINUS) ? PF_OP_NEG : PF_OP_NOT;
        advance(p);
        e->a = unary(p);
    } else {
        e = primary(p);
        if (check(p, PF_TOK_LBRACKET) && !p->panic)
            error_at(p, p->tok.loc, "only a name can be indexed");
    }
    leave(p);
    return e;
}

/* binary = unary { BINOP binary' }   where binary' binds tighter than BINOP (table above);
 * left-associative. Every operator applied deepens the tree by one, so it counts as nesting. */
static pf_expr *binary(parser *p, int min_prec)
{
    pf_expr *lhs = unary(p);
    int chained = 0;
    for (;;) {
        const struct binop *b = find_binop(p->tok.kind);
        if (!b || b->prec < min_prec || p->panic)
            break;
        if (!enter(p))
            break;
        chained++;
        pf_expr *e = new_expr(p, PF_E_BINARY, p->tok.loc);
        e->op = b->op;
        advance(p);
        e->a = lhs;
        e->b = binary(p, b->prec + 1);
        lhs = e;
    }
    p->depth -= chained;
    return lhs;
}

/* expr = binary [ "?" expr ":" expr ]
 * (Nesting is counted in unary(), binary chains and here for the branches.) */
static pf_expr *expr(parser *p)
{
    pf_expr *e = binary(p, 1);
    if (check(p, PF_TOK_QUESTION) && !p->panic && enter(p)) {
        pf_expr *c = new_expr(p, PF_E_COND, p->tok.loc);
        advance(p);
        c->a = e;
        c->b = expr(p);
        expect(p, PF_TOK_COLON);
        c->c = expr(p);
        e = c;
        leave(p);
    }
    return e;
}

/* range = expr ".." expr [ "step" expr ] */
static pf_range range(parser *p)
{
    pf_range r = {0};
    r.lo = expr(p);
    expect(p, PF_TOK_DOTDOT);
    r.hi = expr(p);
    if (accept(p, PF_TOK_STEP))
        r.step = expr(p);
    return r;
}

/* ---- statements ---- */

static pf_stmt *statement(parser *p);

static bool at_top_keyword(const parser *p)
{
    return check(p, PF_TOK_PARAM) || check(p, PF_TOK_CONST) || check(p, PF_TOK_PIPELINE);
}

/* After an error inside a block: skip to just after `;`, or to `}` or a top-level keyword at
 * the current brace level; always consumes something if `start` is still the current token. */
static bool ended_statement(const parser *p, long start)
{
    return p->consumed > start &&
           (p->prev.kind == PF_TOK_SEMI || p->prev.kind == PF_TOK_RBRACE);
}

static void sync_statement(parser *p, long start)
{
    int depth = 0;
    while (!check(p, PF_TOK_EOF) && !ended_statement(p, start)) {
        if (depth == 0 && (check(p, PF_TOK_RBRACE) || at_top_keyword(p)))
            break;
        if (check(p, PF_TOK_LBRACE))
            depth++;
        bool end = check(p, PF_TOK_RBRACE) ? --depth == 0 : check(p, PF_TOK_SEMI) && depth == 0;
        advance(p);
        if (end)
            break;
    }
    if (p->consumed == start && !check(p, PF_TOK_EOF))
        advance(p);
    p->panic = false;
    p->lex_errors_seen = p->lx.n_errors;
}

/* After an error in a header (function, pipeline): skip to its body's '{' so that the body is
 * still checked for errors. Returns whether a '{' was found. */
static bool sync_to_body(parser *p)
{
    while (!check(p, PF_TOK_EOF) && !check(p, PF_TOK_LBRACE) && !at_top_keyword(p))
        advance(p);
    p->panic = false;
    p->lex_errors_seen = p->lx.n_errors;
    return check(p, PF_TOK_LBRACE);
}

/* Parsing stops early after PF_DIAG_MAX errors or at the size limit. */
static bool too_many_errors(const parser *p)
{
    return p->diags->count + p->diags->dropped >= PF_DIAG_MAX || p->too_big;
}

/* block = "{" { statement } "}" */
static pf_stmt *block(parser *p)
{
    pf_stmt *s = new_stmt(p, PF_S_BLOCK, p->tok.loc);
    expect(p, PF_TOK_LBRACE);
    vec body = {0};
    while (!check(p, PF_TOK_RBRACE) && !check(p, PF_TOK_EOF) && !at_top_keyword(p) &&
           !too_many_errors(p)) {
        long start = p->consumed;
        p->lex_errors_seen = p->lx.n_errors;
        PUSH(p, body, pf_stmt *, statement(p));
        if (p->panic)
            sync_statement(p, start);
    }
    expect(p, PF_TOK_RBRACE);
    s->n_body = body.n;
    s->body = (pf_stmt **)body.data;
    return s;
}

/* local_decl = scalar_type IDENT [ "[" expr "]" ] [ "=" expr ] ";" */
static pf_stmt *local_decl(parser *p)
{
    pf_stmt *s = new_stmt(p, PF_S_DECL, p->tok.loc);
    s->decl_type = scalar_type(p);
    s->decl_name = expect_ident(p, "a variable", &s->name_loc);
    if (accept(p, PF_TOK_LBRACKET)) {
        s->len_expr = expr(p);
        expect(p, PF_TOK_RBRACKET);
    }
    if (accept(p, PF_TOK_ASSIGN))
        s->value = expr(p);
    expect(p, PF_TOK_SEMI);
    return s;
}

static bool assign_op(pf_tok_kind k, pf_assign_op *op)
{
    switch (k) {
    case PF_TOK_ASSIGN: *op = PF_ASSIGN_SET; return true;
    case PF_TOK_PLUS_ASSIGN: *op = PF_ASSIGN_ADD; return true;
    case PF_TOK_MINUS_ASSIGN: *op = PF_ASSIGN_SUB; return true;
    case PF_TOK_STAR_ASSIGN: *op = PF_ASSIGN_MUL; return true;
    case PF_TOK_SLASH_ASSIGN: *op = PF_ASSIGN_DIV; return true;
    default: return false;
    }
}

/* lvalue = IDENT [ "[" expr { "," expr } "]" ] */
static void lvalue(parser *p, pf_lvalue *lv)
{
    lv->loc = p->tok.loc;
    lv->name = ident_text(p);
    advance(p);
    if (!check(p, PF_TOK_LBRACKET))
        return;
    pf_expr tmp = {0};
    index_list(p, &tmp);
    lv->n_index = tmp.n_args;
    lv->index = tmp.args;
}

/* assign = lvalue ( "=" | "+=" | "-=" | "*=" | "/=" ) expr ";" */
static pf_stmt *assignment(parser *p)
{
    pf_stmt *s = new_stmt(p, PF_S_ASSIGN, p->tok.loc);
    lvalue(p, &s->target);
    if (!assign_op(p->tok.kind, &s->assign_op)) {
        char buf[64];
        if (check(p, PF_TOK_LPAREN))
            error_at(p, p->tok.loc, "a call is not a statement (assign its value)");
        else
            error_at(p, p->tok.loc, "expected an assignment ('=', '+=', '-=', '*=' or '/='), "
                     "found %s", found(p, buf, sizeof buf));
        return s;
    }
    advance(p);
    s->value = expr(p);
    expect(p, PF_TOK_SEMI);
    return s;
}

/* if = "if" "(" expr ")" statement [ "else" statement ] */
static pf_stmt *if_statement(parser *p)
{
    pf_stmt *s = new_stmt(p, PF_S_IF, p->tok.loc);
    advance(p);
    expect(p, PF_TOK_LPAREN);
    s->cond = expr(p);
    expect(p, PF_TOK_RPAREN);
    s->then_s = statement(p);
    if (!p->panic && accept(p, PF_TOK_ELSE))
        s->else_s = statement(p);
    return s;
}

/* for = "for" "(" IDENT ")" "of" range [ "as" IDENT ] statement */
static pf_stmt *for_statement(parser *p)
{
    pf_stmt *s = new_stmt(p, PF_S_FOR, p->tok.loc);
    advance(p);
    if (check(p, PF_TOK_EACH)) {
        error_at(p, p->tok.loc, "a stage ('for each') must be at the top level of the pipeline");
        return s;
    }
    expect(p, PF_TOK_LPAREN);
    s->var_name = expect_ident(p, "a loop variable", &s->name_loc);
    expect(p, PF_TOK_RPAREN);
    expect(p, PF_TOK_OF);
    pf_range r = range(p);
    s->lo = r.lo;
    s->hi = r.hi;
    s->step = r.step;
    if (accept(p, PF_TOK_AS))
        s->loop_name = expect_ident(p, "a loop", &s->loop_name_loc);
    if (!p->panic)
        s->then_s = statement(p);
    return s;
}

/* sort = "sort" "(" IDENT "," expr ")" ";" */
static pf_stmt *sort_statement(parser *p)
{
    pf_stmt *s = new_stmt(p, PF_S_SORT, p->tok.loc);
    advance(p);
    expect(p, PF_TOK_LPAREN);
    s->target.loc = p->tok.loc;
    s->target.name = expect_ident(p, "the array to sort", NULL);
    expect(p, PF_TOK_COMMA);
    s->value = expr(p);
    expect(p, PF_TOK_RPAREN);
    expect(p, PF_TOK_SEMI);
    return s;
}

/* return = "return" expr ";" */
static pf_stmt *return_statement(parser *p)
{
    pf_stmt *s = new_stmt(p, PF_S_RETURN, p->tok.loc);
    advance(p);
    s->value = expr(p);
    expect(p, PF_TOK_SEMI);
    return s;
}

static bool is_sort(parser *p)
{
    return check(p, PF_TOK_IDENT) && p->tok.len == 4 && memcmp(p->tok.text, "sort", 4) == 0 &&
           peek(p)->kind == PF_TOK_LPAREN;
}

/* statement = block | local_decl | assign | if | for | sort | return */
static pf_stmt *statement(parser *p)
{
    if (!enter(p))
        return new_stmt(p, PF_S_BLOCK, p->tok.loc);
    pf_stmt *s;
    char buf[64];
    if (check(p, PF_TOK_LBRACE))
        s = block(p);
    else if (is_scalar_type(p->tok.kind))
        s = local_decl(p);
    else if (check(p, PF_TOK_IF))
        s = if_statement(p);
    else if (check(p, PF_TOK_FOR))
        s = for_statement(p);
    else if (check(p, PF_TOK_RETURN))
        s = return_statement(p);
    else if (is_sort(p))
        s = sort_statement(p);
    else if (check(p, PF_TOK_IDENT))
        s = assignment(p);
    else {
        s = new_stmt(p, PF_S_BLOCK, p->tok.loc);
        error_at(p, p->tok.loc, "expected a statement, found %s", found(p, buf, sizeof buf));
    }
    leave(p);
    return s;
}

/* ---- the pipeline ---- */

/* boundary = "boundary" ( "clamp" | "mirror" | "wrap" | "constant" "(" expr ")" ) */
static void boundary(parser *p, pf_image_decl *img)
{
    if (!accept(p, PF_TOK_BOUNDARY))
        return;
    const char *mode = check(p, PF_TOK_IDENT) ? ident_text(p) : "";
    if (strcmp(mode, "clamp") == 0) {
        img->boundary = PF_BOUNDARY_CLAMP;
    } else if (strcmp(mode, "mirror") == 0) {
        img->boundary = PF_BOUNDARY_MIRROR;
    } else if (strcmp(mode, "wrap") == 0) {
        img->boundary = PF_BOUNDARY_WRAP;
    } else if (strcmp(mode, "constant") == 0) {
        img->boundary = PF_BOUNDARY_CONSTANT;
        advance(p);
        expect(p, PF_TOK_LPAREN);
        img->boundary_value = expr(p);
        expect(p, PF_TOK_RPAREN);
        return;
    } else {
        char buf[64];
        error_at(p, p->tok.loc, "expected a boundary mode (clamp, mirror, wrap or "
                 "constant(v)), found %s", found(p, buf, sizeof buf));
        return;
    }
    advance(p);
}

/* image_param = "image" IDENT "[" expr { "," expr } "]" [ boundary ] */
static pf_image_decl *image_param(parser *p, pf_image_role role)
{
    pf_image_decl *img = PF_NEW(p->arena, pf_image_decl);
    img->role = role;
    img->loc = p->tok.loc;
    if (!expect(p, PF_TOK_IMAGE))
        return img;
    img->name = expect_ident(p, "an image", &img->loc);
    if (!check(p, PF_TOK_LBRACKET)) {
        expect(p, PF_TOK_LBRACKET);
        return img;
    }
    pf_expr tmp = {0};
    index_list(p, &tmp);
    img->ndims = tmp.n_args;
    img->extents = tmp.args;
    boundary(p, img);
    return img;
}

/* image_param { "," image_param }  inside parentheses */
static void image_params(parser *p, pf_image_role role, int *n, pf_image_decl ***out)
{
    vec v = {0};
    expect(p, PF_TOK_LPAREN);
    do {
        PUSH(p, v, pf_image_decl *, image_param(p, role));
    } while (!p->panic && accept(p, PF_TOK_COMMA));
    expect(p, PF_TOK_RPAREN);
    *n = v.n;
    *out = (pf_image_decl **)v.data;
}

/* stage = "for" "each" "(" IDENT { "," IDENT } ")" "of" IDENT
 *         [ "over" "(" range { "," range } ")" ] "as" IDENT statement */
static pf_stage *stage(parser *p)
{
    pf_stage *st = PF_NEW(p->arena, pf_stage);
    st->loc = p->tok.loc;
    advance(p);  /* for */
    if (!expect(p, PF_TOK_EACH))
        return st;
    expect(p, PF_TOK_LPAREN);
    vec names = {0}, locs = {0};
    do {
        pf_loc l;
        PUSH(p, names, const char *, expect_ident(p, "a loop variable", &l));
        PUSH(p, locs, pf_loc, l);
    } while (!p->panic && accept(p, PF_TOK_COMMA));
    st->n_vars = names.n;
    st->var_names = (const char **)names.data;
    st->var_locs = (pf_loc *)locs.data;
    expect(p, PF_TOK_RPAREN);
    expect(p, PF_TOK_OF);
    st->image_name = expect_ident(p, "an image", &st->image_loc);
    if (accept(p, PF_TOK_OVER)) {
        vec ranges = {0};
        expect(p, PF_TOK_LPAREN);
        do {
            PUSH(p, ranges, pf_range, range(p));
        } while (!p->panic && accept(p, PF_TOK_COMMA));
        expect(p, PF_TOK_RPAREN);
        if (ranges.n != st->n_vars && !p->panic)
            soft_error_at(p, p->prev.loc, "'over' has %d range(s) but the stage has %d variable(s)",
                     ranges.n, st->n_vars);
        st->over = (pf_range *)ranges.data;
    }
    expect(p, PF_TOK_AS);
    st->name = expect_ident(p, "the stage", &st->name_loc);
    if (!p->panic)
        st->body = statement(p);
    return st;
}

/* scalar_decl = scalar_type IDENT "=" expr ";" */
static void scalar_decl(parser *p, pf_item *it)
{
    it->kind = PF_ITEM_SCALAR;
    it->scalar_type = scalar_type(p);
    it->scalar_name = expect_ident(p, "a scalar", &it->loc);
    if (!check(p, PF_TOK_ASSIGN) && !p->panic) {
        error_at(p, p->tok.loc, "a pipeline scalar needs an initializer ('= e')");
        return;
    }
    advance(p);
    it->scalar_init = expr(p);
    expect(p, PF_TOK_SEMI);
}

/* pipe_item = image_decl | scalar_decl | stage;   image_decl = image_param ";" */
static pf_item *pipe_item(parser *p)
{
    pf_item *it = PF_NEW(p->arena, pf_item);
    it->loc = p->tok.loc;
    char buf[64];
    if (check(p, PF_TOK_IMAGE)) {
        it->kind = PF_ITEM_IMAGE;
        it->image = image_param(p, PF_IMAGE_LOCAL);
        it->loc = it->image->loc;
        expect(p, PF_TOK_SEMI);
    } else if (is_scalar_type(p->tok.kind)) {
        scalar_decl(p, it);
    } else if (check(p, PF_TOK_FOR) && peek(p)->kind == PF_TOK_EACH) {
        it->kind = PF_ITEM_STAGE;
        it->stage = stage(p);
    } else if (check(p, PF_TOK_FOR)) {
        error_at(p, p->tok.loc, "a 'for' loop must be inside a stage ('for each')");
    } else {
        error_at(p, p->tok.loc, "expected an image, a scalar or a stage ('for each') in the "
                 "pipeline, found %s", found(p, buf, sizeof buf));
    }
    return it;
}

/* pipeline = "pipeline" IDENT "(" image_param { "," image_param } ")"
 *            "->" "(" image_param { "," image_param } ")" "{" { pipe_item } "}" */
static void pipeline(parser *p)
{
    pf_program *prog = p->prog;
    advance(p);  /* pipeline */
    pf_loc loc;
    const char *name = expect_ident(p, "the pipeline", &loc);
    if (p->have_pipeline && !p->panic)
        soft_error_at(p, loc, "only one pipeline is allowed (the first is at %d:%d)",
                 prog->loc.line, prog->loc.col);
    bool first = !p->have_pipeline;
    p->have_pipeline = true;
    int n_in = 0, n_out = 0;
    pf_image_decl **in = NULL, **out = NULL;
    image_params(p, PF_IMAGE_INPUT, &n_in, &in);
    expect(p, PF_TOK_ARROW);
    image_params(p, PF_IMAGE_OUTPUT, &n_out, &out);
    vec items = {0};
    if (p->panic && !sync_to_body(p))
        return;
    expect(p, PF_TOK_LBRACE);
    while (!check(p, PF_TOK_RBRACE) && !check(p, PF_TOK_EOF) && !at_top_keyword(p) &&
           !too_many_errors(p)) {
        long start = p->consumed;
        p->lex_errors_seen = p->lx.n_errors;
        PUSH(p, items, pf_item *, pipe_item(p));
        if (p->panic)
            sync_statement(p, start);
    }
    expect(p, PF_TOK_RBRACE);
    if (!first)
        return;
    prog->name = name;
    prog->loc = loc;
    prog->n_inputs = n_in;
    prog->inputs = in;
    prog->n_outputs = n_out;
    prog->outputs = out;
    prog->n_items = items.n;
    prog->items = (pf_item **)items.data;
}

/* ---- top level ---- */

/* param = "param" scalar_type IDENT "=" expr ";" */
static pf_param_decl *param_decl(parser *p)
{
    pf_param_decl *d = PF_NEW(p->arena, pf_param_decl);
    advance(p);
    d->loc = p->tok.loc;
    d->type = scalar_type(p);
    d->name = expect_ident(p, "a param", &d->loc);
    if (!check(p, PF_TOK_ASSIGN) && !p->panic)
        error_at(p, p->tok.loc, "a param needs a default value ('= e')");
    expect(p, PF_TOK_ASSIGN);
    d->init = expr(p);
    expect(p, PF_TOK_SEMI);
    return d;
}

/* "{" expr { "," expr } "}" */
static void init_list(parser *p, pf_const_decl *d)
{
    vec v = {0};
    advance(p);  /* '{' */
    do {
        PUSH(p, v, pf_expr *, expr(p));
    } while (!p->panic && accept(p, PF_TOK_COMMA));
    expect(p, PF_TOK_RBRACE);
    d->n_init = v.n;
    d->init = (pf_expr **)v.data;
}

/* const = "const" scalar_type IDENT [ "[" expr "]" ] "=" ( expr | "{" expr { "," expr } "}" )
 *         ";" */
static pf_const_decl *const_decl(parser *p)
{
    pf_const_decl *d = PF_NEW(p->arena, pf_const_decl);
    advance(p);
    d->loc = p->tok.loc;
    d->type = scalar_type(p);
    d->name = expect_ident(p, "a const", &d->loc);
    if (accept(p, PF_TOK_LBRACKET)) {
        d->len_expr = expr(p);
        expect(p, PF_TOK_RBRACKET);
    }
    if (!check(p, PF_TOK_ASSIGN) && !p->panic)
        error_at(p, p->tok.loc, "a const needs a value ('= e')");
    expect(p, PF_TOK_ASSIGN);
    if (check(p, PF_TOK_LBRACE)) {
        init_list(p, d);
    } else {
        d->n_init = 1;
        d->init = PF_NEW_ARRAY(p->arena, pf_expr *, 1);
        d->init[0] = expr(p);
    }
    expect(p, PF_TOK_SEMI);
    return d;
}

/* function = scalar_type IDENT "(" [ scalar_type IDENT { "," scalar_type IDENT } ")" block */
static pf_func *function(parser *p)
{
    pf_func *f = PF_NEW(p->arena, pf_func);
    f->loc = p->tok.loc;
    f->ret = scalar_type(p);
    f->name = expect_ident(p, "a function", &f->loc);
    if (!check(p, PF_TOK_LPAREN) && !p->panic) {
        error_at(p, p->tok.loc, "a top-level variable must be declared 'param' or 'const' "
                 "(or this is a function and lacks '(')");
        return f;
    }
    advance(p);
    vec names = {0}, types = {0}, locs = {0};
    if (!check(p, PF_TOK_RPAREN)) {
        do {
            PUSH(p, types, pf_type, scalar_type(p));
            pf_loc l;
            PUSH(p, names, const char *, expect_ident(p, "a parameter", &l));
            PUSH(p, locs, pf_loc, l);
        } while (!p->panic && accept(p, PF_TOK_COMMA));
    }
    expect(p, PF_TOK_RPAREN);
    f->n_params = names.n;
    f->param_names = (const char **)names.data;
    f->param_types = (pf_type *)types.data;
    f->param_locs = (pf_loc *)locs.data;
    if (!p->panic || sync_to_body(p))
        f->body = block(p);
    return f;
}

static void add_decl(parser *p, vec *decls, pf_decl_kind kind, int index)
{
    pf_decl_ref r = {kind, index};
    PUSH(p, *decls, pf_decl_ref, r);
}

/* After an error at top level: skip to just after `;` or a closing `}` at brace level 0, or
 * to a top-level keyword. */
static void sync_top(parser *p, long start)
{
    int depth = 0;
    while (!check(p, PF_TOK_EOF) && !ended_statement(p, start)) {
        if (depth == 0 && at_top_keyword(p) && p->consumed != start)
            break;
        if (check(p, PF_TOK_LBRACE))
            depth++;
        bool end = check(p, PF_TOK_RBRACE) ? --depth <= 0 : check(p, PF_TOK_SEMI) && depth == 0;
        advance(p);
        if (end)
            break;
    }
    p->panic = false;
    p->lex_errors_seen = p->lx.n_errors;
}

typedef struct top_vecs {
    vec decls, params, consts, funcs;
} top_vecs;

/* One top-level declaration: param | const | function | pipeline. */
static void top_decl(parser *p, top_vecs *v)
{
    char buf[64];
    if (check(p, PF_TOK_PARAM)) {
        add_decl(p, &v->decls, PF_DECL_PARAM, v->params.n);
        PUSH(p, v->params, pf_param_decl *, param_decl(p));
    } else if (check(p, PF_TOK_CONST)) {
        add_decl(p, &v->decls, PF_DECL_CONST, v->consts.n);
        PUSH(p, v->consts, pf_const_decl *, const_decl(p));
    } else if (is_scalar_type(p->tok.kind)) {
        add_decl(p, &v->decls, PF_DECL_FUNC, v->funcs.n);
        PUSH(p, v->funcs, pf_func *, function(p));
    } else if (check(p, PF_TOK_PIPELINE)) {
        bool first = !p->have_pipeline;
        pipeline(p);
        if (first)
            add_decl(p, &v->decls, PF_DECL_PIPELINE, 0);
    } else {
        error_at(p, p->tok.loc, "expected a declaration (param, const, a function or the "
                 "pipeline), found %s", found(p, buf, sizeof buf));
    }
}

/* program = { param | const | function | pipeline } EOF */
static void program(parser *p)
{
    top_vecs v = {0};
    while (!check(p, PF_TOK_EOF) && !too_many_errors(p)) {
        long start = p->consumed;
        p->lex_errors_seen = p->lx.n_errors;
        top_decl(p, &v);
        if (p->panic)
            sync_top(p, start);
    }
    pf_program *prog = p->prog;
    prog->n_decls = v.decls.n;
    prog->decls = (pf_decl_ref *)v.decls.data;
    prog->n_params = v.params.n;
    prog->params = (pf_param_decl **)v.params.data;
    prog->n_consts = v.consts.n;
    prog->consts = (pf_const_decl **)v.consts.data;
    prog->n_funcs = v.funcs.n;
    prog->funcs = (pf_func **)v.funcs.data;
}

pf_program *pf_parse(const char *file_name, const char *source, size_t len, pf_diags *diags)
{
    if (len > PF_SOURCE_MAX_BYTES) {
        pf_loc l = {1, 1};
        pf_diag_error(diags, l, "source is larger than %zu bytes", PF_SOURCE_MAX_BYTES);
        return NULL;
    }
    pf_program *prog = pf_xcalloc(1, sizeof *prog);
    pf_arena_init(&prog->arena);
    prog->file_name = pf_arena_strdup(&prog->arena, file_name ? file_name : "<input>");
    char *src = pf_arena_alloc(&prog->arena, len + 1);
    if (len)
        memcpy(src, source, len);
    prog->source = src;
    parser p = {0};
    p.prog = prog;
    p.arena = &prog->arena;
    p.diags = diags;
    pf_lexer_init(&p.lx, src, len, diags);
    p.tok = pf_lexer_next(&p.lx);
    program(&p);
    if (p.n_errors + p.lx.n_errors > 0) {
        pf_program_free(prog);
        return NULL;
    }
    return prog;
}
