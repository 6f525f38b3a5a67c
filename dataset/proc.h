/* The few process and file-tree operations the benchmark builder needs: run a helper program
 * with its output in files, remove a directory tree, copy a file. */
#ifndef PF_DATASET_PROC_H
#define PF_DATASET_PROC_H

#include "base/error.h"

#include <stddef.h>

/* Runs argv (argv[0] looked up in PATH) with stdin from /dev/null, stdout to out_path (or to
 * log_path when out_path is NULL) and stderr to log_path. Returns the exit status (0..255), or
 * -1 with err set when it could not be started or was killed by a signal. */
int pf_run_program(char *const argv[], const char *out_path, const char *log_path,
                   pf_error *err);

/* The last max_bytes of a text file (for error messages), trimmed; "" when unreadable.
 * Caller frees. */
char *pf_file_tail(const char *path, size_t max_bytes);

/* rm -rf: never follows symbolic links. Returns -1 with err set on the first failure. */
int pf_remove_tree(const char *path, pf_error *err);

/* Copies a regular file byte for byte (atomically, see base/fileio.h). */
int pf_copy_file(const char *from, const char *to, pf_error *err);

#endif
