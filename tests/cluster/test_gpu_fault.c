/* A GPU kernel that faults, without a GPU: perfora's CUDA backend on tests/export/fake_cuda.c
 * (a stand-in driver that runs no kernel; FAKE_CUDA_FAULT=N makes the Nth launch of a process
 * fail with an illegal address, sticky as a real fault is). `perfora run --target cuda` says
 * what failed and that the context is lost; `perfora tune --target cuda` records the candidate
 * that faulted as invalid with the driver's message, starts a fresh worker (a fresh context),
 * and blames no other candidate: the worker's last record tells the pool it ends ('Z'), where
 * before the next candidate was sent to the ending worker and recorded as its crash; and a
 * --target cuda run resumes. */
#include "base/fileio.h"
#include "results/rundir.h"
#include "search/eval.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define IMAGE PF_SOURCE_DIR "/data/images/test/man_made_sklearn-china_256x192.png"

/* Where the fake driver logs its calls (NULL: nowhere). */
static const char *fake_log;

/* Runs perfora with args on the fake driver (fault: FAKE_CUDA_FAULT, or NULL), its stderr
 * to err_path; returns its exit status. */
static int perfora(const char *fault, const char *err_path, const char *const *args)
{
    const char *argv[48];
    int k = 0;
    argv[k++] = "perfora";
    for (int i = 0; args[i] && k < 47; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("PF_CUDA_DRIVER", PF_FAKE_CUDA, 1);
        setenv("FAKE_CUDA_LOG", fake_log ? fake_log : "/dev/null", 1);
        if (fault)
            setenv("FAKE_CUDA_FAULT", fault, 1);
        else
            unsetenv("FAKE_CUDA_FAULT");
        if (!freopen(err_path, "w", stderr) || !freopen("/dev/null", "w", stdout))
            _exit(126);
        execv(PF_PERFORA_EXE, (char **)argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The file at path, NUL-terminated (malloc'd), or NULL. */
static char *slurp(const char *path)
{
    char *text = NULL;
    size_t len;
    pf_error err;
    return pf_read_file(path, 1 << 24, &text, &len, &err) == 0 ? text : NULL;
}

/* A scratch directory (dir: a "...XXXXXX" template) with the paths of its files a and b. */
static bool scratch(char *dir, const char *a, char *pa, const char *b, char *pb)
{
    if (!mkdtemp(dir))
        return false;
    snprintf(pa, 256, "%s/%s", dir, a);
    snprintf(pb, 256, "%s/%s", dir, b);
    return true;
}

static void remove_scratch(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_run_fault_says_context_lost(void)
{
    char dir[] = "/tmp/perfora-gpufault-XXXXXX", out[256], err[256];
    CU_ASSERT_FATAL(scratch(dir, "out.png", out, "err.txt", err));
    const char *args[] = { "run", PF_SOURCE_DIR "/apps/blur.pf", "--target", "cuda", "--in",
                           IMAGE, "--out", out, "--time", "3", NULL };
    int rc = perfora(NULL, err, args);
    printf("\n    fake driver, no fault: exit %d", rc);
    CU_ASSERT_EQUAL(rc, 0);
    rc = perfora("1", err, args);
    char *text = slurp(err);
    printf("\n    fault at the first launch: exit %d: %s", rc, text ? text : "(no stderr)");
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "illegal memory access"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "(the CUDA context is lost)"));
    free(text);
    remove_scratch(dir);
}

/* The run's records, and how many are valid, invalid with the fault's message, or crashes. */
static void count_records(const char *run, int *valid, int *faulted, int *crashed, int *n)
{
    char *path = pf_run_path(run, PF_RUN_EVALUATIONS);
    char *text = slurp(path);
    free(path);
    *valid = *faulted = *crashed = *n = 0;
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        pf_eval_record r;
        if (pf_record_from_json(line, &r, NULL) != 0)
            continue;
        (*n)++;
        *valid += r.valid;
        *faulted += !r.valid && r.reason && strstr(r.reason, "illegal memory access") &&
                    strstr(r.reason, "(the CUDA context is lost)");
        *crashed += !r.valid && r.reason && strncmp(r.reason, "crashed", 7) == 0;
        pf_record_free(&r);
    }
    free(text);
}

/* A small `perfora tune --target cuda` of the blur into run (population and generations as
 * strings; extra: one more flag, or NULL) on the fake driver; its exit status. */
static int tune_cuda(const char *fault, const char *err, const char *run, const char *population,
                     const char *generations, const char *extra)
{
    const char *args[] = { "tune", PF_SOURCE_DIR "/apps/blur.pf", "--target", "cuda", "--out",
                           run, "--resolution", "256x192", "--max-images", "1", "--population",
                           population, "--generations", generations, "--jobs", "1",
                           "--samples", "1", "--min-sample-ms", "1", "--screen-ms", "0", extra,
                           NULL };
    return perfora(fault, err, args);
}

static void test_tune_fault_blames_only_its_candidate(void)
{
    char dir[] = "/tmp/perfora-gpufault-XXXXXX", run[256], err[256];
    CU_ASSERT_FATAL(scratch(dir, "run", run, "err.txt", err));
    /* every worker process faults at its 40th launch: some candidates in each generation */
    int rc = tune_cuda("40", err, run, "6", "2", NULL);
    int valid, faulted, crashed, n;
    count_records(run, &valid, &faulted, &crashed, &n);
    printf("\n    fault at each worker's 40th launch: exit %d, %d records: %d valid, %d with the "
           "driver's message, %d crashes", rc, n, valid, faulted, crashed);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(faulted >= 2);   /* at least one worker restarted and faulted again */
    CU_ASSERT(valid >= 2);     /* the candidates between faults were measured */
    CU_ASSERT_EQUAL(crashed, 0);
    CU_ASSERT_EQUAL(valid + faulted, n);
    remove_scratch(dir);
}

/* A --target cuda run resumes: its config.json says backend cuda, which the resume's check
 * of the file refused ("evaluation.backend must be jit or c"), so a GPU search stopped
 * overnight could not go on. */
static void test_tune_cuda_run_resumes(void)
{
    char dir[] = "/tmp/perfora-gpufault-XXXXXX", run[256], err[256];
    CU_ASSERT_FATAL(scratch(dir, "run", run, "err.txt", err));
    CU_ASSERT_EQUAL_FATAL(tune_cuda(NULL, err, run, "4", "1", NULL), 0);
    int valid, faulted, crashed, first;
    count_records(run, &valid, &faulted, &crashed, &first);
    const char *resume[] = { "tune", "--resume", run, "--generations", "2", NULL };
    int rc = perfora(NULL, err, resume);
    char *text = slurp(err);
    int n;
    count_records(run, &valid, &faulted, &crashed, &n);
    printf("\n    resumed: exit %d, %d records after the first generation, %d after the second%s%s",
           rc, first, n, rc ? ": " : "", rc && text ? text : "");
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(n > first);
    free(text);
    remove_scratch(dir);
}

/* The modules the fake driver loaded in log: how many, and how many had fused products. */
static void count_modules(const char *log, int *modules, int *fused)
{
    char *text = slurp(log);
    *modules = *fused = 0;
    for (const char *p = text; p && (p = strstr(p, "module loaded (")); p++) {
        (*modules)++;
        *fused += atoi(p + strlen("module loaded (")) > 0;
    }
    free(text);
}

/* --strict-float reaches the search's workers (config.json, the compile options): every
 * kernel module they load has no fused product; without it, every module has some. */
static void test_tune_strict_float(void)
{
    char dir[] = "/tmp/perfora-gpufault-XXXXXX", run[256], err[256], log[600];
    CU_ASSERT_FATAL(scratch(dir, "run", run, "err.txt", err));
    snprintf(log, sizeof log, "%s/driver.log", dir);
    fake_log = log;
    for (int strict = 0; strict < 2; strict++) {
        char out[300];
        snprintf(out, sizeof out, "%s%d", run, strict);
        unlink(log);  /* the driver appends */
        CU_ASSERT_EQUAL(tune_cuda(NULL, err, out, "4", "1", strict ? "--strict-float" : NULL), 0);
        int modules, fused;
        count_modules(log, &modules, &fused);
        char *cfg = pf_run_path(out, PF_RUN_CONFIG), *text = slurp(cfg);
        printf("\n    %s: %d kernel modules loaded, %d with fused products",
               strict ? "--strict-float" : "default", modules, fused);
        CU_ASSERT(modules > 0);
        CU_ASSERT_EQUAL(fused, strict ? 0 : modules);
        CU_ASSERT_EQUAL(text && strstr(text, "\"strict_float\":true") != NULL, strict == 1);
        free(text);
        free(cfg);
    }
    fake_log = NULL;
    remove_scratch(dir);
}

PF_TEST_SUITE(cluster_gpu_fault, PF_TEST(test_run_fault_says_context_lost),
              PF_TEST(test_tune_fault_blames_only_its_candidate),
              PF_TEST(test_tune_cuda_run_resumes), PF_TEST(test_tune_strict_float))
