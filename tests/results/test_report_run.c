/* The report of a synthetic run whose records are known: the page is well-formed XML and
 * HTML, names every frontier variant with its schedule in order, its pictures and plots decode,
 * its facts add up; a run cut off mid-line is reported as not finished; bad input (not a run,
 * another format, a bad line, a missing photo, foreign files in the output) gets a message
 * and leaves no report, or the earlier one, in place. */
#include "base/fileio.h"
#include "results/report.h"
#include "results/report_internal.h"
#include "tests/harness/harness.h"
#include "tests/results/report_test_util.h"

#include <dirent.h>
#include <libxml/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static rt_synthetic run;
static const char *run_dir;

/* One synthetic run for the suite, copied by tests that change it. */
static const char *synthetic(void)
{
    if (!run_dir) {
        run_dir = pf_test_tmp("synthetic");
        rt_make_run(run_dir, &run);
    }
    return run_dir;
}

static const char *copy_of(const char *name)
{
    const char *dir = pf_test_tmp(name);
    rt_copy_tree(synthetic(), dir);
    return dir;
}

static int report(const char *dir, bool images, pf_report_result *res, pf_error *err)
{
    pf_report_options o = { .run = dir, .no_images = !images };
    int rc = pf_report_write(&o, res, err);
    if (rc != 0 && err)
        fprintf(stderr, "(report: %s) ", err->msg);
    return rc;
}

static void check_pictures(const char *rdir, xmlDocPtr doc)
{
    int n = rt_xpath_count(doc, "//h:img");
    CU_ASSERT_EQUAL(n, 1 + 3 * run.n_front);  /* the input, then exact, output, map each */
    for (int i = 0; i < n; i++) {
        char expr[64];
        snprintf(expr, sizeof expr, "(//h:img)[%d]/@src", i + 1);
        char *src = rt_xpath_string(doc, expr, 0), *path = rt_path(rdir, src);
        pf_image *img = pf_image_load(path, NULL);
        CU_ASSERT_PTR_NOT_NULL(img);
        if (img) {
            CU_ASSERT_EQUAL(img->width, 256);
            CU_ASSERT_EQUAL(img->height, 192);
        }
        pf_image_free(img);
        free(path);
        free(src);
    }
}

static void check_variants(xmlDocPtr doc)
{
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "//h:tr[starts-with(@id, 'variant-')]"), run.n_front);
    for (int k = 0; k < run.n_front; k++) {
        char expr[128];
        snprintf(expr, sizeof expr, "//h:tr[@id='variant-%d']//h:pre", k);
        char *s = rt_xpath_string(doc, expr, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_STRING_EQUAL(s, run.front[k]);  /* in order of training error */
        free(s);
    }
    /* the Pareto plot: one marker per variant and split, with its numbers as a tooltip */
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "(//s:svg)[1]//s:title[contains(., '(training "
                                        "images)')]"), run.n_front);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "(//s:svg)[1]//s:title[contains(., '(test "
                                        "images)')]"), run.n_front);
}

static void check_facts(xmlDocPtr doc)
{
    char *crashed = rt_xpath_string(doc, "//h:tr[h:td[1]='crashed']/h:td[2]", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(crashed);
    CU_ASSERT_STRING_EQUAL(crashed, "2");
    free(crashed);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "//h:tr[h:td[1]='compile error']"), 1);
    char *wall = rt_xpath_string(doc, "//h:dt[.='wall time']/following-sibling::h:dd[1]", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(wall);
    CU_ASSERT_PTR_NOT_NULL(strstr(wall, "1 min 35 s in 2 sessions"));  /* 50 s + 45 s */
    free(wall);
    char *ev = rt_xpath_string(doc, "//h:dt[.='evaluations']/following-sibling::h:dd[1]", 0);
    char want[128];
    snprintf(want, sizeof want, "%d on the training images (%d invalid), %d test",
             run.n_train + run.n_invalid, run.n_invalid, run.n_front);
    CU_ASSERT_PTR_NOT_NULL(strstr(ev, want));
    free(ev);
}

static void test_page_of_a_synthetic_run(void)
{
    const char *dir = copy_of("page");
    pf_report_result res;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(report(dir, true, &res, &err), 0);
    CU_ASSERT_EQUAL(res.variants, run.n_front);
    CU_ASSERT(run.n_front >= 5);
    CU_ASSERT(!res.in_progress);
    CU_ASSERT_EQUAL(rt_html_errors(res.index), 0);
    xmlDocPtr doc = rt_parse_xml(res.index);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT(rt_xpath_count(doc, "//s:svg") >= 5);  /* Pareto, area, rate, phases, scale */
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "//h:script"), 0);
    check_variants(doc);
    check_pictures(res.dir, doc);
    check_facts(doc);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "//h:section[@id='search']//h:table//h:tr"), 1 + 4);
    xmlFreeDoc(doc);
    char *svg = rt_path(res.dir, "pareto.svg");
    xmlDocPtr sdoc = rt_parse_xml(svg);
    char *width = sdoc ? rt_xpath_string(sdoc, "/s:svg/@width", 0) : NULL;
    char *png_path = rt_path(res.dir, "pareto.png");
    pf_image *png = pf_image_load(png_path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(png);
    CU_ASSERT_EQUAL(png->width, 2 * atoi(width));
    char *manifest = rt_read(res.dir, PF_REPORT_MANIFEST);
    CU_ASSERT_PTR_NOT_NULL(strstr(manifest, "\nindex.html\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(manifest, "\nimg/variant-000-error.png\n"));
    if (getenv("PF_REPORT_KEEP"))  /* for looking at it */
        rt_copy_tree(dir, getenv("PF_REPORT_KEEP"));
    free(manifest);
    free(png_path);
    pf_image_free(png);
    free(width);
    xmlFreeDoc(sdoc);
    free(svg);
    pf_report_result_free(&res);
}

/* A search run on the GPU (backend cuda): its report, pictures included, is made on a machine
 * without one (the pictures come from the JIT, which runs the same plans). */
static void test_page_of_a_gpu_run(void)
{
    const char *dir = copy_of("gpu");
    rt_set_backend(dir, "cuda");
    pf_report_result res;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(report(dir, true, &res, &err), 0);
    xmlDocPtr doc = rt_parse_xml(res.index);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    check_pictures(res.dir, doc);
    char *text = rt_read(res.dir, "index.html");
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "backend cuda"));
    free(text);
    xmlFreeDoc(doc);
    pf_report_result_free(&res);
}

/* A model-guided run: its records carry predictions, and the page draws each against its
 * measurement; a run without them (the synthetic one) has no such figure. */
static void test_predicted_against_measured(void)
{
    const char *dir = copy_of("guided");
    char *text = rt_read(dir, "evaluations.jsonl");
    pf_strbuf sb;
    pf_sb_init(&sb);
    int predicted = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        pf_eval_record r;
        CU_ASSERT_EQUAL_FATAL(pf_record_from_json(line, &r, NULL), 0);
        if (r.set == PF_SET_TRAIN && r.generation >= 1 && r.valid) {
            r.pred_time = 1.25 * r.time;  /* in the measurements' order */
            r.pred_error = 2 * r.error;
            predicted++;
        }
        char *json = pf_record_to_json(&r);
        pf_sb_printf(&sb, "%s\n", json);
        free(json);
        pf_record_free(&r);
    }
    rt_write(dir, "evaluations.jsonl", pf_sb_str(&sb));
    pf_sb_free(&sb);
    free(text);
    CU_ASSERT(predicted >= 3);
    pf_report_result res;
    CU_ASSERT_EQUAL_FATAL(report(dir, false, &res, NULL), 0);
    xmlDocPtr doc = rt_parse_xml(res.index);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const char *fig = "//s:svg[s:title='predicted against measured']";
    CU_ASSERT_EQUAL(rt_xpath_count(doc, fig), 1);
    char expr[160];
    snprintf(expr, sizeof expr, "%s//s:text[starts-with(., 'relative time: Spearman 1.00 (%d "
             "candidates)')]", fig, predicted);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, expr), 1);
    snprintf(expr, sizeof expr, "%s//s:title[contains(., 'relative time predicted')]", fig);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, expr), predicted);  /* one marker per candidate */
    xmlFreeDoc(doc);
    pf_report_result_free(&res);
    const char *plain = copy_of("unguided");
    CU_ASSERT_EQUAL_FATAL(report(plain, false, &res, NULL), 0);
    doc = rt_parse_xml(res.index);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, fig), 0);
    xmlFreeDoc(doc);
    pf_report_result_free(&res);
}

/* A run being written: the last line half there, no checkpoint or test numbers yet. */
static void test_run_in_progress(void)
{
    const char *dir = copy_of("progress");
    char *path = rt_path(dir, "evaluations.jsonl"), *text = rt_read(dir, "evaluations.jsonl");
    char *end = text + strlen(text);
    for (int lines = 0; lines < run.n_front + 1;)  /* back to the last training record */
        lines += *--end == '\n';
    end[1] = '\0';
    pf_strbuf sb;  /* and a record being written */
    pf_sb_init(&sb);
    pf_sb_printf(&sb, "%s{\"id\":99,\"set\":\"train\",\"generation\":3,\"val", text);
    rt_write(dir, "evaluations.jsonl", pf_sb_str(&sb));
    pf_sb_free(&sb);
    char *ck = rt_path(dir, "checkpoint.json");
    unlink(ck);
    pf_report_result res;
    CU_ASSERT_EQUAL_FATAL(report(dir, true, &res, NULL), 0);
    CU_ASSERT(res.in_progress);
    xmlDocPtr doc = rt_parse_xml(res.index);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "//h:p[@class='status progress']"), 1);
    /* no test records: the pictures are of a training photo, which every variant ran on */
    char *caption = rt_xpath_string(doc, "//h:section[@id='pictures']/h:p", 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(caption, "one training photo, "));
    CU_ASSERT_PTR_NOT_NULL(strstr(caption, "/train/"));
    free(caption);
    char *status = rt_xpath_string(doc, "//h:p[@class='status progress']", 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(status, "was left out"));
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "//h:td[.='not measured yet']"), res.variants);
    free(status);
    xmlFreeDoc(doc);
    /* reported again, the earlier report is replaced */
    pf_report_result again;
    CU_ASSERT_EQUAL(report(dir, false, &again, NULL), 0);
    pf_report_result_free(&again);
    pf_report_result_free(&res);
    free(ck);
    free(text);
    free(path);
}

static void expect_failure(const char *dir, bool images, const char *words)
{
    pf_report_result res;
    pf_error err;
    pf_report_options o = { .run = dir, .no_images = !images };
    CU_ASSERT_EQUAL(pf_report_write(&o, &res, &err), -1);
    if (!strstr(err.msg, words))
        fprintf(stderr, "\nmessage: %s\nwanted: %s\n", err.msg, words);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, words));
}

static void test_not_a_run_or_another_format(void)
{
    const char *dir = pf_test_tmp("empty");
    pf_mkdir_p(dir, NULL);
    expect_failure(dir, false, "not a perfora run directory (no config.json)");
    expect_failure(pf_test_tmp("absent"), false, "No such file or directory");
    dir = copy_of("format");
    char *cfg = rt_read(dir, "config.json"), *p = strstr(cfg, "\"perfora_run\":1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    p[strlen("\"perfora_run\":")] = '2';
    rt_write(dir, "config.json", cfg);
    expect_failure(dir, false, "a run directory of format 2");
    CU_ASSERT(!rt_exists(dir, "report"));
    free(cfg);
}

static void test_bad_line(void)
{
    const char *dir = copy_of("badline");
    char *text = rt_read(dir, "evaluations.jsonl"), *second = strchr(text, '\n') + 1;
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_putn(&sb, text, (size_t)(second - text));
    pf_sb_puts(&sb, "{\"id\": 3, oops\n");
    pf_sb_puts(&sb, second);
    rt_write(dir, "evaluations.jsonl", pf_sb_str(&sb));
    expect_failure(dir, false, "evaluations.jsonl:2");
    pf_sb_free(&sb);
    free(text);
}

static bool has_partial(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    while (d && (e = readdir(d)))
        found |= strncmp(e->d_name, "report.partial-", 15) == 0;
    if (d)
        closedir(d);
    return found;
}

static void test_missing_photo(void)
{
    const char *dir = copy_of("photo");
    char *cfg = rt_read(dir, "config.json"), *p = strstr(cfg, "\"test_images\"");
    p = strstr(p, "/data/images/test/");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memcpy(p, "/data/images/gone/", 18);
    rt_write(dir, "config.json", cfg);
    expect_failure(dir, true, "data/images/gone/");
    expect_failure(dir, true, "--no-images");
    CU_ASSERT(!rt_exists(dir, "report"));
    CU_ASSERT(!has_partial(dir));
    pf_report_result res;
    CU_ASSERT_EQUAL(report(dir, false, &res, NULL), 0);  /* without pictures it works */
    pf_report_result_free(&res);
    free(cfg);
}

static void test_output_with_other_files(void)
{
    const char *dir = copy_of("foreign");
    pf_report_result res;
    CU_ASSERT_EQUAL_FATAL(report(dir, false, &res, NULL), 0);
    pf_report_result_free(&res);
    char *rdir = rt_path(dir, "report");
    rt_write(rdir, "notes.txt", "mine\n");
    expect_failure(dir, false, "holds notes.txt, which no perfora report wrote");
    CU_ASSERT(rt_exists(rdir, "notes.txt") && rt_exists(rdir, "index.html"));
    char *notes = rt_path(rdir, "notes.txt"), *manifest = rt_path(rdir, PF_REPORT_MANIFEST);
    unlink(notes);
    unlink(manifest);
    free(notes);
    free(manifest);
    expect_failure(dir, false, "not a perfora report");
    free(rdir);
}

/* A report killed midway leaves only dir/report.partial-PID, never dir/report; the next one
 * removes it. */
static void test_leftovers_of_a_killed_report(void)
{
    const char *dir = copy_of("killed");
    char *partial = rt_path(dir, "report.partial-2147483647");
    pf_mkdir_p(partial, NULL);
    rt_write(partial, "index.html", "<html>half</html>\n");
    pf_report_result res;
    CU_ASSERT_EQUAL(report(dir, false, &res, NULL), 0);
    CU_ASSERT(!rt_exists(dir, "report.partial-2147483647"));
    CU_ASSERT(rt_exists(dir, "report/index.html"));
    pf_report_result_free(&res);
    free(partial);
}

static void test_log_of_two_sessions(void)
{
    pf_report_run r;
    memset(&r, 0, sizeof r);
    pf_report_parse_log(&r,
        "2026-01-01 10:00:00  evaluator: pool\n"
        "2026-01-01 10:00:10  generation 0/1: 8 genomes (8 measured, 0 from the cache, 0 "
        "elites), 1 invalid; frontier 2; best speedup 1.10x at error <= 10; 9.5 s\n"
        "2026-01-01 12:00:00  evaluator: pool\n"
        "2026-01-01 12:00:20  generation 1/1: 8 genomes (5 measured, 1 from the cache, 2 "
        "elites), 0 invalid; frontier 2; best speedup 1.20x at error <= 10; 19.0 s\n"
        "torn line without a stamp\n");
    CU_ASSERT_EQUAL(r.sessions, 2);
    PF_ASSERT_NEAR(r.wall_s, 30, 1e-9);
    CU_ASSERT_EQUAL_FATAL(r.n_gens, 2);
    CU_ASSERT_EQUAL(r.gens[1].generation, 1);
    CU_ASSERT_EQUAL(r.gens[1].measured, 5);
    CU_ASSERT_EQUAL(r.gens[0].invalid, 1);
    PF_ASSERT_NEAR(r.gens[1].seconds, 19.0, 1e-9);
    CU_ASSERT_STRING_EQUAL(r.started, "2026-01-01 10:00:00");
    free(r.gens);
    free(r.evaluator);
    free(r.started);
    free(r.last_line);
}

static void suite_cleanup(void) __attribute__((destructor));
static void suite_cleanup(void)
{
    rt_synthetic_free(&run);
}

PF_TEST_SUITE(results_report, PF_TEST(test_page_of_a_synthetic_run), PF_TEST(test_page_of_a_gpu_run),
              PF_TEST(test_run_in_progress), PF_TEST(test_predicted_against_measured),
              PF_TEST(test_not_a_run_or_another_format),
              PF_TEST(test_bad_line), PF_TEST(test_missing_photo),
              PF_TEST(test_output_with_other_files), PF_TEST(test_leftovers_of_a_killed_report),
              PF_TEST(test_log_of_two_sessions))
