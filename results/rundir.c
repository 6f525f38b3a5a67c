/* The run directory's low level: paths, JSON files, and the append-only evaluation log. */
#include "results/rundir.h"

#include "base/arena.h"
#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *pf_run_path(const char *dir, const char *name)
{
    return pf_path_join(dir, name);
}

int pf_run_write_json(const char *path, json_object *o, pf_error *err)
{
    const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE);
    size_t n = strlen(s);
    char *buf = pf_xmalloc(n + 2);
    memcpy(buf, s, n);
    buf[n] = '\n';
    int rc = pf_write_file_atomic(path, buf, n + 1, err);
    free(buf);
    return rc;
}

json_object *pf_run_read_json(const char *path, pf_error *err)
{
    char *text;
    size_t len;
    if (pf_read_file(path, (size_t)1 << 30, &text, &len, err) != 0)
        return NULL;
    enum json_tokener_error jerr;
    json_object *o = json_tokener_parse_verbose(text, &jerr);
    free(text);
    if (!o)
        pf_fail(err, "%s: not valid JSON (%s)", path, json_tokener_error_desc(jerr));
    return o;
}

/* ---- the evaluation log ---- */

/* Parses complete lines; returns the byte length of the complete lines (a torn last line,
 * without its newline, is left out), or -1 at a line that is not a record. */
static long scan_lines(char *text, size_t len, pf_run_log *log, pf_run_record_fn fn, void *ctx,
                       const char *path, pf_error *err)
{
    size_t pos = 0;
    while (pos < len) {
        char *nl = memchr(text + pos, '\n', len - pos);
        if (!nl)
            break;  /* torn: written without its newline */
        *nl = '\0';
        pf_eval_record r;
        if (pf_record_from_json(text + pos, &r, err) != 0)
            return pf_fail_prefix(err, "%s:%ld", path, log->lines + 1);
        log->lines++;
        int rc = fn ? fn(ctx, &r, err) : 0;
        pf_record_free(&r);
        if (rc != 0)
            return pf_fail_prefix(err, "%s:%ld", path, log->lines);
        pos = (size_t)(nl - text) + 1;
    }
    return (long)pos;
}

/* Keeps the torn tail [good, len) in PATH.cut-GOOD before the file is cut there. */
static int keep_cut(pf_run_log *log, const char *path, const char *text, size_t good,
                    size_t len, pf_error *err)
{
    size_t n = strlen(path) + 32;
    char *keep = pf_xmalloc(n);
    snprintf(keep, n, "%s.cut-%zu", path, good);
    int rc = pf_write_file_atomic(keep, text + good, len - good, err);
    if (rc == 0) {
        log->cut = pf_xmalloc(n + 160);
        snprintf(log->cut, n + 160, "cut a torn last line of %zu bytes (a write interrupted by a "
                 "kill) from %s at byte %zu; the bytes are kept in %s", len - good, path, good,
                 keep);
    }
    free(keep);
    return rc;
}

int pf_run_log_open(pf_run_log *log, const char *dir, pf_run_record_fn fn, void *ctx,
                    pf_error *err)
{
    log->fd = -1;
    log->lines = 0;
    log->cut = NULL;
    char *path = pf_run_path(dir, PF_RUN_EVALUATIONS);
    int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
    int rc = -1;
    char *text = NULL;
    size_t len;
    if (fd < 0) {
        pf_fail(err, "cannot open %s: %s", path, strerror(errno));
    } else if (pf_read_file(path, (size_t)4 << 30, &text, &len, err) == 0) {
        long good = scan_lines(text, len, log, fn, ctx, path, err);
        if (good >= 0 && (size_t)good < len &&
            (keep_cut(log, path, text, (size_t)good, len, err) != 0 || ftruncate(fd, good) != 0))
            pf_fail(err, "cannot cut the torn last line of %s", path);
        else if (good >= 0)
            rc = 0;
    }
    free(text);
    free(path);
    if (rc != 0 && fd >= 0)
        close(fd);
    else
        log->fd = fd;
    return rc;
}

int pf_run_log_append(pf_run_log *log, const pf_eval_record *rec, pf_error *err)
{
    char *json = pf_record_to_json(rec);
    size_t n = strlen(json);
    json = pf_xrealloc(json, n + 2);
    json[n] = '\n';
    ssize_t w = write(log->fd, json, n + 1);
    free(json);
    if (w != (ssize_t)(n + 1))
        return pf_fail(err, "cannot append to %s: %s", PF_RUN_EVALUATIONS,
                       w < 0 ? strerror(errno) : "short write");
    log->lines++;
    return 0;
}

int pf_run_log_sync(pf_run_log *log, pf_error *err)
{
    if (fdatasync(log->fd) != 0)
        return pf_fail(err, "cannot sync %s: %s", PF_RUN_EVALUATIONS, strerror(errno));
    return 0;
}

void pf_run_log_close(pf_run_log *log)
{
    if (log->fd >= 0)
        close(log->fd);
    log->fd = -1;
    free(log->cut);
    log->cut = NULL;
}
