/* The run directory (DESIGN.md, "The run directory"; docs/search.md has the file formats):
 *
 *   RUN/config.json          the run's configuration (GA, evaluation, images), written once
 *   RUN/program.pf           a copy of the pipeline: workers and resumes read this one
 *   RUN/evaluations.jsonl    append-only, one evaluation record (search/eval.h) per line
 *   RUN/checkpoint.json      GA state after the last finished generation (atomic rewrite)
 *   RUN/log.txt              what the run did, timing serialization included
 *   RUN/timing.lock          the workers' timing lock (flock)
 *   RUN/frontier-train.tsv, RUN/frontier-test.tsv, RUN/frontier/variant-NNN.sched,
 *   RUN/summary.json         the frontiers and their quality numbers
 *   RUN/report/              perfora report's page and plots (results/report.h), if made
 *
 * This file is the low level: paths, the append-only log of records and its reader (which
 * drops a torn last line left by a kill), JSON files. */
#ifndef PF_RESULTS_RUNDIR_H
#define PF_RESULTS_RUNDIR_H

#include "base/error.h"
#include "search/eval.h"

#include <stdio.h>

struct json_object;

#define PF_RUN_CONFIG "config.json"
#define PF_RUN_PROGRAM "program.pf"
#define PF_RUN_EVALUATIONS "evaluations.jsonl"
#define PF_RUN_CHECKPOINT "checkpoint.json"
#define PF_RUN_LOG "log.txt"
#define PF_RUN_LOCK "timing.lock"
#define PF_RUN_FRONTIER_TRAIN "frontier-train.tsv"
#define PF_RUN_FRONTIER_TEST "frontier-test.tsv"
#define PF_RUN_FRONTIER_DIR "frontier"
#define PF_RUN_SUMMARY "summary.json"

/* DIR/NAME, malloc'd. */
char *pf_run_path(const char *dir, const char *name);

/* Writes a JSON value atomically (pretty-printed). */
int pf_run_write_json(const char *path, struct json_object *o, pf_error *err);
/* Reads a JSON file; NULL with err set on failure. */
struct json_object *pf_run_read_json(const char *path, pf_error *err);

/* The append-only evaluation log. */
typedef struct pf_run_log {
    int fd;
    long lines;   /* complete lines in the file */
} pf_run_log;

/* Opens (creating) DIR/evaluations.jsonl for appending. Every complete line is passed to fn
 * (in order; fn may be NULL); a torn last line (no newline, or not JSON) is cut off so that
 * appends stay line-aligned. A bad line elsewhere fails. */
typedef int (*pf_run_record_fn)(void *ctx, pf_eval_record *rec, pf_error *err);
int pf_run_log_open(pf_run_log *log, const char *dir, pf_run_record_fn fn, void *ctx,
                    pf_error *err);
/* Appends one record as one line with a single write (O_APPEND). */
int pf_run_log_append(pf_run_log *log, const pf_eval_record *rec, pf_error *err);
/* Flushes to disk (before a checkpoint refers to the line count). */
int pf_run_log_sync(pf_run_log *log, pf_error *err);
void pf_run_log_close(pf_run_log *log);

#endif
