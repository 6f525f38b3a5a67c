/* `perfora report` as a library: one self-contained HTML page (inline SVG, PNGs beside it, no
 * script, no network) that reviews a search run directory (results/tune.h), with other runs
 * overlaid for comparison. docs/report.md says what each part shows.
 *
 *   pf_report_options o = { .run = "runs/blur", .images = true };
 *   pf_report_result res;
 *   pf_report_write(&o, &res, &err);   // runs/blur/report/index.html, pareto.svg, pareto.png
 *
 * The run is only read, so a run still in progress can be reported (its complete lines). The
 * report directory is built under a temporary name and renamed into place at the end: a
 * failure or a kill never leaves a half-written report that looks complete. */
#ifndef PF_RESULTS_REPORT_H
#define PF_RESULTS_REPORT_H

#include "base/error.h"

#include <stdbool.h>

#define PF_REPORT_DIR "report"        /* RUN/report */
#define PF_REPORT_INDEX "index.html"
#define PF_REPORT_MANIFEST ".perfora-report"  /* the files a report wrote, one per line */

typedef struct pf_report_options {
    const char *run;               /* the run directory */
    const char *const *compare;    /* runs overlaid on the plots (e.g. a --mode loop run) */
    int n_compare;
    const char *out;               /* the report directory (NULL: RUN/report) */
    bool no_images;                /* skip the variant images (no compiling) */
    /* Progress and warnings, one line each (NULL: none). */
    void (*note)(void *ctx, const char *line);
    void *ctx;
} pf_report_options;

typedef struct pf_report_result {
    char *dir;                     /* the report directory written (malloc'd) */
    char *index;                   /* its index.html (malloc'd) */
    int variants;                  /* frontier variants in the table */
    bool in_progress;              /* the run was not finished */
} pf_report_result;

/* Writes the report. Fails, leaving any earlier report in place, on a directory that is not a
 * perfora run (or one of another format), a bad evaluations.jsonl line, a missing test image,
 * or an output directory holding files that an earlier report did not write. */
int pf_report_write(const pf_report_options *o, pf_report_result *res, pf_error *err);
void pf_report_result_free(pf_report_result *res);

#endif
