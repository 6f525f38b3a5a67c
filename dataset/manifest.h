/* The image benchmark's manifest: one TSV file (manifest.tsv) that lists every image of a
 * benchmark directory with where it came from, its category, texture, size and split. This is
 * how `perfora run`, the search and the tests find images: give them a manifest's path or the
 * directory that holds manifest.tsv, and ask for a split and/or a resolution.
 *
 * Format (docs/dataset.md has the full description): lines starting with '#' and empty lines are
 * ignored; the first other line is the header, exactly the column names below in this order,
 * tab-separated; every further line is one image with exactly that many tab-separated fields,
 * none empty ("-" stands for "not applicable"):
 *
 *   file photo split category resolution texture texture_class package version package_path
 *   licence sha256
 *
 * e.g. "test/natural_sklearn-flower_820x614.png  sklearn-flower  test  natural  820x614  9.731
 *       low  python3-sklearn  1.2.1+dfsg-1  /usr/lib/.../flower.jpg  BSD-3-Clause  3f2a..."
 * `file` is relative to the manifest's directory. Errors name the manifest file and line. */
#ifndef PF_DATASET_MANIFEST_H
#define PF_DATASET_MANIFEST_H

#include "base/error.h"
#include "base/strbuf.h"

#include <stddef.h>

/* The paper's two benchmark resolutions (Section 6). */
#define PF_BENCH_MEDIUM_W 820
#define PF_BENCH_MEDIUM_H 614
#define PF_BENCH_LOW_W 256
#define PF_BENCH_LOW_H 192
/* The paper's texture thresholds, on mean texturedness at 820x614 (0..255 scale). */
#define PF_TEXTURE_LOW_BELOW 12.0
#define PF_TEXTURE_HIGH_ABOVE 15.0

typedef enum pf_split { PF_SPLIT_TRAIN, PF_SPLIT_TEST, PF_SPLIT_COUNT } pf_split;
/* ORDER CATEGORY: names in manifest.c's category_names. */
typedef enum pf_category {
    PF_CAT_MAN_MADE, /* cities, bridges, streets, objects */
    PF_CAT_NATURAL,  /* water, landscapes, plants, animals */
    PF_CAT_PEOPLE,   /* portraits, crowds */
    PF_CAT_COUNT
} pf_category;
typedef enum pf_texture_class {
    PF_TEX_LOW,  /* mean texture < 12 */
    PF_TEX_MID,  /* 12 .. 15: in neither of the paper's classes */
    PF_TEX_HIGH, /* > 15 */
    PF_TEX_COUNT
} pf_texture_class;

const char *pf_split_name(pf_split s);
const char *pf_category_name(pf_category c);
const char *pf_texture_class_name(pf_texture_class t);
/* Name -> value; -1 for an unknown name. */
int pf_split_parse(const char *s);
int pf_category_parse(const char *s);
int pf_texture_class_parse(const char *s);
pf_texture_class pf_texture_classify(double texture);
/* "820x614" -> 820, 614; -1 unless two positive integers joined by 'x'. */
int pf_resolution_parse(const char *s, int *width, int *height);

typedef struct pf_manifest_entry {
    char *file;            /* as written in the manifest: relative to its directory */
    char *path;            /* absolute: the manifest's directory joined with file */
    char *photo;           /* one photograph's id, shared by its two sizes */
    pf_split split;
    pf_category category;
    int width, height;
    double texture;        /* mean texturedness of the photo (see texture.h) */
    pf_texture_class texture_class;
    char *package;         /* Debian package (or other source) the photo came from */
    char *version;         /* the package's exact version */
    char *package_path;    /* the original file's path inside the package */
    char *licence;         /* as the package's copyright file states it */
    char sha256[65];       /* of the file, lower-case hex */
    int line;              /* line in the manifest file (0 when built in memory) */
} pf_manifest_entry;

typedef struct pf_manifest {
    char *path;                 /* absolute path of the manifest file */
    char *dir;                  /* absolute path of its directory */
    pf_manifest_entry *entries;
    size_t count, cap;
} pf_manifest;

/* The benchmark used when none is named (dataset/default_dir.c): $PERFORA_DATASET when set;
 * else the first directory holding a manifest.tsv among data/images next to the pipeline's
 * directory (apps/blur.pf: apps/../data/images) or inside it, in the working directory, in
 * PREFIX/share/perfora for an installed perfora (PREFIX/bin/perfora), and in the source tree it
 * was built from. NULL with the places tried when there is none. */
#define PF_DATASET_ENV "PERFORA_DATASET"
char *pf_dataset_default(const char *program, pf_error *err);

/* Loads a manifest from a manifest file's path or from a directory holding manifest.tsv.
 * Checks the format only (not that the files exist: see pf_manifest_verify). */
pf_manifest *pf_manifest_load(const char *path_or_dir, pf_error *err);
/* Parses manifest text; `name` is used in messages, `dir` (absolute) resolves the files. */
pf_manifest *pf_manifest_parse(const char *text, const char *name, const char *dir,
                               pf_error *err);
/* An empty manifest whose files resolve against dir. */
pf_manifest *pf_manifest_new(const char *dir);
void pf_manifest_free(pf_manifest *m);

/* Appends a copy of e (its strings are copied; e->path is recomputed from file). */
void pf_manifest_add(pf_manifest *m, const pf_manifest_entry *e);
/* The manifest as TSV text (header included), one line per entry in order. */
void pf_manifest_format(const pf_manifest *m, pf_strbuf *sb);
/* Writes pf_manifest_format atomically to path. */
int pf_manifest_save(const pf_manifest *m, const char *path, pf_error *err);
/* Checks that every file exists and has its recorded sha256; the first mismatch fails, naming
 * the manifest line. */
int pf_manifest_verify(const pf_manifest *m, pf_error *err);

/* Selects entries: split < 0 means any split, width/height 0 means any resolution,
 * category < 0 any category. */
typedef struct pf_manifest_filter {
    int split;
    int width, height;
    int category;
} pf_manifest_filter;
#define PF_MANIFEST_ANY ((pf_manifest_filter){ -1, 0, 0, -1 })

int pf_manifest_entry_matches(const pf_manifest_entry *e, const pf_manifest_filter *f);
/* The absolute paths of the matching entries, in manifest order, as a NULL-terminated array
 * (*n gets the count); free with pf_manifest_list_free. */
char **pf_manifest_list(const pf_manifest *m, const pf_manifest_filter *f, size_t *n);
void pf_manifest_list_free(char **paths);

/* The counts table of `perfora dataset info`: category x texture class x resolution, split
 * counts and mean texture per class. */
void pf_manifest_summary(const pf_manifest *m, pf_strbuf *sb);

#endif
