/* Collecting and rendering front-end diagnostics (diag.h). Rendering quotes at most a window of
 * the source line, so a pathological one-line input cannot blow up the output. */
#include "lang/diag.h"

#include "base/arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Characters of a long source line shown on each side of the caret. */
#define QUOTE_HALF 80

void pf_diags_init(pf_diags *d, const char *file_name, const char *source)
{
    memset(d, 0, sizeof *d);
    d->file_name = file_name ? file_name : "<input>";
    d->source = source;
}

void pf_diags_free(pf_diags *d)
{
    for (int i = 0; i < d->count; i++)
        free(d->items[i].message);
    d->count = 0;
    d->dropped = 0;
}

static bool is_repeat(const pf_diags *d, pf_loc loc, const char *msg)
{
    for (int i = 0; i < d->count; i++)
        if (d->items[i].loc.line == loc.line && d->items[i].loc.col == loc.col &&
            strcmp(d->items[i].message, msg) == 0)
            return true;
    return false;
}

void pf_diag_error(pf_diags *d, pf_loc loc, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (is_repeat(d, loc, buf))
        return;  /* the same mistake reached twice (e.g. through two checks) is one error */
    if (d->count == PF_DIAG_MAX) {
        d->dropped++;
        return;
    }
    d->items[d->count].loc = loc;
    d->items[d->count].message = pf_xstrdup(buf);
    d->count++;
}

/* The start of 1-based line `line` in the source, or NULL. */
static const char *line_start(const char *src, int line)
{
    const char *p = src;
    for (int l = 1; l < line; l++) {
        p = strchr(p, '\n');
        if (!p)
            return NULL;
        p++;
    }
    return p;
}

/* Quotes the line and puts a caret under column col (1-based, in bytes). Tabs are kept in the
 * caret line so the caret lines up in a terminal. */
static void render_quote(pf_strbuf *out, const char *line, int col)
{
    size_t len = strcspn(line, "\n\r");
    size_t c = col > 0 ? (size_t)col - 1 : 0;
    if (c > len)
        c = len;
    size_t from = c > QUOTE_HALF ? c - QUOTE_HALF : 0;
    size_t to = len - c > QUOTE_HALF ? c + QUOTE_HALF : len;
    if (from > 0)
        pf_sb_puts(out, "...");
    for (size_t i = from; i < to; i++) {
        unsigned char ch = (unsigned char)line[i];
        pf_sb_putc(out, ch == '\t' || (ch >= 32 && ch < 127) ? (char)ch : '?');
    }
    if (to < len)
        pf_sb_puts(out, "...");
    pf_sb_putc(out, '\n');
    if (from > 0)
        pf_sb_puts(out, "   ");
    for (size_t i = from; i < c; i++)
        pf_sb_putc(out, line[i] == '\t' ? '\t' : ' ');
    pf_sb_puts(out, "^\n");
}

void pf_diags_render(const pf_diags *d, pf_strbuf *out)
{
    for (int i = 0; i < d->count; i++) {
        const pf_diag *g = &d->items[i];
        pf_sb_printf(out, "%s:%d:%d: error: %s\n", d->file_name, g->loc.line, g->loc.col,
                     g->message);
        const char *line = d->source && g->loc.line > 0 ? line_start(d->source, g->loc.line)
                                                         : NULL;
        if (line)
            render_quote(out, line, g->loc.col);
    }
    if (d->dropped > 0)
        pf_sb_printf(out, "%s: note: %d more error(s) not shown\n", d->file_name, d->dropped);
    else if (d->count == PF_DIAG_MAX)
        pf_sb_printf(out, "%s: note: stopped after %d errors\n", d->file_name, PF_DIAG_MAX);
}
