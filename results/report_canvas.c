/* The drawing list of a plot (report_canvas.h) and its SVG form. */
#include "results/report_canvas.h"

#include "base/arena.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

pf_canvas *pf_canvas_new(double width, double height, const char *title)
{
    pf_canvas *c = pf_xcalloc(1, sizeof *c);
    c->width = width;
    c->height = height;
    c->title = pf_xstrdup(title);
    return c;
}

void pf_canvas_free(pf_canvas *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n; i++) {
        free(c->prims[i].xy);
        free(c->prims[i].text);
        free(c->prims[i].title);
    }
    free(c->prims);
    free(c->title);
    free(c->desc);
    free(c);
}

void pf_canvas_set_desc(pf_canvas *c, const char *desc)
{
    free(c->desc);
    c->desc = desc ? pf_xstrdup(desc) : NULL;
}

static pf_prim *add(pf_canvas *c, pf_prim_kind kind, const pf_paint *p, const double *xy,
                    int n_doubles)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->prims = pf_xrealloc(c->prims, sizeof *c->prims * (size_t)c->cap);
    }
    pf_prim *q = &c->prims[c->n++];
    memset(q, 0, sizeof *q);
    q->kind = kind;
    if (p)
        q->paint = *p;
    else
        q->paint = (pf_paint){ PF_NONE, PF_NONE, 1, 1, PF_DASH_SOLID };
    if (q->paint.opacity <= 0)
        q->paint.opacity = 1;
    q->xy = pf_xmalloc(sizeof(double) * (size_t)(n_doubles > 0 ? n_doubles : 1));
    memcpy(q->xy, xy, sizeof(double) * (size_t)n_doubles);
    return q;
}

pf_prim *pf_canvas_line(pf_canvas *c, const double *xy, int n, const pf_paint *p)
{
    pf_prim *q = add(c, PF_PRIM_LINE, p, xy, 2 * n);
    q->n = n;
    q->paint.fill = PF_NONE;
    return q;
}

pf_prim *pf_canvas_polygon(pf_canvas *c, const double *xy, int n, const pf_paint *p)
{
    pf_prim *q = add(c, PF_PRIM_POLYGON, p, xy, 2 * n);
    q->n = n;
    return q;
}

pf_prim *pf_canvas_marker(pf_canvas *c, double x, double y, pf_mark m, double r,
                          const pf_paint *p, const char *title)
{
    pf_prim *q = add(c, PF_PRIM_MARKER, p, (double[2]){ x, y }, 2);
    q->mark = m;
    q->size = r;
    q->title = title ? pf_xstrdup(title) : NULL;
    return q;
}

pf_prim *pf_canvas_rect(pf_canvas *c, double x, double y, double w, double h, const pf_paint *p)
{
    return add(c, PF_PRIM_RECT, p, (double[4]){ x, y, w, h }, 4);
}

pf_prim *pf_canvas_text(pf_canvas *c, double x, double y, const char *text, double size,
                        pf_anchor anchor, int rotate, uint32_t colour)
{
    pf_paint p = { PF_NONE, colour, 0, 1, PF_DASH_SOLID };
    pf_prim *q = add(c, PF_PRIM_TEXT, &p, (double[2]){ x, y }, 2);
    q->text = pf_xstrdup(text);
    q->size = size;
    q->anchor = anchor;
    q->rotate = rotate;
    return q;
}

/* ---- shapes and dashes ---- */

/* ORDER MARKS */
static const char *const mark_names[PF_MARK_COUNT] = {
    "circle", "square", "triangle", "diamond", "downward triangle", "pentagon",
};

const char *pf_mark_name(pf_mark m)
{
    return (unsigned)m < PF_MARK_COUNT ? mark_names[m] : "?";
}

/* Regular polygon of k corners, the first at angle a0 (radians, 0 = right, y down). Each
 * shape's radius is scaled so that shapes of one nominal size look about equally big. */
static int regular(int k, double a0, double x, double y, double r, double *xy)
{
    for (int i = 0; i < k; i++) {
        double a = a0 + 2 * M_PI * i / k;
        xy[2 * i] = x + r * cos(a);
        xy[2 * i + 1] = y + r * sin(a);
    }
    return k;
}

int pf_mark_polygon(pf_mark m, double x, double y, double r, double *xy)
{
    switch (m) {
    case PF_MARK_SQUARE: return regular(4, M_PI / 4, x, y, r * 1.25, xy);
    case PF_MARK_TRIANGLE: return regular(3, -M_PI / 2, x, y + r * 0.2, r * 1.45, xy);
    case PF_MARK_DIAMOND: return regular(4, -M_PI / 2, x, y, r * 1.4, xy);
    case PF_MARK_TRIANGLE_DOWN: return regular(3, M_PI / 2, x, y - r * 0.2, r * 1.45, xy);
    case PF_MARK_PENTAGON: return regular(5, -M_PI / 2, x, y, r * 1.2, xy);
    default: return 0;
    }
}

static const char *const dash_names[PF_DASH_COUNT] = { "solid", "dashed", "dotted", "dash-dot" };

const char *pf_dash_name(pf_dash d)
{
    return (unsigned)d < PF_DASH_COUNT ? dash_names[d] : "?";
}

int pf_dash_pattern(pf_dash d, double *len)
{
    static const double longd[] = { 7, 4 }, dot[] = { 0.1, 3.5 }, dashdot[] = { 8, 3, 0.1, 3 };
    const double *p = d == PF_DASH_LONG ? longd : d == PF_DASH_DOT ? dot
                      : d == PF_DASH_DASHDOT ? dashdot : NULL;
    int n = d == PF_DASH_DASHDOT ? 4 : p ? 2 : 0;
    for (int i = 0; i < n; i++)
        len[i] = p[i];
    return n;
}

/* ---- SVG ---- */

void pf_xml_escape(pf_strbuf *sb, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': pf_sb_puts(sb, "&lt;"); break;
        case '>': pf_sb_puts(sb, "&gt;"); break;
        case '&': pf_sb_puts(sb, "&amp;"); break;
        case '"': pf_sb_puts(sb, "&quot;"); break;
        default:
            if ((unsigned char)*s >= 32 || *s == '\n' || *s == '\t')
                pf_sb_putc(sb, *s);
        }
    }
}

static void colour_attr(pf_strbuf *sb, const char *name, uint32_t c)
{
    if (c == PF_NONE)
        pf_sb_printf(sb, " %s=\"none\"", name);
    else
        pf_sb_printf(sb, " %s=\"#%06X\"", name, (unsigned)c);
}

static void paint_attrs(pf_strbuf *sb, const pf_paint *p)
{
    colour_attr(sb, "fill", p->fill);
    colour_attr(sb, "stroke", p->stroke);
    if (p->stroke != PF_NONE) {
        pf_sb_printf(sb, " stroke-width=\"%.3g\" stroke-linecap=\"round\" "
                     "stroke-linejoin=\"round\"", p->width);
        double len[4];
        int n = pf_dash_pattern(p->dash, len);
        for (int i = 0; i < n; i++)
            pf_sb_printf(sb, "%s%.3g", i ? " " : " stroke-dasharray=\"", len[i] * p->width);
        if (n)
            pf_sb_putc(sb, '"');
    }
    if (p->opacity < 1)
        pf_sb_printf(sb, " opacity=\"%.3g\"", p->opacity);
}

static void points_attr(pf_strbuf *sb, const double *xy, int n)
{
    pf_sb_puts(sb, " points=\"");
    for (int i = 0; i < n; i++)
        pf_sb_printf(sb, "%s%.2f,%.2f", i ? " " : "", xy[2 * i], xy[2 * i + 1]);
    pf_sb_putc(sb, '"');
}

/* The element's end: a tooltip child, or "/>". */
static void close_elem(pf_strbuf *sb, const char *tag, const char *title)
{
    if (!title) {
        pf_sb_puts(sb, "/>\n");
        return;
    }
    pf_sb_puts(sb, "><title>");
    pf_xml_escape(sb, title);
    pf_sb_printf(sb, "</title></%s>\n", tag);
}

static void svg_marker(pf_strbuf *sb, const pf_prim *q)
{
    double xy[16];
    int n = pf_mark_polygon(q->mark, q->xy[0], q->xy[1], q->size, xy);
    const char *tag = n ? "polygon" : "circle";
    pf_sb_printf(sb, "<%s", tag);
    if (n)
        points_attr(sb, xy, n);
    else
        pf_sb_printf(sb, " cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\"", q->xy[0], q->xy[1], q->size);
    paint_attrs(sb, &q->paint);
    close_elem(sb, tag, q->title);
}

static void svg_text(pf_strbuf *sb, const pf_prim *q)
{
    static const char *const anchors[] = { "start", "middle", "end" };
    pf_sb_printf(sb, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.3g\" text-anchor=\"%s\"",
                 q->xy[0], q->xy[1], q->size, anchors[q->anchor]);
    colour_attr(sb, "fill", q->paint.fill);
    if (q->bold)
        pf_sb_puts(sb, " font-weight=\"bold\"");
    if (q->rotate)
        pf_sb_printf(sb, " transform=\"rotate(%d %.2f %.2f)\"", q->rotate, q->xy[0], q->xy[1]);
    pf_sb_putc(sb, '>');
    pf_xml_escape(sb, q->text);
    pf_sb_puts(sb, "</text>\n");
}

static void svg_prim(pf_strbuf *sb, const pf_prim *q)
{
    switch (q->kind) {
    case PF_PRIM_LINE:
    case PF_PRIM_POLYGON: {
        const char *tag = q->kind == PF_PRIM_LINE ? "polyline" : "polygon";
        pf_sb_printf(sb, "<%s", tag);
        points_attr(sb, q->xy, q->n);
        paint_attrs(sb, &q->paint);
        close_elem(sb, tag, q->title);
        break;
    }
    case PF_PRIM_MARKER: svg_marker(sb, q); break;
    case PF_PRIM_RECT:
        pf_sb_printf(sb, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", q->xy[0],
                     q->xy[1], q->xy[2], q->xy[3]);
        paint_attrs(sb, &q->paint);
        close_elem(sb, "rect", q->title);
        break;
    case PF_PRIM_TEXT: svg_text(sb, q); break;
    }
}

void pf_canvas_svg(const pf_canvas *c, pf_strbuf *out)
{
    pf_sb_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
                 "viewBox=\"0 0 %g %g\" role=\"img\" font-family=\"DejaVu Sans, Helvetica, "
                 "Arial, sans-serif\">\n<title>", c->width, c->height, c->width, c->height);
    pf_xml_escape(out, c->title);
    pf_sb_puts(out, "</title>\n");
    if (c->desc) {
        pf_sb_puts(out, "<desc>");
        pf_xml_escape(out, c->desc);
        pf_sb_puts(out, "</desc>\n");
    }
    pf_sb_printf(out, "<rect width=\"%g\" height=\"%g\" fill=\"#FFFFFF\"/>\n", c->width,
                 c->height);
    for (int i = 0; i < c->n; i++)
        svg_prim(out, &c->prims[i]);
    pf_sb_puts(out, "</svg>\n");
}
