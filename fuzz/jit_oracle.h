/* The JIT's fuzzing oracle (issue 27), shared by the libFuzzer target (fuzz_jit.c) and the
 * CUnit suite that replays fuzz/jit/regressions and part of fuzz/jit/corpus
 * (tests/codegen/test_fuzz_jit.c).
 *
 * The input bytes are a stream of choices that build a valid program and a schedule:
 *   - a normal program: helpers, 1-4 stages with `over` ranges, `for` loops, reductions and
 *     reads at offsets, all drawn towards the ends of the int range (bounds of 2147483647,
 *     starts of -2147483648, steps of 10^9);
 *   - a long one: a chain of up to 300 one- or two-tap stages;
 *   - a deep one: helpers calling helpers up to PF_MAX_CALL_DEPTH, calls nested in their
 *     arguments up to 200;
 * and a schedule from the search's own operators (an initial genome mutated 0-7 times, half
 * of the draws execution genes). Both run through the reference interpreter and the JIT on a
 * small image; outputs that differ (beyond 1e-4 relative), or a run that fails on one backend
 * only, abort (a finding). Crashes, leaks and undefined behaviour are the sanitizers'.
 *
 * GPU mode (jo_oracle_run_gpu; the target's PF_FUZZ_GPU=1): the genome draws GPU execution
 * genes (`tile TX TY gpu TTX TTY`, producers at their consumer's blocks) and the plan is for a
 * GPU, so the JIT runs the GPU lowering (block and thread loops, shared windows, the `rows`
 * pass) as serial loops on the CPU, against the interpreter (docs/gpu.md §2). */
#ifndef PF_FUZZ_JIT_ORACLE_H
#define PF_FUZZ_JIT_ORACLE_H

#include "base/strbuf.h"
#include "codegen/compile.h"
#include "lang/lang.h"
#include "perforate/plan.h"
#include "search/ga.h"
#include "search/genome.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jo_gen {
    const uint8_t *p;
    size_t n, i;
    pf_strbuf sb;
    int n_helpers, n_images, n_loops, depth;
    bool in_helper;          /* no images, no x, y or W: only v and i */
    const char *scope[8];    /* int variables in scope (loop and reduction variables) */
    int n_scope;
} jo_gen;

/* The next choice in [0, n) (0 once the input is used up: the simplest program). */
static unsigned jo_pick(jo_gen *g, unsigned n)
{
    if (n <= 1 || g->i >= g->n)
        return 0;
    unsigned v = g->p[g->i++];
    if (n > 256 && g->i < g->n)
        v = v << 8 | g->p[g->i++];
    return v % n;
}

/* Ints drawn towards the edges of the range. */
static int64_t jo_edge(jo_gen *g)
{
    static const int64_t edges[] = { 0, 1, 2, -1, 3, 7, 2147483647, -2147483648LL, 2147483640,
                                     -2147483647, 1073741824, 1000000000, -1000000000, 65535 };
    return edges[jo_pick(g, sizeof edges / sizeof *edges)];
}

static void jo_int_lit(jo_gen *g, int64_t v)
{
    if (v == -2147483648LL)
        pf_sb_puts(&g->sb, "(-2147483647 - 1)");
    else if (v < 0)
        pf_sb_printf(&g->sb, "(%lld)", (long long)v);
    else
        pf_sb_printf(&g->sb, "%lld", (long long)v);
}

static void jo_fexpr(jo_gen *g, int d);

static void jo_iexpr(jo_gen *g, int d)
{
    static const char *const ops[] = { " + ", " - ", " * ", " / ", " % " };
    unsigned k = jo_pick(g, d > 0 ? 6 : 3);
    switch (k) {
    case 0:
        pf_sb_puts(&g->sb, g->in_helper ? "i" : jo_pick(g, 2) ? "x" : "y");
        return;
    case 1:
        jo_int_lit(g, jo_pick(g, 2) ? jo_edge(g) : (int64_t)jo_pick(g, 9) - 4);
        return;
    case 2:
        if (g->n_scope > 0) {
            pf_sb_puts(&g->sb, g->scope[jo_pick(g, (unsigned)g->n_scope)]);
            return;
        }
        pf_sb_puts(&g->sb, g->in_helper ? "7" : "W");
        return;
    case 3: case 4:
        pf_sb_putc(&g->sb, '(');
        jo_iexpr(g, d - 1);
        pf_sb_puts(&g->sb, ops[jo_pick(g, 5)]);
        jo_iexpr(g, d - 1);
        pf_sb_putc(&g->sb, ')');
        return;
    default:
        pf_sb_puts(&g->sb, "int(");
        jo_fexpr(g, d - 1);
        pf_sb_putc(&g->sb, ')');
        return;
    }
}

/* A read of image `img` at the stage's pixel plus offsets. */
static void jo_read(jo_gen *g, const char *img, int d)
{
    pf_sb_printf(&g->sb, "%s[x + ", img);
    for (int k = 0; k < 2; k++) {
        unsigned o = jo_pick(g, 8);
        if (o < 5)
            jo_int_lit(g, (int64_t)o - 2);
        else if (o == 5)
            jo_int_lit(g, jo_pick(g, 2) ? -9 : 17);
        else if (o == 6 && d > 0)
            jo_iexpr(g, d - 1);
        else
            jo_int_lit(g, jo_edge(g) / 2);
        pf_sb_puts(&g->sb, k == 0 ? ", y + " : "]");
    }
}

/* A reduction or `for` range of at most 12 taps placed anywhere in the int range. */
static void jo_range(jo_gen *g, bool allow_step)
{
    int64_t hi = jo_edge(g), step = 1;
    if (allow_step && jo_pick(g, 3) == 0)
        step = jo_pick(g, 2) ? 1 + jo_pick(g, 5) : 1000000000;
    int64_t taps = 1 + jo_pick(g, 12), lo = hi - (taps - 1) * step;
    if (lo < -2147483648LL)
        lo = -2147483648LL;
    if (jo_pick(g, 8) == 0) {  /* empty */
        int64_t t = lo;
        lo = hi;
        hi = t - 1 < -2147483648LL ? t : t - 1;
    }
    jo_int_lit(g, lo);
    pf_sb_puts(&g->sb, " .. ");
    jo_int_lit(g, hi);
    if (step != 1)
        pf_sb_printf(&g->sb, " step %lld", (long long)step);
}

static void jo_fexpr(jo_gen *g, int d)
{
    static const char *const ops[] = { " + ", " - ", " * ", " / " };
    unsigned k = jo_pick(g, d > 0 ? 9 : 3);
    switch (k) {
    case 0: {
        static const char *const lits[] = { "0.5", "1.0", "-2.25", "0.0", "3.0e7", "-1.0e-3" };
        pf_sb_puts(&g->sb, lits[jo_pick(g, 6)]);
        return;
    }
    case 1: {
        if (g->in_helper) {
            pf_sb_puts(&g->sb, "v");
            return;
        }
        int img = (int)jo_pick(g, (unsigned)g->n_images + 1);
        char name[16];
        snprintf(name, sizeof name, img == 0 ? "in" : "a%d", img - 1);
        jo_read(g, name, d);
        return;
    }
    case 2:
        pf_sb_puts(&g->sb, "float(");
        jo_iexpr(g, d > 0 ? d - 1 : 0);
        pf_sb_putc(&g->sb, ')');
        return;
    case 3: case 4:
        pf_sb_putc(&g->sb, '(');
        jo_fexpr(g, d - 1);
        pf_sb_puts(&g->sb, ops[jo_pick(g, 4)]);
        jo_fexpr(g, d - 1);
        pf_sb_putc(&g->sb, ')');
        return;
    case 5:
        if (g->n_helpers > 0) {
            pf_sb_printf(&g->sb, "h%u(", jo_pick(g, (unsigned)g->n_helpers));
            jo_fexpr(g, d - 1);
            pf_sb_puts(&g->sb, ", ");
            jo_iexpr(g, d - 1);
            pf_sb_putc(&g->sb, ')');
            return;
        }
        /* fall through */
    case 6:
        pf_sb_printf(&g->sb, "%s(", jo_pick(g, 2) ? "min" : "max");
        jo_fexpr(g, d - 1);
        pf_sb_puts(&g->sb, ", ");
        jo_fexpr(g, d - 1);
        pf_sb_putc(&g->sb, ')');
        return;
    case 7:
        if (g->n_scope < 8) {
            static const char *const vars[] = { "i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7" };
            const char *v = vars[g->depth++ % 8];
            pf_sb_printf(&g->sb, "%s(", jo_pick(g, 2) ? "sum" : "max");
            g->scope[g->n_scope++] = v;
            jo_fexpr(g, d - 1);
            g->n_scope--;
            pf_sb_printf(&g->sb, ", %s = ", v);
            jo_range(g, false);
            pf_sb_putc(&g->sb, ')');
            return;
        }
        /* fall through */
    default:
        pf_sb_putc(&g->sb, '(');
        jo_fexpr(g, d - 1);
        pf_sb_puts(&g->sb, " < ");
        jo_fexpr(g, d - 1);
        pf_sb_puts(&g->sb, " ? ");
        jo_fexpr(g, d - 1);
        pf_sb_puts(&g->sb, " : ");
        jo_fexpr(g, d - 1);
        pf_sb_putc(&g->sb, ')');
        return;
    }
}

static void jo_helpers(jo_gen *g, int n)
{
    for (int k = 0; k < n; k++) {
        pf_sb_printf(&g->sb, "float h%d(float v, int i) { return ", k);
        g->in_helper = true;
        g->n_helpers = k;
        switch (jo_pick(g, 3)) {
        case 0: pf_sb_puts(&g->sb, "v * 0.5 + float(i % 7)"); break;
        case 1: pf_sb_puts(&g->sb, "v"); break;
        default: jo_fexpr(g, 2); break;
        }
        if (k > 0 && jo_pick(g, 2))
            pf_sb_printf(&g->sb, " + h%d(v * 0.25, i + 1)", k - 1);
        g->in_helper = false;
        pf_sb_puts(&g->sb, "; }\n");
    }
    g->n_helpers = n;
}

static void jo_over(jo_gen *g)
{
    static const char *const bounds[] = { "0", "1", "(-5)", "W - 1", "W + 3", "H - 2", "2147483647",
                                          "(-2147483647 - 1)", "1073741824" };
    static const char *const steps[] = { "", " step 2", " step 3", " step 1000000000",
                                         " step 2147483647" };
    pf_sb_puts(&g->sb, " over (");
    for (int d = 0; d < 2; d++)
        pf_sb_printf(&g->sb, "%s%s .. %s%s", d ? ", " : "", bounds[jo_pick(g, 9)],
                     bounds[jo_pick(g, 9)], steps[jo_pick(g, 5)]);
    pf_sb_putc(&g->sb, ')');
}

/* A stage writing `dst` (a_i or out), reading in and a_0 .. a_(n_images-1). */
static void jo_stage(jo_gen *g, const char *dst, int index)
{
    pf_sb_printf(&g->sb, "  for each (x, y) of %s", dst);
    if (jo_pick(g, 3) == 0)
        jo_over(g);
    pf_sb_printf(&g->sb, " as s%d {\n    float acc = ", index);
    jo_fexpr(g, 3);
    pf_sb_puts(&g->sb, ";\n");
    for (unsigned k = jo_pick(g, 3); k > 0; k--) {
        pf_sb_printf(&g->sb, "    for (j%d) of ", g->n_loops);
        jo_range(g, true);
        char var[16];
        snprintf(var, sizeof var, "j%d", g->n_loops);
        pf_sb_printf(&g->sb, " as l%d acc += ", g->n_loops++);
        g->scope[g->n_scope++] = var;
        jo_fexpr(g, 2);
        g->n_scope--;
        pf_sb_puts(&g->sb, ";\n");
    }
    pf_sb_printf(&g->sb, "    %s[x, y] = acc;\n  }\n", dst);
}

static void jo_normal(jo_gen *g)
{
    jo_helpers(g, (int)jo_pick(g, 4));
    int stages = 1 + (int)jo_pick(g, 4);
    pf_sb_puts(&g->sb, "pipeline p(image in[W, H]) -> (image out[W, H]) {\n");
    for (int i = 0; i < stages - 1; i++)
        pf_sb_printf(&g->sb, "  image a%d[W, H]%s;\n", i, jo_pick(g, 4) ? "" : " boundary wrap");
    g->n_images = 0;
    for (int i = 0; i < stages; i++) {
        char dst[16];
        snprintf(dst, sizeof dst, i < stages - 1 ? "a%d" : "out", i);
        jo_stage(g, dst, i);
        g->n_images = i + 1;
    }
    pf_sb_puts(&g->sb, "}\n");
}

static void jo_long(jo_gen *g)
{
    int n = 2 + (int)jo_pick(g, 299);
    pf_sb_puts(&g->sb, "pipeline p(image in[W, H]) -> (image out[W, H]) {\n");
    for (int i = 0; i < n - 1; i++)
        pf_sb_printf(&g->sb, "  image a%d[W, H];\n", i);
    for (int i = 0; i < n; i++) {
        char src[16], dst[16];
        snprintf(src, sizeof src, i ? "a%d" : "in", i - 1);
        snprintf(dst, sizeof dst, i < n - 1 ? "a%d" : "out", i);
        unsigned taps = 1 + jo_pick(g, 2);
        pf_sb_printf(&g->sb, "  for each (x, y) of %s as s%d %s[x, y] = %s[x + %u, y]", dst, i, dst,
                     src, jo_pick(g, 3));
        if (taps > 1)
            pf_sb_printf(&g->sb, " * 0.5 + %s[x, y - %u] * 0.5", src, jo_pick(g, 3));
        pf_sb_puts(&g->sb, ";\n");
    }
    pf_sb_puts(&g->sb, "}\n");
}

static void jo_deep(jo_gen *g)
{
    int depth = 1 + (int)jo_pick(g, PF_MAX_CALL_DEPTH);
    int nest = (int)jo_pick(g, 200);
    pf_sb_puts(&g->sb, "float f0(float v) { return v * 0.5 + 1.0; }\n");
    for (int i = 1; i < depth; i++)
        pf_sb_printf(&g->sb, "float f%d(float v) { return f%d(v) - %u.0; }\n", i, i - 1,
                     jo_pick(g, 3));
    pf_sb_puts(&g->sb, "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
                       "  for each (x, y) of out as s out[x, y] = ");
    for (int i = 0; i < nest; i++)
        pf_sb_printf(&g->sb, "f%u(", jo_pick(g, (unsigned)depth));
    pf_sb_puts(&g->sb, "in[x, y]");
    for (int i = 0; i < nest; i++)
        pf_sb_putc(&g->sb, ')');
    pf_sb_puts(&g->sb, ";\n}\n");
}

/* The program the input describes (malloc'd), and the image size and schedule draws. */
static char *jo_program(jo_gen *g, int *w, int *h)
{
    pf_sb_init(&g->sb);
    unsigned mode = jo_pick(g, 16);
    *w = 1 + (int)jo_pick(g, 24);
    *h = 1 + (int)jo_pick(g, 13);
    if (mode == 0)
        jo_long(g);
    else if (mode == 1)
        jo_deep(g);
    else
        jo_normal(g);
    return pf_sb_take(&g->sb);
}

static void jo_fail(const char *what, const char *src, const char *sched)
{
    fprintf(stderr, "JIT oracle: %s\n--- program\n%s--- schedule\n%s\n", what, src,
            sched ? sched : "(none)");
    abort();
}

static int jo_run(const pf_program *prog, const pf_plan *plan, pf_backend be, int w, int h,
                  const float *in, float *out, pf_error *err)
{
    pf_compile_options o = { 0 };
    o.backend = be;
    o.threads = 1;
    o.compile_threads = 1;
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_variant *v = pf_variant_build(prog, &pv, plan, &o, err);
    int rc = -1;
    if (v) {
        pf_buffer b[2] = { { (float *)in, 2, { w, h, 1, 1 }, { 1, w, 0, 0 } },
                           { out, 2, { w, h, 1, 1 }, { 1, w, 0, 0 } } };
        rc = pf_variant_run(v, b, err);
        pf_variant_free(v);
    }
    pf_params_free(&pv);
    return rc;
}

static bool jo_same(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabsf(a - b) <= 1e-4f * fmaxf(1.0f, fmaxf(fabsf(a), fabsf(b))) || a == b;
}

/* A schedule drawn by the search's operators from a seed (valid, or NULL). */
static pf_schedule *jo_schedule(const pf_program *prog, uint64_t seed, unsigned mutations,
                                bool gpu)
{
    pf_genome_params gp = pf_genome_params_default();
    gp.exec_rate = 0.5;
    gp.gpu = gpu;
    pf_genome_ctx ctx;
    pf_genome_ctx_init(&ctx, prog, &gp);
    pf_rng r;
    pf_rng_seed(&r, seed);
    pf_schedule *s = calloc(1, sizeof *s);
    pf_genome_initial(&ctx, &r, s);
    for (unsigned k = 0; k < mutations; k++)
        pf_genome_mutate(&ctx, &r, s);
    pf_error err;
    if (pf_schedule_validate(prog, s, &err) != 0) {
        pf_schedule_free(s);
        free(s);
        s = NULL;
    }
    pf_genome_ctx_free(&ctx);
    return s;
}

/* Inputs whose plan ran a stage on the (CPU-run) GPU lowering, for the replay's report. */
static int jo_gpu_plans;

static void jo_oracle_run_on(const uint8_t *data, size_t size, bool gpu)
{
    jo_gen g;
    memset(&g, 0, sizeof g);
    g.p = data;
    g.n = size;
    int w, h;
    char *src = jo_program(&g, &w, &h);
    pf_error err;
    pf_program *prog = pf_compile_string("fuzz.pf", src, &err);
    if (!prog) {
        if (getenv("PF_FUZZ_STRICT"))  /* while working on the generator */
            jo_fail(err.msg, src, NULL);
        free(src);
        return;
    }
    uint64_t seed = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++)
        seed = (seed ^ data[i]) * 1099511628211ull;
    pf_schedule *s = jo_schedule(prog, seed, jo_pick(&g, 8), gpu);
    char *text = s ? pf_schedule_text(prog, s) : NULL;
    if (getenv("PF_FUZZ_PRINT"))  /* what a crash ran */
        fprintf(stderr, "--- program (%dx%d)\n%s--- schedule\n%s\n", w, h, src,
                text ? text : "(none)");
    pf_plan_target t = pf_host_plan_target();
    t.gpu = gpu;
    pf_plan *plan = pf_plan_new(prog, s, &t, &err);
    if (!plan)
        jo_fail(err.msg, src, text);
    jo_gpu_plans += pf_plan_has_gpu(plan);
    size_t n = (size_t)w * (size_t)h;
    float *in = malloc(sizeof *in * n), *a = malloc(sizeof *a * n), *b = malloc(sizeof *b * n);
    uint32_t x = 12345u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        in[i] = (float)(x >> 8 & 0xffff) / 65535.0f;
        a[i] = b[i] = 1e30f;  /* a sample a backend leaves unwritten shows up */
    }
    pf_error e1, e2;
    int r1 = jo_run(prog, plan, PF_BACKEND_INTERP, w, h, in, a, &e1);
    int r2 = jo_run(prog, plan, PF_BACKEND_JIT, w, h, in, b, &e2);
    if (r1 != r2) {
        char why[2 * PF_ERROR_MAX + 64];
        snprintf(why, sizeof why, "interpreter %s, JIT %s", r1 ? e1.msg : "ran",
                 r2 ? e2.msg : "ran");
        jo_fail(why, src, text);
    }
    for (size_t i = 0; r1 == 0 && i < n; i++)
        if (!jo_same(a[i], b[i])) {
            char why[160];
            snprintf(why, sizeof why, "pixel (%zu, %zu) of %dx%d: interpreter %.9g, JIT %.9g",
                     i % (size_t)w, i / (size_t)w, w, h, (double)a[i], (double)b[i]);
            jo_fail(why, src, text);
        }
    free(in);
    free(a);
    free(b);
    free(text);
    pf_plan_free(plan);
    if (s) {
        pf_schedule_free(s);
        free(s);
    }
    pf_program_free(prog);
    free(src);
}

static inline void jo_oracle_run(const uint8_t *data, size_t size)
{
    jo_oracle_run_on(data, size, false);
}

static inline void jo_oracle_run_gpu(const uint8_t *data, size_t size)
{
    jo_oracle_run_on(data, size, true);
}

#endif
