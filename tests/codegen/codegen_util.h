/* Helpers shared by the codegen test files: load a program and a photo, run a variant on it,
 * compare outputs. */
#ifndef PF_TESTS_CODEGEN_UTIL_H
#define PF_TESTS_CODEGEN_UTIL_H

#include "codegen/compile.h"
#include "dataset/image.h"
#include "lang/lang.h"
#include "perforate/plan.h"

#define CG_MAX_IO 4

typedef struct cg_run {
    int n_out;
    pf_image *out[CG_MAX_IO];
    double ms;  /* run time of the last run */
} cg_run;

pf_program *cg_load_app(const char *name);   /* apps/NAME.pf, fails the test on error */
pf_image *cg_load_photo(const char *name, int channels);  /* data/images/train/NAME */
pf_image *cg_synthetic(int w, int h, int channels, unsigned seed);

/* The plan of schedule text for this machine (NULL or "": the exact program); fails the test
 * fatally when the schedule is refused. Free with pf_plan_free. */
pf_plan *cg_plan(const pf_program *prog, const char *schedule);

/* Compiles prog exactly for `backend` and runs it on the inputs; returns 0 or -1 (message
 * printed). */
int cg_run_backend(const pf_program *prog, const pf_param_values *params, pf_backend backend,
                   bool no_bounds, pf_image **inputs, int n_inputs, cg_run *out);
/* A plan on a backend (the JIT compiles every other plan split into modules). */
int cg_run_plan(const pf_program *prog, const pf_param_values *params, const pf_plan *plan,
                pf_backend backend, pf_image **inputs, int n_inputs, cg_run *out);
/* Compiling once and running on many inputs (each run allocates fresh outputs). */
pf_variant *cg_compile(const pf_program *prog, const pf_param_values *params,
                       const pf_plan *plan, const pf_compile_options *o);
int cg_run_variant(pf_variant *v, const pf_program *prog, const pf_param_values *params,
                   pf_image **inputs, int n_inputs, cg_run *out);
void cg_run_free(cg_run *r);
/* Compiles prog exactly with options o[0] and o[1] (their stats in st[0], st[1]), runs both on
 * the one input and returns the max |difference| over the outputs (inf if either fails). */
double cg_diff_options(const pf_program *prog, pf_image *in, const pf_compile_options o[2],
                       pf_variant_stats st[2]);
/* The same for the plan of schedule (text; NULL or "": the exact program). */
double cg_diff_schedule_options(const pf_program *prog, const char *schedule, pf_image *in,
                                const pf_compile_options o[2], pf_variant_stats st[2]);
/* Max |a - b|; a NaN in both images at the same place counts as equal, NaN in one as inf. */
double cg_max_abs_diff(const pf_image *a, const pf_image *b);
/* Plans schedule (text) for prog, compiles it with the JIT and returns the final loop IR
 * (free it); fails the test on error. The loop nests are those lowering made: pass_collapse,
 * which merges a channel loop into the parallel loop inside it, is off. */
char *cg_ir_dump(const pf_program *prog, const char *schedule);
/* The same with pass_collapse on or off. */
char *cg_ir_dump_collapsed(const pf_program *prog, const char *schedule, bool collapse);
/* Occurrences of needle in text (overlapping ones too). */
int cg_count(const char *text, const char *needle);

#endif
