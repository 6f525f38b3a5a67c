/* Tab-separated text, line by line, with "NAME:LINE: message" errors: what the benchmark
 * manifest (manifest.c) and the photo source list (sources.c) are read with. */
#ifndef PF_DATASET_TSV_H
#define PF_DATASET_TSV_H

#include "base/error.h"

typedef struct pf_tsv {
    const char *name;  /* for messages */
    int line;          /* of the line last returned, 1-based */
    pf_error *err;
    char *buf, *next;  /* a copy of the text; where the next line starts */
} pf_tsv;

/* Starts reading a copy of text. */
void pf_tsv_begin(pf_tsv *t, const char *text, const char *name, pf_error *err);
/* The next line without its line end ("\n" or "\r\n"), modifiable; NULL after the last. */
char *pf_tsv_next(pf_tsv *t);
/* Splits line in place at tabs into at most max fields; returns the number of fields (those
 * beyond max are counted, not stored). */
int pf_tsv_split(char *line, char **fields, int max);
/* Sets the error "NAME:LINE: message" of the current line; returns -1. */
int pf_tsv_fail(pf_tsv *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pf_tsv_end(pf_tsv *t);

#endif
