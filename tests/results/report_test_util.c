/* Shared helpers of the report suites (see report_test_util.h). */
#include "tests/results/report_test_util.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "lang/lang.h"
#include "perforate/schedule.h"
#include "results/rundir.h"
#include "results/tune.h"
#include "search/pareto.h"
#include "tests/harness/harness.h"

#include <dirent.h>
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- files ---- */

char *rt_path(const char *dir, const char *name)
{
    return pf_path_join(dir, name);
}

char *rt_read(const char *dir, const char *name)
{
    char *path = rt_path(dir, name), *text = NULL;
    size_t len;
    if (pf_read_file(path, (size_t)1 << 30, &text, &len, NULL) != 0)
        text = NULL;
    free(path);
    return text;
}

void rt_write(const char *dir, const char *name, const char *text)
{
    char *path = rt_path(dir, name);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    free(path);
}

bool rt_exists(const char *dir, const char *name)
{
    char *path = rt_path(dir, name);
    struct stat st;
    bool ok = stat(path, &st) == 0;
    free(path);
    return ok;
}

void rt_copy_tree(const char *src, const char *dst)
{
    CU_ASSERT_EQUAL_FATAL(pf_mkdir_p(dst, NULL), 0);
    DIR *d = opendir(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        char *s = rt_path(src, e->d_name), *t = rt_path(dst, e->d_name);
        struct stat st;
        stat(s, &st);
        if (S_ISDIR(st.st_mode)) {
            rt_copy_tree(s, t);
        } else {
            char *text = NULL;
            size_t len = 0;
            CU_ASSERT_EQUAL(pf_read_file(s, (size_t)1 << 30, &text, &len, NULL), 0);
            CU_ASSERT_EQUAL(pf_write_file_atomic(t, text, len, NULL), 0);
            free(text);
        }
        free(s);
        free(t);
    }
    closedir(d);
}

/* ---- the synthetic run ---- */

/* The canonical text of a blur schedule (parsed and printed, as the search stores it). */
static char *canonical(const pf_program *prog, const char *text)
{
    pf_error err;
    pf_schedule *s = pf_schedule_from_string(prog, text, &err);
    if (!s)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_schedule_print(prog, s, &sb);
    pf_schedule_delete(s);
    return pf_sb_take(&sb);
}

typedef struct rt_rec {
    char *schedule;
    double time, error;
    int generation;
} rt_rec;

/* Time and error fall and rise with the spacings, so the frontier holds several of them. */
static int make_schedules(const pf_program *prog, rt_rec *r)
{
    static const int temp[] = { 1, 2, 4, 8 }, out[][2] = { { 1, 1 }, { 1, 2 }, { 2, 2 },
                                                           { 2, 4 }, { 4, 4 } };
    int n = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 5; b++)
            for (int ex = 0; ex < 2; ex++) {
                pf_strbuf sb;
                pf_sb_init(&sb);
                pf_sb_puts(&sb, "# perfora schedule 1\n");
                if (temp[a] > 1)
                    pf_sb_printf(&sb, "loop_temp grid 1 %d 1 reconstruct on-demand linear\n",
                                 temp[a]);
                if (out[b][0] * out[b][1] > 1)
                    pf_sb_printf(&sb, "loop_output grid %d %d 1\n", out[b][0], out[b][1]);
                if (ex)
                    pf_sb_puts(&sb, "loop_output exec tile 64 16 vectorize 8 parallel\n");
                r[n].schedule = canonical(prog, pf_sb_str(&sb));
                pf_sb_free(&sb);
                double cells = temp[a] * out[b][0] * out[b][1];
                r[n].time = round(1e4 * (ex ? 0.8 : 1.0) * pow(cells, -0.55) *
                                  (1 + 0.03 * ((a * 7 + b * 3) % 5))) / 1e4;
                r[n].error = round(1e3 * (0.9 * log2(temp[a]) + 1.4 * log2(out[b][0] * out[b][1])
                                          + 0.05 * ex)) / 1e3;
                r[n].generation = n % 4;
                n++;
            }
    return n;
}

static void record(pf_eval_record *q, long id, pf_image_set set, const char *schedule,
                   double time, double error, int generation)
{
    pf_record_init(q);
    q->id = id;
    q->set = set;
    q->schedule = pf_xstrdup(schedule);
    q->valid = true;
    q->time = time;
    q->error = error;
    q->psnr = error > 0 ? 48 - 4 * error : 100;
    q->ssim = 1 - error / 40;
    q->worker = (int)(id % 2);
    q->generation = generation;
    q->compile_ms = 300 + id % 7 * 10;
    q->run_ms = 20;
    q->error_ms = 15;
    q->timing_ms = 250;
    q->lock_wait_ms = 40;
    q->wall_ms = 700;
    q->n_images = 2;
    q->images = pf_xcalloc(2, sizeof *q->images);
    for (int i = 0; i < 2; i++)
        q->images[i] = (pf_eval_image){ .t_exact_ms = 2.0, .t_cand_ms = 2.0 * time,
                                        .rel_time = time * (i ? 1.08 : 0.92),
                                        .rel_lo = time * (i ? 1.08 : 0.92),
                                        .rel_hi = time * (i ? 1.08 : 0.92), .error = error,
                                        .psnr = q->psnr, .ssim = q->ssim, .runs = 20,
                                        .samples = 5 };
}

static void append(pf_run_log *log, pf_eval_record *q)
{
    CU_ASSERT_EQUAL(pf_run_log_append(log, q, NULL), 0);
    pf_record_free(q);
}

static void write_invalid(pf_run_log *log, long *id)
{
    static const char *const reasons[] = {
        "compile error: loop_output: out of registers (synthetic)",
        "crashed: the worker was killed by signal 11 (Segmentation fault)",
        "timed out: a call ran past 20 x the exact program's time + 2000 ms",
        "crashed: the worker was killed by signal 6 (Aborted)",
    };
    for (int i = 0; i < 4; i++) {
        char s[64];
        snprintf(s, sizeof s, "# perfora schedule 1\nloop_temp grid 1 %d 1\n", 3 + 2 * i);
        pf_eval_record q;
        record(&q, (*id)++, PF_SET_TRAIN, s, 0, 0, 1);
        pf_record_set_invalid(&q, "%s", reasons[i]);
        append(log, &q);
    }
}

static void write_log_and_checkpoint(const char *dir, int generations, long lines)
{
    rt_write(dir, PF_RUN_LOG,
             "2026-11-20 10:00:00  evaluator: synthetic (tests/results)\n"
             "2026-11-20 10:00:00  run: apps/blur.pf, mode full, population 20, generations 4\n"
             "2026-11-20 10:00:30  generation 0/3: 20 genomes (20 measured, 0 from the cache, "
             "0 elites), 0 invalid; frontier 3; best speedup 1.00x at error <= 10; 30.0 s\n"
             "2026-11-20 10:00:50  generation 1/3: 20 genomes (14 measured, 0 from the cache, "
             "6 elites), 4 invalid; frontier 4; best speedup 2.00x at error <= 10; 20.0 s\n"
             "2026-11-20 11:00:00  evaluator: synthetic (tests/results)\n"
             "2026-11-20 11:00:00  continuing after generation 1 with 34 evaluations on record\n"
             "2026-11-20 11:00:25  generation 2/3: 20 genomes (10 measured, 4 from the cache, "
             "6 elites), 0 invalid; frontier 5; best speedup 2.50x at error <= 10; 25.0 s\n"
             "2026-11-20 11:00:45  generation 3/3: 20 genomes (10 measured, 4 from the cache, "
             "6 elites), 0 invalid; frontier 6; best speedup 3.00x at error <= 10; 20.0 s\n");
    char buf[256];
    snprintf(buf, sizeof buf, "{\n  \"generation\":%d,\n  \"lines\":%ld,\n  \"finished\":true\n}\n",
             generations - 1, lines);
    rt_write(dir, PF_RUN_CHECKPOINT, buf);
}

/* The frontier of the valid records, as the report and the search compute it: with no
 * timing spread (these records have none), the rank-0 points faster than the exact program. */
static void frontier(const rt_rec *r, int n, rt_synthetic *out)
{
    double tm[64], er[64];
    int idx[64];
    for (int i = 0; i < n; i++) {
        tm[i] = r[i].time;
        er[i] = r[i].error;
    }
    int m = pf_pareto_front(tm, er, n, idx);
    out->n_front = 0;
    for (int k = 0; k < m; k++)
        if (tm[idx[k]] < 1)
            out->front[out->n_front++] = pf_xstrdup(r[idx[k]].schedule);
}

void rt_blur_config(pf_tune_config *cfg, int max_images)
{
    pf_tune_config_default(cfg);
    cfg->eval.program = pf_xstrdup(pf_test_src("apps/blur.pf"));
    cfg->eval.dataset = pf_xstrdup(pf_test_src("data/images"));
    cfg->eval.width = 256;
    cfg->eval.height = 192;
    cfg->eval.max_images = max_images;
}

static pf_tune *create(const char *dir)
{
    pf_tune_config cfg;
    rt_blur_config(&cfg, 2);
    cfg.ga.population = 20;
    cfg.ga.generations = 4;
    pf_error err;
    pf_tune *t = pf_tune_create(dir, &cfg, &err);
    if (!t)
        fprintf(stderr, "%s\n", err.msg);
    pf_tune_config_free(&cfg);
    return t;
}

void rt_make_run(const char *dir, rt_synthetic *out)
{
    memset(out, 0, sizeof *out);
    pf_tune *t = create(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    pf_tune_free(t);
    pf_program *prog = pf_load_program(pf_test_src("apps/blur.pf"), NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    rt_rec r[64];
    int n = make_schedules(prog, r);
    pf_program_free(prog);
    pf_run_log log;
    CU_ASSERT_EQUAL_FATAL(pf_run_log_open(&log, dir, NULL, NULL, NULL), 0);
    long id = 0;
    pf_eval_record q;
    for (int i = 0; i < n; i++) {
        record(&q, id++, PF_SET_TRAIN, r[i].schedule, r[i].time, r[i].error, r[i].generation);
        append(&log, &q);
    }
    write_invalid(&log, &id);
    frontier(r, n, out);
    for (int k = 0; k < out->n_front; k++) {  /* the test split: a little slower and worse */
        int i = 0;
        while (strcmp(r[i].schedule, out->front[k]) != 0)
            i++;
        record(&q, id++, PF_SET_TEST, r[i].schedule, r[i].time * 1.05, r[i].error * 1.1, -1);
        append(&log, &q);
    }
    out->n_train = n;
    out->n_invalid = 4;
    out->generations = 4;
    write_log_and_checkpoint(dir, 4, log.lines);
    pf_run_log_close(&log);
    for (int i = 0; i < n; i++)
        free(r[i].schedule);
}

void rt_synthetic_free(rt_synthetic *s)
{
    for (int k = 0; k < s->n_front; k++)
        free(s->front[k]);
    memset(s, 0, sizeof *s);
}

/* ---- parsing pages ---- */

xmlDocPtr rt_parse_xml(const char *path)
{
    xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
    CU_ASSERT_PTR_NOT_NULL(doc);
    return doc;
}

static int html_errors;

static void count_html_error(void *ctx, xmlErrorPtr e)
{
    (void)ctx;
    if (e->code == XML_HTML_UNKNOWN_TAG)
        return;
    fprintf(stderr, "HTML parser: line %d: %s", e->line, e->message);
    html_errors++;
}

int rt_html_errors(const char *path)
{
    html_errors = 0;
    xmlSetStructuredErrorFunc(NULL, (xmlStructuredErrorFunc)count_html_error);
    htmlDocPtr doc = htmlReadFile(path, "UTF-8", HTML_PARSE_NONET);
    xmlSetStructuredErrorFunc(NULL, NULL);
    if (!doc)
        html_errors++;
    xmlFreeDoc(doc);
    return html_errors;
}

static xmlXPathObjectPtr eval(xmlDocPtr doc, const char *expr)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathRegisterNs(ctx, BAD_CAST "h", BAD_CAST "http://www.w3.org/1999/xhtml");
    xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST expr, ctx);
    xmlXPathFreeContext(ctx);
    CU_ASSERT_PTR_NOT_NULL(o);
    return o;
}

int rt_xpath_count(xmlDocPtr doc, const char *expr)
{
    xmlXPathObjectPtr o = eval(doc, expr);
    int n = o && o->nodesetval ? o->nodesetval->nodeNr : 0;
    xmlXPathFreeObject(o);
    return n;
}

char *rt_xpath_string(xmlDocPtr doc, const char *expr, int index)
{
    xmlXPathObjectPtr o = eval(doc, expr);
    char *s = NULL;
    if (o && o->nodesetval && index < o->nodesetval->nodeNr) {
        xmlChar *c = xmlNodeGetContent(o->nodesetval->nodeTab[index]);
        s = pf_xstrdup((const char *)c);
        xmlFree(c);
    }
    xmlXPathFreeObject(o);
    return s;
}

/* config.json's "backend":"jit" becomes "backend":"<backend>"<extra> (extra: more fields of
 * the evaluation, each after a comma, or ""). */
static void set_backend_fields(const char *dir, const char *backend, const char *extra)
{
    static const char jit[] = "\"backend\":\"jit\"";
    char *cfg = rt_read(dir, "config.json");
    const char *p = cfg ? strstr(cfg, jit) : NULL;
    CU_ASSERT_PTR_NOT_NULL(p);
    if (!p) {
        free(cfg);
        return;
    }
    size_t at = (size_t)(p - cfg);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_putn(&sb, cfg, at);
    pf_sb_printf(&sb, "\"backend\":\"%s\"%s%s", backend, extra, cfg + at + strlen(jit));
    rt_write(dir, "config.json", pf_sb_str(&sb));
    pf_sb_free(&sb);
    free(cfg);
}

void rt_set_backend(const char *dir, const char *backend)
{
    set_backend_fields(dir, backend, "");
}

void rt_set_cuda_strict_float(const char *dir)
{
    set_backend_fields(dir, "cuda", ",\"strict_float\":true");
}
