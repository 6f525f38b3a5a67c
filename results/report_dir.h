/* The report's output directory, written whole or not at all (report_dir.c):
 *
 *   pf_report_dir_check(out)          before any work: out absent, empty, or an earlier report
 *   tmp = pf_report_dir_begin(out)    out.partial-PID, fresh
 *   ... write files under tmp ...
 *   pf_report_dir_commit(tmp, out)    manifest, then tmp takes out's place in one rename
 *   pf_report_dir_abort(tmp)          on failure: tmp removed, out untouched */
#ifndef PF_RESULTS_REPORT_DIR_H
#define PF_RESULTS_REPORT_DIR_H

#include "base/error.h"

/* Fails when out exists and holds anything its manifest (an earlier report's) does not list. */
int pf_report_dir_check(const char *out, pf_error *err);
/* A fresh sibling directory for the new report (malloc'd path), after removing those left by
 * reports that were killed; NULL with err. */
char *pf_report_dir_begin(const char *out, pf_error *err);
int pf_report_dir_commit(const char *tmp, const char *out, pf_error *err);
void pf_report_dir_abort(const char *tmp);

#endif
