/* The report's stroke font: the Hershey simplex glyphs (Debian's hershey-fonts-data, embedded
 * at build time by cmake/EmbedFont.cmake) as polylines for the PNG rasteriser, and their
 * advances for layout. A .jhf line is one glyph: a 5-character id, a 3-character count of
 * coordinate pairs, then pairs of characters, each a coordinate offset from 'R' (x right,
 * y down; baseline at y = 9, capitals' tops at y = -12); the first pair is the glyph's left
 * and right edges and " R" lifts the pen. */
#include "results/report_canvas.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const char *pf_font_latin_jhf(void);
const char *pf_font_greek_jhf(void);

#define GLYPHS 96         /* ASCII 32 .. 127, one .jhf line each */
#define MAX_PAIRS 160
#define PEN_UP (-128)
#define BASELINE 9.0
#define UNITS_PER_EM 29.0 /* capitals 21 units high: 0.72 em, about a sans-serif's */

typedef struct glyph {
    signed char left, right;
    int n;                       /* pairs after the edges; PEN_UP x marks a pen lift */
    signed char xy[2 * MAX_PAIRS];
} glyph;

static glyph latin[GLYPHS], greek[GLYPHS];
/* The font's '-' is a minus sign as wide as '+'; text wants a hyphen. */
static const glyph hyphen = { -6, 6, 2, { -4, 0, 4, 0 } };
static pthread_once_t parsed = PTHREAD_ONCE_INIT;

/* Parses one glyph starting at p; returns the start of the next line. */
static const char *parse_glyph(const char *p, glyph *g)
{
    int count = atoi((char[4]){ p[5], p[6], p[7], 0 });
    p += 8;
    int k = 0;
    for (int i = 0; i < count && *p; i++) {
        while (*p == '\n' || *p == '\r')  /* long glyphs may continue on the next line */
            p++;
        char a = p[0], b = p[1];
        p += 2;
        if (i == 0) {
            g->left = (signed char)(a - 'R');
            g->right = (signed char)(b - 'R');
        } else if (k < MAX_PAIRS) {
            g->xy[2 * k] = a == ' ' ? PEN_UP : (signed char)(a - 'R');
            g->xy[2 * k + 1] = (signed char)(b - 'R');
            k++;
        }
    }
    g->n = k;
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : p + strlen(p);
}

static void parse_font(const char *text, glyph *out)
{
    const char *p = text;
    for (int i = 0; i < GLYPHS && *p; i++)
        p = parse_glyph(p, &out[i]);
}

static void parse_fonts(void)
{
    parse_font(pf_font_latin_jhf(), latin);
    parse_font(pf_font_greek_jhf(), greek);
}

/* Decodes one UTF-8 character at *s (advancing it) to the glyphs that draw it. */
static int glyphs_of(const char **s, const glyph **out)
{
    const unsigned char *p = (const unsigned char *)*s;
    unsigned cp = p[0];
    int len = cp >= 0xF0 ? 4 : cp >= 0xE0 ? 3 : cp >= 0xC0 ? 2 : 1;
    cp &= len == 4 ? 0x07 : len == 3 ? 0x0F : len == 2 ? 0x1F : 0xFF;
    for (int i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) {  /* malformed: shown as '?' */
            len = i;
            cp = 0xFFFD;
            break;
        }
        cp = cp << 6 | (p[i] & 0x3F);
    }
    *s += len;
    const char *ascii = NULL;
    switch (cp) {
    case 0x0394: out[0] = &greek['D' - 32]; return 1;  /* Delta */
    case 0x00D7: ascii = "x"; break;                   /* multiplication sign */
    case 0x2013: case 0x2014: ascii = "-"; break;
    case 0x2212: out[0] = &latin['-' - 32]; return 1;  /* the minus sign */
    case 0x2264: ascii = "<="; break;
    case 0x2265: ascii = ">="; break;
    case 0x00B7: case 0x2022: ascii = "."; break;
    case 0x00A0: ascii = " "; break;
    default:
        if (cp < 32 || cp > 126)
            ascii = "?";
    }
    if (!ascii) {
        out[0] = cp == '-' ? &hyphen : &latin[cp - 32];
        return 1;
    }
    int n = 0;
    for (; ascii[n]; n++)
        out[n] = &latin[ascii[n] - 32];
    return n;
}

double pf_text_width(const char *text, double size)
{
    pthread_once(&parsed, parse_fonts);
    double units = 0;
    for (const char *s = text; *s;) {
        const glyph *g[2];
        int n = glyphs_of(&s, g);
        for (int i = 0; i < n; i++)
            units += g[i]->right - g[i]->left;
    }
    return units * size / UNITS_PER_EM;
}

double pf_font_stroke_width(double size, bool bold)
{
    return size * (bold ? 0.12 : 0.085);
}

typedef struct pen {
    double x0, y0, u;   /* origin (baseline, left edge) and pixels per font unit */
    int rotate;
    pf_stroke_fn fn;
    void *ctx;
} pen;

/* Emits the strokes of one glyph whose left edge is `advance` units after the origin. */
static void draw_glyph(const pen *p, const glyph *g, double advance)
{
    double pts[2 * MAX_PAIRS];
    int n = 0;
    for (int i = 0; i <= g->n; i++) {
        if (i == g->n || g->xy[2 * i] == PEN_UP) {
            if (n > 0)
                p->fn(p->ctx, pts, n);
            n = 0;
            continue;
        }
        double gx = advance + g->xy[2 * i] - g->left, gy = g->xy[2 * i + 1] - BASELINE;
        double dx = gx * p->u, dy = gy * p->u;
        pts[2 * n] = p->rotate ? p->x0 + dy : p->x0 + dx;
        pts[2 * n + 1] = p->rotate ? p->y0 - dx : p->y0 + dy;
        n++;
    }
}

void pf_font_strokes(const char *text, double x, double y, double size, pf_anchor anchor,
                     int rotate, pf_stroke_fn fn, void *ctx)
{
    pthread_once(&parsed, parse_fonts);
    double w = pf_text_width(text, size);
    double shift = anchor == PF_ANCHOR_MIDDLE ? w / 2 : anchor == PF_ANCHOR_END ? w : 0;
    pen p = { x, y, size / UNITS_PER_EM, rotate != 0, fn, ctx };
    if (p.rotate)
        p.y0 += shift;  /* -90 degrees: the text runs up the page */
    else
        p.x0 -= shift;
    double advance = 0;
    for (const char *s = text; *s;) {
        const glyph *g[2];
        int n = glyphs_of(&s, g);
        for (int i = 0; i < n; i++) {
            draw_glyph(&p, g[i], advance);
            advance += g[i]->right - g[i]->left;
        }
    }
}
