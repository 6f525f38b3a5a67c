/* Constant folding and local algebraic simplification of IR expressions, with exactly the
 * language's semantics (binary32 float arithmetic, wrapping ints, safe division). Lowering builds
 * expressions through these folds, so a reduction over constant taps of a pure kernel function
 * becomes a constant weight before LLVM ever sees it. */
#ifndef PF_CODEGEN_IR_SIMPLIFY_H
#define PF_CODEGEN_IR_SIMPLIFY_H

#include "codegen/ir.h"

/* Folds the top node of e when its operands allow (constants, identities); returns e itself
 * otherwise. Never changes a result bit (no float identities that are not exact). */
ir_expr *ir_fold(ir_func *f, ir_expr *e);

/* Folding constructors: the ir_* constructor followed by ir_fold. */
ir_expr *irf_bin(ir_func *f, ir_op op, ir_expr *a, ir_expr *b);
ir_expr *irf_un(ir_func *f, ir_op op, ir_expr *a);
ir_expr *irf_select(ir_func *f, ir_expr *c, ir_expr *a, ir_expr *b);
ir_expr *irf_cast(ir_func *f, ir_type to, ir_expr *a);
ir_expr *irf_call(ir_func *f, ir_fn fn, ir_type type, int n, ir_expr **args);

/* Index i along dimension d of buffer b after its boundary mode (clamp, mirror, wrap), built
 * with the folding constructors; a constant boundary clamps and ANDs the in-range test into
 * *inside (which starts NULL: no test yet). */
ir_expr *irf_boundary_index(ir_func *f, const ir_buffer *b, int d, ir_expr *i, ir_expr **inside);

/* Bottom-up simplification of a whole expression tree. */
ir_expr *ir_simplify(ir_func *f, ir_expr *e);

/* The language's scalar semantics, shared by folding and by tests. */
int32_t ir_sem_div32(int32_t a, int32_t b);
int32_t ir_sem_mod32(int32_t a, int32_t b);
int64_t ir_sem_div64(int64_t a, int64_t b);
int64_t ir_sem_mod64(int64_t a, int64_t b);
int32_t ir_sem_f2i(float f);
float ir_sem_call_f32(ir_fn fn, const float *args);  /* unary/binary math functions */

#endif
