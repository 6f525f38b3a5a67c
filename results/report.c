/* `perfora report` on one screen: read the runs, check the output directory, build the report
 * in a temporary directory (pictures, standalone plots, the page), rename it into place. */
#include "results/report.h"
#include "results/report_dir.h"
#include "results/report_page.h"

#include "base/arena.h"
#include "base/fileio.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PF_REPORT_MAX_RUNS 12  /* distinct styles stay distinguishable up to about this */

void pf_report_note(const pf_report_options *o, const char *fmt, ...)
{
    if (!o->note)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->note(o->ctx, buf);
}

static int load_runs(const pf_report_options *o, pf_report_run **runs, int n, pf_error *err)
{
    for (int i = 0; i < n; i++) {
        runs[i] = pf_xcalloc(1, sizeof **runs);
        const char *dir = i == 0 ? o->run : o->compare[i - 1];
        if (pf_report_run_load(runs[i], dir, err) != 0)
            return -1;
        if (!runs[i]->finished)
            pf_report_note(o, "report: %s is not finished (running, or stopped before the end): "
                 "reporting its %d complete records", dir, runs[i]->n_recs);
    }
    return 0;
}

static int write_text(const char *dir, const char *name, const pf_strbuf *sb, pf_error *err)
{
    char *path = pf_path_join(dir, name);
    int rc = pf_write_file_atomic(path, sb->data ? sb->data : "", sb->len, err);
    free(path);
    return rc;
}

/* pareto.svg (with an XML declaration: a file of its own) and pareto.png. */
static int standalone_plots(pf_report_run *const *runs, int n, const char *dir, pf_error *err)
{
    pf_canvas *c = pf_report_pareto(runs, n);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_puts(&sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    pf_canvas_svg(c, &sb);
    char *png = pf_path_join(dir, "pareto.png");
    int rc = write_text(dir, "pareto.svg", &sb, err);
    if (rc == 0)
        rc = pf_canvas_png(c, 2.0, png, err);
    free(png);
    pf_sb_free(&sb);
    pf_canvas_free(c);
    return rc;
}

/* Everything the report holds, written into tmp. */
static int build(pf_report_run *const *runs, int n, const pf_report_options *o,
                 const char *tmp, pf_error *err)
{
    pf_program *prog = pf_report_run_program(runs[0], err);
    if (!prog)
        return -1;
    pf_report_images imgs;
    memset(&imgs, 0, sizeof imgs);
    int rc = 0;
    if (o->no_images)
        imgs.skipped = pf_xstrdup("Pictures were not made (perfora report --no-images).");
    else if (runs[0]->n_front == 0)
        imgs.skipped = pf_xstrdup("No frontier variant yet, so no pictures.");
    else
        rc = pf_report_images_make(runs[0], prog, tmp, o, &imgs, err);
    if (rc == 0)
        rc = standalone_plots(runs, n, tmp, err);
    if (rc == 0) {
        pf_strbuf page;
        pf_sb_init(&page);
        pf_report_page(runs, n, prog, &imgs, &page);
        rc = write_text(tmp, PF_REPORT_INDEX, &page, err);
        pf_sb_free(&page);
    }
    pf_report_images_free(&imgs);
    pf_program_free(prog);
    return rc;
}

int pf_report_write(const pf_report_options *o, pf_report_result *res, pf_error *err)
{
    memset(res, 0, sizeof *res);
    if (o->n_compare + 1 > PF_REPORT_MAX_RUNS)
        return pf_fail(err, "at most %d runs can be compared in one report",
                       PF_REPORT_MAX_RUNS - 1);
    int n = o->n_compare + 1;
    pf_report_run **runs = pf_xcalloc((size_t)n, sizeof *runs);
    char *out = o->out ? pf_xstrdup(o->out) : pf_path_join(o->run, PF_REPORT_DIR), *tmp = NULL;
    int rc = load_runs(o, runs, n, err);
    if (rc == 0)
        rc = pf_report_dir_check(out, err);
    if (rc == 0 && !(tmp = pf_report_dir_begin(out, err)))
        rc = -1;
    if (rc == 0)
        rc = build(runs, n, o, tmp, err);
    if (rc == 0)
        rc = pf_report_dir_commit(tmp, out, err);
    if (rc != 0)
        pf_report_dir_abort(tmp);
    if (rc == 0) {
        res->dir = pf_xstrdup(out);
        res->index = pf_path_join(out, PF_REPORT_INDEX);
        res->variants = runs[0]->n_front;
        res->in_progress = !runs[0]->finished;
    }
    for (int i = 0; i < n; i++) {
        pf_report_run_free(runs[i]);
        free(runs[i]);
    }
    free(runs);
    free(tmp);
    free(out);
    return rc;
}

void pf_report_result_free(pf_report_result *res)
{
    free(res->dir);
    free(res->index);
    memset(res, 0, sizeof *res);
}
