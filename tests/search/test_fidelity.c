/* Multi-fidelity measurement (search/fidelity.c, results/tune_fidelity.c): the promotion rule
 * on made-up points, the relation measured between the fidelities, and runs with the fake
 * evaluator: a frontier made only of full-resolution measurements, a relation that follows the
 * evaluator (not assumed), and a run killed mid-generation that resumes to the same end. */
#include "base/fileio.h"
#include "cluster/pool.h"
#include "perforate/schedule.h"
#include "results/rundir.h"
#include "results/tune.h"
#include "search/fidelity.h"
#include "search/strmap.h"
#include "tests/harness/harness.h"
#include "tests/search/search_test_util.h"

#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void test_promotion_rule(void)
{
    const pf_front_point front[] = { { 0, 1.0 }, { 1, 0.5 }, { 3, 0.2 } };
    const char *text = "# perfora schedule 1\nloop_temp grid 2 2 1\n";
    bool random;
    /* within the margin of the point with no more error (0.5 > 0.8 x 0.55): promoted */
    CU_ASSERT(pf_fidelity_promote(front, 3, 2, 0.55, 0.2, 0, text, 1, &random));
    CU_ASSERT(!random);
    /* beaten by more than the margin (0.5 < 0.8 x 0.7): not, unless drawn */
    CU_ASSERT(!pf_fidelity_promote(front, 3, 2, 0.7, 0.2, 0, text, 1, &random));
    CU_ASSERT(pf_fidelity_promote(front, 3, 2, 0.7, 0.2, 1, text, 1, &random));
    CU_ASSERT(random);
    /* the point with more error (3, 0.2) does not count against it */
    CU_ASSERT(pf_fidelity_promote(front, 3, 2.5, 0.6, 0.2, 0, text, 1, NULL));
    /* a new frontier point, and the exact corner, are promoted */
    CU_ASSERT(pf_fidelity_promote(front, 3, 0.5, 0.4, 0.2, 0, text, 1, NULL));
    CU_ASSERT(pf_fidelity_promote(front, 3, 0, 1.0, 0.2, 0, text, 1, NULL));
    /* invalid at low fidelity: never, even drawn */
    CU_ASSERT(!pf_fidelity_promote(front, 3, INFINITY, INFINITY, 0.2, 1, text, 1, NULL));
}

/* The draw is a function of the text and the seed, and about uniform. */
static void test_promotion_draw(void)
{
    const char *a = "# perfora schedule 1\nloop_temp grid 2 2 1\n";
    CU_ASSERT_EQUAL(pf_fidelity_draw(a, 7), pf_fidelity_draw(a, 7));
    CU_ASSERT(pf_fidelity_draw(a, 7) != pf_fidelity_draw(a, 8));
    int below = 0;
    for (int i = 0; i < 2000; i++) {
        char text[64];
        snprintf(text, sizeof text, "# perfora schedule 1\nloop_temp grid %d 1 1\n", i);
        double d = pf_fidelity_draw(text, 5);
        CU_ASSERT(d >= 0 && d < 1);
        below += d < 0.1;
    }
    CU_ASSERT(below > 150 && below < 250);  /* 200 expected; sd 13 */
}

static void test_relation(void)
{
    double lt[] = { 0.2, 0.4, 0.5, 0.9 }, le[] = { 4, 2, 1, 0 };
    double ft[] = { 0.4, 0.8, 1.0, 1.8 }, fe[] = { 2, 1, 0.5, 0 };
    pf_fidelity_relation r;
    pf_fidelity_relate(lt, le, ft, fe, 4, &r);
    CU_ASSERT_EQUAL(r.pairs, 4);
    CU_ASSERT_DOUBLE_EQUAL(r.time_rho, 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.error_rho, 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.time_ratio, 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.error_ratio, 0.5, 1e-12);  /* the pair at error 0 left out */
    CU_ASSERT_DOUBLE_EQUAL(r.time_rel_err, 0, 1e-12);
    double rev[] = { 1.8, 1.0, 0.8, 0.4 };
    pf_fidelity_relate(lt, le, rev, fe, 4, &r);
    CU_ASSERT_DOUBLE_EQUAL(r.time_rho, -1, 1e-12);
    CU_ASSERT(r.time_rel_err > 0.3);
    pf_fidelity_relate(lt, le, ft, fe, 0, &r);
    CU_ASSERT_EQUAL(r.pairs, 0);
    CU_ASSERT(isnan(r.time_rho));
    CU_ASSERT_EQUAL(r.time_ratio, 1);
}

/* ---- runs with the fake evaluator ---- */

static void fidelity_config(pf_tune_config *c)
{
    pf_tune_config_default(c);
    st_blur_config(&c->eval, 1);
    c->eval.width = 820;
    c->eval.height = 614;
    c->eval.low_width = 256;
    c->eval.low_height = 192;
    c->ga.population = 12;
    c->ga.generations = 6;
    c->ga.seed = 2016;
    c->confirm = 1;
}

static long run(const char *dir, const pf_tune_config *cfg, bool independent, int stop_after)
{
    long submitted = 0;
    pf_error err;
    pf_tune *t = cfg ? pf_tune_create(dir, cfg, &err) : pf_tune_resume(dir, 0, &err);
    if (!t)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    pf_evaluator *ev = st_fake_evaluator_fidelity(0, &submitted, independent);
    pf_tune_hooks hooks = { .stop_after = stop_after };
    CU_ASSERT_EQUAL(pf_tune_run(t, ev, &hooks, &err), 0);
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
    return submitted;
}

static char *file_of(const char *dir, const char *name)
{
    char *text = st_run_file(dir, name);
    CU_ASSERT_PTR_NOT_NULL(text);
    return text;
}

/* The schedules measured per set (generations >= 0: the search's own measurements). */
static void measured_sets(const char *dir, pf_strmap *low, pf_strmap *full, int *n_low,
                          int *n_full)
{
    char *text = file_of(dir, PF_RUN_EVALUATIONS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    pf_strmap_init(low);
    pf_strmap_init(full);
    *n_low = *n_full = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        pf_eval_record r;
        CU_ASSERT_EQUAL_FATAL(pf_record_from_json(line, &r, NULL), 0);
        if (r.set == PF_SET_LOW) {
            CU_ASSERT(pf_strmap_add(low, r.schedule, r.generation));  /* measured once */
            ++*n_low;
        } else if (r.set == PF_SET_TRAIN && r.generation >= 0) {
            CU_ASSERT(pf_strmap_add(full, r.schedule, r.generation));
            ++*n_full;
        }
        pf_record_free(&r);
    }
    free(text);
}

static json_object *fidelity_summary(const char *dir)
{
    char *path = pf_run_path(dir, PF_RUN_SUMMARY);
    json_object *o = pf_run_read_json(path, NULL), *f = NULL;
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_FATAL(json_object_object_get_ex(o, "fidelity", &f));
    json_object_get(f);
    json_object_put(o);
    return f;
}

static double num(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && v ? json_object_get_double(v) : NAN;
}

/* Every child is measured at low fidelity first, only some at full resolution, each of those
 * after its low measurement in the same generation; every frontier variant is one of them. */
static void test_frontier_is_full_resolution(void)
{
    const char *dir = pf_test_tmp("fidelity");
    pf_tune_config cfg;
    fidelity_config(&cfg);
    run(dir, &cfg, false, 0);
    pf_strmap low, full;
    int n_low, n_full;
    measured_sets(dir, &low, &full, &n_low, &n_full);
    CU_ASSERT(n_full >= 1 && n_full < n_low);  /* the promotion set some aside */
    for (size_t i = 0; i < full.cap; i++) {
        if (!full.keys || !full.keys[i])
            continue;
        int gl = -1;
        CU_ASSERT(pf_strmap_get(&low, full.keys[i], &gl));
        CU_ASSERT_EQUAL(gl, full.values[i]);
    }
    pf_error err;
    char *path = pf_run_path(dir, PF_RUN_PROGRAM);
    pf_program *prog = pf_load_program(path, &err);
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    int variants = 0;
    for (;; variants++) {
        char name[64];
        snprintf(name, sizeof name, "%s/frontier/variant-%03d.sched", dir, variants);
        pf_schedule s;
        if (pf_schedule_load(prog, name, &s, &err) != 0)
            break;
        char *t = pf_schedule_text(prog, &s);
        CU_ASSERT(pf_strmap_get(&full, t, NULL));  /* measured at full resolution */
        free(t);
        pf_schedule_free(&s);
    }
    CU_ASSERT(variants >= 1);
    pf_program_free(prog);
    json_object *f = fidelity_summary(dir);
    CU_ASSERT_EQUAL((int)num(f, "measured_low"), n_low);
    CU_ASSERT_EQUAL((int)num(f, "measured_full"), n_full);
    CU_ASSERT_DOUBLE_EQUAL(num(f, "time_spearman"), 1, 1e-9);  /* the fake's relation */
    CU_ASSERT_DOUBLE_EQUAL(num(f, "time_ratio"), 2, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(num(f, "error_ratio"), 0.5, 1e-6);
    json_object_put(f);
    pf_strmap_free(&low);
    pf_strmap_free(&full);
    pf_tune_config_free(&cfg);
}

/* With low-fidelity measurements unrelated to the full ones, the run says so. */
static void test_relation_is_measured(void)
{
    const char *dir = pf_test_tmp("fidelity-unrelated");
    pf_tune_config cfg;
    fidelity_config(&cfg);
    cfg.fidelity.explore = 0.5;  /* enough pairs */
    run(dir, &cfg, true, 0);
    json_object *f = fidelity_summary(dir);
    CU_ASSERT(num(f, "pairs") >= 10);
    CU_ASSERT(fabs(num(f, "time_spearman")) < 0.6);
    CU_ASSERT(fabs(num(f, "time_ratio") - 2) > 0.05);
    json_object_put(f);
    pf_tune_config_free(&cfg);
}

/* A run killed in the middle of a generation (between its low-fidelity and full measurements
 * too) resumes to the same evaluations.jsonl as one never killed. */
static void test_resume_matches_uninterrupted(void)
{
    const char *a = pf_test_tmp("fidelity-whole"), *b = pf_test_tmp("fidelity-killed");
    pf_tune_config cfg;
    fidelity_config(&cfg);
    cfg.fidelity.explore = 0.3;
    run(a, &cfg, false, 0);
    char *whole = file_of(a, PF_RUN_EVALUATIONS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
    int lines = 0;
    for (char *p = whole; (p = strchr(p, '\n')); p++)
        lines++;
    for (int cut = 14; cut < lines - 4; cut += 7) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s-%d", b, cut);
        fflush(NULL);
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
            pf_error err;
            pf_tune *t = pf_tune_create(dir, &cfg, &err);
            long n = 0;
            pf_evaluator *ev = st_fake_evaluator_fidelity(3, &n, false);
            st_fake_stall_after(ev, cut);  /* killed there, never after the end */
            if (t && ev)
                pf_tune_run(t, ev, NULL, &err);
            _exit(3);
        }
        char *log = pf_run_path(dir, PF_RUN_EVALUATIONS);
        struct timespec ts = { 0, 1000000 };
        while (st_count_lines(log) < cut)
            nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        free(log);
        run(dir, NULL, false, 0);
        char *resumed = file_of(dir, PF_RUN_EVALUATIONS);
        CU_ASSERT_PTR_NOT_NULL_FATAL(resumed);
        CU_ASSERT_STRING_EQUAL(resumed, whole);
        free(resumed);
    }
    free(whole);
    pf_tune_config_free(&cfg);
}

/* Real workers (a pool of one) measure the low-fidelity set on the low-resolution training
 * images and the promoted children at the run's resolution: the records say which images. */
static void test_real_pool_measures_both_resolutions(void)
{
    const char *dir = pf_test_tmp("fidelity-real");
    pf_tune_config cfg;
    fidelity_config(&cfg);
    cfg.ga.population = 3;
    cfg.ga.generations = 2;
    cfg.fidelity.explore = 1;  /* every valid child promoted: both sets measured */
    cfg.confirm = 0;
    cfg.test = false;
    cfg.eval.timeout_min_ms = 600000;  /* a loaded machine or a sanitizer build is slow */
    pf_error err;
    pf_tune *t = pf_tune_create(dir, &cfg, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    pf_pool_options opt = { .jobs = 1, .watchdog_ms = 60000 };
    pf_evaluator *ev = pf_pool_new(&pf_tune_config_of(t)->eval, &opt, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    CU_ASSERT_EQUAL(pf_tune_run(t, ev, NULL, &err), 0);
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
    pf_strmap low, full;
    int n_low, n_full;
    measured_sets(dir, &low, &full, &n_low, &n_full);
    CU_ASSERT(n_low >= 3);
    CU_ASSERT_EQUAL(n_full, n_low);  /* explore 1: all promoted (all valid here) */
    char *text = file_of(dir, PF_RUN_EVALUATIONS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        pf_eval_record r;
        CU_ASSERT_EQUAL_FATAL(pf_record_from_json(line, &r, NULL), 0);
        if (!r.valid)
            fprintf(stderr, "invalid %s record: %s\n", pf_image_set_name(r.set), r.reason);
        CU_ASSERT(r.valid);
        CU_ASSERT_EQUAL(r.n_images, 1);
        /* the low set timed briefly (one sample), the full one as configured */
        CU_ASSERT(r.set != PF_SET_LOW || (!r.full_timing && r.images[0].samples == 1));
        pf_record_free(&r);
    }
    free(text);
    char *config = file_of(dir, PF_RUN_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(config, "_256x192.png"));  /* low_images */
    CU_ASSERT_PTR_NOT_NULL(strstr(config, "_820x614.png"));  /* train_images */
    free(config);
    pf_strmap_free(&low);
    pf_strmap_free(&full);
    pf_tune_config_free(&cfg);
}

PF_TEST_SUITE(search_fidelity, PF_TEST(test_promotion_rule), PF_TEST(test_promotion_draw),
              PF_TEST(test_relation), PF_TEST(test_frontier_is_full_resolution),
              PF_TEST(test_relation_is_measured), PF_TEST(test_resume_matches_uninterrupted),
              PF_TEST(test_real_pool_measures_both_resolutions))
