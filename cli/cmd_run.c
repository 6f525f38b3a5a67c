/* perfora run: the arguments into a pf_run_request (run/run.h), the result printed; without a
 * program, load an image and save it again (an I/O round trip). */
#include "cli/cli.h"
#include "dataset/image.h"
#include "run/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char run_usage[] =
    "usage: perfora run [FILE.pf] --in IMG [--in IMG ...] --out IMG [--out IMG ...] [options]\n"
    "       perfora run FILE.pf --dump STAGE [--schedule FILE] [options]\n"
    "  FILE.pf             the pipeline (without it: load --in and save it as --out)\n"
    "  --in IMG            an input image (PNG or JPEG), one per pipeline input, in order\n"
    "  --out IMG           an output image (.png or .jpg), one per pipeline output, in order\n"
    "  --param NAME=VALUE  override a param's default\n"
    "  --schedule FILE     run the variant a schedule describes (docs/schedule.md)\n"
    "  --backend B         jit (default: LLVM, native code), interp (reference interpreter)\n"
    "                      or c (C source compiled by cc)\n"
    "  --interp            the same as --backend interp\n"
    "  --target cuda       the GPU: NVPTX kernels of the GPU schedule (docs/gpu.md); the same\n"
    "                      as --backend cuda (--target cpu: the JIT)\n"
    "  --emit-ptx FILE     CUDA: write the kernels' PTX (also where no GPU is)\n"
    "  --time N            run N times and print the median time\n"
    "  --threads N         threads for parallel loops (default: all cores)\n"
    "  --compile-threads N threads for the JIT compile (default: one per core, up to 4;\n"
    "                      the compiled code is the same at any count)\n"
    "  --dump-ir FILE      write the final loop IR\n"
    "  --emit-llvm FILE    write the optimized LLVM IR\n"
    "  --emit-c DIR        write the generated C source, header and runtime\n"
    "  --fp-contract       JIT: fuse multiplies into the adds that use them (FMA; results\n"
    "                      then differ from the interpreter's by about an ulp per fused add;\n"
    "                      CUDA kernels always do, as nvcc does, unless --strict-float)\n"
    "  --strict-float      CUDA: round every product before its add, as the interpreter\n"
    "  --no-gpu-rows       CUDA: no register window of rows (docs/gpu.md; for comparisons)\n"
    "  --fast-math         JIT: --fp-contract, and divisions by a constant (or by one value\n"
    "                      several times) multiply by the reciprocal: Halide's default float\n"
    "                      semantics (about 1.5 ulp per division)\n"
    "  --no-vector-math    JIT: exp, log, pow... on vectors as one libm call per lane\n"
    "  --dump STAGE        print what STAGE makes and stop (--in and --out may be left out):\n"
    "                      parse, check, plan, lower, narrow, bounds, ondemand, rows\n"
    "                      (GPU plans), channels, bands, collapse, llvm;\n"
    "                      '(unchanged)' where a stage changed nothing\n";

static int add_arg(const char **list, int *n, const char *value)
{
    if (*n == PF_RUN_MAX_FILES)
        return pf_cli_usage("run", "at most %d of each option", PF_RUN_MAX_FILES);
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

static int parse_option(pf_run_request *a, const char *s, const char *v)
{
    if (strcmp(s, "--in") == 0)
        return add_arg(a->in, &a->n_in, v);
    if (strcmp(s, "--out") == 0)
        return add_arg(a->out, &a->n_out, v);
    if (strcmp(s, "--param") == 0)
        return add_arg(a->params, &a->n_params, v);
    if (strcmp(s, "--backend") == 0)
        return pf_backend_parse(v, &a->copt.backend) == 0
                   ? 0 : pf_cli_usage("run", "unknown backend '%s' (jit, interp, c, cuda)", v);
    if (strcmp(s, "--target") == 0 && strcmp(v, "cuda") != 0 && strcmp(v, "cpu") != 0)
        return pf_cli_usage("run", "unknown target '%s' (cpu, cuda)", v);
    if (strcmp(s, "--target") == 0) {
        a->copt.backend = strcmp(v, "cuda") == 0 ? PF_BACKEND_CUDA : PF_BACKEND_JIT;
        return 0;
    }
    if (strcmp(s, "--time") == 0)
        return parse_count(s, v, 100000, &a->times);
    if (strcmp(s, "--threads") == 0)
        return parse_count(s, v, 64, &a->copt.threads);
    if (strcmp(s, "--compile-threads") == 0)
        return parse_count(s, v, 8, &a->copt.compile_threads);
    if (strcmp(s, "--dump") == 0 && !pf_run_stage_known(v))
        return pf_cli_usage("run", "--dump takes parse, check, plan, lower, narrow, bounds, "
                            "ondemand, channels, bands, collapse or llvm, not '%s'", v);
    if (strcmp(s, "--schedule") == 0)
        a->schedule = v;
    else if (strcmp(s, "--dump") == 0)
        a->dump = v;
    else if (strcmp(s, "--dump-ir") == 0)
        a->copt.dump_ir = v;
    else if (strcmp(s, "--emit-llvm") == 0)
        a->copt.emit_llvm = v;
    else if (strcmp(s, "--emit-c") == 0)
        a->copt.emit_c_dir = v;
    else if (strcmp(s, "--emit-ptx") == 0)
        a->copt.emit_ptx = v;
    else
        return pf_cli_usage("run", "unknown option '%s'", s);
    return 0;
}

static bool parse_flag(pf_run_request *a, const char *s)
{
    if (strcmp(s, "--interp") == 0)
        a->copt.backend = PF_BACKEND_INTERP;
    else if (strcmp(s, "--fp-contract") == 0)
        a->copt.fp_contract = true;
    else if (strcmp(s, "--strict-float") == 0)
        a->copt.strict_float = true;
    else if (strcmp(s, "--no-gpu-rows") == 0)
        a->copt.no_gpu_rows = true;
    else if (strcmp(s, "--fast-math") == 0)
        a->copt.fast_math = true;
    else if (strcmp(s, "--no-vector-math") == 0)
        a->copt.no_vector_math = true;
    else
        return false;
    return true;
}

/* Returns 0, or the exit code (-1 for --help: exit 0). */
static int parse_run_args(int argc, char **argv, pf_run_request *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int rc = 0;
        if (strcmp(s, "--help") == 0) {
            fputs(run_usage, stdout);
            return -1;
        } else if (parse_flag(a, s)) {
            continue;
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

static int round_trip(const pf_run_request *a)
{
    if (a->n_in != 1 || a->n_out != 1 || a->n_params)
        return pf_cli_usage("run", "without a program, give exactly one --in and one --out");
    pf_error err;
    pf_image *img = pf_image_load(a->in[0], &err);
    int rc = img ? pf_image_save(img, a->out[0], &err) : -1;
    pf_image_free(img);
    if (rc != 0)
        pf_cli_error("%s", err.msg);
    return rc ? 1 : 0;
}

static int run_pipeline(const pf_run_request *a)
{
    pf_error err;
    pf_run_result r;
    if (pf_run(a, &r, &err) != 0) {
        fputs(pf_sb_str(&r.dump), stdout);  /* what the stages before the failure made */
        pf_run_result_free(&r);
        pf_cli_error("%s", err.msg);
        return 1;
    }
    fputs(pf_sb_str(&r.dump), stdout);
    if (r.runs > 0)
        printf("%s: median %.3f ms over %d runs (min %.3f, max %.3f); compile %.1f ms\n",
               pf_backend_name(a->copt.backend), r.median_ms, r.runs, r.min_ms, r.max_ms,
               r.compile_ms);
    if (r.runs > 0 && r.device)
        printf("cuda: the times are the kernels' (CUDA events); transfers apart: upload %.3f "
               "ms, download %.3f ms (medians)\n", r.upload_ms, r.download_ms);
    pf_run_result_free(&r);
    return 0;
}

int pf_cmd_run(int argc, char **argv)
{
    pf_run_request a;
    int rc = parse_run_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!a.program)
        return round_trip(&a);
    if (!a.dump && (a.n_in < 1 || a.n_out < 1))
        return pf_cli_usage("run", "--in and --out are required");
    return run_pipeline(&a);
}
