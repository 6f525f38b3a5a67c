/* The run directory (DESIGN.md, "The run directory"; docs/search.md has the file formats):
 *
 *   RUN/config.json          the run's configuration (GA, evaluation, images), written once
 *   RUN/program.pf           a copy of the pipeline: workers and resumes read this one
 *   RUN/evaluations.jsonl    append-only, one evaluation record (search/eval.h) per line
 *   RUN/checkpoint.json      GA state after the last finished generation (atomic rewrite)
 *   RUN/log.txt              what the run did, timing serialization included
 *   RUN/run.lock             held (fcntl) by the one process running or resuming the run
 *   RUN/timing.lock          the workers' timing lock (flock)
 *   RUN/frontier-train.tsv, RUN/frontier-test.tsv, RUN/frontier/variant-NNN.sched,
 *   RUN/summary.json         the frontiers and their quality numbers
 *   RUN/report/              perfora report's page and plots (results/report.h), if made
 *
 * This file is the low level: paths, the run's lock, the append-only log of records and its
 * reader (which cuts a torn last line left by a kill, keeping the cut bytes beside it), JSON
 * files. */
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
#define PF_RUN_RUN_LOCK "run.lock"
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

/* The run's lock (rundir_lock.c): exclusive, for the life of a pf_tune; a second taker gets
 * "RUN is in use by pid N on host H since T". */
typedef struct pf_run_lock {
    int fd;
} pf_run_lock;
int pf_run_lock_take(pf_run_lock *l, const char *dir, pf_error *err);
void pf_run_lock_release(pf_run_lock *l);

/* The append-only evaluation log. */
typedef struct pf_run_log {
    int fd;
    long lines;   /* complete lines in the file */
    char *cut;    /* after opening: what was cut and where it was kept (for the log), or NULL */
} pf_run_log;

/* Opens (creating) DIR/evaluations.jsonl for appending. Every complete line is passed to fn
 * (in order; fn may be NULL). A torn last line (no newline: a write cut by a kill) is cut off
 * so that appends stay line-aligned; its bytes are kept in evaluations.jsonl.cut-OFFSET and
 * log->cut says so. A line that is not a record fails with its line number. */
typedef int (*pf_run_record_fn)(void *ctx, pf_eval_record *rec, pf_error *err);
int pf_run_log_open(pf_run_log *log, const char *dir, pf_run_record_fn fn, void *ctx,
                    pf_error *err);
/* Appends one record as one line with a single write (O_APPEND). */
int pf_run_log_append(pf_run_log *log, const pf_eval_record *rec, pf_error *err);
/* Flushes to disk (before a checkpoint refers to the line count). */
int pf_run_log_sync(pf_run_log *log, pf_error *err);
void pf_run_log_close(pf_run_log *log);

#endif
