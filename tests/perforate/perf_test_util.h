/* Shared helpers of the perforate/ tests: loading the bundled apps and small inline programs,
 * a seeded generator of random legal genes, and counting what a plan approximates. */
#ifndef PF_TESTS_PERFORATE_UTIL_H
#define PF_TESTS_PERFORATE_UTIL_H

#include "lang/lang.h"
#include "perforate/plan.h"
#include "perforate/schedule.h"

#include <stdint.h>

/* The apps under apps/, by file name without ".pf"; NULL-terminated. */
extern const char *const pt_apps[];

/* Loads apps/NAME.pf (checked); fails the test fatally when it does not load. */
pf_program *pt_load_app(const char *name);
/* Compiles an inline program (checked); NULL (and a printed message) when it fails. */
pf_program *pt_compile(const char *name, const char *source);

/* Parses text as "t.sched"; on failure returns -1 with the message in err. */
int pt_parse(const pf_program *prog, const char *text, pf_schedule *out, pf_error *err);
/* The canonical text (caller frees). */
char *pt_print(const pf_program *prog, const pf_schedule *s);

/* xorshift64*: reproducible across platforms. */
uint64_t pt_rand(uint64_t *state);
int pt_rand_int(uint64_t *state, int lo, int hi);  /* inclusive */

/* A random gene that is legal on loop `loop` (drawn from pf_perforable_info), with fractions
 * and sigmas of up to 9 significant digits so rounding to the canonical 6 is exercised. */
void pt_random_gene(const pf_program *prog, int loop, uint64_t *state, pf_approx_gene *g);
void pt_fix_references(const pf_program *prog, pf_schedule *s);
/* A representative legal gene of kind `kind` on loop `loop` (the kind must be legal there). */
void pt_sample_gene(const pf_program *prog, int loop, pf_gene_kind kind, pf_approx_gene *g);

/* What a plan approximates: stages, named loops, image reads that reconstruct on demand. */
typedef struct pt_counts {
    int stages, loops, reads;
} pt_counts;
pt_counts pt_count_plan(const pf_plan *plan);

#endif
