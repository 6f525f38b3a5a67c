/* perfora run: compile a pipeline with a backend and run it on images; without a program, load
 * an image and save it again (an I/O round trip). */
#include "cli/cli.h"
#include "base/resident.h"
#include "codegen/compile.h"
#include "perforate/apply.h"
#include "run/pipeline_io.h"

#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char run_usage[] =
    "usage: perfora run [FILE.pf] --in IMG [--in IMG ...] --out IMG [--out IMG ...] [options]\n"
    "  FILE.pf             the pipeline (without it: load --in and save it as --out)\n"
    "  --in IMG            an input image (PNG or JPEG), one per pipeline input, in order\n"
    "  --out IMG           an output image (.png or .jpg), one per pipeline output, in order\n"
    "  --param NAME=VALUE  override a param's default\n"
    "  --schedule FILE     run the variant a schedule describes (docs/schedule.md)\n"
    "  --backend B         jit (default: LLVM, native code), interp (reference interpreter)\n"
    "                      or c (C source compiled by cc)\n"
    "  --interp            the same as --backend interp\n"
    "  --time N            run N times and print the median time\n"
    "  --threads N         threads for parallel loops (default: all cores)\n"
    "  --compile-threads N threads for the JIT compile (default: one per core, up to 4)\n"
    "  --dump-ir FILE      write the final loop IR\n"
    "  --emit-llvm FILE    write the optimized LLVM IR\n"
    "  --emit-c DIR        write the generated C source, header and runtime\n"
    "  --fp-contract       JIT: fuse multiplies into the adds that use them (FMA; results\n"
    "                      then differ from the interpreter's by about an ulp per fused add)\n"
    "  --fast-math         JIT: --fp-contract, and divisions by a constant (or by one value\n"
    "                      several times) multiply by the reciprocal: Halide's default float\n"
    "                      semantics (about 1.5 ulp per division)\n";

#define RUN_MAX 16

typedef struct run_args {
    const char *program;
    const char *schedule;  /* --schedule FILE, or NULL: exact */
    pf_compile_options copt;
    int times;
    int n_in, n_out, n_param;
    const char *in[RUN_MAX], *out[RUN_MAX], *param[RUN_MAX];
} run_args;

static int add_arg(const char **list, int *n, const char *value)
{
    if (*n == RUN_MAX)
        return pf_cli_usage("run", "at most %d of each option", RUN_MAX);
    list[(*n)++] = value;
    return 0;
}

/* A count from 1 to max for option opt. */
static int parse_count(const char *opt, const char *v, long max, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < 1 || n > max)
        return pf_cli_usage("run", "%s takes a count from 1 to %ld", opt, max);
    *out = (int)n;
    return 0;
}

static int parse_option(run_args *a, const char *s, const char *v)
{
    if (strcmp(s, "--in") == 0)
        return add_arg(a->in, &a->n_in, v);
    if (strcmp(s, "--out") == 0)
        return add_arg(a->out, &a->n_out, v);
    if (strcmp(s, "--param") == 0)
        return add_arg(a->param, &a->n_param, v);
    if (strcmp(s, "--backend") == 0)
        return pf_backend_parse(v, &a->copt.backend) == 0
                   ? 0 : pf_cli_usage("run", "unknown backend '%s' (jit, interp, c)", v);
    if (strcmp(s, "--time") == 0)
        return parse_count(s, v, 100000, &a->times);
    if (strcmp(s, "--threads") == 0)
        return parse_count(s, v, 64, &a->copt.threads);
    if (strcmp(s, "--compile-threads") == 0)
        return parse_count(s, v, 8, &a->copt.compile_threads);
    if (strcmp(s, "--schedule") == 0)
        a->schedule = v;
    else if (strcmp(s, "--dump-ir") == 0)
        a->copt.dump_ir = v;
    else if (strcmp(s, "--emit-llvm") == 0)
        a->copt.emit_llvm = v;
    else if (strcmp(s, "--emit-c") == 0)
        a->copt.emit_c_dir = v;
    else
        return pf_cli_usage("run", "unknown option '%s'", s);
    return 0;
}

/* Returns 0, or the exit code (-1 for --help: exit 0). */
static int parse_run_args(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int rc = 0;
        if (strcmp(s, "--help") == 0) {
            fputs(run_usage, stdout);
            return -1;
        } else if (strcmp(s, "--interp") == 0) {
            a->copt.backend = PF_BACKEND_INTERP;
        } else if (strcmp(s, "--fp-contract") == 0) {
            a->copt.fp_contract = true;
        } else if (strcmp(s, "--fast-math") == 0) {
            a->copt.fast_math = true;
        } else if (s[0] == '-' && s[1] == '-' && i + 1 < argc) {
            rc = parse_option(a, s, argv[++i]);
        } else if (s[0] != '-' && !a->program) {
            a->program = s;
        } else {
            return pf_cli_usage("run", "unknown or incomplete option '%s'", s);
        }
        if (rc)
            return rc;
    }
    return 0;
}

static int round_trip(const run_args *a)
{
    if (a->n_in != 1 || a->n_out != 1 || a->n_param)
        return pf_cli_usage("run", "without a program, give exactly one --in and one --out");
    pf_error err;
    pf_image *img = pf_image_load(a->in[0], &err);
    int rc = img ? pf_image_save(img, a->out[0], &err) : -1;
    pf_image_free(img);
    if (rc != 0)
        pf_cli_error("%s", err.msg);
    return rc ? 1 : 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Runs the variant `times` times (at least once) and prints the median when timing. */
static int run_timed(pf_variant *v, pf_io *io, const run_args *a, pf_error *err)
{
    int n = a->times ? a->times : 1;
    double *t = malloc(sizeof *t * (size_t)n);
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (pf_variant_run(v, io->buf, err)) {
            free(t);
            return -1;
        }
        t[i] = now_ms() - t0;
    }
    if (a->times) {
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        double med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
        printf("%s: median %.3f ms over %d runs (min %.3f, max %.3f); compile %.1f ms\n",
               pf_backend_name(a->copt.backend), med, n, t[0], t[n - 1],
               pf_variant_compile_ms(v));
    }
    free(t);
    return 0;
}

/* Loads, validates and applies --schedule: approximations become annotations on the program,
 * execution genes go to the compiler with the schedule (freed by the caller). */
static int apply_schedule(pf_program *prog, const char *path, pf_schedule *s, pf_error *err)
{
    if (pf_schedule_load(prog, path, s, err))
        return -1;
    return pf_schedule_apply(prog, s, err);
}

static int run_with(pf_program *prog, pf_param_values *pv, const run_args *a,
                    const pf_compile_options *copt, pf_error *err);

static int run_program(pf_program *prog, pf_param_values *pv, const run_args *a, pf_error *err)
{
    for (int i = 0; i < a->n_out; i++)
        if (pf_io_check_output_name(a->out[i], err))
            return -1;
    if (a->n_in != prog->n_inputs || a->n_out != prog->n_outputs)
        return pf_fail(err, "pipeline '%s' takes %d input(s) and %d output(s); got %d --in and "
                       "%d --out", prog->name, prog->n_inputs, prog->n_outputs, a->n_in,
                       a->n_out);
    for (int i = 0; i < a->n_param; i++)
        if (pf_params_set(pv, prog, a->param[i], err))
            return -1;
    pf_schedule sched;
    memset(&sched, 0, sizeof sched);
    if (a->schedule && apply_schedule(prog, a->schedule, &sched, err)) {
        pf_schedule_free(&sched);
        return -1;
    }
    pf_compile_options copt = a->copt;
    copt.schedule = a->schedule ? &sched : NULL;
    int rc = run_with(prog, pv, a, &copt, err);
    pf_schedule_free(&sched);
    return rc;
}

static void free_images(pf_image **img, int n)
{
    for (int i = 0; i < n; i++)
        pf_image_free(img[i]);
}

static int run_with(pf_program *prog, pf_param_values *pv, const run_args *a,
                    const pf_compile_options *copt, pf_error *err)
{
    pf_image *inputs[RUN_MAX] = { 0 };
    for (int i = 0; i < a->n_in; i++)
        if (!(inputs[i] = pf_io_load_input(prog, pv, i, a->in[i], err))) {
            free_images(inputs, i);
            return -1;
        }
    /* Compiled before the outputs are allocated, and what the compiler freed (most of LLVM's
     * working memory, the decoder's buffers) handed back to the system, with the code pages
     * the compile touched (~10 MiB of LLVM's passes and back end, resident until dropped):
     * the peak RSS never holds LLVM's working memory and all the images at once. */
    pf_variant *v = pf_compile(prog, pv, copt, err);
    if (!v) {
        free_images(inputs, a->n_in);
        return -1;
    }
    malloc_trim(0);
    pf_drop_code_pages();
    pf_io io;
    if (pf_io_bind(&io, prog, pv, inputs, err)) {
        pf_variant_free(v);
        return -1;
    }
    int rc = run_timed(v, &io, a, err);
    for (int i = 0; rc == 0 && i < a->n_out; i++)
        rc = pf_image_save(io.out[i], a->out[i], err);
    pf_variant_free(v);
    pf_io_free(&io);
    return rc;
}

static int run_pipeline(const run_args *a)
{
    pf_error err;
    pf_program *prog = pf_load_program(a->program, &err);
    if (!prog) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    pf_param_values pv;
    pf_params_init(&pv, prog);
    int rc = run_program(prog, &pv, a, &err);
    if (rc)
        pf_cli_error("%s", err.msg);
    pf_params_free(&pv);
    pf_program_free(prog);
    return rc ? 1 : 0;
}

int pf_cmd_run(int argc, char **argv)
{
    run_args a;
    int rc = parse_run_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!a.program)
        return round_trip(&a);
    if (a.n_in < 1 || a.n_out < 1)
        return pf_cli_usage("run", "--in and --out are required");
    return run_pipeline(&a);
}
