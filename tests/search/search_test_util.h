/* Shared by the search suites: loading apps, a deterministic fake evaluator (no compiling, for
 * the GA and run-directory tests), and a small real evaluation config (blur on one 256x192
 * photo) for the pool tests. */
#ifndef PF_TESTS_SEARCH_UTIL_H
#define PF_TESTS_SEARCH_UTIL_H

#include "dataset/image.h"
#include "lang/lang.h"
#include "search/evaluate.h"

/* apps/NAME.pf, checked; NULL after a CUnit failure. */
pf_program *st_load_app(const char *name);
/* Every app under apps/, NULL-terminated. */
extern const char *const st_apps[];
/* The w x h RGB crop at (x, y) of data/images/train/man_made_1_256x192.png; fails the test
 * fatally when the photo cannot be read. */
pf_image *st_train_crop(int x, int y, int w, int h);

/* A fake evaluator: time and error are fixed functions of the schedule text (so runs are
 * reproducible to the bit), each evaluation sleeps delay_ms. *submitted counts submissions.
 * A record has one image whose `samples` are those the search asked for (5 by default). */
pf_evaluator *st_fake_evaluator(double delay_ms, long *submitted);
/* The same, except that the first training measurement of each schedule is its time x lucky
 * (a noisy measurement that came out low). */
pf_evaluator *st_fake_evaluator_lucky(double delay_ms, long *submitted, double lucky);
/* The same, for a multi-fidelity run: a low-fidelity measurement (PF_SET_LOW) is half the
 * training time and twice its error (st_fake_evaluator does the same), or with independent an
 * unrelated one (the fake measurement of another text). */
pf_evaluator *st_fake_evaluator_fidelity(double delay_ms, long *submitted, bool independent);
/* Makes a fake evaluator's wait never return once it has handed back `results` records: a
 * test that kills the process then kills it at a known point, not in a race with the end of
 * the run. */
void st_fake_stall_after(pf_evaluator *ev, long results);
/* The fake measurements of a text. */
void st_fake_measure(const char *text, double *time, double *error);

/* Blur on the first 256x192 training photo, 1 timing sample of >= 1 ms: a fast real config. */
void st_blur_config(pf_eval_config *c, int max_images);

/* Lines of a file (0 if missing). */
long st_count_lines(const char *path);

/* The whole text of run file name of run dir (malloc'd; NULL if it cannot be read). */
char *st_run_file(const char *dir, const char *name);

#endif
