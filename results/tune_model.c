/* The model-guided search of a run (tune.h, pf_tune_model_config; docs/search.md §10):
 * config.json's "model", the models fitted at the start of each generation to the training
 * records of the generations before it (so that a resumed run, which has the same records,
 * refits the same models and chooses the same children), the GA's guide, and the prediction
 * each record carries. */
#include "results/tune_internal.h"

#include "base/arena.h"
#include "base/clock.h"
#include "codegen/compile.h"
#include "search/guide.h"
#include "search/model.h"
#include "search/model_fit.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pf_tune_models {
    pf_model model;
    int upto;                /* the records of generations < upto are in the model */
    pf_front_point *front;   /* their training frontier: what the guide compares with */
    int n_front;
    pf_calibration cal;      /* of the time predictions (fit_calibration) */
};

/* ---- config.json ---- */

json_object *pf_tune_model_config_json(const pf_tune_model_config *m)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "on", json_object_new_boolean(m->on));
    json_object_object_add(o, "measure", json_object_new_int(m->measure));
    json_object_object_add(o, "pool", json_object_new_int(m->pool));
    json_object_object_add(o, "explore", json_object_new_double(m->explore));
    json_object_object_add(o, "lookahead", json_object_new_int(m->lookahead));
    return o;
}

int pf_tune_model_config_read(json_object *o, pf_tune_model_config *m, pf_error *err)
{
    json_object *v;
    m->on = false;  /* runs made before the models: the released GA */
    m->lookahead = 0;  /* runs made before the lookahead: one pool */
    if (!o)
        return 0;
    if (json_object_object_get_ex(o, "on", &v))
        m->on = json_object_get_boolean(v);
    if (json_object_object_get_ex(o, "measure", &v))
        m->measure = json_object_get_int(v);
    if (json_object_object_get_ex(o, "pool", &v))
        m->pool = json_object_get_int(v);
    if (json_object_object_get_ex(o, "explore", &v))
        m->explore = json_object_get_double(v);
    if (json_object_object_get_ex(o, "lookahead", &v))
        m->lookahead = json_object_get_int(v);
    if (m->measure < 0 || m->pool < 1 || !(m->explore >= 0 && m->explore <= 1) ||
        m->lookahead < 0 || m->lookahead > 100)
        return pf_fail(err, "config.json: 'model' needs measure >= 0, pool >= 1, explore in "
                       "[0, 1] and lookahead in [0, 100]");
    return 0;
}

/* Children measured per generation: as configured, else a fifth of the released GA's. */
static int measure_of(const pf_tune_config *c)
{
    if (c->model.measure > 0)
        return c->model.measure;
    int n = c->ga.population, kept = (int)floor(c->ga.elite_frac * n);
    int k = (int)lround((n - kept) / 5.0);
    return k < 1 ? 1 : k;
}

/* ---- the guide ---- */

/* The GA's predict: the models' prediction of every pool member that has none yet (a
 * prediction without a finite value is made again: the models cannot give one). */
static void predict(void *ctx, pf_ga_member *pool, int n)
{
    pf_tune *t = ctx;
    for (int i = 0; i < n; i++)
        if (isnan(pool[i].pred_time) || isnan(pool[i].pred_error))
            pf_model_predict(&t->models->model, &pool[i].sched, &pool[i].pred_time,
                             &pool[i].pred_error);
}

/* The GA's choose: predict every child of the pool, let the guide pick. */
static int choose(void *ctx, pf_ga *ga, pf_ga_member *pool, int n, int k, int *chosen)
{
    pf_tune *t = ctx;
    struct pf_tune_models *m = t->models;
    predict(ctx, pool, n);
    double *pt = pf_xmalloc(sizeof *pt * 3 * (size_t)(n + 1)), *pe = pt + n, *sd = pe + n;
    for (int i = 0; i < n; i++) {
        pt[i] = pf_calibrated(&m->cal, pool[i].pred_time, &sd[i]);
        /* a child that costs what a measured one did is no lottery: the bilateral filter's
           guided runs measured 14-28 of 54 near the exact time, its table's genes with an
           execution gene already measured, each looking a few percent likely to beat exact */
        sd[i] *= pf_model_spread_factor(&m->model, &pool[i].sched);
        pe[i] = pool[i].pred_error;
    }
    int random;
    int c = pf_guide_choose(pt, pe, sd, n, m->front, m->n_front, k, t->cfg.model.explore,
                            t->cfg.max_error, &ga->rng, chosen, &random);
    int beyond = 0;
    for (int i = 0; i < c; i++)
        beyond += pe[chosen[i]] <= t->cfg.max_error &&
                  pt[chosen[i]] < pf_guide_front_time(m->front, m->n_front, pe[chosen[i]]);
    pf_tune_log(t, "models: %d children bred, %d chosen to measure (%d predicted beyond the "
                "frontier, %d at random)", n, c, beyond,
                random);
    free(pt);
    return c;
}

void pf_tune_model_open(pf_tune *t)
{
    if (!t->cfg.model.on)
        return;
    t->models = pf_xcalloc(1, sizeof *t->models);
    pf_model_init(&t->models->model, t->prog,
                  pf_backend_plan_target(t->cfg.eval.backend).vector_lanes);
    t->ga.guide = (pf_ga_guide){ choose, t, measure_of(&t->cfg), t->cfg.model.pool,
                                 t->cfg.model.lookahead, predict };
}

void pf_tune_model_close(pf_tune *t)
{
    if (!t->models)
        return;
    pf_model_free(&t->models->model);
    free(t->models->front);
    free(t->models);
    t->models = NULL;
}

/* How well the last generation's predictions did (they were made before its measurements). */
static void log_accuracy(pf_tune *t, int generation)
{
    int n = 0;
    double *v = pf_xmalloc(sizeof *v * 4 * (size_t)(t->n_recs + 1));
    double *pt = v, *mt = v + t->n_recs, *pe = mt + t->n_recs, *me = pe + t->n_recs;
    for (int i = 0; i < t->n_recs; i++) {
        const pf_eval_record *r = &t->recs[i];
        if (r->generation == generation && r->valid && isfinite(r->pred_time) &&
            isfinite(r->pred_error)) {
            pt[n] = r->pred_time;
            mt[n] = r->time;
            pe[n] = r->pred_error;
            me[n++] = r->error;
        }
    }
    if (n >= 3) {
        double med, mean;
        pf_relative_error(pt, mt, n, &med, &mean);
        pf_tune_log(t, "models on generation %d (%d candidates, predicted before measuring): "
                    "time Spearman %.2f, median relative error %.2f, median log(measured / "
                    "predicted) %+.2f over a spread (IQR of log time) of %.2f; error Spearman "
                    "%.2f", generation, n, pf_spearman(pt, mt, n), med,
                    pf_fit_log_bias(pt, mt, n), pf_fit_log_iqr(mt, n), pf_spearman(pe, me, n));
    }
    free(v);
}

/* The calibration of the time predictions made before measuring (generations 1 ..
 * generation - 1; pf_fit_calibration): with one spread for all children, the guide measured
 * near-exact children predicted 4% behind exact ahead of coarse ones predicted 40% behind,
 * which the plain GA put on its frontier (bilateral filter, seed 11). */
static void fit_calibration(pf_tune *t, int generation)
{
    struct pf_tune_models *m = t->models;
    double *v = pf_xmalloc(sizeof *v * 2 * (size_t)(t->n_recs + 1)), *pt = v, *mt = v + t->n_recs;
    int n = 0;
    for (int i = 0; i < t->n_recs; i++) {
        const pf_eval_record *r = &t->recs[i];
        if (r->set == PF_SET_TRAIN && r->valid && r->generation >= 1 &&
            r->generation < generation) {
            pt[n] = r->pred_time;
            mt[n++] = r->time;
        }
    }
    pf_fit_calibration(pt, mt, n, m->model.sigma, &m->cal);
    pf_tune_log(t, "time predictions calibrated on %d: measured ~ predicted^%.2f, spread %.0f%% "
                "+ %.0f%% x |log predicted|", m->cal.n, m->cal.beta, 100 * m->cal.a,
                100 * m->cal.b);
    free(v);
}

void pf_tune_model_prepare(pf_tune *t, int generation)
{
    struct pf_tune_models *m = t->models;
    if (!m || generation <= m->upto)
        return;
    int added = 0;
    for (int i = 0; i < t->n_recs; i++) {
        const pf_eval_record *r = &t->recs[i];
        if (r->set != PF_SET_TRAIN || r->generation < m->upto || r->generation >= generation)
            continue;
        /* as evaluations.jsonl holds them, like the GA's measurements */
        double time = pf_round7(r->time), error = pf_round7(r->error);
        if (r->valid && pf_model_add(&m->model, r->schedule, time, error)) {
            pf_front_add(&m->front, &m->n_front, error, time);
            added++;
        }
    }
    m->upto = generation;
    double t0 = pf_now_ms();
    pf_model_fit(&m->model);
    double fit_ms = pf_now_ms() - t0;
    if (generation >= 2)
        log_accuracy(t, generation - 1);
    fit_calibration(t, generation);
    pf_tune_log(t, "models fitted on %d measured candidates (%d new) in %.0f ms; time model's "
                "typical error %.0f%%", m->model.n, added, fit_ms, 100 * (exp(m->model.sigma) - 1));
}

void pf_tune_model_annotate(const pf_tune *t, pf_eval_record *rec)
{
    /* A confirmation (PF_GEN_CONFIRM) measures a frontier variant again: its prediction
     * belongs to the first measurement only. */
    if (!t->models || rec->set != PF_SET_TRAIN || rec->generation < 1)
        return;
    for (int i = 0; i < t->ga.n_next; i++)
        if (strcmp(t->ga.next[i].text, rec->schedule) == 0) {
            rec->pred_time = t->ga.next[i].pred_time;
            rec->pred_error = t->ga.next[i].pred_error;
            return;
        }
}
