/* Axes, frames, clipping and legends of the report's charts (report_plot.h). */
#include "results/report_plot.h"

#include "base/arena.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Okabe & Ito's palette without its yellow (too faint on white paper), blue first. */
static const uint32_t okabe_ito[] = { 0x0072B2, 0xD55E00, 0x009E73, 0xCC79A7, 0xE69F00,
                                      0x56B4E9, 0x000000 };
#define N_COLOURS ((int)(sizeof okabe_ito / sizeof okabe_ito[0]))

uint32_t pf_series_colour(int i)
{
    return okabe_ito[i % N_COLOURS];
}

pf_mark pf_series_mark(int i)
{
    return (pf_mark)(i % PF_MARK_COUNT);
}

/* ---- axes ---- */

static double nice_step(double span, int target)
{
    double raw = span / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

void pf_axis_fit(pf_axis *a, double lo, double hi, bool log_scale)
{
    a->log2 = log_scale;
    if (!(hi > lo)) {
        hi = lo > 0 ? lo * 2 : lo + 1;
        lo = log_scale ? lo / 2 : lo > 0 ? 0 : lo - 1;
    }
    if (log_scale) {  /* a little room around the data; ticks stay at powers of two */
        double pad = (log2(hi) - log2(lo)) * 0.04;
        a->lo = exp2(log2(lo) - pad);
        a->hi = exp2(log2(hi) + pad);
        return;
    }
    double step = nice_step(hi - lo, 5);
    a->lo = floor(lo / step + 1e-9) * step;
    a->hi = ceil(hi / step - 1e-9) * step;
}

double pf_axis_pos(const pf_axis *a, double v)
{
    double t = a->log2 ? (log2(v) - log2(a->lo)) / (log2(a->hi) - log2(a->lo))
                       : (v - a->lo) / (a->hi - a->lo);
    return a->p0 + t * (a->p1 - a->p0);
}

int pf_axis_ticks(const pf_axis *a, double *t, int max)
{
    int n = 0;
    if (a->log2) {  /* powers of two; every k-th one on a wide axis, 1 always among them */
        int e0 = (int)ceil(log2(a->lo) - 1e-9), e1 = (int)floor(log2(a->hi) + 1e-9);
        int every = (e1 - e0) / 8 + 1;
        for (int e = e0; e <= e1 && n < max; e++)
            if (e % every == 0)
                t[n++] = exp2(e);
        return n;
    }
    double step = nice_step(a->hi - a->lo, 5);
    if (a->integer && step < 1)
        step = 1;
    for (double v = ceil(a->lo / step - 1e-9) * step; v <= a->hi + step * 1e-9 && n < max;
         v += step)
        t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
    return n;
}

void pf_axis_label(const pf_axis *a, double v, char *buf, size_t n)
{
    const char *suffix = a->suffix ? a->suffix : "";
    if (a->log2 && v < 1) {  /* 1/8 reads better than 0.125 */
        snprintf(buf, n, "1/%.0f%s", 1 / v, suffix);
        return;
    }
    int digits = 0;
    if (!a->log2 && !a->integer) {
        double step = nice_step(a->hi - a->lo, 5);
        digits = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    }
    snprintf(buf, n, "%.*f%s", digits > 6 ? 6 : digits, v, suffix);
}

double pf_text_block(pf_canvas *c, double x, double y, double width, const char *text,
                     double size, uint32_t colour)
{
    double line_h = size * 1.3, h = 0;
    const char *p = text;
    while (*p) {
        /* the longest run of whole words that fits (at least one word) */
        const char *end = p, *fit = NULL;
        while (*end) {
            const char *next = strchr(end + 1, ' ');
            size_t len = (size_t)((next ? next : end + strlen(end)) - p);
            char *line = pf_xmalloc(len + 1);
            memcpy(line, p, len);
            line[len] = '\0';
            bool ok = pf_text_width(line, size) <= width;
            free(line);
            if (!ok && fit)
                break;
            fit = next ? next : end + strlen(end);
            end = fit;
            if (!ok)
                break;
        }
        if (c) {
            char *line = pf_xmalloc((size_t)(fit - p) + 1);
            memcpy(line, p, (size_t)(fit - p));
            line[fit - p] = '\0';
            pf_canvas_text(c, x, y + h + size, line, size, PF_ANCHOR_START, 0, colour);
            free(line);
        }
        h += line_h;
        p = fit;
        while (*p == ' ')
            p++;
    }
    return h;
}

/* ---- frame ---- */

static void seg(pf_canvas *c, double x0, double y0, double x1, double y1, uint32_t col,
                double w)
{
    pf_paint p = { col, PF_NONE, w, 1, PF_DASH_SOLID };
    pf_canvas_line(c, (double[4]){ x0, y0, x1, y1 }, 2, &p);
}

/* Grid lines, tick marks and labels of the x axis (below the plot) or the y axis (left). */
static void ticks(pf_plot *p, bool x_axis)
{
    const pf_axis *a = x_axis ? &p->x : &p->y;
    double t[32];
    int n = pf_axis_ticks(a, t, 32);
    for (int i = 0; i < n; i++) {
        double v = pf_axis_pos(a, t[i]);
        char buf[32];
        pf_axis_label(a, t[i], buf, sizeof buf);
        if (x_axis) {
            seg(p->c, v, p->y0, v, p->y1, PF_GRID, 1);
            seg(p->c, v, p->y1, v, p->y1 + 5, PF_GREY, 1);
            pf_canvas_text(p->c, v, p->y1 + 18, buf, PF_PLOT_FONT, PF_ANCHOR_MIDDLE, 0, 0x222222);
        } else {
            seg(p->c, p->x0, v, p->x1, v, PF_GRID, 1);
            seg(p->c, p->x0 - 5, v, p->x0, v, PF_GREY, 1);
            pf_canvas_text(p->c, p->x0 - 8, v + PF_PLOT_FONT * 0.36, buf, PF_PLOT_FONT,
                           PF_ANCHOR_END, 0, 0x222222);
        }
    }
}

void pf_plot_frame(pf_plot *p, const char *x_title, const char *y_title)
{
    p->x.p0 = p->x0;
    p->x.p1 = p->x1;
    p->y.p0 = p->y1;  /* y grows upwards */
    p->y.p1 = p->y0;
    ticks(p, true);
    ticks(p, false);
    pf_paint frame = { PF_GREY, PF_NONE, 1, 1, PF_DASH_SOLID };
    double box[8] = { p->x0, p->y0, p->x1, p->y0, p->x1, p->y1, p->x0, p->y1 };
    pf_canvas_polygon(p->c, box, 4, &frame);
    pf_prim *t = pf_canvas_text(p->c, (p->x0 + p->x1) / 2, p->y1 + 38, x_title,
                                PF_PLOT_TITLE_FONT, PF_ANCHOR_MIDDLE, 0, 0x000000);
    t->bold = true;
    t = pf_canvas_text(p->c, p->x0 - 46, (p->y0 + p->y1) / 2, y_title, PF_PLOT_TITLE_FONT,
                       PF_ANCHOR_MIDDLE, -90, 0x000000);
    t->bold = true;
}

bool pf_plot_inside(const pf_plot *p, double x, double y)
{
    if (!isfinite(x) || !isfinite(y) || (p->x.log2 && x <= 0))
        return false;
    double cx = pf_axis_pos(&p->x, x), cy = pf_axis_pos(&p->y, y);
    return cx >= p->x0 - 1e-6 && cx <= p->x1 + 1e-6 && cy >= p->y0 - 1e-6 && cy <= p->y1 + 1e-6;
}

/* Liang-Barsky: clips segment a-b to the plot area in place; false when nothing is left. */
static bool clip(const pf_plot *p, double *a, double *b)
{
    double t0 = 0, t1 = 1, dx = b[0] - a[0], dy = b[1] - a[1];
    double pq[4][2] = { { -dx, a[0] - p->x0 }, { dx, p->x1 - a[0] },
                        { -dy, a[1] - p->y0 }, { dy, p->y1 - a[1] } };
    for (int i = 0; i < 4; i++) {
        double pp = pq[i][0], q = pq[i][1];
        if (pp == 0) {
            if (q < 0)
                return false;
            continue;
        }
        double r = q / pp;
        if (pp < 0 && r > t0)
            t0 = r;
        if (pp > 0 && r < t1)
            t1 = r;
        if (t0 > t1)
            return false;
    }
    double ax = a[0], ay = a[1];
    b[0] = ax + t1 * dx;
    b[1] = ay + t1 * dy;
    a[0] = ax + t0 * dx;
    a[1] = ay + t0 * dy;
    return true;
}

typedef struct run_buf {
    double *xy;
    int n;
} run_buf;

static void flush(pf_plot *p, run_buf *r, const pf_paint *paint)
{
    if (r->n >= 2)
        pf_canvas_line(p->c, r->xy, r->n, paint);
    r->n = 0;
}

static void push(run_buf *r, const double *pt)
{
    if (r->n > 0 && r->xy[2 * r->n - 2] == pt[0] && r->xy[2 * r->n - 1] == pt[1])
        return;
    r->xy[2 * r->n] = pt[0];
    r->xy[2 * r->n + 1] = pt[1];
    r->n++;
}

void pf_plot_line(pf_plot *p, const double *x, const double *y, int n, const pf_paint *paint)
{
    run_buf r = { pf_xmalloc(sizeof(double) * 4 * (size_t)(n + 1)), 0 };
    for (int i = 0; i + 1 < n; i++) {
        bool ok = isfinite(x[i]) && isfinite(y[i]) && isfinite(x[i + 1]) && isfinite(y[i + 1]);
        double a[2], b[2];
        if (ok) {
            a[0] = pf_axis_pos(&p->x, x[i]);
            a[1] = pf_axis_pos(&p->y, y[i]);
            b[0] = pf_axis_pos(&p->x, x[i + 1]);
            b[1] = pf_axis_pos(&p->y, y[i + 1]);
        }
        if (!ok || !clip(p, a, b)) {
            flush(p, &r, paint);
            continue;
        }
        if (r.n > 0 && (r.xy[2 * r.n - 2] != a[0] || r.xy[2 * r.n - 1] != a[1]))
            flush(p, &r, paint);  /* the line left the area and came back */
        push(&r, a);
        push(&r, b);
    }
    flush(p, &r, paint);
    free(r.xy);
}

/* ---- legend ---- */

#define SWATCH 30.0
#define ROW 19.0

static double entry_width(const pf_legend_entry *e)
{
    return SWATCH + 6 + pf_text_width(e->label, PF_PLOT_FONT) + 18;
}

/* Lays the entries out in rows; calls draw (when c is set) for each. Returns the height. */
static double layout(pf_canvas *c, double x0, double y0, double width,
                     const pf_legend_entry *e, int n)
{
    double x = 0, y = 0;
    for (int i = 0; i < n; i++) {
        double w = entry_width(&e[i]);
        if (x > 0 && x + w > width) {
            x = 0;
            y += ROW;
        }
        if (c) {
            double sx = x0 + x, sy = y0 + y + ROW / 2;
            if (e[i].line.stroke != PF_NONE)
                pf_canvas_line(c, (double[4]){ sx + 2, sy, sx + SWATCH - 2, sy }, 2, &e[i].line);
            if (e[i].has_mark)
                pf_canvas_marker(c, sx + SWATCH / 2, sy, e[i].mark, e[i].mark_r,
                                 &e[i].mark_paint, NULL);
            pf_canvas_text(c, sx + SWATCH + 6, sy + PF_PLOT_FONT * 0.36, e[i].label,
                           PF_PLOT_FONT, PF_ANCHOR_START, 0, 0x000000);
        }
        x += w;
    }
    return n ? y + ROW : 0;
}

double pf_legend_height(const pf_legend_entry *e, int n, double width)
{
    return layout(NULL, 0, 0, width, e, n);
}

void pf_legend_draw(pf_canvas *c, double x, double y, double width, const pf_legend_entry *e,
                    int n)
{
    layout(c, x, y, width, e, n);
}
