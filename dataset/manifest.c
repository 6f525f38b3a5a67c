/* The benchmark manifest (manifest.h): parsing with file:line errors, printing, filtering, the
 * sha256 check and the counts summary. */
#include "dataset/manifest.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "dataset/sha256.h"
#include "dataset/tsv.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PF_MANIFEST_NAME "manifest.tsv"
#define PF_MANIFEST_MAX_BYTES ((size_t)64 << 20)

/* ORDER COLUMNS: the header, and the order parse_fields and format_entry use. */
enum {
    COL_FILE, COL_PHOTO, COL_SPLIT, COL_CATEGORY, COL_RESOLUTION, COL_TEXTURE, COL_TEXTURE_CLASS,
    COL_PACKAGE, COL_VERSION, COL_PACKAGE_PATH, COL_LICENCE, COL_SHA256, COL_COUNT
};
static const char *const column_names[COL_COUNT] = {
    "file", "photo", "split", "category", "resolution", "texture", "texture_class",
    "package", "version", "package_path", "licence", "sha256",
};

static const char *const split_names[PF_SPLIT_COUNT] = { "train", "test" };
/* ORDER CATEGORY */
static const char *const category_names[PF_CAT_COUNT] = { "man_made", "natural", "people" };
static const char *const texture_names[PF_TEX_COUNT] = { "low", "mid", "high" };

static int name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

const char *pf_split_name(pf_split s) { return split_names[s]; }
const char *pf_category_name(pf_category c) { return category_names[c]; }
const char *pf_texture_class_name(pf_texture_class t) { return texture_names[t]; }
int pf_split_parse(const char *s) { return name_index(split_names, PF_SPLIT_COUNT, s); }
int pf_category_parse(const char *s) { return name_index(category_names, PF_CAT_COUNT, s); }
int pf_texture_class_parse(const char *s) { return name_index(texture_names, PF_TEX_COUNT, s); }

pf_texture_class pf_texture_classify(double texture)
{
    if (texture < PF_TEXTURE_LOW_BELOW)
        return PF_TEX_LOW;
    return texture > PF_TEXTURE_HIGH_ABOVE ? PF_TEX_HIGH : PF_TEX_MID;
}

/* A positive decimal int that fills [s, end); -1 otherwise. */
static int parse_positive(const char *s, const char *end)
{
    long v = 0;
    if (s == end || end - s > 9)
        return -1;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v > 0 ? (int)v : -1;
}

int pf_resolution_parse(const char *s, int *width, int *height)
{
    const char *x = strchr(s, 'x');
    if (!x)
        return -1;
    int w = parse_positive(s, x), h = parse_positive(x + 1, x + strlen(x));
    if (w < 0 || h < 0)
        return -1;
    *width = w;
    *height = h;
    return 0;
}

/* --- building ------------------------------------------------------------------------------ */

pf_manifest *pf_manifest_new(const char *dir)
{
    pf_manifest *m = pf_xcalloc(1, sizeof *m);
    m->dir = pf_xstrdup(dir);
    m->path = pf_path_join(dir, PF_MANIFEST_NAME);
    return m;
}

static void entry_free(pf_manifest_entry *e)
{
    free(e->file);
    free(e->path);
    free(e->photo);
    free(e->package);
    free(e->version);
    free(e->package_path);
    free(e->licence);
}

void pf_manifest_free(pf_manifest *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->count; i++)
        entry_free(&m->entries[i]);
    free(m->entries);
    free(m->path);
    free(m->dir);
    free(m);
}

static char *resolve(const pf_manifest *m, const char *file)
{
    return file[0] == '/' ? pf_xstrdup(file) : pf_path_join(m->dir, file);
}

void pf_manifest_add(pf_manifest *m, const pf_manifest_entry *e)
{
    if (m->count == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->entries = pf_xrealloc(m->entries, m->cap * sizeof *m->entries);
    }
    pf_manifest_entry *d = &m->entries[m->count++];
    *d = *e;
    d->file = pf_xstrdup(e->file);
    d->path = resolve(m, e->file);
    d->photo = pf_xstrdup(e->photo);
    d->package = pf_xstrdup(e->package);
    d->version = pf_xstrdup(e->version);
    d->package_path = pf_xstrdup(e->package_path);
    d->licence = pf_xstrdup(e->licence);
}

/* --- parsing ------------------------------------------------------------------------------- */

static int check_header(pf_tsv *p, char **f, int n)
{
    if (n != COL_COUNT)
        return pf_tsv_fail(p, "header has %d columns; expected the %d of docs/dataset.md", n,
                           COL_COUNT);
    for (int i = 0; i < COL_COUNT; i++)
        if (strcmp(f[i], column_names[i]) != 0)
            return pf_tsv_fail(p, "header column '%s' where '%s' was expected", f[i],
                               column_names[i]);
    return 0;
}

static int parse_enum(pf_tsv *p, const char *col, const char *s, int v, int *out)
{
    if (v < 0)
        return pf_tsv_fail(p, "unknown %s '%s'", col, s);
    *out = v;
    return 0;
}

static int parse_texture(pf_tsv *p, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < 0.0)
        return pf_tsv_fail(p, "texture '%s' is not a non-negative number", s);
    *out = v;
    return 0;
}

static int parse_sha256(pf_tsv *p, const char *s, char out[65])
{
    size_t n = strspn(s, "0123456789abcdef");
    if (n != 64 || s[n])
        return pf_tsv_fail(p, "sha256 '%s' is not 64 lower-case hex digits", s);
    memcpy(out, s, 65);
    return 0;
}

static int parse_fields(pf_tsv *p, char **f, pf_manifest_entry *e)
{
    for (int i = 0; i < COL_COUNT; i++)
        if (!f[i][0])
            return pf_tsv_fail(p, "column '%s' is empty (write '-' for not applicable)",
                        column_names[i]);
    int split = 0, cat = 0, tex = 0;
    e->file = f[COL_FILE];
    e->photo = f[COL_PHOTO];
    if (parse_enum(p, "split", f[COL_SPLIT], pf_split_parse(f[COL_SPLIT]), &split) ||
        parse_enum(p, "category", f[COL_CATEGORY], pf_category_parse(f[COL_CATEGORY]), &cat) ||
        parse_enum(p, "texture class", f[COL_TEXTURE_CLASS],
                   pf_texture_class_parse(f[COL_TEXTURE_CLASS]), &tex))
        return -1;
    e->split = (pf_split)split;
    e->category = (pf_category)cat;
    e->texture_class = (pf_texture_class)tex;
    if (pf_resolution_parse(f[COL_RESOLUTION], &e->width, &e->height) != 0)
        return pf_tsv_fail(p, "resolution '%s' is not WIDTHxHEIGHT", f[COL_RESOLUTION]);
    if (parse_texture(p, f[COL_TEXTURE], &e->texture) || parse_sha256(p, f[COL_SHA256], e->sha256))
        return -1;
    if (pf_texture_classify(e->texture) != e->texture_class)
        return pf_tsv_fail(p, "texture class '%s' does not match texture %s", f[COL_TEXTURE_CLASS],
                    f[COL_TEXTURE]);
    e->package = f[COL_PACKAGE];
    e->version = f[COL_VERSION];
    e->package_path = f[COL_PACKAGE_PATH];
    e->licence = f[COL_LICENCE];
    return 0;
}

static int check_unique(pf_tsv *p, const pf_manifest *m, const char *file)
{
    for (size_t i = 0; i < m->count; i++)
        if (strcmp(m->entries[i].file, file) == 0)
            return pf_tsv_fail(p, "file '%s' is listed twice (first on line %d)", file,
                        m->entries[i].line);
    return 0;
}

/* One data or header line (already stripped of its line end). */
static int parse_line(pf_tsv *p, pf_manifest *m, char *line, int *seen_header)
{
    if (line[0] == '#' || line[0] == '\0')
        return 0;
    char *f[COL_COUNT];
    int n = pf_tsv_split(line, f, COL_COUNT);
    if (!*seen_header) {
        *seen_header = 1;
        return check_header(p, f, n);
    }
    if (n != COL_COUNT)
        return pf_tsv_fail(p, "%d fields where the header has %d", n, COL_COUNT);
    pf_manifest_entry e = { 0 };
    e.line = p->line;
    if (parse_fields(p, f, &e) != 0 || check_unique(p, m, e.file) != 0)
        return -1;
    pf_manifest_add(m, &e);
    return 0;
}

pf_manifest *pf_manifest_parse(const char *text, const char *name, const char *dir,
                               pf_error *err)
{
    pf_manifest *m = pf_manifest_new(dir);
    pf_tsv p;
    pf_tsv_begin(&p, text, name, err);
    int seen_header = 0, rc = 0;
    for (char *line; rc == 0 && (line = pf_tsv_next(&p));)
        rc = parse_line(&p, m, line, &seen_header);
    pf_tsv_end(&p);
    if (rc == 0 && !seen_header)
        rc = pf_fail(err, "%s: no header line (an empty manifest?)", name);
    if (rc != 0) {
        pf_manifest_free(m);
        return NULL;
    }
    return m;
}

/* The manifest file for a path that is either the file or its directory. */
static char *manifest_file(const char *path_or_dir, pf_error *err)
{
    struct stat st;
    if (stat(path_or_dir, &st) != 0) {
        pf_fail(err, "%s: %s", path_or_dir, strerror(errno));
        return NULL;
    }
    char *file = S_ISDIR(st.st_mode) ? pf_path_join(path_or_dir, PF_MANIFEST_NAME)
                                     : pf_xstrdup(path_or_dir);
    char *abs = realpath(file, NULL);
    if (!abs)
        pf_fail(err, "%s: %s%s", file, strerror(errno),
                S_ISDIR(st.st_mode) ? " (not a benchmark directory?)" : "");
    free(file);
    return abs;
}

pf_manifest *pf_manifest_load(const char *path_or_dir, pf_error *err)
{
    char *file = manifest_file(path_or_dir, err);
    if (!file)
        return NULL;
    char *text;
    size_t len;
    pf_manifest *m = NULL;
    if (pf_read_file(file, PF_MANIFEST_MAX_BYTES, &text, &len, err) == 0) {
        if (strlen(text) != len) {
            pf_fail(err, "%s: contains a NUL byte (not a text manifest)", file);
        } else {
            char *dir = pf_xstrdup(file);
            *strrchr(dir, '/') = '\0';
            m = pf_manifest_parse(text, file, dir[0] ? dir : "/", err);
            free(dir);
            if (m) {  /* the file read, which need not be named manifest.tsv */
                free(m->path);
                m->path = pf_xstrdup(file);
            }
        }
        free(text);
    }
    free(file);
    return m;
}

/* --- printing, checking, selecting ---------------------------------------------------------- */

static void format_entry(const pf_manifest_entry *e, pf_strbuf *sb)
{
    pf_sb_printf(sb, "%s\t%s\t%s\t%s\t%dx%d\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\n", e->file, e->photo,
                 pf_split_name(e->split), pf_category_name(e->category), e->width, e->height,
                 e->texture, pf_texture_class_name(e->texture_class), e->package, e->version,
                 e->package_path, e->licence, e->sha256);
}

void pf_manifest_format(const pf_manifest *m, pf_strbuf *sb)
{
    pf_sb_puts(sb, "# perfora image benchmark manifest; columns: docs/dataset.md\n");
    for (int i = 0; i < COL_COUNT; i++)
        pf_sb_printf(sb, "%s%c", column_names[i], i + 1 < COL_COUNT ? '\t' : '\n');
    for (size_t i = 0; i < m->count; i++)
        format_entry(&m->entries[i], sb);
}

int pf_manifest_save(const pf_manifest *m, const char *path, pf_error *err)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_manifest_format(m, &sb);
    int rc = pf_write_file_atomic(path, pf_sb_str(&sb), sb.len, err);
    pf_sb_free(&sb);
    return rc;
}

int pf_manifest_verify(const pf_manifest *m, pf_error *err)
{
    for (size_t i = 0; i < m->count; i++) {
        const pf_manifest_entry *e = &m->entries[i];
        char hex[65];
        if (pf_sha256_file(e->path, hex, err) != 0)
            return pf_fail_prefix(err, "%s:%d", m->path, e->line);
        if (strcmp(hex, e->sha256) != 0)
            return pf_fail(err, "%s:%d: %s: sha256 is %s, the manifest says %s", m->path,
                           e->line, e->file, hex, e->sha256);
    }
    return 0;
}

int pf_manifest_entry_matches(const pf_manifest_entry *e, const pf_manifest_filter *f)
{
    if (f->split >= 0 && e->split != (pf_split)f->split)
        return 0;
    if (f->category >= 0 && e->category != (pf_category)f->category)
        return 0;
    if (f->width > 0 && e->width != f->width)
        return 0;
    return f->height <= 0 || e->height == f->height;
}

char **pf_manifest_list(const pf_manifest *m, const pf_manifest_filter *f, size_t *n)
{
    char **paths = pf_xcalloc(m->count + 1, sizeof *paths);
    size_t k = 0;
    for (size_t i = 0; i < m->count; i++)
        if (pf_manifest_entry_matches(&m->entries[i], f))
            paths[k++] = pf_xstrdup(m->entries[i].path);
    if (n)
        *n = k;
    return paths;
}

void pf_manifest_list_free(char **paths)
{
    if (!paths)
        return;
    for (char **p = paths; *p; p++)
        free(*p);
    free(paths);
}
