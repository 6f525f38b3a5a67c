/* Splitting one compile into LLVM modules that compile on several threads at once.
 *
 * LLVM's passes and its code generator run one function at a time on one thread, and a
 * pipeline is one big function: on a 2-core machine half of the machine waits. The plan picks
 * pieces of the loop IR that run rarely (a parallel loop's body, a whole stage nest inside a
 * tile), estimates what each costs to compile, and deals them out to N modules. The emitter
 * then outlines a piece into its own function where its module differs from the module of the
 * code around it, and each module is emitted, optimized and compiled on its own thread
 * (codegen/jit.c). A piece is called once per tile or per parallel task, never per row, so the
 * calls cost nothing measurable at run time. */
#ifndef PF_CODEGEN_SPLIT_H
#define PF_CODEGEN_SPLIT_H

#include "codegen/ir.h"

typedef enum pf_piece_kind {
    PF_PIECE_CHUNK,  /* a parallel loop: its task function goes to the piece's module */
    PF_PIECE_NEST,   /* a serial or vectorized loop nest, outlined into a function */
} pf_piece_kind;

typedef struct pf_piece {
    const ir_stmt *s;
    pf_piece_kind kind;
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

/* The pieces worth a function of their own, each in a module of its own (so that emitting
 * outlines them all: llvm_emit.h measures them that way), with costs estimated from the
 * loop IR. Never NULL. */
pf_split *pf_split_candidates(const ir_func *f);
/* Deals the pieces, by their costs, out to at most max_modules modules (clamped to
 * 1..PF_SPLIT_MAX_MODULES), longest first onto the least loaded. One module (every piece in
 * module 0) when no split leaves every module under 80% of the whole. */
void pf_split_deal(pf_split *p, int max_modules);
/* Candidates and deal by the loop-IR estimates. Never NULL. */
pf_split *pf_split_plan(const ir_func *f, int max_modules);
void pf_split_free(pf_split *p);

/* The piece of statement s when s starts code of another module than the code around it
 * (the emitter outlines it), else NULL. p may be NULL. */
const pf_piece *pf_split_outlined(const pf_split *p, const ir_stmt *s);
/* The estimated compile cost of s (IR nodes; vector bodies thrice). */
double pf_split_stmt_cost(const ir_stmt *s);
/* Index of a piece in p->piece (for naming its function). */
int pf_split_index(const pf_split *p, const pf_piece *piece);

#endif
