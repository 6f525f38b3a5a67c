/* The search over MPI, end to end: `mpirun -np N perfora tune` on blur (one 256x192 photo,
 * population 6, 3 generations, one short timing sample) with the launcher perfora was built
 * for (PF_MPI). A run on 3 ranks (data broadcast by rank 0) leaves a complete run directory
 * whose every record names its worker rank and host, and both worker ranks evaluated; a worker
 * rank that dies mid-run (PF_MPI_TEST_HOOK) loses no candidate; a whole job killed mid-run
 * resumes with another number of ranks; without a launcher the binary runs the local pool, and
 * SIGTERM stops it cleanly. */
#include "cluster/mpi.h"
#include "results/rundir.h"
#include "results/tune.h"
#include "search/eval.h"
#include "tests/harness/harness.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SEARCH "--resolution", "256x192", "--max-images", "1", "--population", "6", \
               "--generations", "3", "--samples", "1", "--min-sample-ms", "1", "--screen-ms", \
               "1", "--seed", "3", "--quiet", "--worker-deadline-s", "3"

static bool have_mpirun(void)
{
    if (strcmp(PF_MPI_FLAVOR, "off") != 0 && access(PF_MPIEXEC, X_OK) == 0)
        return true;
    printf("\n    SKIP: no MPI launcher was found for PF_MPI=%s\n", PF_MPI_FLAVOR);
    return false;
}

/* Starts `mpirun -np N [fault-tolerance flag] perfora tune ARGS` (with Open MPI's root
 * permission, leak checks off: MPI's own allocations are not ours). */
static pid_t start_mpirun(int n, const char *hook, const char *const *args)
{
    const char *argv[64];
    char np[16];
    snprintf(np, sizeof np, "%d", n);
    int k = 0;
    argv[k++] = PF_MPIEXEC;
    argv[k++] = "-np";
    argv[k++] = np;
    if (strcmp(PF_MPI_FLAVOR, "openmpi") == 0) {
        argv[k++] = "--oversubscribe";
        argv[k++] = "--enable-recovery";  /* a dead rank must not end the job */
    } else {
        argv[k++] = "-disable-auto-cleanup";
    }
    argv[k++] = PF_PERFORA_EXE;
    argv[k++] = "tune";
    for (int i = 0; args[i] && k < 63; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
        if (hook)
            setenv(PF_MPI_TEST_HOOK_ENV, hook, 1);
        else
            unsetenv(PF_MPI_TEST_HOOK_ENV);
        execv(PF_MPIEXEC, (char **)argv);
        _exit(127);
    }
    return pid;
}

static int finish(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *read_text(const char *dir, const char *name)
{
    char *path = pf_run_path(dir, name);
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n)
        s[0] = '\0';
    fclose(f);
    return s;
}

/* The run's records, parsed; *n their count. */
static pf_eval_record *records(const char *dir, int *n)
{
    char *text = read_text(dir, PF_RUN_EVALUATIONS);
    *n = 0;
    if (!text)
        return NULL;
    pf_eval_record *r = calloc(4096, sizeof *r);
    for (char *line = strtok(text, "\n"); line && *n < 4096; line = strtok(NULL, "\n"))
        if (pf_record_from_json(line, &r[*n], NULL) == 0)
            (*n)++;
    free(text);
    return r;
}

static long count_lines(const char *dir)
{
    char *t = read_text(dir, PF_RUN_EVALUATIONS);
    long n = 0;
    for (char *p = t; p && *p; p++)
        n += *p == '\n';
    free(t);
    return n;
}

static void free_records(pf_eval_record *r, int n)
{
    for (int i = 0; i < n; i++)
        pf_record_free(&r[i]);
    free(r);
}

/* Whether a valid training record is dominated by another (then it is not on the frontier). */
static bool dominated(const pf_eval_record *r, int n, int i)
{
    for (int k = 0; k < n; k++)
        if (k != i && r[k].valid && r[k].set == PF_SET_TRAIN && r[k].error <= r[i].error &&
            r[k].time <= r[i].time && (r[k].error < r[i].error || r[k].time < r[i].time))
            return true;
    return false;
}

/* A finished run: its files, every id at most once (and with `contiguous`, every id from 0 on:
 * nothing lost), every genome measured once (and confirmed at most once), every record from a worker rank with its host,
 * every training-frontier point timed in full (screening sets aside only dominated ones).
 * Returns how many records rank `rank` made. */
static int check_run(const char *dir, int rank, bool contiguous)
{
    char *cp = read_text(dir, PF_RUN_CHECKPOINT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cp);
    CU_ASSERT_PTR_NOT_NULL(strstr(cp, "\"finished\":true"));
    free(cp);
    const char *files[] = { PF_RUN_CONFIG, PF_RUN_PROGRAM, PF_RUN_FRONTIER_TRAIN,
                            PF_RUN_FRONTIER_TEST, PF_RUN_SUMMARY, PF_RUN_LOG };
    for (int i = 0; i < 6; i++) {
        char *t = read_text(dir, files[i]);
        CU_ASSERT_PTR_NOT_NULL(t);
        free(t);
    }
    int n, mine = 0;
    pf_eval_record *r = records(dir, &n);
    CU_ASSERT_FATAL(n >= 6 + 2);
    for (int i = 0; i < n; i++) {
        int same_id = 0, same_text = 0, id_i = 0;
        for (int k = 0; k < n; k++) {
            same_id += r[k].id == r[i].id;
            id_i += r[k].id == i;
            same_text += r[k].set == r[i].set && strcmp(r[k].schedule, r[i].schedule) == 0 &&
                         (r[k].generation == PF_GEN_CONFIRM) == (r[i].generation == PF_GEN_CONFIRM);
        }
        CU_ASSERT_EQUAL(same_id, 1);
        if (contiguous)
            CU_ASSERT_EQUAL(id_i, 1);
        CU_ASSERT_EQUAL(same_text, 1);
        CU_ASSERT(r[i].rank >= 1 && r[i].worker == r[i].rank);
        CU_ASSERT(r[i].host && r[i].host[0]);
        if (r[i].valid && r[i].set == PF_SET_TRAIN && !dominated(r, n, i))
            CU_ASSERT(r[i].full_timing);
        mine += r[i].rank == rank;
    }
    free_records(r, n);
    return mine;
}

/* Whether the node-local copy of a run's broadcast data is still in $TMPDIR (its name: the
 * FNV-1a hash of the run directory as rank 0 got it, cluster/mpi_master.c). */
static bool data_left(const char *run)
{
    unsigned long long h = 0xcbf29ce484222325ull;
    for (const char *c = run; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[1024];
    snprintf(path, sizeof path, "%s/perfora-%u-%016llx-data", tmp, (unsigned)getuid(), h);
    return access(path, F_OK) == 0;
}

/* With --broadcast-data: the workers read the program and images rank 0 sent them. */
static void test_search_on_three_ranks(void)
{
    if (!have_mpirun())
        return;
    const char *dir = pf_test_tmp("mpi3");
    const char *args[] = { PF_SOURCE_DIR "/apps/blur.pf", "--out", dir, "--broadcast-data",
                           SEARCH, NULL };
    CU_ASSERT_EQUAL_FATAL(finish(start_mpirun(3, NULL, args)), 0);
    CU_ASSERT(check_run(dir, 1, true) > 0);
    CU_ASSERT(check_run(dir, 2, true) > 0);  /* every worker rank evaluated something */
    char *log = read_text(dir, PF_RUN_LOG);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "MPI: rank 0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "broadcast by rank 0"));
    free(log);
    CU_ASSERT(!data_left(dir));  /* the node's copy is removed at the end */
}

static void test_dead_worker_loses_nothing(void)
{
    if (!have_mpirun())
        return;
    const char *dir = pf_test_tmp("mpi-dead");
    const char *args[] = { PF_SOURCE_DIR "/apps/blur.pf", "--out", dir, SEARCH, NULL };
    /* rank 2 dies when its third candidate arrives */
    CU_ASSERT_EQUAL_FATAL(finish(start_mpirun(3, "exit:2:2", args)), 0);
    CU_ASSERT_EQUAL(check_run(dir, 2, true), 2);
    char *log = read_text(dir, PF_RUN_LOG);
    const char *lost = strstr(log, "worker rank 2 on ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(lost);
    long id = -1;
    const char *c = strstr(lost, "its candidate ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(sscanf(c, "its candidate %ld is dispatched again", &id), 1);
    free(log);
    int n;
    pf_eval_record *r = records(dir, &n);
    for (int i = 0; i < n; i++)
        if (r[i].id == id)
            CU_ASSERT_EQUAL(r[i].rank, 1);  /* measured by the worker left */
    free_records(r, n);
}

/* SIGKILLs a process and all its descendants at once (a job's end at a node failure). */
static void kill_tree(pid_t root)
{
    pid_t tree[256] = { root };
    int n = 1;
    for (int grew = 1; grew;) {
        grew = 0;
        DIR *d = opendir("/proc");
        for (struct dirent *e; d && (e = readdir(d));) {
            char path[300], buf[512];
            snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            size_t len = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[len] = '\0';
            char *paren = strrchr(buf, ')');
            int pid = atoi(e->d_name), ppid = 0;
            if (!paren || sscanf(paren + 2, "%*c %d", &ppid) != 1)
                continue;
            bool parent_in = false, in = false;
            for (int i = 0; i < n; i++) {
                parent_in |= tree[i] == ppid;
                in |= tree[i] == pid;
            }
            if (parent_in && !in && n < 256) {
                tree[n++] = pid;
                grew = 1;
            }
        }
        if (d)
            closedir(d);
    }
    for (int i = 0; i < n; i++)
        kill(tree[i], SIGSTOP);
    for (int i = 0; i < n; i++)
        kill(tree[i], SIGKILL);
}

static void test_killed_job_resumes_with_other_n(void)
{
    if (!have_mpirun())
        return;
    const char *dir = pf_test_tmp("mpi-killed");
    const char *args[] = { PF_SOURCE_DIR "/apps/blur.pf", "--out", dir, SEARCH, NULL };
    pid_t pid = start_mpirun(3, NULL, args);
    struct timespec ms20 = { 0, 20000000 };
    int status = 0;
    pid_t done = 0;
    while (count_lines(dir) < 8 && (done = waitpid(pid, &status, WNOHANG)) == 0)
        nanosleep(&ms20, NULL);  /* into generation 1 */
    CU_ASSERT_EQUAL_FATAL(done, 0);  /* still running */
    kill_tree(pid);
    CU_ASSERT_EQUAL_FATAL(finish(pid), 128 + SIGKILL);
    long before = count_lines(dir);
    const char *resume[] = { "--resume", dir, "--quiet", NULL };
    CU_ASSERT_EQUAL_FATAL(finish(start_mpirun(2, NULL, resume)), 0);
    CU_ASSERT(check_run(dir, 1, false) > 0);  /* nothing measured twice */
    int n;
    pf_eval_record *r = records(dir, &n);
    CU_ASSERT(n > before);
    for (int i = (int)before; i < n; i++)
        CU_ASSERT_EQUAL(r[i].rank, 1);  /* one worker rank after the resume */
    free_records(r, n);
    char *log = read_text(dir, PF_RUN_LOG);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "continuing after generation"));
    free(log);
}

/* The same binary without a launcher: no MPI_Init, the local pool. */
static void test_without_mpirun_runs_the_local_pool(void)
{
    const char *dir = pf_test_tmp("local");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        const char *vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL };
        for (int i = 0; vars[i]; i++)
            unsetenv(vars[i]);
        execl(PF_PERFORA_EXE, "perfora", "tune", PF_SOURCE_DIR "/apps/blur.pf", "--out", dir,
              "--resolution", "256x192", "--max-images", "1", "--population", "3",
              "--generations", "1", "--samples", "1", "--min-sample-ms", "1", "--jobs", "2",
              "--no-test", "--quiet", (char *)NULL);
        _exit(127);
    }
    CU_ASSERT_EQUAL_FATAL(finish(pid), 0);
    char *log = read_text(dir, PF_RUN_LOG);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "local pool of 2 worker processes"));
    free(log);
    int n;
    pf_eval_record *r = records(dir, &n);
    CU_ASSERT(n >= 3);
    for (int i = 0; i < n; i++)
        CU_ASSERT(r[i].rank == 0 && r[i].host && r[i].host[0]);
    free_records(r, n);
}

/* SIGTERM (a batch system's warning passed on) stops a local run at once with status 3, and
 * no candidate in flight is recorded as a crash of its worker. */
static void test_sigterm_stops_and_resumes(void)
{
    const char *dir = pf_test_tmp("stopped");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execl(PF_PERFORA_EXE, "perfora", "tune", PF_SOURCE_DIR "/apps/blur.pf", "--out", dir,
              "--resolution", "256x192", "--max-images", "1", "--population", "6",
              "--generations", "3", "--samples", "1", "--min-sample-ms", "1", "--jobs", "2",
              "--quiet", (char *)NULL);
        _exit(127);
    }
    struct timespec ms20 = { 0, 20000000 };
    int status = 0;
    pid_t done = 0;
    while (count_lines(dir) < 3 && (done = waitpid(pid, &status, WNOHANG)) == 0)
        nanosleep(&ms20, NULL);
    CU_ASSERT_EQUAL_FATAL(done, 0);
    kill(pid, SIGTERM);
    CU_ASSERT_EQUAL_FATAL(finish(pid), 3);
    char *log = read_text(dir, PF_RUN_LOG);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "stopped on request"));
    free(log);
    int n;
    pf_eval_record *r = records(dir, &n);
    for (int i = 0; i < n; i++)
        CU_ASSERT(r[i].valid || !strstr(r[i].reason, "crashed"));
    free_records(r, n);
    pid = fork();
    if (pid == 0) {
        execl(PF_PERFORA_EXE, "perfora", "tune", "--resume", dir, "--quiet", (char *)NULL);
        _exit(127);
    }
    CU_ASSERT_EQUAL(finish(pid), 0);
    char *cp = read_text(dir, PF_RUN_CHECKPOINT);
    CU_ASSERT_PTR_NOT_NULL(cp && strstr(cp, "\"finished\":true"));
    free(cp);
}

/* mpirun -np 1: a local run (no MPI_Init, the local pool), as the N = 1. */
static void test_one_rank_is_a_local_run(void)
{
    if (!have_mpirun())
        return;
    const char *dir = pf_test_tmp("mpi1");
    const char *args[] = { PF_SOURCE_DIR "/apps/blur.pf", "--out", dir, "--resolution",
                           "256x192", "--max-images", "1", "--population", "3", "--generations",
                           "1", "--samples", "1", "--min-sample-ms", "1", "--jobs", "2",
                           "--no-test", "--quiet", NULL };
    CU_ASSERT_EQUAL_FATAL(finish(start_mpirun(1, NULL, args)), 0);
    char *log = read_text(dir, PF_RUN_LOG);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "local pool of 2 worker processes"));
    free(log);
}

PF_TEST_SUITE(cluster_mpi, PF_TEST(test_without_mpirun_runs_the_local_pool),
              PF_TEST(test_one_rank_is_a_local_run),
              PF_TEST(test_sigterm_stops_and_resumes),
              PF_TEST(test_search_on_three_ranks),
              PF_TEST(test_dead_worker_loses_nothing),
              PF_TEST(test_killed_job_resumes_with_other_n))
