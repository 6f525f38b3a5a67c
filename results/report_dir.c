/* The report directory, written whole or not at all: the report is built in a sibling
 * "OUT.partial-PID", which gets a manifest of its files (.perfora-report) last and then takes
 * OUT's place in one rename (an exchange with an earlier report, which is then removed file by
 * file from its own manifest). An existing OUT is replaced only when every file in it is one
 * its manifest lists: a report never deletes what it did not write. */
#define _GNU_SOURCE /* renameat2 */
#include "results/report_dir.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "results/report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_HEAD "# perfora report manifest 1\n"

/* ---- listing a tree ---- */

typedef struct listing {
    char **path;               /* relative; directories end with '/' */
    int n, cap;
} listing;

static void list_add(listing *l, const char *path)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        l->path = pf_xrealloc(l->path, sizeof *l->path * (size_t)l->cap);
    }
    l->path[l->n++] = pf_xstrdup(path);
}

static void list_free(listing *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->path[i]);
    free(l->path);
    memset(l, 0, sizeof *l);
}

static int list_tree(const char *root, const char *rel, listing *l, pf_error *err)
{
    char *dir = rel[0] ? pf_path_join(root, rel) : pf_xstrdup(root);
    DIR *d = opendir(dir);
    if (!d) {
        int rc = pf_fail(err, "cannot read %s: %s", dir, strerror(errno));
        free(dir);
        return rc;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        pf_strbuf p;
        pf_sb_init(&p);
        pf_sb_printf(&p, "%s%s", rel, e->d_name);
        char *full = pf_path_join(root, pf_sb_str(&p));
        struct stat st;
        bool is_dir = lstat(full, &st) == 0 && S_ISDIR(st.st_mode);
        free(full);
        if (is_dir) {
            pf_sb_putc(&p, '/');
            list_add(l, pf_sb_str(&p));
            rc = list_tree(root, pf_sb_str(&p), l, err);
        } else {
            list_add(l, pf_sb_str(&p));
        }
        pf_sb_free(&p);
    }
    closedir(d);
    free(dir);
    return rc;
}

/* ---- the manifest ---- */

static int read_manifest(const char *out, listing *l, pf_error *err)
{
    char *path = pf_path_join(out, PF_REPORT_MANIFEST), *text = NULL;
    size_t len;
    int rc = pf_read_file(path, (size_t)16 << 20, &text, &len, err);
    free(path);
    if (rc != 0)
        return -1;
    if (strncmp(text, MANIFEST_HEAD, strlen(MANIFEST_HEAD)) != 0) {
        free(text);
        return pf_fail(err, "%s/%s is not a report manifest", out, PF_REPORT_MANIFEST);
    }
    for (char *line = strtok(text + strlen(MANIFEST_HEAD), "\n"); line;
         line = strtok(NULL, "\n"))
        list_add(l, line);
    list_add(l, PF_REPORT_MANIFEST);
    free(text);
    return 0;
}

static bool listed(const listing *l, const char *path)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->path[i], path) == 0)
            return true;
    return false;
}

static int write_manifest(const char *tmp, pf_error *err)
{
    listing l = { 0 };
    int rc = list_tree(tmp, "", &l, err);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_puts(&sb, MANIFEST_HEAD);
    for (int i = 0; i < l.n; i++)
        pf_sb_printf(&sb, "%s\n", l.path[i]);
    char *path = pf_path_join(tmp, PF_REPORT_MANIFEST);
    if (rc == 0)
        rc = pf_write_file_atomic(path, sb.data, sb.len, err);
    free(path);
    pf_sb_free(&sb);
    list_free(&l);
    return rc;
}

/* ---- checks, begin, commit ---- */

int pf_report_dir_check(const char *out, pf_error *err)
{
    struct stat st;
    if (lstat(out, &st) != 0)
        return errno == ENOENT ? 0 : pf_fail(err, "%s: %s", out, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return pf_fail(err, "%s exists and is not a directory; move it, or choose another "
                       "--out", out);
    listing have = { 0 }, ours = { 0 };
    int rc = list_tree(out, "", &have, err);
    if (rc == 0 && have.n > 0 && read_manifest(out, &ours, err) != 0)
        rc = pf_fail(err, "%s exists and holds files that are not a perfora report (no %s); "
                     "move them, or choose another --out", out, PF_REPORT_MANIFEST);
    for (int i = 0; rc == 0 && i < have.n; i++)
        if (!listed(&ours, have.path[i]))
            rc = pf_fail(err, "%s holds %s, which no perfora report wrote; move it, or choose "
                         "another --out", out, have.path[i]);
    list_free(&have);
    list_free(&ours);
    return rc;
}

/* Removes the listed files and (empty) directories under root, children first, then root. */
static void remove_listed(const char *root, const listing *l)
{
    for (int i = l->n - 1; i >= 0; i--) {  /* a parent is listed before its children */
        char *p = pf_path_join(root, l->path[i]);
        if (l->path[i][strlen(l->path[i]) - 1] == '/')
            rmdir(p);
        else
            unlink(p);
        free(p);
    }
    rmdir(root);
}

/* Removes a directory of ours (a partial report) whole. */
static void remove_tree(const char *root)
{
    listing l = { 0 };
    list_tree(root, "", &l, NULL);
    remove_listed(root, &l);
    list_free(&l);
}

/* Removes OUT.partial-PID directories whose process is gone (a report killed midway). */
static void remove_stale(const char *out)
{
    char *copy = pf_xstrdup(out), *slash = strrchr(copy, '/');
    const char *parent = slash ? (slash == copy ? "/" : copy) : ".";
    const char *base = slash ? slash + 1 : copy;
    if (slash)
        *slash = '\0';
    size_t bl = strlen(base);
    DIR *d = opendir(parent);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        const char *tail = e->d_name + bl;
        if (strncmp(e->d_name, base, bl) != 0 || strncmp(tail, ".partial-", 9) != 0)
            continue;
        char *end;
        long pid = strtol(tail + 9, &end, 10);
        if (*end || pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH)) {
            char *p = pf_path_join(parent, e->d_name);
            remove_tree(p);
            free(p);
        }
    }
    if (d)
        closedir(d);
    free(copy);
}

char *pf_report_dir_begin(const char *out, pf_error *err)
{
    remove_stale(out);
    char name[64];
    snprintf(name, sizeof name, ".partial-%ld", (long)getpid());
    char *tmp = pf_xmalloc(strlen(out) + strlen(name) + 1);
    strcpy(tmp, out);
    strcat(tmp, name);
    remove_tree(tmp);
    if (pf_mkdir_p(tmp, err) != 0) {
        free(tmp);
        return NULL;
    }
    return tmp;
}

void pf_report_dir_abort(const char *tmp)
{
    if (tmp)
        remove_tree(tmp);
}

/* Removes what the old report's manifest lists (then its directories, if empty). */
static void remove_old(const char *old)
{
    listing l = { 0 };
    if (read_manifest(old, &l, NULL) == 0)
        remove_listed(old, &l);
    list_free(&l);
}

int pf_report_dir_commit(const char *tmp, const char *out, pf_error *err)
{
    if (write_manifest(tmp, err) != 0)
        return -1;
    if (rename(tmp, out) == 0)  /* no earlier report (or an empty directory) */
        return 0;
    if (errno != EEXIST && errno != ENOTEMPTY)
        return pf_fail(err, "cannot rename %s to %s: %s", tmp, out, strerror(errno));
    if (pf_report_dir_check(out, err) != 0)  /* changed since the first check? */
        return -1;
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_EXCHANGE) == 0) {
        remove_old(tmp);  /* tmp now holds the earlier report */
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS)
        return pf_fail(err, "cannot replace %s with %s: %s", out, tmp, strerror(errno));
    /* A file system without exchange: out is missing for a moment, never half-written. */
    char *old = pf_xmalloc(strlen(tmp) + 5);
    strcpy(old, tmp);
    strcat(old, ".old");
    int rc = 0;
    if (rename(out, old) != 0 || rename(tmp, out) != 0)
        rc = pf_fail(err, "cannot replace %s with %s: %s", out, tmp, strerror(errno));
    else
        remove_old(old);
    free(old);
    return rc;
}
