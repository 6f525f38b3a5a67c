/* The Pareto plot: error (the paper's mean CIE76 Delta E in Lab) against speedup over the
 * exact program (log scale), the training frontier and its re-measurement on the test images
 * as lines through the variants (in order of training error), every evaluated candidate of
 * the main run as a faint dot, and the frontiers of compared runs overlaid. Each run has an
 * Okabe-Ito colour and a marker shape; training lines are solid with open markers, test lines
 * dashed with filled ones. What does not fit the axes is counted in the notes, not hidden. */
#include "results/report_internal.h"
#include "results/report_plot.h"

#include "base/arena.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 780.0
#define LEFT 80.0
#define RIGHT 24.0
#define TOP 36.0
#define PLOT_H 400.0
#define BELOW 56.0     /* tick labels and the x title */
#define MIN_SPEEDUP (1.0 / 64)
#define DOT_COLOUR 0x7F7F7Fu
#define LABEL_FONT 10.0

typedef struct series {
    double *x, *y;     /* speedup, error */
    int *variant;
    int n;
} series;

static void series_free(series *s)
{
    free(s->x);
    free(s->y);
    free(s->variant);
}

/* The training (test = false) or test frontier of a run, in variant order. */
static series frontier(const pf_report_run *r, bool test)
{
    series s = { pf_xmalloc(sizeof(double) * (size_t)(r->n_front + 1)),
                 pf_xmalloc(sizeof(double) * (size_t)(r->n_front + 1)),
                 pf_xmalloc(sizeof(int) * (size_t)(r->n_front + 1)), 0 };
    for (int k = 0; k < r->n_front; k++) {
        int i = test ? r->test[k] : r->front[k];
        if (i < 0 || !r->recs[i].valid)
            continue;
        s.x[s.n] = 1.0 / r->recs[i].time;
        s.y[s.n] = r->recs[i].error;
        s.variant[s.n++] = k;
    }
    return s;
}

/* ---- ranges ---- */

typedef struct range {
    double xlo, xhi, ymax;
} range;

static void widen(range *g, const series *s)
{
    for (int i = 0; i < s->n; i++) {
        g->xlo = fmin(g->xlo, s->x[i] / 1.25);
        g->xhi = fmax(g->xhi, s->x[i]);
        g->ymax = fmax(g->ymax, s->y[i]);
    }
}

/* x: the frontiers (every run, both splits) and at least 1/2x..2x, no slower than MIN_SPEEDUP:
 * candidates far slower than any variant would squeeze the frontier into a corner, so they get
 * ticks on the left edge instead; y: from 0 to the highest frontier point, but at most twice
 * the error cap (the region the summary numbers look at, with room above it). */
static range fit(pf_report_run *const *runs, int n, series (*fr)[2])
{
    range g = { 0.5, 2, 0 };
    for (int i = 0; i < n; i++) {
        widen(&g, &fr[i][0]);
        widen(&g, &fr[i][1]);
    }
    g.xlo = fmax(g.xlo, MIN_SPEEDUP);
    double cap = 2 * runs[0]->cfg.max_error;
    g.ymax = fmax(1, fmin(g.ymax, cap));
    return g;
}

/* ---- drawing ---- */

typedef struct dots {
    int valid;       /* valid training candidates */
    int left;        /* slower than the axis: ticks on the left edge */
    double slowest;  /* the lowest speedup among them */
    int above;       /* error above the axis: not drawn */
} dots;

static void draw_dots(pf_plot *p, const pf_report_run *r, dots *d)
{
    pf_paint dot = { PF_NONE, DOT_COLOUR, 0, 0.45, PF_DASH_SOLID };
    pf_paint tick = { DOT_COLOUR, PF_NONE, 1.2, 0.7, PF_DASH_SOLID };
    *d = (dots){ 0, 0, INFINITY, 0 };
    for (int i = 0; i < r->n_recs; i++) {
        const pf_eval_record *q = &r->recs[i];
        if (q->set != PF_SET_TRAIN || !q->valid)
            continue;
        d->valid++;
        double x = 1.0 / q->time, y = q->error;
        if (y > p->y.hi) {
            d->above++;
        } else if (x < p->x.lo) {
            d->left++;
            d->slowest = fmin(d->slowest, x);
            double cy = pf_axis_pos(&p->y, y);
            pf_canvas_line(p->c, (double[4]){ p->x0 + 1, cy, p->x0 + 7, cy }, 2, &tick);
        } else {
            pf_canvas_marker(p->c, pf_axis_pos(&p->x, x), pf_axis_pos(&p->y, y),
                             PF_MARK_CIRCLE, 2.2, &dot, NULL);
        }
    }
}

static void reference_lines(pf_plot *p, double cap)
{
    pf_paint ref = { 0x8C8C8C, PF_NONE, 1.2, 1, PF_DASH_DOT };
    pf_plot_line(p, (double[2]){ 1, 1 }, (double[2]){ p->y.lo, p->y.hi }, 2, &ref);
    if (cap < p->y.hi) {
        pf_plot_line(p, (double[2]){ p->x.lo, p->x.hi }, (double[2]){ cap, cap }, 2, &ref);
        char buf[64];
        snprintf(buf, sizeof buf, "error cap %g (summary numbers)", cap);
        pf_canvas_text(p->c, p->x1 - 4, pf_axis_pos(&p->y, cap) - 4, buf, LABEL_FONT,
                       PF_ANCHOR_END, 0, 0x555555);
    }
}

/* Boxes taken by markers and labels, so that variant numbers overlap neither. */
typedef struct boxes {
    double (*b)[4];
    int n, cap;
} boxes;

static void box_add(boxes *bx, double x0, double y0, double x1, double y1)
{
    if (bx->n == bx->cap) {
        bx->cap = bx->cap ? 2 * bx->cap : 64;
        bx->b = pf_xrealloc(bx->b, sizeof *bx->b * (size_t)bx->cap);
    }
    double *b = bx->b[bx->n++];
    b[0] = x0;
    b[1] = y0;
    b[2] = x1;
    b[3] = y1;
}

static bool free_box(const boxes *bx, const double *b)
{
    for (int i = 0; i < bx->n; i++)
        if (b[0] < bx->b[i][2] && bx->b[i][0] < b[2] && b[1] < bx->b[i][3] && bx->b[i][1] < b[3])
            return false;
    return true;
}

/* Variant k's number beside its marker at (cx, cy): the first free place of four, or none. */
static void variant_label(pf_plot *p, boxes *bx, double cx, double cy, int k)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%d", k);
    double w = pf_text_width(buf, LABEL_FONT), h = LABEL_FONT * 0.75;
    static const double off[4][2] = { { 7, -7 }, { 7, 7 + 8 }, { -7, -7 }, { -7, 7 + 8 } };
    for (int i = 0; i < 4; i++) {
        double x = cx + off[i][0], y = cy + off[i][1];
        double b[4] = { off[i][0] > 0 ? x : x - w, y - h, off[i][0] > 0 ? x + w : x, y };
        if (b[0] < p->x0 || b[2] > p->x1 || b[1] < p->y0 || b[3] > p->y1 || !free_box(bx, b))
            continue;
        box_add(bx, b[0], b[1], b[2], b[3]);
        pf_canvas_text(p->c, x, y, buf, LABEL_FONT, off[i][0] > 0 ? PF_ANCHOR_START
                                                                 : PF_ANCHOR_END, 0, 0x000000);
        return;
    }
}

/* Where point i of a series is drawn; false when not at all. Points above the plot go on its
 * top edge (*above counts them). */
static bool place(const pf_plot *p, const series *s, int i, double *cx, double *cy, int *above)
{
    double y = s->y[i];
    if (y > p->y.hi) {
        y = p->y.hi;
        if (above)
            ++*above;
    }
    if (!pf_plot_inside(p, s->x[i], y))
        return false;
    *cx = pf_axis_pos(&p->x, s->x[i]);
    *cy = pf_axis_pos(&p->y, y);
    return true;
}

/* One frontier: its line, then its markers (open for training, filled for test), each box
 * taken in `taken`. Returns the number of points drawn on the top edge. */
static int draw_series(pf_plot *p, const series *s, int style, bool test, const char *who,
                       boxes *taken)
{
    uint32_t col = pf_series_colour(style);
    pf_paint line = { col, PF_NONE, 2, 1, test ? PF_DASH_LONG : PF_DASH_SOLID };
    pf_plot_line(p, s->x, s->y, s->n, &line);
    pf_paint mk = { col, test ? col : 0xFFFFFF, 1.6, 1, PF_DASH_SOLID };
    int above = 0;
    double cx, cy, r = 4.2;
    for (int i = 0; i < s->n; i++) {
        if (!place(p, s, i, &cx, &cy, &above))
            continue;
        char tip[256];
        snprintf(tip, sizeof tip, "%s, variant %d (%s): %.3gx the exact program's speed "
                 "(relative time %.4g), error %.3g Lab", who, s->variant[i],
                 test ? "test images" : "training images", s->x[i], 1 / s->x[i], s->y[i]);
        pf_canvas_marker(p->c, cx, cy, pf_series_mark(style), r, &mk, tip);
        box_add(taken, cx - r - 1, cy - r - 1, cx + r + 1, cy + r + 1);
    }
    return above;
}

/* ---- legend and notes ---- */

static void legend_add(pf_legend_entry *e, int *n, char *label, int style, bool test)
{
    uint32_t col = pf_series_colour(style);
    e[*n] = (pf_legend_entry){ label, { col, PF_NONE, 2, 1, test ? PF_DASH_LONG : PF_DASH_SOLID },
                               true, pf_series_mark(style), 4.2,
                               { col, test ? col : 0xFFFFFF, 1.6, 1, PF_DASH_SOLID } };
    ++*n;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    va_list ap;
    va_start(ap, f);
    pf_sb_vprintf(&sb, f, ap);
    va_end(ap);
    return pf_sb_take(&sb);
}

static int legend_entries(pf_report_run *const *runs, int n, series (*fr)[2],
                          pf_legend_entry *e)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        char *t = pf_report_run_title(runs[i]);
        legend_add(e, &m, fmt("%s: training frontier (%d)", t, fr[i][0].n), i, false);
        if (fr[i][1].n)
            legend_add(e, &m, fmt("%s: test frontier (%d)", t, fr[i][1].n), i, true);
        free(t);
    }
    e[m++] = (pf_legend_entry){ fmt("a candidate of %s (training images)", runs[0]->label),
                                { PF_NONE, PF_NONE, 0, 1, 0 }, true, PF_MARK_CIRCLE, 2.2,
                                { PF_NONE, DOT_COLOUR, 0, 0.45, 0 } };
    return m;
}

static int count_invalid(const pf_report_run *r)
{
    int n = 0;
    for (int i = 0; i < r->n_recs; i++)
        n += r->recs[i].set == PF_SET_TRAIN && !r->recs[i].valid;
    return n;
}

static char *notes(pf_report_run *const *runs, const dots *d, int above, double ymax)
{
    const pf_report_run *r = runs[0];
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_printf(&sb, "%s: %d candidates evaluated on the training images, %d invalid "
                 "(not plotted)", r->label, d->valid + count_invalid(r), count_invalid(r));
    if (d->left)
        pf_sb_printf(&sb, "; %d slower than the axis (down to 1/%.3g\xC3\x97) are ticks on the "
                     "left edge", d->left, 1 / d->slowest);
    if (d->above)
        pf_sb_printf(&sb, "; %d with error above %g are not drawn", d->above, ymax);
    if (above)
        pf_sb_printf(&sb, "; %d frontier points above error %g are drawn on the top edge",
                     above, ymax);
    pf_sb_putc(&sb, '.');
    return pf_sb_take(&sb);
}

/* ---- the plot ---- */

static void axes(pf_plot *p, const range *g)
{
    pf_axis_fit(&p->x, g->xlo, g->xhi, true);
    p->x.suffix = "\xC3\x97";  /* the multiplication sign */
    pf_axis_fit(&p->y, 0, g->ymax, false);
    pf_plot_frame(p, "speedup over the exact program (log scale)",
                  "error: mean CIE76 \xCE\x94" "E in Lab (Lab units)");
}

static void draw_all(pf_plot *p, pf_report_run *const *runs, int n, series (*fr)[2],
                     dots *d, int *above)
{
    draw_dots(p, runs[0], d);
    reference_lines(p, runs[0]->cfg.max_error);
    boxes taken = { NULL, 0, 0 };
    *above = 0;
    for (int i = n - 1; i >= 0; i--) {  /* the main run last: on top */
        char *t = pf_report_run_title(runs[i]);
        *above += draw_series(p, &fr[i][1], i, true, t, &taken);
        *above += draw_series(p, &fr[i][0], i, false, t, &taken);
        free(t);
    }
    double cx, cy;  /* the main run's training variants get their numbers */
    for (int k = 0; k < fr[0][0].n; k++)
        if (place(p, &fr[0][0], k, &cx, &cy, NULL))
            variant_label(p, &taken, cx, cy, fr[0][0].variant[k]);
    free(taken.b);
}

pf_canvas *pf_report_pareto(pf_report_run *const *runs, int n)
{
    series (*fr)[2] = pf_xmalloc(sizeof *fr * (size_t)n);
    for (int i = 0; i < n; i++) {
        fr[i][0] = frontier(runs[i], false);
        fr[i][1] = frontier(runs[i], true);
    }
    pf_legend_entry e[64];
    int ne = legend_entries(runs, n < 20 ? n : 20, fr, e);
    double lw = WIDTH - LEFT - RIGHT, lh = pf_legend_height(e, ne, lw);
    char *title = pf_report_run_title(runs[0]);
    char *head = fmt("Error against speedup: %s%s", title, n > 1 ? " and compared runs" : "");
    pf_canvas *c = pf_canvas_new(WIDTH, 0, head);
    pf_canvas_text(c, LEFT, 22, head, 14, PF_ANCHOR_START, 0, 0x000000)->bold = true;
    pf_plot p = { .c = c, .x0 = LEFT, .y0 = TOP, .x1 = WIDTH - RIGHT, .y1 = TOP + PLOT_H };
    range g = fit(runs, n, fr);
    axes(&p, &g);
    dots d;
    int above;
    draw_all(&p, runs, n, fr, &d, &above);
    pf_legend_draw(c, LEFT, TOP + PLOT_H + BELOW, lw, e, ne);
    char *note = notes(runs, &d, above, p.y.hi);
    double nh = pf_text_block(c, LEFT, TOP + PLOT_H + BELOW + lh + 4, lw, note, 11, 0x333333);
    c->height = ceil(TOP + PLOT_H + BELOW + lh + 4 + nh + 8);
    pf_canvas_set_desc(c, note);
    for (int i = 0; i < ne; i++)
        free(e[i].label);
    for (int i = 0; i < n; i++) {
        series_free(&fr[i][0]);
        series_free(&fr[i][1]);
    }
    free(fr);
    free(note);
    free(head);
    free(title);
    return c;
}
