/* A search run: create or resume the run directory, then generation after generation propose,
 * evaluate (cache first), append, commit, checkpoint; at the end the frontiers (see tune.h). */
#include "results/tune_internal.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "codegen/cuda_driver.h"
#include "dataset/manifest.h"

#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Measurements enter the GA as evaluations.jsonl holds them (7 significant digits), so that a
 * resumed run ranks exactly as an uninterrupted one. */
double pf_round7(double v)
{
    if (!isfinite(v))
        return INFINITY;
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", v);
    return strtod(buf, NULL);
}

void pf_tune_log(pf_tune *t, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (t->logf) {
        time_t now = time(NULL);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", localtime(&now));
        fprintf(t->logf, "%s  %s\n", stamp, line);
        fflush(t->logf);
    }
    if (t->hooks && t->hooks->log)
        t->hooks->log(t->hooks->ctx, line);
}

const pf_tune_config *pf_tune_config_of(const pf_tune *t)
{
    return &t->cfg;
}

const char *pf_tune_dir(const pf_tune *t)
{
    return t->dir;
}

/* ---- records ---- */

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void note_best(pf_tune *t, const pf_eval_record *r)
{
    if (r->set == PF_SET_TRAIN && r->valid && r->error <= t->cfg.max_error &&
        r->time < t->best_time)
        t->best_time = r->time;
}

void pf_tune_add_record(pf_tune *t, pf_eval_record *r)
{
    if (t->n_recs == t->cap_recs) {
        t->cap_recs = t->cap_recs ? 2 * t->cap_recs : 256;
        t->recs = pf_xrealloc(t->recs, sizeof *t->recs * (size_t)t->cap_recs);
    }
    pf_strmap_put(&t->cache[r->set], r->schedule, t->n_recs);
    if (r->id >= t->next_id)
        t->next_id = r->id + 1;
    note_best(t, r);
    if (r->set == PF_SET_TRAIN && r->valid && isfinite(r->time) && isfinite(r->error) &&
        pf_front_add(&t->front, &t->n_front, r->error, r->time))
        t->front_changed = true;
    t->recs[t->n_recs++] = *r;
    pf_record_init(r);
}

/* pf_run_log_open's callback on resume: every line is a record (checked against the run);
 * the train genomes of the lines the checkpoint covers are `seen`. */
static int load_record(void *ctx, pf_eval_record *rec, pf_error *err)
{
    pf_tune *t = ctx;
    if (pf_tune_check_record(t, rec, err) != 0)
        return -1;
    if (t->n_recs < t->seen_lines && rec->set != PF_SET_TEST)  /* low fidelity: seen too */
        pf_ga_mark_seen(&t->ga, rec->schedule);
    pf_eval_record copy;
    pf_record_copy(&copy, rec);
    pf_tune_add_record(t, &copy);
    return 0;
}

/* ---- create and resume ---- */

static pf_tune *tune_new(const char *dir)
{
    pf_tune *t = pf_xcalloc(1, sizeof *t);
    t->dir = pf_xstrdup(dir);
    t->log.fd = -1;
    t->lock.fd = -1;
    t->best_time = 1.0;
    for (int s = 0; s < PF_SET_COUNT; s++)
        pf_strmap_init(&t->cache[s]);
    return t;
}

/* The run's own paths: the copied program and the lock (the directory may have moved). */
static void own_paths(pf_tune *t)
{
    free(t->cfg.eval.program);
    free(t->cfg.eval.lock_path);
    char abs[PATH_MAX];
    const char *base = realpath(t->dir, abs) ? abs : t->dir;
    t->cfg.eval.program = pf_run_path(base, PF_RUN_PROGRAM);
    t->cfg.eval.lock_path = pf_run_path(base, PF_RUN_LOCK);
}

/* Every --param applies to the program (what workers do with them later). */
static int check_params(const pf_program *prog, const pf_eval_config *e, pf_error *err)
{
    pf_param_values pv;
    pf_params_init(&pv, prog);
    int rc = 0;
    for (int i = 0; i < e->n_params && rc == 0; i++)
        if (pf_params_set(&pv, prog, e->params[i], err) != 0)
            rc = pf_fail_prefix(err, "param '%s'", e->params[i]);
    pf_params_free(&pv);
    return rc;
}

static int open_common(pf_tune *t, pf_error *err)
{
    own_paths(t);
    t->prog = pf_load_program(t->cfg.eval.program, err);
    if (!t->prog)
        return -1;
    t->cfg.ga.genome.gpu = t->cfg.eval.backend == PF_BACKEND_CUDA;  /* GPU execution genes */
    pf_ga_init(&t->ga, t->prog, &t->cfg.ga);
    pf_tune_model_open(t);
    char *log_path = pf_run_path(t->dir, PF_RUN_LOG);
    t->logf = fopen(log_path, "a");
    free(log_path);
    return t->logf ? 0 : pf_fail(err, "cannot open %s/%s", t->dir, PF_RUN_LOG);
}

static int file_hash(const char *path, char out[17], pf_error *err)
{
    char *text;
    size_t len;
    if (pf_read_file(path, PF_SOURCE_MAX_BYTES, &text, &len, err) != 0)
        return -1;
    pf_tune_hash_text(pf_tune_hash(text, len), out);
    free(text);
    return 0;
}

static int copy_program(pf_tune *t, const char *src, pf_error *err)
{
    char *text;
    size_t len;
    if (pf_read_file(src, PF_SOURCE_MAX_BYTES, &text, &len, err) != 0)
        return -1;
    char *dst = pf_run_path(t->dir, PF_RUN_PROGRAM);
    int rc = pf_write_file_atomic(dst, text, len, err);
    free(dst);
    pf_tune_hash_text(pf_tune_hash(text, len), t->program_hash);
    free(text);
    return rc;
}

/* What a new run needs, checked before anything is created: the images, the program and the
 * params it is given. */
static int check_inputs(const pf_tune_config *cfg, pf_error *err)
{
    const pf_eval_config *e = &cfg->eval;
    if (e->low_width > 0 &&
        (e->width <= 0 || (e->width == e->low_width && e->height == e->low_height)))
        return pf_fail(err, "multi-fidelity (--fidelity %dx%d) needs the full resolution "
                       "(--resolution), another one", e->low_width, e->low_height);
    for (int s = 0; s < PF_SET_COUNT; s++) {
        if ((s == PF_SET_TEST && !cfg->test) || (s == PF_SET_LOW && cfg->eval.low_width <= 0))
            continue;
        int n;
        char **paths = pf_eval_image_list(&cfg->eval, (pf_image_set)s, &n, err);
        if (!paths)
            return -1;
        pf_manifest_list_free(paths);
    }
    pf_program *prog = pf_load_program(cfg->eval.program, err);
    int rc = prog ? check_params(prog, &cfg->eval, err) : -1;
    pf_program_free(prog);
    if (rc == 0 && cfg->eval.backend == PF_BACKEND_CUDA) {  /* before the run exists */
        pf_cuda *c = pf_cuda_open(err);
        rc = c ? 0 : pf_fail_prefix(err, "--target cuda");
        pf_cuda_close(c);
    }
    return rc;
}

static int create_files(pf_tune *t, const pf_tune_config *cfg, pf_error *err)
{
    if (copy_program(t, cfg->eval.program, err) != 0)
        return -1;
    char abs[PATH_MAX];
    if (cfg->eval.dataset && realpath(cfg->eval.dataset, abs)) {
        free(t->cfg.eval.dataset);
        t->cfg.eval.dataset = pf_xstrdup(abs);
    }
    return 0;
}

static int write_config(pf_tune *t, pf_error *err)
{
    json_object *o = pf_tune_config_to_json(t);
    char *path = pf_run_path(t->dir, PF_RUN_CONFIG);
    int rc = pf_run_write_json(path, o, err);
    json_object_put(o);
    /* the hash of what a resume will read back */
    json_object *back = rc == 0 ? pf_run_read_json(path, err) : NULL;
    if (back)
        pf_tune_hash_text(pf_tune_config_hash(back), t->config_hash);
    json_object_put(back);
    free(path);
    return back ? 0 : -1;
}

pf_tune *pf_tune_create(const char *dir, const pf_tune_config *cfg, pf_error *err)
{
    pf_tune *t = tune_new(dir);
    t->cfg = *cfg;
    pf_eval_config_copy(&t->cfg.eval, &cfg->eval);
    t->cfg.source = pf_xstrdup(cfg->source ? cfg->source : cfg->eval.program);
    bool made = false;
    int rc = check_inputs(cfg, err);
    if (rc == 0)
        rc = pf_tune_claim_dir(t, &made, err);
    if (rc == 0)
        rc = create_files(t, cfg, err);
    if (rc == 0)
        rc = open_common(t, err);
    if (rc == 0)
        rc = pf_run_log_open(&t->log, dir, NULL, NULL, err);
    if (rc == 0)
        rc = write_config(t, err);  /* last: config.json is what makes the directory a run */
    if (rc != 0) {
        pf_run_log_close(&t->log);
        if (t->logf)
            fclose(t->logf);
        t->logf = NULL;
        pf_tune_undo_create(t, made);
        pf_tune_free(t);
        return NULL;
    }
    return t;
}

static int read_checkpoint(pf_tune *t, pf_error *err)
{
    char *path = pf_run_path(t->dir, PF_RUN_CHECKPOINT);
    struct stat st;
    bool exists = stat(path, &st) == 0;
    json_object *o = exists ? pf_run_read_json(path, err) : NULL, *v;
    int rc = !exists ? 0 : !o ? -1 : pf_tune_check_checkpoint(t, o, path, err);
    const char *h = rc == 0 && o && json_object_object_get_ex(o, "config_hash", &v)
                        ? json_object_get_string(v) : NULL;
    if (h && strcmp(h, t->config_hash) != 0)
        rc = pf_fail(err, "%s was changed after the run started (its hash is not the "
                     "config_hash of %s): a run's configuration is fixed; undo the edit or "
                     "start a new run", PF_RUN_CONFIG, path);
    if (rc == 0 && o && json_object_object_get_ex(o, "ga", &v) &&
        pf_ga_from_json(&t->ga, v, err) != 0)
        rc = pf_fail_prefix(err, "%s", path);
    if (rc == 0 && o) {
        t->seen_lines = json_object_get_int64(json_object_object_get(o, "lines"));
        t->finished = json_object_get_boolean(json_object_object_get(o, "finished"));
    }
    json_object_put(o);
    free(path);
    return rc;  /* no checkpoint: killed before the initial population was measured */
}

/* config.json, checked field by field, and program.pf against the hash it recorded. */
static int load_config(pf_tune *t, pf_error *err)
{
    char *path = pf_run_path(t->dir, PF_RUN_CONFIG);
    json_object *o = pf_run_read_json(path, err), *v;
    int rc = o ? pf_tune_check_config(o, path, err) : -1;
    if (rc == 0)
        rc = pf_tune_config_from_json(o, &t->cfg, err) == 0 ? 0
             : pf_fail_prefix(err, "%s", path);
    if (rc == 0)
        pf_tune_hash_text(pf_tune_config_hash(o), t->config_hash);
    char *prog = pf_run_path(t->dir, PF_RUN_PROGRAM);
    if (rc == 0)
        rc = file_hash(prog, t->program_hash, err);
    const char *h = rc == 0 && json_object_object_get_ex(o, "program_hash", &v)
                        ? json_object_get_string(v) : NULL;
    if (h && strcmp(h, t->program_hash) != 0)
        rc = pf_fail(err, "%s was changed after the run started (its hash is not the "
                     "program_hash of %s): the evaluations on record measured the old program; "
                     "undo the change or start a new run", prog, path);
    free(prog);
    json_object_put(o);
    free(path);
    return rc;
}

/* The record ids are unique, and evaluations.jsonl holds every line the checkpoint counts. */
static int check_log(pf_tune *t, pf_error *err)
{
    char *path = pf_run_path(t->dir, PF_RUN_EVALUATIONS);
    int rc = 0;
    if (t->log.lines < t->seen_lines)
        rc = pf_fail(err, "%s has %ld records but %s/%s counts %ld: records were lost (the file "
                     "was truncated or emptied); restore it from a copy, or start a new run",
                     path, t->log.lines, t->dir, PF_RUN_CHECKPOINT, t->seen_lines);
    long *ids = pf_xmalloc(sizeof *ids * (size_t)(t->n_recs + 1));
    for (int i = 0; i < t->n_recs; i++)
        ids[i] = t->recs[i].id;
    qsort(ids, (size_t)t->n_recs, sizeof *ids, cmp_long);
    for (int i = 1; rc == 0 && i < t->n_recs; i++)
        if (ids[i] == ids[i - 1])
            rc = pf_fail(err, "%s: id %ld appears twice", path, ids[i]);
    free(ids);
    free(path);
    return rc;
}

/* --generations on resume: extends or shortens what is left, never below what was run. */
static int set_generations(pf_tune *t, int generations, pf_error *err)
{
    if (generations - 1 < t->ga.generation)
        return pf_fail(err, "--generations %d: the run has already reached generation %d (it "
                       "can be extended, not cut below what was run)", generations,
                       t->ga.generation);
    if (t->ga.generation + 1 < generations)
        t->finished = false;  /* extended: the search goes on */
    t->cfg.ga.generations = generations;
    return write_config(t, err);  /* a later resume keeps the new length */
}

pf_tune *pf_tune_resume(const char *dir, int generations, pf_error *err)
{
    pf_tune *t = tune_new(dir);
    char *cfg = pf_run_path(dir, PF_RUN_CONFIG);
    struct stat st;
    int rc = stat(cfg, &st) == 0 ? 0 : pf_fail(err, "%s holds no run (no %s)", dir,
                                                PF_RUN_CONFIG);
    free(cfg);
    if (rc == 0)
        rc = pf_run_lock_take(&t->lock, dir, err);
    if (rc == 0)
        rc = load_config(t, err);
    if (rc == 0)
        rc = open_common(t, err);
    if (rc == 0)
        pf_tune_clean_temporaries(t);
    if (rc == 0)
        rc = check_params(t->prog, &t->cfg.eval, err);
    if (rc == 0)
        rc = read_checkpoint(t, err);
    if (rc == 0 && generations > 0)
        rc = set_generations(t, generations, err);
    if (rc == 0)
        rc = pf_run_log_open(&t->log, dir, load_record, t, err);
    if (rc == 0)
        rc = check_log(t, err);
    if (rc != 0) {
        pf_tune_free(t);
        return NULL;
    }
    return t;
}

void pf_tune_free(pf_tune *t)
{
    if (!t)
        return;
    pf_run_log_close(&t->log);
    if (t->logf)
        fclose(t->logf);
    free(t->front);
    for (int i = 0; i < t->n_recs; i++)
        pf_record_free(&t->recs[i]);
    free(t->recs);
    for (int s = 0; s < PF_SET_COUNT; s++)
        pf_strmap_free(&t->cache[s]);
    pf_tune_model_close(t);
    if (t->prog) {
        pf_ga_free(&t->ga);
        pf_program_free(t->prog);
    }
    pf_tune_config_free(&t->cfg);
    pf_run_lock_release(&t->lock);
    free(t->dir);
    free(t);
}
