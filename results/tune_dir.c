/* Claiming a run directory for a new run, undoing a start that failed, and clearing what a
 * kill left (issue 27: `tune --out` on a directory of the user's overwrote their files, a
 * failed start left a half-made run that could be neither reused nor resumed, and leftover
 * temporaries stayed forever). */
#include "results/tune_internal.h"

#include "base/arena.h"
#include "base/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The files pf_tune_create makes, removed again when it fails (config.json comes last). */
static const char *const created[] = { PF_RUN_CONFIG, PF_RUN_EVALUATIONS, PF_RUN_LOG,
                                       PF_RUN_PROGRAM, PF_RUN_RUN_LOCK };

typedef enum dir_state { DIR_EMPTY, DIR_RUN, DIR_OTHER } dir_state;

/* What dir holds (the lock file alone counts as empty: a start that is racing ours). */
static dir_state state_of(const char *dir, char *first, size_t n)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return DIR_OTHER;
    dir_state s = DIR_EMPTY;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        const char *name = de->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
            strcmp(name, PF_RUN_RUN_LOCK) == 0)
            continue;
        if (strcmp(name, PF_RUN_CONFIG) == 0) {
            s = DIR_RUN;
            break;
        }
        if (s == DIR_EMPTY)
            snprintf(first, n, "%s", name);
        s = DIR_OTHER;
    }
    closedir(dp);
    return s;
}

static int refuse(const char *dir, dir_state s, const char *first, pf_error *err)
{
    if (s == DIR_RUN)
        return pf_fail(err, "%s already holds a run (resume it with --resume %s, or choose "
                       "another --out)", dir, dir);
    return pf_fail(err, "%s is not empty (it holds '%s' and is not a perfora run): --out takes "
                   "a new or empty directory, so that nothing in it is overwritten", dir, first);
}

int pf_tune_claim_dir(pf_tune *t, bool *made, pf_error *err)
{
    char first[256] = "";
    struct stat st;
    *made = false;
    if (stat(t->dir, &st) != 0) {
        if (errno != ENOENT)
            return pf_fail(err, "%s: %s", t->dir, strerror(errno));
        if (pf_mkdir_p(t->dir, err) != 0)
            return -1;
        *made = true;
    } else if (!S_ISDIR(st.st_mode)) {
        return pf_fail(err, "%s exists and is not a directory", t->dir);
    } else {
        dir_state s = state_of(t->dir, first, sizeof first);
        if (s != DIR_EMPTY)
            return refuse(t->dir, s, first, err);  /* before creating anything in it */
    }
    if (pf_run_lock_take(&t->lock, t->dir, err) != 0)
        return -1;
    dir_state s = state_of(t->dir, first, sizeof first);  /* another start got there first */
    if (s == DIR_EMPTY)
        return 0;
    pf_run_lock_release(&t->lock);  /* nothing here is ours to undo */
    return refuse(t->dir, s, first, err);
}

void pf_tune_undo_create(pf_tune *t, bool made)
{
    if (t->lock.fd < 0)
        return;  /* the directory was never claimed: nothing in it is ours */
    for (size_t i = 0; i < sizeof created / sizeof *created; i++) {
        char *path = pf_run_path(t->dir, created[i]);
        unlink(path);
        free(path);
    }
    pf_run_lock_release(&t->lock);
    if (made)
        rmdir(t->dir);  /* only if empty again */
}

/* NAME.tmp.XXXXXX (mkstemp: six letters or digits) or NAME.tmp.PID (before issue 27). */
static bool is_temporary(const char *name)
{
    const char *p = strstr(name, PF_TMP_INFIX);
    if (!p || p == name)
        return false;
    p += strlen(PF_TMP_INFIX);
    size_t n = strlen(p), alnum = 0, digits = strspn(p, "0123456789");
    while (alnum < n && ((p[alnum] >= '0' && p[alnum] <= '9') ||
                         (p[alnum] >= 'a' && p[alnum] <= 'z') ||
                         (p[alnum] >= 'A' && p[alnum] <= 'Z')))
        alnum++;
    return (alnum == n && n == 6) || (digits == n && n >= 1 && n <= 10);
}

static int clean_dir(pf_tune *t, const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        if (!is_temporary(de->d_name))
            continue;
        char *path = pf_path_join(dir, de->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && unlink(path) == 0) {
            pf_tune_log(t, "removed %s, a temporary file left by a killed write", path);
            n++;
        }
        free(path);
    }
    closedir(dp);
    return n;
}

int pf_tune_clean_temporaries(pf_tune *t)
{
    char *frontier = pf_run_path(t->dir, PF_RUN_FRONTIER_DIR);
    int n = clean_dir(t, t->dir) + clean_dir(t, frontier);
    free(frontier);
    return n;
}
