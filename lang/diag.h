/* Diagnostics of the front end: `file:line:col: error: message`, the source line, and a caret.
 * A pf_diags collects up to PF_DIAG_MAX errors, so one run reports several mistakes and a
 * pathological input cannot produce unbounded output. */
#ifndef PF_LANG_DIAG_H
#define PF_LANG_DIAG_H

#include "base/strbuf.h"
#include "lang/ast.h"

#define PF_DIAG_MAX 50

typedef struct pf_diag {
    pf_loc loc;
    char *message;     /* without the "file:line:col: error: " prefix */
} pf_diag;

typedef struct pf_diags {
    const char *file_name;
    const char *source;  /* for the quoted line; may be NULL */
    int count;           /* errors recorded (<= PF_DIAG_MAX) */
    int dropped;         /* errors beyond PF_DIAG_MAX */
    pf_diag items[PF_DIAG_MAX];
} pf_diags;

void pf_diags_init(pf_diags *d, const char *file_name, const char *source);
void pf_diags_free(pf_diags *d);
void pf_diag_error(pf_diags *d, pf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Renders every diagnostic (with source line and caret) into out. */
void pf_diags_render(const pf_diags *d, pf_strbuf *out);

#endif
