/* The models of a model-guided search (docs/search.md §10): every candidate's prediction,
 * made before it was measured, against its measurement, for the relative time (log scale) and
 * the error, with the diagonal where they agree and each panel's rank correlation. */
#include "results/report_internal.h"
#include "results/report_plot.h"

#include "base/arena.h"
#include "search/model_fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define WIDTH 780.0
#define PANEL 300.0
#define TOP 56.0
#define LEFT 70.0
#define GAP 90.0

typedef struct pairs {
    int n;
    double *pt, *mt, *pe, *me;
    int *rec;
} pairs;

/* The valid training records that carry a prediction. */
static pairs predicted(const pf_report_run *r)
{
    pairs p = { 0 };
    p.pt = pf_xmalloc(sizeof(double) * 4 * (size_t)(r->n_recs + 1));
    p.mt = p.pt + r->n_recs;
    p.pe = p.mt + r->n_recs;
    p.me = p.pe + r->n_recs;
    p.rec = pf_xmalloc(sizeof(int) * (size_t)(r->n_recs + 1));
    for (int i = 0; i < r->n_recs; i++) {
        const pf_eval_record *x = &r->recs[i];
        if (x->set != PF_SET_TRAIN || !x->valid || !isfinite(x->pred_time) ||
            !isfinite(x->pred_error) || !(x->time > 0))
            continue;
        p.pt[p.n] = x->pred_time;
        p.mt[p.n] = x->time;
        p.pe[p.n] = x->pred_error;
        p.me[p.n] = x->error;
        p.rec[p.n++] = i;
    }
    return p;
}

static void free_pairs(pairs *p)
{
    free(p->pt);
    free(p->rec);
}

/* One panel: measured (x) against predicted (y), the diagonal, a marker per candidate. */
static void panel(pf_canvas *c, double x0, const pf_report_run *r, const pairs *p,
                  const double *pred, const double *meas, bool log_scale, const char *what)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < p->n; i++) {
        lo = fmin(lo, fmin(pred[i], meas[i]));
        hi = fmax(hi, fmax(pred[i], meas[i]));
    }
    if (!log_scale)
        lo = 0;
    if (!(hi > lo))
        hi = lo + 1;
    pf_plot pl = { .c = c, .x0 = x0, .y0 = TOP, .x1 = x0 + PANEL, .y1 = TOP + PANEL };
    pf_axis_fit(&pl.x, lo, hi, log_scale);
    pl.y = pl.x;
    char xt[64], yt[64], head[160];
    snprintf(xt, sizeof xt, "measured %s", what);
    snprintf(yt, sizeof yt, "predicted %s", what);
    pf_plot_frame(&pl, xt, yt);
    snprintf(head, sizeof head, "%s: Spearman %.2f (%d candidates)", what,
             pf_spearman(pred, meas, p->n), p->n);
    pf_canvas_text(c, x0, TOP - 10, head, 12, PF_ANCHOR_START, 0, 0x000000);
    double d[2] = { pl.x.lo, pl.x.hi };
    pf_plot_line(&pl, d, d, 2, &(pf_paint){ PF_GREY, PF_NONE, 1, 1, PF_DASH_LONG });
    pf_paint dot = { 0x0072B2, 0xFFFFFF, 1.2, 0.9, PF_DASH_SOLID };
    for (int i = 0; i < p->n; i++) {
        const pf_eval_record *x = &r->recs[p->rec[i]];
        char tip[160];
        snprintf(tip, sizeof tip, "candidate %ld, generation %d: %s predicted %.3g, measured "
                 "%.3g", x->id, x->generation, what, pred[i], meas[i]);
        pf_canvas_marker(c, pf_axis_pos(&pl.x, meas[i]), pf_axis_pos(&pl.y, pred[i]),
                         PF_MARK_CIRCLE, 2.5, &dot, tip);
    }
}

pf_canvas *pf_report_model_plot(const pf_report_run *r)
{
    pairs p = predicted(r);
    if (p.n == 0) {
        free_pairs(&p);
        return NULL;
    }
    pf_canvas *c = pf_canvas_new(WIDTH, TOP + PANEL + 60, "predicted against measured");
    pf_canvas_text(c, LEFT, 22, "The models' predictions, made before measuring, against the "
                   "measurements", 14, PF_ANCHOR_START, 0, 0x000000)->bold = true;
    panel(c, LEFT, r, &p, p.pt, p.mt, true, "relative time");
    panel(c, LEFT + PANEL + GAP, r, &p, p.pe, p.me, false, "Lab error");
    free_pairs(&p);
    return c;
}
