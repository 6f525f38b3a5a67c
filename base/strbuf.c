/* Growable string implementation. */
#include "base/strbuf.h"

#include "base/arena.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pf_sb_init(pf_strbuf *sb)
{
    sb->data = NULL;
    sb->len = sb->cap = 0;
}

void pf_sb_free(pf_strbuf *sb)
{
    free(sb->data);
    pf_sb_init(sb);
}

void pf_sb_clear(pf_strbuf *sb)
{
    sb->len = 0;
    if (sb->data)
        sb->data[0] = '\0';
}

static void reserve(pf_strbuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    sb->data = pf_xrealloc(sb->data, cap);
    sb->cap = cap;
}

void pf_sb_putn(pf_strbuf *sb, const char *s, size_t n)
{
    reserve(sb, n);
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void pf_sb_putc(pf_strbuf *sb, char c)
{
    pf_sb_putn(sb, &c, 1);
}

void pf_sb_puts(pf_strbuf *sb, const char *s)
{
    pf_sb_putn(sb, s, strlen(s));
}

void pf_sb_vprintf(pf_strbuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n <= 0)
        return;
    reserve(sb, (size_t)n);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void pf_sb_printf(pf_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pf_sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

void pf_sb_indent(pf_strbuf *sb, int levels)
{
    for (int i = 0; i < levels; i++)
        pf_sb_puts(sb, "    ");
}

const char *pf_sb_str(const pf_strbuf *sb)
{
    return sb->data ? sb->data : "";
}

char *pf_sb_take(pf_strbuf *sb)
{
    char *s = sb->data ? sb->data : pf_xstrdup("");
    pf_sb_init(sb);
    return s;
}
