/* Helpers shared by the interpreter's test files: small dense images, compiling a program from
 * a string, binding and running it, and calling a helper function. */
#ifndef PF_TESTS_INTERP_TEST_INTERP_UTIL_H
#define PF_TESTS_INTERP_TEST_INTERP_UTIL_H

#include "interp/interp.h"

/* A dense image: element (i0, i1, i2, i3) at data[i0 + e0 * (i1 + e1 * (i2 + e2 * i3))]. */
typedef struct ti_image {
    int ndims;
    int64_t ext[4];
    float *data;
} ti_image;

ti_image ti_new(int ndims, int64_t e0, int64_t e1, int64_t e2, int64_t e3);
/* A 1-D image holding the n values. */
ti_image ti_vec(int n, const float *values);
void ti_free(ti_image *im);
float ti_at(const ti_image *im, int64_t i0, int64_t i1, int64_t i2, int64_t i3);
void ti_set(ti_image *im, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v);

/* Parses and checks src; on failure prints the diagnostics and returns NULL. */
pf_program *ti_compile(const char *src);

/* Binds prog to the inputs, allocates the outputs (filled with 99 first, so a test sees that
 * the run overwrites every element), applies "name=value" params and runs the interpreter.
 * outs[] must hold prog->n_outputs entries (zeroed first, allocated once bound); the caller
 * frees them, also after a failure. Returns 0 or -1 (err). */
int ti_run(const pf_program *prog, const char *const *params, int n_params, ti_image *ins,
           ti_image *outs, pf_error *err);

/* Compiles src, runs it on the inputs and frees the program; -1 when anything fails (the
 * message printed). */
int ti_run_src(const char *src, ti_image *ins, ti_image *outs);

/* Calls helper function `name` of prog (default params). */
pf_value ti_call(const pf_program *prog, const char *name, int n, const pf_value *args);
pf_value ti_i(int32_t i);
pf_value ti_f(float f);
pf_value ti_b(bool b);

#endif
