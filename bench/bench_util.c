/* Shared pieces of the bench/ programs (bench_util.h): timing, photos, perfora variants,
 * differences, bandwidth. */
#include "bench/bench_util.h"

#include "base/arena.h"
#include "dataset/resample.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

unsigned bench_default_flags;

void bench_strcpy(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memmove(dst, src, l);
    dst[l] = 0;
}

double bench_min(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

double bench_loadavg(void)
{
    double l[1];
    return getloadavg(l, 1) == 1 ? l[0] : -1.0;
}

void bench_stamp(char *out, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%d %H:%M", &tm);
}

static void cpu_model(char *out, size_t n)
{
    snprintf(out, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v += 1 + strspn(v + 1, " \t");
                v[strcspn(v, "\n")] = 0;
                snprintf(out, n, "%s", v);
            }
            break;
        }
    fclose(f);
}

void bench_print_header(const char *what)
{
    char stamp[32], cpu[128];
    bench_stamp(stamp, sizeof stamp);
    cpu_model(cpu, sizeof cpu);
    printf("# %s\n# %s, load average %.2f (1 min), %ld cores online, %s\n", what, stamp,
           bench_loadavg(), sysconf(_SC_NPROCESSORS_ONLN), cpu);
}

pf_image *bench_photo(const char *file, int w, int h, pf_error *err)
{
    pf_image *raw = pf_image_load(file, err);
    if (!raw)
        return NULL;
    pf_image *rgb = pf_image_to_rgb(raw, err);
    pf_image_free(raw);
    if (!rgb || (rgb->width == w && rgb->height == h))
        return rgb;
    pf_image *r = pf_resample_photo(rgb, w, h, 0.5, err);
    pf_image_free(rgb);
    return r;
}

bench_img bench_view(pf_image *img)
{
    bench_img v = { img->data, img->width, img->height, img->channels, (long)img->stride,
                    (long)img->plane };
    return v;
}

double bench_max_diff_at(const pf_image *a, const pf_image *b, int x0, int y0, int x1, int y1,
                         double tol, int at[3], long *count)
{
    double m = 0.0;
    *count = 0;
    at[0] = at[1] = at[2] = -1;
    for (int c = 0; c < a->channels && c < b->channels; c++)
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) {
                double d = fabs((double)*pf_image_at(a, x, y, c) - *pf_image_at(b, x, y, c));
                if (d != d)
                    d = INFINITY;
                if (d > tol)
                    (*count)++;
                if (d > m || (at[0] < 0 && d == m)) {
                    m = d;
                    at[0] = x;
                    at[1] = y;
                    at[2] = c;
                }
            }
    return m;
}

double bench_max_diff(const pf_image *a, const pf_image *b, int x0, int y0, int x1, int y1)
{
    int at[3];
    long n;
    return bench_max_diff_at(a, b, x0, y0, x1, y1, 1e-3, at, &n);
}

int bench_prog_load(bench_prog *bp, const char *path, pf_error *err)
{
    *bp = (bench_prog){ 0 };  /* no plans yet, whatever the caller's memory held */
    bp->prog = pf_load_program(path, err);
    if (!bp->prog)
        return -1;
    pf_params_init(&bp->params, bp->prog);
    return 0;
}

void bench_prog_free(bench_prog *bp)
{
    if (!bp->prog)
        return;
    for (int i = 0; i < bp->n_plans; i++)
        pf_plan_free(bp->plans[i]);
    free(bp->plans);
    pf_params_free(&bp->params);
    pf_program_free(bp->prog);
    memset(bp, 0, sizeof *bp);
}

static const pf_plan *keep_plan(bench_prog *bp, pf_plan *p)
{
    if (!p)
        return NULL;
    bp->plans = pf_xrealloc(bp->plans, sizeof *bp->plans * (size_t)(bp->n_plans + 1));
    bp->plans[bp->n_plans++] = p;
    return p;
}

const pf_plan *bench_plan(bench_prog *bp, const char *path, pf_error *err)
{
    pf_plan_target t = pf_host_plan_target();
    return keep_plan(bp, path ? pf_plan_load(bp->prog, path, &t, err)
                              : pf_plan_new(bp->prog, NULL, &t, err));
}

const pf_plan *bench_plan_text(bench_prog *bp, const char *text, pf_error *err)
{
    pf_plan_target t = pf_host_plan_target();
    return keep_plan(bp, pf_plan_parse(bp->prog, text, "<schedule>", &t, err));
}

pf_variant *bench_compile_with(bench_prog *bp, const pf_plan *plan, int threads, unsigned flags,
                               pf_error *err)
{
    flags |= bench_default_flags;
    pf_compile_options o;
    memset(&o, 0, sizeof o);
    o.backend = PF_BACKEND_JIT;
    o.threads = threads;
    o.no_congruence = flags & BENCH_NO_CONGRUENCE;
    o.fp_contract = flags & BENCH_FP_CONTRACT;
    o.fast_math = flags & BENCH_FAST_MATH;
    o.no_channel_unroll = flags & BENCH_NO_CHANNEL_UNROLL;
    o.no_bands = flags & BENCH_NO_BANDS;
    o.no_vector_math = flags & BENCH_NO_VECTOR_MATH;
    o.no_narrow = flags & BENCH_NO_NARROW;
    return pf_variant_build(bp->prog, &bp->params, plan, &o, err);
}

pf_variant *bench_compile(bench_prog *bp, const pf_plan *plan, int threads, bool no_congruence,
                          pf_error *err)
{
    return bench_compile_with(bp, plan, threads, no_congruence ? BENCH_NO_CONGRUENCE : 0, err);
}

int bench_run(pf_variant *v, pf_image *in, pf_image *out, pf_error *err)
{
    pf_buffer b[2] = { pf_image_buffer(in, 0), pf_image_buffer(out, 0) };
    return pf_variant_run(v, b, err);
}

double bench_run_ms(pf_variant *v, pf_image *in, pf_image *out, const char *who)
{
    pf_error err;
    double t0 = pf_now_ms();
    if (bench_run(v, in, out, &err) != 0) {
        fprintf(stderr, "%s: %s\n", who, err.msg);
        exit(1);
    }
    return pf_now_ms() - t0;
}

/* ---- streaming copy ---- */

typedef struct copy_job {
    const char *src;
    char *dst;
    size_t n;
} copy_job;

static void *copy_thread(void *arg)
{
    copy_job *j = arg;
    memcpy(j->dst, j->src, j->n);
    return NULL;
}

void bench_copy(const void *src_, void *dst_, size_t bytes, int threads)
{
    const char *src = src_;
    char *dst = dst_;
    pthread_t tid[16];
    copy_job job[16];
    if (threads > 16)
        threads = 16;
    size_t share = (bytes / (size_t)threads + 63) & ~(size_t)63;
    for (int t = 0; t < threads; t++) {
        size_t lo = share * (size_t)t, hi = lo + share > bytes ? bytes : lo + share;
        job[t] = (copy_job){ src + lo, dst + lo, hi > lo ? hi - lo : 0 };
    }
    for (int t = 1; t < threads; t++)
        pthread_create(&tid[t], NULL, copy_thread, &job[t]);
    copy_thread(&job[0]);
    for (int t = 1; t < threads; t++)
        pthread_join(tid[t], NULL);
}

double bench_copy_ms(size_t bytes, int threads, int reps)
{
    char *src = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    char *dst = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    double *t = malloc(sizeof *t * (size_t)reps);
    for (int r = 0; r < reps; r++) {
        double t0 = pf_now_ms();
        bench_copy(src, dst, bytes, threads);
        t[r] = pf_now_ms() - t0;
    }
    double m = pf_median(t, reps);
    free(t);
    free(src);
    free(dst);
    return m;
}
