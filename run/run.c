/* `perfora run` as a library (run.h): the stages of the chain one after the other, each shown
 * by --dump, then the images. */
#include "run/run.h"

#include "base/clock.h"
#include "base/resident.h"
#include "run/pipeline_io.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static const char *const front_stages[] = { "parse", "check", "plan" };
/* Room for the compiler's stages and the terminating NULL (a stage past it is left out, so a
 * new pass that outgrows it shows in the tests of --dump, not as a read past the end). */
static const char *stage_names[sizeof front_stages / sizeof *front_stages + 16];

const char *const *pf_run_stage_names(void)
{
    if (!stage_names[0]) {
        int n = 0;
        for (size_t i = 0; i < sizeof front_stages / sizeof *front_stages; i++)
            stage_names[n++] = front_stages[i];
        for (int i = 0; pf_compile_stage_names[i] && n + 1 < (int)(sizeof stage_names /
                                                                   sizeof *stage_names); i++)
            stage_names[n++] = pf_compile_stage_names[i];
    }
    return stage_names;
}

bool pf_run_stage_known(const char *name)
{
    for (const char *const *s = pf_run_stage_names(); *s; s++)
        if (strcmp(*s, name) == 0)
            return true;
    return false;
}

static bool dumps(const pf_run_request *r, const char *stage)
{
    return r->dump && strcmp(r->dump, stage) == 0;
}

/* ---- parse, check, plan ---- */

/* The program, checked; with --dump parse or check, the stage's text too ("(unchanged)" when
 * checking printed the same: implicit casts and folded constants do not print). */
static pf_program *load(const pf_run_request *r, pf_run_result *out, pf_error *err)
{
    pf_program *prog = pf_load_unchecked(r->program, err);
    if (!prog)
        return NULL;
    pf_strbuf parsed;
    pf_sb_init(&parsed);
    if (dumps(r, "parse") || dumps(r, "check"))
        pf_print_program(prog, &parsed);
    if (dumps(r, "parse"))
        pf_sb_puts(&out->dump, pf_sb_str(&parsed));
    if (pf_check_program(prog, err) != 0) {
        pf_sb_free(&parsed);
        pf_program_free(prog);
        return NULL;
    }
    if (dumps(r, "check")) {
        pf_strbuf checked;
        pf_sb_init(&checked);
        pf_print_program(prog, &checked);
        bool same = strcmp(pf_sb_str(&checked), pf_sb_str(&parsed)) == 0;
        pf_sb_puts(&out->dump, same ? "(unchanged)\n" : pf_sb_str(&checked));
        pf_sb_free(&checked);
    }
    pf_sb_free(&parsed);
    return prog;
}

static pf_plan *make_plan(const pf_run_request *r, const pf_program *prog, pf_run_result *out,
                          pf_error *err)
{
    pf_plan_target t = pf_backend_plan_target(r->copt.backend);
    pf_plan *plan = r->schedule ? pf_plan_load(prog, r->schedule, &t, err)
                                : pf_plan_new(prog, NULL, &t, err);
    if (plan && dumps(r, "plan"))
        pf_plan_print(plan, &out->dump);
    return plan;
}

/* ---- running on images ---- */

static void free_images(pf_image **img, int n)
{
    for (int i = 0; i < n; i++)
        pf_image_free(img[i]);
}

/* Runs the variant `times` times (at least once), timing each run: the call, or on a device
 * its kernels, with the transfers' medians apart. */
static int run_timed(pf_variant *v, pf_io *io, const pf_run_request *r, pf_run_result *out,
                     pf_error *err)
{
    int n = r->times > 0 ? r->times : 1;
    double *t = pf_xmalloc(sizeof *t * (size_t)n * 3), *up = t + n, *down = t + 2 * n;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        double t0 = pf_now_ms();
        rc = pf_variant_run(v, io->buf, err);
        t[i] = pf_now_ms() - t0;
        pf_device_times d;
        if (rc == 0 && (out->device = pf_variant_device_times(v, &d))) {
            t[i] = d.kernel_ms;
            up[i] = d.upload_ms;
            down[i] = d.download_ms;
        }
    }
    if (rc == 0 && out->device) {
        out->upload_ms = pf_median(up, n);
        out->download_ms = pf_median(down, n);
    }
    if (rc == 0 && r->times > 0) {
        out->runs = n;
        out->median_ms = pf_median(t, n);
        out->min_ms = out->max_ms = t[0];
        for (int i = 1; i < n; i++) {
            out->min_ms = t[i] < out->min_ms ? t[i] : out->min_ms;
            out->max_ms = t[i] > out->max_ms ? t[i] : out->max_ms;
        }
    }
    free(t);
    return rc;
}

static int check_files(const pf_run_request *r, const pf_program *prog, pf_error *err)
{
    for (int i = 0; i < r->n_out; i++)
        if (pf_io_check_output_name(r->out[i], err))
            return -1;
    if (r->n_in != prog->n_inputs || r->n_out != prog->n_outputs)
        return pf_fail(err, "pipeline '%s' takes %d input(s) and %d output(s); got %d --in and "
                       "%d --out", prog->name, prog->n_inputs, prog->n_outputs, r->n_in,
                       r->n_out);
    return 0;
}

/* Builds before the outputs are allocated, and hands what the compiler freed (most of LLVM's
 * working memory, the decoder's buffers) back to the system, with the code pages the compile
 * touched (~10 MiB of LLVM's passes and back end, resident until dropped): the peak RSS never
 * holds LLVM's working memory and all the images at once. */
static int build_and_run(const pf_run_request *r, const pf_program *prog,
                         const pf_param_values *pv, const pf_plan *plan, pf_run_result *out,
                         pf_error *err)
{
    bool images = !r->dump;
    pf_image *inputs[PF_RUN_MAX_FILES] = { 0 };
    for (int i = 0; images && i < r->n_in; i++)
        if (!(inputs[i] = pf_io_load_input(prog, pv, i, r->in[i], err))) {
            free_images(inputs, i);
            return -1;
        }
    pf_compile_options o = r->copt;
    o.dump_stage = r->dump;
    o.dump = &out->dump;
    pf_variant *v = pf_variant_build(prog, pv, plan, &o, err);
    if (!v || !images) {
        free_images(inputs, r->n_in);
        pf_variant_free(v);
        return v ? 0 : -1;
    }
    out->compile_ms = pf_variant_compile_ms(v);
    malloc_trim(0);
    pf_drop_code_pages();
    pf_io io;
    if (pf_io_bind(&io, prog, pv, inputs, err)) {
        pf_variant_free(v);
        return -1;
    }
    int rc = run_timed(v, &io, r, out, err);
    for (int i = 0; rc == 0 && i < r->n_out; i++)
        rc = pf_image_save(io.out[i], r->out[i], err);
    pf_variant_free(v);
    pf_io_free(&io);
    return rc;
}

int pf_run(const pf_run_request *r, pf_run_result *out, pf_error *err)
{
    memset(out, 0, sizeof *out);
    pf_sb_init(&out->dump);
    if (r->dump && !pf_run_stage_known(r->dump))
        return pf_fail(err, "--dump: no stage '%s'", r->dump);
    pf_program *prog = load(r, out, err);
    if (!prog)
        return -1;
    pf_param_values pv;
    pf_params_init(&pv, prog);
    int rc = r->dump ? 0 : check_files(r, prog, err);
    for (int i = 0; rc == 0 && i < r->n_params; i++)
        rc = pf_params_set(&pv, prog, r->params[i], err);
    pf_plan *plan = NULL;
    bool front = dumps(r, "parse") || dumps(r, "check");
    if (rc == 0 && !front && !(plan = make_plan(r, prog, out, err)))
        rc = -1;
    if (rc == 0 && plan && !dumps(r, "plan"))
        rc = build_and_run(r, prog, &pv, plan, out, err);
    pf_plan_free(plan);
    pf_params_free(&pv);
    pf_program_free(prog);
    return rc;
}

void pf_run_result_free(pf_run_result *out)
{
    pf_sb_free(&out->dump);
}
