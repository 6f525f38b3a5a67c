/* How the search went, as three small charts: the training frontier's area after each
 * generation (every run; lower is better), evaluations per second per generation (from
 * log.txt, the only place with a clock), and where the workers' time went per evaluation
 * (compile, outputs, timing, error metrics, waiting for the timing lock: from the records). */
#include "results/report_internal.h"
#include "results/report_plot.h"

#include "base/arena.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define WIDTH 780.0
#define LEFT 80.0
#define RIGHT 24.0
#define TOP 34.0
#define PLOT_H 220.0
#define BELOW 56.0

static pf_canvas *chart(const char *title, double legend_h, pf_plot *p)
{
    pf_canvas *c = pf_canvas_new(WIDTH, TOP + PLOT_H + BELOW + legend_h + 8, title);
    pf_canvas_text(c, LEFT, 22, title, 14, PF_ANCHOR_START, 0, 0x000000)->bold = true;
    *p = (pf_plot){ .c = c, .x0 = LEFT, .y0 = TOP, .x1 = WIDTH - RIGHT, .y1 = TOP + PLOT_H };
    return c;
}

/* ---- area per generation ---- */

static int generations_of(const pf_report_run *r)
{
    return r->last_generation + 1;
}

pf_canvas *pf_report_area_plot(pf_report_run *const *runs, int n)
{
    int gmax = 0;
    for (int i = 0; i < n; i++)
        gmax = generations_of(runs[i]) > gmax ? generations_of(runs[i]) : gmax;
    if (gmax == 0)
        return NULL;
    pf_legend_entry e[32];
    int ne = 0;
    for (int i = 0; i < n && ne < 32; i++) {
        uint32_t col = pf_series_colour(i);
        e[ne++] = (pf_legend_entry){ pf_report_run_title(runs[i]),
                                     { col, PF_NONE, 2, 1, i % 2 ? PF_DASH_LONG : PF_DASH_SOLID },
                                     true, pf_series_mark(i), 3.5,
                                     { col, 0xFFFFFF, 1.5, 1, PF_DASH_SOLID } };
    }
    double lw = WIDTH - LEFT - RIGHT, lh = pf_legend_height(e, ne, lw);
    pf_plot p;
    pf_canvas *c = chart("Frontier area after each generation (training images; lower is "
                         "better)", lh, &p);
    p.x = (pf_axis){ .lo = -0.3, .hi = gmax - 0.7, .integer = true };
    pf_axis_fit(&p.y, 0, 1, false);
    pf_plot_frame(&p, "generation", "frontier area");
    for (int i = n - 1; i >= 0; i--) {
        int g = generations_of(runs[i]);
        double *x = pf_xmalloc(sizeof(double) * 2 * (size_t)(g + 1)), *y = x + g;
        for (int k = 0; k < g; k++) {
            x[k] = k;
            y[k] = pf_report_area(runs[i], k);
        }
        pf_plot_line(&p, x, y, g, &e[i].line);
        for (int k = 0; k < g; k++) {
            char tip[128];
            snprintf(tip, sizeof tip, "%s, generation %d: area %.4f", runs[i]->label, k, y[k]);
            pf_canvas_marker(c, pf_axis_pos(&p.x, x[k]), pf_axis_pos(&p.y, y[k]), e[i].mark,
                             3.5, &e[i].mark_paint, tip);
        }
        free(x);
    }
    pf_legend_draw(c, LEFT, TOP + PLOT_H + BELOW, lw, e, ne);
    for (int i = 0; i < ne; i++)
        free(e[i].label);
    return c;
}

/* ---- evaluations per second ---- */

pf_canvas *pf_report_rate_plot(const pf_report_run *r)
{
    if (r->n_gens == 0)
        return NULL;
    pf_plot p;
    pf_canvas *c = chart("Evaluations per second in each generation (log.txt)", 0, &p);
    double hi = 0, gmax = 0;
    for (int i = 0; i < r->n_gens; i++) {
        const pf_report_gen *g = &r->gens[i];
        if (g->seconds > 0)
            hi = fmax(hi, g->measured / g->seconds);
        gmax = fmax(gmax, g->generation);
    }
    p.x = (pf_axis){ .lo = -0.6, .hi = gmax + 0.6, .integer = true };
    pf_axis_fit(&p.y, 0, hi > 0 ? hi * 1.1 : 1, false);
    pf_plot_frame(&p, "generation", "evaluations per second");
    double bw = fmin(30, 0.7 * (p.x1 - p.x0) / (gmax + 1));
    pf_paint bar = { 0x0072B2, 0x0072B2, 1, 0.85, PF_DASH_SOLID };
    for (int i = 0; i < r->n_gens; i++) {
        const pf_report_gen *g = &r->gens[i];
        double rate = g->seconds > 0 ? g->measured / g->seconds : 0;
        double x = pf_axis_pos(&p.x, g->generation), y = pf_axis_pos(&p.y, rate);
        pf_prim *q = pf_canvas_rect(c, x - bw / 2, y, bw, p.y1 - y, &bar);
        char tip[160];
        snprintf(tip, sizeof tip, "generation %d: %d measured in %.1f s (%.2f/s), %d from the "
                 "cache or elites, %d invalid", g->generation, g->measured, g->seconds, rate,
                 g->genomes - g->measured, g->invalid);
        q->title = pf_xstrdup(tip);
    }
    return c;
}

/* ---- time per phase ---- */

enum { PH_COMPILE, PH_RUN, PH_TIMING, PH_ERROR, PH_LOCK, PH_OTHER, PH_COUNT };
static const char *const phase_names[PH_COUNT] = {
    "compile", "run (outputs)", "timing", "error metrics", "timing-lock wait", "other",
};

/* Mean milliseconds per evaluation of each phase over a run's records. */
static int phase_means(const pf_report_run *r, double *ms)
{
    int n = 0;
    for (int k = 0; k < PH_COUNT; k++)
        ms[k] = 0;
    for (int i = 0; i < r->n_recs; i++) {
        const pf_eval_record *q = &r->recs[i];
        if (q->wall_ms <= 0)
            continue;  /* a record without costs (a crash seen by the pool) */
        double part[PH_COUNT - 1] = { q->compile_ms, q->run_ms, q->timing_ms, q->error_ms,
                                      q->lock_wait_ms };
        double sum = 0;
        for (int k = 0; k < PH_COUNT - 1; k++) {
            ms[k] += part[k];
            sum += part[k];
        }
        ms[PH_OTHER] += fmax(0, q->wall_ms - sum);
        n++;
    }
    for (int k = 0; k < PH_COUNT && n; k++)
        ms[k] /= n;
    return n;
}

static void phase_bars(pf_plot *p, pf_report_run *const *runs, int n, double (*ms)[PH_COUNT])
{
    double band = (p->y1 - p->y0) / PH_COUNT, bh = fmin(14, 0.8 * band / n);
    for (int k = 0; k < PH_COUNT; k++) {
        double yc = p->y0 + band * (k + 0.5);
        pf_canvas_text(p->c, p->x0 - 8, yc + PF_PLOT_FONT * 0.36, phase_names[k], PF_PLOT_FONT,
                       PF_ANCHOR_END, 0, 0x222222);
        for (int i = 0; i < n; i++) {
            uint32_t col = pf_series_colour(i);
            pf_paint bar = { col, col, 1, 0.85, PF_DASH_SOLID };
            double y = yc - n * bh / 2 + i * bh, x1 = pf_axis_pos(&p->x, ms[i][k]);
            pf_prim *q = pf_canvas_rect(p->c, p->x0, y + 1, x1 - p->x0, bh - 2, &bar);
            char tip[160], val[32];
            snprintf(tip, sizeof tip, "%s: %s %.1f ms per evaluation", runs[i]->label,
                     phase_names[k], ms[i][k]);
            q->title = pf_xstrdup(tip);
            snprintf(val, sizeof val, "%.0f ms", ms[i][k]);
            pf_canvas_text(p->c, x1 + 4, y + bh / 2 + 3.5, val, 10, PF_ANCHOR_START, 0,
                           0x222222);
        }
    }
}

pf_canvas *pf_report_phase_plot(pf_report_run *const *runs, int n)
{
    double (*ms)[PH_COUNT] = pf_xmalloc(sizeof *ms * (size_t)n);
    double hi = 0;
    int counted = 0;
    for (int i = 0; i < n; i++) {
        counted += phase_means(runs[i], ms[i]) > 0;
        for (int k = 0; k < PH_COUNT; k++)
            hi = fmax(hi, ms[i][k]);
    }
    if (!counted) {
        free(ms);
        return NULL;
    }
    pf_legend_entry e[32];
    int ne = 0;
    for (int i = 0; i < n && ne < 32; i++) {
        uint32_t col = pf_series_colour(i);
        e[ne++] = (pf_legend_entry){ pf_report_run_title(runs[i]), { PF_NONE, PF_NONE, 0, 1, 0 },
                                     true, PF_MARK_SQUARE, 4.5, { col, col, 1, 0.85, 0 } };
    }
    double lw = WIDTH - LEFT - RIGHT, lh = n > 1 ? pf_legend_height(e, ne, lw) : 0;
    pf_plot p;
    pf_canvas *c = chart("Where a worker's time went, per evaluation (mean over the records)",
                         lh, &p);
    p.x0 = LEFT + 60;  /* room for the phase names */
    pf_axis_fit(&p.x, 0, hi * 1.15, false);
    pf_axis_fit(&p.y, 0, 1, false);
    p.x.p0 = p.x0;
    p.x.p1 = p.x1;
    pf_paint frame = { PF_GREY, PF_NONE, 1, 1, PF_DASH_SOLID };
    double box[8] = { p.x0, p.y0, p.x1, p.y0, p.x1, p.y1, p.x0, p.y1 };
    pf_canvas_polygon(c, box, 4, &frame);
    double t[32];
    int nt = pf_axis_ticks(&p.x, t, 32);
    for (int i = 0; i < nt; i++) {
        char buf[32];
        double x = pf_axis_pos(&p.x, t[i]);
        pf_axis_label(&p.x, t[i], buf, sizeof buf);
        pf_canvas_text(c, x, p.y1 + 18, buf, PF_PLOT_FONT, PF_ANCHOR_MIDDLE, 0, 0x222222);
    }
    pf_canvas_text(c, (p.x0 + p.x1) / 2, p.y1 + 38, "milliseconds per evaluation",
                   PF_PLOT_TITLE_FONT, PF_ANCHOR_MIDDLE, 0, 0)->bold = true;
    phase_bars(&p, runs, n, ms);
    if (n > 1)
        pf_legend_draw(c, LEFT, TOP + PLOT_H + BELOW, lw, e, ne);
    for (int i = 0; i < ne; i++)
        free(e[i].label);
    free(ms);
    return c;
}
