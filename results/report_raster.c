/* The rasteriser behind pareto.png: each primitive of a canvas is drawn into a coverage mask
 * over its bounding box (strokes as distance to their segments, which gives anti-aliased round
 * caps and joins; fills by 4x4 supersampling; circles and rectangles exactly), then blended
 * onto a white sRGB image with its colour and opacity. Coverage is the maximum over a
 * primitive's parts, so a translucent polyline does not darken where its segments meet. */
#include "results/report_canvas.h"

#include "base/arena.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct raster {
    pf_image *img;
    double s;              /* device pixels per logical pixel */
    float *mask;           /* coverage over [x0, x1) x [y0, y1) */
    int x0, y0, x1, y1;
} raster;

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Starts a mask over a device-space box (clipped to the image); false when it is empty. */
static bool mask_begin(raster *r, double bx0, double by0, double bx1, double by1)
{
    r->x0 = (int)floor(clampd(bx0, 0, r->img->width));
    r->y0 = (int)floor(clampd(by0, 0, r->img->height));
    r->x1 = (int)ceil(clampd(bx1, 0, r->img->width));
    r->y1 = (int)ceil(clampd(by1, 0, r->img->height));
    if (r->x1 <= r->x0 || r->y1 <= r->y0)
        return false;
    size_t n = (size_t)(r->x1 - r->x0) * (size_t)(r->y1 - r->y0);
    r->mask = pf_xcalloc(n, sizeof *r->mask);
    return true;
}

static void mask_max(raster *r, int x, int y, double cov)
{
    float *m = &r->mask[(size_t)(y - r->y0) * (size_t)(r->x1 - r->x0) + (size_t)(x - r->x0)];
    if (cov > *m)
        *m = (float)cov;
}

/* Blends the mask's coverage in colour c (0xRRGGBB) at opacity a, and frees the mask. */
static void mask_end(raster *r, uint32_t c, double a)
{
    float col[3] = { ((c >> 16) & 255) / 255.0f, ((c >> 8) & 255) / 255.0f, (c & 255) / 255.0f };
    int w = r->x1 - r->x0;
    for (int y = r->y0; y < r->y1; y++)
        for (int x = r->x0; x < r->x1; x++) {
            float m = r->mask[(size_t)(y - r->y0) * (size_t)w + (size_t)(x - r->x0)] * (float)a;
            if (m <= 0)
                continue;
            for (int ch = 0; ch < 3; ch++) {
                float *p = pf_image_at(r->img, x, y, ch);
                *p = *p * (1 - m) + col[ch] * m;
            }
        }
    free(r->mask);
    r->mask = NULL;
}

/* ---- strokes ---- */

static double seg_dist(double px, double py, double ax, double ay, double bx, double by)
{
    double dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy;
    double t = len2 > 0 ? clampd(((px - ax) * dx + (py - ay) * dy) / len2, 0, 1) : 0;
    double ex = ax + t * dx - px, ey = ay + t * dy - py;
    return sqrt(ex * ex + ey * ey);
}

/* One round-capped segment of device width w into the mask. A line thinner than a pixel is
 * drawn a pixel wide at proportionally lower coverage. */
static void stroke_seg(raster *r, double ax, double ay, double bx, double by, double w)
{
    double hw = w < 1 ? 0.5 : w / 2, k = w < 1 ? w : 1;
    int xa = (int)floor(fmin(ax, bx) - hw - 1), xb = (int)ceil(fmax(ax, bx) + hw + 1);
    int ya = (int)floor(fmin(ay, by) - hw - 1), yb = (int)ceil(fmax(ay, by) + hw + 1);
    for (int y = ya > r->y0 ? ya : r->y0; y < yb && y < r->y1; y++)
        for (int x = xa > r->x0 ? xa : r->x0; x < xb && x < r->x1; x++) {
            double d = seg_dist(x + 0.5, y + 0.5, ax, ay, bx, by);
            double cov = clampd(hw + 0.5 - d, 0, 1) * k;
            if (cov > 0)
                mask_max(r, x, y, cov);
        }
}

typedef struct dasher {
    raster *r;
    double w;
    double len[4];
    int n, i;              /* pattern entries; current entry */
    double left;           /* of the current entry */
} dasher;

/* Strokes a -> b through the dash pattern (on entries are the even ones). */
static void dash_seg(dasher *d, double ax, double ay, double bx, double by)
{
    if (d->n == 0) {
        stroke_seg(d->r, ax, ay, bx, by, d->w);
        return;
    }
    double dx = bx - ax, dy = by - ay, len = sqrt(dx * dx + dy * dy), at = 0;
    while (at < len) {
        double step = fmin(d->left, len - at);
        if (d->i % 2 == 0)
            stroke_seg(d->r, ax + dx * at / len, ay + dy * at / len,
                       ax + dx * (at + step) / len, ay + dy * (at + step) / len, d->w);
        at += step;
        d->left -= step;
        if (d->left <= 1e-9) {
            d->i = (d->i + 1) % d->n;
            d->left = d->len[d->i];
        }
    }
}

/* A polyline in device coordinates (closed: back to its start) with p's width and dash. */
static void stroke_path(raster *r, const double *xy, int n, bool closed, const pf_paint *p)
{
    dasher d = { r, p->width * r->s, { 0 }, 0, 0, 0 };
    d.n = pf_dash_pattern(p->dash, d.len);
    for (int i = 0; i < d.n; i++)
        d.len[i] *= d.w;
    d.left = d.n ? d.len[0] : 0;
    if (n == 1)
        stroke_seg(r, xy[0], xy[1], xy[0], xy[1], d.w);
    for (int i = 0; i + 1 < n; i++)
        dash_seg(&d, xy[2 * i], xy[2 * i + 1], xy[2 * i + 2], xy[2 * i + 3]);
    if (closed && n > 2)
        dash_seg(&d, xy[2 * n - 2], xy[2 * n - 1], xy[0], xy[1]);
}

/* ---- fills ---- */

static bool inside(const double *xy, int n, double x, double y)
{
    bool in = false;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        double yi = xy[2 * i + 1], yj = xy[2 * j + 1];
        if ((yi > y) != (yj > y) &&
            x < xy[2 * j] + (y - yj) * (xy[2 * i] - xy[2 * j]) / (yi - yj))
            in = !in;
    }
    return in;
}

static void fill_polygon(raster *r, const double *xy, int n)
{
    for (int y = r->y0; y < r->y1; y++)
        for (int x = r->x0; x < r->x1; x++) {
            int hits = 0;
            for (int k = 0; k < 16; k++)
                hits += inside(xy, n, x + (k % 4 + 0.5) / 4, y + (k / 4 + 0.5) / 4);
            if (hits)
                mask_max(r, x, y, hits / 16.0);
        }
}

static void fill_circle(raster *r, double cx, double cy, double rad)
{
    for (int y = r->y0; y < r->y1; y++)
        for (int x = r->x0; x < r->x1; x++) {
            double d = hypot(x + 0.5 - cx, y + 0.5 - cy);
            double cov = clampd(rad + 0.5 - d, 0, 1);
            if (cov > 0)
                mask_max(r, x, y, cov);
        }
}

static void stroke_circle(raster *r, double cx, double cy, double rad, double w)
{
    double hw = w < 1 ? 0.5 : w / 2, k = w < 1 ? w : 1;
    for (int y = r->y0; y < r->y1; y++)
        for (int x = r->x0; x < r->x1; x++) {
            double d = fabs(hypot(x + 0.5 - cx, y + 0.5 - cy) - rad);
            double cov = clampd(hw + 0.5 - d, 0, 1) * k;
            if (cov > 0)
                mask_max(r, x, y, cov);
        }
}

/* Exact area coverage of an axis-aligned rectangle. */
static void fill_rect(raster *r, double x0, double y0, double x1, double y1)
{
    for (int y = r->y0; y < r->y1; y++) {
        double cy = fmax(0, fmin(y + 1, y1) - fmax(y, y0));
        for (int x = r->x0; x < r->x1 && cy > 0; x++) {
            double cx = fmax(0, fmin(x + 1, x1) - fmax(x, x0));
            if (cx > 0)
                mask_max(r, x, y, cx * cy);
        }
    }
}

/* ---- primitives ---- */

static void bbox(const double *xy, int n, double pad, double *b)
{
    b[0] = b[1] = INFINITY;
    b[2] = b[3] = -INFINITY;
    for (int i = 0; i < n; i++) {
        b[0] = fmin(b[0], xy[2 * i] - pad);
        b[1] = fmin(b[1], xy[2 * i + 1] - pad);
        b[2] = fmax(b[2], xy[2 * i] + pad);
        b[3] = fmax(b[3], xy[2 * i + 1] + pad);
    }
}

/* A device-space path: fill, then stroke. */
static void draw_path(raster *r, const double *xy, int n, bool closed, const pf_paint *p)
{
    double b[4];
    bbox(xy, n, p->width * r->s + 2, b);
    if (closed && p->fill != PF_NONE && mask_begin(r, b[0], b[1], b[2], b[3])) {
        fill_polygon(r, xy, n);
        mask_end(r, p->fill, p->opacity);
    }
    if (p->stroke != PF_NONE && mask_begin(r, b[0], b[1], b[2], b[3])) {
        stroke_path(r, xy, n, closed, p);
        mask_end(r, p->stroke, p->opacity);
    }
}

static void draw_poly(raster *r, const pf_prim *q)
{
    double *xy = pf_xmalloc(sizeof(double) * 2 * (size_t)(q->n + 1));
    for (int i = 0; i < 2 * q->n; i++)
        xy[i] = q->xy[i] * r->s;
    draw_path(r, xy, q->n, q->kind == PF_PRIM_POLYGON, &q->paint);
    free(xy);
}

static void draw_marker(raster *r, const pf_prim *q)
{
    double xy[16];
    int n = pf_mark_polygon(q->mark, q->xy[0] * r->s, q->xy[1] * r->s, q->size * r->s, xy);
    if (n) {
        draw_path(r, xy, n, true, &q->paint);
        return;
    }
    double cx = q->xy[0] * r->s, cy = q->xy[1] * r->s, rad = q->size * r->s;
    double w = q->paint.width * r->s, pad = rad + w + 2;
    if (q->paint.fill != PF_NONE && mask_begin(r, cx - pad, cy - pad, cx + pad, cy + pad)) {
        fill_circle(r, cx, cy, rad);
        mask_end(r, q->paint.fill, q->paint.opacity);
    }
    if (q->paint.stroke != PF_NONE && mask_begin(r, cx - pad, cy - pad, cx + pad, cy + pad)) {
        stroke_circle(r, cx, cy, rad, w);
        mask_end(r, q->paint.stroke, q->paint.opacity);
    }
}

static void draw_rect(raster *r, const pf_prim *q)
{
    double x0 = q->xy[0] * r->s, y0 = q->xy[1] * r->s;
    double x1 = x0 + q->xy[2] * r->s, y1 = y0 + q->xy[3] * r->s;
    if (q->paint.fill != PF_NONE && mask_begin(r, x0, y0, x1, y1)) {
        fill_rect(r, x0, y0, x1, y1);
        mask_end(r, q->paint.fill, q->paint.opacity);
    }
    if (q->paint.stroke != PF_NONE) {
        double xy[8] = { x0, y0, x1, y0, x1, y1, x0, y1 };
        pf_paint p = q->paint;
        p.fill = PF_NONE;
        draw_path(r, xy, 4, true, &p);
    }
}

typedef struct text_ctx {
    raster *r;
    double w;
} text_ctx;

static void text_stroke(void *ctx, const double *xy, int n)
{
    text_ctx *t = ctx;
    if (n == 1)
        stroke_seg(t->r, xy[0], xy[1], xy[0], xy[1], t->w);
    for (int i = 0; i + 1 < n; i++)
        stroke_seg(t->r, xy[2 * i], xy[2 * i + 1], xy[2 * i + 2], xy[2 * i + 3], t->w);
}

static void draw_text(raster *r, const pf_prim *q)
{
    double size = q->size * r->s, w = pf_text_width(q->text, size);
    double x = q->xy[0] * r->s, y = q->xy[1] * r->s, pad = size + w;
    if (!mask_begin(r, x - pad, y - pad, x + pad, y + pad))
        return;
    text_ctx t = { r, pf_font_stroke_width(size, q->bold) };
    pf_font_strokes(q->text, x, y, size, q->anchor, q->rotate, text_stroke, &t);
    mask_end(r, q->paint.fill, q->paint.opacity);
}

pf_image *pf_canvas_raster(const pf_canvas *c, double scale, pf_error *err)
{
    int w = (int)ceil(c->width * scale), h = (int)ceil(c->height * scale);
    pf_image *img = pf_image_new(w, h, 3, err);
    if (!img)
        return NULL;
    for (int ch = 0; ch < 3; ch++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                *pf_image_at(img, x, y, ch) = 1.0f;
    raster r = { img, scale, NULL, 0, 0, 0, 0 };
    for (int i = 0; i < c->n; i++) {
        const pf_prim *q = &c->prims[i];
        switch (q->kind) {
        case PF_PRIM_LINE:
        case PF_PRIM_POLYGON: draw_poly(&r, q); break;
        case PF_PRIM_MARKER: draw_marker(&r, q); break;
        case PF_PRIM_RECT: draw_rect(&r, q); break;
        case PF_PRIM_TEXT: draw_text(&r, q); break;
        }
    }
    return img;
}

int pf_canvas_png(const pf_canvas *c, double scale, const char *path, pf_error *err)
{
    pf_image *img = pf_canvas_raster(c, scale, err);
    if (!img)
        return -1;
    int rc = pf_image_save_png(img, path, 8, err);
    pf_image_free(img);
    return rc;
}
