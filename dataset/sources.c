/* Parsing of the benchmark's source list (sources.h). */
#include "dataset/sources.h"

#include "base/fileio.h"
#include "dataset/tsv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PF_SOURCES_MAX_BYTES ((size_t)4 << 20)

/* ORDER SOURCE COLUMNS */
enum { S_PHOTO, S_PACKAGE, S_PATH, S_FORMAT, S_CATEGORY, S_CROP, S_LICENCE, S_EVIDENCE, S_SHA256,
       S_COUNT };
static const char *const source_columns[S_COUNT] = {
    "photo", "package", "path", "format", "category", "crop", "licence", "licence_evidence",
    "sha256",
};

int pf_source_raw_size(const char *fmt, int *width, int *height)
{
    static const char prefix[] = "rgb8-bz2:";
    if (strncmp(fmt, prefix, sizeof prefix - 1) != 0)
        return -1;
    return pf_resolution_parse(fmt + sizeof prefix - 1, width, height);
}

static int check_photo_id(pf_tsv *p, const pf_source_list *l, const char *id)
{
    if (!id[0] || strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(id))
        return pf_tsv_fail(p, "photo id '%s' must be lower-case letters, digits and '-'", id);
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].photo, id) == 0)
            return pf_tsv_fail(p, "photo id '%s' is used twice (first on line %d)", id,
                        l->items[i].line);
    return 0;
}

static int parse_crop(pf_tsv *p, const char *s, double *anchor)
{
    if (strcmp(s, "centre") == 0) {
        *anchor = 0.5;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= 0.0 && v <= 1.0))
        return pf_tsv_fail(p, "crop '%s' is neither 'centre' nor a number in [0,1]", s);
    *anchor = v;
    return 0;
}

static int check_fields(pf_tsv *p, char **f)
{
    for (int i = 0; i < S_COUNT; i++)
        if (!f[i][0])
            return pf_tsv_fail(p, "column '%s' is empty", source_columns[i]);
    if (f[S_PATH][0] != '/')
        return pf_tsv_fail(p, "path '%s' must be absolute (a path inside the package)", f[S_PATH]);
    int w, h;
    if (strcmp(f[S_FORMAT], "image") != 0 && pf_source_raw_size(f[S_FORMAT], &w, &h) != 0)
        return pf_tsv_fail(p, "format '%s' is neither 'image' nor 'rgb8-bz2:WxH'", f[S_FORMAT]);
    if (pf_category_parse(f[S_CATEGORY]) < 0)
        return pf_tsv_fail(p, "unknown category '%s' (man_made, natural or people)", f[S_CATEGORY]);
    size_t n = strspn(f[S_SHA256], "0123456789abcdef");
    if (n != 64 || f[S_SHA256][n])
        return pf_tsv_fail(p, "sha256 '%s' is not 64 lower-case hex digits", f[S_SHA256]);
    return 0;
}

static void add_source(pf_source_list *l, char **f, double anchor, int line)
{
    pf_source *s = &l->items[l->count++];
    s->photo = pf_arena_strdup(&l->arena, f[S_PHOTO]);
    s->package = pf_arena_strdup(&l->arena, f[S_PACKAGE]);
    s->path = pf_arena_strdup(&l->arena, f[S_PATH]);
    s->format = pf_arena_strdup(&l->arena, f[S_FORMAT]);
    s->licence = pf_arena_strdup(&l->arena, f[S_LICENCE]);
    s->evidence = pf_arena_strdup(&l->arena, f[S_EVIDENCE]);
    s->category = (pf_category)pf_category_parse(f[S_CATEGORY]);
    s->anchor = anchor;
    memcpy(s->sha256, f[S_SHA256], 65);
    s->line = line;
}

static int parse_source_line(pf_tsv *p, pf_source_list *l, char *line, int *seen_header)
{
    if (line[0] == '#' || line[0] == '\0')
        return 0;
    char *f[S_COUNT];
    int n = pf_tsv_split(line, f, S_COUNT);
    if (n != S_COUNT)
        return pf_tsv_fail(p, "%d fields; expected %d (%s)", n, S_COUNT,
                    "photo package path format category crop licence licence_evidence sha256");
    if (!*seen_header) {
        *seen_header = 1;
        for (int i = 0; i < S_COUNT; i++)
            if (strcmp(f[i], source_columns[i]) != 0)
                return pf_tsv_fail(p, "header column '%s' where '%s' was expected", f[i],
                            source_columns[i]);
        return 0;
    }
    double anchor = 0.5;
    if (check_fields(p, f) || check_photo_id(p, l, f[S_PHOTO]) || parse_crop(p, f[S_CROP], &anchor))
        return -1;
    add_source(l, f, anchor, p->line);
    return 0;
}

pf_source_list *pf_sources_parse(const char *text, const char *name, pf_error *err)
{
    pf_source_list *l = pf_xcalloc(1, sizeof *l);
    pf_arena_init(&l->arena);
    l->path = pf_arena_strdup(&l->arena, name);
    size_t lines = 1;
    for (const char *s = text; *s; s++)
        lines += *s == '\n';
    l->items = pf_arena_alloc(&l->arena, lines * sizeof *l->items);
    pf_tsv p;
    pf_tsv_begin(&p, text, name, err);
    int seen_header = 0, rc = 0;
    for (char *line; rc == 0 && (line = pf_tsv_next(&p));)
        rc = parse_source_line(&p, l, line, &seen_header);
    pf_tsv_end(&p);
    if (rc == 0 && !seen_header)
        rc = pf_fail(err, "%s: no header line", name);
    if (rc != 0) {
        pf_sources_free(l);
        return NULL;
    }
    return l;
}

pf_source_list *pf_sources_load(const char *path, pf_error *err)
{
    char *text;
    size_t len;
    if (pf_read_file(path, PF_SOURCES_MAX_BYTES, &text, &len, err) != 0)
        return NULL;
    pf_source_list *l = pf_sources_parse(text, path, err);
    free(text);
    return l;
}

void pf_sources_free(pf_source_list *l)
{
    if (!l)
        return;
    pf_arena_free(&l->arena);
    free(l);
}
