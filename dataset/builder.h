/* The image benchmark builder (`perfora dataset build`): fetches the Debian packages named in a
 * source list (dataset/sources.tsv) with dataset/fetch.sh, checks each photo's sha256 and each
 * package's licence, crops every photo to 4:3 and resamples it to 820x614 and 256x192
 * (resample.h), measures its texture at 820x614 (texture.h), and writes a benchmark directory:
 *
 *   DIR/manifest.tsv                       every image, train + test (manifest.h)
 *   DIR/train/...                          the paper's six training photos, copied as they are
 *   DIR/test/CATEGORY_PHOTO_WxH.png        the built photos (8-bit RGB PNG)
 *   DIR/licences/PACKAGE.copyright         each source package's copyright file
 *
 * The build happens in DIR.tmp-XXXXXX beside DIR, renamed to DIR only when complete: a failure
 * (missing package, missing file, changed file, changed licence) leaves no DIR and no temporary
 * directory behind. Same inputs give byte-identical outputs (no timestamps anywhere). */
#ifndef PF_DATASET_BUILDER_H
#define PF_DATASET_BUILDER_H

#include "base/error.h"

typedef struct pf_dataset_build_opts {
    const char *out_dir;       /* must not exist */
    const char *sources_path;  /* the source list (dataset/sources.tsv) */
    const char *fetch_script;  /* dataset/fetch.sh */
    const char *train_dir;     /* the six training photos (data/images/train), or NULL */
    const char *packages_dir;  /* .deb cache: used when it holds a package, filled when not;
                                  NULL: download every package into the temporary directory */
    const char *const *only_packages; /* NULL-terminated; NULL = every package */
    const char *const *only_photos;   /* NULL-terminated; NULL = every photo */
    /* Progress lines (no newline) for the caller to show; may be NULL. */
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
} pf_dataset_build_opts;

int pf_dataset_build(const pf_dataset_build_opts *opts, pf_error *err);

#endif
