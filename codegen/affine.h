/* Affine forms over IR variables (c + k1*v1 + ... + kn*vn) and symbolic intervals built from
 * them: the arithmetic that bounds inference, boundary-check removal and loop partitioning
 * reason with. Lets whose values are affine are expanded, so `W` and `in_extent0` compare
 * equal when one is defined as the other. */
#ifndef PF_CODEGEN_AFFINE_H
#define PF_CODEGEN_AFFINE_H

#include "codegen/ir.h"

#define AFF_MAX_TERMS 8

typedef struct aff {
    bool ok;                 /* false: not affine (or too many terms) */
    int64_t c;
    int n;
    const ir_var *v[AFF_MAX_TERMS];  /* sorted by var id */
    int64_t k[AFF_MAX_TERMS];        /* non-zero */
} aff;

/* Definitions of let variables, for expanding them (by var id; NULL = an atom). */
typedef struct aff_env {
    int n_vars;
    const ir_expr **let_value;
    /* Loop variable ranges, inclusive, by var id (NULL when unknown). */
    aff **lo, **hi;
} aff_env;

void aff_env_init(aff_env *env, int n_vars);
void aff_env_free(aff_env *env);  /* range entries are owned by the caller (e.g. an arena) */
void aff_env_reserve(aff_env *env, int n_vars);
void aff_env_record_lets(aff_env *env, const ir_stmt *s);  /* every let in s, recursively */

aff aff_const(int64_t c);
aff aff_var(const ir_var *v);
aff aff_add(aff a, aff b);
aff aff_scale(aff a, int64_t k);
aff aff_sub(aff a, aff b);
/* The affine form of an i32 expression (expanding lets), or !ok. */
aff aff_of(const aff_env *env, const ir_expr *e);
/* An affine lower (lower = true) or upper bound of e: aff_of(e) when e is affine; else through
 * a max (min) by one of its operands, which bounds it on that side (max(yo - 8, 0) >= 0), the
 * simpler one first, and through sums. Compute-at loop bounds are clamps of this shape. */
aff aff_bound(const aff_env *env, const ir_expr *e, bool lower);
bool aff_mentions(const aff *a, const ir_var *v);
int64_t aff_coef(const aff *a, const ir_var *v);
/* a without its v term. */
aff aff_drop(aff a, const ir_var *v);

/* Range of a over the loop ranges in env (substituting every loop variable with a known
 * range). Returns false when a variable's range is unknown. */
bool aff_range(const aff_env *env, const aff *a, aff *min, aff *max);

/* Symbolic comparison: 1 when a >= b everywhere, 0 when a < b everywhere, -1 when undecided.
 * Decided when a - b is a constant, or a constant plus terms of one sign in positive variables
 * (ir_var.positive, each >= 1). */
int aff_ge(const aff *a, const aff *b);

/* Proves lo <= e <= hi for every valuation within env's ranges. */
bool aff_prove_between(const aff_env *env, const ir_expr *e, const aff *lo, const aff *hi);

/* Builds an i32 IR expression for a. */
ir_expr *aff_to_expr(ir_func *f, const aff *a);

#endif
