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
    pf_strmap_init(&m->genes.map);
    pf_strmap_init(&m->sigs);
    pf_strmap_init(&m->implied.map);
    m->d = PF_GENE_NFEAT + 2 * prog->n_loops + 1;
    m->beta = pf_xcalloc((size_t)m->d, sizeof *m->beta);
    m->a = m->p = 1;
}

static void cache_clear(pf_gene_cache *c)
{
    pf_strmap_free(&c->map);
    free(c->err);
    free(c->n);
    free(c->loop);
    free(c->gene);
    memset(c, 0, sizeof *c);
    pf_strmap_init(&c->map);
}

static void clear(pf_error_model *m)
{
    cache_clear(&m->genes);
    cache_clear(&m->implied);
    m->implied_relatives = false;
    pf_strmap_free(&m->sigs);
    free(m->sig_err);
    m->sig_err = NULL;
    m->n_sigs = m->cap_sigs = 0;
    pf_strmap_init(&m->sigs);
}

void pf_error_model_free(pf_error_model *m)
{
    clear(m);
    pf_strmap_free(&m->genes.map);
    pf_strmap_free(&m->sigs);
    pf_strmap_free(&m->implied.map);
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

/* Sets a signature's error (the last measurement of it). */
static void remember_sig(pf_error_model *m, const char *sig, double e)
{
    int i;
    if (!pf_strmap_get(&m->sigs, sig, &i)) {
        if (m->n_sigs == m->cap_sigs) {
            m->cap_sigs = m->cap_sigs ? 2 * m->cap_sigs : 64;
            m->sig_err = pf_xrealloc(m->sig_err, sizeof *m->sig_err * (size_t)m->cap_sigs);
        }
        i = m->n_sigs++;
        pf_strmap_put(&m->sigs, sig, i);
    }
    m->sig_err[i] = e;
}

/* Adds an error of gene g of loop `loop` to its cache entry (a running mean). */
static void remember_gene(const pf_error_model *m, pf_gene_cache *c, int loop,
                          const pf_approx_gene *g, double e)
{
    char *key = gene_key(m->prog, loop, g);
    int i;
    if (!pf_strmap_get(&c->map, key, &i)) {
        if (c->count == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 64;
            c->err = pf_xrealloc(c->err, sizeof *c->err * (size_t)c->cap);
            c->n = pf_xrealloc(c->n, sizeof *c->n * (size_t)c->cap);
            c->loop = pf_xrealloc(c->loop, sizeof *c->loop * (size_t)c->cap);
            c->gene = pf_xrealloc(c->gene, sizeof *c->gene * (size_t)c->cap);
        }
        i = c->count++;
        pf_strmap_put(&c->map, key, i);
        c->err[i] = 0;
        c->n[i] = 0;
        c->loop[i] = loop;
        c->gene[i] = *g;
    }
    free(key);
    c->n[i]++;
    c->err[i] += (e - c->err[i]) / c->n[i];
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
    double *X = pf_xmalloc(sizeof *X * (size_t)d * (size_t)(m->genes.count + 1));
    double *y = pf_xmalloc(sizeof *y * (size_t)(m->genes.count + 1));
    pf_strmap done;
    pf_strmap_init(&done);
    for (int i = 0; i < n; i++) {
        int loop = only_gene(m, &s[i]);
        if (loop < 0)
            continue;
        char *key = gene_key(m->prog, loop, &s[i].approx[loop]);
        int g;
        if (pf_strmap_add(&done, key, 0) && pf_strmap_get(&m->genes.map, key, &g)) {
            regression_x(m, loop, &s[i].approx[loop], X + (size_t)rows * d);
            y[rows++] = log(m->genes.err[g] + EPS);
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

/* The caches an estimate may learn from: the measured genes, and once every implied gene is
 * known (fit_implied), the implied ones too. */
static int n_sources(const pf_error_model *m, const pf_gene_cache *src[2])
{
    src[0] = &m->genes;
    src[1] = &m->implied;
    return m->implied_relatives ? 2 : 1;
}

/* The regression corrected by the residuals of the gene's 3 nearest measured or implied
 * relatives (inverse-distance weights): the trend from the regression, the level from the
 * family; false when it has none. Implied relatives count because a search measures few genes
 * alone after its first generation: most of a loop's lattices are only known in company
 * (bilateral filter, seed 11: `loop_pixels grid 2 4 reconstruct store linear`, next to the
 * implied 1 4, 2 2 and 4 4, was estimated at Lab 5.3-5.8 from its one measured relative, 1 2,
 * and the trend; the plain GA measured 4.7). */
#define RELATIVES 3
static bool from_family(const pf_error_model *m, int loop, const pf_approx_gene *g, double *out)
{
    const pf_gene_cache *src[2], *best_c[RELATIVES];
    double c[3], best_d[RELATIVES];
    int best[RELATIVES], n = 0;
    family_coords(m, loop, g, c);
    for (int k = 0, ns = n_sources(m, src); k < ns; k++)
        for (int i = 0; i < src[k]->count; i++) {
            if (src[k]->loop[i] != loop || !same_family(&src[k]->gene[i], g))
                continue;
            double ci[3], d = 0;
            family_coords(m, loop, &src[k]->gene[i], ci);
            for (int q = 0; q < 3; q++)
                d += (c[q] - ci[q]) * (c[q] - ci[q]);
            int j = n < RELATIVES ? n++ : RELATIVES;  /* insertion into the nearest few */
            while (j > 0 && best_d[j - 1] > d) {
                if (j < RELATIVES) {
                    best_d[j] = best_d[j - 1];
                    best[j] = best[j - 1];
                    best_c[j] = best_c[j - 1];
                }
                j--;
            }
            if (j < RELATIVES) {
                best_d[j] = d;
                best[j] = i;
                best_c[j] = src[k];
            }
        }
    double sw = 0, sy = 0;
    for (int j = 0; j < n; j++) {  /* the relatives' residuals from the regression */
        const pf_gene_cache *r = best_c[j];
        double w = 1 / (best_d[j] + 1e-6);
        sw += w;
        sy += w * (log(r->err[best[j]] + EPS) -
                   regression_log(m, r->loop[best[j]], &r->gene[best[j]]));
    }
    if (n > 0)
        *out = fmax(0, exp(regression_log(m, loop, g) + sy / sw) - EPS);
    return n > 0;
}

/* The errors known on the loop (on any loop when none), from the caches an estimate learns
 * from: [*lo, *hi], empty when none. */
static void known_range(const pf_error_model *m, int loop, double *lo, double *hi)
{
    const pf_gene_cache *src[2];
    int ns = n_sources(m, src);
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int pass = 0; pass < 2 && !(*hi >= *lo); pass++)
        for (int k = 0; k < ns; k++)
            for (int i = 0; i < src[k]->count; i++)
                if (pass == 1 || src[k]->loop[i] == loop) {
                    *lo = fmin(*lo, src[k]->err[i]);
                    *hi = fmax(*hi, src[k]->err[i]);
                }
}

/* Gene g's entry in a cache of errors by gene (m->genes, m->implied), or -1. */
static int cached(const pf_error_model *m, const pf_gene_cache *cache, int loop,
                  const pf_approx_gene *g)
{
    char *key = gene_key(m->prog, loop, g);
    int i;
    bool known = pf_strmap_get(&cache->map, key, &i);
    free(key);
    return known ? i : -1;
}

/* The estimate of the error gene g causes alone, from its family, else the regression. */
static double estimate(const pf_error_model *m, int loop, const pf_approx_gene *g)
{
    /* An estimate stays at or below the worst error known on the loop: a trend in
     * log error extrapolates wildly from a few points, and an estimate above the error cap is
     * never measured, so never corrected (bilateral filter, seed 11: `loop_pixels grid 4 8
     * reconstruct on-demand linear` was estimated from its family's one member, grid 4 1, at
     * Lab 17.0; the plain GA measured it at 6.5 and put it on its frontier). The regression's,
     * which has no relatives to set its level, stays at or above the best too. */
    double e, lo, hi;
    bool family = from_family(m, loop, g, &e);
    if (!family)
        e = fmax(0, exp(regression_log(m, loop, g)) - EPS);
    known_range(m, loop, &lo, &hi);
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
        return m->genes.err[i];
    *estimated = true;
    i = cached(m, &m->implied, loop, g);
    return i >= 0 ? m->implied.err[i] : estimate(m, loop, g);
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
            double e = k >= 0 ? m->genes.err[k] : estimate(m, l, g);
            if (k >= 0 || e < SMALL_PART * error[i])
                rest += pow(e, m->p);
            else
                unknown = unknown == -1 ? l : -2;  /* -2: two unknown parts, nothing implied */
        }
        if (unknown < 0 || parts < 2)
            continue;
        double v = pow(error[i] / m->a, m->p) - rest;
        remember_gene(m, &m->implied, unknown, &s[i].approx[unknown],
                      v > 0 ? pow(v, 1 / m->p) : 0);
    }
    m->implied_relatives = true;
}

int pf_error_model_fit(pf_error_model *m, const pf_schedule *s, const double *error, int n)
{
    clear(m);
    for (int i = 0; i < n; i++) {
        if (!isfinite(error[i]))
            continue;
        char *sig = pf_error_signature(m->prog, &s[i]);
        remember_sig(m, sig, error[i]);
        free(sig);
        int loop = only_gene(m, &s[i]);
        if (loop >= 0)
            remember_gene(m, &m->genes, loop, &s[i].approx[loop], error[i]);
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
