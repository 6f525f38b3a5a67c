/* The counts table of a benchmark (`perfora dataset info`): images per split x category x
 * texture class x resolution, and the mean texture of each class's photographs. */
#include "dataset/manifest.h"

#include <stdio.h>
#include <string.h>

#define MAX_RESOLUTIONS 8

typedef struct resolutions {
    int n;
    int w[MAX_RESOLUTIONS], h[MAX_RESOLUTIONS];
} resolutions;

/* The distinct resolutions, largest first (the benchmark's 820x614 before 256x192). */
static void collect_resolutions(const pf_manifest *m, resolutions *r)
{
    r->n = 0;
    for (size_t i = 0; i < m->count; i++) {
        const pf_manifest_entry *e = &m->entries[i];
        int k = 0;
        while (k < r->n && !(r->w[k] == e->width && r->h[k] == e->height))
            k++;
        if (k < r->n || r->n == MAX_RESOLUTIONS)
            continue;
        int at = r->n++;
        while (at > 0 && (long)r->w[at - 1] * r->h[at - 1] < (long)e->width * e->height) {
            r->w[at] = r->w[at - 1];
            r->h[at] = r->h[at - 1];
            at--;
        }
        r->w[at] = e->width;
        r->h[at] = e->height;
    }
}

/* Whether entry i is the first of its photo among the entries matching f. */
static int first_of_photo(const pf_manifest *m, size_t i, const pf_manifest_filter *f)
{
    for (size_t j = 0; j < i; j++)
        if (pf_manifest_entry_matches(&m->entries[j], f) &&
            strcmp(m->entries[j].photo, m->entries[i].photo) == 0)
            return 0;
    return 1;
}

typedef struct cell {
    int images[MAX_RESOLUTIONS];
    int photos;
} cell;

/* Counts the entries of split s, category c (-1 all) and texture class t (-1 all). */
static cell count_cell(const pf_manifest *m, const resolutions *r, int s, int c, int t)
{
    cell out = { { 0 }, 0 };
    pf_manifest_filter f = { s, 0, 0, c };
    for (size_t i = 0; i < m->count; i++) {
        const pf_manifest_entry *e = &m->entries[i];
        if (!pf_manifest_entry_matches(e, &f) || (t >= 0 && (int)e->texture_class != t))
            continue;
        for (int k = 0; k < r->n; k++)
            out.images[k] += r->w[k] == e->width && r->h[k] == e->height;
        out.photos += first_of_photo(m, i, &f);
    }
    return out;
}

/* One cell: the image counts per resolution joined by '/', then the photo count. */
static void print_cell(pf_strbuf *sb, const resolutions *r, cell c)
{
    char text[128];
    size_t n = 0;
    for (int k = 0; k < r->n && n < sizeof text - 16; k++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%d", k ? "/" : "", c.images[k]);
    snprintf(text + n, sizeof text - n, " (%d)", c.photos);
    pf_sb_printf(sb, " %14s", text);
}

/* One row per category and one for all: cells per texture class and for all classes. */
static void print_split(const pf_manifest *m, const resolutions *r, int s, pf_strbuf *sb)
{
    for (int c = 0; c <= PF_CAT_COUNT; c++) {
        int cat = c < PF_CAT_COUNT ? c : -1;
        pf_sb_printf(sb, "%-6s %-9s", pf_split_name((pf_split)s),
                     cat >= 0 ? pf_category_name((pf_category)cat) : "all");
        for (int t = 0; t <= PF_TEX_COUNT; t++)
            print_cell(sb, r, count_cell(m, r, s, cat, t < PF_TEX_COUNT ? t : -1));
        pf_sb_putc(sb, '\n');
    }
}

/* Mean, min and max texture over the photos (not images) of split s and class t. */
static void print_texture_stats(const pf_manifest *m, int s, int t, pf_strbuf *sb)
{
    pf_manifest_filter f = { s, 0, 0, -1 };
    double sum = 0.0, lo = 0.0, hi = 0.0;
    int n = 0;
    for (size_t i = 0; i < m->count; i++) {
        const pf_manifest_entry *e = &m->entries[i];
        if (!pf_manifest_entry_matches(e, &f) || (int)e->texture_class != t ||
            !first_of_photo(m, i, &f))
            continue;
        lo = n == 0 || e->texture < lo ? e->texture : lo;
        hi = n == 0 || e->texture > hi ? e->texture : hi;
        sum += e->texture;
        n++;
    }
    pf_sb_printf(sb, "%-6s %-7s %7d", pf_split_name((pf_split)s),
                 pf_texture_class_name((pf_texture_class)t), n);
    if (n)
        pf_sb_printf(sb, " %8.2f %8.2f %8.2f\n", sum / n, lo, hi);
    else
        pf_sb_puts(sb, "        -        -        -\n");
}

void pf_manifest_summary(const pf_manifest *m, pf_strbuf *sb)
{
    resolutions r;
    collect_resolutions(m, &r);
    pf_sb_printf(sb, "benchmark %s: %zu images\n\n", m->path, m->count);
    pf_sb_puts(sb, "images per split, category and texture class, as ");
    for (int k = 0; k < r.n; k++)
        pf_sb_printf(sb, "%s%dx%d", k ? "/" : "", r.w[k], r.h[k]);
    pf_sb_puts(sb, " (photos):\n");
    pf_sb_printf(sb, "%-6s %-9s %14s %14s %14s %14s\n", "split", "category", "low", "mid",
                 "high", "all");
    for (int s = 0; s < PF_SPLIT_COUNT; s++)
        print_split(m, &r, s, sb);
    pf_sb_printf(sb, "\nmean texture per class (per photo; low < %g, high > %g at %dx%d):\n",
                 PF_TEXTURE_LOW_BELOW, PF_TEXTURE_HIGH_ABOVE, PF_BENCH_MEDIUM_W,
                 PF_BENCH_MEDIUM_H);
    pf_sb_printf(sb, "%-6s %-7s %7s %8s %8s %8s\n", "split", "class", "photos", "mean", "min",
                 "max");
    for (int s = 0; s < PF_SPLIT_COUNT; s++)
        for (int t = 0; t < PF_TEX_COUNT; t++)
            print_texture_stats(m, s, t, sb);
}
