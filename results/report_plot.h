/* Charts on a canvas (report_canvas.h): axes with readable ticks (linear, or log2 for
 * speedups), a frame with axis titles, clipping of lines to the plot area, a legend that wraps
 * into rows below the plot, and the series styles: Okabe-Ito colours (distinguishable with the
 * common colour-vision deficiencies), each with its own marker shape, so series stay apart in
 * grey print too. */
#ifndef PF_RESULTS_REPORT_PLOT_H
#define PF_RESULTS_REPORT_PLOT_H

#include "results/report_canvas.h"

#define PF_PLOT_FONT 12.0        /* tick labels, legend */
#define PF_PLOT_TITLE_FONT 13.0  /* axis titles */
#define PF_GREY 0x595959u        /* frame and ticks: dark enough for print */
#define PF_GRID 0xE3E3E3u

typedef struct pf_axis {
    double lo, hi;       /* data range */
    bool log2;           /* log scale with ticks at powers of two */
    double p0, p1;       /* canvas positions of lo and hi */
    const char *suffix;  /* after tick labels ("x" for speedups), or NULL */
    bool integer;        /* ticks at whole numbers only (generations) */
} pf_axis;

/* Fits the axis to [lo, hi]: linear axes widen to multiples of a 1-2-5 step, log axes get a
 * margin of 4% of their span at both ends (their ticks are powers of two). */
void pf_axis_fit(pf_axis *a, double lo, double hi, bool log_scale);
double pf_axis_pos(const pf_axis *a, double v);
/* Tick values inside the range; returns the count (at most max). */
int pf_axis_ticks(const pf_axis *a, double *t, int max);
/* A tick label: "%g"-like with no more digits than the step needs, plus the suffix. */
void pf_axis_label(const pf_axis *a, double v, char *buf, size_t n);

typedef struct pf_plot {
    pf_canvas *c;
    double x0, y0, x1, y1;   /* the plot area, canvas coordinates (y0 top) */
    pf_axis x, y;
} pf_plot;

/* Grid, frame, ticks, tick labels and axis titles of p (axes already fitted). */
void pf_plot_frame(pf_plot *p, const char *x_title, const char *y_title);
/* A polyline in data coordinates, clipped to the plot area. Points with a non-finite
 * coordinate break the line. */
void pf_plot_line(pf_plot *p, const double *x, const double *y, int n, const pf_paint *paint);
/* True when data point (x, y) lies in the plot area. */
bool pf_plot_inside(const pf_plot *p, double x, double y);

/* Text wrapped at spaces into lines of at most `width` (a single longer word overflows), the
 * first line's top at y; returns the height. With c NULL it only measures. */
double pf_text_block(pf_canvas *c, double x, double y, double width, const char *text,
                     double size, uint32_t colour);

/* One legend entry: a line sample (when line.stroke is set) and/or a marker. */
typedef struct pf_legend_entry {
    char *label;             /* owned by the caller */
    pf_paint line;
    bool has_mark;
    pf_mark mark;
    double mark_r;
    pf_paint mark_paint;
} pf_legend_entry;

/* The height the entries need in rows of width `width`, and drawing them at (x, y) top-left. */
double pf_legend_height(const pf_legend_entry *e, int n, double width);
void pf_legend_draw(pf_canvas *c, double x, double y, double width, const pf_legend_entry *e,
                    int n);

/* Series style i: an Okabe-Ito colour and a marker shape (cycling). */
uint32_t pf_series_colour(int i);
pf_mark pf_series_mark(int i);

#endif
