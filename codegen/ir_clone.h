/* Copying IR with fresh variables: a pass that duplicates a loop body (loop partitioning,
 * unrolling) needs every variable defined inside the copy to be a new one, since a let may be
 * defined only once per function. Expressions are shared where nothing is renamed. */
#ifndef PF_CODEGEN_IR_CLONE_H
#define PF_CODEGEN_IR_CLONE_H

#include "codegen/ir.h"

/* Maps variables (by id) to replacement expressions during a rewrite. */
typedef struct ir_subst {
    int n;
    ir_expr **to;   /* by var id; NULL = unchanged */
    ir_var **arr;   /* array variables: by var id; NULL = unchanged */
} ir_subst;

void ir_subst_init(ir_subst *s, const ir_func *f);
void ir_subst_free(ir_subst *s);

ir_expr *ir_subst_expr(ir_func *f, const ir_subst *s, ir_expr *e);

/* Deep copy of s in which every variable it defines (lets, mutables, loop variables, arrays)
 * is replaced by a fresh one, and variables in `sub` are replaced as given. */
ir_stmt *ir_clone_stmt(ir_func *f, ir_subst *sub, const ir_stmt *s);

/* A copy of the tree s in which each loop (outermost first) is offered to rewrite: what it
 * returns replaces the loop (s itself: kept, and not looked into); NULL: the loop is copied
 * and its body walked. Statements are copied, expressions shared. */
typedef ir_stmt *(*ir_loop_rewrite)(void *ctx, const ir_stmt *loop);
ir_stmt *ir_rewrite_loops(ir_func *f, const ir_stmt *s, ir_loop_rewrite rewrite, void *ctx);

/* Marks (by var id) every variable defined inside s. */
void ir_defined_vars(const ir_stmt *s, char *mark);

/* Whether s contains a loop (an IR_S_FOR anywhere inside, s itself included). */
bool ir_has_loop(const ir_stmt *s);
/* Whether s contains a loop with an unroll count above 1 (a schedule's `unroll`). */
bool ir_has_unroll(const ir_stmt *s);
/* Whether s contains a parallel loop. */
bool ir_has_parallel(const ir_stmt *s);
/* Loop levels of the deepest nest in s (s itself counted when it is a loop). */
int ir_loop_depth(const ir_stmt *s);

#endif
