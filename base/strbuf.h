/* A growable string for building messages, dumps and generated source. */
#ifndef PF_BASE_STRBUF_H
#define PF_BASE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct pf_strbuf {
    char *data;  /* always NUL-terminated once anything was appended; NULL when empty */
    size_t len, cap;
} pf_strbuf;

void pf_sb_init(pf_strbuf *sb);
void pf_sb_free(pf_strbuf *sb);
void pf_sb_clear(pf_strbuf *sb);  /* keeps the allocation */
void pf_sb_putc(pf_strbuf *sb, char c);
void pf_sb_puts(pf_strbuf *sb, const char *s);
void pf_sb_putn(pf_strbuf *sb, const char *s, size_t n);
void pf_sb_printf(pf_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pf_sb_vprintf(pf_strbuf *sb, const char *fmt, va_list ap);
void pf_sb_indent(pf_strbuf *sb, int levels);  /* four spaces a level */
const char *pf_sb_str(const pf_strbuf *sb);    /* "" when empty */
char *pf_sb_take(pf_strbuf *sb);              /* caller frees; sb becomes empty */

#endif
