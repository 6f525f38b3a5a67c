/* The reads of one image in a stage, each index as a window around one of the stage's
 * variables: coef * v + [lo, hi], over integer constants, sums, differences, products by a
 * constant, and the reduction and `for` variables in scope (whose bounds are windows of v with
 * the same coef, or constants). The one affine analysis on the AST: what a schedule decides
 * before anything is lowered uses it, namely which producer its consumer reads through a small
 * stencil (default_schedule.c) and which rows `at C slide` keeps (exec_slide.c). The loop IR
 * has its own, over IR variables and lets (codegen/affine.c).
 *
 *   consumer (x, y):  sum(A[x + i, y - 1], i = -2 .. 2)
 *   windows of A's dimension 0 in x: coef 1, [-2, 2];  of dimension 1 in y: coef 1, [-1, -1] */
#ifndef PF_PERFORATE_READ_WINDOW_H
#define PF_PERFORATE_READ_WINDOW_H

#include "lang/ast.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct pf_window {
    bool ok;              /* false: not such a window (another variable, a division, ...) */
    int64_t coef, lo, hi; /* |values| below 2^24 */
} pf_window;

/* The variables in scope at a read, for pf_window_of. */
typedef struct pf_window_scope pf_window_scope;

/* Calls fn for every read of img in st's body (reads in other reads' indices included), with
 * the scope at the read, for windows in terms of v (one of st's variables). */
typedef void (*pf_window_fn)(void *ctx, const pf_expr *read, const pf_window_scope *scope);
void pf_read_windows(const pf_stage *st, const pf_image_decl *img, const pf_symbol *v,
                     pf_window_fn fn, void *ctx);
/* The window of e (an index of the read, or part of one) in the scope. */
pf_window pf_window_of(const pf_window_scope *scope, const pf_expr *e);

#endif
