/* The run directory against misuse (issue 27): the lock (a second process is told who holds
 * the run), --out on a directory of the user's, a start that fails, and --resume of files that
 * were truncated, edited or corrupted: each refused with the file and the field, none of the
 * user's files shortened without a copy kept. Fake evaluator: no compiling. */
#include "base/fileio.h"
#include "cluster/pool.h"
#include "results/rundir.h"
#include "results/tune.h"
#include "search/rng.h"
#include "tests/harness/harness.h"
#include "tests/search/search_test_util.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void config(pf_tune_config *c)
{
    pf_tune_config_default(c);
    st_blur_config(&c->eval, 1);
    c->ga.population = 6;
    c->ga.generations = 4;
    c->ga.seed = 27;
    c->test = false;
}

/* A run of `stop` generations (0: to the end) with the fake evaluator. */
static void fake_run(const char *dir, const pf_tune_config *cfg, int stop)
{
    pf_error err;
    pf_tune *t = pf_tune_create(dir, cfg, &err);
    if (!t)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    long submitted = 0;
    pf_evaluator *ev = st_fake_evaluator(0, &submitted);
    pf_tune_hooks hooks = { .stop_after = stop };
    CU_ASSERT_EQUAL(pf_tune_run(t, ev, &hooks, &err), 0);
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
}

static char *slurp(const char *dir, const char *name)
{
    char *path = pf_run_path(dir, name);
    char *text;
    size_t len;
    pf_error err;
    int rc = pf_read_file(path, (size_t)1 << 30, &text, &len, &err);
    free(path);
    return rc == 0 ? text : NULL;
}

static void put(const char *dir, const char *name, const char *text)
{
    char *path = pf_run_path(dir, name);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    free(path);
}

/* Replaces the first `from` in DIR/NAME by `to`. */
static void edit(const char *dir, const char *name, const char *from, const char *to)
{
    char *text = slurp(dir, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *at = strstr(text, from);
    if (!at)
        fprintf(stderr, "\n%s lacks '%s':\n%.600s\n", name, from, text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    size_t n = strlen(text) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    put(dir, name, out);
    free(out);
    free(text);
}

static bool exists(const char *dir, const char *name)
{
    char *path = pf_run_path(dir, name);
    struct stat st;
    bool r = lstat(path, &st) == 0;
    free(path);
    return r;
}

static void expect_resume_error(const char *dir, const char *want)
{
    pf_error err;
    pf_tune *t = pf_tune_resume(dir, 0, &err);
    CU_ASSERT_PTR_NULL(t);
    if (t)
        pf_tune_free(t);
    else if (!strstr(err.msg, want))
        fprintf(stderr, "\n    wanted '%s'\n    got    '%s'", want, err.msg);
    CU_ASSERT(!t && strstr(err.msg, want) != NULL);
}

static void test_lock_names_the_holder(void)
{
    const char *dir = pf_test_tmp("guard-lock");
    pf_tune_config cfg;
    config(&cfg);
    pf_error err;
    pf_tune *t = pf_tune_create(dir, &cfg, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char want[64];
    snprintf(want, sizeof want, "is in use by pid %ld on host ", (long)getpid());
    expect_resume_error(dir, want);  /* even from the same process */
    pf_tune_free(t);
    /* another process holds it: refused with its pid; once it is killed, resumable */
    int ready[2];
    CU_ASSERT_EQUAL_FATAL(pipe(ready), 0);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        pf_tune *held = pf_tune_resume(dir, 0, &err);
        if (write(ready[1], held ? "y" : "n", 1) != 1 || !held)
            _exit(1);
        pause();
        _exit(0);
    }
    char c = 0;
    CU_ASSERT_EQUAL(read(ready[0], &c, 1), 1);
    CU_ASSERT_EQUAL(c, 'y');
    snprintf(want, sizeof want, "is in use by pid %ld on host ", (long)pid);
    expect_resume_error(dir, want);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    t = pf_tune_resume(dir, 0, &err);
    CU_ASSERT_PTR_NOT_NULL(t);
    pf_tune_free(t);
    close(ready[0]);
    close(ready[1]);
    pf_tune_config_free(&cfg);
}

/* A forked pool worker closes its copy of the lock's descriptor: an open-file-description
 * lock is the descriptor's, so a worker that kept it would hold the run after its master
 * released it (or was killed with -9). */
static void test_pool_workers_do_not_hold_the_lock(void)
{
    const char *dir = pf_test_tmp("guard-pool");
    pf_tune_config cfg;
    config(&cfg);
    pf_error err;
    pf_tune *t = pf_tune_create(dir, &cfg, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    pf_pool_options opt = { .jobs = 1, .watchdog_ms = 60000 };  /* no exe: forked */
    pf_evaluator *ev = pf_pool_new(&cfg.eval, &opt, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    pf_tune_free(t);  /* the master lets go while its worker lives */
    t = pf_tune_resume(dir, 0, &err);
    if (!t)
        fprintf(stderr, "\n    %s", err.msg);
    CU_ASSERT_PTR_NOT_NULL(t);
    pf_tune_free(t);
    pf_evaluator_destroy(ev);
    pf_tune_config_free(&cfg);
}

static void test_out_refuses_a_users_directory(void)
{
    const char *dir = pf_test_tmp("guard-user");
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_mkdir_p(dir, &err), 0);
    put(dir, "notes.txt", "mine");
    pf_tune_config cfg;
    config(&cfg);
    CU_ASSERT_PTR_NULL(pf_tune_create(dir, &cfg, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is not empty (it holds 'notes.txt' and is not a "
                                           "perfora run)"));
    char *text = slurp(dir, "notes.txt");
    CU_ASSERT_STRING_EQUAL(text, "mine");
    free(text);
    CU_ASSERT(!exists(dir, PF_RUN_RUN_LOCK) && !exists(dir, PF_RUN_PROGRAM));
    /* a run is not overwritten either, nor touched by the refusal */
    const char *run = pf_test_tmp("guard-twice");
    fake_run(run, &cfg, 1);
    CU_ASSERT_PTR_NULL(pf_tune_create(run, &cfg, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "already holds a run (resume it with --resume"));
    static const char *const files[] = { PF_RUN_CONFIG, PF_RUN_PROGRAM, PF_RUN_EVALUATIONS,
                                         PF_RUN_LOG, PF_RUN_CHECKPOINT };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        CU_ASSERT(exists(run, files[i]));
    pf_tune *t = pf_tune_resume(run, 0, &err);
    CU_ASSERT_PTR_NOT_NULL(t);
    pf_tune_free(t);
    /* nor while it is held by another */
    t = pf_tune_resume(run, 0, &err);
    CU_ASSERT_PTR_NULL(pf_tune_create(run, &cfg, &err));
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        CU_ASSERT(exists(run, files[i]));
    pf_tune_free(t);
    pf_tune_config_free(&cfg);
}

static void test_failed_start_leaves_nothing(void)
{
    pf_tune_config cfg;
    config(&cfg);
    cfg.eval.params = realloc(cfg.eval.params, sizeof *cfg.eval.params * 2);
    cfg.eval.params[cfg.eval.n_params++] = strdup("no_such_param=1");
    pf_error err;
    const char *fresh = pf_test_tmp("guard-fresh"), *empty = pf_test_tmp("guard-empty");
    CU_ASSERT_PTR_NULL(pf_tune_create(fresh, &cfg, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no param 'no_such_param'"));
    struct stat st;
    CU_ASSERT_NOT_EQUAL(stat(fresh, &st), 0);  /* not even the directory */
    CU_ASSERT_EQUAL_FATAL(pf_mkdir_p(empty, &err), 0);
    CU_ASSERT_PTR_NULL(pf_tune_create(empty, &cfg, &err));
    DIR *dp = opendir(empty);
    int n = 0;
    for (struct dirent *de; dp && (de = readdir(dp)) != NULL;)
        n += de->d_name[0] != '.';
    closedir(dp);
    CU_ASSERT_EQUAL(n, 0);
    pf_tune_config_free(&cfg);
}

/* Each case: a copy of a run after two generations, one file corrupted, the message. */
typedef struct corruption {
    const char *file, *from, *to;  /* edit (from NULL: replace the whole file with `to`) */
    const char *want;
} corruption;

static const corruption corruptions[] = {
    { PF_RUN_CHECKPOINT, NULL, "{", "checkpoint.json: not valid JSON" },
    { PF_RUN_CHECKPOINT, "\"generation\":1,", "\"generation\":1000000,",
      "checkpoint.json: generation is 1000000 (must be -1 to 3)" },
    { PF_RUN_CHECKPOINT, "\"finished\":false", "\"finished\":true",
      "checkpoint.json: finished is true but the run is at generation 1 of 0..3" },
    { PF_RUN_CHECKPOINT, "\"lines\":", "\"lines\":-", "checkpoint.json: lines is -" },
    { PF_RUN_CHECKPOINT, "\"rejected_duplicates\":", "\"rejected_duplicates\":\"x\", \"y\":",
      "checkpoint.json: ga.rejected_duplicates must be a whole number" },
    { PF_RUN_CONFIG, "\"population\":6", "\"population\":0",
      "config.json: ga.population is 0 (must be 2 to 100000)" },
    { PF_RUN_CONFIG, "\"seed\":\"27\"", "\"seed\":\"-1\"",
      "config.json: ga.seed must be 1 to 20 decimal digits" },
    { PF_RUN_CONFIG, "\"samples\":1", "\"samples\":true",
      "config.json: evaluation.samples must be a whole number" },
    { PF_RUN_CONFIG, "\"seed\":\"27\"", "\"seed\":\"28\"",
      "config.json was changed after the run started" },
    { PF_RUN_PROGRAM, "sum(", "1.0 + sum(", "program.pf was changed after the run started" },
    { PF_RUN_EVALUATIONS, NULL, "", "evaluations.jsonl has 0 records but" },
    { PF_RUN_EVALUATIONS, "\n{", "\n{\"id\":0,\"x\":1}\n{", "evaluations.jsonl:2: " },
};

/* A copy of src in dst (files only, one level plus frontier/). */
static void copy_run(const char *src, const char *dst)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dst, src, dst);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
}

static void test_resume_refuses_corrupted_files(void)
{
    const char *base = pf_test_tmp("guard-base"), *dir = pf_test_tmp("guard-case");
    pf_tune_config cfg;
    config(&cfg);
    fake_run(base, &cfg, 2);
    /* the zeroed generator state of the issue (it spun forever) */
    char *cp = slurp(base, PF_RUN_CHECKPOINT);
    char *rng = strstr(cp, "\"rng\"");
    CU_ASSERT_PTR_NOT_NULL_FATAL(rng);
    char *open = strchr(rng, '['), *close = strchr(rng, ']');
    char zeros[] = "[\"0000000000000000\",\"0\",\"00\",\"0\"]";
    size_t n = strlen(cp) + sizeof zeros;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(open - cp), cp, zeros, close + 1);
    copy_run(base, dir);
    put(dir, PF_RUN_CHECKPOINT, out);
    expect_resume_error(dir, "checkpoint.json: ga.rng is all zero");
    free(out);
    free(cp);
    for (size_t i = 0; i < sizeof corruptions / sizeof *corruptions; i++) {
        const corruption *k = &corruptions[i];
        copy_run(base, dir);
        if (k->from)
            edit(dir, k->file, k->from, k->to);
        else
            put(dir, k->file, k->to);
        expect_resume_error(dir, k->want);
    }
    /* --generations cannot cut below what was run */
    copy_run(base, dir);
    pf_error err;
    CU_ASSERT_PTR_NULL(pf_tune_resume(dir, 1, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--generations 1: the run has already reached "
                                           "generation 1"));
    pf_tune_config_free(&cfg);
}

/* A torn last line (a kill inside a write) is cut with its bytes kept beside the log, and the
 * temporaries of killed writes are removed; the run then finishes. */
static void test_resume_keeps_what_it_cuts(void)
{
    const char *dir = pf_test_tmp("guard-torn");
    pf_tune_config cfg;
    config(&cfg);
    fake_run(dir, &cfg, 2);
    char *before = slurp(dir, PF_RUN_EVALUATIONS);
    size_t good = strlen(before);
    char *path = pf_run_path(dir, PF_RUN_EVALUATIONS);
    FILE *f = fopen(path, "ab");
    fputs("{\"id\": 99, \"sched", f);
    fclose(f);
    free(path);
    put(dir, "checkpoint.json.tmp.a1B2c3", "partial");
    put(dir, "frontier/variant-001.sched.tmp.12345", "partial");
    put(dir, "notes.tmp.txt", "not ours");
    pf_error err;
    pf_tune *t = pf_tune_resume(dir, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char cut[64];
    snprintf(cut, sizeof cut, "%s.cut-%zu", PF_RUN_EVALUATIONS, good);
    char *kept = slurp(dir, cut);
    CU_ASSERT_PTR_NOT_NULL(kept);
    CU_ASSERT(kept && strcmp(kept, "{\"id\": 99, \"sched") == 0);
    free(kept);
    CU_ASSERT(!exists(dir, "checkpoint.json.tmp.a1B2c3"));
    CU_ASSERT(!exists(dir, "frontier/variant-001.sched.tmp.12345"));
    CU_ASSERT(exists(dir, "notes.tmp.txt"));
    long submitted = 0;
    pf_evaluator *ev = st_fake_evaluator(0, &submitted);
    CU_ASSERT_EQUAL(pf_tune_run(t, ev, NULL, &err), 0);
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
    char *log = slurp(dir, PF_RUN_LOG);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "cut a torn last line of 17 bytes"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "checkpoint.json.tmp.a1B2c3, a temporary file left"));
    free(log);
    free(before);
    pf_tune_config_free(&cfg);
}

/* A finished run resumes (and does nothing more): its log holds the confirmation records
 * (generation -2, docs/search.md), which the resume checks once refused as out of range. */
static void test_finished_run_resumes(void)
{
    const char *dir = pf_test_tmp("guard-finished");
    pf_tune_config cfg;
    config(&cfg);
    cfg.confirm = 2;
    fake_run(dir, &cfg, 0);
    char *log = slurp(dir, PF_RUN_EVALUATIONS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "\"generation\":-2"));
    free(log);
    pf_error err;
    pf_tune *t = pf_tune_resume(dir, 0, &err);
    if (!t)
        fprintf(stderr, "\n    %s", err.msg);
    CU_ASSERT_PTR_NOT_NULL(t);
    pf_tune_free(t);
    pf_tune_config_free(&cfg);
}

static void test_seed_parse(void)
{
    uint64_t s;
    CU_ASSERT(pf_seed_parse("18446744073709551615", &s) == 0 && s == UINT64_MAX);
    CU_ASSERT(pf_seed_parse("0", &s) == 0 && s == 0);
    CU_ASSERT_EQUAL(pf_seed_parse("-1", &s), -1);  /* was 18446744073709551615 */
    CU_ASSERT_EQUAL(pf_seed_parse("18446744073709551616", &s), -1);
    CU_ASSERT_EQUAL(pf_seed_parse("99999999999999999999", &s), -1);
    CU_ASSERT_EQUAL(pf_seed_parse("", &s), -1);
    CU_ASSERT_EQUAL(pf_seed_parse("+7", &s), -1);
    CU_ASSERT_EQUAL(pf_seed_parse(" 7", &s), -1);
}

PF_TEST_SUITE(search_rundir_guard, PF_TEST(test_lock_names_the_holder),
              PF_TEST(test_pool_workers_do_not_hold_the_lock),
              PF_TEST(test_out_refuses_a_users_directory),
              PF_TEST(test_failed_start_leaves_nothing),
              PF_TEST(test_resume_refuses_corrupted_files),
              PF_TEST(test_resume_keeps_what_it_cuts), PF_TEST(test_finished_run_resumes),
              PF_TEST(test_seed_parse))
