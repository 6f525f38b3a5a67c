/* The C-source backend: readable C11 from the same loop IR the JIT compiles, with a generated
 * header. Used to export variants as libraries and to inspect code (`perfora run --emit-c`).
 *
 * The generated function is `int NAME(const pf_buffer *buffers)` with the JIT's contract
 * (inputs then outputs; 0 ok, 1 allocation failure, 2 x stride not 1). It needs the runtime
 * (perfora_rt.h / perfora_rt.c, written alongside) and must be compiled as ISO C11 without
 * floating-point contraction (`cc -std=c11 -ffp-contract=off`), which keeps results equal to
 * the interpreter's. */
#ifndef PF_CODEGEN_CGEN_H
#define PF_CODEGEN_CGEN_H

#include "base/error.h"
#include "base/strbuf.h"
#include "codegen/ir.h"

/* Appends the source of NAME.c to src and of NAME.h to hdr. */
void pf_cgen(const ir_func *f, const char *name, pf_strbuf *src, pf_strbuf *hdr);

/* Writes DIR/NAME.c, DIR/NAME.h, DIR/perfora_rt.h and DIR/perfora_rt.c (creating DIR). */
int pf_cgen_write_dir(const ir_func *f, const char *name, const char *dir, pf_error *err);

/* For the other C emitter (cgen_cuda.c, the host side of a CUDA export): an expression as C with
 * the language's semantics (integer helpers of the prelude, exact float literals), and the
 * prelude that defines those helpers (static inline functions, includes). */
void pf_cgen_expr(const ir_expr *e, pf_strbuf *out);
const char *pf_cgen_prelude(void);

/* The runtime's sources as embedded at build time (for exports). */
const char *pf_cgen_runtime_header(void);
const char *pf_cgen_runtime_source(void);

#endif
