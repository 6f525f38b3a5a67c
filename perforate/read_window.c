/* Windows of read indices (read_window.h): interval arithmetic on coef * v + [lo, hi], with the
 * scoped variables' windows kept on a stack while the body is walked. */
#include "perforate/read_window.h"

#include "lang/lang.h"
#include "lang/walk.h"

#define MAX_VARS 64
#define BIG (INT64_C(1) << 24)

struct pf_window_scope {
    const pf_image_decl *img;
    const pf_symbol *v;
    int n, n_over;  /* variables in scope; those beyond MAX_VARS (unbounded) */
    const pf_symbol *sym[MAX_VARS];
    pf_window range[MAX_VARS];
    pf_window_fn fn;
    void *ctx;
};

typedef pf_window_scope walk;

static pf_window bad(void)
{
    pf_window w = { false, 0, 0, 0 };
    return w;
}

static pf_window make(int64_t coef, int64_t lo, int64_t hi)
{
    if (coef < -BIG || coef > BIG || lo < -BIG || hi > BIG)
        return bad();
    pf_window w = { true, coef, lo, hi };
    return w;
}

static pf_window window_of(const walk *W, const pf_expr *e);

/* A constant known before the program runs (the language's constant expressions). */
static bool constant(const pf_expr *e, int64_t *c)
{
    pf_value x;
    if (pf_eval_const_expr(e, NULL, NULL, &x) != 0)
        return false;
    *c = x.i;
    return true;
}

static pf_window name_window(const walk *W, const pf_symbol *sym)
{
    if (sym == W->v)
        return make(1, 0, 0);
    for (int i = W->n - 1; i >= 0; i--)
        if (W->sym[i] == sym)
            return W->range[i];
    return bad();  /* another stage variable, a local, a param, a scalar */
}

static pf_window product(pf_window a, pf_window b)
{
    if (b.coef == 0 && b.lo == b.hi) {  /* the constant first */
        pf_window t = a;
        a = b;
        b = t;
    }
    if (a.coef != 0 || a.lo != a.hi)
        return bad();
    int64_t k = a.lo;
    return k >= 0 ? make(k * b.coef, k * b.lo, k * b.hi) : make(k * b.coef, k * b.hi, k * b.lo);
}

static pf_window binary_window(const walk *W, const pf_expr *e)
{
    pf_window a = window_of(W, e->a), b = window_of(W, e->b);
    if (!a.ok || !b.ok)
        return bad();
    switch (e->op) {
    case PF_OP_ADD: return make(a.coef + b.coef, a.lo + b.lo, a.hi + b.hi);
    case PF_OP_SUB: return make(a.coef - b.coef, a.lo - b.hi, a.hi - b.lo);
    case PF_OP_MUL: return product(a, b);
    default: return bad();
    }
}

static pf_window window_of(const walk *W, const pf_expr *e)
{
    int64_t c;
    if (!e || e->type != PF_T_INT)
        return bad();
    if (constant(e, &c))
        return make(0, c, c);
    switch (e->kind) {
    case PF_E_NAME:
        return e->sym ? name_window(W, e->sym) : bad();
    case PF_E_UNARY: {
        pf_window a = e->op == PF_OP_NEG ? window_of(W, e->a) : bad();
        return a.ok ? make(-a.coef, -a.hi, -a.lo) : a;
    }
    case PF_E_BINARY:
        return binary_window(W, e);
    default:
        return bad();
    }
}

/* A reduction or `for` variable over [lo, hi]: known when both bounds have the same coef
 * (constant bounds, or bounds that move with v). */
static void enter_var(void *ctx, const pf_symbol *sym, const pf_expr *lo, const pf_expr *hi)
{
    walk *W = ctx;
    if (W->n == MAX_VARS) {
        W->n_over++;
        return;
    }
    pf_window a = window_of(W, lo), b = window_of(W, hi);
    W->sym[W->n] = sym;
    W->range[W->n++] = a.ok && b.ok && a.coef == b.coef ? make(a.coef, a.lo, b.hi) : bad();
}

static void leave_var(void *ctx)
{
    walk *W = ctx;
    if (W->n_over > 0)
        W->n_over--;
    else
        W->n--;
}

static void visit_read(void *ctx, const pf_expr *e)
{
    walk *W = ctx;
    if (e->sym->image == W->img)
        W->fn(W->ctx, e, W);
}

pf_window pf_window_of(const pf_window_scope *scope, const pf_expr *e)
{
    return window_of(scope, e);
}

void pf_read_windows(const pf_stage *st, const pf_image_decl *img, const pf_symbol *v,
                     pf_window_fn fn, void *ctx)
{
    walk W = { .img = img, .v = v, .fn = fn, .ctx = ctx };
    pf_read_visitor rv = { &W, enter_var, leave_var, visit_read };
    pf_visit_reads_stmt(st->body, &rv);
}
