/* The split plan (see split.h): which pieces of a function compile in which module. */
#include "codegen/split.h"

#include "base/arena.h"

#include <stdlib.h>
#include <string.h>

/* Parallel loops below this share of the whole stay with the code around them: a module of
 * their own buys no balance. */
#define MIN_SHARE (1.0 / 64)

/* ---- estimated compile cost: IR nodes, with vector bodies counted thrice (the vector loop
 * and its scalar tail are both emitted, and vector code expands) ---- */

static double expr_cost(const ir_expr *e, int *budget)
{
    if (!e || --*budget < 0)  /* subtrees may be shared: bounded, not exponential */
        return 0;
    double c = e->kind == IR_INTERP ? 16 : 1;
    c += expr_cost(e->a, budget) + expr_cost(e->b, budget) + expr_cost(e->c, budget);
    for (int i = 0; i < e->n_args; i++)
        c += expr_cost(e->args[i], budget);
    return c;
}

static double stmt_cost(const ir_stmt *s, int *budget)
{
    if (!s)
        return 0;
    double c = 1 + expr_cost(s->value, budget) + expr_cost(s->index, budget)
             + expr_cost(s->lo, budget) + expr_cost(s->hi, budget) + expr_cost(s->cond, budget);
    for (int i = 0; i < s->n && (s->kind == IR_S_STORE || s->kind == IR_S_RTCALL); i++)
        c += expr_cost(s->kind == IR_S_STORE ? s->idx[i] : s->args[i], budget);
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        c += stmt_cost(s->body[i], budget);
    if (s->kind == IR_S_BLOCK)
        return c;
    double body = stmt_cost(s->then_s, budget);
    if (s->kind == IR_S_FOR && s->loop_kind == IR_LOOP_VECTORIZED && s->width > 1)
        body *= 3;
    else if (s->kind == IR_S_FOR && s->unroll > 1)
        body *= s->unroll;
    return c + body + stmt_cost(s->else_s, budget);
}

double pf_split_stmt_cost(const ir_stmt *s)
{
    int budget = 1 << 22;
    return stmt_cost(s, &budget);
}

/* ---- collecting the candidate pieces ---- */

typedef struct collect {
    pf_piece *p;
    int n, cap;
} collect;

static int add_piece(collect *c, const ir_stmt *s, int parent)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->p = pf_xrealloc(c->p, sizeof *c->p * (size_t)c->cap);
    }
    c->p[c->n] = (pf_piece){ s, parent, 0, pf_split_stmt_cost(s) };  /* cost: the whole, for now */
    return c->n++;
}

/* Every parallel loop in s, with the piece of the parallel loop around it (a parallel loop
 * inside another's task: its own task function, as in a one-module compile). */
static void walk(collect *c, const ir_stmt *s, int parent)
{
    if (!s)
        return;
    if (s->kind == IR_S_BLOCK) {
        for (int i = 0; i < s->n; i++)
            walk(c, s->body[i], parent);
        return;
    }
    if (s->kind == IR_S_FOR && s->loop_kind == IR_LOOP_PARALLEL)
        parent = add_piece(c, s, parent);
    if (s->kind == IR_S_FOR || s->kind == IR_S_IF || s->kind == IR_S_ALLOC) {
        walk(c, s->then_s, parent);
        walk(c, s->else_s, parent);
    }
}

/* ---- dealing pieces out to modules ---- */

/* Keeps the pieces worth a function (an ancestor costs at least as much as its descendants,
 * so every kept piece's ancestors are kept) and turns whole costs into own costs. */
static void keep_large(pf_split *p, collect *c)
{
    int *new_index = pf_xmalloc(sizeof *new_index * (size_t)(c->n + 1));
    p->piece = pf_xcalloc((size_t)c->n + 1, sizeof *p->piece);
    for (int i = 0; i < c->n; i++) {
        new_index[i] = -1;
        if (c->p[i].cost < p->total * MIN_SHARE)
            continue;
        pf_piece q = c->p[i];
        q.parent = q.parent < 0 ? -1 : new_index[q.parent];
        new_index[i] = p->n_pieces;
        p->piece[p->n_pieces++] = q;
    }
    p->load[0] = p->total;  /* the function's own code */
    for (int i = 0; i < p->n_pieces; i++) {
        int up = p->piece[i].parent;
        if (up >= 0)
            p->piece[up].cost -= p->piece[i].cost;
        else
            p->load[0] -= p->piece[i].cost;
    }
    free(new_index);
}

static int by_cost_desc(const void *a, const void *b)
{
    double x = (*(pf_piece *const *)a)->cost, y = (*(pf_piece *const *)b)->cost;
    return (x < y) - (x > y);
}

/* A split that leaves one module with more than this share of the whole is not worth its
 * threads. */
#define MAX_SHARE 0.8

pf_split *pf_split_candidates(const ir_func *f)
{
    pf_split *p = pf_xcalloc(1, sizeof *p);
    p->total = pf_split_stmt_cost(f->body);
    collect c = { 0 };
    walk(&c, f->body, -1);
    keep_large(p, &c);
    free(c.p);
    for (int i = 0; i < p->n_pieces; i++)
        p->piece[i].module = i + 1;
    p->n_modules = p->n_pieces + 1;
    return p;
}

/* Longest piece first onto the least loaded module; then the modules that got something are
 * renumbered 0.. (module 0 keeps the function itself). */
void pf_split_deal(pf_split *p, int max_modules)
{
    int k = max_modules < 1 ? 1 : max_modules > PF_SPLIT_MAX_MODULES ? PF_SPLIT_MAX_MODULES
                                                                     : max_modules;
    double load[PF_SPLIT_MAX_MODULES] = { p->load[0] };
    p->total = p->load[0];
    for (int i = 0; i < p->n_pieces; i++)
        p->total += p->piece[i].cost;
    pf_piece **order = pf_xmalloc(sizeof *order * (size_t)(p->n_pieces + 1));
    for (int i = 0; i < p->n_pieces; i++)
        order[i] = &p->piece[i];
    qsort(order, (size_t)p->n_pieces, sizeof *order, by_cost_desc);
    for (int i = 0; i < p->n_pieces; i++) {
        int best = 0;
        for (int m = 1; m < k; m++)
            if (load[m] < load[best])
                best = m;
        order[i]->module = best;
        load[best] += order[i]->cost;
    }
    free(order);
    int renumber[PF_SPLIT_MAX_MODULES], n = 0;
    double most = 0;
    for (int m = 0; m < k; m++) {
        renumber[m] = m == 0 || load[m] > 0 ? n++ : -1;
        most = load[m] > most ? load[m] : most;
    }
    bool worth = n > 1 && most <= MAX_SHARE * p->total;
    for (int i = 0; i < p->n_pieces; i++)
        p->piece[i].module = worth ? renumber[p->piece[i].module] : 0;
    memset(p->load, 0, sizeof p->load);
    for (int m = 0; m < k; m++)
        if (renumber[m] >= 0)
            p->load[worth ? renumber[m] : 0] += load[m];
    p->n_modules = worth ? n : 1;
}

pf_split *pf_split_plan(const ir_func *f, int max_modules)
{
    pf_split *p = pf_split_candidates(f);
    pf_split_deal(p, max_modules);
    return p;
}

void pf_split_free(pf_split *p)
{
    if (!p)
        return;
    free(p->piece);
    free(p);
}

const pf_piece *pf_split_elsewhere(const pf_split *p, const ir_stmt *s)
{
    if (!p || p->n_modules < 2)
        return NULL;
    for (int i = 0; i < p->n_pieces; i++) {
        const pf_piece *q = &p->piece[i];
        if (q->s != s)
            continue;
        int around = q->parent < 0 ? 0 : p->piece[q->parent].module;
        return q->module != around ? q : NULL;
    }
    return NULL;
}

int pf_split_index(const pf_split *p, const pf_piece *piece)
{
    return (int)(piece - p->piece);
}
