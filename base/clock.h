/* Clocks in milliseconds and the median and quantiles of a sample: what every timing in perfora (the
 * search's measurements, `perfora run --time`, the benches, compile-phase times) reads. */
#ifndef PF_BASE_CLOCK_H
#define PF_BASE_CLOCK_H

double pf_now_ms(void);         /* wall clock (CLOCK_MONOTONIC) */
double pf_cpu_ms(void);         /* CPU time of the whole process, all threads */
double pf_thread_cpu_ms(void);  /* CPU time of the calling thread */

/* The median of v[0 .. n-1] (n >= 1; the mean of the middle two when n is even). v is not
 * changed. */
double pf_median(const double *v, int n);
/* The q-quantile (0 <= q <= 1) of v[0 .. n-1], interpolated between order statistics (q 0.25
 * and 0.75: the quartiles of a timing's spread). v is not changed. */
double pf_quantile(const double *v, int n, double q);

#endif
