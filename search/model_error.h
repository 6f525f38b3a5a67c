/* The error model: a candidate's mean Lab error predicted from the errors its genes cause alone.
 * Execution genes do not change outputs, so the error is a function of the approximation genes:
 *
 *  1. measured: a candidate whose approximation genes were measured together (with any
 *     execution genes) has that error;
 *  2. per gene: the error a gene causes alone is measured once per gene value, by the
 *     single-gene candidates the search measures (its initial population is made of them) and
 *     cached; a gene value never measured alone is implied by the candidates it was measured
 *     in whose other genes were (the composition below, inverted), else estimated from its
 *     family (the measured and implied genes of the same loop, kind, reconstruction and
 *     channels: inverse-distance weights on log error over the log sampled share, the grid's
 *     anisotropy and log sigma), or, when its family has none, by a ridge regression of
 *     log(error) on the gene's features (model_features.h) and its loop, kept within the
 *     errors known on that loop;
 *  3. composed: e = a * (sum_i e_i^p)^(1/p) over the genes (ApproxTuner's additive P1 is a = 1,
 *     p = 1), with a and p fitted to the measured candidates that have several genes: the learned
 *     correction (p = 2 adds independent errors as their root sum of squares; large p: the worst
 *     gene alone). */
#ifndef PF_SEARCH_MODEL_ERROR_H
#define PF_SEARCH_MODEL_ERROR_H

#include "search/model_features.h"
#include "search/strmap.h"

#include <stdbool.h>

/* Errors by gene ("LOOP\tGENE" keys): per entry its loop, gene and mean error. */
typedef struct pf_gene_cache {
    pf_strmap map;        /* key -> index */
    double *err;          /* means over the measurements (or implications) */
    int *n;
    int *loop;
    pf_approx_gene *gene;
    int count, cap;
} pf_gene_cache;

typedef struct pf_error_model {
    const pf_program *prog;
    const pf_program_static *ps;
    pf_gene_cache genes;  /* the errors of genes measured alone */
    pf_strmap sigs;       /* approximation part of a schedule -> index into sig_err */
    double *sig_err;
    int n_sigs, cap_sigs;
    pf_gene_cache implied;  /* genes never measured alone: the errors their candidates imply */
    bool implied_relatives; /* implied genes are family relatives too (once all are implied) */
    int d;                /* regression features */
    double *beta;         /* [d] the per-gene regression */
    double a, p;          /* composition */
    int n_multi;          /* multi-gene candidates the composition was fitted on */
} pf_error_model;

void pf_error_model_init(pf_error_model *m, const pf_program *prog, const pf_program_static *ps);
void pf_error_model_free(pf_error_model *m);
/* Fits to n measured candidates (valid schedules of prog and their errors >= 0), replacing
 * any earlier fit. Returns 0. */
int pf_error_model_fit(pf_error_model *m, const pf_schedule *s, const double *error, int n);
/* The prediction for s; *how says where it came from (1 measured, 2 every gene measured alone,
 * 3 some gene estimated), when not NULL. */
double pf_error_model_predict(const pf_error_model *m, const pf_schedule *s, int *how);

/* The approximation part of s as text (its genes, no execution genes), as its error sees it
 * (on-demand reconstruction written as stored: the same image): malloc'd. */
char *pf_error_signature(const pf_program *prog, const pf_schedule *s);

#endif
