/* A run's frontier files (docs/search.md, "The run directory"): frontier-train.tsv with one
 * schedule file per variant, frontier-test.tsv (the same variants re-measured on the test
 * split) and summary.json with the quality numbers of both. */
#include "results/tune_internal.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "search/pareto.h"
#include "search/strmap.h"

#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether record i takes part in the frontier of generations 0..max_generation: a training
 * record that is valid and was timed in full (unless `screened`); in the final frontier
 * (INT_MAX) the last confirmation of a schedule stands for all its records, so a measurement
 * that won by luck is not kept by its luck. */
static bool counts(const pf_eval_record *recs, int i, int max_generation,
                   const pf_strmap *confirmed, bool screened)
{
    const pf_eval_record *r = &recs[i];
    if (r->set != PF_SET_TRAIN || !r->valid || (!r->full_timing && !screened))
        return false;
    if (max_generation != INT_MAX)
        return r->generation >= 0 && r->generation <= max_generation;
    int last;
    return !pf_strmap_get(confirmed, r->schedule, &last) || last == i;
}

/* The upper end of a record's time: the paired ratios' third quartile (its time when the
 * spread is unknown). */
static double time_hi(const pf_eval_record *r)
{
    return isfinite(r->time_hi) && r->time_hi >= r->time ? r->time_hi : r->time;
}

typedef struct point {
    double error, time, hi;
    int rec;
} point;

static int by_error_time(const void *x, const void *y)
{
    const point *a = x, *b = y;
    if (a->error != b->error)
        return a->error < b->error ? -1 : 1;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->rec - b->rec;
}

int pf_tune_front_select(const pf_eval_record *recs, int n_recs, int max_generation,
                         bool screened, int **out)
{
    pf_strmap confirmed;  /* schedule -> its last confirmation record (valid or not) */
    pf_strmap_init(&confirmed);
    for (int i = 0; i < n_recs; i++)
        if (recs[i].set == PF_SET_TRAIN && recs[i].generation == PF_GEN_CONFIRM)
            pf_strmap_put(&confirmed, recs[i].schedule, i);
    int n = 0;
    point *p = pf_xmalloc(sizeof *p * (size_t)(n_recs + 1));
    for (int i = 0; i < n_recs; i++)
        if (counts(recs, i, max_generation, &confirmed, screened) && isfinite(recs[i].time) &&
            isfinite(recs[i].error))
            p[n++] = (point){ recs[i].error, recs[i].time, time_hi(&recs[i]), i };
    pf_strmap_free(&confirmed);
    qsort(p, (size_t)n, sizeof *p, by_error_time);
    /* By error: a point enters when even its slow end (time_hi) beats every point of no more
     * error already in, and the exact program (time 1 at error 0): an advantage within the
     * timing's spread is no advantage. */
    int m = 0, *idx = pf_xmalloc(sizeof *idx * (size_t)(n + 1));
    double best = 1.0;
    for (int k = 0; k < n; k++)
        if (p[k].hi < best) {
            best = p[k].time;
            idx[m++] = p[k].rec;
        }
    free(p);
    *out = idx;
    return m;
}

int pf_tune_front_of(const pf_eval_record *recs, int n_recs, int max_generation, int **out)
{
    return pf_tune_front_select(recs, n_recs, max_generation, false, out);
}

int pf_tune_train_front(const pf_tune *t, int **out)
{
    return pf_tune_front_of(t->recs, t->n_recs, INT_MAX, out);
}

/* "loop_temp grid 4 1 1 ...; loop_output ..." (the schedule's lines), or "exact". */
static void genes_line(const char *text, pf_strbuf *sb)
{
    const char *p = strchr(text, '\n');
    size_t start = sb->len;
    while (p && p[1]) {
        const char *line = p + 1, *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (sb->len > start)
            pf_sb_puts(sb, "; ");
        pf_sb_putn(sb, line, len);
        p = end;
    }
    if (sb->len == start)
        pf_sb_puts(sb, "exact");
}

static char *variant_file(int i)
{
    char name[64];
    snprintf(name, sizeof name, "%s/variant-%03d.sched", PF_RUN_FRONTIER_DIR, i);
    return pf_xstrdup(name);
}

static void measure_line(const char *label, const pf_eval_record *r, pf_strbuf *sb)
{
    if (!r || !r->valid)
        pf_sb_printf(sb, "%s: %s", label, r ? "invalid" : "not measured");
    else
        pf_sb_printf(sb, "%s: relative time %.4g (%.2fx), error %.4g Lab", label, r->time,
                     1.0 / r->time, r->error);
}

static int write_sched(pf_tune *t, int i, const pf_eval_record *train,
                       const pf_eval_record *test, pf_error *err)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    const char *text = train->schedule, *nl = strchr(text, '\n');
    size_t head = nl ? (size_t)(nl - text) + 1 : strlen(text);
    pf_sb_putn(&sb, text, head);
    pf_sb_printf(&sb, "# %s: frontier variant %d of the run in %s\n# ", t->cfg.source, i,
                 t->dir);
    measure_line("train", train, &sb);
    pf_sb_puts(&sb, "\n# ");
    measure_line("test", test, &sb);
    pf_sb_printf(&sb, "\n%s", text + head);
    char *rel = variant_file(i), *path = pf_run_path(t->dir, rel);
    int rc = pf_write_file_atomic(path, sb.data, sb.len, err);
    free(path);
    free(rel);
    pf_sb_free(&sb);
    return rc;
}

/* Removes variant files numbered from n on (the frontier can shrink). */
static void remove_stale(pf_tune *t, int n)
{
    for (int i = n;; i++) {
        char *rel = variant_file(i), *path = pf_run_path(t->dir, rel);
        int gone = unlink(path) != 0;
        free(path);
        free(rel);
        if (gone)
            return;
    }
}

static int write_variants(pf_tune *t, const int *front, const int *test, int n, pf_error *err)
{
    char *dir = pf_run_path(t->dir, PF_RUN_FRONTIER_DIR);
    int rc = pf_mkdir_p(dir, err);
    free(dir);
    for (int i = 0; i < n && rc == 0; i++)
        rc = write_sched(t, i, &t->recs[front[i]],
                         test && test[i] >= 0 ? &t->recs[test[i]] : NULL, err);
    remove_stale(t, n);
    return rc;
}

static int write_text(pf_tune *t, const char *name, const pf_strbuf *sb, pf_error *err)
{
    char *path = pf_run_path(t->dir, name);
    int rc = pf_write_file_atomic(path, sb->data ? sb->data : "", sb->len, err);
    free(path);
    return rc;
}

/* "LO\tHI\t": the speedups at the paired ratios' third and first quartiles (the timing's
 * spread; "-" when unknown). */
static void spread(const pf_eval_record *r, pf_strbuf *sb)
{
    if (isfinite(r->time_lo) && isfinite(r->time_hi) && r->time_lo > 0)
        pf_sb_printf(sb, "%.4g\t%.4g\t", 1.0 / r->time_hi, 1.0 / r->time_lo);
    else
        pf_sb_puts(sb, "-\t-\t");
}

int pf_tune_write_train(pf_tune *t, const int *front, int n, pf_error *err)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_puts(&sb, "variant\ttime\tspeedup\tspeedup_lo\tspeedup_hi\terror\tpsnr\tssim\t"
                    "generation\tfile\tschedule\n");
    for (int i = 0; i < n; i++) {
        const pf_eval_record *r = &t->recs[front[i]];
        char *file = variant_file(i);
        pf_sb_printf(&sb, "%d\t%.6g\t%.4g\t", i, r->time, 1.0 / r->time);
        spread(r, &sb);
        pf_sb_printf(&sb, "%.6g\t%.4g\t%.4g\t%d\t%s\t", r->error, r->psnr, r->ssim,
                     r->generation, file);
        genes_line(r->schedule, &sb);
        pf_sb_putc(&sb, '\n');
        free(file);
    }
    int rc = write_text(t, PF_RUN_FRONTIER_TRAIN, &sb, err);
    pf_sb_free(&sb);
    return rc ? rc : write_variants(t, front, NULL, n, err);
}

static void test_row(pf_tune *t, int i, const pf_eval_record *tr, const pf_eval_record *te,
                     pf_strbuf *sb)
{
    char *file = variant_file(i);
    pf_sb_printf(sb, "%d\t%.6g\t%.6g\t", i, tr->time, tr->error);
    if (te && te->valid) {
        pf_sb_printf(sb, "%.6g\t%.4g\t", te->time, 1.0 / te->time);
        spread(te, sb);
        pf_sb_printf(sb, "%.6g\t%.4g\t%.4g\tok", te->error, te->psnr, te->ssim);
    } else
        pf_sb_printf(sb, "-\t-\t-\t-\t-\t-\t-\t%s", te ? "invalid" : "not measured");
    pf_sb_printf(sb, "\t%s\n", file);
    free(file);
    (void)t;
}

static int write_test_tsv(pf_tune *t, const int *front, const int *test, int n, pf_error *err)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_puts(&sb, "variant\ttrain_time\ttrain_error\ttest_time\ttest_speedup\t"
                    "test_speedup_lo\ttest_speedup_hi\ttest_error\ttest_psnr\ttest_ssim\tstatus\t"
                    "file\n");
    for (int i = 0; i < n; i++)
        test_row(t, i, &t->recs[front[i]], test[i] >= 0 ? &t->recs[test[i]] : NULL, &sb);
    int rc = write_text(t, PF_RUN_FRONTIER_TEST, &sb, err);
    pf_sb_free(&sb);
    return rc;
}

/* ---- summary.json ---- */

static json_object *num(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

/* Quality numbers of a point set (indices into t->recs, invalid ones skipped). */
static json_object *quality(const pf_tune *t, const int *idx, int n)
{
    double *tm = pf_xmalloc(sizeof *tm * 2 * (size_t)(n + 1)), *er = tm + n;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (idx[i] >= 0 && t->recs[idx[i]].valid) {
            tm[m] = t->recs[idx[i]].time;
            er[m++] = t->recs[idx[i]].error;
        }
    double cap = t->cfg.max_error, best = pf_frontier_best_time(tm, er, m, cap);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "variants", json_object_new_int(m));
    json_object_object_add(o, "area", num(pf_frontier_area(tm, er, m, cap)));
    json_object_object_add(o, "area_released", num(pf_frontier_area_released(tm, er, m)));
    json_object_object_add(o, "best_time", num(best));
    json_object_object_add(o, "best_speedup", num(1.0 / best));
    for (double e = 1; e <= cap; e *= 2) {  /* speedups at a few error budgets */
        char key[40];
        snprintf(key, sizeof key, "speedup_at_error_%g", e);
        json_object_object_add(o, key, num(1.0 / pf_frontier_best_time(tm, er, m, e)));
    }
    free(tm);
    return o;
}

/* True when a schedule text has approximation lines (not only `exec` lines). */
static bool has_approx(const char *text)
{
    for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        const char *sp = strchr(p + 1, ' ');
        if (sp && strncmp(sp + 1, "exec", 4) != 0)
            return true;
    }
    return false;
}

/* The exact program: as measured (noise check: ~1) and with the best execution schedule. */
static void exact_numbers(const pf_tune *t, json_object *o)
{
    double exact = NAN, best = INFINITY;
    for (int i = 0; i < t->n_recs; i++) {
        const pf_eval_record *r = &t->recs[i];
        if (r->set != PF_SET_TRAIN || !r->valid || has_approx(r->schedule))
            continue;
        const char *nl = strchr(r->schedule, '\n');
        if (nl && !nl[1])  /* the version line alone: the default execution schedule */
            exact = r->time;
        if (r->time < best)
            best = r->time;
    }
    json_object_object_add(o, "exact_default_time", num(exact));
    json_object_object_add(o, "exact_best_exec_time", num(best));
    json_object_object_add(o, "exact_best_exec_speedup", num(1.0 / best));
}

static json_object *summary(const pf_tune *t, const int *front, const int *test, int n)
{
    json_object *o = json_object_new_object();
    int invalid = 0, train = 0;
    for (int i = 0; i < t->n_recs; i++) {
        train += t->recs[i].set == PF_SET_TRAIN;
        invalid += t->recs[i].set == PF_SET_TRAIN && !t->recs[i].valid;
    }
    json_object_object_add(o, "program", json_object_new_string(t->cfg.source));
    json_object_object_add(o, "mode",
                           json_object_new_string(pf_search_mode_name(t->cfg.ga.genome.mode)));
    json_object_object_add(o, "generations", json_object_new_int(t->ga.generation + 1));
    json_object_object_add(o, "population", json_object_new_int(t->cfg.ga.population));
    json_object_object_add(o, "evaluations", json_object_new_int(train));
    json_object_object_add(o, "invalid", json_object_new_int(invalid));
    json_object_object_add(o, "max_error", json_object_new_double(t->cfg.max_error));
    json_object_object_add(o, "train", quality(t, front, n));
    json_object_object_add(o, "test", t->cfg.test ? quality(t, test, n) : NULL);
    exact_numbers(t, o);
    json_object *fidelity = pf_tune_fidelity_summary(t);
    if (fidelity)
        json_object_object_add(o, "fidelity", fidelity);
    return o;
}

int pf_tune_write_final(pf_tune *t, const int *front, const int *test, int n, pf_error *err)
{
    if (write_variants(t, front, test, n, err) != 0 || write_test_tsv(t, front, test, n, err))
        return -1;
    json_object *s = summary(t, front, test, n);
    char *path = pf_run_path(t->dir, PF_RUN_SUMMARY);
    int rc = pf_run_write_json(path, s, err);
    free(path);
    json_object *tr, *te, *v;
    json_object_object_get_ex(s, "train", &tr);
    json_object_object_get_ex(s, "test", &te);
    double a_tr = json_object_object_get_ex(tr, "area", &v) ? json_object_get_double(v) : NAN;
    double a_te = te && json_object_object_get_ex(te, "area", &v) ? json_object_get_double(v)
                                                                  : NAN;
    pf_tune_log(t, "frontier: %d variants; area (mean relative time over error budgets 0..%g) "
                "train %.4f, test %.4f; written to %s/%s and %s/%s", n, t->cfg.max_error, a_tr,
                a_te, t->dir, PF_RUN_FRONTIER_TRAIN, t->dir, PF_RUN_FRONTIER_TEST);
    json_object_put(s);
    return rc;
}
