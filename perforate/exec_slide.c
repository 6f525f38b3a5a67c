/* `P exec at C slide` (docs/schedule.md section 8): the rows of P's image one row of C reads,
 * found on the AST, and the validation of the directive beyond what `at` requires. */
#include "perforate/exec.h"

#include "lang/walk.h"

#include <stdint.h>

/* An integer expression's values for one value of the row variable y: within
 * [coef * y + lo, coef * y + hi]. */
typedef struct aff {
    bool ok;
    int64_t coef, lo, hi;
} aff;

#define SLIDE_MAX_VARS 64
#define SLIDE_BIG (INT64_C(1) << 24)

typedef struct slide_ctx {
    const pf_image_decl *img;  /* P's image */
    const pf_symbol *y;        /* C's row variable */
    int n, n_over;             /* variables in scope; those beyond SLIDE_MAX_VARS */
    const pf_symbol *sym[SLIDE_MAX_VARS];
    aff range[SLIDE_MAX_VARS];
    bool ok;                   /* every read so far at row y + a constant window */
    int reads;
    int64_t lo, hi;            /* the union of the windows */
} slide_ctx;

static aff bad(void)
{
    aff a = { false, 0, 0, 0 };
    return a;
}

static aff make(int64_t coef, int64_t lo, int64_t hi)
{
    if (coef < -SLIDE_BIG || coef > SLIDE_BIG || lo < -SLIDE_BIG || hi > SLIDE_BIG)
        return bad();
    aff a = { true, coef, lo, hi };
    return a;
}

static aff aff_of(const slide_ctx *S, const pf_expr *e);

static aff name_aff(const slide_ctx *S, const pf_symbol *sym)
{
    if (sym == S->y)
        return make(1, 0, 0);
    if (sym->kind == PF_SYM_CONST && sym->type == PF_T_INT)
        return make(0, sym->value.i, sym->value.i);
    for (int i = S->n - 1; i >= 0; i--)
        if (S->sym[i] == sym)
            return S->range[i];
    return bad();  /* x, locals, params, scalars: not a constant offset */
}

static aff binary_aff(const slide_ctx *S, const pf_expr *e)
{
    aff a = aff_of(S, e->a), b = aff_of(S, e->b);
    if (!a.ok || !b.ok)
        return bad();
    switch (e->op) {
    case PF_OP_ADD:
        return make(a.coef + b.coef, a.lo + b.lo, a.hi + b.hi);
    case PF_OP_SUB:
        return make(a.coef - b.coef, a.lo - b.hi, a.hi - b.lo);
    case PF_OP_MUL: {  /* by a constant */
        if (b.coef == 0 && b.lo == b.hi) {
            aff t = a;
            a = b;
            b = t;
        }
        if (a.coef != 0 || a.lo != a.hi)
            return bad();
        int64_t k = a.lo;
        return k >= 0 ? make(k * b.coef, k * b.lo, k * b.hi) : make(k * b.coef, k * b.hi, k * b.lo);
    }
    default:
        return bad();
    }
}

static aff aff_of(const slide_ctx *S, const pf_expr *e)
{
    if (!e || e->type != PF_T_INT)
        return bad();
    switch (e->kind) {
    case PF_E_INT:
        return make(0, e->ival, e->ival);
    case PF_E_NAME:
        return e->sym ? name_aff(S, e->sym) : bad();
    case PF_E_UNARY: {
        aff a = e->op == PF_OP_NEG ? aff_of(S, e->a) : bad();
        return a.ok ? make(-a.coef, -a.hi, -a.lo) : a;
    }
    case PF_E_BINARY:
        return binary_aff(S, e);
    default:
        return bad();
    }
}

/* A reduction or `for` variable ranges over [lo, hi]: known when both bounds have the same
 * coefficient of y (constant bounds, or bounds that move with y). */
static void enter_var(void *ctx, const pf_symbol *sym, const pf_expr *lo, const pf_expr *hi)
{
    slide_ctx *S = ctx;
    if (S->n == SLIDE_MAX_VARS) {
        S->n_over++;
        return;
    }
    aff a = aff_of(S, lo), b = aff_of(S, hi);
    S->sym[S->n] = sym;
    S->range[S->n++] = a.ok && b.ok && a.coef == b.coef ? make(a.coef, a.lo, b.hi) : bad();
}

static void leave_var(void *ctx)
{
    slide_ctx *S = ctx;
    if (S->n_over > 0)
        S->n_over--;
    else
        S->n--;
}

static void visit_read(void *ctx, const pf_expr *e)
{
    slide_ctx *S = ctx;
    if (e->sym->image != S->img || e->n_args < 2)
        return;
    aff a = aff_of(S, e->args[1]);
    if (!a.ok || a.coef != 1 || a.lo > a.hi) {
        S->ok = false;
        return;
    }
    S->lo = S->reads++ ? (a.lo < S->lo ? a.lo : S->lo) : a.lo;
    S->hi = S->reads > 1 ? (a.hi > S->hi ? a.hi : S->hi) : a.hi;
}

int pf_exec_slide_rows(const pf_program *prog, int producer, int consumer, int *lo, int *hi,
                       pf_error *err)
{
    const pf_stage *p = prog->stages[producer], *c = prog->stages[consumer];
    slide_ctx S = { 0 };
    S.img = p->image->image;
    S.y = c->n_vars >= 2 ? c->vars[1] : NULL;
    S.ok = S.y != NULL;
    pf_read_visitor v = { &S, enter_var, leave_var, visit_read };
    pf_visit_reads_stmt(c->body, &v);
    if (!S.ok || S.reads == 0)
        return pf_fail(err, "%s: 'at %s slide' needs every read of %s in %s at row %s + a "
                       "constant (constants and reduction variables with constant bounds), so "
                       "that the rows one row of %s reads form a window of constant height "
                       "that only moves forward", p->name, c->name, S.img->name, c->name,
                       S.y ? S.y->name : "y", c->name);
    if (S.hi - S.lo + 1 > PF_EXEC_MAX_SLIDE)
        return pf_fail(err, "%s: 'at %s slide' would keep %lld rows of %s (at most %d)", p->name,
                       c->name, (long long)(S.hi - S.lo + 1), S.img->name, PF_EXEC_MAX_SLIDE);
    *lo = (int)S.lo;
    *hi = (int)S.hi;
    return 0;
}

int pf_exec_validate_slide(const pf_program *prog, int stage, const pf_exec_gene *g,
                           const pf_approx_gene *approx, const pf_exec_gene *consumer,
                           pf_error *err)
{
    const pf_stage *st = prog->stages[stage];
    if (g->at < 0)
        return pf_fail(err, "%s: 'slide' needs 'at STAGE' ('exec at CONSUMER slide')", st->name);
    const char *cn = prog->stages[g->at]->name;
    if (!consumer || !consumer->set || consumer->tile[1] <= 0)
        return pf_fail(err, "%s: 'at %s slide' needs %s tiled in two dimensions, so that its "
                       "row loop runs serially and in order inside each tile%s (e.g. '%s exec "
                       "tile 256 64')", st->name, cn, cn,
                       consumer && consumer->parallel
                           ? "; untiled and parallel, its row loop is the parallel loop" : "",
                       cn);
    int px = -1, py = -1;  /* positions of x and y in the consumer's reorder, innermost first */
    for (int i = 0; i < consumer->n_order; i++) {
        px = consumer->order[i] == 0 ? i : px;
        py = consumer->order[i] == 1 ? i : py;
    }
    if (px > py)
        return pf_fail(err, "%s: 'at %s slide' needs %s's x loop inside its row loop (its "
                       "reorder puts x outside y: each row of the window must be computed "
                       "across the tile before the next)", st->name, cn, cn);
    if (approx && approx->kind != PF_GENE_EXACT)
        return pf_fail(err, "%s: 'at %s slide' needs %s exact (an approximated or on-demand "
                       "producer has no rows to slide)", st->name, cn, st->name);
    const pf_image_decl *img = st->image->image;
    if (img->boundary == PF_BOUNDARY_MIRROR || img->boundary == PF_BOUNDARY_WRAP)
        return pf_fail(err, "%s: 'at %s slide' needs %s's boundary clamp or constant (a %s read "
                       "beyond the edge can land on a row the window no longer holds)",
                       st->name, cn, img->name,
                       img->boundary == PF_BOUNDARY_MIRROR ? "mirror" : "wrap");
    int lo, hi;
    return pf_exec_slide_rows(prog, stage, g->at, &lo, &hi, err);
}
