/* Malformed programs: every file in tests/lang/errors/ starts with the diagnostics it must
 * give, one `// expect: LINE:COL: error: MESSAGE` line each (MESSAGE is a substring of the
 * actual message); the file must give exactly those, in that order, and render them with the
 * file name, the source line and a caret. */
#include "tests/harness/harness.h"
#include "tests/lang/test_front_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXPECT 16

typedef struct expectation {
    int line, col;
    char msg[256];
} expectation;

static int read_expectations(const char *src, expectation *ex)
{
    int n = 0;
    const char *p = src;
    while (n < MAX_EXPECT && strncmp(p, "// expect: ", 11) == 0) {
        int used = 0;
        if (sscanf(p + 11, "%d:%d: error: %n", &ex[n].line, &ex[n].col, &used) != 2 || !used)
            break;
        const char *m = p + 11 + used, *end = strchr(m, '\n');
        size_t len = end ? (size_t)(end - m) : strlen(m);
        if (len >= sizeof ex[n].msg)
            len = sizeof ex[n].msg - 1;
        memcpy(ex[n].msg, m, len);
        ex[n].msg[len] = '\0';
        n++;
        if (!end)
            break;
        p = end + 1;
    }
    return n;
}

/* Checks one file; returns whether it behaved as it says. */
static bool check_file(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len;
    char *src = ft_read(path, &len);
    if (!src)
        return false;
    expectation ex[MAX_EXPECT];
    int n = read_expectations(src, ex);
    pf_diags d;
    pf_diags_init(&d, name, src);
    pf_program *p = pf_parse(name, src, len, &d);
    int rc = p ? pf_check(p, &d) : -1;
    bool ok = n > 0 && rc != 0 && d.count == n;
    for (int i = 0; ok && i < n; i++)
        ok = d.items[i].loc.line == ex[i].line && d.items[i].loc.col == ex[i].col &&
             strstr(d.items[i].message, ex[i].msg) != NULL;
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_diags_render(&d, &sb);
    if (ok) {
        char head[512];
        snprintf(head, sizeof head, "%s:%d:%d: error: ", name, ex[0].line, ex[0].col);
        ok = strncmp(pf_sb_str(&sb), head, strlen(head)) == 0 && strstr(pf_sb_str(&sb), "^\n");
    }
    if (!ok) {
        fprintf(stderr, "\n%s: expected %d diagnostic(s):\n", name, n);
        for (int i = 0; i < n; i++)
            fprintf(stderr, "  %d:%d: error: %s\n", ex[i].line, ex[i].col, ex[i].msg);
        fprintf(stderr, "got:\n%s", pf_sb_str(&sb));
    }
    pf_sb_free(&sb);
    pf_program_free(p);
    pf_diags_free(&d);
    free(src);
    return ok;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_error_files(void)
{
    const char *dir = pf_test_src("tests/lang/errors");
    DIR *dp = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
    char *names[1024];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL && n < 1024) {
        size_t l = strlen(de->d_name);
        if (l > 3 && strcmp(de->d_name + l - 3, ".pf") == 0)
            names[n++] = strdup(de->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof names[0], compare_names);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        if (!check_file(dir, names[i]))
            failed++;
        free(names[i]);
    }
    CU_ASSERT_EQUAL(failed, 0);
    CU_ASSERT(n >= 40);  /* the issue asks for at least 40 kinds */
}

PF_TEST_SUITE(lang_errors, PF_TEST(test_error_files))
