/* Congruence simplification (Image Perforation, Section 3.3.3): proves with Z3 that a read index
 * of a grid-sampled image is congruent to a constant modulo the grid spacing, so on-demand
 * multilinear reconstruction can use constant weights (or a plain load) along that dimension.
 *
 * The module is self-contained: code generation converts its index expressions into pf_cexpr
 * trees and the facts it knows about the loop variables in scope into pf_cfacts, then asks, per
 * dimension d of a read A[e0, e1, ...] of an image sampled with spacing s_d from origin o_d:
 *
 *     is (e_d - o_d) ≡ r (mod s_d) for every valuation allowed by the facts?
 *
 * Example (Figure 3): stage2 of the blur loops `for x = 0 .. W step 4`, so x ≡ 0 (mod 4), x >= 0.
 *     read A[x, y - i], spacing (4, 1):  x     -> PROVEN 0: a plain load of stored sample x / 4
 *     read A[x + 2, y - i]:              x + 2 -> PROVEN 2: constant weights (0.5, 0.5) between
 *                                                 stored samples (x + 2 - 2) / 4 and that + 1
 *     read A[x + y, ...], y free:        x + y -> NOT_CONSTANT: general interpolation
 *
 * Semantics of pf_cexpr: mathematical integers (no 32-bit wrapping). A proof carries over to the
 * generated int32 code under the assumption that loop variables are bounded and no index
 * computation overflows, which holds for images of realistic size.
 * DIV and MOD are C's: division truncates toward zero, the remainder takes the dividend's sign.
 * An OPAQUE leaf is an arbitrary integer (a data-dependent value); each occurrence is independent.
 *
 * Not thread-safe: one pf_congruence_ctx per thread (Z3 contexts are single-threaded). */
#ifndef PF_RECONSTRUCT_CONGRUENCE_H
#define PF_RECONSTRUCT_CONGRUENCE_H

#include "base/arena.h"
#include "base/strbuf.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- integer index expressions ---- */

typedef enum pf_cexpr_kind {
    PF_CE_CONST,   /* value */
    PF_CE_VAR,     /* var: a loop (or other) variable id >= 0, facts in pf_cfacts.vars[var] */
    PF_CE_OPAQUE,  /* any integer, unrelated to everything else (e.g. a value read from data) */
    PF_CE_NEG,     /* -a */
    PF_CE_ADD,     /* a + b */
    PF_CE_SUB,     /* a - b */
    PF_CE_MUL,     /* a * b; one side must fold to a constant, else the query is UNKNOWN */
    PF_CE_DIV,     /* a / b, truncating; b must fold to a nonzero constant to be encoded */
    PF_CE_MOD,     /* a % b, sign of a; b must fold to a nonzero constant to be encoded */
    PF_CE_MIN,     /* min(a, b) */
    PF_CE_MAX,     /* max(a, b) */
} pf_cexpr_kind;

typedef struct pf_cexpr pf_cexpr;
struct pf_cexpr {
    pf_cexpr_kind kind;
    int64_t value;         /* CONST */
    int var;               /* VAR */
    const pf_cexpr *a, *b; /* operands: a for NEG, a and b for the binary kinds */
};

/* Constructors; nodes live in the caller's arena and are never freed alone. */
pf_cexpr *pf_ce_const(pf_arena *a, int64_t value);
pf_cexpr *pf_ce_var(pf_arena *a, int var);
pf_cexpr *pf_ce_opaque(pf_arena *a);
pf_cexpr *pf_ce_neg(pf_arena *a, const pf_cexpr *x);
pf_cexpr *pf_ce_bin(pf_arena *a, pf_cexpr_kind kind, const pf_cexpr *x, const pf_cexpr *y);
pf_cexpr *pf_ce_add(pf_arena *a, const pf_cexpr *x, const pf_cexpr *y);
pf_cexpr *pf_ce_sub(pf_arena *a, const pf_cexpr *x, const pf_cexpr *y);
pf_cexpr *pf_ce_mul(pf_arena *a, const pf_cexpr *x, const pf_cexpr *y);
/* x + c, the shape of most stencil taps. */
pf_cexpr *pf_ce_addc(pf_arena *a, const pf_cexpr *x, int64_t c);

/* Fully parenthesised, e.g. "((v0 * 2) + -3)", "min(v1, ?)"; names[id] replaces "v<id>" when
 * names is not NULL and id < nnames. The nameless form is canonical (used in cache keys). */
void pf_cexpr_print(pf_strbuf *sb, const pf_cexpr *e, const char *const *names, int nnames);

/* Evaluates with C semantics in int64. Returns 0 and sets *out, or -1 when the expression holds
 * an OPAQUE leaf, a variable id >= nvals, a division by zero or an int64 overflow. */
int pf_cexpr_eval(const pf_cexpr *e, const int64_t *vals, int nvals, int64_t *out);

/* ---- facts about variables ---- */

typedef struct pf_cfact {
    int64_t modulus;      /* >= 1; the variable is ≡ residue (mod modulus); 1: no congruence */
    int64_t residue;      /* any integer; normalised into [0, modulus) when used */
    bool has_lo, has_hi;  /* lo <= var and var <= hi when set */
    int64_t lo, hi;
} pf_cfact;

typedef struct pf_cfacts {
    const pf_cfact *vars; /* vars[id] for id < nvars; an id >= nvars is unconstrained */
    int nvars;
} pf_cfacts;

pf_cfact pf_cfact_any(void);                          /* any integer */
pf_cfact pf_cfact_mod(int64_t residue, int64_t modulus);
/* The variable of `for v = start .. end step step` (end exclusive, step >= 1): v ≡ start
 * (mod step), start <= v <= end - 1. has_end false when the end is not a known constant. */
pf_cfact pf_cfact_loop(int64_t start, int64_t step, bool has_end, int64_t end);

/* ---- the prover ---- */

typedef enum pf_cong_status {
    PF_CONG_PROVEN,        /* every valuation gives the same residue: result.residue */
    PF_CONG_NOT_CONSTANT,  /* Z3 found valuations with residues result.residue and result.other */
    PF_CONG_UNKNOWN,       /* undecided: timeout, Z3 gave up, or outside the encoding (reason) */
} pf_cong_status;

typedef struct pf_cong_result {
    pf_cong_status status;
    int64_t residue;       /* PROVEN: the residue in [0, modulus); NOT_CONSTANT: one reachable */
    int64_t other;         /* NOT_CONSTANT: a second reachable residue, != residue */
    const char *reason;    /* UNKNOWN: a static phrase for dumps, e.g. "nonlinear (...)",
                            * "z3 gave up (timeout or resource limit)"; else NULL */
    bool cached;           /* answered from the proof cache */
} pf_cong_result;

typedef struct pf_congruence_options {
    unsigned timeout_ms;   /* wall-clock limit per Z3 check (0: default 1000) */
    unsigned rlimit;       /* Z3 resource limit per check: unlike the timeout it makes giving up
                            * independent of machine load, so searches replay (0: default) */
} pf_congruence_options;

typedef struct pf_congruence_stats {
    uint64_t queries;      /* pf_congruence_prove calls with a modulus > 1 */
    uint64_t hits, misses; /* proof-cache lookups */
    uint64_t z3_checks;    /* Z3_solver_check calls */
    uint64_t unknowns;     /* misses answered UNKNOWN */
    double z3_seconds;     /* wall time spent on misses */
} pf_congruence_stats;

typedef struct pf_congruence_ctx pf_congruence_ctx;

/* Owns a Z3 context, one solver and the proof cache (which only grows: one entry per distinct
 * question, a few hundred bytes). NULL only when Z3 could not be set up. */
pf_congruence_ctx *pf_congruence_new(const pf_congruence_options *opt);
void pf_congruence_free(pf_congruence_ctx *ctx);

/* Is e ≡ r (mod modulus) for every valuation of its variables allowed by facts? Only the facts
 * of the variables e mentions count; facts may be NULL (all unconstrained). modulus >= 1 and
 * each fact's modulus >= 1 (else a perfora bug: aborts). modulus 1 is PROVEN 0 without Z3; a
 * NULL ctx answers UNKNOWN. Answers, UNKNOWN included, are cached per (canonical e, facts of
 * the variables e mentions, modulus). Each miss runs at most two Z3 checks, each bounded by the
 * options' limits; a product of two non-constant terms is UNKNOWN without running Z3. */
pf_cong_status pf_congruence_prove(pf_congruence_ctx *ctx, const pf_cexpr *e,
                                   const pf_cfacts *facts, int64_t modulus, pf_cong_result *out);

void pf_congruence_get_stats(const pf_congruence_ctx *ctx, pf_congruence_stats *out);
const char *pf_cong_status_name(pf_cong_status s);  /* "proven", "not-constant", "unknown" */

/* ---- constant interpolation weights ---- */

/* Along one dimension with spacing s and origin o, a read at index e with (e - o) ≡ r (mod s)
 * touches stored samples base and base + 1, base = (e - shift) / s, an exact division. */
typedef struct pf_interp_1d {
    int ntaps;             /* 1: e lies on a stored sample (r == 0); 2: constant-weight linear */
    double weight[2];      /* weight of base and of base + 1: (1, 0) or (1 - r/s, r/s) */
    int64_t shift;         /* o + r */
    int64_t spacing;       /* s */
} pf_interp_1d;

/* residue is normalised into [0, spacing); spacing >= 1 (else aborts). */
pf_interp_1d pf_interp_constant_1d(int64_t residue, int64_t spacing, int64_t origin);

/* (e - shift) / spacing as a pf_cexpr (a DIV node, exact under the proof; no DIV when s == 1). */
const pf_cexpr *pf_interp_base_index(pf_arena *a, const pf_cexpr *e, const pf_interp_1d *w);

#define PF_INTERP_MAX_DIMS 4

/* One tap of a multilinear read whose every listed dimension has constant weights. */
typedef struct pf_interp_tap {
    int step[PF_INTERP_MAX_DIMS]; /* 0: base of that dimension, 1: base + 1 */
    double weight;                /* product of the per-dimension weights */
} pf_interp_tap;

/* The tensor product of ndims (<= PF_INTERP_MAX_DIMS) per-dimension weights: writes
 * prod(ntaps) <= 2^ndims taps (dimension 0 varies fastest) and returns their number. Dimensions
 * whose congruence was not proven are the generator's to interpolate; leave them out. */
int pf_interp_constant_nd(const pf_interp_1d *dims, int ndims,
                          pf_interp_tap taps[1 << PF_INTERP_MAX_DIMS]);

#endif
