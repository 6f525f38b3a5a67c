/* config.json of a run: the GA parameters, the evaluation config and the images, written once
 * when the run is created and read back by --resume (docs/search.md, "config.json"). */
#include "results/tune_internal.h"

#include "base/arena.h"
#include "dataset/manifest.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Config numbers as people write them ("0.3", not "0.29999999999999999"). */
static json_object *dbl(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.10g", v);
    return json_object_new_double_s(v, buf);
}

void pf_tune_config_default(pf_tune_config *c)
{
    memset(c, 0, sizeof *c);
    c->ga = pf_ga_params_default();
    pf_eval_config_default(&c->eval);
    c->max_error = 10.0;
    c->test = true;
    c->model = (pf_tune_model_config){ false, 0, 20, 0.25, 0 };
    c->fidelity = (pf_tune_fidelity_config){ 0.2, 0.1 };
    c->confirm = 3;
    c->confirm_samples = 15;
}

void pf_tune_config_free(pf_tune_config *c)
{
    pf_eval_config_free(&c->eval);
    free(c->source);
    memset(c, 0, sizeof *c);
}

static json_object *ga_json(const pf_ga_params *p)
{
    json_object *o = json_object_new_object();
    char seed[24];
    snprintf(seed, sizeof seed, "%" PRIu64, p->seed);
    json_object_object_add(o, "mode", json_object_new_string(pf_search_mode_name(p->genome.mode)));
    json_object_object_add(o, "population", json_object_new_int(p->population));
    json_object_object_add(o, "generations", json_object_new_int(p->generations));
    json_object_object_add(o, "tournament", json_object_new_int(p->tournament));
    json_object_object_add(o, "elite_frac", dbl(p->elite_frac));
    json_object_object_add(o, "mutant_frac", dbl(p->mutant_frac));
    json_object_object_add(o, "seed", json_object_new_string(seed));
    json_object_object_add(o, "seeds", json_object_new_boolean(p->seeds));
    json_object_object_add(o, "hints", json_object_new_boolean(p->genome.hints));
    json_object_object_add(o, "exec_rate", dbl(p->genome.exec_rate));
    json_object_object_add(o, "p_modify", dbl(p->genome.p_modify));
    json_object_object_add(o, "p_accept_for", dbl(p->genome.p_accept_for));
    return o;
}

static json_object *image_list(const pf_eval_config *c, pf_image_set set)
{
    json_object *a = json_object_new_array();
    int n;
    char **paths = pf_eval_image_list(c, set, &n, NULL);
    for (int i = 0; paths && i < n; i++)
        json_object_array_add(a, json_object_new_string(paths[i]));
    pf_manifest_list_free(paths);
    return a;
}

json_object *pf_tune_config_to_json(const pf_tune *t)
{
    const pf_tune_config *c = &t->cfg;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "perfora_run", json_object_new_int(1));
    json_object_object_add(o, "version", json_object_new_string(PF_VERSION));
    json_object_object_add(o, "program", json_object_new_string(c->source ? c->source : ""));
    json_object_object_add(o, "pipeline", json_object_new_string(t->prog->name));
    if (t->program_hash[0])  /* program.pf's, checked on resume */
        json_object_object_add(o, "program_hash", json_object_new_string(t->program_hash));
    json_object_object_add(o, "max_error", dbl(c->max_error));
    json_object_object_add(o, "test", json_object_new_boolean(c->test));
    json_object_object_add(o, "confirm", json_object_new_int(c->confirm));
    json_object_object_add(o, "confirm_samples", json_object_new_int(c->confirm_samples));
    json_object_object_add(o, "ga", ga_json(&c->ga));
    json_object_object_add(o, "model", pf_tune_model_config_json(&c->model));
    json_object_object_add(o, "evaluation", pf_eval_config_to_json(&c->eval));
    json_object_object_add(o, "train_images", image_list(&c->eval, PF_SET_TRAIN));
    json_object_object_add(o, "test_images", image_list(&c->eval, PF_SET_TEST));
    if (c->eval.low_width > 0) {
        json_object_object_add(o, "fidelity", pf_tune_fidelity_config_json(&c->fidelity));
        json_object_object_add(o, "low_images", image_list(&c->eval, PF_SET_LOW));
    }
    return o;
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static double get_d(json_object *o, const char *key, double dflt)
{
    json_object *v = get(o, key);
    return v ? json_object_get_double(v) : dflt;
}

static int get_i(json_object *o, const char *key, int dflt)
{
    json_object *v = get(o, key);
    return v ? json_object_get_int(v) : dflt;
}

static int read_ga(json_object *o, pf_ga_params *p, pf_error *err)
{
    if (!o)
        return pf_fail(err, "config.json has no 'ga' object");
    json_object *v = get(o, "mode");
    if (v && pf_search_mode_parse(json_object_get_string(v), &p->genome.mode) != 0)
        return pf_fail(err, "config.json: unknown mode '%s'", json_object_get_string(v));
    p->population = get_i(o, "population", p->population);
    p->generations = get_i(o, "generations", p->generations);
    p->tournament = get_i(o, "tournament", p->tournament);
    p->elite_frac = get_d(o, "elite_frac", p->elite_frac);
    p->mutant_frac = get_d(o, "mutant_frac", p->mutant_frac);
    if ((v = get(o, "seed")) && pf_seed_parse(json_object_get_string(v), &p->seed) != 0)
        return pf_fail(err, "config.json: ga.seed is not a seed (1 to 20 decimal digits)");
    /* Runs written before seeds existed had none: resuming one must not add them. */
    v = get(o, "seeds");
    p->seeds = v && json_object_get_boolean(v);
    if ((v = get(o, "hints")))
        p->genome.hints = json_object_get_boolean(v);
    p->genome.exec_rate = get_d(o, "exec_rate", p->genome.exec_rate);
    p->genome.p_modify = get_d(o, "p_modify", p->genome.p_modify);
    p->genome.p_accept_for = get_d(o, "p_accept_for", p->genome.p_accept_for);
    return 0;
}

int pf_tune_config_from_json(json_object *o, pf_tune_config *c, pf_error *err)
{
    pf_tune_config_default(c);
    if (!o || get_i(o, "perfora_run", 0) != 1)
        return pf_fail(err, "config.json is not a perfora run configuration (version 1)");
    json_object *v = get(o, "program");
    c->source = pf_xstrdup(v ? json_object_get_string(v) : "");
    c->max_error = get_d(o, "max_error", c->max_error);
    if ((v = get(o, "test")))
        c->test = json_object_get_boolean(v);
    /* Runs written before confirmation existed had none: resuming one adds none. */
    c->confirm = get_i(o, "confirm", 0);
    if (c->confirm < 0)
        return pf_fail(err, "config.json: 'confirm' is %d (rounds: 0 or more)", c->confirm);
    /* Runs written before confirmations took more samples confirm with the search's. */
    c->confirm_samples = get_i(o, "confirm_samples", 0);
    if (c->confirm_samples < 0)
        return pf_fail(err, "config.json: 'confirm_samples' is %d (0 or more)",
                       c->confirm_samples);
    if (read_ga(get(o, "ga"), &c->ga, err) != 0 ||
        pf_tune_model_config_read(get(o, "model"), &c->model, err) != 0 ||
        pf_tune_fidelity_config_read(get(o, "fidelity"), &c->fidelity, err) != 0)
        return -1;
    pf_eval_config_free(&c->eval);
    if (pf_eval_config_from_json(get(o, "evaluation"), &c->eval, err) != 0)
        return -1;
    if ((c->eval.low_width > 0) != (c->eval.low_height > 0) || c->eval.low_width < 0)
        return pf_fail(err, "config.json: evaluation.low_width and low_height are %dx%d (both "
                       "> 0, or neither)", c->eval.low_width, c->eval.low_height);
    return 0;
}
