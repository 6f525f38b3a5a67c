/* The language's scalar semantics in one place: the builtin table (names, arity, typing) and the
 * exact value of every operator, cast, builtin and reduction step (docs/language.md Sections 2,
 * 7 and 9). The checker's constant folding uses these functions; the interpreter and any backend
 * that evaluates at compile time should use them too, so that all agree bit for bit. */
#ifndef PF_LANG_BUILTINS_H
#define PF_LANG_BUILTINS_H

#include "lang/ast.h"

#include <stdint.h>

/* How a builtin's arguments are typed. */
typedef enum pf_builtin_kind {
    PF_BK_FLOAT,    /* every argument converts to float; the result is float */
    PF_BK_NUMERIC,  /* int if every argument is int, else float (ints converted) */
    PF_BK_NOISE,    /* 1..4 int arguments; float result */
    PF_BK_MEDIAN,   /* (local array, int n); the array's element type */
} pf_builtin_kind;

typedef struct pf_builtin_info {
    const char *name;
    int min_args, max_args;
    pf_builtin_kind kind;
} pf_builtin_info;

const pf_builtin_info *pf_builtin_get(pf_builtin b);
/* The builtin called `name`, or -1. */
int pf_builtin_lookup(const char *name);
/* Whether `name` is reserved for a call form that is not an ordinary builtin (the reductions
 * `sum`, `min`, `max` with a range, and the `sort` statement), or a builtin. Top-level
 * declarations may not use these names. */
bool pf_builtin_reserved(const char *name);

/* ---- exact scalar semantics ---- */

/* float -> int: truncation toward zero, saturating, NaN -> 0. */
int32_t pf_float_to_int(float f);
/* `to(v)` where v has type `from` (int, float or bool). */
pf_value pf_eval_cast(pf_type to, pf_type from, pf_value v);
/* A unary operator on an operand of type t. */
pf_value pf_eval_unary(pf_op op, pf_type t, pf_value a);
/* A binary operator whose operands both have type t (after implicit conversion). Comparisons
 * give a bool value. Int + - * wrap; int / and % by zero give 0; INT_MIN / -1 = INT_MIN. */
pf_value pf_eval_binary(pf_op op, pf_type t, pf_value a, pf_value b);
/* A builtin other than median on already converted arguments; `t` is the call's result type
 * (for abs/min/max/clamp also the arguments' type). */
pf_value pf_eval_builtin(pf_builtin b, pf_type t, int n, const pf_value *args);

/* noise(i1, ..., in), n = 1..4: the hash defined once in base/noise.h (shared with generated
 * code's runtime), a float in [0, 1). See docs/language.md Section 9 for its definition. */
float pf_noise(int n, const int32_t *args);

/* sort(v, n) on an array of `size` values of type t: n clamped into [0, size], then a stable
 * insertion sort ascending by `<` of v[0 .. n-1] (the order is defined even with NaNs). */
void pf_sort_values(pf_value *v, int size, int n, pf_type t);
/* median(v, n): n clamped into [1, size]; element n/2 of v[0 .. n-1] sorted as by
 * pf_sort_values, without modifying v. */
pf_value pf_median_values(const pf_value *v, int size, int n, pf_type t);

/* Reductions: the value of an empty range, and one step acc := acc op v (ascending i). */
pf_value pf_reduce_identity(pf_reduce_op op, pf_type t);
pf_value pf_reduce_step(pf_reduce_op op, pf_type t, pf_value acc, pf_value v);

#endif
