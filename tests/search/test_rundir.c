/* The run directory: append-only evaluations.jsonl (a torn last line is cut, others kept),
 * checkpoints, the cache, and resume after SIGKILL: a run killed mid-generation and resumed
 * ends exactly like an uninterrupted one (fake evaluator), and a real pooled run survives the
 * same treatment. */
#include "base/fileio.h"
#include "cluster/pool.h"
#include "results/rundir.h"
#include "results/tune.h"
#include "search/ga.h"
#include "tests/harness/harness.h"
#include "tests/search/search_test_util.h"

#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void small_config(pf_tune_config *c, int population, int generations)
{
    pf_tune_config_default(c);
    st_blur_config(&c->eval, 1);
    c->ga.population = population;
    c->ga.generations = generations;
    c->ga.seed = 2016;
    c->confirm = 0;  /* these tests count measurements; confirmation has tests of its own */
}

/* A whole run with the fake evaluator; returns the submissions. */
static long fake_run(const char *dir, const pf_tune_config *cfg, bool resume, int stop_after)
{
    long submitted = 0;
    pf_error err;
    pf_tune *t = resume ? pf_tune_resume(dir, 0, &err) : pf_tune_create(dir, cfg, &err);
    if (!t)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    pf_evaluator *ev = st_fake_evaluator(resume ? 0 : 3, &submitted);
    pf_tune_hooks hooks = { .stop_after = stop_after };
    int rc = pf_tune_run(t, ev, &hooks, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL(rc, 0);
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
    return submitted;
}

/* Every line parses; no train genome was measured twice. */
static void check_log(const char *dir, long *train_lines)
{
    char *text = st_run_file(dir, PF_RUN_EVALUATIONS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    pf_strmap seen[PF_SET_COUNT];
    pf_strmap_init(&seen[0]);
    pf_strmap_init(&seen[1]);
    *train_lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        pf_eval_record r;
        CU_ASSERT_EQUAL_FATAL(pf_record_from_json(line, &r, NULL), 0);
        CU_ASSERT(pf_strmap_add(&seen[r.set], r.schedule, 0));
        *train_lines += r.set == PF_SET_TRAIN;
        pf_record_free(&r);
    }
    pf_strmap_free(&seen[0]);
    pf_strmap_free(&seen[1]);
    free(text);
}

static char *population_of(const char *dir)
{
    char *path = pf_run_path(dir, PF_RUN_CHECKPOINT);
    json_object *o = pf_run_read_json(path, NULL), *ga, *pop;
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT(json_object_object_get_ex(o, "ga", &ga));
    CU_ASSERT(json_object_object_get_ex(ga, "population", &pop));
    char *s = strdup(json_object_to_json_string(pop));
    json_object_put(o);
    return s;
}

static void test_log_appends_and_cuts_torn_lines(void)
{
    const char *dir = pf_test_tmp("log");
    pf_error err;
    CU_ASSERT_EQUAL(pf_mkdir_p(dir, &err), 0);
    pf_run_log log;
    CU_ASSERT_EQUAL_FATAL(pf_run_log_open(&log, dir, NULL, NULL, &err), 0);
    pf_eval_record r;
    pf_record_init(&r);
    r.schedule = strdup("# perfora schedule 1\n");
    r.images = NULL;
    for (int i = 0; i < 3; i++) {
        r.id = i;
        CU_ASSERT_EQUAL(pf_run_log_append(&log, &r, &err), 0);
    }
    pf_run_log_close(&log);
    char *path = pf_run_path(dir, PF_RUN_EVALUATIONS);
    FILE *f = fopen(path, "a");
    fputs("{\"id\": 3, \"sched", f);  /* what a kill in the middle of a write leaves */
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(pf_run_log_open(&log, dir, NULL, NULL, &err), 0);
    CU_ASSERT_EQUAL(log.lines, 3);
    r.id = 4;
    CU_ASSERT_EQUAL(pf_run_log_append(&log, &r, &err), 0);
    pf_run_log_close(&log);
    CU_ASSERT_EQUAL(st_count_lines(path), 4);
    CU_ASSERT_EQUAL_FATAL(pf_run_log_open(&log, dir, NULL, NULL, &err), 0);
    CU_ASSERT_EQUAL(log.lines, 4);
    pf_run_log_close(&log);
    f = fopen(path, "r+");  /* a bad line that is not the last one is an error */
    fputs("xx", f);
    fclose(f);
    CU_ASSERT_EQUAL(pf_run_log_open(&log, dir, NULL, NULL, &err), -1);
    free(path);
    pf_record_free(&r);
}

static void test_run_files_and_cache(void)
{
    const char *dir = pf_test_tmp("run-a");
    pf_tune_config cfg;
    small_config(&cfg, 8, 4);
    long n = fake_run(dir, &cfg, false, 0);
    long lines;
    check_log(dir, &lines);
    char *log = pf_run_path(dir, PF_RUN_EVALUATIONS);
    CU_ASSERT_EQUAL(n, st_count_lines(log));
    free(log);
    /* N, then N - floor(0.3 N) per generation, unless a tiny space ran out of new genomes. */
    CU_ASSERT(lines > 8 && lines <= 8 + 3 * (8 - 2));
    char *train = st_run_file(dir, PF_RUN_FRONTIER_TRAIN), *test = st_run_file(dir,
                                                                         PF_RUN_FRONTIER_TEST);
    CU_ASSERT_PTR_NOT_NULL(train);
    CU_ASSERT_PTR_NOT_NULL(test);
    CU_ASSERT(strncmp(test, "variant\ttrain_time", 18) == 0);
    char *sched = st_run_file(dir, "frontier/variant-000.sched");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sched);
    CU_ASSERT(strncmp(sched, "# perfora schedule 1\n", 21) == 0);
    char *summary = st_run_file(dir, PF_RUN_SUMMARY);
    CU_ASSERT_PTR_NOT_NULL(strstr(summary, "\"area\""));
    /* Resuming a finished run measures nothing again: the test split is in the cache. */
    CU_ASSERT_EQUAL(fake_run(dir, NULL, true, 0), 0);
    free(train);
    free(test);
    free(sched);
    free(summary);
    pf_tune_config_free(&cfg);
}

/* Forks a run and kills it with SIGKILL once `lines` evaluations are on record. The fake
 * evaluator stalls there, so the run cannot finish first (it did under ASan on a loaded CI
 * machine); the real one is slow enough. */
static void kill_run_at(const char *dir, const pf_tune_config *cfg, long lines, bool real)
{
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        pf_error err;
        pf_tune *t = pf_tune_create(dir, cfg, &err);
        long submitted = 0;
        pf_pool_options opt = { .jobs = 1, .watchdog_ms = 60000 };
        pf_evaluator *ev = real ? pf_pool_new(&cfg->eval, &opt, &err)
                                : st_fake_evaluator(3, &submitted);
        if (ev && !real)
            st_fake_stall_after(ev, lines);
        if (t && ev)
            pf_tune_run(t, ev, NULL, &err);
        _exit(3);  /* the run ended before the kill: the assertion below fails */
    }
    char *path = pf_run_path(dir, PF_RUN_EVALUATIONS);
    struct timespec ts = { 0, 1000000 };
    while (st_count_lines(path) < lines)
        nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    free(path);
}

static void test_resume_after_sigkill_matches_uninterrupted(void)
{
    const char *a = pf_test_tmp("run-whole"), *b = pf_test_tmp("run-killed");
    pf_tune_config cfg;
    small_config(&cfg, 10, 6);
    long whole = fake_run(a, &cfg, false, 0);
    kill_run_at(b, &cfg, 10 + 3, false);  /* in generation 1 */
    char *cp = st_run_file(b, PF_RUN_CHECKPOINT);
    CU_ASSERT_PTR_NOT_NULL(cp);  /* generation 0 was checkpointed */
    CU_ASSERT_PTR_NOT_NULL(strstr(cp, "\"finished\":false"));
    free(cp);
    char *log = pf_run_path(b, PF_RUN_EVALUATIONS);
    long before = st_count_lines(log);
    free(log);
    long resumed = fake_run(b, NULL, true, 0);
    CU_ASSERT_EQUAL(before + resumed, whole);  /* nothing measured twice */
    long la, lb;
    check_log(a, &la);
    check_log(b, &lb);
    CU_ASSERT_EQUAL(la, lb);
    char *pa = population_of(a), *pb = population_of(b);
    CU_ASSERT_STRING_EQUAL(pa, pb);
    char *fa = st_run_file(a, PF_RUN_FRONTIER_TEST), *fb = st_run_file(b, PF_RUN_FRONTIER_TEST);
    CU_ASSERT_STRING_EQUAL(fa, fb);
    free(pa);
    free(pb);
    free(fa);
    free(fb);
    pf_tune_config_free(&cfg);
}

static void test_seed_replays_a_run(void)
{
    const char *a = pf_test_tmp("seed-a"), *b = pf_test_tmp("seed-b"), *c = pf_test_tmp("seed-c");
    pf_tune_config cfg;
    small_config(&cfg, 10, 4);
    fake_run(a, &cfg, false, 0);
    fake_run(b, &cfg, false, 0);
    cfg.ga.seed++;
    fake_run(c, &cfg, false, 0);
    char *pa = population_of(a), *pb = population_of(b), *pc = population_of(c);
    CU_ASSERT_STRING_EQUAL(pa, pb);
    CU_ASSERT(strcmp(pa, pc) != 0);
    free(pa);
    free(pb);
    free(pc);
    pf_tune_config_free(&cfg);
}

/* The real thing, small: blur through the pool, killed in generation 1, resumed. */
static void test_real_run_resumes(void)
{
    const char *dir = pf_test_tmp("run-real");
    pf_tune_config cfg;
    small_config(&cfg, 4, 3);
    cfg.test = false;
    kill_run_at(dir, &cfg, 4 + 1, true);
    pf_error err;
    pf_tune *t = pf_tune_resume(dir, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    pf_pool_options opt = { .jobs = 2, .watchdog_ms = 60000 };
    pf_evaluator *ev = pf_pool_new(&pf_tune_config_of(t)->eval, &opt, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    CU_ASSERT_EQUAL(pf_tune_run(t, ev, NULL, &err), 0);
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
    long lines;
    check_log(dir, &lines);
    CU_ASSERT(lines > 4 && lines <= 4 + 2 * (4 - 1));
    char *cp = st_run_file(dir, PF_RUN_CHECKPOINT);
    CU_ASSERT_PTR_NOT_NULL(strstr(cp, "\"finished\":true"));
    free(cp);
    pf_tune_config_free(&cfg);
}

/* ---- the model-guided search (results/tune_model.c) ---- */

static void guided_config(pf_tune_config *c)
{
    small_config(c, 10, 6);
    c->model.on = true;
    c->model.measure = 3;
    c->model.pool = 4;
}

/* The training records of a run: their texts (a set), and per generation how many (the
 * confirmations at per_gen[MAX_GEN]). */
#define MAX_GEN 7
static void train_records(const char *dir, pf_strmap *texts, int *per_gen, int *predicted)
{
    char *text = st_run_file(dir, PF_RUN_EVALUATIONS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    pf_strmap_init(texts);
    *predicted = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        pf_eval_record r;
        CU_ASSERT_EQUAL_FATAL(pf_record_from_json(line, &r, NULL), 0);
        if (r.set == PF_SET_TRAIN) {
            pf_strmap_add(texts, r.schedule, 0);
            CU_ASSERT(r.generation >= 0 || r.generation == PF_GEN_CONFIRM);
            per_gen[r.generation >= 0 ? r.generation : MAX_GEN]++;
            *predicted += isfinite(r.pred_time) && isfinite(r.pred_error);
        }
        pf_record_free(&r);
    }
    free(text);
}

/* Every frontier variant and every member of the last population was measured: the models
 * choose what to measure, they never put a prediction on the frontier. */
static void test_guided_frontier_is_measured(void)
{
    const char *dir = pf_test_tmp("guided");
    pf_tune_config cfg;
    guided_config(&cfg);
    cfg.confirm = 1;  /* a confirmation carries no prediction: it is not a child's measurement */
    long submitted = fake_run(dir, &cfg, false, 0);
    pf_strmap texts;
    int per_gen[MAX_GEN + 1] = { 0 }, predicted;
    train_records(dir, &texts, per_gen, &predicted);
    CU_ASSERT_EQUAL(per_gen[0], 10);
    for (int g = 1; g < 6; g++)
        CU_ASSERT_EQUAL(per_gen[g], 3);  /* measure = 3 of 12 bred */
    CU_ASSERT_EQUAL(predicted, 5 * 3);   /* each with the prediction made before */
    CU_ASSERT(per_gen[MAX_GEN] >= 1);    /* the confirmations, without */
    CU_ASSERT(submitted >= 10 + 5 * 3);  /* the test split too */
    pf_error err;
    char *path = pf_run_path(dir, PF_RUN_PROGRAM);
    pf_program *prog = pf_load_program(path, &err);
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    int variants = 0;
    for (int i = 0;; i++, variants++) {
        char name[64];
        snprintf(name, sizeof name, "%s/frontier/variant-%03d.sched", dir, i);
        pf_schedule s;
        if (pf_schedule_load(prog, name, &s, &err) != 0)
            break;
        char *t = pf_schedule_text(prog, &s);
        CU_ASSERT(pf_strmap_get(&texts, t, NULL));
        free(t);
        pf_schedule_free(&s);
    }
    CU_ASSERT(variants >= 1);
    char *pop = population_of(dir);
    json_object *a = json_tokener_parse(pop);
    CU_ASSERT_EQUAL((int)json_object_array_length(a), 10);  /* the best N kept */
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        json_object *m = json_object_array_get_idx(a, i), *v;
        CU_ASSERT_FATAL(json_object_object_get_ex(m, "schedule", &v));
        CU_ASSERT(pf_strmap_get(&texts, json_object_get_string(v), NULL));
    }
    json_object_put(a);
    free(pop);
    pf_strmap_free(&texts);
    pf_program_free(prog);
    pf_tune_config_free(&cfg);
}

/* Killed mid-generation and resumed, a guided run ends like an uninterrupted one: the models
 * are refitted on the same records and choose the same children. */
static void test_guided_resume_matches_uninterrupted(void)
{
    const char *a = pf_test_tmp("guided-whole"), *b = pf_test_tmp("guided-killed");
    pf_tune_config cfg;
    guided_config(&cfg);
    long whole = fake_run(a, &cfg, false, 0);
    kill_run_at(b, &cfg, 10 + 3 + 1, false);  /* in generation 2 */
    char *log = pf_run_path(b, PF_RUN_EVALUATIONS);
    long before = st_count_lines(log);
    free(log);
    long resumed = fake_run(b, NULL, true, 0);
    CU_ASSERT_EQUAL(before + resumed, whole);
    char *ea = st_run_file(a, PF_RUN_EVALUATIONS), *eb = st_run_file(b, PF_RUN_EVALUATIONS);
    CU_ASSERT_STRING_EQUAL(ea, eb);  /* the same candidates, predictions and order */
    char *pa = population_of(a), *pb = population_of(b);
    CU_ASSERT_STRING_EQUAL(pa, pb);
    char *config = st_run_file(b, PF_RUN_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(config, "\"model\""));
    free(config);
    free(ea);
    free(eb);
    free(pa);
    free(pb);
    pf_tune_config_free(&cfg);
}

/* Builds a training record for the frontier tests. */
static pf_eval_record train_rec(const char *sched, int generation, double time, double error)
{
    pf_eval_record r;
    pf_record_init(&r);
    r.set = PF_SET_TRAIN;
    r.schedule = strdup(sched);
    r.valid = true;
    r.generation = generation;
    r.time = time;
    r.error = error;
    return r;
}

/* A's lucky 0.5 is confirmed at 0.9: the final frontier keeps B (0.7 at the same error), the
 * frontier of the generations alone still has A's first measurement. */
static void test_confirmation_supersedes_in_the_final_frontier(void)
{
    pf_eval_record recs[3] = { train_rec("A", 0, 0.5, 1.0), train_rec("B", 1, 0.7, 1.0),
                               train_rec("A", PF_GEN_CONFIRM, 0.9, 1.0) };
    int *front, n = pf_tune_front_of(recs, 3, INT_MAX, &front);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(front[0], 1);
    free(front);
    n = pf_tune_front_of(recs, 3, 1, &front);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(front[0], 0);
    free(front);
    recs[2].valid = false;  /* a confirmation that failed takes its schedule off the frontier */
    n = pf_tune_front_of(recs, 3, INT_MAX, &front);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(front[0], 1);
    free(front);
    for (int i = 0; i < 3; i++)
        pf_record_free(&recs[i]);
}

/* S, set aside by the screening (one short sample: 0.6 at A's error, while A's lucky 0.5
 * dominated it), is no claim: with A confirmed at 0.9 the final frontier keeps B (timed in
 * full), and only the confirmation's selection sees S, so that it is measured in full. */
static void test_screened_record_enters_only_once_confirmed(void)
{
    pf_eval_record recs[4] = { train_rec("A", 0, 0.5, 1.0), train_rec("B", 1, 0.7, 1.0),
                               train_rec("S", 1, 0.6, 1.0),
                               train_rec("A", PF_GEN_CONFIRM, 0.9, 1.0) };
    recs[2].full_timing = false;
    recs[2].screen_time = 0.6;
    int *front, n = pf_tune_front_of(recs, 4, INT_MAX, &front);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(front[0], 1);
    free(front);
    n = pf_tune_front_of(recs, 4, 1, &front);  /* nor in a generation's frontier */
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(front[0], 0);
    free(front);
    n = pf_tune_front_select(recs, 4, INT_MAX, true, &front);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(front[0], 2);
    free(front);
    for (int i = 0; i < 4; i++)
        pf_record_free(&recs[i]);
}

/* An advantage within the timing's spread is none: E (0.95, slow end 1.02) does not beat the
 * exact program, G (0.58 against F's 0.6, slow end 0.62) does not beat F. */
static void test_frontier_admits_beyond_the_spread(void)
{
    pf_eval_record recs[4] = { train_rec("E", 0, 0.95, 0.0), train_rec("F", 0, 0.6, 1.0),
                               train_rec("G", 1, 0.58, 2.0), train_rec("H", 1, 0.4, 3.0) };
    double hi[4] = { 1.02, 0.65, 0.62, 0.45 };
    for (int i = 0; i < 4; i++) {
        recs[i].time_lo = recs[i].time * 0.98;
        recs[i].time_hi = hi[i];
    }
    int *front, n = pf_tune_front_of(recs, 4, INT_MAX, &front);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(front[0], 1);
    CU_ASSERT_EQUAL(front[1], 3);
    free(front);
    for (int i = 0; i < 4; i++)
        pf_record_free(&recs[i]);
}

/* Every first measurement comes out at `luck` x its time: after the confirmation rounds every
 * final frontier variant is a confirmation with its honest time, timed in full (not set aside
 * by a screening) with the confirmation's samples, as is every test-split record (the search's
 * with 5), and no schedule was measured more than twice on the training split. */
static void confirmed_run(const char *dir, double luck)
{
    pf_tune_config cfg;
    small_config(&cfg, 8, 4);
    cfg.confirm = 30;
    cfg.confirm_samples = 11;
    long submitted = 0;
    pf_error err;
    pf_tune *t = pf_tune_create(dir, &cfg, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    pf_evaluator *ev = st_fake_evaluator_lucky(0, &submitted, luck);
    CU_ASSERT_EQUAL(pf_tune_run(t, ev, NULL, &err), 0);
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
    char *text = st_run_file(dir, PF_RUN_EVALUATIONS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    pf_eval_record *recs = NULL;
    int n = 0, confirmations = 0, tests = 0;
    pf_strmap times;
    pf_strmap_init(&times);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        recs = realloc(recs, sizeof *recs * (size_t)(n + 1));
        CU_ASSERT_EQUAL_FATAL(pf_record_from_json(line, &recs[n], NULL), 0);
        if (recs[n].set == PF_SET_TRAIN) {
            int k = 0;
            pf_strmap_get(&times, recs[n].schedule, &k);
            pf_strmap_put(&times, recs[n].schedule, k + 1);
            CU_ASSERT(k + 1 <= 2);
        }
        CU_ASSERT_EQUAL_FATAL(recs[n].n_images, 1);
        if (recs[n].generation == PF_GEN_CONFIRM) {
            confirmations++;
            CU_ASSERT(recs[n].full_timing);  /* the search sent no frontier to screen with */
            CU_ASSERT_EQUAL(recs[n].images[0].samples, 11);
        } else if (recs[n].set == PF_SET_TEST) {
            tests++;
            CU_ASSERT_EQUAL(recs[n].images[0].samples, 11);
        } else {
            CU_ASSERT_EQUAL(recs[n].images[0].samples, 5);
        }
        n++;
    }
    CU_ASSERT(confirmations > 0);
    CU_ASSERT(tests > 0);
    int *front, m = pf_tune_front_of(recs, n, INT_MAX, &front);
    CU_ASSERT(m > 0);
    for (int i = 0; i < m; i++) {
        double honest, error;
        st_fake_measure(recs[front[i]].schedule, &honest, &error);
        CU_ASSERT_EQUAL(recs[front[i]].generation, PF_GEN_CONFIRM);
        CU_ASSERT_DOUBLE_EQUAL(recs[front[i]].time, honest, 1e-12);
    }
    char *config = st_run_file(dir, PF_RUN_CONFIG);  /* the run says how it confirmed */
    CU_ASSERT_PTR_NOT_NULL_FATAL(config);
    CU_ASSERT_PTR_NOT_NULL(strstr(config, "\"confirm_samples\":11"));
    free(config);
    char *tsv = st_run_file(dir, PF_RUN_FRONTIER_TRAIN);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tsv);
    const char *head = "variant\ttime\tspeedup\tspeedup_lo\tspeedup_hi\t";
    CU_ASSERT(strncmp(tsv, head, strlen(head)) == 0);
    free(tsv);
    free(front);
    for (int i = 0; i < n; i++)
        pf_record_free(&recs[i]);
    free(recs);
    pf_strmap_free(&times);
    free(text);
    pf_tune_config_free(&cfg);
}

/* Lucky first measurements (0.5) fall back; unlucky ones (2: the confirmations come out
 * faster and change the running frontier while others are in flight) are all timed in full. */
static void test_confirmation_replaces_lucky_measurements(void)
{
    confirmed_run(pf_test_tmp("run-confirm-lucky"), 0.5);
    confirmed_run(pf_test_tmp("run-confirm-unlucky"), 2.0);
}

PF_TEST_SUITE(search_rundir, PF_TEST(test_log_appends_and_cuts_torn_lines),
              PF_TEST(test_run_files_and_cache),
              PF_TEST(test_resume_after_sigkill_matches_uninterrupted),
              PF_TEST(test_seed_replays_a_run),
              PF_TEST(test_real_run_resumes), PF_TEST(test_guided_frontier_is_measured),
              PF_TEST(test_guided_resume_matches_uninterrupted),
              PF_TEST(test_confirmation_supersedes_in_the_final_frontier),
              PF_TEST(test_screened_record_enters_only_once_confirmed),
              PF_TEST(test_frontier_admits_beyond_the_spread),
              PF_TEST(test_confirmation_replaces_lucky_measurements))
