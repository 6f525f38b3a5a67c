/* The front end's entry points: parse, check, print; run-time parameter values; binding a
 * program's signature to actual input extents. */
#ifndef PF_LANG_LANG_H
#define PF_LANG_LANG_H

#include "base/error.h"
#include "base/strbuf.h"
#include "lang/ast.h"
#include "lang/diag.h"

#include <stddef.h>

#define PF_SOURCE_MAX_BYTES ((size_t)4 << 20)

/* Parses source text. Returns the (unchecked) program, or NULL when there were syntax errors
 * (all reported in diags). Never crashes; recursion depth and sizes are bounded. */
pf_program *pf_parse(const char *file_name, const char *source, size_t len, pf_diags *diags);

/* Resolves, type-checks and folds a parsed program in place. Returns 0, or -1 with errors in
 * diags. */
int pf_check(pf_program *prog, pf_diags *diags);

/* Reads a file, parses and checks it. On failure returns NULL and renders every diagnostic
 * (or the I/O error) into err. */
pf_program *pf_load_program(const char *path, pf_error *err);
/* The same from a string (name used in messages). */
pf_program *pf_compile_string(const char *name, const char *source, pf_error *err);
/* The two halves of pf_load_program, for showing each (perfora run --dump parse, check):
 * read and parse without checking; check a parsed program. Diagnostics rendered into err. */
pf_program *pf_load_unchecked(const char *path, pf_error *err);
int pf_check_program(pf_program *prog, pf_error *err);

/* Pretty-prints a parsed (or checked) program as source that parses back to the same AST.
 * Implicit casts are omitted. */
void pf_print_program(const pf_program *prog, pf_strbuf *out);
void pf_print_expr(const pf_expr *e, pf_strbuf *out);
/* A summary of a checked program: its inputs and outputs with their extents, every stage (of
 * which image, over which variables, serial or not) and named loop (`perfora check`). */
void pf_describe_program(const pf_program *prog, pf_strbuf *out);

/* Structural equality of two parsed programs (used by the round-trip tests). */
bool pf_program_equal(const pf_program *a, const pf_program *b);

/* ---- run-time parameters ---- */

typedef struct pf_param_values {
    int n;
    pf_value *values;    /* values[i] for prog->params[i] */
} pf_param_values;

void pf_params_init(pf_param_values *pv, const pf_program *prog);  /* the defaults */
void pf_params_free(pf_param_values *pv);
/* Applies "name=value"; the value is parsed by the param's type. */
int pf_params_set(pf_param_values *pv, const pf_program *prog, const char *assignment,
                  pf_error *err);

/* ---- binding a run ---- */

#define PF_MAX_DIMS 4
/* Helpers are inlined where they are called (codegen/lower_expr.c): calls nest at most this
 * deep (f calls g calls h ...), and a function, stage or pipeline scalar with its calls inlined
 * is at most this many nodes (lang/walk.h; checked by pf_check, language.md §10). */
#define PF_MAX_CALL_DEPTH 500
#define PF_MAX_INLINED_NODES 100000
#define PF_MAX_IMAGE_ELEMS ((int64_t)1 << 31)
/* An extent is at most 2^30: loop arithmetic over a dimension (an index plus a step, a tile or
 * a sampling spacing, all capped there too) then never passes 2^31 - 1 (codegen/lower_stage.c). */
#define PF_MAX_EXTENT ((int64_t)1 << 30)

/* The concrete extents of every image and the values of every size name and pipeline scalar
 * for one run. Inputs' extents are given by the caller (in dimension order). */
typedef struct pf_binding {
    int n_images;
    int64_t (*extents)[PF_MAX_DIMS];  /* [n_images][dim]; unused dims are 1 */
    int n_sizes;
    int32_t *sizes;
} pf_binding;

/* Checks the inputs' extents against the declarations (equal size names, constant extents),
 * evaluates every image's extents (each 1 to PF_MAX_EXTENT, each image <= PF_MAX_IMAGE_ELEMS
 * elements) and
 * reports mismatches naming the image and dimension. */
int pf_bind(const pf_program *prog, const pf_param_values *params,
            const int64_t input_extents[][PF_MAX_DIMS], pf_binding *out, pf_error *err);
void pf_binding_free(pf_binding *b);

/* Evaluates a shape expression (docs/language.md, Section 4: literals, consts, params, sizes,
 * builtins, and pipeline scalars defined by shape expressions) — extents and `over` ranges.
 * Returns -1 if the expression needs anything else. */
int pf_eval_const_expr(const pf_expr *e, const pf_param_values *params, const int32_t *sizes,
                       pf_value *out);

#endif
