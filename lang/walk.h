/* Visiting the image reads of a stage body with the variables in scope at each read: the
 * bounds inference of compute-at (codegen/lower_at.c) and the default schedule's stencil test
 * (codegen/default_schedule.c) both need every read together with the ranges of the reduction
 * and `for` variables around it. */
#ifndef PF_LANG_WALK_H
#define PF_LANG_WALK_H

#include "lang/ast.h"

typedef struct pf_read_visitor {
    void *ctx;
    /* var, ranging over [lo, hi] (a reduction's bounds, or a `for`'s: with a step its values
     * still lie in there), comes into scope; each enter is matched by one leave. Either may
     * be NULL (a visitor of reads alone). */
    void (*enter)(void *ctx, const pf_symbol *var, const pf_expr *lo, const pf_expr *hi);
    void (*leave)(void *ctx);
    /* an image read (PF_E_IMAGE_READ), any image; reads inside its indices follow */
    void (*read)(void *ctx, const pf_expr *read);
} pf_read_visitor;

void pf_visit_reads_stmt(const pf_stmt *s, const pf_read_visitor *v);
void pf_visit_reads_expr(const pf_expr *e, const pf_read_visitor *v);

/* The size of code once helpers are inlined: expression and statement nodes, a call counting
 * its function's pf_func.inlined_nodes (set by the checker; 0 before) and a reduction over at
 * most PF_NODES_UNROLL_TAPS constant taps counting its body once per tap (codegen unrolls
 * those: codegen/lower.h's PF_UNROLL_REDUCTION is no larger). Saturates at PF_NODES_MAX. */
#define PF_NODES_MAX ((int64_t)1 << 40)
#define PF_NODES_UNROLL_TAPS 32
int64_t pf_expr_nodes(const pf_expr *e);
int64_t pf_stmt_nodes(const pf_stmt *s);

#endif
