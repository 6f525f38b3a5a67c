/* The time model: a candidate's relative time predicted from its features (model_features.h) as
 * a sum of costs, each a stage's static share scaled by what its genes do to it:
 *
 *   time = overhead
 *        + sum over stages s of share_s * frac_s * exp(base_s + exec_s + sampling_s)   compute
 *        + sum over reconstructed stages of points_s * exp(recon_s)                   filling
 *        + sum over on-demand stages of reads_by_readers_s * exp(interp)              reading
 *
 * where each exp(...) is exp(theta . z) over indicator and log features of the term (the stage,
 * its execution gene's fields, its sampling kind and fraction, its reconstruction and sigma).
 * theta is fitted to the measured candidates on log(time), so errors are relative, with a ridge
 * pull towards 0 (every gene costing what its share says) that keeps rare features sane. */
#ifndef PF_SEARCH_MODEL_TIME_H
#define PF_SEARCH_MODEL_TIME_H

#include "search/model_features.h"

#include <stdbool.h>

typedef struct pf_time_model {
    const pf_program_static *ps;
    int d;             /* parameters */
    double *theta;     /* [d] */
    double lambda;     /* ridge strength (0.5) */
    bool fitted;
    int n_fit;         /* candidates the last fit used */
} pf_time_model;

void pf_time_model_init(pf_time_model *m, const pf_program_static *ps);
void pf_time_model_free(pf_time_model *m);
/* Fits to n candidates (features, measured relative time > 0); a model fitted on nothing
 * predicts from the static shares. Returns 0. */
int pf_time_model_fit(pf_time_model *m, const pf_features *f, const double *time, int n);
double pf_time_model_predict(const pf_time_model *m, const pf_features *f);

#endif
