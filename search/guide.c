/* Choosing the children to measure from the models' predictions (see guide.h). */
#include "search/guide.h"

#include "base/arena.h"
#include "search/evaluate.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Children predicted above the error cap, or without a finite prediction of one, rank after
 * every other (but still before none). */
#define OVER_CAP 1e6
/* Exploration picks children predicted at most this many times slower than the frontier,
 * except this share of its picks, drawn among all the rest (as the GA would measure them). */
#define PLAUSIBLE 1.5
#define EXPLORE_ANY 0.5

double pf_guide_front_time(const pf_front_point *front, int n, double error)
{
    double t = INFINITY;
    for (int i = 0; i < n; i++)
        if (front[i].error <= error && front[i].time < t)
            t = front[i].time;
    return t;
}

static double margin(const pf_front_point *front, int n, double time, double error,
                     double max_error)
{
    if (!isfinite(time) || !isfinite(error))
        return -OVER_CAP;  /* nothing known: as promising as can be */
    double m = log(time) - log(pf_guide_front_time(front, n, error));
    if (isnan(m))
        m = 0;
    return error > max_error ? m + OVER_CAP : m;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* E[max(0, K - X)] for X lognormal with median m and log standard deviation s > 0 (a put's
 * value): K Phi(-d2) - m exp(s^2 / 2) Phi(-d2 - s), d2 = log(m / K) / s. */
static double expected_shortfall(double K, double m, double s)
{
    if (!(K > 0))
        return 0;
    double d2 = log(m / K) / s;
    return K * 0.5 * erfc(d2 / M_SQRT2) - m * exp(s * s / 2) * 0.5 * erfc((d2 + s) / M_SQRT2);
}

/* The gain of a point at (error, time) with time's log standard deviation spread (0: time is
 * known): the area over budgets [error, cap] on which T is constant piecewise. */
static double gain(const pf_front_point *front, int n, double error, double time, double spread,
                   double cap)
{
    if (!(error < cap) || !isfinite(time))
        return 0;
    double *b = pf_xmalloc(sizeof *b * (size_t)(n + 2));
    int nb = 0;
    b[nb++] = fmax(0, error);
    for (int i = 0; i < n; i++)
        if (front[i].error > b[0] && front[i].error < cap)
            b[nb++] = front[i].error;
    qsort(b, (size_t)nb, sizeof *b, cmp_double);
    b[nb] = cap;
    double g = 0;
    for (int j = 0; j < nb; j++) {  /* T is constant on [b[j], b[j + 1]) */
        double T = fmin(1, pf_guide_front_time(front, n, b[j]));
        g += (spread > 0 ? expected_shortfall(T, time, spread) : fmax(0, T - time)) *
             (b[j + 1] - b[j]);
    }
    free(b);
    return g / cap;
}

double pf_guide_area_gain(const pf_front_point *front, int n, double error, double time,
                          double cap)
{
    return gain(front, n, error, time, 0, cap);
}

double pf_guide_expected_gain(const pf_front_point *front, int n, double error, double time,
                              double spread, double cap)
{
    return gain(front, n, error, time, fmax(0, spread), cap);
}

/* The unchosen child that would shrink the frontier's area most in expectation (its time
 * lognormal about the prediction with its spread); when none would, the one with the smallest
 * margin (the first on a tie). */
static int best_child(const double *pt, const double *pe, const double *spread, int n,
                      const bool *taken, const pf_front_point *front, int n_front,
                      double max_error)
{
    int best = -1, best_gain = -1;
    double best_m = INFINITY, best_g = 0;
    for (int i = 0; i < n; i++) {
        if (taken[i])
            continue;
        double g = isfinite(pt[i]) && isfinite(pe[i])
                       ? pf_guide_expected_gain(front, n_front, pe[i], pt[i],
                                                spread ? spread[i] : 0, max_error)
                       : 0;
        if (g > best_g) {
            best_gain = i;
            best_g = g;
        }
        double m = margin(front, n_front, pt[i], pe[i], max_error);
        if (best < 0 || m < best_m) {
            best = i;
            best_m = m;
        }
    }
    return best_gain >= 0 ? best_gain : best;
}

int pf_guide_explore_count(int k, double explore, pf_rng *rng)
{
    double x = fmax(0, explore) * k;
    int n = (int)floor(x);
    n += pf_rng_uniform(rng) < x - n;  /* on average explore x k */
    return n > k ? k : n;
}

int pf_guide_choose(const double *pred_time, const double *pred_error, const double *spread,
                    int n, const pf_front_point *front, int n_front, int k, double explore,
                    double max_error, pf_rng *rng, int *chosen, int *n_random)
{
    if (k > n)
        k = n;
    int n_explore = pf_guide_explore_count(k, explore, rng);
    bool *taken = pf_xcalloc((size_t)n + 1, sizeof *taken);
    int nf = n_front;
    pf_front_point *virt = pf_front_copy(front, n_front);
    int c = 0;
    for (; c < k - n_explore; c++) {
        int i = best_child(pred_time, pred_error, spread, n, taken, virt, nf, max_error);
        taken[i] = true;
        chosen[c] = i;
        /* at its optimistic time (a spread faster), so that near copies gain little more */
        double s = spread ? fmax(0, spread[i]) : 0;
        if (isfinite(pred_time[i]) && isfinite(pred_error[i]))
            pf_front_add(&virt, &nf, pred_error[i], pred_time[i] * exp(-s));
    }
    /* Exploration: uniformly among the plausible rest (predicted within PLAUSIBLE of the
     * frontier the measured points make), since measuring a child the models confidently place
     * far behind mostly teaches them little; but EXPLORE_ANY of the picks (and all when none
     * is plausible) among all the rest, since a model that learnt from a few slow children
     * that a gene is slow would otherwise never measure it again (docs/search.md §10, the
     * bilateral filter's execution genes). */
    bool *plausible = pf_xcalloc((size_t)n + 1, sizeof *plausible);
    int n_plausible = 0;
    for (int i = 0; i < n; i++) {
        plausible[i] = !taken[i] && margin(front, n_front, pred_time[i], pred_error[i],
                                           max_error) < log(PLAUSIBLE);
        n_plausible += plausible[i];
    }
    for (; c < k; c++) {
        bool among_plausible = n_plausible > 0 && pf_rng_uniform(rng) >= EXPLORE_ANY;
        int r = pf_rng_below(rng, among_plausible ? n_plausible : n - c), i = -1;
        while (r >= 0) {
            i++;
            r -= !taken[i] && (!among_plausible || plausible[i]);
        }
        taken[i] = true;
        n_plausible -= plausible[i];
        plausible[i] = false;
        chosen[c] = i;
    }
    free(plausible);
    if (n_random)
        *n_random = n_explore;
    free(virt);
    free(taken);
    return k;
}
