/* File helpers: bounded reads, atomic writes, directory creation. */
#include "base/fileio.h"

#include "base/arena.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pf_read_file(const char *path, size_t max_bytes, char **out, size_t *len, pf_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return pf_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        return pf_fail(err, "%s: is a directory, not a file", path);
    }
    size_t cap = 4096, n = 0;
    char *buf = pf_xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > max_bytes) {
                free(buf);
                fclose(fp);
                return pf_fail(err, "%s: file is larger than the limit of %zu bytes", path,
                               max_bytes);
            }
            cap *= 2;
            buf = pf_xrealloc(buf, cap);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, fp);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(fp), e = errno;
    fclose(fp);
    if (bad || n > max_bytes) {
        free(buf);
        return bad ? pf_fail(err, "%s: read error: %s", path, strerror(e))
                   : pf_fail(err, "%s: file is larger than the limit of %zu bytes", path,
                             max_bytes);
    }
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
}

/* The mode a new file would get from open(path, O_CREAT, 0666) under the current umask. */
static mode_t default_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

int pf_atomic_open(pf_atomic_file *f, const char *path, pf_error *err)
{
    size_t n = strlen(path);
    f->path = pf_xstrdup(path);
    f->tmp_path = pf_xmalloc(n + 16);
    snprintf(f->tmp_path, n + 16, "%s.tmp.XXXXXX", path);
    /* mkstemp: O_CREAT | O_EXCL, so a name planted in advance (a symlink included, which
     * O_EXCL does not follow) makes it draw another; the name is unpredictable anyway. */
    int fd = mkstemp(f->tmp_path);
    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? st.st_mode & 07777 : default_mode();
    if (fd >= 0 && fchmod(fd, mode) != 0) {
        int e = errno;
        close(fd);
        unlink(f->tmp_path);
        errno = e;
        fd = -1;
    }
    f->fp = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f->fp) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(f->tmp_path);
        }
        free(f->path);
        free(f->tmp_path);
        f->path = f->tmp_path = NULL;
        return pf_fail(err, "%s: cannot create: %s", path, strerror(e));
    }
    return 0;
}

void pf_atomic_abort(pf_atomic_file *f)
{
    if (f->fp)
        fclose(f->fp);
    if (f->tmp_path)
        unlink(f->tmp_path);
    free(f->path);
    free(f->tmp_path);
    f->fp = NULL;
    f->path = f->tmp_path = NULL;
}

int pf_atomic_commit(pf_atomic_file *f, pf_error *err)
{
    int bad = fflush(f->fp) != 0 || ferror(f->fp);
    if (!bad)
        fsync(fileno(f->fp));
    bad |= fclose(f->fp) != 0;
    f->fp = NULL;
    if (bad) {
        pf_fail(err, "%s: write error: %s", f->path, strerror(errno));
        pf_atomic_abort(f);
        return -1;
    }
    if (rename(f->tmp_path, f->path) != 0) {
        pf_fail(err, "%s: cannot rename into place: %s", f->path, strerror(errno));
        pf_atomic_abort(f);
        return -1;
    }
    free(f->path);
    free(f->tmp_path);
    f->path = f->tmp_path = NULL;
    return 0;
}

int pf_write_file_atomic(const char *path, const void *data, size_t len, pf_error *err)
{
    pf_atomic_file f;
    if (pf_atomic_open(&f, path, err) != 0)
        return -1;
    if (len && fwrite(data, 1, len, f.fp) != len) {
        pf_fail(err, "%s: write error: %s", path, strerror(errno));
        pf_atomic_abort(&f);
        return -1;
    }
    return pf_atomic_commit(&f, err);
}

int pf_mkdir_p(const char *path, pf_error *err)
{
    char *p = pf_xstrdup(path);
    for (char *s = p + 1;; s++) {
        char c = *s;
        if (c != '/' && c != '\0')
            continue;
        *s = '\0';
        struct stat st;
        if (stat(p, &st) != 0) {
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                pf_fail(err, "%s: cannot create directory: %s", p, strerror(errno));
                free(p);
                return -1;
            }
        } else if (!S_ISDIR(st.st_mode)) {
            pf_fail(err, "%s: exists and is not a directory", p);
            free(p);
            return -1;
        }
        *s = c;
        if (c == '\0')
            break;
    }
    free(p);
    return 0;
}

char *pf_path_join(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *s = pf_xmalloc(na + nb + 2);
    memcpy(s, a, na);
    size_t k = na;
    if (k && s[k - 1] != '/')
        s[k++] = '/';
    memcpy(s + k, b, nb + 1);
    return s;
}
