/* What the parts of perfora export share: the variant to export and where it came from
 * (export_source.c: a run's frontier, or a program and a schedule), the library's public
 * function (export_api.c: NAME.h, NAME.c), its build files (export_build.c: CMakeLists.txt,
 * Makefile, NAME.pc, README.md). export.c strings them together. */
#ifndef PF_RESULTS_EXPORT_INTERNAL_H
#define PF_RESULTS_EXPORT_INTERNAL_H

#include "base/strbuf.h"
#include "lang/lang.h"
#include "results/export.h"

#include <stdbool.h>

/* A measured number of the run, on one image set. */
typedef struct pf_export_measure {
    bool have;
    int images;
    double speedup;            /* 1 / mean relative time */
    double time_lo, time_hi;   /* the relative time's spread (quartile means) */
    double error, psnr, ssim;
} pf_export_measure;

typedef struct pf_export_source {
    pf_program *prog;
    pf_param_values pv;
    char *schedule;            /* the schedule's text */
    char *origin;              /* one line: where the variant comes from */
    char *genes;               /* the genes in words, one per line */
    pf_export_measure train, test;
    char *metric;              /* the error's name and units, for the header */
    char *run_host;            /* the CPU or host the run measured on, or NULL */
    bool cuda;                 /* searched with --target cuda, or exported with it */
    bool strict_float;         /* CUDA: as the run was searched, or as asked */
    bool no_gpu_rows;
} pf_export_source;

/* Reads the variant (export_source.c): from o->run's frontier, or o->program and
 * o->schedule. */
int pf_export_source_load(const pf_export_options *o, pf_export_source *s, pf_error *err);
void pf_export_source_free(pf_export_source *s);

/* What the generated files need to know besides the source. */
typedef struct pf_export_target {
    const char *name;          /* the function, the library */
    bool object;               /* NAME_aot.o is there */
    const char *triple, *cpu, *features;  /* what the object was compiled for */
    bool cuda;                 /* a GPU variant: PTX and host code (export_cuda.c) */
    int kernels;               /* cuda: the PTX's kernels */
    const char *gpu_arch;      /* cuda: what the PTX is for ("sm_80") */
} pf_export_target;

/* NAME.h (export_header.c) and NAME.c (export_api.c). Fails on a program whose signature an
 * export cannot check (an output extent that is neither a size name nor a constant). */
int pf_export_api(const pf_export_source *s, const pf_export_target *t, pf_strbuf *h,
                  pf_strbuf *c, pf_error *err);
void pf_export_header(const pf_export_source *s, const pf_export_target *t, pf_strbuf *h);
/* Shared by the two (export_api.c): the function's signature; extent d of img as a size
 * name (*size) or a constant (*value), -1 with err (may be NULL) when neither; the x86
 * features the object was compiled with, as a readable list (words) or as a condition of
 * __builtin_cpu_supports calls. */
void pf_export_signature(const pf_export_source *s, const pf_export_target *t, pf_strbuf *out);
int pf_export_extent(const pf_export_source *s, const pf_image_decl *img, int d,
                     const char **size, int32_t *value, pf_error *err);
void pf_export_cpu_checks(const pf_export_target *t, bool words, pf_strbuf *out);
/* Parts of NAME.c both exports write: check_image, view and check_all; the start of the
 * function's body (its checks, then `pf_buffer b[]` of the arguments); NAME_error_string. */
int pf_export_checks(const pf_export_source *s, const pf_export_target *t, pf_strbuf *c,
                     pf_error *err);
void pf_export_views(const pf_export_source *s, pf_strbuf *c);
void pf_export_error_strings(const pf_export_target *t, pf_strbuf *c);
/* A CUDA variant (export_cuda.c): NAME_host.c (its PTX and host code) and the runtime into
 * tmp; export_cuda_api.c writes its NAME.c and the GPU's functions of NAME.h. */
int pf_export_cuda(const pf_export_options *o, const pf_export_source *s,
                   pf_export_target *t, const char *tmp, pf_error *err);
int pf_export_cuda_source(const pf_export_source *s, const pf_export_target *t, pf_strbuf *c,
                          pf_error *err);
void pf_export_cuda_functions(const pf_export_source *s, const pf_export_target *t,
                              pf_strbuf *h);
/* NAME in capitals, for macros (export_api.c). */
void pf_export_upper(const char *s, char *out, size_t n);
/* DIR/NAMESUFFIX written atomically (export.c). */
int pf_export_write_text(const char *dir, const char *name, const char *suffix,
                         const pf_strbuf *sb, pf_error *err);
/* CMakeLists.txt, Makefile, NAME.pc, README.md (export_build.c). */
void pf_export_cmake(const pf_export_target *t, pf_strbuf *out);
void pf_export_makefile(const pf_export_target *t, pf_strbuf *out);
void pf_export_pc(const pf_export_source *s, const pf_export_target *t, pf_strbuf *out);
void pf_export_readme(const pf_export_source *s, const pf_export_target *t, pf_strbuf *out);

#endif
