/* The page's facts about the run (what was searched, on what, with which budget, how long,
 * what failed and why) and, with --compare, one line per compared run. */
#include "results/report_page.h"

#include "base/arena.h"
#include "search/fidelity.h"
#include "search/pareto.h"
#include "search/strmap.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fact(pf_strbuf *sb, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fact(pf_strbuf *sb, const char *name, const char *fmt, ...)
{
    pf_strbuf v;
    pf_sb_init(&v);
    va_list ap;
    va_start(ap, fmt);
    pf_sb_vprintf(&v, fmt, ap);
    va_end(ap);
    pf_sb_puts(sb, "<dt>");
    pf_xml_escape(sb, name);
    pf_sb_puts(sb, "</dt><dd>");
    pf_xml_escape(sb, pf_sb_str(&v));
    pf_sb_puts(sb, "</dd>\n");
    pf_sb_free(&v);
}

static void duration(double s, char *buf, size_t n)
{
    if (s < 60)
        snprintf(buf, n, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, n, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, n, "%d h %02d min", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static int count(const pf_report_run *r, pf_image_set set, int valid)
{
    int n = 0;
    for (int i = 0; i < r->n_recs; i++)
        n += r->recs[i].set == set && (valid < 0 || r->recs[i].valid == (valid != 0));
    return n;
}

/* Distinct workers, hosts and ranks seen in the records. */
static void who_measured(const pf_report_run *r, pf_strbuf *sb)
{
    pf_strmap seen;
    pf_strmap_init(&seen);
    int workers = 0, ranks = 0, hosts = 0;
    for (int i = 0; i < r->n_recs; i++) {
        char key[64];
        snprintf(key, sizeof key, "worker %d", r->recs[i].worker);
        workers += r->recs[i].worker >= 0 && pf_strmap_add(&seen, key, 0);
        snprintf(key, sizeof key, "rank %d", r->extra[i].rank);
        ranks += r->extra[i].rank >= 0 && pf_strmap_add(&seen, key, 0);
        if (r->extra[i].host) {
            pf_strbuf h;
            pf_sb_init(&h);
            pf_sb_printf(&h, "host %s", r->extra[i].host);
            hosts += pf_strmap_add(&seen, pf_sb_str(&h), 0);
            pf_sb_free(&h);
        }
    }
    pf_strmap_free(&seen);
    if (r->evaluator)
        fact(sb, "evaluator", "%s", r->evaluator);
    fact(sb, "measured by", "%d worker%s%s", workers, workers == 1 ? "" : "s",
         ranks || hosts ? "" : " (the records name no hosts or MPI ranks: one node)");
    if (hosts)
        fact(sb, "hosts", "%d", hosts);
    if (ranks)
        fact(sb, "MPI ranks", "%d", ranks);
}

static void budget(const pf_report_run *r, pf_strbuf *sb)
{
    const pf_ga_params *g = &r->cfg.ga;
    fact(sb, "search", "mode %s; population %d; generations %d (finished: %d); seed %llu; "
         "tournament %d; elite %g, mutants %g; hints %s; execution-gene rate %g",
         pf_search_mode_name(g->genome.mode), g->population, g->generations,
         r->checkpoint_generation + 1, (unsigned long long)g->seed, g->tournament,
         g->elite_frac, g->mutant_frac, g->genome.hints ? "on" : "off", g->genome.exec_rate);
    fact(sb, "budget", "at most %d candidates (population x generations); error cap %g Lab "
         "for the summary numbers", g->population * g->generations, r->cfg.max_error);
}

static void images(const pf_report_run *r, pf_strbuf *sb)
{
    const pf_eval_config *e = &r->cfg.eval;
    char res[32] = "every size";
    if (e->width)
        snprintf(res, sizeof res, "%dx%d", e->width, e->height);
    fact(sb, "dataset", "%s", e->dataset ? e->dataset : "?");
    fact(sb, "images", "%d training, %d test (resolution %s%s)", r->n_images[PF_SET_TRAIN],
         r->n_images[PF_SET_TEST], res, e->max_images ? ", at most --max-images per split" : "");
    fact(sb, "measuring", "backend %s; %d timing samples per image of at least %g ms; PSNR "
         "and SSIM %s", pf_backend_name(e->backend), e->samples, e->min_sample_ms,
         e->extra_metrics ? "on" : "off");
}

/* A multi-fidelity run: how many children the low fidelity measured and promoted, and how its
 * measurements relate to the full ones of the same candidates (search/fidelity.h). */
static void fidelity(const pf_report_run *r, pf_strbuf *sb)
{
    const pf_eval_config *e = &r->cfg.eval;
    if (e->low_width <= 0)
        return;
    pf_strmap low;
    pf_strmap_init(&low);
    for (int i = 0; i < r->n_recs; i++)
        if (r->recs[i].set == PF_SET_LOW && r->recs[i].valid)
            pf_strmap_put(&low, r->recs[i].schedule, i);
    double *v = pf_xmalloc(sizeof *v * 4 * (size_t)(r->n_recs + 1));
    double *lt = v, *le = lt + r->n_recs, *ft = le + r->n_recs, *fe = ft + r->n_recs;
    int n = 0, j;
    for (int i = 0; i < r->n_recs; i++) {
        const pf_eval_record *f = &r->recs[i];
        if (f->set != PF_SET_TRAIN || !f->valid || f->generation < 0 ||
            !pf_strmap_get(&low, f->schedule, &j))
            continue;
        lt[n] = r->recs[j].time;
        le[n] = r->recs[j].error;
        ft[n] = f->time;
        fe[n++] = f->error;
    }
    pf_fidelity_relation rel;
    pf_fidelity_relate(lt, le, ft, fe, n, &rel);
    fact(sb, "multi-fidelity", "%d children measured first at %dx%d, %d of them also at the "
         "run's resolution; over those, low against full: time rank correlation %.2f, error "
         "rank correlation %.2f; full / low: time x%.3g, error x%.3g", count(r, PF_SET_LOW, -1),
         e->low_width, e->low_height, rel.pairs, rel.time_rho, rel.error_rho, rel.time_ratio,
         rel.error_ratio);
    free(v);
    pf_strmap_free(&low);
}

static void evaluations(const pf_report_run *r, pf_strbuf *sb)
{
    fact(sb, "evaluations", "%d on the training images (%d invalid), %d test re-measurements "
         "(%d invalid)", count(r, PF_SET_TRAIN, -1), count(r, PF_SET_TRAIN, 0),
         count(r, PF_SET_TEST, -1), count(r, PF_SET_TEST, 0));
    char wall[64];
    duration(r->wall_s, wall, sizeof wall);
    if (r->sessions)
        fact(sb, "wall time", "%s in %d session%s (%s); from %s to %s", wall, r->sessions,
             r->sessions == 1 ? "" : "s", r->sessions == 1 ? "never resumed"
                                                           : "resumed with --resume",
             r->started, r->last_line);
    else
        fact(sb, "wall time", "unknown (no log.txt)");
}

static void invalid_table(const pf_report_run *r, pf_strbuf *sb)
{
    pf_report_reason *k;
    int n = pf_report_invalid_kinds(r, &k);
    pf_sb_puts(sb, "<h3>Invalid candidates by reason</h3>\n");
    if (n == 0)
        pf_sb_puts(sb, "<p>None.</p>\n");
    else
        pf_sb_puts(sb, "<table><tr><th>reason</th><th>candidates</th><th>the first one's "
                   "message</th></tr>\n");
    for (int i = 0; i < n; i++) {
        pf_sb_puts(sb, "<tr><td>");
        pf_xml_escape(sb, k[i].kind);
        pf_sb_printf(sb, "</td><td class=\"num\">%d</td><td><small>", k[i].count);
        pf_xml_escape(sb, k[i].example);
        pf_sb_puts(sb, "</small></td></tr>\n");
    }
    if (n)
        pf_sb_puts(sb, "</table>\n");
    pf_report_reasons_free(k, n);
}

static void run_facts(const pf_report_run *r, pf_strbuf *sb)
{
    pf_sb_puts(sb, "<dl class=\"facts\">\n");
    fact(sb, "run directory", "%s", r->dir);
    fact(sb, "program", "%s (pipeline %s; the run's copy: program.pf)", r->cfg.source,
         r->pipeline);
    if (r->cfg.eval.n_params)
        for (int i = 0; i < r->cfg.eval.n_params; i++)
            fact(sb, "param", "%s", r->cfg.eval.params[i]);
    budget(r, sb);
    images(r, sb);
    evaluations(r, sb);
    fidelity(r, sb);
    who_measured(r, sb);
    fact(sb, "status", "%s", r->finished ? "finished"
                             : r->has_checkpoint ? "not finished (a checkpoint exists)"
                             : "not finished (no generation checkpointed yet)");
    if (strcmp(r->version, PF_VERSION) != 0)
        fact(sb, "written by", "perfora %s (this report: perfora %s)", r->version, PF_VERSION);
    pf_sb_puts(sb, "</dl>\n");
    invalid_table(r, sb);
}

static void compare_row(const pf_report_run *r, pf_strbuf *sb)
{
    double *tm = pf_xmalloc(sizeof *tm * 2 * (size_t)(r->n_front + 1)), *er = tm + r->n_front;
    int m = 0;
    for (int k = 0; k < r->n_front; k++)
        if (r->test[k] >= 0 && r->recs[r->test[k]].valid) {
            tm[m] = r->recs[r->test[k]].time;
            er[m++] = r->recs[r->test[k]].error;
        }
    char *t = pf_report_run_title(r);
    pf_sb_puts(sb, "<tr><td>");
    pf_xml_escape(sb, t);
    pf_sb_puts(sb, "</td><td>");
    pf_xml_escape(sb, r->dir);
    pf_sb_printf(sb, "</td><td class=\"num\">%d</td><td class=\"num\">%d</td>",
                 count(r, PF_SET_TRAIN, -1), r->n_front);
    if (m)
        pf_sb_printf(sb, "<td class=\"num\">%.2f\xC3\x97</td><td class=\"num\">%.4f</td>",
                     1 / pf_frontier_best_time(tm, er, m, r->cfg.max_error),
                     pf_frontier_area(tm, er, m, r->cfg.max_error));
    else
        pf_sb_puts(sb, "<td>-</td><td>-</td>");
    pf_sb_printf(sb, "<td>%s</td></tr>\n", r->finished ? "finished" : "not finished");
    free(t);
    free(tm);
}

void pf_report_facts_section(pf_report_run *const *runs, int n, pf_strbuf *sb)
{
    pf_sb_puts(sb, "<section id=\"facts\"><h2>The run</h2>\n");
    run_facts(runs[0], sb);
    if (n > 1) {
        pf_sb_puts(sb, "<h3>Compared runs</h3>\n<table><tr><th>run</th><th>directory</th>"
                   "<th>evaluations</th><th>frontier</th><th>best test speedup within the "
                   "cap</th><th>test area</th><th>status</th></tr>\n");
        for (int i = 0; i < n; i++)
            compare_row(runs[i], sb);
        pf_sb_puts(sb, "</table>\n");
    }
    pf_sb_puts(sb, "</section>\n");
}
