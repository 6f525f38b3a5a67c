/* The interpreter's translator from the checked AST to register code, shared by its three
 * files: interp_compile.c (emission, slots, constants and their folding), interp_compile_expr.c
 * (expressions and conditional jumps) and interp_compile_stmt.c (statements, loop
 * perforation's test, and the units).
 * Private to interp/interp*.c. */
#ifndef PF_INTERP_COMPILE_H
#define PF_INTERP_COMPILE_H

#include "interp/interp_internal.h"

typedef struct pf_symslot {
    const pf_symbol *sym;
    int slot;
} pf_symslot;

typedef struct pf_icomp {
    const pf_program *prog;
    pf_icode *ic;
    pf_iunit *u;             /* the unit being compiled */
    pf_error *err;
    int failed;              /* the first error is kept; later emission is skipped */
    int func_index;          /* the function being compiled, or -1 */
    const pf_stage *stage;   /* the stage being compiled, or NULL */
    int (*calls)[2];         /* call edges (caller, callee) between helper functions */
    int n_calls, cap_calls;
    pf_symslot *map;         /* open-addressed symbol -> slot table of the unit */
    int map_cap, map_used;
    unsigned char *konst;    /* [n_slots]: the slot holds a literal (a VALUE fill) */
    int konst_cap;
    /* The last value-defining instruction: where it starts and ends and the temp it writes. */
    int def_pos, def_end, def_slot;
} pf_icomp;

/* A list of jump operands to patch once their target is known. */
typedef struct pf_ic_jumps {
    int n, cap;
    int *pos;
} pf_ic_jumps;

/* ---- emission (interp_compile.c) ---- */

int pf_ic_fail(pf_icomp *c, pf_loc loc, const char *what);  /* returns slot 0 */
void pf_ic_put(pf_icomp *c, int32_t w);
void pf_ic_put_n(pf_icomp *c, int n, const int32_t *w);
int pf_ic_new_slots(pf_icomp *c, int n);
/* Emits `op d, operands...` into a fresh temp d and returns d; remembered, so that an
 * assignment can make the instruction write its target directly (pf_ic_expr_into). */
int pf_ic_def_n(pf_icomp *c, pf_iop op, int n, const int32_t *operands);
void pf_ic_begin_unit(pf_icomp *c, pf_iunit *u);
void pf_ic_free(pf_icomp *c);

static inline int pf_ic_here(const pf_icomp *c) { return c->u->n_code; }

#define PF_IC_COUNT(...) ((int)(sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t)))
#define PF_IC_EMIT(c, ...) pf_ic_put_n((c), PF_IC_COUNT(__VA_ARGS__), (int32_t[]){__VA_ARGS__})
#define PF_IC_DEF(c, op, ...) \
    pf_ic_def_n((c), (op), PF_IC_COUNT(__VA_ARGS__), (int32_t[]){__VA_ARGS__})

/* Jump lists: add the operand just emitted; point every listed jump here. */
void pf_ic_jumps_add(pf_ic_jumps *j, int pos);
void pf_ic_jumps_patch(pf_icomp *c, pf_ic_jumps *j);

/* ---- symbols, operands, constants (interp_compile.c) ---- */

void pf_ic_map_put(pf_icomp *c, const pf_symbol *sym, int slot);
int pf_ic_map_get(pf_icomp *c, const pf_symbol *sym);  /* -1 if unmapped */
void pf_ic_map_reset(pf_icomp *c);
int pf_ic_const_slot(pf_icomp *c, pf_type t, pf_value v);
int pf_ic_const_int(pf_icomp *c, int32_t i);
int pf_ic_const_float(pf_icomp *c, float f);
int pf_ic_const_bool(pf_icomp *c, bool b);
/* Whether slot s holds a literal, and its value. */
bool pf_ic_const_value(const pf_icomp *c, int s, pf_value *v);
int pf_ic_name_slot(pf_icomp *c, const pf_expr *e);
int pf_ic_array_base(pf_icomp *c, const pf_symbol *sym, pf_loc loc, int *len);
int pf_ic_image_index(pf_icomp *c, const pf_symbol *sym, pf_loc loc);
/* Notes an access of image img at `index`: unless it is the current stage's own element, the
 * stage must run in order (pf_iunit.serial). */
void pf_ic_note_access(pf_icomp *c, int img, pf_expr *const *index);

/* ---- expressions (interp_compile_expr.c) ---- */

int pf_ic_expr(pf_icomp *c, const pf_expr *e);                  /* slot of e's value */
int pf_ic_expr_as(pf_icomp *c, const pf_expr *e, pf_type t);    /* converted to t */
void pf_ic_expr_into(pf_icomp *c, const pf_expr *e, pf_type t, int d);
void pf_ic_mov(pf_icomp *c, int d, int a);
int pf_ic_coerce(pf_icomp *c, int s, pf_type from, pf_type to, pf_loc loc);
/* d = acc op value (op an int or float add/sub/mul/div); a float product `value` is fused
 * into the add or subtract. */
void pf_ic_accumulate(pf_icomp *c, int d, int acc, pf_iop op, const pf_expr *value, pf_type t);
/* Emits jumps taken when the bool e is false (fused with a comparison where possible). */
void pf_ic_jump_if_false(pf_icomp *c, const pf_expr *e, pf_ic_jumps *j);
/* A counted loop over var (lo .. hi step st, st = -1 for 1): returns the position of the exit
 * operand; *body is where the body starts. */
int pf_ic_loop_open(pf_icomp *c, int var, int lo, int hi, int st, int *hi_p, int *st_p,
                    int *body);
void pf_ic_loop_close(pf_icomp *c, int var, int hi_p, int st_p, int body, int exit_pos);

/* ---- loop perforation (interp_compile_stmt.c) ---- */

/* Emits PERF_SKIP at the top of a perforated loop's body; returns its jump operand's
 * position. */
int pf_ic_perf_skip(pf_icomp *c, const pf_stmt *s, int var, int lo, int hi, int st);

#endif
