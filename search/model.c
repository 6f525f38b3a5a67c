/* The search's models (see model.h): the measurements, the fit of the time and error models on
 * them, predictions, and the held-out accuracy figures. */
#include "search/model.h"

#include "base/arena.h"
#include "perforate/exec.h"
#include "search/model_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pf_model_init(pf_model *m, const pf_program *prog, int wide_lanes)
{
    memset(m, 0, sizeof *m);
    m->prog = prog;
    m->wide_lanes = wide_lanes;
    pf_program_static_init(prog, wide_lanes, &m->ps);
    pf_time_model_init(&m->time, &m->ps);
    pf_error_model_init(&m->error, prog, &m->ps);
}

void pf_model_free(pf_model *m)
{
    for (int i = 0; i < m->n; i++) {
        pf_schedule_free(&m->sched[i]);
        pf_features_free(&m->feat[i]);
        free(m->text[i]);
    }
    free(m->text);
    free(m->sched);
    free(m->feat);
    free(m->t);
    free(m->e);
    free(m->resid);
    pf_time_model_free(&m->time);
    pf_error_model_free(&m->error);
    pf_program_static_free(&m->ps);
    memset(m, 0, sizeof *m);
}

bool pf_model_add(pf_model *m, const char *text, double time, double error)
{
    if (!text || !isfinite(time) || !(time > 0) || !isfinite(error) || error < 0)
        return false;
    pf_schedule s;
    pf_error err;
    if (pf_schedule_parse(m->prog, text, "<model>", &s, &err) != 0)
        return false;
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        m->text = pf_xrealloc(m->text, sizeof *m->text * (size_t)m->cap);
        m->sched = pf_xrealloc(m->sched, sizeof *m->sched * (size_t)m->cap);
        m->feat = pf_xrealloc(m->feat, sizeof *m->feat * (size_t)m->cap);
        m->t = pf_xrealloc(m->t, sizeof *m->t * (size_t)m->cap);
        m->e = pf_xrealloc(m->e, sizeof *m->e * (size_t)m->cap);
    }
    m->text[m->n] = pf_xstrdup(text);
    m->sched[m->n] = s;
    pf_features_of(m->prog, &m->ps, &s, &m->feat[m->n]);
    m->t[m->n] = time;
    m->e[m->n] = error;
    m->n++;
    return true;
}

static const pf_model *sort_model;
static int cmp_measurement(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    int c = strcmp(sort_model->text[a], sort_model->text[b]);
    if (c)
        return c;
    if (sort_model->t[a] != sort_model->t[b])
        return sort_model->t[a] < sort_model->t[b] ? -1 : 1;
    if (sort_model->e[a] != sort_model->e[b])
        return sort_model->e[a] < sort_model->e[b] ? -1 : 1;
    return 0;
}

void pf_model_fit(pf_model *m)
{
    int n = m->n;
    int *order = pf_xmalloc(sizeof *order * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        order[i] = i;
    sort_model = m;
    qsort(order, (size_t)n, sizeof *order, cmp_measurement);
    pf_schedule *s = pf_xmalloc(sizeof *s * (size_t)(n + 1));
    pf_features *f = pf_xmalloc(sizeof *f * (size_t)(n + 1));
    double *t = pf_xmalloc(sizeof *t * 2 * (size_t)(n + 1)), *e = t + n;
    for (int i = 0; i < n; i++) {  /* shallow copies, in text order */
        s[i] = m->sched[order[i]];
        f[i] = m->feat[order[i]];
        t[i] = m->t[order[i]];
        e[i] = m->e[order[i]];
    }
    pf_time_model_fit(&m->time, f, t, n);
    pf_error_model_fit(&m->error, s, e, n);
    m->n_fitted = n;
    m->resid = pf_xrealloc(m->resid, sizeof *m->resid * (size_t)(m->n + 1));
    double *a = pf_xmalloc(sizeof *a * (size_t)(m->n + 1));
    for (int i = 0; i < m->n; i++) {
        m->resid[i] = log(m->t[i] / pf_time_model_predict(&m->time, &m->feat[i]));
        a[i] = fabs(m->resid[i]);
    }
    m->sigma = m->n > 0 ? pf_fit_median(a, m->n) : 0;
    free(a);
    free(t);
    free(f);
    free(s);
    free(order);
}

/* A stage of less than this share of the exact program's work (the bilateral filter's 9 x 9
 * table: 81 points against a photo's) cannot move the time by its own work. */
#define SMALL_SHARE 0.01

/* Whether stage st is small and the default computes it at the root alone (never once per
 * tile of a consumer, where a small stage's work is done again for every tile). */
static bool small_alone(const pf_model *m, int st)
{
    return st >= 0 && m->ps.stage[st].share < SMALL_SHARE && m->ps.stage[st].alone;
}

/* Whether approximation genes x and y of loop l may differ in time: not when both store the
 * samples of a small stage that runs alone (on demand, its readers interpolate each read). */
static bool approx_differs(const pf_model *m, int l, const pf_approx_gene *x,
                           const pf_approx_gene *y)
{
    if (pf_gene_equal(x, y))
        return false;
    return !small_alone(m, m->ps.loop_stage[l]) || x->on_demand || y->on_demand;
}

/* Whether execution genes x and y of stage st may differ in time: not when both compute a
 * small stage that runs alone at the root (at a consumer it runs once per tile; inlined, in
 * each read). */
static bool exec_differs(const pf_model *m, int st, const pf_exec_gene *x,
                         const pf_exec_gene *y)
{
    if (pf_exec_equal(x, y))
        return false;
    return !small_alone(m, st) || x->at != -1 || y->at != -1;
}

/* Genes that differ in what they cost (approximation per loop, execution per stage), stopping
 * past `most`. The guided bilateral filter measured a third of its children at the exact time
 * (0.99-1.00, predicted 0.95-0.96): the exact program with a measured execution gene and
 * genes of its table, which made a relative at distance 1 or 2 and corrected half way or less. */
static int gene_distance(const pf_model *m, const pf_schedule *a, const pf_schedule *b,
                         int most)
{
    int d = 0;
    for (int l = 0; l < a->n_loops && d <= most; l++)
        d += approx_differs(m, l, &a->approx[l], &b->approx[l]);
    for (int st = 0; st < a->n_stages && d <= most; st++)
        d += exec_differs(m, st, &a->exec[st], &b->exec[st]);
    return d;
}

#define RELATED 2
/* The weight of no correction: one relative at distance 1 moves the prediction half way. */
#define SHRINK 1.0
/* The weight of a relative at distance 0, the same code up to a small stage's genes: its
 * measurement outweighs the fit's residuals on the relatives that differ. */
#define SAME 16.0

double pf_model_time(const pf_model *m, const pf_schedule *s, const pf_features *f)
{
    double t = pf_time_model_predict(&m->time, f), sw = 0, sr = 0;
    for (int i = 0; m->resid && i < m->n_fitted; i++) {
        int d = gene_distance(m, s, &m->sched[i], RELATED);
        if (d > RELATED)
            continue;
        double w = d == 0 ? SAME : 1.0 / (d * d);
        sw += w;
        sr += w * m->resid[i];
    }
    return t * exp(sr / (sw + SHRINK));
}

double pf_model_spread_factor(const pf_model *m, const pf_schedule *s)
{
    double sw = 0;
    for (int i = 0; m->resid && i < m->n_fitted; i++)
        sw += gene_distance(m, s, &m->sched[i], 0) == 0 ? SAME : 0;
    return sqrt(SHRINK / (SHRINK + sw));  /* a precision-weighted mean's standard deviation */
}

void pf_model_predict(const pf_model *m, const pf_schedule *s, double *time, double *error)
{
    pf_features f;
    pf_features_of(m->prog, &m->ps, s, &f);
    *time = pf_model_time(m, s, &f);
    *error = pf_error_model_predict(&m->error, s, NULL);
    pf_features_free(&f);
}

/* ---- held-out accuracy ---- */

/* A model fitted on the listed measurements of `all` (schedules and features shared, not
 * owned: freed with unfitted_free). */
static void fit_subset(const pf_model *all, const int *idx, int n, pf_model *sub)
{
    pf_model_init(sub, all->prog, all->wide_lanes);
    sub->cap = n + 1;
    sub->text = pf_xmalloc(sizeof *sub->text * (size_t)sub->cap);
    sub->sched = pf_xmalloc(sizeof *sub->sched * (size_t)sub->cap);
    sub->feat = pf_xmalloc(sizeof *sub->feat * (size_t)sub->cap);
    sub->t = pf_xmalloc(sizeof *sub->t * (size_t)sub->cap);
    sub->e = pf_xmalloc(sizeof *sub->e * (size_t)sub->cap);
    for (int i = 0; i < n; i++) {
        sub->text[i] = all->text[idx[i]];
        sub->sched[i] = all->sched[idx[i]];
        sub->feat[i] = all->feat[idx[i]];
        sub->t[i] = all->t[idx[i]];
        sub->e[i] = all->e[idx[i]];
    }
    sub->n = n;
    pf_model_fit(sub);
}

static void unfitted_free(pf_model *sub)
{
    sub->n = 0;  /* the schedules and features belong to `all` */
    pf_model_free(sub);
}

void pf_model_accuracy_of(const pf_model *all, const int *train, int n_train, const int *test,
                          int n_test, pf_model_accuracy *out)
{
    memset(out, 0, sizeof *out);
    out->n_train = n_train;
    out->n_test = n_test;
    pf_model sub;
    fit_subset(all, train, n_train, &sub);
    double *pt = pf_xmalloc(sizeof *pt * 4 * (size_t)(n_test + 1));
    double *mt = pt + n_test, *pe = mt + n_test, *me = pe + n_test;
    int ne = 0;
    for (int i = 0; i < n_test; i++) {
        int j = test[i], how;
        pt[i] = pf_model_time(&sub, &all->sched[j], &all->feat[j]);
        mt[i] = all->t[j];
        double e = pf_error_model_predict(&sub.error, &all->sched[j], &how);
        out->error_measured += how == 1;
        if (how != 1 && all->e[j] >= 0.1) {  /* predicted, not looked up */
            pe[ne] = e;
            me[ne++] = all->e[j];
        }
    }
    out->time_spearman = pf_spearman(pt, mt, n_test);
    pf_relative_error(pt, mt, n_test, &out->time_rel_median, &out->time_rel_mean);
    out->error_n = ne;
    out->error_spearman = pf_spearman(pe, me, ne);
    pf_relative_error(pe, me, ne, &out->error_rel_median, &out->error_rel_mean);
    free(pt);
    unfitted_free(&sub);
}
