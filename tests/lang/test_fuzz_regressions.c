/* Replays every input in fuzz/regressions/ (each one crashed, hung or broke the oracle once)
 * and every file of the fuzzing corpus through the fuzzing oracle; any failure aborts. */
#include "fuzz/frontend_oracle.h"
#include "tests/harness/harness.h"
#include "tests/lang/test_front_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int replay_dir(const char *rel)
{
    const char *dir = pf_test_src(rel);
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        size_t len;
        char *data = ft_read(path, &len);
        if (!data)
            continue;
        pf_oracle_run((const unsigned char *)data, len);
        free(data);
        n++;
    }
    closedir(dp);
    return n;
}

static void test_regressions(void)
{
    int n = replay_dir("fuzz/regressions");
    fprintf(stderr, "(%d regression inputs) ", n);
    CU_PASS("replayed");
}

static void test_corpus(void)
{
    int n = replay_dir("fuzz/corpus");
    CU_ASSERT(n > 0);
}

PF_TEST_SUITE(lang_fuzz_regressions, PF_TEST(test_regressions), PF_TEST(test_corpus))
