/* Compile latency and peak RSS tables of bench_pipelines (bench_latency.h). Issue 4's targets:
 * parse to callable function < 50 ms for blur and < 150 ms for every app; `perfora run` on a
 * 2048x1536 image at most 1.5x the bytes of its images. */
#include "bench/bench_latency.h"
#include "bench/bench_util.h"

#include "base/fileio.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const all_apps[] = {
    "blur", "unsharp_mask", "bilateral_filter", "bilateral_grid", "median", "demosaic",
    "artistic_blur", "mosaic"
};
#define N_ALL (int)(sizeof all_apps / sizeof all_apps[0])

/* The phases of pf_variant_stats, in pipeline order, for the breakdown table. */
#define N_PHASES 6
static const char *const phase_names[N_PHASES] = {
    "lower", "IR passes", "LLVM emit", "optimize", "JIT setup", "codegen"
};

static void phase_times(const pf_variant *v, double out[N_PHASES])
{
    pf_variant_stats st = pf_variant_get_stats(v);
    const double t[N_PHASES] = { st.lower_ms, st.passes_ms, st.emit_ms, st.optimize_ms,
                                 st.jit_ms, st.codegen_ms };
    memcpy(out, t, sizeof t);
}

/* *t_cpu: CPU time of the process over parse + compile (every compile thread; less sensitive
 * to a loaded machine than wall time). phases[N_PHASES]: CPU ms per phase of pf_variant_build.
 * compile_threads: pf_compile_options' (0: the default, one per core). */
static int compile_once(const char *name, const char *src, int compile_threads, double *t_parse,
                        double *t_compile, double *t_cpu, double *phases, pf_error *err)
{
    double c0 = pf_cpu_ms();
    double t0 = pf_now_ms();
    pf_program *prog = pf_compile_string(name, src, err);
    if (!prog)
        return -1;
    double t1 = pf_now_ms();
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_compile_options o;
    memset(&o, 0, sizeof o);
    o.compile_threads = compile_threads;
    pf_plan_target target = pf_host_plan_target();
    pf_plan *plan = pf_plan_new(prog, NULL, &target, err);
    pf_variant *v = plan ? pf_variant_build(prog, &pv, plan, &o, err) : NULL;
    double t2 = pf_now_ms();
    int rc = v ? 0 : -1;
    if (v) {
        *t_parse = t1 - t0;
        *t_compile = t2 - t1;
        *t_cpu = pf_cpu_ms() - c0;
        phase_times(v, phases);
    }
    pf_variant_free(v);
    pf_plan_free(plan);
    pf_params_free(&pv);
    pf_program_free(prog);
    return rc;
}

/* Medians per phase, one row per app, printed after the latency table. */
typedef struct phase_row {
    const char *app;
    double ms[N_PHASES];
} phase_row;

static void print_phase_table(const phase_row *rows, int n)
{
    printf("\n## Where compile time goes: median CPU ms per phase of pf_variant_build (the "
           "default;\n"
           "## LLVM phases summed over the compile threads)\n");
    printf("%-17s", "app");
    for (int k = 0; k < N_PHASES; k++)
        printf(" %10s", phase_names[k]);
    printf("\n");
    for (int a = 0; a < n; a++) {
        printf("%-17s", rows[a].app);
        for (int k = 0; k < N_PHASES; k++)
            printf(" %10.2f", rows[a].ms[k]);
        printf("\n");
    }
}

/* rows of ph[reps][N_PHASES] -> the median of each column. */
static void phase_medians(const double *ph, int reps, double out[N_PHASES])
{
    double *col = malloc(sizeof(double) * (size_t)reps);
    for (int k = 0; k < N_PHASES; k++) {
        for (int r = 0; r < reps; r++)
            col[r] = ph[r * N_PHASES + k];
        out[k] = pf_median(col, reps);
    }
    free(col);
}

int bench_latency_table(int reps)
{
    printf("\n## Compile latency: median of %d compilations per app (JIT, default options)\n",
           reps);
    printf("# wall time; 'cpu ms' is the process's CPU time for parse + compile (median, all\n"
           "# compile threads); '1-thread' compiles as one module on one thread (compile_threads\n"
           "# 1), alternating with the default in each round; '1t/default' their medians' ratio\n");
    printf("%-17s %9s %11s %13s %9s %9s %9s %10s %9s  %s\n", "app", "parse ms", "compile ms",
           "parse+compile", "min ms", "cpu ms", "1-thread", "1t/default", "cold ms", "target");
    double *tp = malloc(sizeof(double) * (size_t)reps), *tc = malloc(sizeof(double) * (size_t)reps),
           *tt = malloc(sizeof(double) * (size_t)reps), *tu = malloc(sizeof(double) * (size_t)reps),
           *t1 = malloc(sizeof(double) * (size_t)reps);
    double *ph = malloc(sizeof(double) * (size_t)reps * N_PHASES), ph0[N_PHASES];
    phase_row rows[N_ALL];
    int n_rows = 0;
    bool first = true;
    for (int a = 0; a < N_ALL; a++) {
        char path[512], *src = NULL;
        size_t len;
        pf_error err;
        snprintf(path, sizeof path, "%s/apps/%s.pf", BENCH_SRC, all_apps[a]);
        if (pf_read_file(path, PF_SOURCE_MAX_BYTES, &src, &len, &err) != 0) {
            printf("%-17s n/a: %s\n", all_apps[a], err.msg);
            continue;
        }
        double cold = NAN, cpu0;
        bool ok = true;
        /* The first compilation of the process also initialises LLVM: shown as "cold". */
        double p0, c0;
        if (compile_once(path, src, 0, &p0, &c0, &cpu0, ph0, &err) != 0)
            ok = false;
        else if (first)
            cold = p0 + c0;
        first = false;
        for (int r = 0; ok && r < reps; r++) {
            double p1, c1, u1, ph1[N_PHASES];
            if (compile_once(path, src, 0, &tp[r], &tc[r], &tu[r], ph + r * N_PHASES, &err) != 0
                || compile_once(path, src, 1, &p1, &c1, &u1, ph1, &err) != 0) {
                ok = false;
                break;
            }
            tt[r] = tp[r] + tc[r];
            t1[r] = p1 + c1;
        }
        free(src);
        if (!ok) {
            char msg[200];
            snprintf(msg, sizeof msg, "%.190s", err.msg);
            msg[strcspn(msg, "\n")] = 0;
            printf("%-17s n/a: %s\n", all_apps[a], msg);
            continue;
        }
        double med = pf_median(tt, reps);
        double target = strcmp(all_apps[a], "blur") == 0 ? 50.0 : 150.0;
        char cold_s[16] = "";
        if (!isnan(cold))
            snprintf(cold_s, sizeof cold_s, "%.1f", cold);
        double med1 = pf_median(t1, reps);
        printf("%-17s %9.2f %11.2f %13.2f %9.2f %9.2f %9.2f %10.2f %9s  < %.0f %s\n",
               all_apps[a], pf_median(tp, reps), pf_median(tc, reps), med,
               bench_min(tt, reps), pf_median(tu, reps), med1, med1 / med, cold_s, target,
               med < target ? "ok" : "MISSED");
        rows[n_rows].app = all_apps[a];
        phase_medians(ph, reps, rows[n_rows++].ms);
    }
    print_phase_table(rows, n_rows);
    free(tp);
    free(tc);
    free(tt);
    free(tu);
    free(t1);
    free(ph);
    return 0;
}

/* ---- peak RSS of `perfora run` ---- */

/* Bytes of every image the program declares (inputs, locals, outputs) for a W x H x 3 input. */
static double image_bytes(const char *path, int w, int h, double *io_bytes, pf_error *err)
{
    bench_prog bp;
    if (bench_prog_load(&bp, path, err) != 0)
        return -1;
    int64_t ext[1][PF_MAX_DIMS] = { { w, h, 3, 1 } };
    pf_binding b;
    double total = -1;
    if (pf_bind(bp.prog, &bp.params, (const int64_t(*)[PF_MAX_DIMS])ext, &b, err) == 0) {
        total = 0;
        *io_bytes = 0;
        for (int i = 0; i < b.n_images; i++) {
            double n = 4.0;
            for (int d = 0; d < PF_MAX_DIMS; d++)
                n *= (double)b.extents[i][d];
            total += n;
            if (i < bp.prog->n_inputs + bp.prog->n_outputs)
                *io_bytes += n;
        }
        pf_binding_free(&b);
    }
    bench_prog_free(&bp);
    return total;
}

/* Runs `perfora run APP --in IN --out OUT`; returns the child's peak RSS in bytes, or -1. */
static double spawn_rss(const char *app_path, const char *in, const char *out)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open("/dev/null", 1);
        if (fd >= 0) {
            dup2(fd, 1);
            close(fd);
        }
        execl(PF_PERFORA_EXE, "perfora", "run", app_path, "--in", in, "--out", out,
              (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return (double)ru.ru_maxrss * 1024.0;
}

static int write_photo(const char *path, int w, int h)
{
    pf_error err;
    pf_image *img = bench_photo(BENCH_TRAIN "/natural_0_820x614.png", w, h, &err);
    int rc = img ? pf_image_save(img, path, &err) : -1;
    pf_image_free(img);
    if (rc != 0)
        fprintf(stderr, "bench_pipelines: %s\n", err.msg);
    return rc;
}

int bench_rss_table(void)
{
    char dir[] = "/tmp/pf-bench-rss-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char big[64], tiny[64], out[64];
    snprintf(big, sizeof big, "%s/in.png", dir);
    snprintf(tiny, sizeof tiny, "%s/tiny.png", dir);
    snprintf(out, sizeof out, "%s/out.png", dir);
    if (write_photo(big, 2048, 1536) != 0 || write_photo(tiny, 32, 24) != 0)
        return 1;
    printf("\n## Peak RSS of `perfora run APP --in 2048x1536.png --out out.png` (wait4 "
           "ru_maxrss)\n");
    printf("%-17s %9s %12s %9s %10s %12s %11s  %s\n", "app", "RSS MiB", "images MiB", "RSS/img",
           "in+out MiB", "32x24 RSS", "(RSS-base)", "target RSS/img <= 1.5");
    for (int a = 0; a < 5; a++) {
        char path[512];
        pf_error err;
        snprintf(path, sizeof path, "%s/apps/%s.pf", BENCH_SRC, all_apps[a]);
        double io = 0, img = image_bytes(path, 2048, 1536, &io, &err);
        double rss = spawn_rss(path, big, out), base = spawn_rss(path, tiny, out);
        if (img <= 0 || rss < 0 || base < 0) {
            printf("%-17s n/a (the run failed)\n", all_apps[a]);
            continue;
        }
        const double mib = 1024.0 * 1024.0;
        printf("%-17s %9.1f %12.1f %9.2f %10.1f %12.1f %11.2f  %s\n", all_apps[a], rss / mib,
               img / mib, rss / img, io / mib, base / mib, (rss - base) / img,
               rss / img <= 1.5 ? "ok" : "MISSED");
    }
    unlink(big);
    unlink(tiny);
    unlink(out);
    rmdir(dir);
    return 0;
}
