/* Multi-fidelity measurement in a run (tune.h, pf_tune_fidelity_config; search/fidelity.h;
 * docs/search.md §10): config.json's "fidelity", a generation measured first on the
 * low-fidelity images and then, for the promoted children, at the run's resolution, and the
 * relation between the two as the run measured it (log.txt, summary.json). Only full-resolution
 * records are PF_SET_TRAIN, so only they can reach a frontier. */
#include "results/tune_internal.h"

#include "base/arena.h"
#include "search/fidelity.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- config.json ---- */

json_object *pf_tune_fidelity_config_json(const pf_tune_fidelity_config *f)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "margin", json_object_new_double(f->margin));
    json_object_object_add(o, "explore", json_object_new_double(f->explore));
    return o;
}

int pf_tune_fidelity_config_read(json_object *o, pf_tune_fidelity_config *f, pf_error *err)
{
    json_object *v;
    if (!o)
        return 0;
    if (json_object_object_get_ex(o, "margin", &v))
        f->margin = json_object_get_double(v);
    if (json_object_object_get_ex(o, "explore", &v))
        f->explore = json_object_get_double(v);
    if (!(f->margin >= 0 && f->margin < 1) || !(f->explore >= 0 && f->explore <= 1))
        return pf_fail(err, "config.json: 'fidelity' needs margin in [0, 1) and explore in "
                       "[0, 1]");
    return 0;
}

/* ---- the relation ---- */

/* The first record of a schedule in a set among generations 0..max_gen (-1: none). */
static int first_of(const pf_tune *t, pf_image_set set, const char *text, int max_gen)
{
    for (int i = 0; i < t->n_recs; i++) {
        const pf_eval_record *r = &t->recs[i];
        if (r->set == set && r->generation >= 0 && r->generation <= max_gen &&
            strcmp(r->schedule, text) == 0)
            return i;
    }
    return -1;
}

/* The relation over every candidate of generations 0..max_gen valid at both fidelities, from
 * the measurements as evaluations.jsonl holds them (a resumed run computes the same). *promoted
 * counts the full-resolution measurements, *low the low-fidelity ones. */
static void relation(const pf_tune *t, int max_gen, pf_fidelity_relation *rel, int *low,
                     int *promoted)
{
    double *v = pf_xmalloc(sizeof *v * 4 * (size_t)(t->n_recs + 1));
    double *lt = v, *le = lt + t->n_recs, *ft = le + t->n_recs, *fe = ft + t->n_recs;
    int n = 0;
    *low = *promoted = 0;
    for (int i = 0; i < t->n_recs; i++) {
        const pf_eval_record *f = &t->recs[i];
        if (f->generation < 0 || f->generation > max_gen)
            continue;
        *low += f->set == PF_SET_LOW;
        if (f->set != PF_SET_TRAIN)
            continue;
        ++*promoted;
        int j = first_of(t, PF_SET_LOW, f->schedule, max_gen);
        if (!f->valid || j < 0 || !t->recs[j].valid)
            continue;
        lt[n] = pf_round7(t->recs[j].time);
        le[n] = pf_round7(t->recs[j].error);
        ft[n] = pf_round7(f->time);
        fe[n++] = pf_round7(f->error);
    }
    pf_fidelity_relate(lt, le, ft, fe, n, rel);
    free(v);
}

json_object *pf_tune_fidelity_summary(const pf_tune *t)
{
    if (t->cfg.eval.low_width <= 0)
        return NULL;
    pf_fidelity_relation rel;
    int low, promoted;
    relation(t, t->cfg.ga.generations, &rel, &low, &promoted);
    json_object *o = json_object_new_object();
    char res[64];
    snprintf(res, sizeof res, "%dx%d", t->cfg.eval.low_width, t->cfg.eval.low_height);
    json_object_object_add(o, "low_resolution", json_object_new_string(res));
    json_object_object_add(o, "measured_low", json_object_new_int(low));
    json_object_object_add(o, "measured_full", json_object_new_int(promoted));
    json_object_object_add(o, "pairs", json_object_new_int(rel.pairs));
#define NUM(v) (isfinite(v) ? json_object_new_double(v) : NULL)
    json_object_object_add(o, "time_spearman", NUM(rel.time_rho));
    json_object_object_add(o, "error_spearman", NUM(rel.error_rho));
    json_object_object_add(o, "time_ratio", NUM(rel.time_ratio));
    json_object_object_add(o, "error_ratio", NUM(rel.error_ratio));
    json_object_object_add(o, "time_calibrated_median_rel_error", NUM(rel.time_rel_err));
#undef NUM
    return o;
}

/* ---- a generation ---- */

/* Records arrive into the cache; the GA hears of them once both fidelities are in (tell_ga). */
static void arrived(pf_tune *t, int rec, void *ctx)
{
    (void)t, (void)rec, (void)ctx;
}

/* Submits the generation's unmeasured children in `set` (those with want[i], when given) that
 * the set's cache does not hold; returns the count, or -1. */
static int submit(pf_tune *t, pf_evaluator *ev, pf_image_set set, const bool *want, int *cached,
                  pf_error *err)
{
    int pending = 0;
    for (int i = 0; i < t->ga.n_next; i++) {
        const pf_ga_member *m = &t->ga.next[i];
        if (m->measured || (want && !want[i]))
            continue;
        if (pf_strmap_get(&t->cache[set], m->text, NULL)) {
            (*cached)++;
            continue;
        }
        if (pf_evaluator_submit(ev, t->next_id++, set, m->text, err) != 0)
            return -1;
        pending++;
    }
    return pending;
}

static const pf_eval_record *record_of(const pf_tune *t, pf_image_set set, const char *text)
{
    int r;
    return pf_strmap_get(&t->cache[set], text, &r) ? &t->recs[r] : NULL;
}

/* The low-fidelity frontier of generations 0..gen (every low measurement: its own points). */
static int low_front(const pf_tune *t, int gen, pf_front_point **front)
{
    int n = 0;
    *front = NULL;
    for (int i = 0; i < t->n_recs; i++) {
        const pf_eval_record *r = &t->recs[i];
        if (r->set == PF_SET_LOW && r->valid && r->generation >= 0 && r->generation <= gen)
            pf_front_add(front, &n, pf_round7(r->error), pf_round7(r->time));
    }
    return n;
}

/* Which children go on to the run's resolution; returns how many, *random of them by the draw. */
static int promote(pf_tune *t, int gen, bool *want, int *random)
{
    pf_front_point *front;
    int n_front = low_front(t, gen, &front), n = 0;
    *random = 0;
    for (int i = 0; i < t->ga.n_next; i++) {
        const pf_ga_member *m = &t->ga.next[i];
        const pf_eval_record *r = m->measured ? NULL : record_of(t, PF_SET_LOW, m->text);
        bool drawn = false;
        want[i] = r && r->valid &&
                  pf_fidelity_promote(front, n_front, pf_round7(r->error), pf_round7(r->time),
                                      t->cfg.fidelity.margin, t->cfg.fidelity.explore, m->text,
                                      t->cfg.ga.seed, &drawn);
        n += want[i];
        *random += want[i] && drawn;
    }
    free(front);
    return n;
}

/* The GA's measurement of each child: the full one when promoted; else the low one scaled by
 * the measured ratios (a candidate the low fidelity set aside keeps its place among the
 * dominated, on the full resolution's scale); +inf when invalid. */
static void tell_ga(pf_tune *t, const pf_fidelity_relation *rel)
{
    for (int i = 0; i < t->ga.n_next; i++) {
        const pf_ga_member *m = &t->ga.next[i];
        if (m->measured)
            continue;
        const pf_eval_record *f = record_of(t, PF_SET_TRAIN, m->text);
        const pf_eval_record *l = record_of(t, PF_SET_LOW, m->text);
        if (f)
            pf_ga_measured(&t->ga, i, pf_round7(f->time), pf_round7(f->error));
        else if (l && l->valid)
            pf_ga_measured(&t->ga, i, pf_round7(pf_round7(l->time) * rel->time_ratio),
                           pf_round7(pf_round7(l->error) * rel->error_ratio));
        else
            pf_ga_measured(&t->ga, i, INFINITY, INFINITY);
    }
}

int pf_tune_fidelity_generation(pf_tune *t, pf_evaluator *ev, int gen, int *fresh, int *cached,
                                pf_error *err)
{
    int children = 0, pending = submit(t, ev, PF_SET_LOW, NULL, cached, err);
    for (int i = 0; i < t->ga.n_next; i++)
        children += !t->ga.next[i].measured;
    if (pending < 0)
        return -1;
    *fresh = pending;
    int rc = pf_tune_collect(t, ev, pending, gen, "search", arrived, NULL, err);
    if (rc != 0)
        return rc;
    bool *want = pf_xcalloc((size_t)t->ga.n_next + 1, sizeof *want);
    int random, promoted = promote(t, gen, want, &random);
    int full_cached = 0;  /* a resumed generation's: its children are counted once, above */
    pending = submit(t, ev, PF_SET_TRAIN, want, &full_cached, err);
    free(want);
    if (pending < 0)
        return -1;
    rc = pf_tune_collect(t, ev, pending, gen, "search", arrived, NULL, err);
    if (rc != 0)
        return rc;
    pf_fidelity_relation rel;
    int n_low, n_full;
    relation(t, gen, &rel, &n_low, &n_full);
    tell_ga(t, &rel);
    pf_tune_log(t, "fidelity: %d children measured at %dx%d, %d promoted (%d at random); low "
                "against full over the %d so far: time Spearman %.2f, error Spearman %.2f, "
                "full/low time x%.3g, error x%.3g", children, t->cfg.eval.low_width,
                t->cfg.eval.low_height, promoted, random, rel.pairs, rel.time_rho,
                rel.error_rho, rel.time_ratio, rel.error_ratio);
    return 0;
}
