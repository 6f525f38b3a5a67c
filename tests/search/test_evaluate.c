/* Evaluation through the local process pool on blur (one or two 256x192 photos): valid
 * records with their measurements; a crash, a hang and a NaN output become invalid records
 * with their reasons while the pool goes on; a refused schedule is invalid; records survive
 * their JSON form. */
#include "cluster/pool.h"
#include "search/eval.h"
#include "search/evaluate.h"
#include "tests/harness/harness.h"
#include "tests/search/search_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXACT "# perfora schedule 1\n"
#define GRID EXACT "loop_output grid 2 2 1 reconstruct store linear\n"
#define CRASH EXACT "loop_output step 2\n"
#define HANG EXACT "loop_output step 3\n"
#define NANS EXACT "loop_output step 4\n"

/* Submits the texts and collects their records by id (index). */
static void evaluate(pf_evaluator *ev, const char *const *texts, int n, pf_eval_record *out)
{
    pf_error err;
    for (int i = 0; i < n; i++)
        CU_ASSERT_EQUAL_FATAL(pf_evaluator_submit(ev, 100 + i, PF_SET_TRAIN, texts[i], &err), 0);
    for (int k = 0; k < n; k++) {
        pf_eval_record r;
        int rc = pf_evaluator_wait(ev, &r, &err);
        if (rc != 1)
            fprintf(stderr, "wait: %s\n", err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, 1);
        CU_ASSERT_FATAL(r.id >= 100 && r.id < 100 + n);
        out[r.id - 100] = r;
    }
    pf_eval_record none;
    CU_ASSERT_EQUAL(pf_evaluator_wait(ev, &none, &err), 0);
}

static void expect_valid_record(const pf_eval_record *r, int n_images)
{
    if (!r->valid)
        fprintf(stderr, "unexpectedly invalid: %s\n", r->reason);
    CU_ASSERT_FATAL(r->valid);
    CU_ASSERT_EQUAL(r->n_images, n_images);
    CU_ASSERT(isfinite(r->time) && r->time > 0);
    CU_ASSERT(r->time_lo <= r->time && r->time <= r->time_hi);
    CU_ASSERT(r->compile_ms > 0 && r->wall_ms >= r->compile_ms);
    for (int i = 0; i < r->n_images; i++) {
        CU_ASSERT(r->images[i].t_exact_ms > 0 && r->images[i].t_cand_ms > 0);
        CU_ASSERT(r->images[i].runs >= 1);
        CU_ASSERT(r->images[i].rel_lo <= r->images[i].rel_time);
        CU_ASSERT(r->images[i].rel_time <= r->images[i].rel_hi);
    }
}

static void expect_invalid(const pf_eval_record *r, const char *why)
{
    CU_ASSERT(!r->valid);
    CU_ASSERT(isinf(r->time) && isinf(r->error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(r->reason);
    if (!strstr(r->reason, why))
        fprintf(stderr, "reason '%s' lacks '%s'\n", r->reason, why);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, why));
}

static void test_pool_measures_and_survives_failures(void)
{
    setenv(PF_SEARCH_TEST_HOOK_ENV, "crash:step 2", 1);
    pf_eval_config cfg;
    st_blur_config(&cfg, 1);
    pf_pool_options opt = { .jobs = 2, .watchdog_ms = 60000 };
    pf_error err;
    pf_evaluator *ev = pf_pool_new(&cfg, &opt, &err);
    if (!ev)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    CU_ASSERT_PTR_NOT_NULL(strstr(pf_evaluator_describe(ev), "node protocol"));
    const char *texts[] = { EXACT, GRID, CRASH, EXACT "loop_output bogus 1\n", EXACT };
    pf_eval_record r[5];
    evaluate(ev, texts, 5, r);
    expect_valid_record(&r[0], 1);
    CU_ASSERT_EQUAL(r[0].error, 0.0);  /* the exact program against itself */
    expect_valid_record(&r[1], 1);
    CU_ASSERT(r[1].error > 0 && r[1].error < 5);
    CU_ASSERT(r[1].psnr > 20 && r[1].ssim > 0.5 && r[1].ssim <= 1);
    expect_invalid(&r[2], "crashed");
    expect_invalid(&r[3], "schedule refused");
    expect_valid_record(&r[4], 1);  /* the pool went on after the crash */
    CU_ASSERT_EQUAL(pf_pool_spawned(ev), 3);  /* one restart */
    for (int i = 0; i < 5; i++) {
        CU_ASSERT(!r[i].valid || r[i].images[0].samples == cfg.samples);
        pf_record_free(&r[i]);
    }
    pf_evaluator_set_samples(ev, 3);  /* a confirmation's samples reach the worker */
    evaluate(ev, texts + 1, 1, r);
    expect_valid_record(&r[0], 1);
    CU_ASSERT_EQUAL(r[0].images[0].samples, 3);
    pf_record_free(&r[0]);
    pf_evaluator_destroy(ev);
    pf_eval_config_free(&cfg);
    unsetenv(PF_SEARCH_TEST_HOOK_ENV);
}

static void test_hang_times_out(void)
{
    setenv(PF_SEARCH_TEST_HOOK_ENV, "hang:step 3", 1);
    pf_eval_config cfg;
    st_blur_config(&cfg, 1);
    pf_pool_options opt = { .jobs = 1, .watchdog_ms = 60000 };
    pf_error err;
    pf_evaluator *ev = pf_pool_new(&cfg, &opt, &err);
    if (!ev)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    const char *texts[] = { HANG, EXACT };
    pf_eval_record r[2];
    evaluate(ev, texts, 2, r);
    expect_invalid(&r[0], "timed out");
    expect_valid_record(&r[1], 1);
    pf_record_free(&r[0]);
    pf_record_free(&r[1]);
    pf_evaluator_destroy(ev);
    /* The watchdog: a silent worker (here: a hang with no alarm limit to speak of). */
    setenv(PF_SEARCH_TEST_HOOK_ENV, "hang:step 3", 1);
    cfg.timeout_min_ms = 1e8;
    opt.watchdog_ms = 4000;  /* above a worker's start-up (compiling the exact program) under load */
    ev = pf_pool_new(&cfg, &opt, &err);
    if (!ev)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    evaluate(ev, texts, 1, r);
    expect_invalid(&r[0], "silent");
    pf_record_free(&r[0]);
    pf_evaluator_destroy(ev);
    pf_eval_config_free(&cfg);
    unsetenv(PF_SEARCH_TEST_HOOK_ENV);
}

static void test_nan_output_is_invalid(void)
{
    setenv(PF_SEARCH_TEST_HOOK_ENV, "nan:step 4", 1);
    pf_eval_config cfg;
    st_blur_config(&cfg, 2);
    pf_pool_options opt = { .jobs = 1, .watchdog_ms = 60000 };
    pf_error err;
    pf_evaluator *ev = pf_pool_new(&cfg, &opt, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    const char *texts[] = { NANS, EXACT "loop_output step 2\n" };
    pf_eval_record r[2];
    evaluate(ev, texts, 2, r);
    expect_invalid(&r[0], "non-finite");
    expect_valid_record(&r[1], 2);  /* loop perforation leaves black rows: a large error */
    CU_ASSERT(r[1].error > 5);
    pf_record_free(&r[0]);
    pf_record_free(&r[1]);
    pf_evaluator_destroy(ev);
    pf_eval_config_free(&cfg);
    unsetenv(PF_SEARCH_TEST_HOOK_ENV);
}

static void test_bad_program_fails_the_pool(void)
{
    pf_eval_config cfg;
    st_blur_config(&cfg, 1);
    free(cfg.program);
    cfg.program = strdup(pf_test_tmp("missing.pf"));
    pf_pool_options opt = { .jobs = 1, .watchdog_ms = 60000 };
    pf_error err;
    CU_ASSERT_PTR_NULL(pf_pool_new(&cfg, &opt, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing.pf"));
    pf_eval_config_free(&cfg);
}

/* Issue 27: a pipeline whose exact output is NaN made every candidate invalid, and tune ended
 * with an empty frontier and status 0; the evaluator now refuses it with the reason. */
static void test_nan_exact_output_fails_the_pool(void)
{
    pf_eval_config cfg;
    st_blur_config(&cfg, 1);
    free(cfg.program);
    cfg.program = strdup(pf_test_tmp("nan.pf"));
    FILE *f = fopen(cfg.program, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("pipeline nan(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
          "    for each (x, y, c) of out as s out[x, y, c] = sqrt(in[x, y, c] - 2.0);\n}\n", f);
    fclose(f);
    pf_pool_options opt = { .jobs = 1, .watchdog_ms = 60000 };
    pf_error err;
    pf_evaluator *ev = pf_pool_new(&cfg, &opt, &err);
    int rc = -1;
    if (ev) {  /* the workers prepare lazily: the first candidate meets it */
        pf_eval_record r;
        rc = pf_evaluator_submit(ev, 1, PF_SET_TRAIN, EXACT, &err);
        if (rc == 0)
            rc = pf_evaluator_wait(ev, &r, &err);
        if (rc == 1)
            pf_record_free(&r);
        pf_evaluator_destroy(ev);
    }
    CU_ASSERT_EQUAL(rc, -1);
    if (!strstr(err.msg, "the exact pipeline's output 'out' is NaN"))
        fprintf(stderr, "\n    got: %s", err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the exact pipeline's output 'out' is NaN"));
    pf_eval_config_free(&cfg);
}

static void test_record_json_round_trip(void)
{
    pf_eval_record r, s;
    pf_record_init(&r);
    r.id = 42;
    r.set = PF_SET_TEST;
    r.schedule = strdup(GRID);
    r.valid = true;
    r.time = 0.25;
    r.error = 1.5;
    r.psnr = 31.25;
    r.ssim = 0.875;
    r.n_images = 2;
    r.images = calloc(2, sizeof *r.images);
    r.images[1] = (pf_eval_image){ .t_exact_ms = 2.5, .t_cand_ms = 0.625, .rel_time = 0.25,
                                   .rel_lo = 0.125, .rel_hi = 0.375, .error = 1.5,
                                   .psnr = 31.25, .ssim = 0.875, .runs = 8, .samples = 5 };
    r.time_lo = 0.125;
    r.time_hi = 0.375;
    r.generation = 3;
    char *json = pf_record_to_json(&r);
    CU_ASSERT_PTR_NULL(strchr(json, '\n'));  /* one line */
    CU_ASSERT_EQUAL(pf_record_from_json(json, &s, NULL), 0);
    CU_ASSERT(s.id == 42 && s.set == PF_SET_TEST && s.valid && s.generation == 3);
    CU_ASSERT_STRING_EQUAL(s.schedule, GRID);
    CU_ASSERT(s.time == 0.25 && s.error == 1.5 && s.n_images == 2 && s.images[1].runs == 8);
    CU_ASSERT(s.images[1].t_exact_ms == 2.5);
    CU_ASSERT(s.images[1].rel_lo == 0.125 && s.images[1].rel_hi == 0.375);  /* the spread */
    CU_ASSERT(s.time_lo == 0.125 && s.time_hi == 0.375);
    pf_record_free(&s);
    free(json);
    pf_record_set_invalid(&r, "crashed: %s", "signal 11");
    json = pf_record_to_json(&r);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"time\":null"));  /* +inf is null, not Infinity */
    CU_ASSERT_EQUAL(pf_record_from_json(json, &s, NULL), 0);
    CU_ASSERT(!s.valid && isinf(s.time) && strcmp(s.reason, "crashed: signal 11") == 0);
    pf_record_free(&s);
    free(json);
    pf_record_free(&r);
    CU_ASSERT_EQUAL(pf_record_from_json("{\"id\": 1", &s, NULL), -1);
}

/* Runs body in a child and expects it to return 0 (its exit status, printed otherwise):
 * generated code (and its thread pool) must not run in the test process, whose later pool
 * tests fork workers. */
static void in_child(int (*body)(void), const char *what)
{
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0)
        _exit(body());
    int status;
    waitpid(pid, &status, 0);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        fprintf(stderr, "%s failed: exit status %d\n", what, WEXITSTATUS(status));
}

/* The in-process evaluator, in a child (in_child). */
static int inprocess_evaluation(void)
{
    pf_eval_config cfg;
    st_blur_config(&cfg, 1);
    pf_error err;
    pf_evaluator *ev = pf_eval_inprocess_new(&cfg, &err);
    pf_eval_record r[2];
    int ok = ev && pf_evaluator_submit(ev, 1, PF_SET_TRAIN, EXACT, &err) == 0 &&
             pf_evaluator_submit(ev, 2, PF_SET_TEST, GRID, &err) == 0 &&
             pf_evaluator_wait(ev, &r[0], &err) == 1 && pf_evaluator_wait(ev, &r[1], &err) == 1;
    ok = ok && r[0].id == 1 && r[0].valid && r[0].error == 0 && r[1].id == 2 && r[1].valid &&
         r[1].set == PF_SET_TEST && r[1].n_images == 1 && r[1].error > 0;
    return ok ? 0 : 1;
}

static void test_inprocess_evaluator(void)
{
    in_child(inprocess_evaluation, "the in-process evaluator");
}

/* A machine whose first call of each variant after building is slow (caches, thread pool and
 * code cold): an exact call takes 1 ms, a candidate call 0.5 ms, plus 10 ms on a variant's
 * first call since the last build. */
typedef struct cold_clock {
    bool cold_exact, cold_cand;
} cold_clock;

static int cold_timer(void *ctx, pf_variant *v, const pf_buffer *bufs, int calls, bool exact,
                      double *ms, pf_error *err)
{
    (void)v, (void)bufs, (void)err;
    cold_clock *c = ctx;
    bool *cold = exact ? &c->cold_exact : &c->cold_cand;
    *ms = calls * (exact ? 1.0 : 0.5) + (*cold ? 10.0 : 0.0);
    *cold = false;
    return 0;
}

/* A worker on two blur photos taking `samples` samples, timed by a fake clock; NULL on failure. */
static pf_eval_worker *faked_worker(pf_eval_config *cfg, int samples, pf_eval_timer_fn timer,
                                    void *clock)
{
    st_blur_config(cfg, 2);
    cfg->samples = samples;
    pf_error err;
    pf_eval_worker *w = pf_eval_worker_new(cfg, 0, &err);
    if (w)
        pf_eval_worker_set_timer(w, timer, clock);
    return w;
}

/* One evaluation of GRID; 0 when the candidate measured its true relative time (0.5) with
 * `samples` samples on every image. */
static int grid_evaluation(pf_eval_worker *w, pf_image_set set, int samples)
{
    pf_eval_record r;
    pf_eval_worker_evaluate(w, 1, set, GRID, &r);
    int bad = !r.valid || r.n_images != 2;
    for (int i = 0; !bad && i < r.n_images; i++) {
        const pf_eval_image *m = &r.images[i];
        if (fabs(m->rel_time - 0.5) > 1e-9 || m->samples != samples) {
            fprintf(stderr, "%s image %d: relative time %g over %d samples (want 0.5 over %d)\n",
                    pf_image_set_name(set), i, m->rel_time, m->samples, samples);
            bad = 1;
        }
    }
    pf_record_free(&r);
    return bad;
}

/* The same after a build that left both variants cold. */
static int cold_evaluation(pf_eval_worker *w, cold_clock *clock, pf_image_set set, int samples)
{
    clock->cold_exact = clock->cold_cand = true;
    return grid_evaluation(w, set, samples);
}

/* Training and test candidates are timed alike: a timing pass that begins right after building
 * must not read the cold first calls (issue 25: the test split, timed without a screening pass
 * before it, read the first exact block slow and a cold probe cut the candidate to one sample,
 * so its speedups came out above the training ones), and a worker told to take more samples
 * takes them. In a child: generated code runs here. */
static int cold_evaluations(void)
{
    pf_eval_config cfg;
    cold_clock clock = { true, true };
    pf_eval_worker *w = faked_worker(&cfg, 5, cold_timer, &clock);
    if (!w)
        return 2;
    int bad = cold_evaluation(w, &clock, PF_SET_TRAIN, 5);
    bad |= cold_evaluation(w, &clock, PF_SET_TEST, 5) << 1;
    pf_eval_worker_set_samples(w, 9);  /* a confirmation's */
    bad |= cold_evaluation(w, &clock, PF_SET_TRAIN, 9) << 2;
    pf_eval_worker_set_samples(w, 0);
    bad |= cold_evaluation(w, &clock, PF_SET_TEST, 5) << 3;
    pf_eval_worker_free(w);
    pf_eval_config_free(&cfg);
    return bad;
}

static void test_timing_starts_warm_on_every_split(void)
{
    in_child(cold_evaluations, "cold-clock evaluations");
}

/* A machine that stalls once in a while: an exact call takes 1 ms and a candidate call 0.5 ms,
 * but the candidate's first single call after a block of several calls reads 20 ms, as when a
 * load spike hits the probe that sizes the next image's blocks. */
typedef struct spiky_clock {
    bool after_block;
} spiky_clock;

static int spiky_timer(void *ctx, pf_variant *v, const pf_buffer *bufs, int calls, bool exact,
                       double *ms, pf_error *err)
{
    (void)v, (void)bufs, (void)err;
    spiky_clock *c = ctx;
    *ms = calls * (exact ? 1.0 : 0.5);
    if (!exact) {
        *ms += calls == 1 && c->after_block ? 20.0 : 0.0;
        c->after_block = calls > 1;
    }
    return 0;
}

/* One stalled probe must not cut a fast candidate to a single sample (CI saw a --samples 3
 * confirmation come back with 1): the probe is taken again before the slow verdict. */
static int stalled_evaluation(void)
{
    pf_eval_config cfg;
    spiky_clock clock = { false };
    pf_eval_worker *w = faked_worker(&cfg, 3, spiky_timer, &clock);
    if (!w)
        return 2;
    int bad = grid_evaluation(w, PF_SET_TEST, 3);
    pf_eval_worker_free(w);
    pf_eval_config_free(&cfg);
    return bad;
}

static void test_stalled_probe_keeps_the_samples(void)
{
    in_child(stalled_evaluation, "the stalled-probe evaluation");
}

PF_TEST_SUITE(search_evaluate, PF_TEST(test_record_json_round_trip),
              PF_TEST(test_pool_measures_and_survives_failures), PF_TEST(test_hang_times_out),
              PF_TEST(test_nan_output_is_invalid), PF_TEST(test_bad_program_fails_the_pool),
              PF_TEST(test_nan_exact_output_fails_the_pool),
              PF_TEST(test_inprocess_evaluator),
              PF_TEST(test_timing_starts_warm_on_every_split),
              PF_TEST(test_stalled_probe_keeps_the_samples))
