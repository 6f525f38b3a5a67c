/* The AST of a perfora program (docs/language.md), shared by the parser, the checker, the
 * pretty-printer, the reference interpreter, the perforation transforms and code generation.
 *
 * Life cycle: pf_parse() builds the tree (names unresolved, types unknown); pf_check() resolves
 * names to pf_symbols, types every expression, inserts implicit int->float casts (PF_E_CAST with
 * `implicit` set, which the printer omits), folds consts, and fills the program-level tables
 * (images, stages, loops, ...). All nodes live in the program's arena.
 * After checking nothing writes the tree: a program is `const pf_program *` from there on, and
 * what a schedule makes of it lives in a plan (perforate/plan.h), not here. */
#ifndef PF_LANG_AST_H
#define PF_LANG_AST_H

#include "base/arena.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct pf_loc {
    int line, col;  /* 1-based; 0 when synthesized */
} pf_loc;

typedef enum pf_type {
    PF_T_ERROR,  /* an expression whose checking failed (suppresses cascaded errors) */
    PF_T_VOID,
    PF_T_BOOL,
    PF_T_INT,
    PF_T_FLOAT,
} pf_type;

typedef union pf_value {
    int32_t i;
    float f;
    bool b;
} pf_value;

typedef enum pf_boundary {
    PF_BOUNDARY_CLAMP,  /* default */
    PF_BOUNDARY_MIRROR,
    PF_BOUNDARY_WRAP,
    PF_BOUNDARY_CONSTANT,
} pf_boundary;

typedef struct pf_expr pf_expr;
typedef struct pf_stmt pf_stmt;
typedef struct pf_symbol pf_symbol;
typedef struct pf_image_decl pf_image_decl;
typedef struct pf_func pf_func;
typedef struct pf_stage pf_stage;

/* ---- symbols (created by the checker) ---- */

typedef enum pf_sym_kind {
    PF_SYM_PARAM,        /* top-level param: value[index] of the run's pf_param_values */
    PF_SYM_CONST,        /* top-level scalar const: `value` holds the folded value */
    PF_SYM_CONST_ARRAY,  /* top-level const array: `array_values[array_len]` */
    PF_SYM_FUNC,         /* helper function: `func` */
    PF_SYM_IMAGE,        /* input, output or intermediate image: `image` */
    PF_SYM_SIZE,         /* size name bound by an input extent: sizes[index] at run time */
    PF_SYM_SCALAR,       /* pipeline-level scalar: scalars[index] at run time */
    PF_SYM_LOCAL,        /* local variable or function parameter: frame slot `slot` */
    PF_SYM_LOCAL_ARRAY,  /* local array: frame slots `slot` .. `slot + array_len - 1` */
    PF_SYM_LOOP_VAR,     /* for-each, for or reduction variable (int): frame slot `slot` */
} pf_sym_kind;

struct pf_symbol {
    pf_sym_kind kind;
    const char *name;
    pf_loc loc;          /* where it is declared */
    pf_type type;        /* scalar type; element type for arrays; PF_T_FLOAT for images */
    int index;           /* PARAM/SIZE/SCALAR: index into the program's table; IMAGE: images[] */
    int slot;            /* LOCAL/LOCAL_ARRAY/LOOP_VAR: frame slot in the enclosing stage or
                            function (frames hold one pf_value per slot) */
    int array_len;       /* CONST_ARRAY, LOCAL_ARRAY */
    pf_value value;      /* CONST: folded value; PARAM: default */
    pf_value *array_values; /* CONST_ARRAY */
    pf_image_decl *image;   /* IMAGE */
    pf_func *func;          /* FUNC */
    pf_stage *stage;        /* LOOP_VAR of a for-each: the stage; else NULL */
    int stage_dim;          /* LOOP_VAR of a for-each: which image dimension it iterates */
    pf_expr *init;          /* SCALAR: its initializer */
    /* Added by the front end (appended): */
    bool shape;             /* SCALAR: its initializer is a shape expression (language.md
                               Section 4), so extents and `over` ranges may use it */
};

/* ---- expressions ---- */

typedef enum pf_expr_kind {
    PF_E_INT,         /* ival */
    PF_E_FLOAT,       /* fval */
    PF_E_BOOL,        /* bval */
    PF_E_NAME,        /* name; sym after checking */
    PF_E_UNARY,       /* op (PF_OP_NEG, PF_OP_NOT), a */
    PF_E_BINARY,      /* op, a, b */
    PF_E_COND,        /* a ? b : c  (cond = a) */
    PF_E_CAST,        /* to `type`, a; `implicit` when inserted by the checker */
    PF_E_CALL,        /* name(args): helper function (sym->func) after checking */
    PF_E_BUILTIN,     /* builtin (after checking; parsed as PF_E_CALL) */
    PF_E_INDEX,       /* name[args]: parsed form; the checker turns it into one of the next two */
    PF_E_IMAGE_READ,  /* sym (image), args[ndims] */
    PF_E_ARRAY_READ,  /* sym (local or const array), args[0] */
    PF_E_REDUCE,      /* reduce_op, var (sym after checking), lo, hi, body = args[0] */
} pf_expr_kind;

typedef enum pf_op {
    PF_OP_ADD, PF_OP_SUB, PF_OP_MUL, PF_OP_DIV, PF_OP_MOD,
    PF_OP_LT, PF_OP_LE, PF_OP_GT, PF_OP_GE, PF_OP_EQ, PF_OP_NE,
    PF_OP_AND, PF_OP_OR,
    PF_OP_NEG, PF_OP_NOT,
} pf_op;

typedef enum pf_reduce_op { PF_REDUCE_SUM, PF_REDUCE_MIN, PF_REDUCE_MAX } pf_reduce_op;

/* ORDER BUILTINS: keep in step with the name table in lang/builtins.c. */
typedef enum pf_builtin {
    PF_B_EXP, PF_B_LOG, PF_B_SQRT, PF_B_SIN, PF_B_COS, PF_B_TAN,
    PF_B_POW, PF_B_ATAN2,
    PF_B_FLOOR, PF_B_CEIL, PF_B_ROUND,
    PF_B_ABS, PF_B_MIN, PF_B_MAX, PF_B_CLAMP,
    PF_B_NOISE,
    PF_B_MEDIAN,     /* args: [0] = PF_E_NAME of the array, [1] = n */
    PF_B_YUV_Y, PF_B_YUV_U, PF_B_YUV_V,
    PF_B_YUV_R, PF_B_YUV_G, PF_B_YUV_B,
    PF_B_COUNT
} pf_builtin;

struct pf_expr {
    pf_expr_kind kind;
    pf_loc loc;
    pf_type type;           /* after checking */
    union {
        int32_t ival;
        float fval;
        bool bval;
    };
    pf_op op;
    pf_reduce_op reduce_op;
    pf_builtin builtin;
    bool implicit;          /* PF_E_CAST inserted by the checker */
    const char *name;       /* NAME, CALL, INDEX; IMAGE_READ/ARRAY_READ keep it; REDUCE: var name */
    pf_symbol *sym;         /* NAME, CALL (func), IMAGE_READ, ARRAY_READ, REDUCE (its variable) */
    pf_expr *a, *b, *c;     /* operands (UNARY: a; BINARY: a, b; COND: a ? b : c; CAST: a;
                               REDUCE: lo = a, hi = b) */
    int n_args;
    pf_expr **args;         /* CALL, BUILTIN, INDEX, IMAGE_READ, ARRAY_READ; REDUCE: body */
    /* Added by the front end (appended): */
    pf_loc var_loc;         /* REDUCE: where its variable is named */
};

/* ---- statements ---- */

typedef enum pf_stmt_kind {
    PF_S_BLOCK,   /* body[n_body] */
    PF_S_DECL,    /* sym (LOCAL or LOCAL_ARRAY); value = initializer or NULL; len_expr for arrays */
    PF_S_ASSIGN,  /* target, assign_op, value */
    PF_S_IF,      /* cond, then_s, else_s (may be NULL) */
    PF_S_FOR,     /* var (sym), lo, hi, step (may be NULL), loop_name (may be NULL), then_s */
    PF_S_SORT,    /* array (target->sym), value = n */
    PF_S_RETURN,  /* value */
} pf_stmt_kind;

typedef enum pf_assign_op {
    PF_ASSIGN_SET, PF_ASSIGN_ADD, PF_ASSIGN_SUB, PF_ASSIGN_MUL, PF_ASSIGN_DIV
} pf_assign_op;

/* An assignment target: a local, an array element or an image element. */
typedef enum pf_lvalue_kind { PF_LV_LOCAL, PF_LV_ARRAY, PF_LV_IMAGE } pf_lvalue_kind;

typedef struct pf_lvalue {
    pf_lvalue_kind kind;   /* after checking */
    pf_loc loc;
    const char *name;
    pf_symbol *sym;        /* after checking */
    int n_index;
    pf_expr **index;       /* ARRAY: 1; IMAGE: ndims */
    bool scatter;          /* IMAGE: not the stage's own image at its loop coordinates */
} pf_lvalue;

struct pf_stmt {
    pf_stmt_kind kind;
    pf_loc loc;
    /* BLOCK */
    int n_body;
    pf_stmt **body;
    /* DECL */
    const char *decl_name;
    pf_type decl_type;
    pf_expr *len_expr;     /* local array length (constant int expression) or NULL */
    pf_symbol *sym;        /* DECL: the declared symbol; FOR: the loop variable */
    /* ASSIGN / SORT */
    pf_lvalue target;
    pf_assign_op assign_op;
    pf_expr *value;        /* ASSIGN value, DECL initializer, RETURN value, SORT count */
    /* IF */
    pf_expr *cond;
    pf_stmt *then_s, *else_s;  /* FOR: then_s is the body */
    /* FOR */
    const char *var_name;
    pf_expr *lo, *hi, *step;
    const char *loop_name;     /* named loop (perforable) or NULL */
    int loop_id;               /* index into pf_program.loops for named loops, else -1 */
    /* Added by the front end (appended): */
    pf_loc name_loc;           /* DECL: the declared name; FOR: the loop variable */
    pf_loc loop_name_loc;      /* FOR: the NAME of `as NAME` */
};

/* ---- top level ---- */

typedef enum pf_image_role { PF_IMAGE_INPUT, PF_IMAGE_OUTPUT, PF_IMAGE_LOCAL } pf_image_role;

struct pf_image_decl {
    const char *name;
    pf_loc loc;
    pf_image_role role;
    int ndims;                 /* 1..4 */
    pf_expr **extents;         /* [ndims]; inputs: PF_E_NAME (a size) or a constant int expr */
    pf_boundary boundary;
    pf_expr *boundary_value;   /* constant(v): the parsed expression */
    float constant_value;      /* constant(v): folded value */
    pf_symbol *sym;            /* after checking */
    int index;                 /* position in pf_program.images */
    int role_index;            /* position among the inputs / outputs / locals */
    pf_stage *first_writer;    /* the first stage writing it (NULL for inputs) */
};

struct pf_func {
    const char *name;
    pf_loc loc;
    pf_type ret;
    int n_params;
    const char **param_names;
    pf_type *param_types;
    pf_symbol **params;        /* after checking: LOCAL symbols in slots 0..n_params-1 */
    pf_stmt *body;             /* BLOCK */
    int n_slots;               /* frame size after checking */
    pf_symbol *sym;
    /* Added by the front end (appended): */
    pf_loc *param_locs;        /* [n_params]: where each parameter is named */
    /* After checking: nodes of the body with every helper it calls inlined (lang/walk.h), and
     * the depth of its calls (1: it calls no helper). */
    int64_t inlined_nodes;
    int call_depth;
};

typedef struct pf_range {
    pf_expr *lo, *hi, *step;   /* inclusive; step may be NULL (1) */
} pf_range;

struct pf_stage {
    const char *name;
    pf_loc loc;
    const char *image_name;
    pf_symbol *image;          /* after checking */
    int n_vars;
    const char **var_names;
    pf_symbol **vars;          /* LOOP_VAR symbols; vars[i] iterates image dimension i */
    pf_range *over;            /* NULL, or n_vars ranges */
    pf_stmt *body;
    bool serial;               /* has scatter writes: runs in order, last variable outermost */
    int n_slots;               /* frame size: loop vars first (slots 0..n_vars-1), then locals */
    int index;                 /* position in pf_program.stages */
    int loop_id;               /* its entry in pf_program.loops */
    /* Data flow, after checking: images read / written (scatter targets included), each once. */
    int n_reads, n_writes;
    pf_image_decl **reads, **writes;
    /* Added by the front end (appended). `loc` is the `for` keyword. */
    pf_loc name_loc;           /* the NAME of `as NAME` */
    pf_loc image_loc;          /* the IMAGE of `of IMAGE` */
    pf_loc *var_locs;          /* [n_vars] */
};

typedef enum pf_item_kind { PF_ITEM_IMAGE, PF_ITEM_SCALAR, PF_ITEM_STAGE } pf_item_kind;

/* One entry of the pipeline body, in program order. */
typedef struct pf_item {
    pf_item_kind kind;
    pf_loc loc;
    pf_image_decl *image;      /* IMAGE */
    /* SCALAR */
    const char *scalar_name;
    pf_type scalar_type;
    pf_expr *scalar_init;
    pf_symbol *scalar_sym;
    pf_stage *stage;           /* STAGE */
} pf_item;

typedef struct pf_param_decl {
    const char *name;
    pf_loc loc;
    pf_type type;
    pf_expr *init;
    pf_value default_value;    /* after checking */
    pf_symbol *sym;
} pf_param_decl;

typedef struct pf_const_decl {
    const char *name;
    pf_loc loc;
    pf_type type;
    pf_expr *len_expr;         /* array length or NULL */
    int n_init;
    pf_expr **init;            /* scalar: 1; array: the initializer list */
    pf_symbol *sym;
} pf_const_decl;

/* A perforable loop: a stage, or a named `for` loop inside a stage. */
typedef enum pf_loop_kind { PF_LOOP_STAGE, PF_LOOP_FOR } pf_loop_kind;

typedef struct pf_loop_info {
    pf_loop_kind kind;
    const char *name;
    pf_loc loc;
    pf_stage *stage;           /* STAGE: the stage; FOR: the enclosing stage */
    pf_stmt *stmt;             /* FOR: the loop statement */
    int depth;                 /* FOR: nesting depth of named/unnamed for loops in the stage:
                                  1 for a loop not inside another `for`, 2 inside one, ...;
                                  STAGE: 0 */
} pf_loop_info;

/* Top-level declaration order, for the printer. */
typedef enum pf_decl_kind { PF_DECL_PARAM, PF_DECL_CONST, PF_DECL_FUNC, PF_DECL_PIPELINE }
    pf_decl_kind;
typedef struct pf_decl_ref {
    pf_decl_kind kind;
    int index;                 /* into params / consts / funcs */
} pf_decl_ref;

typedef struct pf_program {
    pf_arena arena;            /* owns every node of this program */
    const char *file_name;
    const char *source;        /* NUL-terminated copy of the source text */
    int n_decls;
    pf_decl_ref *decls;        /* source order of top-level declarations */
    int n_params, n_consts, n_funcs;
    pf_param_decl **params;
    pf_const_decl **consts;
    pf_func **funcs;
    /* the pipeline */
    const char *name;
    pf_loc loc;
    int n_inputs, n_outputs;
    pf_image_decl **inputs, **outputs;
    int n_items;
    pf_item **items;
    /* after checking */
    bool checked;
    int n_images;
    pf_image_decl **images;    /* inputs, then outputs, then locals in declaration order */
    int n_sizes;
    pf_symbol **sizes;         /* size names in order of first appearance in the inputs */
    int n_scalars;
    pf_symbol **scalars;       /* pipeline scalars in program order */
    int n_stages;
    pf_stage **stages;         /* program order */
    int n_loops;
    pf_loop_info *loops;       /* stages and named for loops, in source order */
    /* Added by the front end (appended): */
    int n_scalar_slots;        /* frame size for evaluating pipeline scalar initializers (their
                                  reduction variables' slots start at 0 in each initializer) */
} pf_program;

void pf_program_free(pf_program *prog);  /* frees the arena and the program */

/* Helpers used by every consumer of the tree. */
const char *pf_type_name(pf_type t);
const char *pf_op_name(pf_op op);               /* "+", "<=", "!" ... */
const char *pf_builtin_name(pf_builtin b);
const pf_loop_info *pf_program_find_loop(const pf_program *prog, const char *name);
const pf_image_decl *pf_program_find_image(const pf_program *prog, const char *name);

#endif
