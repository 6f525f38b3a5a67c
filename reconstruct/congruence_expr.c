/* The integer expressions, variable facts and constant interpolation weights of congruence
 * simplification: everything in reconstruct/congruence.h that does not need Z3. */
#include "reconstruct/congruence.h"

#include "base/error.h"

#include <inttypes.h>

/* ---- constructors ---- */

static pf_cexpr *new_node(pf_arena *a, pf_cexpr_kind kind)
{
    pf_cexpr *e = PF_NEW(a, pf_cexpr);
    e->kind = kind;
    return e;
}

pf_cexpr *pf_ce_const(pf_arena *a, int64_t value)
{
    pf_cexpr *e = new_node(a, PF_CE_CONST);
    e->value = value;
    return e;
}

pf_cexpr *pf_ce_var(pf_arena *a, int var)
{
    PF_ASSERT(var >= 0);
    pf_cexpr *e = new_node(a, PF_CE_VAR);
    e->var = var;
    return e;
}

pf_cexpr *pf_ce_opaque(pf_arena *a)
{
    return new_node(a, PF_CE_OPAQUE);
}

pf_cexpr *pf_ce_neg(pf_arena *a, const pf_cexpr *x)
{
    pf_cexpr *e = new_node(a, PF_CE_NEG);
    e->a = x;
    return e;
}

pf_cexpr *pf_ce_bin(pf_arena *a, pf_cexpr_kind kind, const pf_cexpr *x, const pf_cexpr *y)
{
    PF_ASSERT(kind >= PF_CE_ADD && kind <= PF_CE_MAX && x && y);
    pf_cexpr *e = new_node(a, kind);
    e->a = x;
    e->b = y;
    return e;
}

pf_cexpr *pf_ce_add(pf_arena *a, const pf_cexpr *x, const pf_cexpr *y)
{
    return pf_ce_bin(a, PF_CE_ADD, x, y);
}

pf_cexpr *pf_ce_sub(pf_arena *a, const pf_cexpr *x, const pf_cexpr *y)
{
    return pf_ce_bin(a, PF_CE_SUB, x, y);
}

pf_cexpr *pf_ce_mul(pf_arena *a, const pf_cexpr *x, const pf_cexpr *y)
{
    return pf_ce_bin(a, PF_CE_MUL, x, y);
}

pf_cexpr *pf_ce_addc(pf_arena *a, const pf_cexpr *x, int64_t c)
{
    return pf_ce_add(a, x, pf_ce_const(a, c));
}

/* ---- printing ---- */

/* ORDER pf_cexpr_kind: infix operators, or NULL for the call-like forms. */
static const char *const infix_op[] = {
    [PF_CE_ADD] = "+", [PF_CE_SUB] = "-", [PF_CE_MUL] = "*", [PF_CE_DIV] = "/", [PF_CE_MOD] = "%",
};

void pf_cexpr_print(pf_strbuf *sb, const pf_cexpr *e, const char *const *names, int nnames)
{
    switch (e->kind) {
    case PF_CE_CONST:
        pf_sb_printf(sb, "%" PRId64, e->value);
        return;
    case PF_CE_VAR:
        if (names && e->var < nnames && names[e->var])
            pf_sb_puts(sb, names[e->var]);
        else
            pf_sb_printf(sb, "v%d", e->var);
        return;
    case PF_CE_OPAQUE:
        pf_sb_putc(sb, '?');
        return;
    case PF_CE_NEG:
        pf_sb_puts(sb, "-(");
        pf_cexpr_print(sb, e->a, names, nnames);
        pf_sb_putc(sb, ')');
        return;
    case PF_CE_MIN:
    case PF_CE_MAX:
        pf_sb_puts(sb, e->kind == PF_CE_MIN ? "min(" : "max(");
        pf_cexpr_print(sb, e->a, names, nnames);
        pf_sb_puts(sb, ", ");
        pf_cexpr_print(sb, e->b, names, nnames);
        pf_sb_putc(sb, ')');
        return;
    default:
        pf_sb_putc(sb, '(');
        pf_cexpr_print(sb, e->a, names, nnames);
        pf_sb_printf(sb, " %s ", infix_op[e->kind]);
        pf_cexpr_print(sb, e->b, names, nnames);
        pf_sb_putc(sb, ')');
        return;
    }
}

/* ---- evaluation ---- */

/* C semantics in int64; every failure (overflow, division by zero) makes the result unknown. */
static int eval_bin(pf_cexpr_kind kind, int64_t x, int64_t y, int64_t *out)
{
    switch (kind) {
    case PF_CE_ADD: return __builtin_add_overflow(x, y, out) ? -1 : 0;
    case PF_CE_SUB: return __builtin_sub_overflow(x, y, out) ? -1 : 0;
    case PF_CE_MUL: return __builtin_mul_overflow(x, y, out) ? -1 : 0;
    case PF_CE_MIN: *out = x < y ? x : y; return 0;
    case PF_CE_MAX: *out = x > y ? x : y; return 0;
    default: break;
    }
    if (y == 0 || (x == INT64_MIN && y == -1))
        return -1;
    *out = kind == PF_CE_DIV ? x / y : x % y;
    return 0;
}

int pf_cexpr_eval(const pf_cexpr *e, const int64_t *vals, int nvals, int64_t *out)
{
    int64_t x, y;
    switch (e->kind) {
    case PF_CE_CONST:
        *out = e->value;
        return 0;
    case PF_CE_VAR:
        if (e->var >= nvals)
            return -1;
        *out = vals[e->var];
        return 0;
    case PF_CE_OPAQUE:
        return -1;
    case PF_CE_NEG:
        if (pf_cexpr_eval(e->a, vals, nvals, &x) < 0 || x == INT64_MIN)
            return -1;
        *out = -x;
        return 0;
    default:
        if (pf_cexpr_eval(e->a, vals, nvals, &x) < 0 || pf_cexpr_eval(e->b, vals, nvals, &y) < 0)
            return -1;
        return eval_bin(e->kind, x, y, out);
    }
}

/* ---- facts ---- */

pf_cfact pf_cfact_any(void)
{
    return (pf_cfact){ .modulus = 1 };
}

pf_cfact pf_cfact_mod(int64_t residue, int64_t modulus)
{
    return (pf_cfact){ .modulus = modulus, .residue = residue };
}

pf_cfact pf_cfact_loop(int64_t start, int64_t step, bool has_end, int64_t end)
{
    PF_ASSERT(step >= 1);
    return (pf_cfact){ .modulus = step, .residue = start, .has_lo = true, .lo = start,
                       .has_hi = has_end, .hi = end - 1 };
}

/* ---- constant interpolation weights ---- */

pf_interp_1d pf_interp_constant_1d(int64_t residue, int64_t spacing, int64_t origin)
{
    PF_ASSERT(spacing >= 1);
    int64_t r = residue % spacing;
    if (r < 0)
        r += spacing;
    pf_interp_1d w = { .ntaps = r == 0 ? 1 : 2, .shift = origin + r, .spacing = spacing };
    /* The sample r/s of the way from base to base + 1: the tent filter of linear interpolation. */
    w.weight[1] = (double)r / (double)spacing;
    w.weight[0] = 1.0 - w.weight[1];
    return w;
}

const pf_cexpr *pf_interp_base_index(pf_arena *a, const pf_cexpr *e, const pf_interp_1d *w)
{
    const pf_cexpr *x = w->shift ? pf_ce_addc(a, e, -w->shift) : e;
    if (w->spacing == 1)
        return x;
    return pf_ce_bin(a, PF_CE_DIV, x, pf_ce_const(a, w->spacing));
}

int pf_interp_constant_nd(const pf_interp_1d *dims, int ndims,
                          pf_interp_tap taps[1 << PF_INTERP_MAX_DIMS])
{
    PF_ASSERT(ndims >= 0 && ndims <= PF_INTERP_MAX_DIMS);
    int n = 1;
    taps[0] = (pf_interp_tap){ .weight = 1.0 };
    for (int d = 0; d < ndims; d++) {
        /* The taps so far take step 0 in d; a 2-tap dimension appends their step-1 copies. */
        for (int t = 0; t < n; t++) {
            if (dims[d].ntaps == 2) {
                taps[n + t] = taps[t];
                taps[n + t].step[d] = 1;
                taps[n + t].weight *= dims[d].weight[1];
            }
            taps[t].weight *= dims[d].weight[0];
        }
        n *= dims[d].ntaps;
    }
    return n;
}
