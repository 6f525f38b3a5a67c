/* Multi-fidelity measurement (docs/search.md §10): a candidate is measured first on small
 * training images (PF_SET_LOW) and promoted to the full resolution only when it stays
 * promising there; the relation between the two fidelities is measured over the promoted
 * candidates, never assumed. Pure functions: the run's side is results/tune_fidelity.c.
 *
 *   promote(c)  = valid at low fidelity and
 *                 (no point of the low-fidelity frontier with no more error is faster than
 *                  (1 - margin) x c's low time,  or  draw(c) < explore)
 *   draw(c)     = a number in [0, 1) from c's schedule text and the run's seed: the random
 *                 share that keeps the measured relation from seeing only the promising ones,
 *                 a function of the text so that a resumed run promotes the same children */
#ifndef PF_SEARCH_FIDELITY_H
#define PF_SEARCH_FIDELITY_H

#include "search/eval.h"

#include <stdbool.h>
#include <stdint.h>

double pf_fidelity_draw(const char *text, uint64_t seed);

/* Whether a candidate measured at low fidelity (error, time; not finite: invalid) goes on to
 * the full resolution, given the low-fidelity frontier (of every low-fidelity measurement so
 * far, its own included). *random, when not NULL, says it was promoted by the draw alone. */
bool pf_fidelity_promote(const pf_front_point *low_front, int n, double error, double time,
                         double margin, double explore, const char *text, uint64_t seed,
                         bool *random);

/* How the low-fidelity measurements relate to the full-resolution ones of the same candidates
 * (pairs: both valid). */
typedef struct pf_fidelity_relation {
    int pairs;
    double time_rho, error_rho;   /* Spearman's rank correlation, low against full (NaN: < 3) */
    double time_ratio;            /* median of full / low relative time (1 with no pair) */
    double error_ratio;           /* median of full / low error over pairs whose errors are both
                                     >= 0.01 Lab (1 with none) */
    double time_rel_err;          /* median |time_ratio x low - full| / full: how well a
                                     calibrated low-fidelity time says the full one (NaN: none) */
} pf_fidelity_relation;

void pf_fidelity_relate(const double *low_time, const double *low_error,
                        const double *full_time, const double *full_error, int n,
                        pf_fidelity_relation *out);

#endif
