/* Reading tab-separated text (tsv.h). */
#include "dataset/tsv.h"

#include "base/arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pf_tsv_begin(pf_tsv *t, const char *text, const char *name, pf_error *err)
{
    t->name = name;
    t->line = 0;
    t->err = err;
    t->buf = t->next = pf_xstrdup(text);
}

char *pf_tsv_next(pf_tsv *t)
{
    char *line = t->next;
    if (!line)
        return NULL;
    char *nl = strchr(line, '\n');
    if (nl)
        *nl++ = '\0';
    t->next = nl;
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r')
        line[len - 1] = '\0';
    t->line++;
    return line;
}

int pf_tsv_split(char *line, char **fields, int max)
{
    int n = 0;
    for (char *s = line;; s++) {
        if (n < max)
            fields[n] = s;
        n++;
        s = strchr(s, '\t');
        if (!s)
            return n;
        *s = '\0';
    }
}

int pf_tsv_fail(pf_tsv *t, const char *fmt, ...)
{
    char msg[PF_ERROR_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pf_fail(t->err, "%s:%d: %s", t->name, t->line, msg);
}

void pf_tsv_end(pf_tsv *t)
{
    free(t->buf);
    t->buf = t->next = NULL;
}
