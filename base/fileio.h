/* Whole-file reads with a size limit, and atomic writes: a file is written to a temporary name
 * beside its destination and renamed into place, so a failure never leaves a partial file.
 *
 * The temporary is PATH.tmp.XXXXXX, created by mkstemp (O_CREAT | O_EXCL: it never opens a
 * file or a symlink planted at its name), with the mode of the file it replaces (else 0666
 * less the umask). rename() then replaces PATH itself: when PATH is a symlink, the link is
 * replaced by the new file and its target is left alone. A temporary left by a kill matches
 * NAME.tmp.* (PF_TMP_INFIX; the run directory removes them on resume). */
#ifndef PF_BASE_FILEIO_H
#define PF_BASE_FILEIO_H

#include "base/error.h"

#include <stdio.h>
#include <stddef.h>

/* Reads all of path into a NUL-terminated malloc'd buffer. Fails if larger than max_bytes. */
int pf_read_file(const char *path, size_t max_bytes, char **out, size_t *len, pf_error *err);

/* Atomic write of a byte buffer. */
int pf_write_file_atomic(const char *path, const void *data, size_t len, pf_error *err);

/* Streaming atomic write: open gives a FILE* on a temporary file; commit flushes, fsyncs and
 * renames it to path; abort removes it. */
typedef struct pf_atomic_file {
    FILE *fp;
    char *path, *tmp_path;
} pf_atomic_file;

#define PF_TMP_INFIX ".tmp."
int pf_atomic_open(pf_atomic_file *f, const char *path, pf_error *err);
int pf_atomic_commit(pf_atomic_file *f, pf_error *err);
void pf_atomic_abort(pf_atomic_file *f);

/* mkdir -p; fails with a message when a component is not a directory. */
int pf_mkdir_p(const char *path, pf_error *err);

/* Joins two path parts with one '/'; caller frees. */
char *pf_path_join(const char *a, const char *b);

#endif
