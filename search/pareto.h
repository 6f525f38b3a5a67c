/* Pareto ranking on (error, time), both minimised, as the released GA does it, and the quality
 * numbers of a frontier: the area under it up to an error cap (ours) and the released GA's
 * convergence area. Invalid points carry +inf (or NaN, read as +inf) in both coordinates.
 *
 *   points (error, time): (0, 1) (1, .5) (2, .6) (3, .2)  ->  ranks 0 0 1 0 */
#ifndef PF_SEARCH_PARETO_H
#define PF_SEARCH_PARETO_H

/* rank[i] for n points by repeated non-dominated peeling: each front is found by sorting the
 * remaining points on (error, time) and keeping each point whose time is strictly lower than
 * the last kept point's (the first is always kept). Ties keep index order. */
void pf_pareto_rank(const double *time, const double *error, int n, int *rank);

/* The rank-0 points, as indices sorted by error (ascending; time then descends). Returns the
 * count; out has room for n. Invalid points (non-finite) are never on the front. */
int pf_pareto_front(const double *time, const double *error, int n, int *out);

/* Our area, lower is better, in (0, 1]: with T(e) = min(1, min { time_i : error_i <= e }) the
 * best relative time achievable within an error budget e (the exact program, time 1 at error
 * 0, is always achievable), area = (1/cap) * integral of T(e) for e from 0 to cap: the mean
 * relative time over error budgets 0 .. cap. 1 means no speedup at any budget; 0.2 means 5x
 * on average. Works on any point set (a re-measured, non-monotone frontier included). */
double pf_frontier_area(const double *time, const double *error, int n, double cap);

/* The released GA's convergence area (paper-apps.md §9): on the rank-0 points sorted by
 * time, +inf if the fastest is slower than 0.6; else drop points with time >= 1, append
 * (1, 0), move the left end to exactly 0.6 by linear interpolation and integrate error over
 * time by the trapezoid rule. (Released on the summed time; we give it the mean.) */
double pf_frontier_area_released(const double *time, const double *error, int n);

/* The lowest time among points with error <= cap (1 if none is below 1): 1/speedup. */
double pf_frontier_best_time(const double *time, const double *error, int n, double cap);

#endif
