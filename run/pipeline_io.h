/* Images in, images out: binding a program's declared inputs and outputs to photos. Loads
 * inputs with the paper's conventions (a 3-channel input gets RGB: grey replicated, alpha
 * dropped), checks them against the declarations with pf_bind, and allocates outputs with the
 * bound extents. Used by `perfora run`, the search's evaluation and exports' tests. */
#ifndef PF_RUN_PIPELINE_IO_H
#define PF_RUN_PIPELINE_IO_H

#include "base/buffer.h"
#include "dataset/image.h"
#include "lang/lang.h"

#define PF_IO_MAX 16

typedef struct pf_io {
    int n_in, n_out;
    pf_image *in[PF_IO_MAX];     /* owned */
    pf_image *out[PF_IO_MAX];    /* owned */
    pf_buffer buf[2 * PF_IO_MAX];  /* inputs then outputs: what pf_variant_run takes */
    pf_binding binding;
    bool bound;
} pf_io;

/* Loads the image at `path` as input i of prog (converting as the declaration asks). */
pf_image *pf_io_load_input(const pf_program *prog, const pf_param_values *params, int i,
                           const char *path, pf_error *err);

/* Takes ownership of inputs[0 .. prog->n_inputs - 1] (already converted, e.g. by
 * pf_io_load_input), binds them and allocates the outputs. On failure the inputs are freed. */
int pf_io_bind(pf_io *io, const pf_program *prog, const pf_param_values *params,
               pf_image **inputs, pf_error *err);

/* Refuses an output file name whose format cannot be told from its extension. */
int pf_io_check_output_name(const char *path, pf_error *err);

void pf_io_free(pf_io *io);

#endif
