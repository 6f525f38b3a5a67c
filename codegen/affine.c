/* Affine forms and symbolic ranges (see affine.h). */
#include "codegen/affine.h"

#include "base/arena.h"
#include "codegen/ir_simplify.h"

#include <stdlib.h>
#include <string.h>

void aff_env_init(aff_env *env, int n_vars)
{
    env->n_vars = n_vars;
    env->let_value = pf_xcalloc((size_t)n_vars + 1, sizeof *env->let_value);
    env->lo = pf_xcalloc((size_t)n_vars + 1, sizeof *env->lo);
    env->hi = pf_xcalloc((size_t)n_vars + 1, sizeof *env->hi);
}

void aff_env_reserve(aff_env *env, int n_vars)
{
    if (n_vars <= env->n_vars)
        return;
    int n = n_vars * 2;
    env->let_value = pf_xrealloc(env->let_value, sizeof *env->let_value * (size_t)n);
    env->lo = pf_xrealloc(env->lo, sizeof *env->lo * (size_t)n);
    env->hi = pf_xrealloc(env->hi, sizeof *env->hi * (size_t)n);
    for (int i = env->n_vars; i < n; i++) {
        env->let_value[i] = NULL;
        env->lo[i] = env->hi[i] = NULL;
    }
    env->n_vars = n;
}

void aff_env_free(aff_env *env)
{
    free(env->let_value);
    free(env->lo);
    free(env->hi);
}

void aff_env_record_lets(aff_env *env, const ir_stmt *s)
{
    if (!s)
        return;
    if (s->kind == IR_S_LET && s->var->id < env->n_vars)
        env->let_value[s->var->id] = s->value;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        aff_env_record_lets(env, s->body[i]);
    aff_env_record_lets(env, s->then_s);
    aff_env_record_lets(env, s->else_s);
}

aff aff_const(int64_t c)
{
    aff a = { 0 };
    a.ok = true;
    a.c = c;
    return a;
}

aff aff_var(const ir_var *v)
{
    aff a = aff_const(0);
    a.n = 1;
    a.v[0] = v;
    a.k[0] = 1;
    return a;
}

static aff bad(void)
{
    aff a = { 0 };
    return a;
}

aff aff_add(aff a, aff b)
{
    if (!a.ok || !b.ok)
        return bad();
    aff r = aff_const(a.c + b.c);
    int i = 0, j = 0;
    while (i < a.n || j < b.n) {
        const ir_var *v;
        int64_t k;
        if (j >= b.n || (i < a.n && a.v[i]->id < b.v[j]->id)) {
            v = a.v[i];
            k = a.k[i++];
        } else if (i >= a.n || b.v[j]->id < a.v[i]->id) {
            v = b.v[j];
            k = b.k[j++];
        } else {
            v = a.v[i];
            k = a.k[i++] + b.k[j++];
        }
        if (k == 0)
            continue;
        if (r.n == AFF_MAX_TERMS)
            return bad();
        r.v[r.n] = v;
        r.k[r.n++] = k;
    }
    return r;
}

aff aff_scale(aff a, int64_t k)
{
    if (!a.ok)
        return a;
    if (k == 0)
        return aff_const(0);
    a.c *= k;
    for (int i = 0; i < a.n; i++)
        a.k[i] *= k;
    return a;
}

aff aff_sub(aff a, aff b)
{
    return aff_add(a, aff_scale(b, -1));
}

static aff of_bin(const aff_env *env, const ir_expr *e)
{
    aff a = aff_of(env, e->a), b = aff_of(env, e->b);
    switch (e->op) {
    case IR_ADD: return aff_add(a, b);
    case IR_SUB: return aff_sub(a, b);
    case IR_MUL:
        if (a.ok && a.n == 0)
            return aff_scale(b, a.c);
        if (b.ok && b.n == 0)
            return aff_scale(a, b.c);
        return bad();
    case IR_MIN:
    case IR_MAX: {
        /* min(W - 8, W) is W - 8: comparable operands make a min or max affine */
        int ge = (a.ok && b.ok) ? aff_ge(&a, &b) : -1;
        if (ge < 0)
            return bad();
        return (ge == 1) == (e->op == IR_MAX) ? a : b;
    }
    default:
        return bad();
    }
}

aff aff_of(const aff_env *env, const ir_expr *e)
{
    if (e->type != IR_I32 && e->type != IR_I64)
        return bad();
    switch (e->kind) {
    case IR_CONST:
        return aff_const(e->ival);
    case IR_VARREF:
        if (e->var->kind == IR_VAR_LET && e->var->id < env->n_vars &&
            env->let_value[e->var->id]) {
            aff x = aff_of(env, env->let_value[e->var->id]);
            if (x.ok)
                return x;
        }
        return e->var->kind == IR_VAR_MUT ? bad() : aff_var(e->var);
    case IR_BIN:
        return of_bin(env, e);
    case IR_UN:
        return e->op == IR_NEG ? aff_scale(aff_of(env, e->a), -1) : bad();
    case IR_CAST:
        return (e->a->type == IR_I32 || e->a->type == IR_I64) ? aff_of(env, e->a) : bad();
    default:
        return bad();
    }
}

/* Terms of a in loop variables (those with a range in env): a bound without them is the one
 * that still holds for every iteration of the loops around (W rather than xo + 128). */
static int loop_terms(const aff_env *env, const aff *a)
{
    int n = 0;
    for (int i = 0; i < a->n; i++)
        n += a->v[i]->id < env->n_vars && env->lo[a->v[i]->id] != NULL;
    return n;
}

aff aff_bound(const aff_env *env, const ir_expr *e, bool lower)
{
    aff a = aff_of(env, e);
    if (a.ok || (e->type != IR_I32 && e->type != IR_I64))
        return a;
    if (e->kind == IR_VARREF && e->var->kind == IR_VAR_LET && e->var->id < env->n_vars &&
        env->let_value[e->var->id])
        return aff_bound(env, env->let_value[e->var->id], lower);
    if (e->kind != IR_BIN)
        return bad();
    if ((lower && e->op == IR_MAX) || (!lower && e->op == IR_MIN)) {
        aff x = aff_bound(env, e->a, lower), y = aff_bound(env, e->b, lower);
        if (x.ok && y.ok) {
            int lx = loop_terms(env, &x), ly = loop_terms(env, &y);
            return lx != ly ? (lx < ly ? x : y) : x.n <= y.n ? x : y;
        }
        return x.ok ? x : y;
    }
    if (e->op == IR_ADD)
        return aff_add(aff_bound(env, e->a, lower), aff_bound(env, e->b, lower));
    if (e->op == IR_SUB)
        return aff_sub(aff_bound(env, e->a, lower), aff_bound(env, e->b, !lower));
    return bad();
}

bool aff_mentions(const aff *a, const ir_var *v)
{
    return aff_coef(a, v) != 0;
}

int64_t aff_coef(const aff *a, const ir_var *v)
{
    for (int i = 0; i < a->n; i++)
        if (a->v[i] == v)
            return a->k[i];
    return 0;
}

aff aff_drop(aff a, const ir_var *v)
{
    int k = 0;
    for (int i = 0; i < a.n; i++)
        if (a.v[i] != v) {
            a.v[k] = a.v[i];
            a.k[k++] = a.k[i];
        }
    a.n = k;
    return a;
}

/* Substitutes loop variables by their ranges, innermost first, until only atoms remain. A
 * loop bound may mention outer loop variables, hence the repetition. */
bool aff_range(const aff_env *env, const aff *a, aff *min, aff *max)
{
    if (!a->ok)
        return false;
    *min = *a;
    *max = *a;
    for (int round = 0; round < 8; round++) {
        bool changed = false;
        for (int side = 0; side < 2; side++) {
            aff *x = side ? max : min;
            for (int i = 0; i < x->n; i++) {
                const ir_var *v = x->v[i];
                if (v->kind != IR_VAR_LOOP)
                    continue;
                if (!env->lo[v->id] || !env->hi[v->id])
                    return false;
                int64_t k = x->k[i];
                const aff *bound = ((k > 0) == (side == 1)) ? env->hi[v->id] : env->lo[v->id];
                *x = aff_add(aff_drop(*x, v), aff_scale(*bound, k));
                if (!x->ok)
                    return false;
                changed = true;
                break;
            }
        }
        if (!changed)
            return true;
    }
    return false;
}

int aff_ge(const aff *a, const aff *b)
{
    aff d = aff_sub(*a, *b);
    if (!d.ok)
        return -1;
    if (d.n == 0)
        return d.c >= 0;
    /* Terms in positive variables (each >= 1) bound d on one side when their signs agree:
     * W - 1 >= 0 because W >= 1. */
    int64_t sum = 0;
    int sign = 0;
    for (int i = 0; i < d.n; i++) {
        int s = d.k[i] > 0 ? 1 : -1;
        if (!d.v[i]->positive || (sign && s != sign))
            return -1;
        sign = s;
        sum += d.k[i];
    }
    if (sign > 0 && d.c + sum >= 0)
        return 1;   /* d >= c + sum >= 0 */
    if (sign < 0 && d.c + sum < 0)
        return 0;   /* d <= c + sum < 0 */
    return -1;
}

bool aff_prove_between(const aff_env *env, const ir_expr *e, const aff *lo, const aff *hi)
{
    aff a = aff_of(env, e), mn, mx;
    if (!aff_range(env, &a, &mn, &mx))
        return false;
    return aff_ge(&mn, lo) == 1 && aff_ge(hi, &mx) == 1;
}

ir_expr *aff_to_expr(ir_func *f, const aff *a)
{
    ir_expr *e = ir_const_i32(f, (int32_t)a->c);
    for (int i = 0; i < a->n; i++) {
        ir_expr *t = ir_ref(f, (ir_var *)a->v[i]);
        if (a->v[i]->type == IR_I64)
            t = ir_cast(f, IR_I32, t);
        t = irf_bin(f, IR_MUL, t, ir_const_i32(f, (int32_t)a->k[i]));
        e = irf_bin(f, IR_ADD, t, e);
    }
    return e;
}
