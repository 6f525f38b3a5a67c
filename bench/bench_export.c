/* Exported library against the JIT (docs/export.md): for the paper's blur variant and the
 * perforated schedule of every app in tests/export/schedules/, perfora export writes the
 * library, make builds it (shared, -O3), and the bench loads it with dlopen; then, on one
 * 820x614 photo (natural_0) at 1 and 2 threads, rounds that time a block of calls of each (in alternating
 * order) give one ratio exported/JIT per round; the median ratio is printed, with the
 * outputs' largest difference. Ratios measured in one run, pair by pair: on a shared machine
 * only these mean anything (label them with the load the header prints).
 *
 *   bench_export [ROUNDS [CASE...]]   (default 15 rounds, every case; CASE: blur_paper or an
 *                                     app of the schedules)
 *
 * Under callgrind, instructions instead of time (one call of each at 1 thread on a 256x192
 * photo; the collected functions are the two calls, after a warm-up call of each):
 *   valgrind --tool=callgrind --instr-atstart=no --toggle-collect=jit_once \
 *       --toggle-collect=export_once bench_export --instructions CASE
 * (CASE: blur_paper or an app of the schedules; instrumentation starts after the compiles) */
#include "bench/bench_util.h"
#include "codegen/runtime.h"
#include "results/export.h"

#include <dirent.h>
#include <dlfcn.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>  /* instrumentation starts at the calls (--instr-atstart=no) */
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*export_fn)(const float *, const int64_t *, const int64_t *, float *,
                         const int64_t *, const int64_t *, int);
typedef int (*uses_fn)(void);

typedef struct lib {
    void *dl;
    export_fn fn;
    uses_fn uses_object;
} lib;

/* Exports app with sched into dir/NAME, builds it with make, loads it. */
static int export_lib(const char *app, const char *sched, const char *dir, const char *name,
                      lib *l, pf_error *err)
{
    char out[1024], cmd[3500], so[1100];
    snprintf(out, sizeof out, "%s/%s", dir, name);
    pf_export_options o = { .program = app, .schedule = sched, .out = out, .name = name };
    pf_export_result res;
    if (pf_export_write(&o, &res, err) != 0)
        return -1;
    pf_export_result_free(&res);
    snprintf(cmd, sizeof cmd, "make -s -C '%s' BUILD='%s/b' > '%s/make.log' 2>&1", out, out,
             out);
    if (system(cmd) != 0)
        return pf_fail(err, "make failed in %s (see make.log)", out);
    snprintf(so, sizeof so, "%s/b/lib%s.so", out, name);
    if (!(l->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL)))
        return pf_fail(err, "dlopen %s: %s", so, dlerror());
    char sym[128];
    l->fn = (export_fn)(uintptr_t)dlsym(l->dl, name);
    snprintf(sym, sizeof sym, "%s_uses_object", name);
    l->uses_object = (uses_fn)(uintptr_t)dlsym(l->dl, sym);
    return l->fn && l->uses_object ? 0 : pf_fail(err, "%s lacks %s", so, name);
}

static void dims(const pf_image *img, int64_t e[3], int64_t s[3])
{
    e[0] = img->width, e[1] = img->height, e[2] = img->channels;
    s[0] = 1, s[1] = (int64_t)img->stride, s[2] = (int64_t)img->plane;
}

static int call_lib(const lib *l, pf_image *in, pf_image *out, int threads)
{
    int64_t ie[3], is[3], oe[3], os[3];
    dims(in, ie, is);
    dims(out, oe, os);
    return l->fn(in->data, ie, is, out->data, oe, os, threads);
}

/* Calls per block so that a JIT block lasts about 20 ms. */
static int block_calls(pf_variant *v, pf_image *in, pf_image *out)
{
    pf_error err;
    double t0 = pf_now_ms();
    bench_run(v, in, out, &err);
    double ms = pf_now_ms() - t0;
    int k = ms > 0 ? (int)(20 / ms) : 100;
    return k < 1 ? 1 : k > 200 ? 200 : k;
}

typedef struct row {
    double jit_ms, exp_ms, ratio, lo, hi, diff;
} row;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int measure(pf_variant *v, const lib *l, pf_image *in, int threads, int rounds, row *r,
                   pf_error *err)
{
    pf_image *o1 = pf_image_clone(in), *o2 = pf_image_clone(in);
    pf_rt_set_threads(threads);
    if (bench_run(v, in, o1, err) != 0 || call_lib(l, in, o2, threads) != 0)
        return pf_fail(err, "a first run failed");
    r->diff = bench_max_diff(o1, o2, 0, 0, in->width, in->height);
    int k = block_calls(v, in, o1);
    double *ratio = pf_xmalloc(sizeof *ratio * (size_t)rounds), tj = 0, te = 0;
    for (int i = 0; i < rounds; i++) {
        double t[2];
        for (int j = 0; j < 2; j++) {
            int which = (i + j) % 2;  /* alternate which goes first */
            double t0 = pf_now_ms();
            for (int c = 0; c < k; c++)
                which ? (void)call_lib(l, in, o2, threads) : (void)bench_run(v, in, o1, err);
            t[which] = (pf_now_ms() - t0) / k;
        }
        ratio[i] = t[1] / t[0];
        tj += t[0];
        te += t[1];
    }
    qsort(ratio, (size_t)rounds, sizeof *ratio, cmp_d);
    r->ratio = ratio[rounds / 2];
    r->lo = ratio[rounds / 4];
    r->hi = ratio[(3 * rounds) / 4];
    r->jit_ms = tj / rounds;
    r->exp_ms = te / rounds;
    free(ratio);
    pf_image_free(o1);
    pf_image_free(o2);
    return 0;
}

/* The two calls callgrind collects: noipa, so that neither is inlined nor cloned under another
 * name (export_once.constprop.0 escaped --toggle-collect). */
__attribute__((noipa)) static int jit_once(pf_variant *v, pf_image *in, pf_image *out,
                                              pf_error *err)
{
    return bench_run(v, in, out, err);
}

__attribute__((noipa)) static int export_once(const lib *l, pf_image *in, pf_image *out)
{
    return call_lib(l, in, out, 1);
}

/* One case, one call of each at 1 thread, for callgrind. */
static int instructions(const char *label, const char *app, const char *sched, const char *dir,
                        pf_error *err)
{
    pf_image *in = bench_photo(BENCH_TRAIN "/natural_0_820x614.png", 256, 192, err);
    bench_prog bp = { 0 };
    if (!in || bench_prog_load(&bp, app, err))
        return -1;
    const pf_plan *plan = bench_plan(&bp, sched, err);
    char name[64];
    snprintf(name, sizeof name, "bx_%s", label);
    lib l = { 0 };
    pf_variant *v = NULL;
    int rc = plan ? export_lib(app, sched, dir, name, &l, err) : -1;
    if (rc == 0 && !(v = bench_compile(&bp, plan, 1, false, err)))
        rc = -1;
    pf_image *o1 = pf_image_clone(in), *o2 = pf_image_clone(in);
    pf_rt_set_threads(1);
    if (rc == 0 && (bench_run(v, in, o1, err) || call_lib(&l, in, o2, 1)))
        rc = pf_fail(err, "%s: a call failed", label);
    CALLGRIND_START_INSTRUMENTATION;
    if (rc == 0 && (jit_once(v, in, o1, err) || export_once(&l, in, o2)))
        rc = pf_fail(err, "%s: a call failed", label);
    if (rc == 0)
        printf("%s: one call each, 1 thread, 256x192; code %s; max diff %g\n", label,
               l.uses_object() ? "object" : "C", bench_max_diff(o1, o2, 0, 0, 256, 192));
    pf_variant_free(v);
    pf_image_free(o1), pf_image_free(o2), pf_image_free(in);
    bench_prog_free(&bp);
    return rc;
}

static int bench_case(const char *label, const char *app, const char *sched, const char *dir,
                      pf_image *photo, int rounds, pf_error *err)
{
    bench_prog bp = { 0 };
    if (bench_prog_load(&bp, app, err))
        return -1;
    const pf_plan *plan = bench_plan(&bp, sched, err);
    char name[64];
    snprintf(name, sizeof name, "bx_%s", label);
    lib l = { 0 };
    int rc = plan ? export_lib(app, sched, dir, name, &l, err) : -1;
    for (int threads = 1; rc == 0 && threads <= 2; threads++) {
        pf_variant *v = bench_compile(&bp, plan, threads, false, err);
        row r = { 0 };
        rc = v ? measure(v, &l, photo, threads, rounds, &r, err) : -1;
        if (rc == 0)
            printf("%-18s %7d %9.3f %9.3f %8.3f  [%.3f, %.3f] %6s %10.2g\n", label, threads,
                   r.jit_ms, r.exp_ms, r.ratio, r.lo, r.hi, l.uses_object() ? "object" : "C",
                   r.diff);
        fflush(stdout);
        pf_variant_free(v);
    }
    if (l.dl)
        dlclose(l.dl);
    bench_prog_free(&bp);
    return rc;
}

/* The app and schedule of a case: "blur_paper", or an app of tests/export/schedules. */
static void case_files(const char *label, char *app, char *sched, size_t n)
{
    bool paper = strcmp(label, "blur_paper") == 0;
    snprintf(app, n, "%s/apps/%s.pf", BENCH_SRC, paper ? "blur" : label);
    if (paper)
        snprintf(sched, n, "%s/apps/blur_paper.sched", BENCH_SRC);
    else
        snprintf(sched, n, "%s/tests/export/schedules/%s.sched", BENCH_SRC, label);
}

int main(int argc, char **argv)
{
    pf_error err;
    if (argc == 3 && strcmp(argv[1], "--instructions") == 0) {
        char dir[] = "/tmp/bench-export-XXXXXX", app[1024], sched[1024];
        case_files(argv[2], app, sched, sizeof app);
        int rc = mkdtemp(dir) ? instructions(argv[2], app, sched, dir, &err)
                              : pf_fail(&err, "no temporary directory");
        if (rc)
            fprintf(stderr, "bench_export: %s\n", err.msg);
        return rc ? 1 : 0;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    if (rounds < 3)
        rounds = 3;
    pf_image *photo = bench_photo(BENCH_TRAIN "/natural_0_820x614.png", 820, 614, &err);
    char dir[] = "/tmp/bench-export-XXXXXX";
    if (!photo || !mkdtemp(dir)) {
        fprintf(stderr, "bench_export: %s\n", photo ? "no temporary directory" : err.msg);
        return 1;
    }
    bench_print_header("exported library (make, -O3, shared, dlopen) against the JIT, "
                       "820x614 RGB");
    printf("# ratio: median over %d rounds of (exported / JIT) time of a block of calls, the "
           "two in alternating order; [quartiles]\n", rounds);
    printf("%-18s %7s %9s %9s %8s  %-16s %6s %10s\n", "variant", "threads", "jit ms",
           "export ms", "ratio", "quartiles", "code", "max diff");
    const char *sdir = BENCH_SRC "/tests/export/schedules";
    struct dirent **ents;
    int n = scandir(sdir, &ents, NULL, alphasort), rc = 0;
    for (int i = -1; rc == 0 && i < n; i++) {  /* -1: the paper's variant */
        char label[48], app[1024], sched[1024];
        size_t len = i < 0 ? 0 : strlen(ents[i]->d_name);
        if (i >= 0 && (len < 7 || strcmp(ents[i]->d_name + len - 6, ".sched") != 0))
            continue;
        snprintf(label, sizeof label, "%.*s", i < 0 ? 10 : (int)(len - 6),
                 i < 0 ? "blur_paper" : ents[i]->d_name);
        bool wanted = argc <= 2;
        for (int a = 2; a < argc; a++)
            wanted |= strcmp(argv[a], label) == 0;
        case_files(label, app, sched, sizeof app);
        if (wanted)
            rc = bench_case(label, app, sched, dir, photo, rounds, &err);
    }
    for (int i = 0; i < n; i++)
        free(ents[i]);
    free(n > 0 ? ents : NULL);
    if (rc != 0)
        fprintf(stderr, "bench_export: %s\n", err.msg);
    printf("# libraries left in %s\n", dir);
    pf_image_free(photo);
    return rc ? 1 : 0;
}
