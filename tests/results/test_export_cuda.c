/* perfora export of GPU variants, without a GPU (docs/export.md, "CUDA libraries"): a run
 * searched with --target cuda exports as a CUDA library; for every app (its default GPU
 * schedule, the paper's blur variant, and the perforated variants of tests/export/schedules/)
 * the generated library compiles with -Wall -Wextra
 * -Werror and links, its embedded PTX assembles with ptxas for sm_90 (SKIP where ptxas is
 * absent), the plan its host code records equals codegen/gpu_host.c's walk (every launch's
 * grid, block, shared memory and parameter block, every allocation and zeroing) at 97x61 and
 * 2048x1536, the runtime makes those calls on a stand-in driver (tests/export/fake_cuda.c,
 * which runs no kernel: the transfers, memory kept and released, a fault), and a call without
 * a CUDA driver returns the no-device error with the driver's message. The client:
 * tests/export/cuda_client.c. */
#define _GNU_SOURCE  /* memmem */
#include "base/arena.h"
#include "base/fileio.h"
#include "codegen/compile.h"
#include "codegen/gpu_device.h"
#include "codegen/gpu_host.h"
#include "codegen/gpu_ptx.h"
#include "results/export.h"
#include "results/report_internal.h"
#include "tests/harness/harness.h"
#include "tests/results/report_test_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define APPS PF_SOURCE_DIR "/apps"

static const char *const apps[] = { "blur", "unsharp_mask", "bilateral_filter",
                                    "bilateral_grid", "demosaic", "mosaic", "median",
                                    "artistic_blur" };

/* ---- the plan of codegen/gpu_host.c's walk, as cuda_client.c prints it ---- */

typedef struct walk_text {
    const ir_func *f;
    const pf_gpu_module *m;
    uint64_t *dptr;
    pf_strbuf out;
} walk_text;

static int wt_alloc(void *ctx, const ir_buffer *b, size_t bytes, bool zero, pf_error *err)
{
    (void)err;
    pf_sb_printf(&((walk_text *)ctx)->out, "alloc %d %zu %d\n", b->id, bytes, zero ? 1 : 0);
    return 0;
}

static void wt_release(void *ctx, const ir_buffer *b)
{
    (void)ctx, (void)b;
}

static int wt_zero(void *ctx, const ir_buffer *b, pf_error *err)
{
    (void)err;
    pf_sb_printf(&((walk_text *)ctx)->out, "zero %d\n", b->id);
    return 0;
}

static int wt_launch(void *ctx, const pf_gpu_launch *l, pf_error *err)
{
    walk_text *w = ctx;
    int k = 0;
    while (k < w->m->n_kernels && w->m->kernels[k].nest != l->nest)
        k++;
    if (k == w->m->n_kernels)
        return pf_fail(err, "a launch of a nest without a kernel");
    const pf_gpu_kernel *kn = &w->m->kernels[k];
    uint64_t slots[512];
    void *params[512];
    if (kn->n_params > 512 ||
        pf_gpu_kernel_params(w->f, kn, w->dptr, l->vars, l->known, slots, params, err))
        return -1;
    pf_sb_printf(&w->out, "launch %s grid %u %u %u block %u %u %u shared %zu params", kn->name,
                 l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
                 l->shared_bytes);
    for (int i = 0; i < kn->n_params; i++)
        pf_sb_printf(&w->out, " %llx", (unsigned long long)slots[i]);
    pf_sb_putc(&w->out, '\n');
    return 0;
}

/* gpu_host.c's walk of app (schedule: a file, or NULL for the GPU default) for images of
 * w x h x 3, with buffer id i at the fake address (i + 1) << 20 (cuda_client.c's). NULL when
 * the PTX needs a libdevice this machine lacks. */
static char *walk_of(const char *app, const char *schedule, int w, int h)
{
    char path[512];
    snprintf(path, sizeof path, APPS "/%s.pf", app);
    pf_error err;
    pf_program *prog = pf_load_program(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    char *text = NULL;
    size_t len;
    if (schedule)
        CU_ASSERT_EQUAL_FATAL(pf_read_file(schedule, 1 << 20, &text, &len, &err), 0);
    pf_plan_target t = pf_backend_plan_target(PF_BACKEND_CUDA);
    pf_plan *plan = pf_plan_parse(prog, text ? text : "# perfora schedule 1\n", "<test>", &t,
                                  &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = pf_variant_loop_ir(prog, &pv, plan, &arena, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    pf_gpu_module m;
    char *out = NULL;
    if (pf_gpu_emit_ptx(f, NULL, &m, &err) == 0) {
        walk_text wt = { f, &m, pf_xcalloc((size_t)f->n_buffers + 1, 8), { 0 } };
        pf_sb_init(&wt.out);
        for (int i = 0; i < f->n_buffers; i++)  /* shared windows have no device memory */
            wt.dptr[i] = f->buffers[i]->gpu_shared ? 0 : (uint64_t)(i + 1) << 20;
        int64_t ext[16][IR_MAX_DIMS];
        for (int i = 0; i < 16; i++) {
            ext[i][0] = w, ext[i][1] = h, ext[i][2] = 3, ext[i][3] = 1;
        }
        /* no host for runtime calls: the export does not carry them (the walk refuses) */
        pf_gpu_host_ops ops = { &wt, wt_alloc, wt_release, wt_zero, wt_launch, NULL };
        if (pf_gpu_host_run(f, (const int64_t(*)[IR_MAX_DIMS])ext, &ops, &err))
            pf_sb_printf(&wt.out, "error %s\n", err.msg);
        out = pf_sb_take(&wt.out);
        free(wt.dptr);
        pf_gpu_module_free(&m);
    }
    pf_arena_free(&arena);
    pf_plan_free(plan);
    pf_params_free(&pv);
    pf_program_free(prog);
    free(text);
    return out;
}

/* ---- the exported library, built and run as a user would ---- */

/* Exports app for CUDA into out; the library's name (the pipeline's) into name. */
static int export_cuda(const char *app, const char *schedule, const char *out, char *name,
                       pf_error *err)
{
    char path[512];
    snprintf(path, sizeof path, APPS "/%s.pf", app);
    pf_export_options o = { .program = path, .schedule = schedule, .out = out, .cuda = true };
    pf_export_result res;
    int rc = pf_export_write(&o, &res, err);
    if (rc == 0) {
        CU_ASSERT(res.cuda);
        CU_ASSERT_FALSE(res.object);
        snprintf(name, 64, "%s", res.name);
        pf_export_result_free(&res);
    }
    return rc;
}

#ifndef PF_CLIENT_CFLAGS
#define PF_CLIENT_CFLAGS ""
#endif

/* Compiles the library's three files and the client with -Wall -Wextra -Werror (and, in a
 * sanitizer build, ASan and UBSan). */
static int build_client(const char *dir, const char *name)
{
    const char *cc = getenv("CC") ? getenv("CC") : "cc";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s -std=c11 -Wall -Wextra -Werror -O1 "
             "-ffp-contract=off %s -I. '-DEXPORT_HEADER=\"%s.h\"' -DEXPORT_FN=%s -o client "
             "%s/tests/export/cuda_client.c %s.c %s_host.c perfora_cuda_rt.c -ldl -pthread -lm",
             dir, cc, PF_CLIENT_CFLAGS, name, name, PF_SOURCE_DIR, name, name);
    int rc = system(cmd);
    if (rc != 0)
        printf("\n    FAILED: %s", cmd);
    return rc;
}

/* The client's output for args (stdout), malloc'd. */
static char *run_client(const char *dir, const char *env, const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s ./client %s", dir, env, args);
    FILE *p = popen(cmd, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_strbuf sb;
    pf_sb_init(&sb);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        pf_sb_putn(&sb, buf, n);
    pclose(p);
    return pf_sb_take(&sb);
}

static const char *ptxas_path(void)
{
    const char *env = getenv("PTXAS");
    if (env && access(env, X_OK) == 0)
        return env;
    return access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? "/usr/local/cuda/bin/ptxas" : NULL;
}

/* The plans of the generated host code against gpu_host.c's, at two sizes. */
static void compare_plans(const char *app, const char *label, const char *schedule,
                          const char *dir)
{
    static const int sizes[2][2] = { { 97, 61 }, { 2048, 1536 } };
    for (int i = 0; i < 2; i++) {
        char *want = walk_of(app, schedule, sizes[i][0], sizes[i][1]), args[64];
        snprintf(args, sizeof args, "plan %d %d", sizes[i][0], sizes[i][1]);
        char *got = run_client(dir, "", args);
        int launches = 0;
        for (const char *p = got; (p = strstr(p, "launch ")); p++)
            launches++;
        if (want && strcmp(want, got) != 0)
            printf("\n    %s at %dx%d, gpu_host.c:\n%s    the export's host code:\n%s", app,
                   sizes[i][0], sizes[i][1], want, got);
        CU_ASSERT(want && strcmp(want, got) == 0);
        CU_ASSERT(launches > 0 && !strstr(got, "error"));
        if (i == 1)
            printf("\n    %-30s %2d launches at 2048x1536: the export's host code makes "
                   "gpu_host.c's", label, launches);
        free(want);
        free(got);
    }
}

static void check_ptx(const char *app, const char *dir)
{
    const char *ptxas = ptxas_path();
    char *out = run_client(dir, "", "ptx kernels.ptx");
    free(out);
    if (!ptxas) {
        printf("\n    SKIP %s (ptxas): not at /usr/local/cuda/bin/ptxas nor $PTXAS", app);
        return;
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 '%s/kernels.ptx' -o /dev/null", ptxas, dir);
    int rc = system(cmd);
    printf(rc ? "\n    ptxas failed on %s's embedded PTX" : ", its PTX assembles (sm_90)", app);
    CU_ASSERT_EQUAL(rc, 0);
}

/* Lines of text starting with one of the two prefixes, in order. */
static char *lines_with(const char *text, const char *a, const char *b)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        if (strncmp(p, a, strlen(a)) == 0 || strncmp(p, b, strlen(b)) == 0)
            pf_sb_printf(&sb, "%.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
    return pf_sb_take(&sb);
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

/* The runtime's device path on tests/export/fake_cuda.c, a stand-in driver that runs no kernel
 * and logs every call: three calls (the second replays the plan, the third follows a
 * release) make the plan's zeroing and launches, parameters and all; memory is allocated once
 * and freed by the release; the input goes up packed, the outputs come back into their
 * strided rows. Then a kernel's fault: every call fails, the context lost. */
static void check_device_path(const char *label, const char *dir)
{
    char env[1024], *log_path = rt_path(dir, "device.log");
    unlink(log_path);
    snprintf(env, sizeof env, "PF_CUDA_DRIVER='%s' FAKE_CUDA_LOG='%s'", PF_FAKE_CUDA, log_path);
    char *out = run_client(dir, env, "run 97 61"), *ops = run_client(dir, "", "device-plan 97 61");
    char *log = rt_read(dir, "device.log"), *calls = log ? lines_with(log, "zero ", "launch ")
                                                          : NULL;
    pf_strbuf want;
    pf_sb_init(&want);
    for (int i = 0; i < 3; i++)
        pf_sb_puts(&want, ops);
    bool same = calls && strcmp(calls, pf_sb_str(&want)) == 0;
    if (!same)
        printf("\n    %s on the fake driver:\n%s    the plan, three times:\n%s", label,
               calls ? calls : "(no log)", pf_sb_str(&want));
    CU_ASSERT(same);
    char line[128];
    snprintf(line, sizeof line, "call 1 rc 0 launches %d kernel_ms 0.25\n", count(ops, "launch "));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, line));
    CU_ASSERT_EQUAL(count(out, "rc 0 "), 3);
    CU_ASSERT_EQUAL(count(out, "padding kept 1 layout 1\n"), 3);
    /* the input uploaded packed (its sum), memory allocated by the first call only, all freed */
    const char *sum = strstr(out, "input sum ");
    snprintf(line, sizeof line, ", sum %.*s", sum ? (int)strcspn(sum + 10, "\n") : 0,
             sum ? sum + 10 : "");
    CU_ASSERT(log && count(log, line) == 3);
    const char *second = log ? strstr(strstr(log, "download") ? strstr(log, "download") : log,
                                      "upload") : NULL;
    const char *unload = second ? strstr(second, "module unloaded") : NULL;
    CU_ASSERT(second && unload && !memmem(second, (size_t)(unload - second), "alloc", 5));
    CU_ASSERT(log && count(log, "free (0 live)") == 2);
    free(out), free(log), free(calls);
    pf_sb_free(&want);
    /* a fault in the first launch: that call and the later ones fail, saying why */
    snprintf(env, sizeof env, "PF_CUDA_DRIVER='%s' FAKE_CUDA_FAULT=1 FAKE_CUDA_LOG=/dev/null",
             PF_FAKE_CUDA);
    out = run_client(dir, env, "run 97 61");
    CU_ASSERT_EQUAL(count(out, "rc 6 "), 3);
    CU_ASSERT_EQUAL(count(out, "illegal memory access was encountered (fake) (error 700) (the "
                               "CUDA context is lost)"), 3);
    if (same)
        printf(", its runtime's calls on a stand-in driver are the plan's");
    free(out), free(ops), free(log_path);
}

static void export_and_check(const char *app, const char *schedule, const char *label)
{
    char name[128];
    snprintf(name, sizeof name, "export-cuda-%s", label);
    for (char *c = name; *c; c++)  /* one directory per case */
        *c = isalnum((unsigned char)*c) || *c == '-' ? *c : '_';
    const char *dir = pf_test_tmp(name);
    pf_error err;
    char fn[64];
    int rc = export_cuda(app, schedule, dir, fn, &err);
    char lib[1024];
    if (rc && strstr(err.msg, "libdevice") && !pf_gpu_libdevice_path(lib, sizeof lib)) {
        printf("\n    SKIP %s: %s", label, err.msg);
        return;
    }
    char *walk = walk_of(app, schedule, 97, 61);
    const char *refused = walk ? strstr(walk, "error ") : NULL;
    if (refused) {  /* a runtime call that stays on the host: the export refuses that call */
        const char *call = strstr(refused, "the runtime call "), *named = NULL;
        printf("\n    %-30s refused: %s", label, err.msg);
        if (rc != 0)
            named = strstr(err.msg, "the runtime call ");
        CU_ASSERT(call && named &&
                  strncmp(named, call, strcspn(call + 17, " ") + 17) == 0);
        free(walk);
        return;
    }
    free(walk);
    if (rc)
        printf("\n    %s: %s", label, err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(build_client(dir, fn), 0);
    compare_plans(app, label, schedule, dir);
    check_ptx(label, dir);
    check_device_path(label, dir);
}

/* Every app's default GPU schedule, the paper's blur variant (GPU fills) and a grid Gaussian
 * reconstruction (the GPU's tiled recursive filter). */
static void test_every_app(void)
{
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++)
        export_and_check(apps[a], NULL, apps[a]);
    export_and_check("blur", APPS "/blur_paper.sched", "blur_paper");
    const char *gauss = pf_test_tmp("gauss.sched");  /* the GPU's tiled Gaussian (16 launches) */
    FILE *f = fopen(gauss, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("# perfora schedule 1\nloop_temp grid 4 1 1 reconstruct store gaussian 1\n", f);
    fclose(f);
    export_and_check("blur", gauss, "blur_gaussian");
}

/* The perforated variant of every app the CPU export tests (tests/export/schedules/) under
 * the GPU target: the same plans as gpu_host.c, or refused for the same runtime call. */
static void test_perforated_variants(void)
{
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++) {
        char sched[512], label[64];
        snprintf(sched, sizeof sched, PF_SOURCE_DIR "/tests/export/schedules/%s.sched", apps[a]);
        snprintf(label, sizeof label, "%s (perforated)", apps[a]);
        export_and_check(apps[a], sched, label);
    }
}

/* Without a driver: the no-device error and the driver's words, never a crash; a NULL device
 * address is an argument error. */
static void test_call_without_a_driver(void)
{
    const char *dir = pf_test_tmp("export-cuda-call");
    pf_error err;
    char fn[64];
    CU_ASSERT_EQUAL_FATAL(export_cuda("blur", NULL, dir, fn, &err), 0);
    CU_ASSERT_EQUAL_FATAL(build_client(dir, "blur"), 0);
    char *out = run_client(dir, "PF_CUDA_DRIVER=/nonexistent/libcuda.so.1", "call 64 48");
    printf("\n    %s", out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "rc 5\nstring no CUDA driver or no CUDA device"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "last no CUDA driver found (/nonexistent/libcuda.so.1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "device-null rc 1"));
    free(out);
    out = run_client(dir, "PF_CUDA_DRIVER=libm.so.6", "call 64 48");  /* not the driver */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "last no CUDA driver found (libm.so.6 has no cuInit"));
    free(out);
    out = run_client(dir, "", "call 64 48");  /* this machine's driver, if any */
    printf("\n    this machine: %s", out);
    CU_ASSERT(strstr(out, "rc 0\n") || strstr(out, "rc 5\n"));
    free(out);
}

/* A run searched with --target cuda exports as a CUDA library (its speedups are the GPU's). */
static void test_gpu_run_exports_cuda(void)
{
    const char *src = pf_test_tmp("export-cuda-run-src"), *dir = pf_test_tmp("export-cuda-run");
    rt_synthetic run;
    rt_make_run(src, &run);
    rt_copy_tree(src, dir);
    rt_set_backend(dir, "cuda");
    const char *out = pf_test_tmp("export-cuda-run-out");
    pf_export_options o = { .run = dir, .variant = 0, .out = out };
    pf_export_result res;
    pf_error err;
    int rc = pf_export_write(&o, &res, &err);
    if (rc)
        printf("\n    %s", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT(res.cuda);
    const char *files[] = { "blur.h", "blur.c", "blur_host.c", "perfora_cuda_rt.c",
                            "perfora_cuda_rt.h", "CMakeLists.txt", "Makefile", "blur.pc",
                            "README.md", "blur.sched", PF_EXPORT_MANIFEST };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        CU_ASSERT(rt_exists(out, files[i]));
    CU_ASSERT(!rt_exists(out, "blur_pipeline.c") && !rt_exists(out, "blur_aot.o"));
    char *h = rt_read(out, "blur.h"), *sched = rt_read(out, "blur.sched");
    CU_ASSERT_PTR_NOT_NULL(strstr(h, "against the exact program\n * on the same GPU"));
    CU_ASSERT_PTR_NOT_NULL(strstr(h, "int blur_device(uint64_t in, const int64_t in_extent[3]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(h, "#define BLUR_ERROR_NO_DEVICE 5"));
    CU_ASSERT_STRING_EQUAL(sched, run.front[0]);
    free(h), free(sched);
    pf_export_result_free(&res);
    rt_synthetic_free(&run);
}

/* FMAs in the PTX of the export of `dir`'s variant 0, or -1 when the export fails. */
static int exported_fmas(const char *dir, const char *out)
{
    pf_export_options o = { .run = dir, .variant = 0, .out = out };
    pf_export_result res;
    pf_error err;
    if (pf_export_write(&o, &res, &err) != 0) {
        printf("\n    %s", err.msg);
        return -1;
    }
    pf_export_result_free(&res);
    char *host = rt_read(out, "blur_host.c");
    int n = 0;
    for (const char *p = host; p && (p = strstr(p, "fma.rn.f32")); p++)
        n++;
    free(host);
    return n;
}

/* A run searched with --strict-float exports kernels compiled as they were measured: no
 * product fused into its add (before, the export fused them whatever the search had timed). */
static void test_strict_float_run_exports_strict(void)
{
    const char *src = pf_test_tmp("export-strict-src"), *fused = pf_test_tmp("export-fused-run"),
               *strict = pf_test_tmp("export-strict-run");
    rt_synthetic run;
    rt_make_run(src, &run);
    rt_copy_tree(src, fused);
    rt_set_backend(fused, "cuda");
    rt_copy_tree(src, strict);
    rt_set_cuda_strict_float(strict);
    int a = exported_fmas(fused, pf_test_tmp("export-fused-out")),
        b = exported_fmas(strict, pf_test_tmp("export-strict-out"));
    printf("\n    fma.rn.f32 in the exported PTX: %d as searched by default, %d with "
           "--strict-float", a, b);
    CU_ASSERT(a > 0);
    CU_ASSERT_EQUAL(b, 0);
    rt_synthetic_free(&run);
}

PF_TEST_SUITE(results_export_cuda, PF_TEST(test_gpu_run_exports_cuda),
              PF_TEST(test_strict_float_run_exports_strict),
              PF_TEST(test_call_without_a_driver), PF_TEST(test_every_app),
              PF_TEST(test_perforated_variants))
