/* The JIT's side of the export tests (test_export_build.sh): runs APP.pf with a schedule on an
 * image through the driver, as `perfora run` does, and writes the input and the output as raw
 * float files for export_client.c to compare with an exported library's output.
 *
 *   export_ref APP.pf SCHEDULE|- IMAGE DIR    ->  DIR/in.raw, DIR/ref.raw
 *
 * Raw file: int32 ndims, int64 extents[ndims], then the floats, dimension 0 fastest. */
#include "base/arena.h"
#include "base/fileio.h"
#include "codegen/compile.h"
#include "perforate/plan.h"
#include "run/pipeline_io.h"

#include <stdio.h>
#include <stdlib.h>

static int write_raw(const char *dir, const char *name, const pf_buffer *b)
{
    char *path = pf_path_join(dir, name);
    FILE *f = fopen(path, "wb");
    free(path);
    if (!f)
        return -1;
    int32_t nd = b->ndims;
    int ok = fwrite(&nd, sizeof nd, 1, f) == 1 &&
             fwrite(b->extent, sizeof(int64_t), (size_t)nd, f) == (size_t)nd;
    int64_t e[4] = { 1, 1, 1, 1 };
    for (int d = 0; d < nd; d++)
        e[d] = b->extent[d];
    for (int64_t k = 0; ok && k < e[3]; k++)
        for (int64_t c = 0; ok && c < e[2]; c++)
            for (int64_t y = 0; ok && y < e[1]; y++) {
                const float *row = b->data + y * b->stride[1] + (nd > 2 ? c * b->stride[2] : 0) +
                                   (nd > 3 ? k * b->stride[3] : 0);
                ok = fwrite(row, sizeof(float), (size_t)e[0], f) == (size_t)e[0];
            }
    return fclose(f) == 0 && ok ? 0 : -1;
}

static int run(const char *app, const char *sched, const char *image, const char *dir,
               pf_error *err)
{
    pf_program *prog = pf_load_program(app, err);
    if (!prog)
        return -1;
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_plan_target t = pf_host_plan_target();
    pf_plan *plan = sched[0] == '-' ? pf_plan_new(prog, NULL, &t, err)
                                    : pf_plan_load(prog, sched, &t, err);
    pf_io io = { 0 };
    pf_image *in[1] = { plan ? pf_io_load_input(prog, &pv, 0, image, err) : NULL };
    int rc = in[0] ? pf_io_bind(&io, prog, &pv, in, err) : -1;
    pf_variant *v = rc == 0 ? pf_variant_build(prog, &pv, plan, NULL, err) : NULL;
    if (!v || pf_variant_run(v, io.buf, err) != 0)
        rc = -1;
    if (rc == 0 && (write_raw(dir, "in.raw", &io.buf[0]) || write_raw(dir, "ref.raw", &io.buf[1])))
        rc = pf_fail(err, "cannot write into %s", dir);
    pf_variant_free(v);
    pf_io_free(&io);
    pf_plan_free(plan);
    pf_params_free(&pv);
    pf_program_free(prog);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: export_ref APP.pf SCHEDULE|- IMAGE DIR\n");
        return 2;
    }
    pf_error err;
    if (run(argv[1], argv[2], argv[3], argv[4], &err) != 0) {
        fprintf(stderr, "export_ref: %s\n", err.msg);
        return 1;
    }
    return 0;
}
