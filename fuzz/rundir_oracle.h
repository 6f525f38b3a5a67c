/* The run directory reader's fuzzing oracle (issue 27), shared by the libFuzzer target
 * (fuzz_rundir.c) and the CUnit suite that replays fuzz/rundir/ (tests/search/
 * test_fuzz_rundir.c).
 *
 * An input is three files separated by lines "--8<-- NAME": config.json, checkpoint.json and
 * evaluations.jsonl of a run of apps/blur.pf (a missing section: no such file). They are
 * written into a run directory with the program and resumed:
 *   - refused: the message must name the file it refuses (or say the run holds no config);
 *   - accepted: the state must be consistent (generation within the run, the checkpoint's
 *     line count on record, a live generator state, `finished` only at the end), one
 *     generation must run with a fake evaluator (no compiling), and what that run wrote must
 *     resume again.
 * A violation aborts; crashes, hangs, leaks and undefined behaviour are the sanitizers'. */
#ifndef PF_FUZZ_RUNDIR_ORACLE_H
#define PF_FUZZ_RUNDIR_ORACLE_H

#include "base/fileio.h"
#include "dataset/proc.h"
#include "results/tune_internal.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RO_SEP "--8<-- "

static const char *const ro_files[] = { PF_RUN_CONFIG, PF_RUN_CHECKPOINT, PF_RUN_EVALUATIONS };

static void ro_fail(const char *what, const char *detail)
{
    fprintf(stderr, "run-directory oracle: %s\n%s\n", what, detail ? detail : "");
    abort();
}

/* ---- a fake evaluator: measurements from a hash of the schedule text ---- */

typedef struct ro_eval {
    pf_evaluator base;
    long ids[4096];
    int n_ids;
    pf_image_set sets[4096];
    char *texts[4096];
} ro_eval;

static int ro_submit(pf_evaluator *ev, long id, pf_image_set set, const char *text,
                     pf_error *err)
{
    ro_eval *e = (ro_eval *)ev;
    if (e->n_ids == 4096)
        return pf_fail(err, "fake evaluator: too many candidates");
    e->ids[e->n_ids] = id;
    e->sets[e->n_ids] = set;
    e->texts[e->n_ids++] = pf_xstrdup(text);
    return 0;
}

static int ro_wait(pf_evaluator *ev, pf_eval_record *out, pf_error *err)
{
    (void)err;
    ro_eval *e = (ro_eval *)ev;
    pf_record_init(out);
    if (e->n_ids == 0)
        return 0;
    int i = --e->n_ids;
    uint64_t h = pf_tune_hash(e->texts[i], strlen(e->texts[i]));
    out->id = e->ids[i];
    out->set = e->sets[i];
    out->schedule = e->texts[i];
    out->valid = h % 7 != 0;
    out->time = out->valid ? 0.2 + (double)(h % 1000) / 1250 : INFINITY;
    out->error = out->valid ? (double)(h >> 20 & 1023) / 100 : INFINITY;
    if (!out->valid)
        out->reason = pf_xstrdup("fake: invalid");
    out->n_images = 1;
    out->images = pf_xcalloc(1, sizeof *out->images);
    out->images[0].rel_time = out->time;
    out->images[0].error = out->error;
    return 1;
}

static const char *ro_describe(pf_evaluator *ev)
{
    (void)ev;
    return "fake evaluator (fuzzing)";
}

static void ro_destroy(pf_evaluator *ev)
{
    ro_eval *e = (ro_eval *)ev;
    for (int i = 0; i < e->n_ids; i++)
        free(e->texts[i]);
    free(e);
}

static pf_evaluator *ro_fake(void)
{
    static const pf_evaluator_ops ops = { .submit = ro_submit, .wait = ro_wait,
                                          .describe = ro_describe, .destroy = ro_destroy };
    ro_eval *e = pf_xcalloc(1, sizeof *e);
    e->base.ops = &ops;
    return &e->base;
}

/* ---- the run directory ---- */

static const char *ro_dir(void)
{
    static char dir[256];
    if (!dir[0]) {
        const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(dir, sizeof dir, "%s/pf-fuzz-rundir-XXXXXX", base);
        if (!mkdtemp(dir))
            ro_fail("mkdtemp", dir);
    }
    return dir;
}

/* Removes the directory (the replaying test; libFuzzer leaves it for the next run). */
static inline void ro_cleanup(void)
{
    pf_error err;
    pf_remove_tree(ro_dir(), &err);
}

static void ro_write(const char *name, const char *data, size_t n)
{
    char *path = pf_run_path(ro_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n))
        ro_fail("cannot write", path);
    fclose(f);
    free(path);
}

/* Clears the directory of everything but the lock file, then writes program.pf and the
 * input's sections. */
static void ro_setup(const uint8_t *data, size_t size)
{
    DIR *dp = opendir(ro_dir());
    struct dirent *de;
    while (dp && (de = readdir(dp)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            strcmp(de->d_name, PF_RUN_RUN_LOCK) == 0)
            continue;
        char *path = pf_run_path(ro_dir(), de->d_name);
        pf_error err;
        if (unlink(path) != 0 && pf_remove_tree(path, &err) != 0)
            ro_fail("cannot clear", path);
        free(path);
    }
    if (dp)
        closedir(dp);
    char *prog;
    size_t len;
    pf_error err;
    if (pf_read_file(PF_SOURCE_DIR "/apps/blur.pf", 1 << 20, &prog, &len, &err) != 0)
        ro_fail(err.msg, NULL);
    ro_write(PF_RUN_PROGRAM, prog, len);
    free(prog);
    /* sections: the text before the first separator is config.json */
    const char *p = (const char *)data, *end = p + size;
    const char *name = PF_RUN_CONFIG;
    while (name) {
        const char *sep = NULL;
        for (const char *q = p; q + strlen(RO_SEP) <= end; q++)
            if ((q == (const char *)data || q[-1] == '\n') && memcmp(q, RO_SEP, strlen(RO_SEP)) == 0) {
                sep = q;
                break;
            }
        ro_write(name, p, (size_t)((sep ? sep : end) - p));
        name = NULL;
        if (sep) {
            const char *nl = memchr(sep, '\n', (size_t)(end - sep));
            size_t n = (size_t)((nl ? nl : end) - sep) - strlen(RO_SEP);
            for (size_t i = 1; i < sizeof ro_files / sizeof *ro_files; i++)
                if (n == strlen(ro_files[i]) && memcmp(sep + strlen(RO_SEP), ro_files[i], n) == 0)
                    name = ro_files[i];
            p = nl ? nl + 1 : end;
        }
    }
}

static void ro_check_refusal(const char *msg)
{
    static const char *const names[] = { PF_RUN_CONFIG, PF_RUN_CHECKPOINT, PF_RUN_EVALUATIONS,
                                         PF_RUN_PROGRAM, "holds no run", "param '" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strstr(msg, names[i]))
            return;
    ro_fail("a refusal that names no file", msg);
}

static void ro_check_state(const pf_tune *t)
{
    char why[256] = "";
    if (t->ga.generation < -1 || t->ga.generation >= t->cfg.ga.generations)
        snprintf(why, sizeof why, "generation %d of %d", t->ga.generation,
                 t->cfg.ga.generations);
    else if (t->seen_lines > t->log.lines)
        snprintf(why, sizeof why, "checkpoint counts %ld lines, %ld on record", t->seen_lines,
                 t->log.lines);
    else if (t->ga.generation >= 0 && !(t->ga.rng.s[0] | t->ga.rng.s[1] | t->ga.rng.s[2] |
                                        t->ga.rng.s[3]))
        snprintf(why, sizeof why, "a zero generator state");
    else if (t->finished && t->ga.generation + 1 < t->cfg.ga.generations)
        snprintf(why, sizeof why, "finished at generation %d of %d", t->ga.generation,
                 t->cfg.ga.generations);
    if (why[0])
        ro_fail("resume accepted an inconsistent run", why);
}

static void ro_oracle_run(const uint8_t *data, size_t size)
{
    ro_setup(data, size);
    pf_error err;
    pf_tune *t = pf_tune_resume(ro_dir(), 0, &err);
    if (!t) {
        ro_check_refusal(err.msg);
        return;
    }
    ro_check_state(t);
    /* one generation, when it is small enough to be quick */
    bool small = t->cfg.ga.population <= 24 && t->n_recs < 2000;
    pf_evaluator *ev = ro_fake();
    pf_tune_hooks hooks = { .stop_after = 1 };
    int rc = small ? pf_tune_run(t, ev, &hooks, &err) : 0;
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
    if (rc != 0)
        return;  /* e.g. no room to write: nothing was promised */
    t = pf_tune_resume(ro_dir(), 0, &err);
    if (!t)
        ro_fail("a run that resumed and ran cannot resume again", err.msg);
    ro_check_state(t);
    pf_tune_free(t);
}

#endif
