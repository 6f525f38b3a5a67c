/* main() for every CUnit suite executable: collects the suites registered by PF_TEST_SUITE,
 * runs them verbosely, and exits non-zero on any failure (so CTest sees it). */
#include "tests/harness/harness.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SUITES 256

static struct { const char *name; CU_TestInfo *tests; } suites[MAX_SUITES];
static int n_suites;

void pf_test_add_suite(const char *name, CU_TestInfo *tests)
{
    if (n_suites == MAX_SUITES) {
        fprintf(stderr, "harness: too many suites\n");
        abort();
    }
    suites[n_suites].name = name;
    suites[n_suites].tests = tests;
    n_suites++;
}

#define MAX_KEEP 1024
static char *kept[MAX_KEEP];
static int n_kept;

static const char *keep(char *s)
{
    if (n_kept < MAX_KEEP)
        kept[n_kept++] = s;
    return s;
}

const char *pf_test_src(const char *relative)
{
    size_t n = strlen(PF_SOURCE_DIR) + strlen(relative) + 2;
    char *s = malloc(n);
    snprintf(s, n, "%s/%s", PF_SOURCE_DIR, relative);
    return keep(s);
}

static char tmpdir[4096];

static void remove_tmpdir(void)
{
    if (tmpdir[0] && !getenv("PF_TEST_KEEP_TMP")) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "harness: could not remove %s\n", tmpdir);
    }
}

const char *pf_test_tmpdir(void)
{
    if (!tmpdir[0]) {
        const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(tmpdir, sizeof tmpdir, "%s/perfora-test-XXXXXX", base);
        if (!mkdtemp(tmpdir)) {
            perror("harness: mkdtemp");
            abort();
        }
        atexit(remove_tmpdir);
    }
    return tmpdir;
}

const char *pf_test_tmp(const char *name)
{
    const char *dir = pf_test_tmpdir();
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    snprintf(s, n, "%s/%s", dir, name);
    return keep(s);
}

/* No arguments: every suite. `SUITE...`: those. `--except SUITE...`: all but those (CTest
 * runs slow suites as tests of their own and the rest with --except, so a new suite is never
 * left out). */
static int wanted(const char *name, int argc, char **argv)
{
    if (argc <= 1)
        return 1;
    int except = strcmp(argv[1], "--except") == 0;
    for (int i = 1 + except; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return !except;
    return except;
}

int main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    int added = 0;
    for (int i = 0; i < n_suites; i++) {
        if (!wanted(suites[i].name, argc, argv))
            continue;
        CU_pSuite s = CU_add_suite(suites[i].name, NULL, NULL);
        for (CU_TestInfo *t = suites[i].tests; t->pName; t++)
            CU_add_test(s, t->pName, t->pTestFunc);
        added++;
    }
    if (added == 0) {
        fprintf(stderr, "harness: no suite matched\n");
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    unsigned ran = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    for (int i = 0; i < n_kept; i++)
        free(kept[i]);
    if (ran == 0) {
        fprintf(stderr, "harness: no test ran\n");
        return 2;
    }
    return failed ? 1 : 0;
}
