/* Shared state of the checker passes (check.c: driver, scopes, top level; check_expr.c:
 * expressions and builtins; check_stmt.c: statements; check_pipeline.c: images, scalars,
 * stages and data flow; check_consts.c: constant and shape expressions, folding, recursion).
 * Not part of the front end's interface. */
#ifndef PF_LANG_CHECK_INTERNAL_H
#define PF_LANG_CHECK_INTERNAL_H

#include "lang/lang.h"

/* Local arrays and const arrays hold 1..PF_ARRAY_MAX elements (docs/language.md). */
#define PF_ARRAY_MAX 4096
/* A stage's or function's frame holds at most this many slots. */
#define PF_FRAME_MAX (1 << 20)
/* Pipeline scalars may refer to each other in shape expressions at most this deep. */
#define PF_SHAPE_CHAIN_MAX 16

/* A name -> value hash map; entries live in the checker's scratch arena. */
typedef struct pf_name_entry {
    const char *name;
    void *value;
    pf_loc loc;
    int level;                    /* scope level (symbol tables) or a tag */
    struct pf_name_entry *next;   /* in the bucket */
} pf_name_entry;

typedef struct pf_name_map {
    pf_name_entry **buckets;
    unsigned mask;
} pf_name_map;

/* What kind of code is being checked: decides what is visible and allowed. */
typedef enum pf_ctx {
    PF_CTX_TOP,       /* param defaults, const initializers */
    PF_CTX_FUNC,      /* a helper function body */
    PF_CTX_PIPELINE,  /* extents, `over` ranges, pipeline scalars */
    PF_CTX_STAGE,     /* a stage body */
} pf_ctx;

/* Per image, while checking the pipeline. */
typedef struct pf_image_state {
    int read_mark, write_mark;    /* the stage index + 1 that last recorded a read / write */
    bool written;                 /* some earlier stage writes it */
    pf_loc first_read;            /* in the current stage */
} pf_image_state;

/* A growable array in the scratch arena. */
typedef struct pf_cvec {
    char *data;
    int n, cap;
} pf_cvec;

typedef struct pf_call_edge {
    int caller, callee;
    pf_loc loc;
} pf_call_edge;

typedef struct pf_checker {
    pf_program *prog;
    pf_arena *arena;              /* the program's: nodes and symbols that stay */
    pf_arena scratch;             /* freed when checking ends */
    pf_diags *diags;
    int n_errors;

    pf_name_map scope;            /* visible names -> pf_symbol* */
    pf_cvec scope_stack;          /* pf_name_entry*, for leaving scopes */
    int level;
    pf_name_map later;            /* top-level and pipeline names -> decl loc (level 0/1) */
    pf_name_map loop_names;       /* stage and named loop names */
    pf_name_map reported;         /* unknown names already reported */

    pf_ctx ctx;
    pf_func *func;                /* FUNC */
    int func_index;
    pf_stage *stage;              /* STAGE */
    int next_slot, max_slot;      /* frame allocation of the current function/stage/scalar */
    bool frame_full;              /* the frame limit was reported */
    int for_depth;                /* `for` nesting inside the current stage */

    /* pipeline tables being built */
    pf_cvec images, sizes, scalars, stages, loops;
    pf_cvec image_state;          /* pf_image_state, by image index */
    pf_cvec scalar_depth;         /* int, by scalar index: shape chain depth */
    /* the current stage's data flow */
    pf_cvec reads, writes;        /* pf_image_decl* */
    bool scatter;
    pf_loc foreign_own_read;      /* a read of the own image elsewhere (line 0: none) */

    pf_cvec calls;                /* pf_call_edge */
} pf_checker;

/* check.c */
void pf_check_error(pf_checker *c, pf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void *pf_cvec_push(pf_checker *c, pf_cvec *v, size_t size);
#define PF_CPUSH(c, v, T, x) (*(T *)pf_cvec_push((c), &(v), sizeof(T)) = (x))
#define PF_CVEC_AT(v, T, i) (((T *)(v).data)[i])
void pf_map_init(pf_checker *c, pf_name_map *m, unsigned size);
pf_name_entry *pf_map_get(const pf_name_map *m, const char *name);
pf_name_entry *pf_map_put(pf_checker *c, pf_name_map *m, const char *name, void *value,
                          pf_loc loc, int level);
void pf_scope_enter(pf_checker *c);
void pf_scope_leave(pf_checker *c);
pf_symbol *pf_lookup(pf_checker *c, const char *name);
/* Declares a symbol in the current scope; reports a name that is already visible and then
 * returns the symbol undeclared (so the caller's checking goes on). */
pf_symbol *pf_declare(pf_checker *c, pf_sym_kind kind, const char *name, pf_loc loc,
                      pf_type type);
/* Reports a name that was not found (telling "declared later" or "not visible here"). */
void pf_report_unknown(pf_checker *c, pf_loc loc, const char *what, const char *name);
/* Frame slots for the current function/stage/scalar. */
int pf_alloc_slots(pf_checker *c, int n);
const char *pf_sym_kind_name(pf_sym_kind k);
const char *pf_sym_kind_phrase(pf_sym_kind k);  /* with an article: "an image" */

/* check_expr.c */
pf_expr *pf_check_expr(pf_checker *c, pf_expr *e);
/* Converts e (checked) to `want` (an implicit int->float cast) or reports `what` as wrong. */
pf_expr *pf_coerce(pf_checker *c, pf_expr *e, pf_type want, const char *what);
/* Checks and requires type `want` (with int->float conversion where want is float). */
pf_expr *pf_check_typed(pf_checker *c, pf_expr *e, pf_type want, const char *what);
/* Whether index expressions are exactly the current stage's loop variables, in order. */
bool pf_at_own_coords(const pf_stage *st, pf_expr *const *idx, int n);
/* Records that the current stage reads / writes an image (data flow). */
void pf_note_read(pf_checker *c, pf_image_decl *img, pf_loc loc);
void pf_note_write(pf_checker *c, pf_image_decl *img);

/* check_stmt.c */
void pf_check_stmt(pf_checker *c, pf_stmt *s);
bool pf_stmt_returns(const pf_stmt *s);

/* check_pipeline.c */
void pf_check_pipeline(pf_checker *c);

/* check_consts.c */
/* The first sub-expression that is not constant (shape = false) or not a shape expression
 * (shape = true), with the reason in why; NULL when e qualifies. e must be checked. */
const pf_expr *pf_find_nonconst(const pf_expr *e, bool shape, char *why, size_t size);
/* Requires a checked expression to be constant and folds it; reports `what` otherwise.
 * Returns false (value 0) when it is not constant or has errors. */
bool pf_fold(pf_checker *c, const pf_expr *e, const char *what, pf_value *out);
/* Requires a checked int expression to be a shape expression; folds it when constant
 * (is_const set). Returns false after reporting. */
bool pf_check_shape(pf_checker *c, const pf_expr *e, const char *what, bool *is_const,
                    int32_t *value);
/* The shape chain depth of an expression (deepest pipeline scalar reference + 1). */
int pf_shape_depth(pf_checker *c, const pf_expr *e);
void pf_check_recursion(pf_checker *c);
/* After pf_check_recursion found no cycle: every function's inlined size and call depth
 * (pf_func), and the limits on them and on stages and pipeline scalars (language.md §10). */
void pf_check_inlining(pf_checker *c);

/* const_eval.c */
/* Evaluates a checked constant/shape expression; params and sizes may be NULL (then they
 * are not constant). Returns -1 when something is not available. */
int pf_eval_expr_in(const pf_expr *e, const pf_param_values *params, const int32_t *sizes,
                    int depth, pf_value *out);

#endif
