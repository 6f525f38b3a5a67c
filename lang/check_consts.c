/* Constant and shape expressions (docs/language.md Sections 3 and 4): recognising them,
 * folding constants with the run-time semantics (builtins.h), and finding recursion among
 * helper functions (an iterative depth-first search, so a long call chain cannot overflow the
 * stack). */
#include "lang/check_internal.h"
#include "lang/walk.h"

#include <stdio.h>
#include <string.h>

/* ---- recognising constant and shape expressions ---- */

static const pf_expr *name_nonconst(const pf_expr *e, bool shape, char *why, size_t size)
{
    const pf_symbol *s = e->sym;
    if (!s || s->kind == PF_SYM_CONST)
        return NULL;
    if (shape && (s->kind == PF_SYM_PARAM || s->kind == PF_SYM_SIZE))
        return NULL;
    if (shape && s->kind == PF_SYM_SCALAR && s->shape)
        return NULL;
    if (s->kind == PF_SYM_SCALAR && shape)
        snprintf(why, size, "pipeline scalar '%s' is not a shape expression itself", e->name);
    else
        snprintf(why, size, "'%s' is %s", e->name, pf_sym_kind_phrase(s->kind));
    return e;
}

static const pf_expr *args_nonconst(pf_expr *const *args, int n, bool shape, char *why,
                                    size_t size)
{
    for (int i = 0; i < n; i++) {
        const pf_expr *bad = pf_find_nonconst(args[i], shape, why, size);
        if (bad)
            return bad;
    }
    return NULL;
}

const pf_expr *pf_find_nonconst(const pf_expr *e, bool shape, char *why, size_t size)
{
    if (!e)
        return NULL;
    switch (e->kind) {
    case PF_E_INT: case PF_E_FLOAT: case PF_E_BOOL: case PF_E_INDEX:
        return NULL;  /* an INDEX left unresolved was already reported */
    case PF_E_NAME: return name_nonconst(e, shape, why, size);
    case PF_E_UNARY: case PF_E_CAST: return pf_find_nonconst(e->a, shape, why, size);
    case PF_E_BINARY: {
        pf_expr *ab[2] = {e->a, e->b};
        return args_nonconst(ab, 2, shape, why, size);
    }
    case PF_E_COND: {
        pf_expr *abc[3] = {e->a, e->b, e->c};
        return args_nonconst(abc, 3, shape, why, size);
    }
    case PF_E_BUILTIN:
        if (e->builtin == PF_B_MEDIAN) {
            snprintf(why, size, "'median' reads a local array");
            return e;
        }
        return args_nonconst(e->args, e->n_args, shape, why, size);
    case PF_E_ARRAY_READ:
        if (e->sym && e->sym->kind == PF_SYM_CONST_ARRAY)
            return args_nonconst(e->args, e->n_args, shape, why, size);
        snprintf(why, size, "'%s' is a local array", e->name);
        return e;
    case PF_E_CALL:
        snprintf(why, size, "it calls helper function '%s'", e->name);
        return e;
    case PF_E_REDUCE:
        snprintf(why, size, "it is a reduction");
        return e;
    case PF_E_IMAGE_READ:
        snprintf(why, size, "it reads image '%s'", e->name);
        return e;
    }
    return NULL;
}

bool pf_fold(pf_checker *c, const pf_expr *e, const char *what, pf_value *out)
{
    memset(out, 0, sizeof *out);
    if (!e || e->type == PF_T_ERROR)
        return false;
    char why[300];
    const pf_expr *bad = pf_find_nonconst(e, false, why, sizeof why);
    if (bad) {
        pf_check_error(c, bad->loc, "%s must be a constant expression (%s)", what, why);
        return false;
    }
    if (pf_eval_expr_in(e, NULL, NULL, 0, out) != 0) {
        memset(out, 0, sizeof *out);
        return false;  /* an operand whose checking failed */
    }
    return true;
}

bool pf_check_shape(pf_checker *c, const pf_expr *e, const char *what, bool *is_const,
                    int32_t *value)
{
    *is_const = false;
    *value = 0;
    if (!e || e->type == PF_T_ERROR)
        return false;
    char why[300];
    const pf_expr *bad = pf_find_nonconst(e, true, why, sizeof why);
    if (bad) {
        pf_check_error(c, bad->loc, "%s must be a shape expression of sizes, params and "
                       "consts (%s)", what, why);
        return false;
    }
    pf_value v;
    if (!pf_find_nonconst(e, false, why, sizeof why) &&
        pf_eval_expr_in(e, NULL, NULL, 0, &v) == 0) {
        *is_const = true;
        *value = v.i;
    }
    return true;
}

static int max_depth(pf_checker *c, pf_expr *const *args, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++) {
        int k = pf_shape_depth(c, args[i]);
        if (k > d)
            d = k;
    }
    return d;
}

int pf_shape_depth(pf_checker *c, const pf_expr *e)
{
    if (!e)
        return 0;
    if (e->kind == PF_E_NAME) {
        if (e->sym && e->sym->kind == PF_SYM_SCALAR && e->sym->index < c->scalar_depth.n)
            return PF_CVEC_AT(c->scalar_depth, int, e->sym->index) + 1;
        return 0;
    }
    pf_expr *abc[3] = {e->a, e->b, e->c};
    int d = max_depth(c, abc, 3);
    int k = max_depth(c, e->args, e->n_args);
    return d > k ? d : k;
}

/* ---- recursion among helper functions ---- */

typedef struct call_graph {
    int n;
    int *first;            /* [n + 1]: edges of node i are edges[first[i] .. first[i+1]) */
    pf_call_edge *edges;   /* sorted by caller, in source order within a caller */
} call_graph;

static void build_graph(pf_checker *c, call_graph *g)
{
    g->n = c->prog->n_funcs;
    g->first = PF_NEW_ARRAY(&c->scratch, int, g->n + 2);
    g->edges = PF_NEW_ARRAY(&c->scratch, pf_call_edge, c->calls.n + 1);
    const pf_call_edge *in = (const pf_call_edge *)c->calls.data;
    for (int i = 0; i < c->calls.n; i++)
        g->first[in[i].caller + 1]++;
    for (int i = 0; i < g->n; i++)
        g->first[i + 1] += g->first[i];
    int *fill = PF_NEW_ARRAY(&c->scratch, int, g->n + 1);
    memcpy(fill, g->first, sizeof(int) * (size_t)g->n);
    for (int i = 0; i < c->calls.n; i++)
        g->edges[fill[in[i].caller]++] = in[i];
}

/* "f -> g -> f" from the DFS stack entries from `from` to the top, then back to `from`. */
static void cycle_text(pf_checker *c, const int *stack, int from, int top, char *buf,
                       size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = from; i <= top && len + 1 < size; i++) {
        if (i - from == 6 && top - from > 7) {
            len += (size_t)snprintf(buf + len, size - len, "... -> ");
            i = top - 1;
            continue;
        }
        len += (size_t)snprintf(buf + len, size - len, "%s -> ",
                                c->prog->funcs[stack[i]]->name);
    }
    if (len + 1 < size)
        snprintf(buf + len, size - len, "%s", c->prog->funcs[stack[from]]->name);
}

enum { WHITE, GREY, BLACK };

static void report_cycle(pf_checker *c, const int *stack, const int *pos, int top,
                         const pf_call_edge *e)
{
    char path[400];
    if (e->caller == e->callee) {
        pf_check_error(c, e->loc, "function '%s' calls itself (recursion is not allowed)",
                       c->prog->funcs[e->caller]->name);
        return;
    }
    cycle_text(c, stack, pos[e->callee], top, path, sizeof path);
    pf_check_error(c, e->loc, "recursion is not allowed: %s", path);
}

/* Iterative DFS; a back edge closes a cycle, reported once per calling function. */
static void dfs(pf_checker *c, const call_graph *g, int root, char *color, int *stack,
                int *next, int *pos, bool *reported)
{
    int top = 0;
    stack[0] = root;
    next[0] = g->first[root];
    pos[root] = 0;
    color[root] = GREY;
    while (top >= 0) {
        int u = stack[top];
        if (next[top] == g->first[u + 1]) {
            color[u] = BLACK;
            top--;
            continue;
        }
        const pf_call_edge *e = &g->edges[next[top]++];
        int v = e->callee;
        if (color[v] == GREY && !reported[u]) {
            reported[u] = true;
            report_cycle(c, stack, pos, top, e);
        } else if (color[v] == WHITE) {
            top++;
            stack[top] = v;
            next[top] = g->first[v];
            pos[v] = top;
            color[v] = GREY;
        }
    }
}

void pf_check_recursion(pf_checker *c)
{
    call_graph g;
    build_graph(c, &g);
    int n = g.n;
    char *color = PF_NEW_ARRAY(&c->scratch, char, n + 1);
    int *stack = PF_NEW_ARRAY(&c->scratch, int, n + 1);
    int *next = PF_NEW_ARRAY(&c->scratch, int, n + 1);
    int *pos = PF_NEW_ARRAY(&c->scratch, int, n + 1);
    bool *reported = PF_NEW_ARRAY(&c->scratch, bool, n + 1);
    for (int i = 0; i < n; i++)
        if (color[i] == WHITE)
            dfs(c, &g, i, color, stack, next, pos, reported);
}

/* ---- how much inlining helpers cost (issue 27) ---- */

/* Post-order over the (acyclic) call graph, without recursion: callees before callers. */
static void inline_sizes(pf_checker *c, const call_graph *g, int root, char *done, int *stack,
                         int *next)
{
    int top = 0;
    stack[0] = root;
    next[0] = g->first[root];
    while (top >= 0) {
        int u = stack[top];
        if (next[top] < g->first[u + 1]) {
            int v = g->edges[next[top]++].callee;
            if (!done[v]) {
                stack[++top] = v;
                next[top] = g->first[v];
            }
            continue;
        }
        pf_func *f = c->prog->funcs[u];
        f->inlined_nodes = pf_stmt_nodes(f->body);  /* callees' sizes are known */
        f->call_depth = 1;
        for (int i = g->first[u]; i < g->first[u + 1]; i++) {
            int d = c->prog->funcs[g->edges[i].callee]->call_depth + 1;
            f->call_depth = d > f->call_depth ? d : f->call_depth;
        }
        done[u] = 1;
        top--;
    }
}

static void limit_error(pf_checker *c, pf_loc loc, const char *what, const char *name,
                        int64_t nodes)
{
    pf_check_error(c, loc, "%s '%s' is %lld expressions and statements with its helper calls "
                   "inlined (at most %d: every call copies its function; call helpers less "
                   "often, or pass their results around)", what, name,
                   nodes >= PF_NODES_MAX ? (long long)PF_NODES_MAX : (long long)nodes,
                   PF_MAX_INLINED_NODES);
}

void pf_check_inlining(pf_checker *c)
{
    call_graph g;
    build_graph(c, &g);
    char *done = PF_NEW_ARRAY(&c->scratch, char, g.n + 1);
    int *stack = PF_NEW_ARRAY(&c->scratch, int, g.n + 1);
    int *next = PF_NEW_ARRAY(&c->scratch, int, g.n + 1);
    for (int i = 0; i < g.n; i++)
        if (!done[i])
            inline_sizes(c, &g, i, done, stack, next);
    const pf_program *prog = c->prog;
    int before = c->n_errors;
    for (int i = 0; i < g.n; i++) {  /* only where the limit is passed, not in its callers */
        const pf_func *f = prog->funcs[i];
        bool deep = f->call_depth > PF_MAX_CALL_DEPTH, big = f->inlined_nodes >
                                                             PF_MAX_INLINED_NODES;
        for (int k = g.first[i]; k < g.first[i + 1]; k++) {
            const pf_func *callee = prog->funcs[g.edges[k].callee];
            deep &= callee->call_depth <= PF_MAX_CALL_DEPTH;
            big &= callee->inlined_nodes <= PF_MAX_INLINED_NODES;
        }
        if (deep)
            pf_check_error(c, f->loc, "function '%s' calls helpers %d deep (at most %d: each "
                           "call is inlined into its caller)", f->name, f->call_depth,
                           PF_MAX_CALL_DEPTH);
        else if (big)
            limit_error(c, f->loc, "function", f->name, f->inlined_nodes);
    }
    if (c->n_errors > before)
        return;
    for (int i = 0; i < prog->n_stages; i++) {
        int64_t n = pf_stmt_nodes(prog->stages[i]->body);
        if (n > PF_MAX_INLINED_NODES)
            limit_error(c, prog->stages[i]->loc, "stage", prog->stages[i]->name, n);
    }
    for (int i = 0; i < prog->n_scalars; i++) {
        int64_t n = pf_expr_nodes(prog->scalars[i]->init);
        if (n > PF_MAX_INLINED_NODES)
            limit_error(c, prog->scalars[i]->loc, "pipeline scalar", prog->scalars[i]->name, n);
    }
}
