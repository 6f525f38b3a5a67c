/* perfora export: one variant as a self-contained C library (results/export.h;
 * docs/export.md). Wiring only: options, progress on stderr, the directory on stdout. */
#include "cli/cli.h"
#include "results/export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char export_usage[] =
    "usage: perfora export RUN --variant K --out DIR [--name NAME] [--no-object] [--quiet]\n"
    "       perfora export APP.pf [--schedule FILE] [--param NAME=VALUE ...] --out DIR\n"
    "                      [--target cuda [--strict-float] [--no-gpu-rows]] [--name NAME]\n"
    "                      [--no-object] [--quiet]\n"
    "  RUN              a run directory of perfora tune; K numbers its frontier as perfora\n"
    "                   report does (variant 0: the lowest error), or 'fastest': the fastest\n"
    "                   variant within the run's error cap (--max-error of perfora tune)\n"
    "  APP.pf           a pipeline, with a schedule file (default: the exact program)\n"
    "  --out DIR        the library's directory (absent, empty, or an earlier export)\n"
    "  --name NAME      the function and library name (default: the pipeline's)\n"
    "  --no-object      the C source only, no object compiled by LLVM for this CPU\n"
    "  --target cuda    a CUDA library (a run searched with --target cuda is one by itself)\n"
    "  --strict-float   CUDA: round every product before its add (default: fused, as nvcc)\n"
    "  --no-gpu-rows    CUDA: no register window of rows (a run exports as it was searched)\n"
    "Writes NAME.h, NAME.c, NAME_pipeline.c, perfora_rt.c/.h, NAME_aot.o, CMakeLists.txt,\n"
    "Makefile, NAME.pc and README.md, and prints the directory. A CUDA library has\n"
    "NAME_host.c (the kernels' PTX and the host code) and perfora_cuda_rt.c/.h instead of\n"
    "NAME_pipeline.c, perfora_rt.c/.h and NAME_aot.o.\n";

#define EXPORT_MAX_PARAMS 64

static void note(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%s\n", line);
}

/* A directory holding config.json is a run; anything else is a program. */
static bool is_run(const char *path)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/config.json", path);
    FILE *f = fopen(p, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

static int parse_variant(const char *s, int *out)
{
    if (strcmp(s, "fastest") == 0) {
        *out = PF_EXPORT_FASTEST;
        return 0;
    }
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

int pf_cmd_export(int argc, char **argv)
{
    pf_export_options o = { .variant = -1 };
    bool variant = false;
    const char *params[EXPORT_MAX_PARAMS], *source = NULL;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        bool arg = i + 1 < argc;
        if (strcmp(s, "--help") == 0) {
            fputs(export_usage, stdout);
            return 0;
        } else if (strcmp(s, "--variant") == 0 && arg) {
            if (parse_variant(argv[++i], &o.variant))
                return pf_cli_usage("export", "--variant '%s': a frontier index 0, 1, 2, ... "
                                    "or fastest", argv[i]);
            variant = true;
        } else if (strcmp(s, "--out") == 0 && arg) {
            o.out = argv[++i];
        } else if (strcmp(s, "--name") == 0 && arg) {
            o.name = argv[++i];
        } else if (strcmp(s, "--schedule") == 0 && arg) {
            o.schedule = argv[++i];
        } else if (strcmp(s, "--param") == 0 && arg) {
            if (o.n_params == EXPORT_MAX_PARAMS)
                return pf_cli_usage("export", "at most %d --param", EXPORT_MAX_PARAMS);
            params[o.n_params++] = argv[++i];
        } else if (strcmp(s, "--no-object") == 0) {
            o.no_object = true;
        } else if (strcmp(s, "--target") == 0 && arg) {
            if (strcmp(argv[++i], "cuda") != 0)
                return pf_cli_usage("export", "--target '%s': 'cuda' (the CPU is the default)",
                                    argv[i]);
            o.cuda = true;
        } else if (strcmp(s, "--strict-float") == 0) {
            o.strict_float = true;
        } else if (strcmp(s, "--no-gpu-rows") == 0) {
            o.no_gpu_rows = true;
        } else if (strcmp(s, "--quiet") == 0) {
            quiet = true;
        } else if (s[0] != '-' && !source) {
            source = s;
        } else {
            return pf_cli_usage("export", "unknown or incomplete option '%s'", s);
        }
    }
    if (!source)
        return pf_cli_usage("export", "what to export? a run directory or a .pf program");
    if (!o.out)
        return pf_cli_usage("export", "where to? (--out DIR)");
    if (is_run(source)) {
        if (!variant)
            return pf_cli_usage("export", "which variant of the run? (--variant K; perfora "
                                "report lists them)");
        if (o.schedule || o.n_params || o.cuda || o.strict_float || o.no_gpu_rows)
            return pf_cli_usage("export", "a run's variant has its schedule, params, target and "
                                "float semantics; --schedule, --param, --target, --strict-float "
                                "and --no-gpu-rows are for a .pf program");
        o.run = source;
    } else {
        if (variant)
            return pf_cli_usage("export", "--variant is for a run directory, and %s is not one "
                                "(no config.json)", source);
        if ((o.strict_float || o.no_gpu_rows) && !o.cuda)
            return pf_cli_usage("export", "--strict-float and --no-gpu-rows are for --target cuda");
        o.program = source;
    }
    o.params = params;
    o.note = quiet ? NULL : note;
    pf_export_result res;
    pf_error err;
    if (pf_export_write(&o, &res, &err) != 0) {
        pf_cli_error("export: %s", err.msg);
        return 1;
    }
    printf("%s\n", res.dir);
    if (!quiet)
        fprintf(stderr, "export: %s: library %s, %s\n", res.dir, res.name,
                res.cuda ? "CUDA kernels (PTX) and host code"
                : res.object ? "C source and an LLVM object for this CPU" : "C source");
    pf_export_result_free(&res);
    return 0;
}
