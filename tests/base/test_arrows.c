/* The module arrows of docs/architecture.md, checked on the sources: every #include "DIR/..."
 * of a module's files names a module it may use (so lang/, interp/ and codegen/ never reach
 * search/, results/ or cluster/, and interp/ never reaches codegen/). */
#include "tests/harness/harness.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct arrow {
    const char *module;
    const char *uses;  /* space-separated, the module itself included */
} arrow;

static const arrow arrows[] = {
    { "base", "base" },
    { "dataset", "base dataset" },
    { "lang", "base lang" },
    { "perforate", "base lang perforate" },
    { "reconstruct", "base lang reconstruct" },
    { "interp", "base lang perforate reconstruct interp" },
    { "codegen", "base lang perforate reconstruct interp codegen" },
    { "run", "base lang perforate reconstruct interp codegen dataset run" },
    { "search", "base lang perforate reconstruct codegen dataset run search" },
    { "cluster", "base dataset search cluster" },
    { "results", "base lang perforate codegen dataset run search results" },
};

static bool allowed(const char *uses, const char *dir)
{
    size_t n = strlen(dir);
    for (const char *s = uses; (s = strstr(s, dir)); s += n)
        if ((s == uses || s[-1] == ' ') && (s[n] == ' ' || s[n] == '\0'))
            return true;
    return false;
}

/* The forbidden includes of one file, printed; their count. */
static int check_file(const char *path, const arrow *a)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[512];
    int bad = 0;
    while (fgets(line, sizeof line, f)) {
        char dir[64];
        if (sscanf(line, " #include \"%63[a-z_]/", dir) == 1 && !allowed(a->uses, dir)) {
            fprintf(stderr, "\n    %s includes %s/ (%s may use: %s)", path, dir, a->module,
                    a->uses);
            bad++;
        }
    }
    fclose(f);
    return bad;
}

static void test_includes_follow_the_arrows(void)
{
    int files = 0, bad = 0;
    for (size_t i = 0; i < sizeof arrows / sizeof *arrows; i++) {
        const char *dir = pf_test_src(arrows[i].module);
        DIR *d = opendir(dir);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        for (struct dirent *e; (e = readdir(d));) {
            size_t l = strlen(e->d_name);
            if (l < 3 || (strcmp(e->d_name + l - 2, ".c") != 0 &&
                          strcmp(e->d_name + l - 2, ".h") != 0))
                continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            bad += check_file(path, &arrows[i]);
            files++;
        }
        closedir(d);
    }
    CU_ASSERT(files > 100);
    CU_ASSERT_EQUAL(bad, 0);
}

PF_TEST_SUITE(module_arrows, PF_TEST(test_includes_follow_the_arrows))
