/* The report page: XHTML-compatible HTML5 (every element closed, so an XML parser reads it
 * whole), inline SVG, a print style sheet, no script. This file holds the skeleton and the
 * sections around the plots; report_table.c the variants and their pictures, report_facts.c
 * the run's facts. */
#include "results/report_page.h"

#include "base/arena.h"
#include "search/pareto.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void pf_html_printf(pf_strbuf *sb, const char *fmt, ...)
{
    pf_strbuf tmp;
    pf_sb_init(&tmp);
    va_list ap;
    va_start(ap, fmt);
    pf_sb_vprintf(&tmp, fmt, ap);
    va_end(ap);
    pf_xml_escape(sb, pf_sb_str(&tmp));
    pf_sb_free(&tmp);
}

void pf_html_svg(pf_strbuf *sb, pf_canvas *c)
{
    if (!c)
        return;
    pf_canvas_svg(c, sb);
    pf_canvas_free(c);
}

static const char css[] =
    "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:24px auto;"
    "max-width:1120px;padding:0 16px;color:#111;line-height:1.4}\n"
    "h1{font-size:1.5em;margin:0 0 6px}h2{font-size:1.2em;border-bottom:1px solid #bbb;"
    "padding-bottom:2px;margin-top:34px}h3{font-size:1em;margin:18px 0 6px}\n"
    ".status{padding:6px 10px;border-left:5px solid #0072B2;background:#eef5fb}\n"
    ".status.progress{border-color:#D55E00;background:#fdf0e8}\n"
    "nav a{margin-right:14px}\n"
    "table{border-collapse:collapse;font-size:0.88em;margin:6px 0}\n"
    "th,td{border:1px solid #b5b5b5;padding:3px 6px;vertical-align:top;text-align:left}\n"
    "th{background:#f0f0f0}td.num{text-align:right;white-space:nowrap;"
    "font-variant-numeric:tabular-nums}\n"
    "table.variants{width:100%}td.genes{min-width:24em;width:45%}td.name{white-space:nowrap}\n"
    "td.spread{white-space:normal;min-width:9em}\n"
    "ul.genes{margin:0;padding-left:1.1em}ul.genes li{margin:0}\n"
    "details pre{font-size:0.85em;margin:2px 0;white-space:pre-wrap}\n"
    "summary{cursor:pointer;color:#0b5394}\n"
    ".shots{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:10px;"
    "margin-bottom:16px}\n"
    ".shots figure{margin:0}.shots img{width:100%;height:auto;border:1px solid #999}\n"
    ".shots img.map{image-rendering:pixelated}\n"
    "figcaption{font-size:0.85em;color:#222}\n"
    "svg{max-width:100%;height:auto}#pareto svg{width:100%;max-width:980px}\n"
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 18px}\n"
    "dl.facts dt{font-weight:bold}dl.facts dd{margin:0}\n"
    ".caption{font-size:0.9em;color:#333;max-width:800px}\n"
    ".bad{color:#a33}\n"
    "@media print{body{max-width:none;margin:0}a{color:inherit;text-decoration:none}"
    "nav{display:none}h2,h3{break-after:avoid}figure,tr,svg,.shots{break-inside:avoid}"
    ".status{background:none}}\n";

/* ---- status and summary ---- */

static void status(const pf_report_run *r, pf_strbuf *sb)
{
    if (r->finished) {
        pf_sb_puts(sb, "<p class=\"status\">");
        pf_html_printf(sb, "Finished run: %d evaluation records, %d generations, the frontier "
                       "re-measured on the %s images.", r->n_recs, r->last_generation + 1,
                       r->cfg.test ? "test" : "training (no test split: --no-test)");
        pf_sb_puts(sb, "</p>\n");
        return;
    }
    pf_sb_puts(sb, "<p class=\"status progress\"><strong>Not finished</strong>: ");
    pf_html_printf(sb, "the run is still going, or it stopped (perfora tune --resume %s "
                   "continues it). This report shows its %d complete evaluation records, "
                   "from generations 0 to %d (the search has %d: 0 to %d); the frontier is "
                   "re-measured on the test images only at the end, so test numbers are "
                   "missing or partial.", r->dir, r->n_recs, r->last_generation,
                   r->cfg.ga.generations, r->cfg.ga.generations - 1);
    if (r->torn_bytes)
        pf_html_printf(sb, " A line being written (%ld bytes) was left out.", r->torn_bytes);
    pf_sb_puts(sb, "</p>\n");
}

/* Best time within an error budget and the area, over the valid records idx[0 .. n-1]. */
static void quality(const pf_report_run *r, const int *idx, int n, double cap, double *best,
                    double *area, double *err_at_best)
{
    double *tm = pf_xmalloc(sizeof *tm * 2 * (size_t)(n + 1)), *er = tm + n;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (idx[i] >= 0 && r->recs[idx[i]].valid) {
            tm[m] = r->recs[idx[i]].time;
            er[m++] = r->recs[idx[i]].error;
        }
    *best = pf_frontier_best_time(tm, er, m, cap);
    *area = pf_frontier_area(tm, er, m, r->cfg.max_error);
    *err_at_best = 0;
    for (int i = 0; i < m; i++)
        if (tm[i] == *best && er[i] <= cap)
            *err_at_best = er[i];
    free(tm);
}

static void summary_row(const pf_report_run *r, const int *idx, const char *split,
                        pf_strbuf *sb)
{
    pf_sb_printf(sb, "<tr><th>%s</th>", split);
    for (double e = 1; e <= r->cfg.max_error * 1.0001; e *= 2) {
        double best, area, at;
        quality(r, idx, r->n_front, e, &best, &area, &at);
        pf_sb_printf(sb, "<td class=\"num\">%.2f\xC3\x97</td>", 1 / best);
    }
    double best, area, at;
    quality(r, idx, r->n_front, r->cfg.max_error, &best, &area, &at);
    pf_sb_printf(sb, "<td class=\"num\">%.2f\xC3\x97 (error %.3g)</td><td class=\"num\">%.4f"
                 "</td></tr>\n", 1 / best, at, area);
}

static void summary(const pf_report_run *r, pf_strbuf *sb)
{
    pf_sb_puts(sb, "<section id=\"summary\"><h2>In short</h2>\n<p>");
    pf_html_printf(sb, "The training frontier has %d variant%s. Speedup over the exact program "
                   "within an error budget (mean CIE76 \xCE\x94" "E in Lab), and the frontier's "
                   "area (the mean relative time over budgets 0 to %g; lower is better):",
                   r->n_front, r->n_front == 1 ? "" : "s", r->cfg.max_error);
    pf_sb_puts(sb, "</p>\n<table><tr><th>images</th>");
    for (double e = 1; e <= r->cfg.max_error * 1.0001; e *= 2)
        pf_sb_printf(sb, "<th>error \xE2\x89\xA4 %g</th>", e);
    pf_sb_printf(sb, "<th>best within %g</th><th>area</th></tr>\n", r->cfg.max_error);
    summary_row(r, r->front, "training", sb);
    bool any_test = false;
    for (int k = 0; k < r->n_front; k++)
        any_test |= r->test[k] >= 0;
    if (any_test)
        summary_row(r, r->test, "test", sb);
    pf_sb_puts(sb, "</table>\n");
    if (!any_test)
        pf_sb_puts(sb, "<p class=\"caption\">No test re-measurement yet.</p>\n");
    pf_sb_puts(sb, "</section>\n");
}

/* ---- plots ---- */

static void pareto_section(pf_report_run *const *runs, int n, pf_strbuf *sb)
{
    pf_sb_puts(sb, "<section id=\"pareto\"><h2>Pareto frontier</h2>\n<figure>\n");
    pf_html_svg(sb, pf_report_pareto(runs, n));
    pf_sb_puts(sb, "<figcaption class=\"caption\">Lower and further right is better: each "
               "point is one variant, its error (the paper's mean per-pixel CIE76 \xCE\x94"
               "E in Lab, on 8-bit outputs, averaged over the images) against its speedup over "
               "the exact program with the default execution schedule (log scale). The solid "
               "line joins "
               "the training frontier's variants (numbered as in the table) in order of "
               "training error; the dashed line joins the same variants re-measured on the "
               "held-out test images, which need not be monotone. Grey dots are every "
               "candidate the search measured on the training images. Hover over a marker for "
               "its numbers. Standalone: <a href=\"pareto.svg\">pareto.svg</a>, "
               "<a href=\"pareto.png\">pareto.png</a>.</figcaption>\n</figure>\n</section>\n");
}

static void generations_table(const pf_report_run *r, pf_strbuf *sb)
{
    if (!r->n_gens)
        return;
    pf_sb_puts(sb, "<table><tr><th>generation</th><th>genomes</th><th>measured</th>"
               "<th>invalid</th><th>seconds</th><th>evaluations/s</th><th>area after it</th>"
               "</tr>\n");
    for (int i = 0; i < r->n_gens; i++) {
        const pf_report_gen *g = &r->gens[i];
        pf_sb_printf(sb, "<tr><td class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num"
                     "\">%d</td><td class=\"num\">%d</td><td class=\"num\">%.1f</td><td class="
                     "\"num\">%.2f</td><td class=\"num\">%.4f</td></tr>\n", g->generation,
                     g->genomes, g->measured, g->invalid, g->seconds,
                     g->seconds > 0 ? g->measured / g->seconds : 0,
                     pf_report_area(r, g->generation));
    }
    pf_sb_puts(sb, "</table>\n");
}

static void search_section(pf_report_run *const *runs, int n, pf_strbuf *sb)
{
    pf_sb_puts(sb, "<section id=\"search\"><h2>How the search went</h2>\n<figure>\n");
    pf_html_svg(sb, pf_report_area_plot(runs, n));
    pf_sb_puts(sb, "<figcaption class=\"caption\">The area is the mean relative time "
               "(candidate time / exact time) of the best training variant within each error "
               "budget from 0 to the run's cap: 1 is no speedup at any budget, 0.25 is 4\xC3\x97 "
               "on average. It can only fall as generations add variants.</figcaption>\n"
               "</figure>\n");
    pf_canvas *rate = pf_report_rate_plot(runs[0]);
    if (rate) {
        pf_sb_puts(sb, "<figure>\n");
        pf_html_svg(sb, rate);
        pf_sb_puts(sb, "<figcaption class=\"caption\">Candidates measured per second of each "
                   "generation's wall time (cache hits and elites are not measured again). "
                   "</figcaption>\n</figure>\n");
    } else {
        pf_sb_puts(sb, "<p class=\"caption\">No generation has finished yet (log.txt), so "
                   "there are no rates.</p>\n");
    }
    generations_table(runs[0], sb);
    pf_sb_puts(sb, "<figure>\n");
    pf_html_svg(sb, pf_report_phase_plot(runs, n));
    pf_sb_puts(sb, "<figcaption class=\"caption\">Per evaluation, as the worker measured it: "
               "compiling the candidate, its untimed runs that produce the outputs, the "
               "interleaved timed runs against the exact program, the error metrics, and "
               "waiting for the node's timing lock (one worker times at a time).</figcaption>\n"
               "</figure>\n</section>\n");
}

/* ---- the page ---- */

static void head(const pf_report_run *r, pf_strbuf *sb)
{
    pf_sb_puts(sb, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n"
               "<head>\n<meta charset=\"utf-8\"/>\n<title>");
    pf_html_printf(sb, "perfora report: %s", r->label);
    pf_sb_printf(sb, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>", css);
    pf_html_printf(sb, "perfora report: %s (%s, pipeline %s), mode %s", r->label,
                   r->cfg.source, r->pipeline, pf_search_mode_name(r->cfg.ga.genome.mode));
    pf_sb_puts(sb, "</h1>\n");
    status(r, sb);
    pf_sb_puts(sb, "<nav><a href=\"#summary\">In short</a><a href=\"#pareto\">Pareto frontier"
               "</a><a href=\"#variants\">Variants</a><a href=\"#pictures\">Pictures</a>"
               "<a href=\"#search\">Search</a><a href=\"#facts\">The run</a></nav>\n"
               "</header>\n");
}

static void foot(const pf_report_run *r, pf_strbuf *sb)
{
    char when[64];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
    pf_sb_puts(sb, "<footer><p class=\"caption\">");
    pf_html_printf(sb, "Written by perfora %s on %s from %s (perfora report; docs/report.md "
                   "explains each part).", PF_VERSION, when, r->dir);
    pf_sb_puts(sb, "</p></footer>\n</body>\n</html>\n");
}

void pf_report_page(pf_report_run *const *runs, int n, const pf_program *prog,
                    const pf_report_images *imgs, pf_strbuf *out)
{
    head(runs[0], out);
    summary(runs[0], out);
    pareto_section(runs, n, out);
    pf_report_variants_section(runs[0], prog, imgs, out);
    pf_report_pictures_section(runs[0], imgs, out);
    search_section(runs, n, out);
    pf_report_facts_section(runs, n, out);
    foot(runs[0], out);
}
