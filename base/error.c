/* Error reporting helpers shared by every module. */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pf_fail(pf_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int pf_fail_prefix(pf_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char old[PF_ERROR_MAX];
    memcpy(old, err->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + 2 >= sizeof err->msg)
        return -1;
    /* Append ": old" after the prefix, truncating the old text if it does not fit. */
    size_t k = (size_t)n;
    err->msg[k++] = ':';
    err->msg[k++] = ' ';
    size_t room = sizeof err->msg - k - 1, len = strlen(old);
    if (len > room)
        len = room;
    memcpy(err->msg + k, old, len);
    err->msg[k + len] = '\0';
    return -1;
}

void pf_error_clear(pf_error *err)
{
    if (err)
        err->msg[0] = '\0';
}

void pf_die_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "perfora: internal error at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}
