/* The list of photographs the image benchmark is built from (dataset/sources.tsv): for each,
 * the Debian package and the file inside it, how to decode it, its category, where to crop, its
 * licence and the sha256 the file must have. Format: '#' comments and empty lines ignored; a
 * header line with exactly the column names below; then one photo per line, tab-separated:
 *
 *   photo  package  path  format  category  crop  licence  licence_evidence  sha256
 *
 * photo: the id, [a-z0-9-] only (it becomes part of file names); path: absolute inside the
 * package; format: "image" (PNG or JPEG, by content) or "rgb8-bz2:WxH" (bzip2-compressed raw
 * 8-bit RGB, rows top to bottom, as scipy ships its raccoon); crop: "centre" or the anchor in
 * [0,1] along the axis that the 4:3 crop shortens (0 = top/left); licence: what the manifest
 * records; licence_evidence: a string the package's copyright file must contain (so a licence
 * change upstream stops the build instead of going unnoticed). Errors name the file and line. */
#ifndef PF_DATASET_SOURCES_H
#define PF_DATASET_SOURCES_H

#include "base/arena.h"
#include "base/error.h"
#include "dataset/manifest.h"

typedef struct pf_source {
    const char *photo, *package, *path, *format, *licence, *evidence;
    pf_category category;
    double anchor;       /* crop anchor, 0.5 = centre */
    char sha256[65];     /* of the file inside the package */
    int line;            /* in the sources file */
} pf_source;

typedef struct pf_source_list {
    pf_arena arena;      /* owns every string */
    const char *path;
    pf_source *items;
    size_t count;
} pf_source_list;

pf_source_list *pf_sources_load(const char *path, pf_error *err);
pf_source_list *pf_sources_parse(const char *text, const char *name, pf_error *err);
void pf_sources_free(pf_source_list *l);

/* Parses a "rgb8-bz2:WxH" format; -1 when fmt is not one. */
int pf_source_raw_size(const char *fmt, int *width, int *height);

#endif
