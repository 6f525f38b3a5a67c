/* The error model (see model_error.h): the caches of measured errors (per gene alone, per set of
 * genes), the per-gene regression and the fitted composition. */
#include "search/model_error.h"

#include "base/arena.h"
#include "base/strbuf.h"
#include "search/model_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Errors enter the regression as log(error + EPS): exact genes (error 0) stay finite. */
#define EPS 0.02
/* The composition's exponents tried (1: additive). */
static const double exponents[] = { 1, 1.25, 1.5, 2, 3, 4, 8 };
#define N_EXPONENTS ((int)(sizeof exponents / sizeof exponents[0]))

void pf_error_model_init(pf_error_model *m, const pf_program *prog, const pf_program_static *ps)
{
    memset(m, 0, sizeof *m);
    m->prog = prog;
    m->ps = ps;
    pf_strmap_init(&m->genes);
    pf_strmap_init(&m->sigs);
    pf_strmap_init(&m->implied);
    m->d = PF_GENE_NFEAT + 2 * prog->n_loops + 1;
    m->beta = pf_xcalloc((size_t)m->d, sizeof *m->beta);
    m->a = m->p = 1;
}

static void clear(pf_error_model *m)
{
    pf_strmap_free(&m->genes);
    pf_strmap_free(&m->sigs);
    pf_strmap_free(&m->implied);
    free(m->gene_err);
    free(m->gene_n);
    free(m->gene_loop);
    free(m->gene);
    free(m->sig_err);
    free(m->imp_err);
    free(m->imp_n);
    m->gene_err = m->sig_err = m->imp_err = NULL;
    m->gene_n = m->gene_loop = m->imp_n = NULL;
    m->gene = NULL;
    m->n_genes = m->cap_genes = m->n_sigs = m->cap_sigs = m->n_imp = m->cap_imp = 0;
    pf_strmap_init(&m->genes);
    pf_strmap_init(&m->sigs);
    pf_strmap_init(&m->implied);
}

void pf_error_model_free(pf_error_model *m)
{
    clear(m);
    pf_strmap_free(&m->genes);
    pf_strmap_free(&m->sigs);
    pf_strmap_free(&m->implied);
    free(m->beta);
    memset(m, 0, sizeof *m);
}

/* Gene g as its error sees it: a grid reconstructed on demand computes the image its stored
 * fill does (to float rounding: tests/search/test_on_demand.c), so the two are one
 * approximation, measured once. Without this, a lattice measured stored was estimated anew on
 * demand (bilateral filter, seed 12: `loop_pixels grid 4 8 reconstruct on-demand linear` at
 * Lab 7.2 next to 6.7 stored; both measure 6.52). */
static pf_approx_gene error_gene(const pf_approx_gene *g)
{
    pf_approx_gene e = *g;
    e.on_demand = false;
    return e;
}

static void print_gene(const pf_approx_gene *g, pf_strbuf *sb)
{
    pf_approx_gene e = error_gene(g);
    pf_gene_print(&e, sb);
}

char *pf_error_signature(const pf_program *prog, const pf_schedule *s)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    for (int l = 0; l < s->n_loops; l++)
        if (s->approx[l].kind != PF_GENE_EXACT) {
            pf_sb_printf(&sb, "%s ", prog->loops[l].name);
            print_gene(&s->approx[l], &sb);
            pf_sb_putc(&sb, '\n');
        }
    return pf_sb_take(&sb);
}

static char *gene_key(const pf_program *prog, int loop, const pf_approx_gene *g)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_printf(&sb, "%s\t", prog->loops[loop].name);
    print_gene(g, &sb);
    return pf_sb_take(&sb);
}

/* Adds a measurement to a cache entry (a running mean). */
static void remember(pf_strmap *map, double **err, int **cnt, int *n, int *cap, const char *key,
                     double e)
{
    int i;
    if (!pf_strmap_get(map, key, &i)) {
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 64;
            *err = pf_xrealloc(*err, sizeof **err * (size_t)*cap);
            if (cnt)
                *cnt = pf_xrealloc(*cnt, sizeof **cnt * (size_t)*cap);
        }
        i = (*n)++;
        pf_strmap_put(map, key, i);
        (*err)[i] = 0;
        if (cnt)
            (*cnt)[i] = 0;
    }
    if (cnt) {
        (*cnt)[i]++;
        (*err)[i] += (e - (*err)[i]) / (*cnt)[i];
    } else {
        (*err)[i] = e;
    }
}

/* The one gene of s that changes something, or -1. A gene that computes every point
 * (pf_gene_computes_all) is not one of the genes a candidate is made of: in the per-gene
 * regression on log(error + EPS) its error of 0 pulled the loop's trend towards no error at
 * all (the median's `median_y_loop step 2` was estimated at Lab 0.20 next to `step 1` and
 * `step 4`, and measured 1.39), and a composition would count it as a part. */
static int only_gene(const pf_error_model *m, const pf_schedule *s)
{
    int loop = -1;
    for (int l = 0; l < s->n_loops; l++)
        if (!pf_gene_computes_all(m->ps, l, &s->approx[l])) {
            if (loop >= 0)
                return -1;
            loop = l;
        }
    return loop;
}

/* The regression's features of a gene: its own, its loop, its loop's slope in log share. */
static void regression_x(const pf_error_model *m, int loop, const pf_approx_gene *g, double *x)
{
    int L = m->prog->n_loops;
    memset(x, 0, sizeof *x * (size_t)m->d);
    pf_gene_features(m->ps, loop, g, x);
    x[PF_GENE_NFEAT + loop] = 1;
    x[PF_GENE_NFEAT + L + loop] = x[0];
    x[m->d - 1] = 1;
}

/* The per-gene regression on the cache of single-gene measurements. */
static void fit_regression(pf_error_model *m, const pf_schedule *s, int n)
{
    int d = m->d, rows = 0;
    double *X = pf_xmalloc(sizeof *X * (size_t)d * (size_t)(m->n_genes + 1));
    double *y = pf_xmalloc(sizeof *y * (size_t)(m->n_genes + 1));
    pf_strmap done;
    pf_strmap_init(&done);
    for (int i = 0; i < n; i++) {
        int loop = only_gene(m, &s[i]);
        if (loop < 0)
            continue;
        char *key = gene_key(m->prog, loop, &s[i].approx[loop]);
        int g;
        if (pf_strmap_add(&done, key, 0) && pf_strmap_get(&m->genes, key, &g)) {
            regression_x(m, loop, &s[i].approx[loop], X + (size_t)rows * d);
            y[rows++] = log(m->gene_err[g] + EPS);
        }
        free(key);
    }
    pf_strmap_free(&done);
    memset(m->beta, 0, sizeof *m->beta * (size_t)d);
    if (rows > 0)
        pf_fit_ridge(X, y, NULL, rows, d, 0.3, NULL, m->beta);
    free(X);
    free(y);
}

static bool same_family(const pf_approx_gene *a, const pf_approx_gene *b)
{
    return a->kind == b->kind && a->recon == b->recon &&
           (a->channels > 0) == (b->channels > 0) && a->k == b->k;
}

/* Where a gene lies in its family: log sampled share, anisotropy, log sigma. */
static void family_coords(const pf_error_model *m, int loop, const pf_approx_gene *g, double *c)
{
    double x[PF_GENE_NFEAT];
    pf_gene_features(m->ps, loop, g, x);
    c[0] = x[0];
    c[1] = x[13];
    c[2] = x[12];
}

/* The regression's log(error + EPS) for gene g. */
static double regression_log(const pf_error_model *m, int loop, const pf_approx_gene *g)
{
    double *x = pf_xmalloc(sizeof *x * (size_t)m->d), z = 0;
    regression_x(m, loop, g, x);
    for (int j = 0; j < m->d; j++)
        z += x[j] * m->beta[j];
    free(x);
    return z;
}

/* The regression corrected by the residuals of the gene's 3 nearest measured relatives
 * (inverse-distance weights): the trend from the regression, the level from the family; false
 * when it has none. */
#define RELATIVES 3
static bool from_family(const pf_error_model *m, int loop, const pf_approx_gene *g, double *out)
{
    double c[3], best_d[RELATIVES];
    int best[RELATIVES], n = 0;
    family_coords(m, loop, g, c);
    for (int i = 0; i < m->n_genes; i++) {
        if (m->gene_loop[i] != loop || !same_family(&m->gene[i], g))
            continue;
        double ci[3], d = 0;
        family_coords(m, loop, &m->gene[i], ci);
        for (int k = 0; k < 3; k++)
            d += (c[k] - ci[k]) * (c[k] - ci[k]);
        int j = n < RELATIVES ? n++ : RELATIVES;  /* insertion into the nearest few */
        while (j > 0 && best_d[j - 1] > d) {
            if (j < RELATIVES) {
                best_d[j] = best_d[j - 1];
                best[j] = best[j - 1];
            }
            j--;
        }
        if (j < RELATIVES) {
            best_d[j] = d;
            best[j] = i;
        }
    }
    double sw = 0, sy = 0;
    for (int j = 0; j < n; j++) {  /* the relatives' residuals from the regression */
        double w = 1 / (best_d[j] + 1e-6);
        sw += w;
        sy += w * (log(m->gene_err[best[j]] + EPS) -
                   regression_log(m, m->gene_loop[best[j]], &m->gene[best[j]]));
    }
    if (n > 0)
        *out = fmax(0, exp(regression_log(m, loop, g) + sy / sw) - EPS);
    return n > 0;
}

/* The errors measured alone on the loop (on any loop when none): [*lo, *hi], empty when none. */
static void measured_range(const pf_error_model *m, int loop, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int pass = 0; pass < 2 && !(*hi >= *lo); pass++)
        for (int i = 0; i < m->n_genes; i++)
            if (pass == 1 || m->gene_loop[i] == loop) {
                *lo = fmin(*lo, m->gene_err[i]);
                *hi = fmax(*hi, m->gene_err[i]);
            }
}

/* Gene g's entry in a cache of errors by gene (m->genes, m->implied), or -1. */
static int cached(const pf_error_model *m, const pf_strmap *cache, int loop,
                  const pf_approx_gene *g)
{
    char *key = gene_key(m->prog, loop, g);
    int i;
    bool known = pf_strmap_get(cache, key, &i);
    free(key);
    return known ? i : -1;
}

/* The estimate of the error gene g causes alone, from its family, else the regression. */
static double estimate(const pf_error_model *m, int loop, const pf_approx_gene *g)
{
    /* An estimate stays at or below the worst error measured alone on the loop: a trend in
     * log error extrapolates wildly from a few points, and an estimate above the error cap is
     * never measured, so never corrected (bilateral filter, seed 11: `loop_pixels grid 4 8
     * reconstruct on-demand linear` was estimated from its family's one member, grid 4 1, at
     * Lab 17.0; the plain GA measured it at 6.5 and put it on its frontier). The regression's,
     * which has no relatives to set its level, stays at or above the best too. */
    double e, lo, hi;
    bool family = from_family(m, loop, g, &e);
    if (!family)
        e = fmax(0, exp(regression_log(m, loop, g)) - EPS);
    measured_range(m, loop, &lo, &hi);
    if (!(hi >= lo))
        return e;
    return family ? fmin(hi, e) : fmin(hi, fmax(lo, e));
}

/* The error gene g causes alone: measured, or estimated (*estimated set): implied by the
 * candidates it was measured in (fit_implied), else from its relatives (estimate). */
static double gene_error(const pf_error_model *m, int loop, const pf_approx_gene *g,
                         bool *estimated)
{
    int i = cached(m, &m->genes, loop, g);
    if (i >= 0)
        return m->gene_err[i];
    *estimated = true;
    i = cached(m, &m->implied, loop, g);
    return i >= 0 ? m->imp_err[i] : estimate(m, loop, g);
}

/* The genes' errors alone; returns how many genes. */
static int gene_errors(const pf_error_model *m, const pf_schedule *s, double *e, bool *estimated)
{
    int n = 0;
    for (int l = 0; l < s->n_loops; l++)
        if (!pf_gene_computes_all(m->ps, l, &s->approx[l]))
            e[n++] = gene_error(m, l, &s->approx[l], estimated);
    return n;
}

static double compose(const double *e, int n, double p)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += pow(e[i], p);
    return pow(s, 1 / p);
}

/* a and p on the candidates with several genes: p from the list, a by least squares on logs;
 * on those whose genes were all measured alone when there are 3 (the others' parts are
 * estimates), else on all. */
static void fit_composition(pf_error_model *m, const pf_schedule *s, const double *error, int n)
{
    double *e = pf_xmalloc(sizeof *e * (size_t)(m->prog->n_loops + 1));
    double best = INFINITY;
    m->a = m->p = 1;
    m->n_multi = 0;
    for (int k = 0, pass = 0; k < N_EXPONENTS || (pass == 0 && !isfinite(best)); k++) {
        if (k == N_EXPONENTS) {  /* too few reliable ones: all */
            k = 0;
            pass = 1;
        }
        double sum = 0, sum2 = 0;
        int cnt = 0;
        for (int i = 0; i < n; i++) {
            bool est = false;
            int g = gene_errors(m, &s[i], e, &est);
            if (g < 2 || (est && pass == 0))
                continue;
            double c = compose(e, g, exponents[k]);
            if (!(error[i] > 1e-9 && c > 1e-9))
                continue;  /* nothing to scale */
            double r = log(error[i]) - log(c);
            sum += r;
            sum2 += r * r;
            cnt++;
        }
        double ss = cnt ? sum2 - sum * sum / cnt : 0;  /* residual after the best log a */
        if (cnt >= 3 && ss < best - 1e-12) {
            best = ss;
            m->p = exponents[k];
            m->a = exp(sum / cnt);
        }
        m->n_multi = cnt;
    }
    free(e);
}

/* A part whose estimate is under this share of a candidate's error counts as known. */
#define SMALL_PART 0.1

/* The errors of genes never measured alone that candidates measured with them imply: where
 * every other gene of a candidate was measured alone (or is estimated under SMALL_PART of the
 * candidate's error), the error the gene must cause for the composition to give the measured
 * one (a mean over such candidates). Without it, a gene estimated far too low was measured
 * again and again in new company and never corrected (bilateral filter, seed 13: `loop_pixels
 * grid 1 4 reconstruct store gaussian 0.3` under five different `loop_kernel` genes,
 * four of them predicted at Lab 1.1-1.5, all measured at 4.0-4.1). */
static void fit_implied(pf_error_model *m, const pf_schedule *s, const double *error, int n)
{
    for (int i = 0; i < n; i++) {
        if (!(isfinite(error[i]) && error[i] > 0))
            continue;
        int unknown = -1, parts = 0;
        double rest = 0;  /* the sum of e^p over the other parts */
        for (int l = 0; l < s[i].n_loops && unknown >= -1; l++) {
            const pf_approx_gene *g = &s[i].approx[l];
            if (pf_gene_computes_all(m->ps, l, g))
                continue;
            parts++;
            int k = cached(m, &m->genes, l, g);
            double e = k >= 0 ? m->gene_err[k] : estimate(m, l, g);
            if (k >= 0 || e < SMALL_PART * error[i])
                rest += pow(e, m->p);
            else
                unknown = unknown == -1 ? l : -2;  /* -2: two unknown parts, nothing implied */
        }
        if (unknown < 0 || parts < 2)
            continue;
        double v = pow(error[i] / m->a, m->p) - rest;
        char *key = gene_key(m->prog, unknown, &s[i].approx[unknown]);
        remember(&m->implied, &m->imp_err, &m->imp_n, &m->n_imp, &m->cap_imp, key,
                 v > 0 ? pow(v, 1 / m->p) : 0);
        free(key);
    }
}

int pf_error_model_fit(pf_error_model *m, const pf_schedule *s, const double *error, int n)
{
    clear(m);
    for (int i = 0; i < n; i++) {
        if (!isfinite(error[i]))
            continue;
        char *sig = pf_error_signature(m->prog, &s[i]);
        remember(&m->sigs, &m->sig_err, NULL, &m->n_sigs, &m->cap_sigs, sig, error[i]);
        free(sig);
        int loop = only_gene(m, &s[i]);
        if (loop < 0)
            continue;
        char *key = gene_key(m->prog, loop, &s[i].approx[loop]);
        int before = m->n_genes, cap = m->cap_genes;
        remember(&m->genes, &m->gene_err, &m->gene_n, &m->n_genes, &m->cap_genes, key,
                 error[i]);
        if (m->cap_genes != cap) {
            m->gene_loop = pf_xrealloc(m->gene_loop, sizeof *m->gene_loop * (size_t)m->cap_genes);
            m->gene = pf_xrealloc(m->gene, sizeof *m->gene * (size_t)m->cap_genes);
        }
        if (m->n_genes > before) {
            m->gene_loop[before] = loop;
            m->gene[before] = s[i].approx[loop];
        }
        free(key);
    }
    fit_regression(m, s, n);
    fit_composition(m, s, error, n);
    fit_implied(m, s, error, n);
    return 0;
}

double pf_error_model_predict(const pf_error_model *m, const pf_schedule *s, int *how)
{
    char *sig = pf_error_signature(m->prog, s);
    int i;
    bool known = pf_strmap_get(&m->sigs, sig, &i);
    free(sig);
    if (how)
        *how = known ? 1 : 2;
    if (known)
        return m->sig_err[i];
    double *e = pf_xmalloc(sizeof *e * (size_t)(m->prog->n_loops + 1));
    bool estimated = false;
    int g = gene_errors(m, s, e, &estimated);
    double v = g == 0 ? 0 : g == 1 ? e[0] : m->a * compose(e, g, m->p);
    free(e);
    if (how && estimated)
        *how = 3;
    return v;
}
