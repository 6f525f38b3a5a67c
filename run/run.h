/* `perfora run` as a library: load a program, plan its schedule, build the variant with the
 * driver (codegen/compile.h), run it on image files and save the outputs, or stop after any
 * stage and hand back what that stage made (--dump). cli/cmd_run.c parses the arguments into
 * a pf_run_request and prints the pf_run_result.
 *
 *   .pf --parse--> AST --check--> checked program --plan (schedule, host)--> plan
 *       --pf_variant_build (lower, passes, llvm | cc | interpreter)--> variant --run--> images */
#ifndef PF_RUN_RUN_H
#define PF_RUN_RUN_H

#include "base/error.h"
#include "base/strbuf.h"
#include "codegen/compile.h"

#define PF_RUN_MAX_FILES 16

typedef struct pf_run_request {
    const char *program;          /* the .pf file */
    const char *schedule;         /* a schedule file, or NULL: the exact program */
    int n_params, n_in, n_out;
    const char *params[PF_RUN_MAX_FILES];  /* "name=value" overrides */
    const char *in[PF_RUN_MAX_FILES];      /* one image per pipeline input */
    const char *out[PF_RUN_MAX_FILES];     /* one per pipeline output (.png, .jpg) */
    int times;                    /* > 0: run this many times and time each run */
    pf_compile_options copt;      /* the backend and how it compiles (dump fields unused) */
    /* A stage to show instead of running (pf_run_stage_names): its output goes to
     * pf_run_result.dump, and nothing is run or written; in and out may then be empty. */
    const char *dump;
} pf_run_request;

typedef struct pf_run_result {
    int runs;                     /* timed runs (request.times) */
    double median_ms, min_ms, max_ms;
    double compile_ms;            /* the driver's, as pf_variant_compile_ms */
    /* A device backend (CUDA): the times above are the kernels' (CUDA events), and these the
     * medians of the transfers, which are not part of them. */
    bool device;
    double upload_ms, download_ms;
    pf_strbuf dump;               /* request.dump's text (initialized by pf_run) */
} pf_run_result;

/* Does what r asks. *out is initialized here; free it with pf_run_result_free. */
int pf_run(const pf_run_request *r, pf_run_result *out, pf_error *err);
void pf_run_result_free(pf_run_result *out);

/* The stages --dump may name, in order, NULL-terminated: "parse", "check", "plan", then the
 * driver's (pf_compile_stage_names: "lower", each pass, "llvm"). */
const char *const *pf_run_stage_names(void);
/* Whether name is one of them. */
bool pf_run_stage_known(const char *name);

#endif
