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

/* The unchosen child with the smallest margin (the first on a tie), or -1. */
static int best_child(const double *pt, const double *pe, int n, const bool *taken,
                      const pf_front_point *front, int n_front, double max_error)
{
    int best = -1;
    double best_m = INFINITY;
    for (int i = 0; i < n; i++) {
        if (taken[i])
            continue;
        double m = margin(front, n_front, pt[i], pe[i], max_error);
        if (best < 0 || m < best_m) {
            best = i;
            best_m = m;
        }
    }
    return best;
}

int pf_guide_explore_count(int k, double explore)
{
    int n = explore > 0 ? (int)lround(explore * k) : 0;
    if (explore > 0 && n < 1 && k >= 2)
        n = 1;
    return n > k ? k : n;
}

int pf_guide_choose(const double *pred_time, const double *pred_error, int n,
                    const pf_front_point *front, int n_front, int k, double explore,
                    double max_error, pf_rng *rng, int *chosen)
{
    if (k > n)
        k = n;
    int n_explore = pf_guide_explore_count(k, explore);
    bool *taken = pf_xcalloc((size_t)n + 1, sizeof *taken);
    int nf = n_front;
    pf_front_point *virt = pf_front_copy(front, n_front);
    int c = 0;
    for (; c < k - n_explore; c++) {
        int i = best_child(pred_time, pred_error, n, taken, virt, nf, max_error);
        taken[i] = true;
        chosen[c] = i;
        if (isfinite(pred_time[i]) && isfinite(pred_error[i]))
            pf_front_add(&virt, &nf, pred_error[i], pred_time[i]);
    }
    for (; c < k; c++) {  /* exploration: uniformly among the rest */
        int r = pf_rng_below(rng, n - c), i = -1;
        while (r >= 0)
            r -= !taken[++i];
        taken[i] = true;
        chosen[c] = i;
    }
    free(virt);
    free(taken);
    return k;
}
