/* perfora export: one variant as a self-contained C library (docs/export.md). From a run
 * directory's frontier (`perfora export RUN --variant K`) or from a program and a schedule
 * (`perfora export APP.pf --schedule FILE`), DIR receives NAME.h (one documented function),
 * NAME.c (its checks, and the choice of code), NAME_pipeline.c (the C backend's source of the
 * variant), perfora_rt.c/.h (the runtime it calls), NAME_aot.o (the module the JIT compiles,
 * compiled by LLVM ahead of time for this machine's CPU), CMakeLists.txt, Makefile, NAME.pc and
 * README.md. A variant searched for the GPU (or exported with `--target cuda`) becomes a CUDA
 * library instead: the same function, running the PTX of its kernels through the CUDA driver
 * (loaded at run time) from generated host code (NAME_host.c, perfora_cuda_rt.c). The
 * directory is written whole or not at all (report_dir.h). */
#ifndef PF_RESULTS_EXPORT_H
#define PF_RESULTS_EXPORT_H

#include "base/error.h"

#include <stdbool.h>

#define PF_EXPORT_MANIFEST ".perfora-export"  /* the files an export wrote, one per line */

/* The frontier's fastest variant whose error is within the run's error cap (--max-error). */
#define PF_EXPORT_FASTEST (-2)

typedef struct pf_export_options {
    const char *run;            /* a run directory of perfora tune, or NULL */
    int variant;                /* with run: the frontier variant (the report's numbering), or
                                   PF_EXPORT_FASTEST */
    const char *program;        /* without run: the .pf file */
    const char *schedule;       /* without run: the schedule file (NULL: the exact program) */
    const char *const *params;  /* without run: "name=value" overrides (a run uses its own) */
    int n_params;
    const char *out;            /* the library's directory */
    const char *name;           /* the function's and library's name (NULL: the pipeline's) */
    bool no_object;             /* no LLVM object: the C source only */
    bool cuda;                  /* without run: a CUDA library (PTX and host code; docs/export.md);
                                   a run searched with --target cuda is exported so by itself */
    bool strict_float;          /* without run, CUDA: products rounded before their adds; a run
                                   searched with --strict-float is exported so by itself */
    bool no_gpu_rows;           /* without run, CUDA: no register window of rows (likewise) */
    void (*note)(void *ctx, const char *line);  /* progress lines, or NULL */
    void *note_ctx;
} pf_export_options;

typedef struct pf_export_result {
    char *dir;                  /* o->out */
    char *name;
    bool object;                /* NAME_aot.o was written */
    char *cpu;                  /* the CPU it was compiled for (a CUDA library: the PTX's target) */
    bool cuda;                  /* a CUDA library */
} pf_export_result;

int pf_export_write(const pf_export_options *o, pf_export_result *res, pf_error *err);
void pf_export_result_free(pf_export_result *r);

#endif
