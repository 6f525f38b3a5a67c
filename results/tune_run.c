/* The search loop of a run (see tune.h): per generation propose, take what the cache knows,
 * submit the rest, append each record as it arrives, commit, checkpoint; at the end the
 * training frontier, its re-measurement on the test split, and the summary. */
#include "results/tune_internal.h"

#include "base/arena.h"
#include "base/clock.h"

#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Evaluations the whole run is expected to measure (for the ETA). */
static long expected_total(const pf_tune *t)
{
    const pf_ga_params *p = &t->cfg.ga;
    long kept = (long)floor(p->elite_frac * p->population);
    long fresh = t->ga.guide.choose ? t->ga.guide.measure : p->population - kept;
    long n = p->population + (long)(p->generations - 1) * fresh;
    int front = t->frontier_size > 0 ? t->frontier_size : 10;
    return n + (t->cfg.test ? front : 0) + (t->cfg.confirm > 0 ? front : 0);
}

static void report(pf_tune *t, int generation, const char *phase)
{
    if (!t->hooks || !t->hooks->progress)
        return;
    pf_tune_progress p;
    memset(&p, 0, sizeof p);
    p.generation = generation;
    p.generations = t->cfg.ga.generations;
    p.done = t->n_recs;
    p.total = expected_total(t);
    if (p.total < p.done)
        p.total = p.done;
    double secs = (pf_now_ms() - t->t_start) / 1000;
    p.per_second = secs > 0 ? t->done_session / secs : 0;
    p.eta_s = p.per_second > 0 ? (p.total - p.done) / p.per_second : NAN;
    p.frontier = t->frontier_size;
    p.best_speedup = 1.0 / t->best_time;
    p.max_error = t->cfg.max_error;
    p.phase = phase;
    p.load = pf_evaluator_load(t->ev);
    t->hooks->progress(t->hooks->ctx, &p);
}

/* Appends a fresh record and keeps it; returns its index in t->recs. */
static int take_record(pf_tune *t, pf_eval_record *rec, int generation, pf_error *err)
{
    rec->generation = generation;
    pf_tune_model_annotate(t, rec);
    if (pf_run_log_append(&t->log, rec, err) != 0)
        return -1;
    t->done_session++;
    if (!rec->valid)
        pf_tune_log(t, "candidate %ld is invalid: %.300s", rec->id,
                    rec->reason ? rec->reason : "?");
    int i = t->n_recs;
    pf_tune_add_record(t, rec);
    return i;
}

/* The evaluator sends the running frontier with the candidates it dispatches next; what it
 * has to say (a worker lost) goes to the log. */
static void share_frontier(pf_tune *t)
{
    if (t->front_changed && !t->confirming)
        pf_evaluator_set_frontier(t->ev, t->front, t->n_front);
    t->front_changed = false;
    for (const char *note; (note = pf_evaluator_note(t->ev));)
        pf_tune_log(t, "%s", note);
}

/* A stop request (a signal): everything measured is on record; the candidates in flight are
 * lost as after a kill, and --resume measures what the generation lacks. */
static bool stopping(pf_tune *t)
{
    if (!t->hooks->stop || !*t->hooks->stop)
        return false;
    pf_error err;
    pf_run_log_sync(&t->log, &err);
    pf_tune_log(t, "stopped on request after %ld evaluations in this session; --resume "
                "continues", t->done_session);
    return true;
}

/* Waits for `pending` records; each goes to the log, the cache and fn. Returns 1 when a stop
 * was requested. */
typedef void (*arrival_fn)(pf_tune *t, int rec, void *ctx);
static int collect(pf_tune *t, pf_evaluator *ev, int pending, int generation, const char *phase,
                   arrival_fn fn, void *ctx, pf_error *err)
{
    while (pending > 0) {
        pf_eval_record rec;
        int rc = pf_evaluator_wait(ev, &rec, err);
        if (rc == 0)
            return pf_fail(err, "the evaluator lost %d candidate(s)", pending);
        if (rc < 0)
            return stopping(t) ? 1 : -1;
        int i = take_record(t, &rec, generation, err);
        if (i < 0) {
            pf_record_free(&rec);
            return -1;
        }
        fn(t, i, ctx);
        pending--;
        share_frontier(t);
        report(t, generation, phase);
        if (stopping(t))
            return 1;
    }
    return 0;
}

int pf_tune_collect(pf_tune *t, pf_evaluator *ev, int pending, int generation,
                    const char *phase, pf_tune_arrival_fn fn, void *ctx, pf_error *err)
{
    return collect(t, ev, pending, generation, phase, fn, ctx, err);
}

/* ---- one generation ---- */

static void measured(pf_tune *t, int rec, void *ctx)
{
    pf_strmap *index = ctx;
    int m;
    if (pf_strmap_get(index, t->recs[rec].schedule, &m))
        pf_ga_measured(&t->ga, m, pf_round7(t->recs[rec].time), pf_round7(t->recs[rec].error));
}

static int submit_generation(pf_tune *t, pf_evaluator *ev, pf_strmap *index, int *pending,
                             int *cached, pf_error *err)
{
    for (int i = 0; i < t->ga.n_next; i++) {
        pf_ga_member *m = &t->ga.next[i];
        if (m->measured)
            continue;  /* an elite, with its old measurement */
        pf_strmap_put(index, m->text, i);
        int r;
        if (pf_strmap_get(&t->cache[PF_SET_TRAIN], m->text, &r)) {
            pf_ga_measured(&t->ga, i, pf_round7(t->recs[r].time), pf_round7(t->recs[r].error));
            (*cached)++;
            continue;
        }
        if (pf_evaluator_submit(ev, t->next_id++, PF_SET_TRAIN, m->text, err) != 0)
            return -1;
        (*pending)++;
    }
    return 0;
}

static int checkpoint(pf_tune *t, pf_error *err)
{
    if (pf_run_log_sync(&t->log, err) != 0)
        return -1;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "generation", json_object_new_int(t->ga.generation));
    json_object_object_add(o, "lines", json_object_new_int64(t->log.lines));
    json_object_object_add(o, "finished", json_object_new_boolean(t->finished));
    json_object_object_add(o, "config_hash", json_object_new_string(t->config_hash));
    json_object_object_add(o, "ga", pf_ga_to_json(&t->ga));
    char *path = pf_run_path(t->dir, PF_RUN_CHECKPOINT);
    int rc = pf_run_write_json(path, o, err);
    free(path);
    json_object_put(o);
    return rc;
}

static int update_train_frontier(pf_tune *t, pf_error *err)
{
    int *front;
    t->frontier_size = pf_tune_train_front(t, &front);
    int rc = pf_tune_write_train(t, front, t->frontier_size, err);
    free(front);
    return rc;
}

static int count_invalid(const pf_ga *ga)
{
    int n = 0;
    for (int i = 0; i < ga->n_pop; i++)
        n += !isfinite(ga->pop[i].time);
    return n;
}

static int run_generation(pf_tune *t, pf_evaluator *ev, pf_error *err)
{
    double t0 = pf_now_ms();
    int gen = t->ga.generation + 1, pending = 0, cached = 0;
    pf_tune_model_prepare(t, gen);
    int n = pf_ga_propose(&t->ga), fresh = 0, rc;
    if (t->cfg.eval.low_width > 0) {
        rc = pf_tune_fidelity_generation(t, ev, gen, &fresh, &cached, err);
    } else {
        pf_strmap index;
        pf_strmap_init(&index);
        rc = submit_generation(t, ev, &index, &pending, &cached, err);
        fresh = pending;
        if (rc == 0)
            rc = collect(t, ev, pending, gen, "search", measured, &index, err);
        pf_strmap_free(&index);
    }
    if (rc != 0)
        return rc;
    pf_ga_commit(&t->ga);
    if (update_train_frontier(t, err) != 0 || checkpoint(t, err) != 0)
        return -1;
    pf_tune_log(t, "generation %d/%d: %d genomes (%d measured, %d from the cache, %d elites), "
                "%d invalid; frontier %d; best speedup %.2fx at error <= %g; %.1f s", gen,
                t->cfg.ga.generations - 1, n, fresh, cached, n - fresh - cached,
                count_invalid(&t->ga), t->frontier_size, 1.0 / t->best_time, t->cfg.max_error,
                (pf_now_ms() - t0) / 1000);
    return 0;
}

/* ---- the end: test re-measurement, frontier files, summary ---- */

typedef struct test_ctx {
    const int *front;
    int n;
    int *test;
} test_ctx;

static void tested(pf_tune *t, int rec, void *ctx)
{
    test_ctx *c = ctx;
    for (int i = 0; i < c->n; i++)
        if (strcmp(t->recs[c->front[i]].schedule, t->recs[rec].schedule) == 0)
            c->test[i] = rec;
}

static int measure_test(pf_tune *t, pf_evaluator *ev, test_ctx *c, pf_error *err)
{
    int pending = 0;
    for (int i = 0; i < c->n; i++) {
        const char *text = t->recs[c->front[i]].schedule;
        if (pf_strmap_get(&t->cache[PF_SET_TEST], text, &c->test[i]))
            continue;
        c->test[i] = -1;
        if (pf_evaluator_submit(ev, t->next_id++, PF_SET_TEST, text, err) != 0)
            return -1;
        pending++;
    }
    pf_tune_log(t, "re-measuring the %d training-frontier variants on the test split (%d new)",
                c->n, pending);
    return collect(t, ev, pending, -1, "test", tested, c, err);
}

static void confirmed(pf_tune *t, int rec, void *ctx)
{
    (void)t, (void)rec, (void)ctx;
}

/* Measures again, fully timed, the training-frontier variants that have no confirmation yet;
 * the new record replaces the old ones in the final frontier (pf_tune_front_of), which may then
 * admit variants not yet confirmed: up to cfg.confirm rounds. Every frontier variant's numbers
 * then come from a measurement made after it was selected, free of the selection's luck (the
 * best of many noisy measurements is biased low). */
static int confirm_rounds(pf_tune *t, pf_evaluator *ev, pf_error *err)
{
    pf_evaluator_set_frontier(ev, NULL, 0);  /* no screening: every confirmation timed fully */
    /* with more paired samples than a search measurement: one that came out unlucky in the
     * search gets a fair second chance, one that came out lucky is caught */
    pf_evaluator_set_samples(ev, t->cfg.confirm_samples);
    t->confirming = true;
    for (int round = 1; round <= t->cfg.confirm; round++) {
        int *front, pending = 0;
        int n = pf_tune_front_select(t->recs, t->n_recs, INT_MAX, true, &front);
        for (int i = 0; i < n; i++) {
            if (t->recs[front[i]].generation == PF_GEN_CONFIRM)
                continue;
            if (pf_evaluator_submit(ev, t->next_id++, PF_SET_TRAIN, t->recs[front[i]].schedule,
                                    err) != 0) {
                free(front);
                return -1;
            }
            pending++;
        }
        free(front);
        if (pending == 0)
            return 0;
        pf_tune_log(t, "confirmation round %d/%d: measuring again %d of the %d training-frontier "
                    "variants", round, t->cfg.confirm, pending, n);
        int rc = collect(t, ev, pending, PF_GEN_CONFIRM, "confirm", confirmed, NULL, err);
        if (rc != 0)
            return rc;
    }
    int *front, n = pf_tune_train_front(t, &front), left = 0, aside = 0;
    for (int i = 0; i < n; i++)
        left += t->recs[front[i]].generation != PF_GEN_CONFIRM;
    free(front);
    int m = pf_tune_front_select(t->recs, t->n_recs, INT_MAX, true, &front);
    for (int i = 0; i < m; i++)
        aside += !t->recs[front[i]].full_timing;
    free(front);
    if (left > 0 && t->cfg.confirm > 0)
        pf_tune_log(t, "%d of the %d training-frontier variants are not confirmed after %d "
                    "rounds (generation column of %s)", left, n, t->cfg.confirm,
                    PF_RUN_FRONTIER_TRAIN);
    if (aside > 0 && t->cfg.confirm > 0)
        pf_tune_log(t, "%d variant(s) the screening set aside would reach the frontier and were "
                    "not confirmed in %d rounds: left out (one short sample per image is not a "
                    "claim)", aside, t->cfg.confirm);
    return 0;
}

static int confirm_front(pf_tune *t, pf_evaluator *ev, pf_error *err)
{
    int rc = confirm_rounds(t, ev, err);
    t->confirming = false;
    t->front_changed = true;
    share_frontier(t);
    return rc;
}

static int finish(pf_tune *t, pf_evaluator *ev, pf_error *err)
{
    int rc = confirm_front(t, ev, err);
    if (rc != 0)
        return rc;
    test_ctx c;
    int *front;
    c.n = pf_tune_train_front(t, &front);
    c.front = front;
    c.test = pf_xmalloc(sizeof *c.test * (size_t)(c.n + 1));
    /* The test split takes the confirmations' samples (confirm_rounds set them): its numbers
     * are the claims a person acts on and check_claims.py re-times, as the training frontier's
     * are confirmations. With the search's 5 samples, sub-millisecond blur variants came out
     * up to 19% off their time alone while their confirmed training numbers were within 5%. */
    pf_evaluator_set_samples(ev, t->cfg.confirm_samples);
    for (int i = 0; i < c.n; i++)
        c.test[i] = -1;
    t->frontier_size = c.n;
    rc = pf_tune_write_train(t, front, c.n, err);
    if (rc == 0 && t->cfg.test)
        rc = measure_test(t, ev, &c, err);
    if (rc == 0)
        rc = pf_tune_write_final(t, front, c.test, c.n, err);
    if (rc == 0) {
        t->finished = true;
        rc = checkpoint(t, err);
    }
    free(c.test);
    free(front);
    return rc;
}

int pf_tune_run(pf_tune *t, pf_evaluator *ev, const pf_tune_hooks *hooks, pf_error *err)
{
    static const pf_tune_hooks none = { 0 };
    t->hooks = hooks ? hooks : &none;
    t->ev = ev;
    ev->stop = t->hooks->stop;
    t->front_changed = true;
    share_frontier(t);
    t->t_start = pf_now_ms();
    t->done_session = 0;
    pf_tune_log(t, "evaluator: %s", pf_evaluator_describe(ev));
    if (t->log.cut)  /* evaluations.jsonl was cut on resume: say so where the user looks */
        pf_tune_log(t, "%s", t->log.cut);
    if (t->ga.generation >= 0 || t->n_recs > 0)
        pf_tune_log(t, "continuing after generation %d with %d evaluations on record%s",
                    t->ga.generation, t->n_recs, t->finished ? " (the search was finished)"
                                                             : "");
    pf_tune_log(t, "run: %s, mode %s, population %d, generations %d, seed %llu; time = mean "
                "relative time over the training images vs the exact program with the default "
                "execution schedule", t->cfg.source, pf_search_mode_name(t->cfg.ga.genome.mode),
                t->cfg.ga.population, t->cfg.ga.generations,
                (unsigned long long)t->cfg.ga.seed);
    for (int session = 0; !t->finished && t->ga.generation + 1 < t->cfg.ga.generations;
         session++) {
        if (t->hooks->stop_after > 0 && session == t->hooks->stop_after)
            return 0;
        int rc = run_generation(t, ev, err);
        if (rc != 0)
            return rc;
    }
    return finish(t, ev, err);
}
