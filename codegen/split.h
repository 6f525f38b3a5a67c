/* Splitting one compile into LLVM modules that compile on several threads at once.
 *
 * LLVM's passes and its code generator run one function at a time on one thread. The pieces
 * are the task functions of parallel loops: functions of their own in a one-module compile
 * too, so moving one into another module changes where it is compiled and nothing of its code.
 * The plan estimates what each costs to compile and deals them out to N modules; each module
 * is emitted, optimized and compiled on its own thread (codegen/jit_split.c).
 *
 * Only those: the code a variant runs must not depend on the compile's thread count, because
 * the search, `perfora export` and a plain `perfora run` compile with different counts. Loop
 * nests inside a tile were pieces too once, outlined into functions only in a split compile;
 * there their buffers arrived as noalias arguments, and LLVM's loop vectorizer turned a
 * scalar reconstruction loop into AVX-512 gathers, about 2x slower on an AMD host (a blur
 * frontier variant: 0.29 ms as one module, 0.57-0.65 ms split, 820x614; codegen_split's
 * test_same_code compares the instructions of both compiles). */
#ifndef PF_CODEGEN_SPLIT_H
#define PF_CODEGEN_SPLIT_H

#include "codegen/ir.h"

/* A parallel loop: its task function goes to the piece's module. */
typedef struct pf_piece {
    const ir_stmt *s;
    int parent;     /* index of the enclosing piece, -1 for the function itself */
    int module;     /* where its code is compiled; the function itself is module 0 */
    double cost;    /* estimated compile cost of its own code (without nested pieces) */
} pf_piece;

typedef struct pf_split {
    int n_modules;  /* 1: nothing to split */
    int n_pieces;
    pf_piece *piece;
    double total;   /* estimated compile cost of the whole function */
    double load[8]; /* estimated compile cost per module (before dealing, [0] is the
                       function's own code) */
} pf_split;

#define PF_SPLIT_MAX_MODULES 8

/* The parallel loops worth a module of their own, each in a module of its own (so that
 * emitting gives each its own: llvm_emit.h measures them that way), with costs estimated from
 * the loop IR. Never NULL. */
pf_split *pf_split_candidates(const ir_func *f);
/* Deals the pieces, by their costs, out to at most max_modules modules (clamped to
 * 1..PF_SPLIT_MAX_MODULES), longest first onto the least loaded. One module (every piece in
 * module 0) when no split leaves every module under 80% of the whole. */
void pf_split_deal(pf_split *p, int max_modules);
/* Candidates and deal by the loop-IR estimates. Never NULL. */
pf_split *pf_split_plan(const ir_func *f, int max_modules);
void pf_split_free(pf_split *p);

/* The piece of parallel loop s when its task function is defined in another module than the
 * code around it, else NULL. p may be NULL. */
const pf_piece *pf_split_elsewhere(const pf_split *p, const ir_stmt *s);
/* The estimated compile cost of s (IR nodes; vector bodies thrice). */
double pf_split_stmt_cost(const ir_stmt *s);
/* Index of a piece in p->piece (for naming its function). */
int pf_split_index(const pf_split *p, const pf_piece *piece);

#endif
