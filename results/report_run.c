/* Reading a run directory for the report, read-only: config.json, the complete lines of
 * evaluations.jsonl (a run in progress may be in the middle of a line), checkpoint.json and
 * log.txt when they exist; then the frontiers the page shows. */
#include "results/report_internal.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "results/tune_internal.h"
#include "search/pareto.h"
#include "search/strmap.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static json_object *get(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static char *get_str(json_object *o, const char *key)
{
    json_object *v = get(o, key);
    return pf_xstrdup(v && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                      : "");
}

static void read_image_list(pf_report_run *r, json_object *cfg, pf_image_set set)
{
    json_object *a = get(cfg, set == PF_SET_TRAIN ? "train_images" : "test_images");
    int n = a && json_object_is_type(a, json_type_array) ? (int)json_object_array_length(a) : 0;
    r->images[set] = pf_xcalloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; i < n; i++)
        r->images[set][i] = pf_xstrdup(json_object_get_string(json_object_array_get_idx(a, i)));
    r->n_images[set] = n;
}

static int read_config(pf_report_run *r, pf_error *err)
{
    char *path = pf_run_path(r->dir, PF_RUN_CONFIG);
    struct stat st;
    if (stat(path, &st) != 0) {
        free(path);
        return pf_fail(err, "%s: not a perfora run directory (no %s)", r->dir, PF_RUN_CONFIG);
    }
    json_object *o = pf_run_read_json(path, err);
    int rc = -1;
    json_object *fmt = get(o, "perfora_run");
    if (!o) {
        /* err says why */
    } else if (!fmt || json_object_get_int(fmt) != 1) {
        pf_fail(err, "%s: a run directory of format %s (written by perfora %s); this perfora "
                "(%s) reads format 1", path, fmt ? json_object_get_string(fmt) : "unknown",
                get(o, "version") ? json_object_get_string(get(o, "version")) : "unknown",
                PF_VERSION);
    } else if (pf_tune_config_from_json(o, &r->cfg, err) != 0) {
        pf_fail_prefix(err, "%s", path);
    } else {
        r->pipeline = get_str(o, "pipeline");
        r->version = get_str(o, "version");
        read_image_list(r, o, PF_SET_TRAIN);
        read_image_list(r, o, PF_SET_TEST);
        rc = 0;
    }
    json_object_put(o);
    free(path);
    return rc;
}

/* ---- evaluations.jsonl ---- */

static void read_extra(const char *line, pf_report_extra *x)
{
    x->host = NULL;
    x->rank = -1;
    x->spread_lo = x->spread_hi = NAN;
    if (!strstr(line, "\"host\"") && !strstr(line, "\"rank\"") && !strstr(line, "rel_time_min"))
        return;
    json_object *o = json_tokener_parse(line), *v;
    if ((v = get(o, "host")) && json_object_is_type(v, json_type_string))
        x->host = pf_xstrdup(json_object_get_string(v));
    if ((v = get(o, "rank")))
        x->rank = json_object_get_int(v);
    json_object *imgs = get(o, "images");
    int n = imgs && json_object_is_type(imgs, json_type_array)
                ? (int)json_object_array_length(imgs) : 0;
    for (int i = 0; i < n; i++) {
        json_object *im = json_object_array_get_idx(imgs, i), *lo = get(im, "rel_time_min"),
                    *hi = get(im, "rel_time_max");
        if (lo && hi) {
            x->spread_lo = fmin(isnan(x->spread_lo) ? INFINITY : x->spread_lo,
                                json_object_get_double(lo));
            x->spread_hi = fmax(isnan(x->spread_hi) ? -INFINITY : x->spread_hi,
                                json_object_get_double(hi));
        }
    }
    json_object_put(o);
}

static void add_record(pf_report_run *r, pf_eval_record *rec, const char *line, int *cap)
{
    if (r->n_recs == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        r->recs = pf_xrealloc(r->recs, sizeof *r->recs * (size_t)*cap);
        r->extra = pf_xrealloc(r->extra, sizeof *r->extra * (size_t)*cap);
    }
    read_extra(line, &r->extra[r->n_recs]);
    r->recs[r->n_recs++] = *rec;
}

/* Every complete line. A bad last line counts as torn, as pf_run_log_open counts it (the
 * search cuts it when it resumes); a bad line elsewhere is an error. */
static int parse_records(pf_report_run *r, char *text, size_t len, const char *path,
                         pf_error *err)
{
    int cap = 0;
    size_t pos = 0;
    long line_no = 0;
    while (pos < len) {
        char *nl = memchr(text + pos, '\n', len - pos);
        if (!nl)
            break;
        *nl = '\0';
        line_no++;
        pf_eval_record rec;
        if (pf_record_from_json(text + pos, &rec, err) != 0) {
            if ((size_t)(nl - text) + 1 == len)
                break;
            return pf_fail_prefix(err, "%s:%ld", path, line_no);
        }
        add_record(r, &rec, text + pos, &cap);
        pos = (size_t)(nl - text) + 1;
    }
    r->torn_bytes = (long)(len - pos);
    return 0;
}

static int read_records(pf_report_run *r, pf_error *err)
{
    char *path = pf_run_path(r->dir, PF_RUN_EVALUATIONS), *text = NULL;
    size_t len = 0;
    struct stat st;
    int rc = 0;
    if (stat(path, &st) == 0) {
        rc = pf_read_file(path, (size_t)4 << 30, &text, &len, err);
        if (rc == 0)
            rc = parse_records(r, text, len, path, err);
    }
    free(text);
    free(path);
    return rc;
}

/* ---- checkpoint.json, log.txt ---- */

static int read_checkpoint(pf_report_run *r, pf_error *err)
{
    char *path = pf_run_path(r->dir, PF_RUN_CHECKPOINT);
    struct stat st;
    int rc = 0;
    r->checkpoint_generation = -1;
    if (stat(path, &st) == 0) {
        json_object *o = pf_run_read_json(path, err), *v;
        if (!o) {
            rc = -1;
        } else {
            r->has_checkpoint = true;
            r->finished = (v = get(o, "finished")) && json_object_get_boolean(v);
            r->checkpoint_generation = (v = get(o, "generation")) ? json_object_get_int(v) : -1;
        }
        json_object_put(o);
    }
    free(path);
    return rc;
}

static void read_log(pf_report_run *r)
{
    char *path = pf_run_path(r->dir, PF_RUN_LOG), *text = NULL;
    size_t len;
    if (pf_read_file(path, (size_t)1 << 30, &text, &len, NULL) == 0)
        pf_report_parse_log(r, text);
    free(text);
    free(path);
}

/* ---- frontiers ---- */

double pf_report_area(const pf_report_run *r, int gen)
{
    int *front, n = pf_tune_front_of(r->recs, r->n_recs, gen, &front);
    double *tm = pf_xmalloc(sizeof *tm * 2 * (size_t)(n + 1)), *er = tm + n;
    for (int i = 0; i < n; i++) {
        tm[i] = r->recs[front[i]].time;
        er[i] = r->recs[front[i]].error;
    }
    double a = pf_frontier_area(tm, er, n, r->cfg.max_error);
    free(tm);
    free(front);
    return a;
}

/* Each frontier variant's test record: the last test record of the same schedule. */
static void match_tests(pf_report_run *r)
{
    pf_strmap tests;
    pf_strmap_init(&tests);
    for (int i = 0; i < r->n_recs; i++)
        if (r->recs[i].set == PF_SET_TEST)
            pf_strmap_put(&tests, r->recs[i].schedule, i);
    r->test = pf_xmalloc(sizeof *r->test * (size_t)(r->n_front + 1));
    for (int k = 0; k < r->n_front; k++)
        if (!pf_strmap_get(&tests, r->recs[r->front[k]].schedule, &r->test[k]))
            r->test[k] = -1;
    pf_strmap_free(&tests);
}

static void derive(pf_report_run *r)
{
    r->last_generation = -1;
    for (int i = 0; i < r->n_recs; i++)
        if (r->recs[i].generation > r->last_generation)
            r->last_generation = r->recs[i].generation;
    r->n_front = pf_tune_front_of(r->recs, r->n_recs, INT_MAX, &r->front);
    match_tests(r);
}

static char *last_component(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t s = n;
    while (s > 0 && dir[s - 1] != '/')
        s--;
    char *out = pf_xmalloc(n - s + 1);
    memcpy(out, dir + s, n - s);
    out[n - s] = '\0';
    return out;
}

int pf_report_run_load(pf_report_run *r, const char *dir, pf_error *err)
{
    memset(r, 0, sizeof *r);
    r->dir = pf_xstrdup(dir);
    r->label = last_component(dir);
    struct stat st;
    if (stat(dir, &st) != 0)
        return pf_fail(err, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return pf_fail(err, "%s: not a directory", dir);
    if (read_config(r, err) || read_records(r, err) || read_checkpoint(r, err))
        return -1;
    read_log(r);
    derive(r);
    return 0;
}

void pf_report_run_free(pf_report_run *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_recs; i++) {
        pf_record_free(&r->recs[i]);
        free(r->extra[i].host);
    }
    for (int s = 0; s < PF_SET_COUNT; s++) {
        for (int i = 0; i < r->n_images[s]; i++)
            free(r->images[s][i]);
        free(r->images[s]);
    }
    free(r->recs);
    free(r->extra);
    free(r->gens);
    free(r->front);
    free(r->test);
    free(r->evaluator);
    free(r->started);
    free(r->last_line);
    free(r->pipeline);
    free(r->version);
    free(r->label);
    free(r->dir);
    pf_tune_config_free(&r->cfg);
    memset(r, 0, sizeof *r);
}

pf_program *pf_report_run_program(const pf_report_run *r, pf_error *err)
{
    char *path = pf_run_path(r->dir, PF_RUN_PROGRAM);
    pf_program *p = pf_load_program(path, err);
    free(path);
    return p;
}

char *pf_report_run_title(const pf_report_run *r)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_printf(&sb, "%s (%s, %s)", r->label, r->pipeline,
                 pf_search_mode_name(r->cfg.ga.genome.mode));
    return pf_sb_take(&sb);
}

/* ---- invalid candidates, timing spread ---- */

static char *reason_kind(const char *reason)
{
    size_t n = strcspn(reason, ":(");
    const char *on = strstr(reason, " on ");
    if (on && (size_t)(on - reason) < n)
        n = (size_t)(on - reason);
    while (n > 0 && reason[n - 1] == ' ')
        n--;
    char *k = pf_xmalloc(n + 1);
    memcpy(k, reason, n);
    k[n] = '\0';
    return k;
}

int pf_report_invalid_kinds(const pf_report_run *r, pf_report_reason **out)
{
    pf_report_reason *k = NULL;
    int n = 0;
    for (int i = 0; i < r->n_recs; i++) {
        const pf_eval_record *q = &r->recs[i];
        if (q->valid)
            continue;
        const char *reason = q->reason ? q->reason : "no reason recorded";
        char *kind = reason_kind(reason);
        int j = 0;
        while (j < n && strcmp(k[j].kind, kind) != 0)
            j++;
        if (j == n) {
            k = pf_xrealloc(k, sizeof *k * (size_t)(n + 1));
            k[n++] = (pf_report_reason){ kind, 0, pf_xstrdup(reason) };
        } else {
            free(kind);
        }
        k[j].count++;
    }
    *out = k;
    return n;
}

void pf_report_reasons_free(pf_report_reason *k, int n)
{
    for (int i = 0; i < n; i++) {
        free(k[i].kind);
        free(k[i].example);
    }
    free(k);
}

void pf_report_rel_spread(const pf_eval_record *rec, double *lo, double *hi)
{
    *lo = rec->n_images ? INFINITY : NAN;
    *hi = rec->n_images ? -INFINITY : NAN;
    for (int i = 0; i < rec->n_images; i++) {
        *lo = fmin(*lo, rec->images[i].rel_time);
        *hi = fmax(*hi, rec->images[i].rel_time);
    }
}
