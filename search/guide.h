/* Which bred children to measure (docs/search.md §10): given the models' predictions for
 * a pool of children and the measured training frontier, choose k of them: most by how much
 * the models say they would improve the frontier, the rest (the exploration share) at random,
 * so that the models keep learning where they are wrong. The frontier is never changed here: a
 * chosen child is measured before anything is concluded from it.
 *
 *   gain(c)   = the frontier area (the bench's quality number) that c is expected to remove,
 *               its time lognormal about the prediction with c's spread (how far the models
 *               may be off for c: results/tune_model.c calibrates it on the run's predictions,
 *               small near the exact time, larger for a child predicted far from it), so that
 *               a child predicted a little behind where the models are sure gains little, and
 *               one predicted behind where they often err may well be ahead
 *   margin(c) = log(pred_time(c)) - log(T(pred_error(c)))   when no child has a gain
 *
 * with T(e) the lowest time at error <= e on the frontier extended by the children already
 * chosen (at their optimistic times, a spread faster than predicted), so that each pick is
 * promising compared with the picks before it too (a pool's near-copies of one good child are
 * not all measured). Children predicted above the error cap come last. */
#ifndef PF_SEARCH_GUIDE_H
#define PF_SEARCH_GUIDE_H

#include "search/eval.h"
#include "search/rng.h"

/* Chooses up to k of the n children (predicted time and error; NaN: no prediction, treated as
 * promising; spread: each prediction's log standard deviation, NULL: none) given the measured
 * frontier; writes their indices to chosen, the exploited ones first. explore is the share of k
 * chosen at random (pf_guide_explore_count; *n_random, when not NULL, says how many): each
 * pick, with probability 1/2, among the children predicted at most 1.5x slower than the
 * measured frontier (when there are any), else among all the rest. Returns the count
 * (min(k, n)). */
int pf_guide_choose(const double *pred_time, const double *pred_error, const double *spread,
                    int n, const pf_front_point *front, int n_front, int k, double explore,
                    double max_error, pf_rng *rng, int *chosen, int *n_random);

/* The area (over error budgets 0..cap, as pf_frontier_area) that the point (error, time) would
 * remove from the frontier's: (1/cap) x the integral over budgets b in [error, cap] of
 * max(0, T(b) - time), T(b) at most 1. */
double pf_guide_area_gain(const pf_front_point *front, int n, double error, double time,
                          double cap);
/* Its expectation when time is lognormal with median `time` and log standard deviation spread
 * (0: pf_guide_area_gain). */
double pf_guide_expected_gain(const pf_front_point *front, int n, double error, double time,
                              double spread, double cap);

/* How many of k are chosen at random: explore x k, its fraction rounded up with that
 * probability (so that a small k explores explore x k on average). */
int pf_guide_explore_count(int k, double explore, pf_rng *rng);

/* T(e): the lowest time among points with error <= e (+inf when none). */
double pf_guide_front_time(const pf_front_point *front, int n, double error);

#endif
