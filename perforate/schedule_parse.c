/* Parsing schedule text (docs/schedule.md, "Format"). One line at a time, split into words;
 * each rule of the grammar has its function, with the rule above it. Every error is
 * "FILE:LINE: message" and names the offending word where there is one. Parsing fills every
 * default in and validates each gene against the program as soon as its line is read. */
#include "perforate/schedule.h"

#include "perforate/exec.h"
#include "perforate/schedule_internal.h"

#include "base/arena.h"
#include "base/fileio.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS 32

typedef struct sched_parser {
    const pf_program *prog;
    const char *file;
    int line;
    char *words[MAX_WORDS];
    int n_words;
    int pos;                    /* next word */
    const pf_loop_info *li;     /* the line's loop */
    pf_schedule *s;
    pf_error *err;
} sched_parser;

static int perr(sched_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int perr(sched_parser *p, const char *fmt, ...)
{
    char why[PF_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return pf_fail(p->err, "%s:%d: %s", p->file, p->line, why);
}

/* "LOOP: why" at the current line. */
static int lerr(sched_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int lerr(sched_parser *p, const char *fmt, ...)
{
    char why[PF_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return perr(p, "%s: %s", p->li->name, why);
}

/* ---- words ---- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Splits line (modified in place) into words; a '#' ends the line. */
static int split_words(sched_parser *p, char *line)
{
    p->n_words = p->pos = 0;
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    for (char *c = line; *c;) {
        while (is_space(*c))
            c++;
        if (!*c)
            break;
        if (p->n_words == MAX_WORDS)
            return perr(p, "too many words on one line (at most %d)", MAX_WORDS);
        p->words[p->n_words++] = c;
        while (*c && !is_space(*c))
            c++;
        if (*c)
            *c++ = '\0';
    }
    return 0;
}

static const char *peek(const sched_parser *p)
{
    return p->pos < p->n_words ? p->words[p->pos] : NULL;
}

static bool at(const sched_parser *p, const char *word)
{
    const char *w = peek(p);
    return w && strcmp(w, word) == 0;
}

/* ---- numbers ---- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* INT = [+-]digits */
static bool int_syntax(const char *w)
{
    if (*w == '+' || *w == '-')
        w++;
    if (!*w)
        return false;
    for (; *w; w++)
        if (!is_digit(*w))
            return false;
    return true;
}

/* FLOAT = [+-](digits[.digits] | .digits)[(e|E)[+-]digits]: decimal only (no hex, inf, nan). */
static bool float_syntax(const char *w)
{
    if (*w == '+' || *w == '-')
        w++;
    int digits = 0;
    for (; is_digit(*w); w++)
        digits++;
    if (*w == '.')
        for (w++; is_digit(*w); w++)
            digits++;
    if (!digits)
        return false;
    if (*w == 'e' || *w == 'E') {
        w++;
        if (*w == '+' || *w == '-')
            w++;
        if (!is_digit(*w))
            return false;
        while (is_digit(*w))
            w++;
    }
    return *w == '\0';
}

/* An integer word. One that does not fit an int is refused here with the word as written
 * (it was once clipped to 2147483647 and reported as that); the validator checks the rest
 * against [lo, hi]. */
static int take_int(sched_parser *p, const char *what, const char *usage, int lo, int hi,
                    int *out)
{
    const char *w = peek(p);
    if (!w)
        return lerr(p, "missing %s (%s)", what, usage);
    if (!int_syntax(w))
        return lerr(p, "%s must be an integer, got '%.40s' (%s)", what, w, usage);
    errno = 0;
    long v = strtol(w, NULL, 10);
    if (errno == ERANGE || v > INT_MAX || v < INT_MIN)
        return lerr(p, "%s %.40s is out of range (%d..%d; %s)", what, w, lo, hi, usage);
    *out = (int)v;
    p->pos++;
    return 0;
}

static int take_float(sched_parser *p, const char *what, const char *usage, double *out)
{
    const char *w = peek(p);
    if (!w)
        return lerr(p, "missing %s (%s)", what, usage);
    if (!float_syntax(w))
        return lerr(p, "%s must be a decimal number, got '%.40s' (%s)", what, w, usage);
    *out = strtod(w, NULL);  /* overflow gives HUGE_VAL: the range check reports it */
    p->pos++;
    return 0;
}

/* ---- genes ---- */

/* method = "nearest" | "linear" | "gaussian" SIGMA | "gaussian-sv" SIGMA */
static int parse_method(sched_parser *p, pf_approx_gene *g)
{
    static const char usage[] = "nearest, linear, gaussian SIGMA or gaussian-sv SIGMA";
    const char *w = peek(p);
    if (!w)
        return lerr(p, "missing reconstruction method (%s)", usage);
    if (strcmp(w, "nearest") == 0)
        g->recon = PF_RECON_NEAREST;
    else if (strcmp(w, "linear") == 0)
        g->recon = PF_RECON_LINEAR;
    else if (strcmp(w, "gaussian") == 0)
        g->recon = PF_RECON_GAUSSIAN;
    else if (strcmp(w, "gaussian-sv") == 0)
        g->recon = PF_RECON_GAUSSIAN_SV;
    else
        return lerr(p, "unknown reconstruction method '%.40s' (expected %s)", w, usage);
    p->pos++;
    if (g->recon == PF_RECON_GAUSSIAN || g->recon == PF_RECON_GAUSSIAN_SV)
        return take_float(p, "SIGMA", "gaussian SIGMA", &g->sigma);
    return 0;
}

/* recon = "reconstruct" ("store" | "on-demand") method */
static int parse_reconstruct(sched_parser *p, pf_approx_gene *g)
{
    p->pos++;
    const char *w = peek(p);
    if (w && strcmp(w, "store") == 0)
        g->on_demand = false;
    else if (w && strcmp(w, "on-demand") == 0)
        g->on_demand = true;
    else
        return lerr(p, "expected store or on-demand after 'reconstruct', got %s%.40s%s",
                    w ? "'" : "", w ? w : "end of line", w ? "'" : "");
    p->pos++;
    return parse_method(p, g);
}

/* clauses = { "channels" C | recon }, each at most once, in any order */
static int parse_clauses(sched_parser *p, pf_approx_gene *g)
{
    int channels_line = 0, recon_seen = 0;
    for (const char *w; (w = peek(p)) != NULL;) {
        if (strcmp(w, "channels") == 0) {
            if (channels_line++)
                return lerr(p, "'channels' is given twice");
            p->pos++;
            if (take_int(p, "C", "channels C", 1, PF_GENE_MAX_CHANNELS, &g->channels))
                return -1;
        } else if (strcmp(w, "reconstruct") == 0) {
            if (recon_seen++)
                return lerr(p, "'reconstruct' is given twice");
            if (parse_reconstruct(p, g))
                return -1;
        } else {
            return lerr(p, "unexpected '%.40s' after the %s gene (expected channels or "
                        "reconstruct)", w, pf_gene_kind_name(g->kind));
        }
    }
    if (!recon_seen)
        pf_gene_set_default_recon(p->prog, (int)(p->li - p->prog->loops), g);
    return 0;
}

/* grid = "grid" INT { INT } — every word up to the next clause keyword is a spacing. */
static int parse_grid(sched_parser *p, pf_approx_gene *g)
{
    for (const char *w; (w = peek(p)) != NULL;) {
        if (strcmp(w, "channels") == 0 || strcmp(w, "reconstruct") == 0)
            break;
        int v;
        if (take_int(p, "a grid spacing", "grid S1 .. Sk", 1, PF_GENE_MAX_SPACING, &v))
            return -1;
        if (g->n_spacing < PF_BUFFER_MAX_DIMS)
            g->spacing[g->n_spacing] = v;
        g->n_spacing++;  /* counted past the array: validation reports the mismatch */
    }
    if (g->n_spacing == 0)
        return lerr(p, "missing grid spacings (grid S1 .. Sk, one per stage variable)");
    return 0;
}

/* The gene's own words, after its keyword. */
static int parse_gene_args(sched_parser *p, pf_approx_gene *g)
{
    switch (g->kind) {
    case PF_GENE_GRID: return parse_grid(p, g);
    case PF_GENE_ADAPTIVE:
        return take_int(p, "K", "adaptive K F", PF_GENE_MIN_K, PF_GENE_MAX_K, &g->k) ||
               take_float(p, "F", "adaptive K F", &g->frac);
    case PF_GENE_IMPORTANCE:
        return take_float(p, "F", "importance F SIGMA", &g->frac) ||
               take_float(p, "SIGMA", "importance F SIGMA", &g->sigma_imp);
    case PF_GENE_CHANNELS:
        return take_int(p, "C", "channels C", 1, PF_GENE_MAX_CHANNELS, &g->channels);
    case PF_GENE_STEP: return take_int(p, "N", "step N", 1, PF_GENE_MAX_STEP, &g->step);
    case PF_GENE_FIRST: return take_float(p, "F", "first F", &g->frac);
    case PF_GENE_LAST: return take_float(p, "F", "last F", &g->frac);
    case PF_GENE_RANDOM: return take_float(p, "P", "random P", &g->frac);
    default: return 0;
    }
}

static pf_gene_kind gene_keyword(const char *w)
{
    for (int k = 1; k < PF_GENE_KIND_COUNT; k++)
        if (strcmp(w, pf_gene_kind_name((pf_gene_kind)k)) == 0)
            return (pf_gene_kind)k;
    return PF_GENE_EXACT;
}

/* The words after a gene that takes no clauses. */
static int parse_gene_end(sched_parser *p, const pf_approx_gene *g)
{
    const char *w = peek(p);
    if (!w)
        return 0;
    if (g->kind == PF_GENE_CHANNELS && strcmp(w, "reconstruct") == 0)
        return lerr(p, "reconstruction needs a sampling gene (grid, adaptive or importance) "
                    "before it");
    return lerr(p, "unexpected '%.40s' after the %s gene (it takes no further clauses)", w,
                pf_gene_kind_name(g->kind));
}

/* gene = sampling clauses | "channels" C | perforation */
static int parse_gene(sched_parser *p, pf_approx_gene *g)
{
    const char *w = peek(p);
    memset(g, 0, sizeof *g);
    g->kind = gene_keyword(w);
    if (g->kind == PF_GENE_EXACT)
        return lerr(p, "unknown gene '%.40s' (expected grid, adaptive, importance, channels, "
                    "step, first, last or random)", w);
    p->pos++;
    if (parse_gene_args(p, g))
        return -1;
    if (g->kind == PF_GENE_GRID || g->kind == PF_GENE_ADAPTIVE || g->kind == PF_GENE_IMPORTANCE)
        return parse_clauses(p, g);
    return parse_gene_end(p, g);
}

/* ---- lines ---- */

/* Edit distance with a cut-off, for "did you mean". */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    int row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static int unknown_loop(sched_parser *p, const char *name)
{
    const char *best = NULL;
    int best_d = 3;  /* suggest only close names */
    for (int i = 0; i < p->prog->n_loops; i++) {
        int d = edit_distance(name, p->prog->loops[i].name);
        if (d < best_d) {
            best_d = d;
            best = p->prog->loops[i].name;
        }
    }
    const char *where = p->prog->file_name ? p->prog->file_name : p->prog->name;
    if (best)
        return perr(p, "'%.64s' is not a stage or named loop of %s (did you mean '%s'?)", name,
                    where, best);
    return perr(p, "'%.64s' is not a stage or named loop of %s", name, where);
}

/* exec_line = STAGE "exec" directive... (validated with the whole schedule, since `at` refers
 * to another stage's gene) */
static int parse_exec(sched_parser *p)
{
    if (p->li->kind != PF_LOOP_STAGE)
        return lerr(p, "'exec' applies to stages, not to for loops");
    int stage = p->li->stage->index;
    pf_exec_gene *slot = &p->s->exec[stage];
    if (slot->set)
        return lerr(p, "'%s' already has an exec line at line %d", p->li->name, slot->line);
    if (pf_exec_parse(p->prog, stage, p->words + p->pos + 1, p->n_words - p->pos - 1, slot,
                      p->err))
        return pf_fail_prefix(p->err, "%s:%d: %s", p->file, p->line, p->li->name);
    slot->line = p->line;
    return 0;
}

/* line = LOOP gene | LOOP "exec" ... */
static int parse_line(sched_parser *p)
{
    const char *name = p->words[0];
    p->li = pf_program_find_loop(p->prog, name);
    if (!p->li)
        return unknown_loop(p, name);
    int loop = (int)(p->li - p->prog->loops);
    p->pos = 1;
    if (!peek(p))
        return lerr(p, "missing gene after the loop name");
    if (at(p, "exec"))
        return parse_exec(p);
    pf_approx_gene *slot = &p->s->approx[loop];
    if (slot->kind != PF_GENE_EXACT)
        return lerr(p, "'%s' already has an approximation at line %d", name, slot->line);
    pf_approx_gene g;
    if (parse_gene(p, &g))
        return -1;
    g.line = p->line;
    if (pf_gene_validate(p->prog, loop, &g, p->err))
        return pf_fail_prefix(p->err, "%s:%d", p->file, p->line);
    *slot = g;
    return 0;
}

/* The optional first line "# perfora schedule N ...": other versions are refused. */
static int check_version(sched_parser *p, const char *line)
{
    while (is_space(*line))
        line++;
    if (*line != '#')
        return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", line + 1);
    char *save = NULL;
    const char *w1 = strtok_r(buf, " \t\r", &save);
    const char *w2 = w1 ? strtok_r(NULL, " \t\r", &save) : NULL;
    if (!w2 || strcmp(w1, "perfora") != 0 || strcmp(w2, "schedule") != 0)
        return 0;
    const char *v = strtok_r(NULL, " \t\r", &save);
    if (!v)
        return perr(p, "the version line '# perfora schedule N' has no version");
    if (strcmp(v, "1") != 0)
        return perr(p, "unsupported schedule format version '%.20s' (this perfora reads "
                    "version %d)", v, PF_SCHEDULE_VERSION);
    return 0;
}

static int parse_text(sched_parser *p, const char *text)
{
    size_t cap = 256;
    char *line = pf_xmalloc(cap);
    int rc = 0;
    for (const char *c = text; rc == 0 && *c;) {
        const char *end = strchr(c, '\n');
        size_t n = end ? (size_t)(end - c) : strlen(c);
        if (n + 1 > cap) {
            cap = n + 1;
            line = pf_xrealloc(line, cap);
        }
        memcpy(line, c, n);
        line[n] = '\0';
        p->line++;
        if (p->line == 1)
            rc = check_version(p, line);
        if (rc == 0)
            rc = split_words(p, line);
        if (rc == 0 && p->n_words > 0)
            rc = parse_line(p);
        c = end ? end + 1 : c + n;
    }
    free(line);
    return rc;
}

int pf_schedule_parse(const pf_program *prog, const char *text, const char *file_name,
                      pf_schedule *out, pf_error *err)
{
    memset(out, 0, sizeof *out);  /* pf_schedule_free is safe on it whatever happens */
    if (!prog->checked)
        return pf_fail(err, "a schedule needs a checked program");
    pf_schedule_init(out, prog);
    out->file_name = pf_xstrdup(file_name ? file_name : "<schedule>");
    sched_parser p = { .prog = prog, .file = out->file_name, .s = out, .err = err };
    if (strncmp(text, "\xef\xbb\xbf", 3) == 0)
        text += 3;  /* a UTF-8 byte order mark, as some editors write */
    /* Each gene was validated as its line was read; what spans genes (execution genes refer
     * to each other with `at`, reference images to their writers) once all are read. */
    if (parse_text(&p, text) || pf_schedule_validate_links(prog, out, err)) {
        pf_schedule_free(out);
        return -1;
    }
    return 0;
}

int pf_schedule_load(const pf_program *prog, const char *path, pf_schedule *out, pf_error *err)
{
    char *text;
    size_t len;
    memset(out, 0, sizeof *out);
    if (pf_read_file(path, PF_SCHEDULE_MAX_BYTES, &text, &len, err))
        return -1;
    int rc;
    if (strlen(text) != len)
        rc = pf_fail(err, "%s: a schedule is text, and this file contains a NUL byte", path);
    else
        rc = pf_schedule_parse(prog, text, path, out, err);
    free(text);
    return rc;
}

pf_schedule *pf_schedule_from_string(const pf_program *prog, const char *text, pf_error *err)
{
    pf_schedule *s = pf_xmalloc(sizeof *s);
    if (pf_schedule_parse(prog, text, "<schedule>", s, err)) {
        free(s);
        return NULL;
    }
    return s;
}
