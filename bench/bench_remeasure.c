/* bench_remeasure: does a run's timing hold when measured again? Takes candidates a search
 * measured (its final training frontier, then others drawn evenly from its records, exact-only
 * and perforated), measures them twice more through the local pool as `perfora tune` does
 * (the second pass in the reverse order, so drift and neighbours differ), and prints how well
 * one measurement predicts another: |speedup_a / speedup_b - 1| per class, median and max, for
 *   run -> pass 1   (what the run recorded; for the frontier, after confirmation)
 *   pass 1 -> 2     (the noise of one measurement)
 * With --also FILE, a schedule of the user's (for instance apps/blur_paper.sched) is measured
 * in the same passes, and the last line says whether a frontier variant dominates it (at least
 * as fast, on the mean of both passes, at no more error).
 * Usage: bench_remeasure RUN [--candidates N] [--jobs J] [--resolution WxH] [--set train|test]
 *                        [--also FILE]
 * (--resolution re-measures at another image size: the run -> pass rows then compare sizes). */
#include "base/fileio.h"
#include "cluster/pool.h"
#include "results/report_internal.h"
#include "results/rundir.h"
#include "search/evaluate.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct args {
    const char *run, *also;
    int candidates, jobs, width, height;
    pf_image_set set;
} args;

typedef struct cand {
    const pf_eval_record *rec;  /* the run's record (NULL: the --also schedule) */
    const char *schedule;
    bool frontier, exact_only;
    double pass[2];             /* relative times of the two passes (NaN: invalid) */
    double error;               /* on the measured split */
} cand;

static bool exact_only(const char *text)
{
    for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        const char *sp = strchr(p + 1, ' ');
        if (sp && strncmp(sp + 1, "exec", 4) != 0)
            return false;
    }
    return true;
}

static int parse_args(int argc, char **argv, args *a)
{
    *a = (args){ .candidates = 24, .jobs = 0, .set = PF_SET_TRAIN };
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--candidates") == 0 && v)
            a->candidates = atoi(argv[++i]);
        else if (strcmp(argv[i], "--jobs") == 0 && v)
            a->jobs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--resolution") == 0 && v) {
            if (sscanf(argv[++i], "%dx%d", &a->width, &a->height) != 2)
                return -1;
        } else if (strcmp(argv[i], "--also") == 0 && v)
            a->also = argv[++i];
        else if (strcmp(argv[i], "--set") == 0 && v)
            a->set = strcmp(argv[++i], "test") == 0 ? PF_SET_TEST : PF_SET_TRAIN;
        else if (argv[i][0] != '-' && !a->run)
            a->run = argv[i];
        else
            return -1;
    }
    return a->run && a->candidates > 0 ? 0 : -1;
}

/* The final training frontier first, then valid training records spread evenly over the
 * run (the last measurement of each schedule), up to a->candidates. */
static int choose(const args *a, const pf_report_run *run, cand *out)
{
    const pf_eval_record *recs = run->recs;
    const int *front = run->front;
    int n = run->n_recs, m = run->n_front, k = 0;
    for (int i = 0; i < m && k < a->candidates; i++)
        out[k++] = (cand){ &recs[front[i]], recs[front[i]].schedule, true,
                           exact_only(recs[front[i]].schedule), { 0 }, 0 };
    int pool = 0;
    for (int i = 0; i < n; i++)
        pool += recs[i].set == PF_SET_TRAIN && recs[i].valid && recs[i].generation >= 0;
    int want = a->candidates - k, seen = 0;
    for (int i = 0; i < n && want > 0 && k < a->candidates; i++) {
        const pf_eval_record *r = &recs[i];
        if (r->set != PF_SET_TRAIN || !r->valid || r->generation < 0)
            continue;
        bool taken = false;
        for (int j = 0; j < k; j++)
            taken |= strcmp(out[j].schedule, r->schedule) == 0;
        if (!taken && (long)seen++ * want % (pool > 0 ? pool : 1) < want)
            out[k++] = (cand){ r, r->schedule, false, exact_only(r->schedule), { 0 }, 0 };
    }
    return k;
}

/* One pass: every candidate submitted (in order or reversed), its relative time recorded. */
static int pass(pf_evaluator *ev, cand *c, int n, int which, pf_image_set set, pf_error *err)
{
    for (int i = 0; i < n; i++) {
        int j = which == 0 ? i : n - 1 - i;
        if (pf_evaluator_submit(ev, j, set, c[j].schedule, err) != 0)
            return -1;
    }
    for (int i = 0; i < n; i++) {
        pf_eval_record r;
        if (pf_evaluator_wait(ev, &r, err) != 1)
            return -1;
        c[r.id].pass[which] = r.valid ? r.time : NAN;
        c[r.id].error = r.error;
        pf_record_free(&r);
    }
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One row: median and max of |t_a / t_b - 1| (a ratio of relative times is the inverse ratio
 * of the speedups) over the candidates of a class. */
static void row(const char *label, const cand *c, int n, int cls, int from, int to)
{
    double *d = malloc(sizeof *d * (size_t)(n + 1));
    int m = 0, within = 0;
    for (int i = 0; i < n; i++) {
        if ((cls == 0 && !c[i].frontier) || (cls == 1 && !c[i].exact_only) ||
            (cls == 2 && c[i].exact_only) || (from < 0 && !c[i].rec))
            continue;
        /* a screened-out record's time is one short sample: not a claim */
        if (from < 0 && !c[i].rec->full_timing && !isnan(c[i].rec->screen_time))
            continue;
        double a = from < 0 ? c[i].rec->time : c[i].pass[from], b = c[i].pass[to];
        if (!isfinite(a) || !isfinite(b))
            continue;
        d[m] = fabs(b / a - 1);
        within += d[m++] <= 0.10;
    }
    qsort(d, (size_t)m, sizeof *d, cmp_double);
    if (m > 0)
        printf("%-28s %4d %10.3f %10.3f %9d/%d\n", label, m, d[m / 2], d[m - 1], within, m);
    else
        printf("%-28s %4d %10s %10s\n", label, 0, "-", "-");
    free(d);
}

static void print_table(const cand *c, int n)
{
    static const char *cls[] = { "frontier", "exact-only", "perforated" };
    printf("%-28s %4s %10s %10s %11s\n", "class, comparison", "n", "median", "max",
           "within 10%");
    for (int k = 0; k < 3; k++) {
        char l[64];
        snprintf(l, sizeof l, "%s: run -> pass 1", cls[k]);
        row(l, c, n, k, -1, 0);
        snprintf(l, sizeof l, "%s: pass 1 -> 2", cls[k]);
        row(l, c, n, k, 0, 1);
    }
    printf("\n%-4s %-5s %-6s %9s %9s %9s %8s  schedule\n", "#", "front", "kind", "run",
           "pass 1", "pass 2", "error");
    for (int i = 0; i < n; i++) {
        if (c[i].rec)
            printf("%-4d %-5s %-6s %8.2fx%s", i, c[i].frontier ? "yes" : "",
                   c[i].exact_only ? "exec" : "perf", 1 / c[i].rec->time,
                   !c[i].rec->full_timing && !isnan(c[i].rec->screen_time) ? "s" : " ");
        else
            printf("%-4d %-5s %-6s %10s", i, "also", c[i].exact_only ? "exec" : "perf", "-");
        printf(" %8.2fx %8.2fx %8.3f  ", 1 / c[i].pass[0], 1 / c[i].pass[1], c[i].error);
        for (const char *l = c[i].schedule; *l;) {  /* the genes, comments left out */
            size_t len = strcspn(l, "\n");
            if (*l != '#')
                printf("%.*s; ", (int)len, l);
            l += len + (l[len] == '\n');
        }
        putchar('\n');
    }
    printf("(s: the run's time of a candidate the screening set aside, one short sample per "
           "image)\n");
}

/* Whether two schedule texts have the same lines once comments are left out. */
static bool same_genes(const char *a, const char *b)
{
    for (;;) {
        while (*a == '#' || *a == '\n')
            a += *a == '\n' ? 1 : strcspn(a, "\n");
        while (*b == '#' || *b == '\n')
            b += *b == '\n' ? 1 : strcspn(b, "\n");
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (la != lb || strncmp(a, b, la) != 0)
            return false;
        if (!a[la])
            return !b[lb];
        a += la;
        b += lb;
    }
}

/* The --also schedule (the last candidate) against the frontier, on the mean of both passes.
 * A frontier variant that is the same schedule is said so: the two are one variant measured
 * twice, and their difference is the timing's noise. */
static void dominance(const cand *c, int n)
{
    const cand *x = &c[n - 1];
    double tx = (x->pass[0] + x->pass[1]) / 2;
    int best = -1;
    double tb = INFINITY;
    for (int i = 0; i < n - 1; i++) {
        double t = (c[i].pass[0] + c[i].pass[1]) / 2;
        if (c[i].frontier && c[i].error <= x->error && t < tb) {
            tb = t;
            best = i;
        }
    }
    printf("--also: %.2fx at error %.3f; the fastest frontier variant at no more error: ", 1 / tx,
           x->error);
    if (best < 0)
        printf("none: not dominated\n");
    else
        printf("#%d, %.2fx at error %.3f: %s%s\n", best, 1 / tb, c[best].error,
               tb <= tx ? "dominates" : "does not dominate",
               same_genes(c[best].schedule, x->schedule) ? " (the same schedule: a tie)" : "");
}

static int run_bench(const args *a, pf_error *err)
{
    pf_report_run run;
    if (pf_report_run_load(&run, a->run, err) != 0)
        return -1;
    pf_eval_config *cfg = &run.cfg.eval;
    free(cfg->program);
    cfg->program = pf_run_path(a->run, PF_RUN_PROGRAM);
    free(cfg->lock_path);
    cfg->lock_path = NULL;  /* a lock of this bench's own pool */
    if (a->width > 0) {
        cfg->width = a->width;
        cfg->height = a->height;
    }
    cand *c = calloc((size_t)a->candidates + 2, sizeof *c);
    int n = choose(a, &run, c), rc = 0;
    char *also = NULL;
    size_t len;
    if (n == 0)
        rc = pf_fail(err, "%s: no valid training records", a->run);
    if (rc == 0 && a->also && (rc = pf_read_file(a->also, 1 << 20, &also, &len, err)) == 0)
        c[n++] = (cand){ NULL, also, false, exact_only(also), { 0 }, 0 };
    pf_pool_options opt = { .jobs = a->jobs };
    pf_evaluator *ev = rc == 0 ? pf_pool_new(cfg, &opt, err) : NULL;
    if (!ev)
        rc = -1;
    if (rc == 0) {
        printf("bench_remeasure: %s, %d candidates (%s split, %dx%d), %s\n", a->run, n,
               pf_image_set_name(a->set), cfg->width, cfg->height, pf_evaluator_describe(ev));
        rc = pass(ev, c, n, 0, a->set, err);
    }
    if (rc == 0)
        rc = pass(ev, c, n, 1, a->set, err);
    if (rc == 0)
        print_table(c, n);
    if (rc == 0 && also)
        dominance(c, n);
    pf_evaluator_destroy(ev);
    free(c);
    free(also);
    pf_report_run_free(&run);
    return rc;
}

int main(int argc, char **argv)
{
    args a;
    if (parse_args(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: bench_remeasure RUN [--candidates N] [--jobs J] "
                        "[--resolution WxH] [--set train|test] [--also FILE]\n");
        return 2;
    }
    pf_error err;
    if (run_bench(&a, &err) != 0) {
        fprintf(stderr, "bench_remeasure: %s\n", err.msg);
        return 1;
    }
    return 0;
}
