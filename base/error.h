/* The error channel for a user's mistake: library functions fill a pf_error and return -1;
 * only cli/ prints it. Internal invariants use pf_die (the second channel: a perfora bug). */
#ifndef PF_BASE_ERROR_H
#define PF_BASE_ERROR_H

#include <stddef.h>

#define PF_ERROR_MAX 2048

typedef struct pf_error {
    char msg[PF_ERROR_MAX]; /* one or more lines, no trailing newline */
} pf_error;

/* Sets err (when not NULL) from a printf format and returns -1, so callers can
 * `return pf_fail(err, "...")`. */
int pf_fail(pf_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prepends "context: " to an existing message (e.g. a file name) and returns -1. */
int pf_fail_prefix(pf_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void pf_error_clear(pf_error *err);

/* A perfora bug, not a user error: prints the internal location and aborts. */
#define pf_die(...) pf_die_at(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void pf_die_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define PF_ASSERT(cond) ((cond) ? (void)0 : pf_die("assertion failed: %s", #cond))

#endif
