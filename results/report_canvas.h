/* The report's drawing list: a plot is built once as a list of primitives (polylines,
 * polygons, markers, rectangles, text) in logical pixels, then written both as SVG and as a
 * PNG by perfora's own rasteriser, so the two files show the same drawing.
 *
 *   pf_canvas *c = pf_canvas_new(640, 400, "Pareto frontier");
 *   pf_canvas_line(c, xy, 4, &(pf_paint){ .stroke = 0x0072B2, .width = 2, .dash = PF_DASH_LONG });
 *   pf_canvas_marker(c, 100, 80, PF_MARK_TRIANGLE, 7, &style, "variant 3: 2.1x, 1.3 Lab");
 *   pf_canvas_text(c, 320, 390, "speedup", 13, PF_ANCHOR_MIDDLE, 0, 0x000000);
 *   pf_canvas_svg(c, &sb);  pf_canvas_png(c, 2.0, "pareto.png", &err);
 *
 * Text in the SVG is real text (a sans-serif font); the PNG draws it with the Hershey simplex
 * stroke font (report_font.c), whose widths also drive layout (pf_text_width). */
#ifndef PF_RESULTS_REPORT_CANVAS_H
#define PF_RESULTS_REPORT_CANVAS_H

#include "base/error.h"
#include "base/strbuf.h"
#include "dataset/image.h"

#include <stdbool.h>
#include <stdint.h>

#define PF_NONE 0xFFFFFFFFu  /* no stroke / no fill */

typedef enum pf_dash {
    PF_DASH_SOLID,
    PF_DASH_LONG,     /* 7 on, 4 off */
    PF_DASH_DOT,      /* dots (round caps) */
    PF_DASH_DASHDOT,  /* 8 on, 3 off, dot, 3 off */
    PF_DASH_COUNT
} pf_dash;

/* Marker shapes, each recognisable in grey print; ORDER MARKS: the table in report_canvas.c. */
typedef enum pf_mark {
    PF_MARK_CIRCLE,
    PF_MARK_SQUARE,
    PF_MARK_TRIANGLE,
    PF_MARK_DIAMOND,
    PF_MARK_TRIANGLE_DOWN,
    PF_MARK_PENTAGON,
    PF_MARK_COUNT
} pf_mark;

typedef enum pf_anchor { PF_ANCHOR_START, PF_ANCHOR_MIDDLE, PF_ANCHOR_END } pf_anchor;

/* How a primitive is painted. Colours are 0xRRGGBB, or PF_NONE. */
typedef struct pf_paint {
    uint32_t stroke, fill;
    double width;     /* stroke width, logical pixels */
    double opacity;   /* 0 means 1 (opaque); applies to stroke and fill */
    pf_dash dash;
} pf_paint;

typedef enum pf_prim_kind {
    PF_PRIM_LINE,     /* open polyline */
    PF_PRIM_POLYGON,  /* closed */
    PF_PRIM_MARKER,
    PF_PRIM_RECT,
    PF_PRIM_TEXT
} pf_prim_kind;

typedef struct pf_prim {
    pf_prim_kind kind;
    pf_paint paint;
    int n;             /* LINE, POLYGON: points */
    double *xy;        /* LINE, POLYGON: x0 y0 x1 y1 ...; MARKER, TEXT: x y; RECT: x y w h */
    pf_mark mark;      /* MARKER */
    double size;       /* MARKER: radius; TEXT: font size (px) */
    pf_anchor anchor;  /* TEXT */
    int rotate;        /* TEXT: 0, or -90 (reads bottom to top) */
    bool bold;         /* TEXT */
    char *text;        /* TEXT: UTF-8 */
    char *title;       /* tooltip in the SVG (NULL: none) */
} pf_prim;

typedef struct pf_canvas {
    double width, height;
    char *title;       /* the SVG's <title> */
    char *desc;        /* the SVG's <desc>, or NULL */
    pf_prim *prims;
    int n, cap;
} pf_canvas;

pf_canvas *pf_canvas_new(double width, double height, const char *title);
void pf_canvas_free(pf_canvas *c);
void pf_canvas_set_desc(pf_canvas *c, const char *desc);

/* Each returns the primitive (owned by the canvas; valid until the next addition). */
pf_prim *pf_canvas_line(pf_canvas *c, const double *xy, int n, const pf_paint *p);
pf_prim *pf_canvas_polygon(pf_canvas *c, const double *xy, int n, const pf_paint *p);
pf_prim *pf_canvas_marker(pf_canvas *c, double x, double y, pf_mark m, double r,
                          const pf_paint *p, const char *title);
pf_prim *pf_canvas_rect(pf_canvas *c, double x, double y, double w, double h, const pf_paint *p);
pf_prim *pf_canvas_text(pf_canvas *c, double x, double y, const char *text, double size,
                        pf_anchor anchor, int rotate, uint32_t colour);

/* The marker's outline as a polygon (n points into xy[2 * 8]); 0 for a circle. */
int pf_mark_polygon(pf_mark m, double x, double y, double r, double *xy);
const char *pf_mark_name(pf_mark m);  /* "circle", "square", ... (for captions) */
const char *pf_dash_name(pf_dash d);  /* "solid", "dashed", "dotted", "dash-dot" */
/* The dash pattern in logical pixels: on/off lengths, n entries (0 for solid). */
int pf_dash_pattern(pf_dash d, double *len);

/* Width of text in a font of `size` px (the stroke font's advances: SVG fonts are close). */
double pf_text_width(const char *text, double size);

/* Appends the drawing as one <svg> element (xmlns given, so the same text is a standalone
 * file and an inline element of the report's XHTML-compatible page). */
void pf_canvas_svg(const pf_canvas *c, pf_strbuf *out);

/* Text content or an attribute value, escaped for XML and HTML (control characters other
 * than tab and newline dropped). */
void pf_xml_escape(pf_strbuf *sb, const char *s);

/* Rasterises at `scale` pixels per logical pixel onto white: anti-aliased strokes (round caps
 * and joins), fills, markers and stroke-font text. */
pf_image *pf_canvas_raster(const pf_canvas *c, double scale, pf_error *err);
/* pf_canvas_raster, saved as an 8-bit PNG (libpng, through dataset/). */
int pf_canvas_png(const pf_canvas *c, double scale, const char *path, pf_error *err);

/* ---- the stroke font (report_font.c) ---- */

/* Calls fn with each stroke (a polyline, n points) of text drawn at (x, y) = the anchor point
 * on the baseline, `size` px, rotated by `rotate` degrees (0 or -90). */
typedef void (*pf_stroke_fn)(void *ctx, const double *xy, int n);
void pf_font_strokes(const char *text, double x, double y, double size, pf_anchor anchor,
                     int rotate, pf_stroke_fn fn, void *ctx);
/* The stroke width that suits a font size (bold: heavier). */
double pf_font_stroke_width(double size, bool bold);

#endif
