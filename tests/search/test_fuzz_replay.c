/* Replays the inputs of the whole-library fuzz targets (fuzz/README.md) through their oracles,
 * so that every finding stays fixed and the sanitizer build of the tests runs them too:
 * fuzz/jit/regressions and a sample of fuzz/jit/corpus (each input compiles a program), and
 * all of fuzz/rundir. A failure aborts with the oracle's message. */
#include "fuzz/jit_oracle.h"
#include "fuzz/rundir_oracle.h"
#include "tests/harness/harness.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void (*oracle_fn)(const uint8_t *data, size_t size);

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every `every`-th file of DIR (sorted by name), through fn; returns how many ran. */
static int replay(const char *rel, int every, oracle_fn fn)
{
    const char *dir = pf_test_src(rel);
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    char **names = NULL;
    int n = 0, ran = 0;
    for (struct dirent *de; (de = readdir(dp)) != NULL;) {
        if (de->d_name[0] == '.')
            continue;
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        names[n++] = strdup(de->d_name);
    }
    closedir(dp);
    if (n > 0)
        qsort(names, (size_t)n, sizeof *names, cmp_names);
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *data;
        size_t len;
        pf_error err;
        if (i % every == 0 && pf_read_file(path, 1 << 20, &data, &len, &err) == 0) {
            fn((const uint8_t *)data, len);
            free(data);
            ran++;
        }
        free(names[i]);
    }
    free(names);
    return ran;
}

/* In a child: generated code must not run in the test process, whose later tests fork. The
 * regressions of directory reg and every `every`-th corpus input, through fn; the child fails
 * unless some ran (and, in GPU mode, some plans had GPU stages). */
static void jit_inputs(oracle_fn fn, const char *reg, int every, bool gpu)
{
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        int r = replay(reg, 1, fn);
        int c = replay("fuzz/jit/corpus", every, fn);
        printf("\n    %d regressions, %d corpus inputs, %d with GPU stages", r, c, jo_gpu_plans);
        fflush(NULL);
        _exit((gpu ? jo_gpu_plans > 0 : r > 0) && c > 0 ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_jit_inputs(void)
{
    jit_inputs(jo_oracle_run, "fuzz/jit/regressions", 25, false);
}

/* The oracle's GPU mode: GPU genes and plans, their lowering run by the JIT on the CPU. */
static void test_jit_inputs_gpu(void)
{
    int every = getenv("PF_FUZZ_REPLAY_ALL") ? 1 : 10;
    jit_inputs(jo_oracle_run_gpu, "fuzz/jit/gpu-regressions", every, true);
}

static void test_rundir_inputs(void)
{
    int r = replay("fuzz/rundir/regressions", 1, ro_oracle_run);
    int c = replay("fuzz/rundir/corpus", 1, ro_oracle_run);
    ro_cleanup();
    printf("\n    %d regressions, %d corpus inputs", r, c);
    CU_ASSERT(c > 0);
}

PF_TEST_SUITE(search_fuzz_replay, PF_TEST(test_jit_inputs), PF_TEST(test_jit_inputs_gpu),
              PF_TEST(test_rundir_inputs))
