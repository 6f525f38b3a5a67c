/* The image benchmark builder (builder.h): one function per step, in the order of
 * pf_dataset_build at the bottom of the file. */
#include "dataset/builder.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "dataset/image.h"
#include "dataset/manifest.h"
#include "dataset/proc.h"
#include "dataset/resample.h"
#include "dataset/sha256.h"
#include "dataset/sources.h"
#include "dataset/texture.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PF_COPYRIGHT_MAX_BYTES ((size_t)16 << 20)
#define PF_RAW_MAX_BYTES ((size_t)256 << 20)
#define PF_LOG_TAIL_BYTES 1200

/* Where the paper's training photos come from (data/images/train/README.md). */
#define PF_TRAIN_SOURCE "uva-graphics/image_perforation"
#define PF_TRAIN_PATH "proj/images/train"
#define PF_TRAIN_LICENCE "Creative Commons Flickr photo (see train/README.md)"

typedef struct build {
    const pf_dataset_build_opts *o;
    pf_source_list *sources;
    char *tmp;         /* DIR.tmp-XXXXXX, removed at the end whatever happens */
    char *stage;       /* tmp/bench: renamed to DIR when complete */
    char *work;        /* tmp/work: downloads and unpacked packages */
    pf_manifest *m;    /* resolves against stage */
    int photos;        /* built from sources */
    pf_error *err;
} build;

/* What fetch.sh reports about one package, and where it unpacked it. */
typedef struct package {
    const char *name;
    char version[256];
    char checked[32];    /* "apt-cache" or "none" */
    char *dir, *root;    /* work/NAME and work/NAME/root */
    char *copyright;     /* the text of its copyright file */
} package;

static void say(build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(build *b, const char *fmt, ...)
{
    if (!b->o->progress)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    b->o->progress(b->o->progress_ctx, line);
}

static int in_list(const char *const *list, const char *s)
{
    if (!list)
        return 1;
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return 1;
    return 0;
}

static int selected(const build *b, const pf_source *s)
{
    return in_list(b->o->only_packages, s->package) && in_list(b->o->only_photos, s->photo);
}

/* --- images -------------------------------------------------------------------------------- */

/* Writes img as PNG at stage/file and records it. */
static int write_image(build *b, const pf_image *img, const char *file, pf_manifest_entry *e)
{
    char *path = pf_path_join(b->stage, file);
    int rc = pf_image_save_png(img, path, 8, b->err);
    if (rc == 0)
        rc = pf_sha256_file(path, e->sha256, b->err);
    free(path);
    if (rc != 0)
        return -1;
    e->file = (char *)file;
    e->width = img->width;
    e->height = img->height;
    pf_manifest_add(b->m, e);
    return 0;
}

/* Texture rounded to the manifest's three decimals before it is classified, so a manifest
 * read back classifies it the same way. */
static int measure_texture(build *b, const pf_image *img, pf_manifest_entry *e)
{
    double t = pf_texture_mean(img, b->err);
    if (!isfinite(t) || t < 0.0)
        return pf_fail_prefix(b->err, "texture of %s", e->photo);
    e->texture = round(t * 1000.0) / 1000.0;
    e->texture_class = pf_texture_classify(e->texture);
    return 0;
}

/* The two benchmark sizes of one photo; the texture class comes from the 820x614 one. */
static int write_sizes(build *b, const pf_image *photo, double anchor, pf_manifest_entry *e)
{
    static const int sizes[2][2] = { { PF_BENCH_MEDIUM_W, PF_BENCH_MEDIUM_H },
                                     { PF_BENCH_LOW_W, PF_BENCH_LOW_H } };
    for (int i = 0; i < 2; i++) {
        pf_image *img = pf_resample_photo(photo, sizes[i][0], sizes[i][1], anchor, b->err);
        if (!img)
            return pf_fail_prefix(b->err, "%s", e->photo);
        char file[512];
        snprintf(file, sizeof file, "test/%s_%s_%dx%d.png", pf_category_name(e->category),
                 e->photo, sizes[i][0], sizes[i][1]);
        int rc = (i == 0 ? measure_texture(b, img, e) : 0) || write_image(b, img, file, e);
        pf_image_free(img);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* "rgb8-bz2:WxH": bzip2-compressed interleaved 8-bit RGB, rows top to bottom. */
static pf_image *decode_raw_bz2(build *b, const package *p, const char *file, const char *fmt)
{
    int w, h;
    pf_source_raw_size(fmt, &w, &h);
    char *raw = pf_path_join(p->dir, "raw.bin"), *log = pf_path_join(p->dir, "bzip2.log");
    char *argv[] = { "bzip2", "-dc", (char *)file, NULL };
    int rc = pf_run_program(argv, raw, log, b->err);
    if (rc > 0)
        pf_fail(b->err, "%s: bzip2 -dc failed (exit %d; is bzip2 installed?)", file, rc);
    char *data = NULL;
    size_t len = 0;
    pf_image *img = NULL;
    if (rc == 0 && pf_read_file(raw, PF_RAW_MAX_BYTES, &data, &len, b->err) == 0) {
        if (len != (size_t)w * (size_t)h * 3)
            pf_fail(b->err, "%s: %zu bytes decompressed, %s needs %zu", file, len, fmt,
                    (size_t)w * (size_t)h * 3);
        else if ((img = pf_image_new(w, h, 3, b->err)) != NULL)
            for (size_t i = 0; i < len; i++)
                *pf_image_at(img, (int)(i / 3 % (size_t)w), (int)(i / 3 / (size_t)w),
                             (int)(i % 3)) = (unsigned char)data[i] / 255.0f;
    }
    free(data);
    remove(raw);
    free(raw);
    free(log);
    return img;
}

/* --- one photo from its package ------------------------------------------------------------ */

static int check_source_file(build *b, const package *p, const pf_source *s, const char *file)
{
    const char *list = b->sources->path;
    struct stat st;
    if (lstat(file, &st) != 0 || !S_ISREG(st.st_mode))
        return pf_fail(b->err, "%s:%d: package %s %s has no regular file %s", list, s->line,
                       p->name, p->version, s->path);
    char hex[65];
    if (pf_sha256_file(file, hex, b->err) != 0)
        return -1;
    if (strcmp(hex, s->sha256) != 0)
        return pf_fail(b->err,
                       "%s:%d: %s in package %s %s has sha256 %s, the list expects %s: the "
                       "package changed; look at the new file and update the list",
                       list, s->line, s->path, p->name, p->version, hex, s->sha256);
    if (!strstr(p->copyright, s->evidence))
        return pf_fail(b->err,
                       "%s:%d: /usr/share/doc/%s/copyright (version %s) no longer contains "
                       "'%s'; re-read it and update the licence",
                       list, s->line, p->name, p->version, s->evidence);
    return 0;
}

static int build_photo(build *b, const package *p, const pf_source *s)
{
    char *file = pf_path_join(p->root, s->path);
    pf_image *img = NULL;
    if (check_source_file(b, p, s, file) == 0) {
        img = strcmp(s->format, "image") == 0 ? pf_image_load(file, b->err)
                                              : decode_raw_bz2(b, p, file, s->format);
        if (!img)
            pf_fail_prefix(b->err, "%s:%d", b->sources->path, s->line);
    }
    free(file);
    if (!img)
        return -1;
    pf_manifest_entry e = { .photo = (char *)s->photo, .split = PF_SPLIT_TEST,
                            .category = s->category, .package = (char *)p->name,
                            .version = (char *)p->version, .package_path = (char *)s->path,
                            .licence = (char *)s->licence };
    int rc = write_sizes(b, img, s->anchor, &e);
    pf_image_free(img);
    if (rc == 0) {
        b->photos++;
        say(b, "  %-28s %-9s texture %7.3f (%s)", s->photo, pf_category_name(s->category),
            e.texture, pf_texture_class_name(e.texture_class));
    }
    return rc;
}

/* --- one package ---------------------------------------------------------------------------- */

static int fetch_package(build *b, package *p)
{
    char logname[300];
    snprintf(logname, sizeof logname, "%s.fetch.log", p->name);
    char *log = pf_path_join(b->work, logname);
    char *argv[] = { "bash", (char *)b->o->fetch_script, (char *)p->name, p->dir,
                     (char *)b->o->packages_dir, NULL };
    say(b, "%s: fetching", p->name);
    int rc = pf_run_program(argv, NULL, log, b->err);
    if (rc > 0) {
        char *tail = pf_file_tail(log, PF_LOG_TAIL_BYTES);
        pf_fail(b->err, "package %s: %s failed (exit %d):\n%s", p->name, b->o->fetch_script, rc,
                tail);
        free(tail);
    }
    free(log);
    return rc == 0 ? 0 : -1;
}

static int read_fetch_info(build *b, package *p)
{
    char *path = pf_path_join(p->dir, "fetch.info"), *text;
    size_t len;
    int rc = pf_read_file(path, 4096, &text, &len, b->err);
    free(path);
    if (rc != 0)
        return -1;
    char sha[65] = "";
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        sscanf(line, "version %255s", p->version);
        sscanf(line, "checked %31s", p->checked);
        sscanf(line, "deb_sha256 %64s", sha);
    }
    free(text);
    if (!p->version[0] || !p->checked[0] || strlen(sha) != 64)
        return pf_fail(b->err, "package %s: fetch.sh wrote an incomplete fetch.info", p->name);
    return 0;
}

/* Reads the package's copyright file and keeps a copy in DIR/licences. */
static int take_copyright(build *b, package *p)
{
    char rel[512], out[512];
    snprintf(rel, sizeof rel, "usr/share/doc/%s/copyright", p->name);
    snprintf(out, sizeof out, "licences/%s.copyright", p->name);
    char *src = pf_path_join(p->root, rel), *dst = pf_path_join(b->stage, out);
    size_t len;
    int rc = pf_read_file(src, PF_COPYRIGHT_MAX_BYTES, &p->copyright, &len, b->err);
    if (rc != 0)
        pf_fail(b->err, "package %s %s ships no /%s: its licence cannot be checked", p->name,
                p->version, rel);
    else
        rc = pf_write_file_atomic(dst, p->copyright, len, b->err);
    free(src);
    free(dst);
    return rc;
}

static int build_package(build *b, const char *name)
{
    package p = { .name = name };
    p.dir = pf_path_join(b->work, name);
    p.root = pf_path_join(p.dir, "root");
    int rc = fetch_package(b, &p) || read_fetch_info(b, &p) || take_copyright(b, &p);
    if (rc == 0)
        say(b, "%s %s: unpacked (.deb sha256 %s)", name, p.version,
            strcmp(p.checked, "apt-cache") == 0 ? "matches apt's index" : "not in apt's index");
    for (size_t i = 0; rc == 0 && i < b->sources->count; i++) {
        const pf_source *s = &b->sources->items[i];
        if (strcmp(s->package, name) == 0 && selected(b, s))
            rc = build_photo(b, &p, s);
    }
    pf_error ignored;
    pf_remove_tree(p.dir, &ignored); /* the unpacked package is big; the tmp dir goes anyway */
    free(p.dir);
    free(p.root);
    free(p.copyright);
    return rc;
}

/* Packages in order of first appearance among the selected photos. */
static int build_packages(build *b)
{
    for (size_t i = 0; i < b->sources->count; i++) {
        const pf_source *s = &b->sources->items[i];
        int first = selected(b, s);
        for (size_t j = 0; first && j < i; j++)
            first = !(selected(b, &b->sources->items[j]) &&
                      strcmp(b->sources->items[j].package, s->package) == 0);
        if (first && build_package(b, s->package) != 0)
            return -1;
    }
    if (b->photos == 0)
        return pf_fail(b->err, "%s: no photo matches the chosen packages and photos",
                       b->sources->path);
    return 0;
}

/* --- the training photos ---------------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "CATEGORY_INDEX_WxH.png" -> category, and the photo id "paper-CATEGORY_INDEX". */
static int parse_train_name(build *b, const char *name, pf_manifest_entry *e, char *photo,
                            size_t cap)
{
    const char *res = strrchr(name, '_');
    size_t n = strlen(name);
    for (int c = 0; c < PF_CAT_COUNT; c++) {
        const char *cn = pf_category_name((pf_category)c);
        size_t k = strlen(cn);
        if (res && strncmp(name, cn, k) == 0 && name[k] == '_' && res > name + k + 1 &&
            n > 4 && strcmp(name + n - 4, ".png") == 0) {
            e->category = (pf_category)c;
            snprintf(photo, cap, "paper-%.*s", (int)(res - name), name);
            return 0;
        }
    }
    return pf_fail(b->err, "%s/%s: not named CATEGORY_INDEX_WxH.png", b->o->train_dir, name);
}

static int add_train_photo(build *b, const char *name)
{
    char photo[256], file[512];
    pf_manifest_entry e = { .split = PF_SPLIT_TRAIN, .package = PF_TRAIN_SOURCE, .version = "-",
                            .package_path = PF_TRAIN_PATH, .licence = PF_TRAIN_LICENCE };
    if (parse_train_name(b, name, &e, photo, sizeof photo) != 0)
        return -1;
    e.photo = photo;
    snprintf(file, sizeof file, "train/%s", name);
    char *src = pf_path_join(b->o->train_dir, name), *dst = pf_path_join(b->stage, file);
    pf_image *img = NULL;
    int rc = pf_copy_file(src, dst, b->err);
    if (rc == 0 && (img = pf_image_load(dst, b->err)) == NULL)
        rc = -1;
    if (rc == 0 && (rc = measure_texture(b, img, &e)) == 0)
        rc = pf_sha256_file(dst, e.sha256, b->err);
    if (rc == 0) {
        e.file = file;
        e.width = img->width;
        e.height = img->height;
        pf_manifest_add(b->m, &e);
    }
    pf_image_free(img);
    free(src);
    free(dst);
    return rc;
}

/* Every *.png of the train directory (sorted, so the manifest's order is fixed) plus its
 * README with the photos' attribution. */
static int add_train(build *b)
{
    DIR *d = opendir(b->o->train_dir);
    if (!d)
        return pf_fail(b->err, "%s: %s", b->o->train_dir, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        size_t k = strlen(de->d_name);
        if (k > 4 && strcmp(de->d_name + k - 4, ".png") == 0) {
            names = pf_xrealloc(names, (n + 1) * sizeof *names);
            names[n++] = pf_xstrdup(de->d_name);
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    int rc = n ? 0 : pf_fail(b->err, "%s: no training photos (*.png)", b->o->train_dir);
    for (size_t i = 0; i < n; i++) {
        rc = rc ? rc : add_train_photo(b, names[i]);
        free(names[i]);
    }
    free(names);
    char *readme = pf_path_join(b->o->train_dir, "README.md");
    char *copy = pf_path_join(b->stage, "train/README.md");
    struct stat st;
    if (rc == 0 && stat(readme, &st) == 0)
        rc = pf_copy_file(readme, copy, b->err);
    free(readme);
    free(copy);
    if (rc == 0)
        say(b, "train: %zu images from %s", n, b->o->train_dir);
    return rc;
}

/* --- the whole build ------------------------------------------------------------------------ */

static int make_dirs(build *b, const char *out)
{
    size_t n = strlen(out) + 16;
    b->tmp = pf_xmalloc(n);
    snprintf(b->tmp, n, "%s.tmp-XXXXXX", out);
    if (!mkdtemp(b->tmp)) {
        pf_fail(b->err, "%s: cannot create a temporary directory beside it: %s", b->tmp,
                strerror(errno));
        free(b->tmp);
        b->tmp = NULL;
        return -1;
    }
    b->stage = pf_path_join(b->tmp, "bench");
    b->work = pf_path_join(b->tmp, "work");
    char *test = pf_path_join(b->stage, "test"), *lic = pf_path_join(b->stage, "licences");
    char *train = pf_path_join(b->stage, "train");
    int rc = pf_mkdir_p(test, b->err) || pf_mkdir_p(lic, b->err) || pf_mkdir_p(b->work, b->err) ||
             (b->o->train_dir && pf_mkdir_p(train, b->err));
    free(test);
    free(lic);
    free(train);
    return rc ? -1 : 0;
}

static int finish(build *b, const char *out)
{
    char *manifest = pf_path_join(b->stage, "manifest.tsv");
    int rc = pf_manifest_save(b->m, manifest, b->err);
    free(manifest);
    if (rc == 0 && rename(b->stage, out) != 0)
        rc = pf_fail(b->err, "cannot rename %s to %s: %s", b->stage, out, strerror(errno));
    if (rc == 0)
        say(b, "%s: %zu images (%d photos built)", out, b->m->count, b->photos);
    return rc;
}

static int check_opts(const pf_dataset_build_opts *o, char **out, pf_error *err)
{
    if (!o->out_dir || !o->out_dir[0] || !o->sources_path || !o->fetch_script)
        return pf_fail(err, "dataset build: the output directory, source list and fetch "
                            "script are required");
    *out = pf_xstrdup(o->out_dir);
    for (size_t n = strlen(*out); n > 1 && (*out)[n - 1] == '/'; n--)
        (*out)[n - 1] = '\0';
    struct stat st;
    if (lstat(*out, &st) == 0)
        return pf_fail(err, "%s already exists; remove it or choose another --out", *out);
    return 0;
}

int pf_dataset_build(const pf_dataset_build_opts *o, pf_error *err)
{
    build b = { .o = o, .err = err };
    char *out = NULL;
    int rc = check_opts(o, &out, err);
    if (rc == 0 && (b.sources = pf_sources_load(o->sources_path, err)) == NULL)
        rc = -1;
    if (rc == 0)
        rc = make_dirs(&b, out);
    if (rc == 0) {
        b.m = pf_manifest_new(b.stage);
        rc = (o->train_dir && add_train(&b)) || build_packages(&b) || finish(&b, out) ? -1 : 0;
    }
    if (b.tmp) {
        pf_error ignored;
        pf_remove_tree(b.tmp, &ignored);
    }
    pf_manifest_free(b.m);
    pf_sources_free(b.sources);
    free(b.tmp);
    free(b.stage);
    free(b.work);
    free(out);
    return rc;
}
