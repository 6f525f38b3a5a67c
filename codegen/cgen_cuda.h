/* The host side of a GPU-lowered function as C (for `perfora export` of a CUDA variant,
 * docs/export.md): the walk of gpu_host.c (lets, `if`, loops around kernels, whole internal
 * images, each launch's grid, block, shared memory and parameter values) written out as a C
 * function that records a plan into the export's runtime (cuda_rt.h), with the kernels' table
 * and the PTX as a string. Expressions come from the C backend (cgen.h), so the host computes
 * with the language's semantics, as gpu_host.c's evaluator does. */
#ifndef PF_CODEGEN_CGEN_CUDA_H
#define PF_CODEGEN_CGEN_CUDA_H

#include "base/error.h"
#include "base/strbuf.h"
#include "codegen/gpu_ptx.h"
#include "codegen/ir.h"

/* Appends NAME_host.c to src: it defines `const pf_crt_program NAME_program` (the PTX of m,
 * its kernels, f's buffers and the walk) and includes "perfora_cuda_rt.h". Fails (err names
 * what) on what the host cannot run: a runtime call other than zeroing, a window outside a
 * kernel, a read of an image on the host. */
int pf_cgen_cuda_host(const ir_func *f, const pf_gpu_module *m, const char *name,
                      pf_strbuf *src, pf_error *err);

/* perfora_cuda_rt.h and perfora_cuda_rt.c, the runtime an export ships (cuda_rt.h, with
 * cuda_driver.c and base/error.c), as embedded at build time. */
const char *pf_cgen_cuda_runtime_header(void);
const char *pf_cgen_cuda_runtime_source(void);

#endif
