/* The variant an export ships and where it comes from: a run directory's frontier variant
 * (its schedule, the run's params, the run's measurements on both splits, refused while a
 * search holds the run's lock), or a program and a schedule file (nothing measured). */
#define _GNU_SOURCE  /* F_OFD_GETLK */
#include "results/export_internal.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "results/report_internal.h"
#include "results/rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The run's lock file (issue 27: a search holds an exclusive fcntl lock on it for its whole
 * life). Absent in runs of perfora versions without it. */
#define RUN_LOCK_FILE "run.lock"

/* Fails when a search holds the run's lock: its frontier is still changing. Only looks: an
 * export never writes into a run directory. */
static int check_not_running(const char *run, pf_error *err)
{
    char *path = pf_path_join(run, RUN_LOCK_FILE);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return 0;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_RDLCK;
    fl.l_whence = SEEK_SET;
#ifdef F_OFD_GETLK
    int rc = fcntl(fd, F_OFD_GETLK, &fl);
#else
    int rc = fcntl(fd, F_GETLK, &fl);
#endif
    char holder[256] = "";
    ssize_t got = pread(fd, holder, sizeof holder - 1, 0);
    holder[got > 0 ? got : 0] = '\0';
    holder[strcspn(holder, "\n")] = '\0';
    close(fd);
    if (rc == 0 && fl.l_type != F_UNLCK)
        return pf_fail(err, "%s is still being written by a search (%s holds its lock): export "
                       "when it has finished, or stop it first", run,
                       holder[0] ? holder : "another process");
    return 0;
}

static void measure(const pf_eval_record *r, pf_export_measure *m)
{
    if (!r || !r->valid)
        return;
    m->have = true;
    m->images = r->n_images;
    m->speedup = r->time > 0 ? 1 / r->time : 0;
    m->time_lo = r->time_lo;
    m->time_hi = r->time_hi;
    m->error = r->error;
    m->psnr = r->psnr;
    m->ssim = r->ssim;
}

static int set_params(pf_export_source *s, const char *const *params, int n, pf_error *err)
{
    pf_params_init(&s->pv, s->prog);
    for (int i = 0; i < n; i++)
        if (pf_params_set(&s->pv, s->prog, params[i], err))
            return -1;
    return 0;
}

/* The frontier is sorted by error, so its time falls: the last variant within the cap. */
static int fastest(const pf_report_run *r, const char *run, pf_error *err)
{
    int k = -1;
    for (int i = 0; i < r->n_front; i++)
        if (r->recs[r->front[i]].error <= r->cfg.max_error)
            k = i;
    if (k < 0)
        pf_fail(err, "%s: no frontier variant has an error within the run's cap (%g)", run,
                r->cfg.max_error);
    return k;
}

static int from_run(const pf_export_options *o, pf_export_source *s, pf_error *err)
{
    if (check_not_running(o->run, err))
        return -1;
    pf_report_run r;
    if (pf_report_run_load(&r, o->run, err) != 0) {
        pf_report_run_free(&r);  /* what it read before it failed */
        return -1;
    }
    int rc = 0, k = o->variant;
    s->cuda = r.cfg.eval.backend == PF_BACKEND_CUDA;  /* its speedups are the GPU's */
    s->strict_float = r.cfg.eval.strict_float;       /* compiled as it was measured */
    s->no_gpu_rows = r.cfg.eval.no_gpu_rows;
    if (r.n_front == 0)
        rc = pf_fail(err, "%s has no frontier variant yet (no valid evaluation)", o->run);
    else if (k == PF_EXPORT_FASTEST && (k = fastest(&r, o->run, err)) < 0)
        rc = -1;
    else if (k < 0 || k >= r.n_front)
        rc = pf_fail(err, "%s: no variant %d: its frontier has variants 0 to %d (perfora report "
                     "lists them)", o->run, k, r.n_front - 1);
    if (rc == 0 && !(s->prog = pf_report_run_program(&r, err)))
        rc = -1;
    if (rc == 0)
        rc = set_params(s, (const char *const *)r.cfg.eval.params, r.cfg.eval.n_params, err);
    if (rc == 0) {
        const pf_eval_record *rec = &r.recs[r.front[k]];
        s->schedule = pf_xstrdup(rec->schedule);
        measure(rec, &s->train);
        measure(r.test[k] >= 0 ? &r.recs[r.test[k]] : NULL, &s->test);
        pf_strbuf sb;
        pf_sb_init(&sb);
        pf_sb_printf(&sb, "frontier variant %d of %d of the run %s (pipeline %s, perfora %s%s)",
                     k, r.n_front, o->run, r.pipeline ? r.pipeline : "?",
                     r.version ? r.version : "?", r.finished ? "" : "; the run is unfinished");
        s->origin = pf_sb_take(&sb);
        s->run_host = rec->host ? pf_xstrdup(rec->host) : NULL;
    }
    pf_report_run_free(&r);
    return rc;
}

static int from_program(const pf_export_options *o, pf_export_source *s, pf_error *err)
{
    if (!o->program)
        return pf_fail(err, "nothing to export: a run directory or a .pf program");
    if (!(s->prog = pf_load_program(o->program, err)))
        return -1;
    s->cuda = o->cuda;
    s->strict_float = o->strict_float;
    s->no_gpu_rows = o->no_gpu_rows;
    if (set_params(s, o->params, o->n_params, err))
        return -1;
    if (o->schedule) {
        size_t len;
        if (pf_read_file(o->schedule, (size_t)1 << 20, &s->schedule, &len, err))
            return pf_fail_prefix(err, "the schedule");
    } else {
        s->schedule = pf_xstrdup("# perfora schedule 1\n");
    }
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_printf(&sb, "%s with %s%s (not measured by a search)", o->program,
                 o->schedule ? "the schedule " : "the exact schedule",
                 o->schedule ? o->schedule : "");
    s->origin = pf_sb_take(&sb);
    return 0;
}

int pf_export_source_load(const pf_export_options *o, pf_export_source *s, pf_error *err)
{
    memset(s, 0, sizeof *s);
    int rc = o->run ? from_run(o, s, err) : from_program(o, s, err);
    if (rc == 0) {
        pf_strbuf g;
        pf_sb_init(&g);
        pf_report_genes_text(s->prog, s->schedule, &g);
        s->genes = pf_sb_take(&g);
        s->metric = pf_xstrdup("mean CIE76 Delta E in Lab on 8-bit outputs (Lab units)");
    }
    return rc;
}

void pf_export_source_free(pf_export_source *s)
{
    if (s->prog) {
        pf_params_free(&s->pv);
        pf_program_free(s->prog);
    }
    free(s->schedule);
    free(s->origin);
    free(s->genes);
    free(s->metric);
    free(s->run_host);
    memset(s, 0, sizeof *s);
}
