/* The numerics of the search's models (search/model.h): ridge least squares, the
 * sum-of-exponentials fit of the time model, and the accuracy figures (Spearman's rank
 * correlation, relative errors). Plain C, deterministic: the same data give the same bits, so a
 * resumed search refits the same models (docs/search.md §10).
 *
 *   ridge:   beta = argmin sum_i w_i (x_i . beta - y_i)^2 + lambda |beta - prior|^2
 *   sumexp:  p_i = sum over the terms k of sample i of exp(o_k + z_k . beta), fitted on
 *            (log p_i - log y_i)^2 + lambda |beta - prior|^2 (relative errors, any scale) */
#ifndef PF_SEARCH_MODEL_FIT_H
#define PF_SEARCH_MODEL_FIT_H

#include <stdbool.h>

/* Ridge regression: X is n x d row-major, w the sample weights (NULL: 1), prior the values the
 * penalty pulls towards (NULL: 0). Returns 0, or -1 when the system is singular (lambda 0 and
 * too few samples). */
int pf_fit_ridge(const double *X, const double *y, const double *w, int n, int d, double lambda,
                 const double *prior, double *beta);

/* The data of a sum-of-exponentials model: sample i owns terms [first[i], first[i + 1]); term k
 * has an offset off[k] and features z[k * d .. k * d + d). */
typedef struct pf_sumexp_data {
    int n, d;
    const int *first;      /* [n + 1] */
    const double *off;     /* [first[n]] */
    const double *z;       /* [first[n] * d] */
} pf_sumexp_data;

/* Prediction of sample i under beta. */
double pf_sumexp_predict(const pf_sumexp_data *D, int i, const double *beta);
/* Fits beta (in: the starting point, out: the fit) to targets y > 0 by damped Gauss-Newton
 * (Levenberg-Marquardt) on log residuals. Returns the iterations used, or -1. */
int pf_sumexp_fit(const pf_sumexp_data *D, const double *y, double lambda, const double *prior,
                  double *beta);

/* Spearman's rank correlation of a and b (average ranks for ties); NaN when n < 3 or either
 * is constant. */
double pf_spearman(const double *a, const double *b, int n);
/* Relative errors |pred - meas| / meas: their median and mean. */
void pf_relative_error(const double *pred, const double *meas, int n, double *median,
                       double *mean);
/* The median of v[0..n) (v is not modified); NaN when n is 0. */
double pf_fit_median(const double *v, int n);
/* The spread of v[0..n) > 0: the interquartile range of log(v) (medians of the lower and upper
 * halves); NaN when n is 0. A rank correlation over a narrow spread says little about the
 * model: the same relative errors scramble more of the order. */
double pf_fit_log_iqr(const double *v, int n);
/* The median of log(meas / pred): > 0 when the predictions are optimistic (too low). */
double pf_fit_log_bias(const double *pred, const double *meas, int n);
/* How far to trust predictions, learnt from predictions made before measuring (n pairs of
 * predicted and measured relative times): measured ~ pred^beta (a fit through exact, 1, on
 * logs: a model pulled towards its prior compresses the range, beta > 1), and the standard
 * deviation of log(measured / calibrated) growing with the distance from exact,
 * spread(pred) = a + b |log pred| (a least-squares fit of the absolute residuals, a, b >= 0,
 * times sqrt(pi / 2)): a child predicted near exact changes little of the program and is
 * predicted to within the noise, a coarse one is predicted far less well (bilateral filter,
 * seed 11: 3% on near-exact children, 20-40% on ones predicted 5-10x faster). */
typedef struct pf_calibration {
    double beta, a, b;
    int n;                 /* the pairs it was fitted on (0: beta 1, b 0, a the fallback) */
} pf_calibration;
/* Fits one to the pairs with pred and meas > 0; fewer than 5 of them: the fallback spread. */
void pf_fit_calibration(const double *pred, const double *meas, int n, double fallback,
                        pf_calibration *out);
/* The calibrated prediction of relative time t, and its spread (when not NULL). */
double pf_calibrated(const pf_calibration *c, double t, double *spread);

#endif
