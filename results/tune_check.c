/* What --resume accepts from a run directory (issue 27: a zeroed generator state spun forever,
 * a generation of a million or `finished: true` ended a run early, a changed program.pf was
 * resumed against the old cache). Every field of config.json and checkpoint.json is checked
 * for its type and range, the files against each other (tune.c adds the counts of
 * evaluations.jsonl and each record), and a refusal names the file and the field. */
#include "results/tune_internal.h"

#include "base/arena.h"
#include "codegen/compile.h"
#include "search/genome.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- hashes: change detection of program.pf and config.json (FNV-1a, 64 bits; not meant
 * to stop someone who edits the hash as well) ---- */

uint64_t pf_tune_hash(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* config.json's hash, without ga.generations (--generations may change it on resume). */
uint64_t pf_tune_config_hash(json_object *config)
{
    json_object *copy = NULL, *ga;
    if (json_object_deep_copy(config, &copy, NULL) != 0)
        return 0;
    if (json_object_object_get_ex(copy, "ga", &ga) && json_object_is_type(ga, json_type_object))
        json_object_object_del(ga, "generations");
    const char *s = json_object_to_json_string_ext(copy, JSON_C_TO_STRING_PLAIN);
    uint64_t h = pf_tune_hash(s, strlen(s));
    json_object_put(copy);
    return h;
}

void pf_tune_hash_text(uint64_t h, char out[17])
{
    snprintf(out, 17, "%016" PRIx64, h);
}

/* ---- typed fields ---- */

typedef struct field_ctx {
    const char *file;   /* RUN/config.json */
    const char *obj;    /* "" or "ga." or "evaluation." */
    pf_error *err;
} field_ctx;

static int bad(const field_ctx *c, const char *key, const char *what)
{
    return pf_fail(c->err, "%s: %s%s %s", c->file, c->obj, key, what);
}

/* The field when present with type t (json_type_double accepts ints too), NULL when absent
 * and optional; *rc = -1 (with the message) otherwise. */
static json_object *typed(const field_ctx *c, json_object *o, const char *key, json_type t,
                          bool required, int *rc)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || (!v && !required)) {
        if (required)
            *rc = bad(c, key, "is missing");
        return NULL;
    }
    json_type vt = json_object_get_type(v);
    if (vt == t || (t == json_type_double && vt == json_type_int))
        return v;
    static const char *const names[] = { [json_type_null] = "null",
                                         [json_type_boolean] = "true or false",
                                         [json_type_double] = "a number",
                                         [json_type_int] = "a whole number",
                                         [json_type_object] = "an object",
                                         [json_type_array] = "an array",
                                         [json_type_string] = "a string" };
    char what[64];
    snprintf(what, sizeof what, "must be %s", names[t]);
    *rc = bad(c, key, what);
    return NULL;
}

static int int_field(const field_ctx *c, json_object *o, const char *key, int64_t lo, int64_t hi,
                     bool required)
{
    int rc = 0;
    json_object *v = typed(c, o, key, json_type_int, required, &rc);
    if (!v)
        return rc;
    int64_t x = json_object_get_int64(v);
    if (x >= lo && x <= hi)
        return 0;
    char what[96];
    snprintf(what, sizeof what, "is %s (must be %" PRId64 " to %" PRId64 ")",
             json_object_get_string(v), lo, hi);
    return bad(c, key, what);
}

static int num_field(const field_ctx *c, json_object *o, const char *key, double lo, double hi,
                     bool required)
{
    int rc = 0;
    json_object *v = typed(c, o, key, json_type_double, required, &rc);
    if (!v)
        return rc;
    double x = json_object_get_double(v);
    if (x >= lo && x <= hi)
        return 0;
    char what[96];
    snprintf(what, sizeof what, "is %s (must be %g to %g)", json_object_get_string(v), lo, hi);
    return bad(c, key, what);
}

static int kind_field(const field_ctx *c, json_object *o, const char *key, json_type t,
                      bool required)
{
    int rc = 0;
    typed(c, o, key, t, required, &rc);
    return rc;
}

/* ---- config.json ---- */

static int check_seed(const field_ctx *c, json_object *ga)
{
    int rc = 0;
    json_object *v = typed(c, ga, "seed", json_type_string, true, &rc);
    uint64_t seed;
    if (v && pf_seed_parse(json_object_get_string(v), &seed) != 0)
        return bad(c, "seed", "must be 1 to 20 decimal digits, at most 18446744073709551615");
    return rc;
}

static int check_ga(const field_ctx *top, json_object *ga)
{
    field_ctx c = { top->file, "ga.", top->err };
    int rc = 0;
    json_object *v = typed(&c, ga, "mode", json_type_string, true, &rc);
    pf_search_mode mode;
    if (v && pf_search_mode_parse(json_object_get_string(v), &mode) != 0)
        return bad(&c, "mode", "must be full, grid or loop");
    static const char *const fracs[] = { "elite_frac", "mutant_frac", "exec_rate", "p_modify",
                                         "p_accept_for" };
    for (size_t i = 0; rc == 0 && i < sizeof fracs / sizeof *fracs; i++)
        rc = num_field(&c, ga, fracs[i], 0, 1, true);
    /* the ranges of `perfora tune`'s options (cli/cmd_tune.c) */
    if (rc == 0)
        rc = int_field(&c, ga, "population", 2, 100000, true);
    if (rc == 0)
        rc = int_field(&c, ga, "generations", 1, 1000000, true);
    if (rc == 0)
        rc = int_field(&c, ga, "tournament", 1, 1000, true);
    if (rc == 0)
        rc = kind_field(&c, ga, "hints", json_type_boolean, true);
    return rc == 0 ? check_seed(&c, ga) : rc;
}

static int check_params(const field_ctx *c, json_object *ev)
{
    int rc = 0;
    json_object *a = typed(c, ev, "params", json_type_array, true, &rc);
    for (size_t i = 0; a && i < json_object_array_length(a); i++) {
        json_object *p = json_object_array_get_idx(a, i);
        const char *s = json_object_is_type(p, json_type_string) ? json_object_get_string(p)
                                                                 : NULL;
        if (!s || !strchr(s, '=') || s[0] == '=')
            return bad(c, "params", "must be strings NAME=VALUE");
    }
    return rc;
}

static int check_evaluation(const field_ctx *top, json_object *ev)
{
    field_ctx c = { top->file, "evaluation.", top->err };
    int rc = check_params(&c, ev);
    static const char *const strs[] = { "program", "dataset", "backend" };
    for (size_t i = 0; rc == 0 && i < sizeof strs / sizeof *strs; i++)
        rc = kind_field(&c, ev, strs[i], json_type_string, true);
    if (rc == 0) {
        /* the backends a search times: a --target cuda run records cuda */
        const char *b = json_object_get_string(json_object_object_get(ev, "backend"));
        pf_backend be;
        if (pf_backend_parse(b, &be) != 0 || be == PF_BACKEND_INTERP)
            return bad(&c, "backend", "must be jit, c or cuda");
    }
    static const struct { const char *key; int64_t lo, hi; } ints[] = {
        { "width", 0, 100000 }, { "height", 0, 100000 }, { "max_images", 0, 100000 },
        { "samples", 1, 1000 } };
    for (size_t i = 0; rc == 0 && i < sizeof ints / sizeof *ints; i++)
        rc = int_field(&c, ev, ints[i].key, ints[i].lo, ints[i].hi, true);
    static const struct { const char *key; double lo, hi; } nums[] = {
        { "min_sample_ms", 0, 1e6 }, { "timeout_factor", 1, 1e6 },
        { "timeout_min_ms", 1, 1e9 } };
    for (size_t i = 0; rc == 0 && i < sizeof nums / sizeof *nums; i++)
        rc = num_field(&c, ev, nums[i].key, nums[i].lo, nums[i].hi, true);
    if (rc == 0)
        rc = kind_field(&c, ev, "extra_metrics", json_type_boolean, true);
    if (rc == 0)
        rc = kind_field(&c, ev, "strict_float", json_type_boolean, false);
    if (rc == 0)
        rc = kind_field(&c, ev, "no_gpu_rows", json_type_boolean, false);
    if (rc == 0)
        rc = kind_field(&c, ev, "lock_path", json_type_string, false);
    return rc;
}

int pf_tune_check_config(json_object *o, const char *file, pf_error *err)
{
    field_ctx c = { file, "", err };
    if (!json_object_is_type(o, json_type_object))
        return pf_fail(err, "%s: not a JSON object", file);
    int rc = int_field(&c, o, "perfora_run", 1, 1, true);
    if (rc == 0)
        rc = kind_field(&c, o, "program", json_type_string, true);
    if (rc == 0)
        rc = num_field(&c, o, "max_error", 1e-6, 1e6, true);
    if (rc == 0)
        rc = kind_field(&c, o, "test", json_type_boolean, true);
    if (rc == 0)
        rc = kind_field(&c, o, "program_hash", json_type_string, false);
    if (rc == 0)
        rc = int_field(&c, o, "confirm", 0, 100, false);
    if (rc == 0)
        rc = int_field(&c, o, "confirm_samples", 0, 1000, false);
    json_object *ga = rc == 0 ? typed(&c, o, "ga", json_type_object, true, &rc) : NULL;
    if (ga)
        rc = check_ga(&c, ga);
    json_object *ev = rc == 0 ? typed(&c, o, "evaluation", json_type_object, true, &rc) : NULL;
    if (ev)
        rc = check_evaluation(&c, ev);
    return rc;
}

/* ---- checkpoint.json ---- */

/* 1 to 16 hex digits, nothing else. */
static bool hex_word(const char *s, uint64_t *out)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 1 || n > 16 || strspn(s, "0123456789abcdefABCDEF") != n)
        return false;
    *out = strtoull(s, NULL, 16);
    return true;
}

static int check_rng(const field_ctx *c, json_object *ga)
{
    int rc = 0;
    json_object *a = typed(c, ga, "rng", json_type_array, true, &rc);
    if (!a)
        return rc;
    uint64_t any = 0, w;
    if (json_object_array_length(a) != 4)
        return bad(c, "rng", "must hold 4 words");
    for (size_t i = 0; i < 4; i++) {
        json_object *x = json_object_array_get_idx(a, i);
        if (!json_object_is_type(x, json_type_string) || !hex_word(json_object_get_string(x), &w))
            return bad(c, "rng", "must be 4 strings of 1 to 16 hex digits");
        any |= w;
    }
    return any ? 0 : bad(c, "rng", "is all zero (xoshiro never leaves that state)");
}

static int check_member(const field_ctx *c, json_object *m)
{
    field_ctx mc = { c->file, "ga.population[].", c->err };
    int rc = json_object_is_type(m, json_type_object) ? 0 : bad(c, "population", "must hold "
                                                                "objects");
    if (rc == 0)
        rc = kind_field(&mc, m, "schedule", json_type_string, true);
    if (rc == 0)
        rc = num_field(&mc, m, "time", 0, INFINITY, false);
    if (rc == 0)
        rc = num_field(&mc, m, "error", 0, INFINITY, false);
    return rc;
}

int pf_tune_check_checkpoint(const pf_tune *t, json_object *o, const char *file, pf_error *err)
{
    field_ctx c = { file, "", err };
    int gens = t->cfg.ga.generations;
    if (!json_object_is_type(o, json_type_object))
        return pf_fail(err, "%s: not a JSON object", file);
    int rc = int_field(&c, o, "generation", -1, gens - 1, true);
    if (rc == 0)
        rc = int_field(&c, o, "lines", 0, INT64_MAX, true);
    if (rc == 0)
        rc = kind_field(&c, o, "finished", json_type_boolean, true);
    if (rc == 0)
        rc = kind_field(&c, o, "config_hash", json_type_string, false);
    json_object *ga = rc == 0 ? typed(&c, o, "ga", json_type_object, true, &rc) : NULL;
    field_ctx gc = { file, "ga.", err };
    if (ga)
        rc = int_field(&gc, ga, "generation", -1, gens - 1, true);
    if (rc == 0)
        rc = int_field(&gc, ga, "rejected_duplicates", 0, INT64_MAX, true);
    if (rc == 0)
        rc = check_rng(&gc, ga);
    json_object *pop = rc == 0 ? typed(&gc, ga, "population", json_type_array, true, &rc) : NULL;
    if (pop && (int64_t)json_object_array_length(pop) > t->cfg.ga.population)
        rc = bad(&gc, "population", "holds more genomes than the run's population");
    for (size_t i = 0; pop && rc == 0 && i < json_object_array_length(pop); i++)
        rc = check_member(&gc, json_object_array_get_idx(pop, i));
    if (rc != 0)
        return rc;
    int64_t g = json_object_get_int64(json_object_object_get(o, "generation"));
    if (g != json_object_get_int64(json_object_object_get(ga, "generation")))
        return bad(&c, "generation", "differs from ga.generation");
    if (json_object_get_boolean(json_object_object_get(o, "finished")) && g + 1 < gens)
        return pf_fail(err, "%s: finished is true but the run is at generation %" PRId64 " of "
                       "0..%d", file, g, gens - 1);
    return 0;
}

/* ---- evaluations.jsonl, one record ---- */

int pf_tune_check_record(const pf_tune *t, const pf_eval_record *r, pf_error *err)
{
    if (r->id < 0 || r->id >= ((int64_t)1 << 53))
        return pf_fail(err, "id %ld is out of range", r->id);
    if (r->generation < PF_GEN_CONFIRM || r->generation > t->cfg.ga.generations)
        return pf_fail(err, "generation %d is out of range (%d to %d)", r->generation,
                       PF_GEN_CONFIRM, t->cfg.ga.generations);
    if (r->valid && !(r->time > 0 && isfinite(r->time) && r->error >= 0 && isfinite(r->error)))
        return pf_fail(err, "a valid record needs a finite time > 0 and error >= 0");
    if (r->n_images < 0 || r->n_images > 100000)
        return pf_fail(err, "%d images", r->n_images);
    pf_schedule s;
    pf_error why;
    if (pf_schedule_parse(t->prog, r->schedule, "<record>", &s, &why) != 0)
        return pf_fail(err, "its schedule does not fit the run's program: %s", why.msg);
    pf_schedule_free(&s);
    return 0;
}
