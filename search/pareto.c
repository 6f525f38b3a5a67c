/* Pareto ranking and frontier areas (see pareto.h). */
#include "search/pareto.h"

#include "base/arena.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pt {
    double time, error;
    int index;
} pt;

static double clean(double v)
{
    return isnan(v) ? INFINITY : v;
}

/* (error, time, index): a total order, so qsort is deterministic. */
static int cmp_error_time(const void *x, const void *y)
{
    const pt *a = x, *b = y;
    if (a->error != b->error)
        return a->error < b->error ? -1 : 1;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static pt *load_points(const double *time, const double *error, int n)
{
    pt *p = pf_xmalloc(sizeof *p * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        p[i] = (pt){ clean(time[i]), clean(error[i]), i };
    return p;
}

void pf_pareto_rank(const double *time, const double *error, int n, int *rank)
{
    pt *p = load_points(time, error, n);
    int left = n;
    for (int r = 0; left > 0; r++) {
        qsort(p, (size_t)left, sizeof *p, cmp_error_time);
        double last = INFINITY;
        int kept = 0;
        for (int i = 0; i < left; i++) {
            if (i == 0 || p[i].time < last) {
                rank[p[i].index] = r;
                last = p[i].time;
                p[i].index = -1 - p[i].index;  /* mark as peeled */
                kept++;
            }
        }
        int w = 0;
        for (int i = 0; i < left; i++)
            if (p[i].index >= 0)
                p[w++] = p[i];
        left -= kept;
    }
    free(p);
}

int pf_pareto_front(const double *time, const double *error, int n, int *out)
{
    pt *p = load_points(time, error, n);
    qsort(p, (size_t)n, sizeof *p, cmp_error_time);
    double last = INFINITY;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(p[i].time) && isfinite(p[i].error) && p[i].time < last) {
            out[m++] = p[i].index;
            last = p[i].time;
        }
    free(p);
    return m;
}

double pf_frontier_area(const double *time, const double *error, int n, double cap)
{
    if (!(cap > 0))
        return NAN;
    pt *p = load_points(time, error, n);
    qsort(p, (size_t)n, sizeof *p, cmp_error_time);
    double best = 1.0, at = 0.0, area = 0.0;
    for (int i = 0; i < n && p[i].error < cap; i++) {
        double e = p[i].error < 0 ? 0 : p[i].error;
        area += best * (e - at);
        at = e;
        if (p[i].time < best)
            best = p[i].time;
    }
    area += best * (cap - at);
    free(p);
    return area / cap;
}

static int cmp_time(const void *x, const void *y)
{
    const pt *a = x, *b = y;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return (a->error > b->error) - (a->error < b->error);
}

/* The front's points with time < 1, sorted by time, then (1, 0). Returns the count. */
static int released_points(const double *time, const double *error, int n, pt *out)
{
    int *front = pf_xmalloc(sizeof *front * (size_t)(n + 1));
    int m = pf_pareto_front(time, error, n, front), k = 0;
    for (int i = 0; i < m; i++)
        if (time[front[i]] < 1.0)
            out[k++] = (pt){ time[front[i]], error[front[i]], front[i] };
    free(front);
    qsort(out, (size_t)k, sizeof *out, cmp_time);
    out[k++] = (pt){ 1.0, 0.0, -1 };
    return k;
}

double pf_frontier_area_released(const double *time, const double *error, int n)
{
    pt *p = pf_xmalloc(sizeof *p * (size_t)(n + 2));
    int k = released_points(time, error, n, p);
    if (p[0].time > 0.6) {
        free(p);
        return INFINITY;
    }
    int j = 0;
    while (p[j].time < 0.6)
        j++;
    double e06 = p[j].error;
    if (j > 0 && p[j].time > 0.6) {
        double w = (0.6 - p[j - 1].time) / (p[j].time - p[j - 1].time);
        e06 = p[j - 1].error + w * (p[j].error - p[j - 1].error);
    }
    double area = 0.0, t = 0.6, e = e06;
    for (int i = j; i < k; i++) {
        area += 0.5 * (e + p[i].error) * (p[i].time - t);
        t = p[i].time;
        e = p[i].error;
    }
    free(p);
    return area;
}

double pf_frontier_best_time(const double *time, const double *error, int n, double cap)
{
    double best = 1.0;
    for (int i = 0; i < n; i++)
        if (clean(error[i]) <= cap && clean(time[i]) < best)
            best = time[i];
    return best;
}
