/* perfora dataset: build the image benchmark from Debian packages, or summarise one. */
#include "cli/cli.h"
#include "dataset/builder.h"
#include "dataset/manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILTER 64

static const char dataset_usage[] =
    "usage: perfora dataset build --out DIR [--packages-dir D] [--package PKG]... [--photo ID]...\n"
    "                             [--sources FILE] [--no-train]\n"
    "       perfora dataset info DIR|MANIFEST [--verify]\n"
    "\n"
    "build   fetches the Debian packages named in the source list (apt-get download; no root\n"
    "        needed), crops each photo to 4:3, resamples it to 820x614 and 256x192 and writes\n"
    "        DIR/manifest.tsv, DIR/test/, DIR/train/ (the paper's six) and DIR/licences/.\n"
    "  --out DIR          the benchmark directory to create (must not exist)\n"
    "  --packages-dir D   a .deb cache: packages found there are used, others saved there\n"
    "  --package PKG      only the photos of this package (repeatable)\n"
    "  --photo ID         only this photo (repeatable)\n"
    "  --sources FILE     the source list (default: dataset/sources.tsv of the source tree)\n"
    "  --no-train         leave out the six training photos\n"
    "info    prints the images per split, category, texture class and resolution, and the mean\n"
    "        texture per class; --verify also checks every file's sha256.\n";

static void print_progress(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%s\n", line);
}

typedef struct build_args {
    pf_dataset_build_opts o;
    const char *packages[MAX_FILTER + 1], *photos[MAX_FILTER + 1];
    int n_packages, n_photos;
    int no_train;
} build_args;

static int add_filter(const char **list, int *n, const char *v)
{
    if (*n == MAX_FILTER)
        return pf_cli_usage("dataset", "at most %d --package or --photo options", MAX_FILTER);
    list[(*n)++] = v;
    return 0;
}

/* Returns -1 to go on, or the exit code. */
static int parse_build_args(int argc, char **argv, build_args *a)
{
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--help") == 0) {
            fputs(dataset_usage, stdout);
            return 0;
        }
        if (strcmp(o, "--no-train") == 0) {
            a->no_train = 1;
            continue;
        }
        if (!v)
            return pf_cli_usage("dataset", "unknown or incomplete option '%s'", o);
        i++;
        if (strcmp(o, "--out") == 0)
            a->o.out_dir = v;
        else if (strcmp(o, "--packages-dir") == 0)
            a->o.packages_dir = v;
        else if (strcmp(o, "--sources") == 0)
            a->o.sources_path = v;
        else if (strcmp(o, "--package") == 0 ? add_filter(a->packages, &a->n_packages, v)
                 : strcmp(o, "--photo") == 0 ? add_filter(a->photos, &a->n_photos, v)
                                             : pf_cli_usage("dataset", "unknown option '%s'", o))
            return 2;
    }
    if (!a->o.out_dir)
        return pf_cli_usage("dataset", "build needs --out DIR");
    return -1;
}

static int cmd_build(int argc, char **argv)
{
    build_args a = { 0 };
    a.o.sources_path = PF_SOURCE_DIR "/dataset/sources.tsv";
    int rc = parse_build_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    a.o.fetch_script = PF_SOURCE_DIR "/dataset/fetch.sh";
    a.o.train_dir = a.no_train ? NULL : PF_SOURCE_DIR "/data/images/train";
    a.o.only_packages = a.n_packages ? a.packages : NULL;
    a.o.only_photos = a.n_photos ? a.photos : NULL;
    a.o.progress = print_progress;
    pf_error err;
    if (pf_dataset_build(&a.o, &err) != 0) {
        pf_cli_error("dataset build: %s", err.msg);
        return 1;
    }
    return 0;
}

static int cmd_info(int argc, char **argv)
{
    const char *where = NULL;
    int verify = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--verify") == 0)
            verify = 1;
        else if (strcmp(argv[i], "--help") == 0)
            return fputs(dataset_usage, stdout), 0;
        else if (argv[i][0] != '-' && !where)
            where = argv[i];
        else
            return pf_cli_usage("dataset", "unexpected argument '%s'", argv[i]);
    }
    if (!where)
        return pf_cli_usage("dataset", "info needs a benchmark directory or manifest");
    pf_error err;
    pf_manifest *m = pf_manifest_load(where, &err);
    if (!m || (verify && pf_manifest_verify(m, &err) != 0)) {
        pf_cli_error("%s", err.msg);
        pf_manifest_free(m);
        return 1;
    }
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_manifest_summary(m, &sb);
    fputs(pf_sb_str(&sb), stdout);
    if (verify)
        printf("\nverified: every file has its recorded sha256\n");
    pf_sb_free(&sb);
    pf_manifest_free(m);
    return 0;
}

int pf_cmd_dataset(int argc, char **argv)
{
    if (argc < 2)
        return pf_cli_usage("dataset", "expected 'build' or 'info'");
    if (strcmp(argv[1], "--help") == 0) {
        fputs(dataset_usage, stdout);
        return 0;
    }
    if (strcmp(argv[1], "build") == 0)
        return cmd_build(argc, argv);
    if (strcmp(argv[1], "info") == 0)
        return cmd_info(argc, argv);
    return pf_cli_usage("dataset", "unknown subcommand '%s'", argv[1]);
}
