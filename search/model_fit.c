/* Ridge least squares, the sum-of-exponentials fit (Levenberg-Marquardt on log residuals) and
 * the accuracy figures of the search's models (see model_fit.h). */
#include "search/model_fit.h"

#include "base/arena.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Solves A x = b for a symmetric positive definite d x d matrix A (overwritten by its Cholesky
 * factor). Returns -1 when A is not positive definite. */
static int cholesky_solve(double *A, const double *b, int d, double *x)
{
    for (int j = 0; j < d; j++) {
        double s = A[j * d + j];
        for (int k = 0; k < j; k++)
            s -= A[j * d + k] * A[j * d + k];
        if (!(s > 1e-300))
            return -1;
        A[j * d + j] = sqrt(s);
        for (int i = j + 1; i < d; i++) {
            double t = A[i * d + j];
            for (int k = 0; k < j; k++)
                t -= A[i * d + k] * A[j * d + k];
            A[i * d + j] = t / A[j * d + j];
        }
    }
    for (int i = 0; i < d; i++) {  /* L y = b */
        double t = b[i];
        for (int k = 0; k < i; k++)
            t -= A[i * d + k] * x[k];
        x[i] = t / A[i * d + i];
    }
    for (int i = d - 1; i >= 0; i--) {  /* L^T x = y */
        double t = x[i];
        for (int k = i + 1; k < d; k++)
            t -= A[k * d + i] * x[k];
        x[i] = t / A[i * d + i];
    }
    return 0;
}

int pf_fit_ridge(const double *X, const double *y, const double *w, int n, int d, double lambda,
                 const double *prior, double *beta)
{
    double *A = pf_xcalloc((size_t)(d * d + d) + 1, sizeof *A), *b = A + d * d;
    for (int i = 0; i < n; i++) {
        const double *x = X + (size_t)i * d;
        double wi = w ? w[i] : 1.0;
        for (int j = 0; j < d; j++) {
            b[j] += wi * x[j] * y[i];
            for (int k = 0; k <= j; k++)
                A[j * d + k] += wi * x[j] * x[k];
        }
    }
    for (int j = 0; j < d; j++) {
        A[j * d + j] += lambda;
        b[j] += lambda * (prior ? prior[j] : 0.0);
        for (int k = 0; k < j; k++)
            A[k * d + j] = A[j * d + k];
    }
    int rc = cholesky_solve(A, b, d, beta);
    free(A);
    return rc;
}

/* ---- sum of exponentials ---- */

/* log p_i and, when g is not NULL, its gradient in beta (the terms' softmax weights times
 * their features). */
static double log_predict(const pf_sumexp_data *D, int i, const double *beta, double *g)
{
    int d = D->d;
    double m = -INFINITY;
    for (int k = D->first[i]; k < D->first[i + 1]; k++) {
        double e = D->off[k];
        for (int j = 0; j < d; j++)
            e += D->z[(size_t)k * d + j] * beta[j];
        if (e > m)
            m = e;
    }
    if (!isfinite(m))
        return m;
    double s = 0;
    if (g)
        memset(g, 0, sizeof *g * (size_t)d);
    for (int k = D->first[i]; k < D->first[i + 1]; k++) {
        double e = D->off[k];
        for (int j = 0; j < d; j++)
            e += D->z[(size_t)k * d + j] * beta[j];
        double t = exp(e - m);
        s += t;
        for (int j = 0; g && j < d; j++)
            g[j] += t * D->z[(size_t)k * d + j];
    }
    for (int j = 0; g && j < d; j++)
        g[j] /= s;
    return m + log(s);
}

double pf_sumexp_predict(const pf_sumexp_data *D, int i, const double *beta)
{
    return exp(log_predict(D, i, beta, NULL));
}

static double cost(const pf_sumexp_data *D, const double *ly, double lambda, const double *prior,
                   const double *beta)
{
    double c = 0;
    for (int i = 0; i < D->n; i++) {
        double r = log_predict(D, i, beta, NULL) - ly[i];
        c += r * r;
    }
    for (int j = 0; j < D->d; j++) {
        double p = beta[j] - (prior ? prior[j] : 0.0);
        c += lambda * p * p;
    }
    return isfinite(c) ? c : INFINITY;
}

/* The normal equations of one Gauss-Newton step: A = J^T J + lambda I, b = -(J^T r +
 * lambda (beta - prior)). */
static void normal_equations(const pf_sumexp_data *D, const double *ly, double lambda,
                             const double *prior, const double *beta, double *A, double *b,
                             double *g)
{
    int d = D->d;
    memset(A, 0, sizeof *A * (size_t)(d * d));
    memset(b, 0, sizeof *b * (size_t)d);
    for (int i = 0; i < D->n; i++) {
        double r = log_predict(D, i, beta, g) - ly[i];
        for (int j = 0; j < d; j++) {
            b[j] -= g[j] * r;
            for (int k = 0; k <= j; k++)
                A[j * d + k] += g[j] * g[k];
        }
    }
    for (int j = 0; j < d; j++) {
        A[j * d + j] += lambda;
        b[j] -= lambda * (beta[j] - (prior ? prior[j] : 0.0));
        for (int k = 0; k < j; k++)
            A[k * d + j] = A[j * d + k];
    }
}

#define LM_ITERATIONS 100
#define LM_TRIES 12

int pf_sumexp_fit(const pf_sumexp_data *D, const double *y, double lambda, const double *prior,
                  double *beta)
{
    int d = D->d;
    double *ly = pf_xmalloc(sizeof *ly * (size_t)(D->n + 1));
    double *A = pf_xmalloc(sizeof *A * (size_t)(2 * d * d + 4 * d + 1));
    double *M = A + d * d, *b = M + d * d, *g = b + d, *step = g + d, *trial = step + d;
    for (int i = 0; i < D->n; i++)
        ly[i] = log(y[i]);
    double c = cost(D, ly, lambda, prior, beta), mu = 1e-3;
    int it = 0;
    for (; it < LM_ITERATIONS; it++) {
        normal_equations(D, ly, lambda, prior, beta, A, b, g);
        bool improved = false;
        double c_new = c;
        for (int t = 0; t < LM_TRIES && !improved; t++, mu *= 4) {
            memcpy(M, A, sizeof *M * (size_t)(d * d));
            for (int j = 0; j < d; j++)
                M[j * d + j] += mu * (A[j * d + j] + 1e-9);
            if (cholesky_solve(M, b, d, step) != 0)
                continue;
            for (int j = 0; j < d; j++)
                trial[j] = beta[j] + step[j];
            c_new = cost(D, ly, lambda, prior, trial);
            improved = c_new < c;
        }
        if (!improved)
            break;
        memcpy(beta, trial, sizeof *beta * (size_t)d);
        mu = fmax(mu / 16, 1e-9);
        bool converged = c - c_new <= 1e-10 * (1 + c);
        c = c_new;
        if (converged)
            break;
    }
    free(A);
    free(ly);
    return it;
}

/* ---- accuracy ---- */

static const double *rank_key;
static int cmp_key(const void *x, const void *y)
{
    double a = rank_key[*(const int *)x], b = rank_key[*(const int *)y];
    if (a != b)
        return (a > b) - (a < b);
    return *(const int *)x - *(const int *)y;
}

/* Ranks 1..n, ties given their average rank. */
static void ranks(const double *v, int n, double *r)
{
    int *order = pf_xmalloc(sizeof *order * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        order[i] = i;
    rank_key = v;
    qsort(order, (size_t)n, sizeof *order, cmp_key);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && v[order[j + 1]] == v[order[i]])
            j++;
        for (int k = i; k <= j; k++)
            r[order[k]] = (i + j) / 2.0 + 1;
        i = j + 1;
    }
    free(order);
}

double pf_spearman(const double *a, const double *b, int n)
{
    if (n < 3)
        return NAN;
    double *ra = pf_xmalloc(sizeof *ra * 2 * (size_t)n), *rb = ra + n;
    ranks(a, n, ra);
    ranks(b, n, rb);
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < n; i++) {
        ma += ra[i] / n;
        mb += rb[i] / n;
    }
    for (int i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    free(ra);
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double pf_fit_median(const double *v, int n)
{
    if (n <= 0)
        return NAN;
    double *s = pf_xmalloc(sizeof *s * (size_t)n);
    memcpy(s, v, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

double pf_fit_log_iqr(const double *v, int n)
{
    if (n <= 0)
        return NAN;
    double *s = pf_xmalloc(sizeof *s * (size_t)n);
    for (int i = 0; i < n; i++)
        s[i] = log(v[i]);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    /* the medians of the lower and upper halves (the middle one in both when n is odd) */
    int h = (n + 1) / 2;
    double lo = pf_fit_median(s, h), hi = pf_fit_median(s + n - h, h);
    free(s);
    return hi - lo;
}

double pf_fit_log_bias(const double *pred, const double *meas, int n)
{
    double *r = pf_xmalloc(sizeof *r * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        r[i] = log(meas[i] / pred[i]);
    double m = pf_fit_median(r, n);
    free(r);
    return m;
}

/* Below this many pairs, a calibration is the fallback's. */
#define MIN_CALIBRATION 5

void pf_fit_calibration(const double *pred, const double *meas, int n, double fallback,
                        pf_calibration *out)
{
    double *x = pf_xmalloc(sizeof *x * 2 * (size_t)(n + 1)), *y = x + n, sxy = 0, sxx = 0;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (pred[i] > 0 && meas[i] > 0 && isfinite(pred[i]) && isfinite(meas[i])) {
            x[m] = log(pred[i]);
            y[m] = log(meas[i]);
            sxy += x[m] * y[m];
            sxx += x[m] * x[m];
            m++;
        }
    *out = (pf_calibration){ 1, fmax(0, fallback), 0, 0 };
    if (m >= MIN_CALIBRATION) {
        out->n = m;
        out->beta = sxx > 1e-12 ? fmin(2, fmax(0.5, sxy / sxx)) : 1;
        /* |residual| = a + b |x| by least squares; when that makes a or b negative, the
         * other alone */
        double *X = pf_xmalloc(sizeof *X * 3 * (size_t)m), *r = X + 2 * m, ab[2];
        double mean = 0, sxr = 0;
        for (int i = 0; i < m; i++) {
            X[2 * i] = 1;
            X[2 * i + 1] = fabs(x[i]);
            r[i] = fabs(y[i] - out->beta * x[i]);
            mean += r[i] / m;
            sxr += fabs(x[i]) * r[i];
        }
        if (pf_fit_ridge(X, r, NULL, m, 2, 1e-9, NULL, ab) != 0 || ab[1] < 0) {
            ab[0] = mean;
            ab[1] = 0;
        } else if (ab[0] < 0) {
            ab[0] = 0;
            ab[1] = sxx > 1e-12 ? sxr / sxx : 0;
        }
        free(X);
        double k = sqrt(M_PI / 2);  /* E|r| = s sqrt(2 / pi) for a normal */
        out->a = k * ab[0];
        out->b = k * ab[1];
    }
    free(x);
}

double pf_calibrated(const pf_calibration *c, double t, double *spread)
{
    if (spread)
        *spread = c->a + c->b * fabs(log(t));
    return pow(t, c->beta);
}

void pf_relative_error(const double *pred, const double *meas, int n, double *median,
                       double *mean)
{
    double *e = pf_xmalloc(sizeof *e * (size_t)(n + 1)), sum = 0;
    for (int i = 0; i < n; i++) {
        e[i] = fabs(pred[i] - meas[i]) / fabs(meas[i]);
        sum += e[i];
    }
    *median = pf_fit_median(e, n);
    *mean = n > 0 ? sum / n : NAN;
    free(e);
}
