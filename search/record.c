/* Evaluation records: life cycle and their JSON form (json-c), which is both the wire format
 * between workers and the search and a line of evaluations.jsonl. */
#include "search/eval.h"

#include "base/arena.h"

#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const set_names[PF_SET_COUNT] = { "train", "test", "low" };

const char *pf_image_set_name(pf_image_set s)
{
    return (unsigned)s < PF_SET_COUNT ? set_names[s] : "?";
}

pf_image_set pf_image_set_parse(const char *name)
{
    for (int s = 0; name && s < PF_SET_COUNT; s++)
        if (strcmp(name, set_names[s]) == 0)
            return (pf_image_set)s;
    return PF_SET_TRAIN;
}

void pf_record_init(pf_eval_record *r)
{
    memset(r, 0, sizeof *r);
    r->time = r->error = r->time_lo = r->time_hi = INFINITY;
    r->psnr = r->ssim = NAN;
    r->worker = -1;
    r->rank = -1;
    r->screen_time = NAN;
    r->pred_time = r->pred_error = NAN;
    r->full_timing = true;
}

void pf_record_free(pf_eval_record *r)
{
    if (!r)
        return;
    free(r->schedule);
    free(r->reason);
    free(r->host);
    free(r->images);
    pf_record_init(r);
}

void pf_record_copy(pf_eval_record *dst, const pf_eval_record *src)
{
    *dst = *src;
    dst->schedule = src->schedule ? pf_xstrdup(src->schedule) : NULL;
    dst->reason = src->reason ? pf_xstrdup(src->reason) : NULL;
    dst->host = src->host ? pf_xstrdup(src->host) : NULL;
    dst->images = NULL;
    if (src->n_images > 0) {
        dst->images = pf_xmalloc(sizeof *dst->images * (size_t)src->n_images);
        memcpy(dst->images, src->images, sizeof *dst->images * (size_t)src->n_images);
    }
}

void pf_record_set_invalid(pf_eval_record *r, const char *fmt, ...)
{
    char buf[PF_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(r->reason);
    r->reason = pf_xstrdup(buf);
    r->valid = false;
    r->time = r->error = r->time_lo = r->time_hi = INFINITY;
    r->psnr = r->ssim = NAN;
}

/* ---- to JSON ---- */

/* Seven significant digits: plenty for times and errors, and lines stay short. */
static json_object *num(double v)
{
    if (!isfinite(v))
        return NULL;  /* json null */
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", v);
    return json_object_new_double_s(v, buf);
}

static json_object *image_json(const pf_eval_image *im)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "t_exact_ms", num(im->t_exact_ms));
    json_object_object_add(o, "t_cand_ms", num(im->t_cand_ms));
    json_object_object_add(o, "rel_time", num(im->rel_time));
    json_object_object_add(o, "rel_lo", num(im->rel_lo));
    json_object_object_add(o, "rel_hi", num(im->rel_hi));
    json_object_object_add(o, "error", num(im->error));
    json_object_object_add(o, "psnr", num(im->psnr));
    json_object_object_add(o, "ssim", num(im->ssim));
    json_object_object_add(o, "runs", json_object_new_int(im->runs));
    json_object_object_add(o, "samples", json_object_new_int(im->samples));
    return o;
}

static void add_costs(json_object *o, const pf_eval_record *r)
{
    json_object_object_add(o, "compile_ms", num(r->compile_ms));
    json_object_object_add(o, "run_ms", num(r->run_ms));
    json_object_object_add(o, "error_ms", num(r->error_ms));
    json_object_object_add(o, "timing_ms", num(r->timing_ms));
    json_object_object_add(o, "build_wait_ms", num(r->build_wait_ms));
    json_object_object_add(o, "build_cpu_ms", num(r->build_cpu_ms));
    json_object_object_add(o, "lock_wait_ms", num(r->lock_wait_ms));
    json_object_object_add(o, "wall_ms", num(r->wall_ms));
}

char *pf_record_to_json(const pf_eval_record *r)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_int64(r->id));
    json_object_object_add(o, "set", json_object_new_string(pf_image_set_name(r->set)));
    json_object_object_add(o, "generation", json_object_new_int(r->generation));
    json_object_object_add(o, "valid", json_object_new_boolean(r->valid));
    json_object_object_add(o, "reason", r->reason ? json_object_new_string(r->reason) : NULL);
    json_object_object_add(o, "time", num(r->time));
    json_object_object_add(o, "time_lo", num(r->time_lo));
    json_object_object_add(o, "time_hi", num(r->time_hi));
    json_object_object_add(o, "error", num(r->error));
    json_object_object_add(o, "psnr", num(r->psnr));
    json_object_object_add(o, "ssim", num(r->ssim));
    json_object_object_add(o, "worker", json_object_new_int(r->worker));
    json_object_object_add(o, "rank", json_object_new_int(r->rank));
    json_object_object_add(o, "host", r->host ? json_object_new_string(r->host) : NULL);
    json_object_object_add(o, "full_timing", json_object_new_boolean(r->full_timing));
    json_object_object_add(o, "screen_time", num(r->screen_time));
    if (isfinite(r->pred_time) || isfinite(r->pred_error)) {  /* model-guided searches only */
        json_object_object_add(o, "pred_time", num(r->pred_time));
        json_object_object_add(o, "pred_error", num(r->pred_error));
    }
    add_costs(o, r);
    json_object *imgs = json_object_new_array();
    for (int i = 0; i < r->n_images; i++)
        json_object_array_add(imgs, image_json(&r->images[i]));
    json_object_object_add(o, "images", imgs);
    json_object_object_add(o, "schedule",
                           json_object_new_string(r->schedule ? r->schedule : ""));
    char *s = pf_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return s;
}

/* ---- from JSON ---- */

static double get_num(json_object *o, const char *key, double if_null)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !v)
        return if_null;
    return json_object_get_double(v);
}

static int get_int(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && v ? json_object_get_int(v) : 0;
}

static char *get_str(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !v || !json_object_is_type(v, json_type_string))
        return NULL;
    return pf_xstrdup(json_object_get_string(v));
}

static void read_image(json_object *o, pf_eval_image *im)
{
    im->t_exact_ms = get_num(o, "t_exact_ms", NAN);
    im->t_cand_ms = get_num(o, "t_cand_ms", NAN);
    im->rel_time = get_num(o, "rel_time", INFINITY);
    /* Records written before the spread was kept: no spread known, the median alone. */
    im->rel_lo = get_num(o, "rel_lo", im->rel_time);
    im->rel_hi = get_num(o, "rel_hi", im->rel_time);
    im->error = get_num(o, "error", INFINITY);
    im->psnr = get_num(o, "psnr", NAN);
    im->ssim = get_num(o, "ssim", NAN);
    im->runs = get_int(o, "runs");
    im->samples = get_int(o, "samples");
}

static void read_costs(json_object *o, pf_eval_record *r)
{
    r->compile_ms = get_num(o, "compile_ms", 0);
    r->run_ms = get_num(o, "run_ms", 0);
    r->error_ms = get_num(o, "error_ms", 0);
    r->timing_ms = get_num(o, "timing_ms", 0);
    r->build_wait_ms = get_num(o, "build_wait_ms", 0);
    r->build_cpu_ms = get_num(o, "build_cpu_ms", 0);
    r->lock_wait_ms = get_num(o, "lock_wait_ms", 0);
    r->wall_ms = get_num(o, "wall_ms", 0);
}

static int read_images(json_object *o, pf_eval_record *r)
{
    json_object *a;
    if (!json_object_object_get_ex(o, "images", &a) || !json_object_is_type(a, json_type_array))
        return -1;
    r->n_images = (int)json_object_array_length(a);
    r->images = pf_xcalloc((size_t)r->n_images + 1, sizeof *r->images);
    for (int i = 0; i < r->n_images; i++)
        read_image(json_object_array_get_idx(a, (size_t)i), &r->images[i]);
    return 0;
}

int pf_record_from_json(const char *text, pf_eval_record *r, pf_error *err)
{
    pf_record_init(r);
    enum json_tokener_error jerr;
    json_object *o = json_tokener_parse_verbose(text, &jerr);
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return pf_fail(err, "not a JSON object (%s)", o ? "wrong type"
                                                         : json_tokener_error_desc(jerr));
    }
    json_object *v;
    r->id = json_object_object_get_ex(o, "id", &v) ? json_object_get_int64(v) : 0;
    char *set = get_str(o, "set");
    r->set = pf_image_set_parse(set);
    free(set);
    r->generation = get_int(o, "generation");
    r->valid = json_object_object_get_ex(o, "valid", &v) && json_object_get_boolean(v);
    r->reason = get_str(o, "reason");
    r->time = get_num(o, "time", INFINITY);
    r->time_lo = get_num(o, "time_lo", r->time);
    r->time_hi = get_num(o, "time_hi", r->time);
    r->error = get_num(o, "error", INFINITY);
    r->psnr = get_num(o, "psnr", NAN);
    r->ssim = get_num(o, "ssim", NAN);
    r->worker = get_int(o, "worker");
    r->rank = json_object_object_get_ex(o, "rank", &v) && v ? json_object_get_int(v) : -1;
    r->host = get_str(o, "host");
    /* records from before screening were all timed in full */
    r->full_timing = !json_object_object_get_ex(o, "full_timing", &v) || !v ||
                     json_object_get_boolean(v);
    r->screen_time = get_num(o, "screen_time", NAN);
    r->pred_time = get_num(o, "pred_time", NAN);
    r->pred_error = get_num(o, "pred_error", NAN);
    read_costs(o, r);
    r->schedule = get_str(o, "schedule");
    int rc = read_images(o, r);
    json_object_put(o);
    if (rc != 0 || !r->schedule) {
        pf_record_free(r);
        return pf_fail(err, "an evaluation record needs 'schedule' and 'images'");
    }
    return 0;
}
