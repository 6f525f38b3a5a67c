/* The search's models of a candidate's relative time and error (docs/search.md §10),
 * fitted to the candidates measured so far and used to choose which bred children are worth
 * measuring (search/guide.h). A model is a deterministic function of the measurements it is
 * fitted on, in their order: a resumed search refits the same one.
 *
 *   pf_model m;  pf_model_init(&m, prog, pf_host_plan_target().vector_lanes);
 *   pf_model_add(&m, text, time, error);   ... for every measured candidate
 *   pf_model_fit(&m);
 *   pf_model_predict(&m, &sched, &t, &e);
 *
 * The error model is search/model_error.h, the time model search/model_time.h, both on the
 * features of search/model_features.h. */
#ifndef PF_SEARCH_MODEL_H
#define PF_SEARCH_MODEL_H

#include "search/model_error.h"
#include "search/model_time.h"

typedef struct pf_model {
    const pf_program *prog;
    int wide_lanes;        /* the target's (pf_program_static_init) */
    pf_program_static ps;
    pf_time_model time;
    pf_error_model error;
    /* the measurements (valid candidates) */
    int n, cap;
    char **text;           /* canonical schedule texts */
    pf_schedule *sched;
    pf_features *feat;
    double *t, *e;
    double *resid;         /* log(t / the time model's fit) of each, after the last fit */
    double sigma;          /* their median absolute value: the time model's typical error */
    int n_fitted;          /* measurements in the last fit */
} pf_model;

/* wide_lanes: the float lanes of the target's preferred vectors (pf_plan_target), which set
 * the default schedule's widths the candidates without execution genes run at. */
void pf_model_init(pf_model *m, const pf_program *prog, int wide_lanes);
void pf_model_free(pf_model *m);
/* A measured candidate: its canonical schedule text, relative time and error. Invalid ones
 * (non-finite time or error, or a text that does not parse) are skipped: returns false. */
bool pf_model_add(pf_model *m, const char *text, double time, double error);
/* Fits both models to every measurement added so far, taken in the order of their texts: the
 * fit depends on the set of measurements, not on the order they arrived in. */
void pf_model_fit(pf_model *m);
/* Predicts s's relative time and error (from the static shares before any fit). */
void pf_model_predict(const pf_model *m, const pf_schedule *s, double *time, double *error);
/* The time prediction for s (features f): the time model corrected by the residuals of its
 * measured relatives (candidates that differ from s in at most RELATED genes that may change
 * its cost, approximation or execution, weighted 1 / distance^2, 16 at distance 0, and shrunk
 * towards none): what the fit misses about a neighbourhood, its measurements tell (an
 * interaction of two genes, a noisy stage). */
double pf_model_time(const pf_model *m, const pf_schedule *s, const pf_features *f);
/* The share of the time prediction's spread (the fit's, calibrated over all children) left
 * for s: 1, or less where measured candidates cost what s does (genes that differ only on a
 * stage too small to cost anything), whose measurements its prediction leans on. */
double pf_model_spread_factor(const pf_model *m, const pf_schedule *s);

/* Held-out accuracy: fitted on the measurements of train[0..n_train), evaluated on those of
 * test[0..n_test) (indices of added measurements). */
typedef struct pf_model_accuracy {
    int n_train, n_test;
    double time_spearman, time_rel_median, time_rel_mean;
    double error_spearman, error_rel_median, error_rel_mean;  /* error: of the held-out
                             candidates whose genes were not measured together before (their
                             error is looked up), those with measured error >= 0.1 */
    int error_n;           /* how many */
    int error_measured;    /* held-out candidates whose genes were measured together before */
} pf_model_accuracy;
void pf_model_accuracy_of(const pf_model *all, const int *train, int n_train, const int *test,
                          int n_test, pf_model_accuracy *out);

#endif
