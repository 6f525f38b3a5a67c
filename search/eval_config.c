/* The evaluation config: defaults, copies, its JSON form in config.json, and the images it
 * selects from the manifest. */
#include "search/evaluate.h"

#include "base/arena.h"
#include "dataset/manifest.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

/* Config numbers as people write them ("0.3", not "0.29999999999999999"). */
static json_object *dbl(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.10g", v);
    return json_object_new_double_s(v, buf);
}

void pf_eval_config_default(pf_eval_config *c)
{
    memset(c, 0, sizeof *c);
    c->backend = PF_BACKEND_JIT;
    c->samples = 5;
    c->min_sample_ms = 20;
    c->timeout_factor = 20;
    c->timeout_min_ms = 2000;
    c->extra_metrics = true;
    c->screen_ms = 5;
    c->screen_margin = 0.2;
}

static char *dup_or_null(const char *s)
{
    return s ? pf_xstrdup(s) : NULL;
}

void pf_eval_config_copy(pf_eval_config *dst, const pf_eval_config *src)
{
    *dst = *src;
    dst->program = dup_or_null(src->program);
    dst->dataset = dup_or_null(src->dataset);
    dst->lock_path = dup_or_null(src->lock_path);
    dst->params = pf_xcalloc((size_t)src->n_params + 1, sizeof *dst->params);
    for (int i = 0; i < src->n_params; i++)
        dst->params[i] = pf_xstrdup(src->params[i]);
}

void pf_eval_config_free(pf_eval_config *c)
{
    free(c->program);
    free(c->dataset);
    free(c->lock_path);
    for (int i = 0; i < c->n_params; i++)
        free(c->params[i]);
    free(c->params);
    memset(c, 0, sizeof *c);
}

static json_object *str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

json_object *pf_eval_config_to_json(const pf_eval_config *c)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "program", str_or_null(c->program));
    json_object *params = json_object_new_array();
    for (int i = 0; i < c->n_params; i++)
        json_object_array_add(params, json_object_new_string(c->params[i]));
    json_object_object_add(o, "params", params);
    json_object_object_add(o, "dataset", str_or_null(c->dataset));
    json_object_object_add(o, "width", json_object_new_int(c->width));
    json_object_object_add(o, "height", json_object_new_int(c->height));
    if (c->low_width > 0) {
        json_object_object_add(o, "low_width", json_object_new_int(c->low_width));
        json_object_object_add(o, "low_height", json_object_new_int(c->low_height));
    }
    json_object_object_add(o, "max_images", json_object_new_int(c->max_images));
    json_object_object_add(o, "backend", json_object_new_string(pf_backend_name(c->backend)));
    json_object_object_add(o, "samples", json_object_new_int(c->samples));
    json_object_object_add(o, "min_sample_ms", dbl(c->min_sample_ms));
    json_object_object_add(o, "timeout_factor", dbl(c->timeout_factor));
    json_object_object_add(o, "timeout_min_ms", dbl(c->timeout_min_ms));
    json_object_object_add(o, "lock_path", str_or_null(c->lock_path));
    json_object_object_add(o, "extra_metrics", json_object_new_boolean(c->extra_metrics));
    json_object_object_add(o, "threads", json_object_new_int(c->threads));
    json_object_object_add(o, "screen_ms", dbl(c->screen_ms));
    json_object_object_add(o, "screen_margin", dbl(c->screen_margin));
    /* only when set: the config.json of every other run stays as it was */
    if (c->strict_float)
        json_object_object_add(o, "strict_float", json_object_new_boolean(true));
    if (c->no_gpu_rows)
        json_object_object_add(o, "no_gpu_rows", json_object_new_boolean(true));
    return o;
}

static const char *get_s(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v) : NULL;
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void read_params(json_object *o, pf_eval_config *c)
{
    json_object *a = get(o, "params");
    int n = a && json_object_is_type(a, json_type_array) ? (int)json_object_array_length(a) : 0;
    c->params = pf_xcalloc((size_t)n + 1, sizeof *c->params);
    for (int i = 0; i < n; i++) {
        const char *s = json_object_get_string(json_object_array_get_idx(a, (size_t)i));
        if (s)
            c->params[c->n_params++] = pf_xstrdup(s);
    }
}

int pf_eval_config_from_json(json_object *o, pf_eval_config *c, pf_error *err)
{
    pf_eval_config_default(c);
    if (!o || !json_object_is_type(o, json_type_object))
        return pf_fail(err, "the evaluation config is not a JSON object");
    c->program = dup_or_null(get_s(o, "program"));
    c->dataset = dup_or_null(get_s(o, "dataset"));
    c->lock_path = dup_or_null(get_s(o, "lock_path"));
    read_params(o, c);
    json_object *v;
    if ((v = get(o, "width")))
        c->width = json_object_get_int(v);
    if ((v = get(o, "height")))
        c->height = json_object_get_int(v);
    if ((v = get(o, "low_width")))
        c->low_width = json_object_get_int(v);
    if ((v = get(o, "low_height")))
        c->low_height = json_object_get_int(v);
    if ((v = get(o, "max_images")))
        c->max_images = json_object_get_int(v);
    const char *b = get_s(o, "backend");
    if (b && pf_backend_parse(b, &c->backend) != 0)
        return pf_fail(err, "unknown backend '%s' in the evaluation config", b);
    if ((v = get(o, "samples")))
        c->samples = json_object_get_int(v);
    if ((v = get(o, "min_sample_ms")))
        c->min_sample_ms = json_object_get_double(v);
    if ((v = get(o, "timeout_factor")))
        c->timeout_factor = json_object_get_double(v);
    if ((v = get(o, "timeout_min_ms")))
        c->timeout_min_ms = json_object_get_double(v);
    if ((v = get(o, "extra_metrics")))
        c->extra_metrics = json_object_get_boolean(v);
    if ((v = get(o, "threads")))
        c->threads = json_object_get_int(v);
    /* a run from before screening resumes as it ran: every candidate timed in full */
    c->screen_ms = (v = get(o, "screen_ms")) ? json_object_get_double(v) : 0;
    if ((v = get(o, "screen_margin")))
        c->screen_margin = json_object_get_double(v);
    if ((v = get(o, "strict_float")))
        c->strict_float = json_object_get_boolean(v);
    if ((v = get(o, "no_gpu_rows")))
        c->no_gpu_rows = json_object_get_boolean(v);
    if (!c->program || !c->dataset || c->samples < 1)
        return pf_fail(err, "the evaluation config needs 'program', 'dataset' and samples >= 1");
    return 0;
}

char **pf_eval_image_list(const pf_eval_config *c, pf_image_set set, int *n, pf_error *err)
{
    pf_manifest *m = pf_manifest_load(c->dataset, err);
    if (!m)
        return NULL;
    pf_manifest_filter f = PF_MANIFEST_ANY;
    f.split = set == PF_SET_TEST ? PF_SPLIT_TEST : PF_SPLIT_TRAIN;
    f.width = set == PF_SET_LOW ? c->low_width : c->width;
    f.height = set == PF_SET_LOW ? c->low_height : c->height;
    if (set == PF_SET_LOW && c->low_width <= 0) {
        pf_manifest_free(m);
        pf_fail(err, "no low-fidelity resolution is configured");
        return NULL;
    }
    size_t count;
    char **paths = pf_manifest_list(m, &f, &count);
    pf_manifest_free(m);
    if (c->max_images > 0 && count > (size_t)c->max_images) {
        for (size_t i = (size_t)c->max_images; i < count; i++) {
            free(paths[i]);
            paths[i] = NULL;
        }
        count = (size_t)c->max_images;
    }
    if (count == 0) {
        pf_manifest_list_free(paths);
        char res[32] = "any size";
        if (f.width)
            snprintf(res, sizeof res, "%dx%d", f.width, f.height);
        pf_fail(err, "%s: no %s images at %s", c->dataset, set == PF_SET_TEST ? "test" : "train",
                res);
        return NULL;
    }
    *n = (int)count;
    return paths;
}
