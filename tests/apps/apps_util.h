/* Shared plumbing of the apps/ tests: load a pipeline, run it under the reference interpreter on
 * a pf_image, build test images, and compare with the plain-C references the suites carry. */
#ifndef PF_TESTS_APPS_UTIL_H
#define PF_TESTS_APPS_UTIL_H

#include "dataset/image.h"
#include "lang/lang.h"

/* The tolerance of every comparison with a C reference (the acceptance bound). */
#define APPS_TOL 1e-5f

/* The training photos: the three 256x192 ones first, then the three 820x614 ones. */
#define APPS_N_PHOTOS 6
#define APPS_N_SMALL_PHOTOS 3
extern const char *const apps_photos[APPS_N_PHOTOS];

/* Loads and checks apps/NAME.pf; NULL (after a CUnit failure with the message) on error. */
pf_program *apps_load(const char *name);

/* Runs the single-input, single-output pipeline under the interpreter with its default params
 * plus the `name=value` assignments in `params` (NULL-terminated, may be NULL). Returns the
 * output (NULL after a CUnit failure); *seconds gets the interpreter's wall time if not NULL. */
pf_image *apps_run(const pf_program *prog, const pf_image *in, const char *const *params,
                   double *seconds);

/* A training photo (data/images/train/FILE) as RGB, or NULL after a CUnit failure. */
pf_image *apps_photo(const char *file);
/* Deterministic pseudo-random samples in [0, 1], quantised to 8 bits like a photo. */
pf_image *apps_noise_image(int w, int h, int c, unsigned seed);

/* Max |a - b| over all samples; +inf if the shapes differ or only one side is NaN. */
float apps_max_diff(const pf_image *a, const pf_image *b);

/* Asserts max diff <= APPS_TOL, prints the measurement, and saves `got` as
 * $PF_APPS_OUT/<app>_<label>.png when PF_APPS_OUT is set (to look at the pictures). */
void apps_expect_match(const char *app, const char *label, const pf_image *got,
                       const pf_image *want, double seconds);

/* True when PF_APPS_FULL is set: artistic blur (the slow app) then runs on all six photos. */
int apps_full(void);

/* Clamped read, the language's default boundary (for references that need it explicitly). */
float apps_at_clamped(const pf_image *img, int x, int y, int c);

#endif
