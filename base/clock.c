/* Clocks and the median (clock.h). */
#include "base/clock.h"

#include "base/arena.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double read_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double pf_now_ms(void)
{
    return read_ms(CLOCK_MONOTONIC);
}

double pf_cpu_ms(void)
{
    return read_ms(CLOCK_PROCESS_CPUTIME_ID);
}

double pf_thread_cpu_ms(void)
{
    return read_ms(CLOCK_THREAD_CPUTIME_ID);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double pf_median(const double *v, int n)
{
    double *t = pf_xmalloc(sizeof *t * (size_t)n);
    memcpy(t, v, sizeof *t * (size_t)n);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double m = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    free(t);
    return m;
}

double pf_quantile(const double *v, int n, double q)
{
    double *t = pf_xmalloc(sizeof *t * (size_t)n);
    memcpy(t, v, sizeof *t * (size_t)n);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double k = q * (n - 1);
    int i = (int)k;
    double r = i + 1 < n ? t[i] + (k - i) * (t[i + 1] - t[i]) : t[i];
    free(t);
    return r;
}
