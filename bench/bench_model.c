/* bench_model: how well the search's models (search/model.h) predict candidates they have not
 * seen, on the measured candidates of finished runs (docs/search.md §10). Two held-out
 * protocols per run:
 *   ahead: as the search uses them: every generation g >= 1 predicted by models fitted on the
 *          generations before it (each candidate predicted once, before "its" measurement);
 *   split: a fixed 75/25 split of the candidates (every fourth held out, in record order).
 * For each: Spearman's rank correlation and the median and mean relative error of time and of
 * error (error: held-out candidates whose set of genes had not been measured, with measured
 * error >= 0.1 Lab; the others are looked up, not predicted), and the share of held-out
 * candidates whose genes were measured together before (exact lookups). Per generation of the
 * ahead protocol (and, for a guided run, of the predictions its records carry, made before each
 * child was measured): the median Spearman, the spread of the measured times (IQR of log time)
 * and the bias (median log(measured / predicted)), which tell a narrow range of children from
 * a worse model.
 * Usage: bench_model [--dump] [--insample] [--predict FILE] RUN [RUN ...]
 *        (run directories of perfora tune; nothing is timed) */
#include "base/arena.h"
#include "base/fileio.h"
#include "codegen/compile.h"
#include "lang/lang.h"
#include "search/eval.h"
#include "search/ga.h"
#include "search/model.h"
#include "search/model_fit.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --dump: every prediction of the "ahead" protocol on a line of its own. */
static bool dump;
/* --predict FILE: schedules (separated by blank lines) predicted by the models fitted on all
 * of each run: why a search did or did not measure a child. */
static const char *predict_file;
/* --insample: the split protocol fitted and evaluated on every candidate (the fit's residual). */
static bool insample;

typedef struct run_data {
    pf_program *prog;
    pf_model all;       /* every valid training measurement, in record order */
    int *gen;           /* [all.n]: its generation */
    int max_gen;
} run_data;

static int load_run(const char *dir, run_data *rd)
{
    char path[4096];
    pf_error err;
    snprintf(path, sizeof path, "%s/program.pf", dir);
    rd->prog = pf_load_program(path, &err);
    snprintf(path, sizeof path, "%s/evaluations.jsonl", dir);
    char *text = NULL;
    size_t len;
    if (!rd->prog || pf_read_file(path, (size_t)1 << 30, &text, &len, &err) != 0) {
        fprintf(stderr, "bench_model: %s: %s\n", dir, err.msg);
        return -1;
    }
    pf_model_init(&rd->all, rd->prog, pf_host_plan_target().vector_lanes);
    int cap = 1024;
    rd->gen = pf_xmalloc(sizeof *rd->gen * (size_t)cap);
    rd->max_gen = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        pf_eval_record r;
        if (pf_record_from_json(line, &r, &err) != 0)
            continue;
        if (r.set == PF_SET_TRAIN && r.valid && r.generation >= 0 &&
            pf_model_add(&rd->all, r.schedule, r.time, r.error)) {
            if (rd->all.n > cap)
                rd->gen = pf_xrealloc(rd->gen, sizeof *rd->gen * (size_t)(cap *= 2));
            rd->gen[rd->all.n - 1] = r.generation;
            if (r.generation > rd->max_gen)
                rd->max_gen = r.generation;
        }
        pf_record_free(&r);
    }
    free(text);
    return 0;
}

static void print_row(const char *run, const char *how, const pf_model_accuracy *a)
{
    printf("%-28s %-6s %5d %5d | %6.3f %6.3f %6.3f | %6.3f %6.3f %6.3f %4d | %5.1f%%\n", run, how,
           a->n_train, a->n_test, a->time_spearman, a->time_rel_median, a->time_rel_mean,
           a->error_spearman, a->error_rel_median, a->error_rel_mean, a->error_n,
           a->n_test ? 100.0 * a->error_measured / a->n_test : 0.0);
}

/* Within one generation's held-out candidates (what a guided search's log reports per
 * generation): Spearman of predicted against measured time, the spread of the measured times
 * (interquartile range of their log) and the bias of the predictions (median log(measured /
 * predicted): > 0, optimistic). A generation of fewer than 5 is left out. */
typedef struct per_gen {
    int n;
    double rho[4096], spread[4096], bias[4096];
} per_gen;

static void generation_figures(const double *pt, const double *mt, int n, per_gen *pg)
{
    if (n < 5 || pg->n == 4096)
        return;
    pg->rho[pg->n] = pf_spearman(pt, mt, n);
    pg->spread[pg->n] = pf_fit_log_iqr(mt, n);
    pg->bias[pg->n++] = pf_fit_log_bias(pt, mt, n);
}

static void print_per_gen(const char *run, const char *how, per_gen *pg)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < pg->n; i++) {
        lo = fmin(lo, pg->rho[i]);
        hi = fmax(hi, pg->rho[i]);
    }
    printf("%-28s %-8s per generation (%d of >= 5): time Spearman median %.2f (%.2f to %.2f), "
           "spread of log time (IQR) median %.2f, median log(measured / predicted) %+.2f\n",
           run, how, pg->n, pf_fit_median(pg->rho, pg->n), lo, hi,
           pf_fit_median(pg->spread, pg->n), pf_fit_median(pg->bias, pg->n));
}

/* The predictions a guided run made before measuring (pred_time in its records), per
 * generation. */
static void recorded(const char *dir, const char *name)
{
    char path[4096], *text = NULL;
    size_t len;
    pf_error err;
    snprintf(path, sizeof path, "%s/evaluations.jsonl", dir);
    if (pf_read_file(path, (size_t)1 << 30, &text, &len, &err) != 0)
        return;
    static double pt[1 << 16], mt[1 << 16];
    static int gen[1 << 16];
    int n = 0, max_gen = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line && n < (1 << 16);
         line = strtok_r(NULL, "\n", &save)) {
        pf_eval_record r;
        if (pf_record_from_json(line, &r, &err) != 0)
            continue;
        if (r.set == PF_SET_TRAIN && r.valid && r.generation >= 1 && isfinite(r.pred_time)) {
            pt[n] = r.pred_time;
            mt[n] = r.time;
            gen[n++] = r.generation;
            max_gen = r.generation > max_gen ? r.generation : max_gen;
        }
        pf_record_free(&r);
    }
    free(text);
    if (n == 0)
        return;
    static per_gen pg;
    pg.n = 0;
    static double a[1 << 16], b[1 << 16];
    for (int g = 1; g <= max_gen; g++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (gen[i] == g) {
                a[k] = pt[i];
                b[k++] = mt[i];
            }
        generation_figures(a, b, k, &pg);
    }
    double med, mean;
    pf_relative_error(pt, mt, n, &med, &mean);
    printf("%-28s recorded %d predictions made before measuring: time Spearman %.2f, median "
           "relative error %.2f\n", name, n, pf_spearman(pt, mt, n), med);
    print_per_gen(name, "recorded", &pg);
}

/* Pools the per-generation held-out predictions: returns the figures over all of them. */
static void ahead(run_data *rd, pf_model_accuracy *out, per_gen *pg)
{
    int n = rd->all.n;
    int *train = pf_xmalloc(sizeof *train * (size_t)(n + 1));
    int *test = pf_xmalloc(sizeof *test * (size_t)(n + 1));
    double *pt = pf_xmalloc(sizeof *pt * 4 * (size_t)(n + 1));
    double *mt = pt + n, *pe = mt + n, *me = pe + n;
    int nt = 0, ne = 0, measured = 0, trained = 0;
    for (int g = 1; g <= rd->max_gen; g++) {
        int a = 0, b = 0;
        for (int i = 0; i < n; i++) {
            if (rd->gen[i] < g)
                train[a++] = i;
            else if (rd->gen[i] == g)
                test[b++] = i;
        }
        if (b == 0)
            continue;
        int first = nt;
        pf_model sub;
        pf_model_init(&sub, rd->prog, rd->all.wide_lanes);
        for (int i = 0; i < a; i++) {
            char *text = pf_schedule_text(rd->prog, &rd->all.sched[train[i]]);
            pf_model_add(&sub, text, rd->all.t[train[i]], rd->all.e[train[i]]);
            free(text);
        }
        pf_model_fit(&sub);
        trained += a;
        for (int i = 0; i < b; i++) {
            int j = test[i], how;
            pt[nt] = pf_model_time(&sub, &rd->all.sched[j], &rd->all.feat[j]);
            mt[nt++] = rd->all.t[j];
            double e = pf_error_model_predict(&sub.error, &rd->all.sched[j], &how);
            measured += how == 1;
            if (dump) {
                char *text = pf_schedule_text(rd->prog, &rd->all.sched[j]);
                for (char *p = strchr(text, '\n'); p; p = strchr(p, '\n'))
                    *p = p[1] ? '|' : ' ';
                printf("dump %d %8.3f %8.3f %7.3f %7.3f %d %s\n", g, pt[nt - 1], mt[nt - 1], e,
                       rd->all.e[j], how, strchr(text, '|') ? strchr(text, '|') + 1 : "");
                free(text);
            }
            if (how != 1 && rd->all.e[j] >= 0.1) {
                pe[ne] = e;
                me[ne++] = rd->all.e[j];
            }
        }
        pf_model_free(&sub);
        generation_figures(pt + first, mt + first, nt - first, pg);
    }
    memset(out, 0, sizeof *out);
    out->n_train = rd->max_gen > 0 ? trained / rd->max_gen : 0;
    out->n_test = nt;
    out->time_spearman = pf_spearman(pt, mt, nt);
    pf_relative_error(pt, mt, nt, &out->time_rel_median, &out->time_rel_mean);
    out->error_n = ne;
    out->error_measured = measured;
    out->error_spearman = pf_spearman(pe, me, ne);
    pf_relative_error(pe, me, ne, &out->error_rel_median, &out->error_rel_mean);
    free(pt);
    free(train);
    free(test);
}

static void split(run_data *rd, pf_model_accuracy *out)
{
    int n = rd->all.n, a = 0, b = 0;
    int *train = pf_xmalloc(sizeof *train * (size_t)(n + 1));
    int *test = pf_xmalloc(sizeof *test * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        if (i % 4 == 3 || insample)
            test[b++] = i;
        if (i % 4 != 3 || insample)
            train[a++] = i;
    }
    pf_model_accuracy_of(&rd->all, train, a, test, b, out);
    if (dump && insample) {
        pf_model sub;
        pf_model_init(&sub, rd->prog, rd->all.wide_lanes);
        for (int i = 0; i < n; i++) {
            char *text = pf_schedule_text(rd->prog, &rd->all.sched[i]);
            pf_model_add(&sub, text, rd->all.t[i], rd->all.e[i]);
            free(text);
        }
        pf_model_fit(&sub);
        for (int i = 0; i < n; i++) {
            char *text = pf_schedule_text(rd->prog, &rd->all.sched[i]);
            for (char *p = strchr(text, '\n'); p; p = strchr(p, '\n'))
                *p = p[1] ? '|' : ' ';
            printf("fit %8.3f %8.3f %s\n", pf_time_model_predict(&sub.time, &rd->all.feat[i]),
                   rd->all.t[i], strchr(text, '|') ? strchr(text, '|') + 1 : "");
            free(text);
        }
        pf_model_free(&sub);
    }
    free(train);
    free(test);
}

/* Every schedule of predict_file, predicted by rd's models fitted on all its measurements. */
static void predict_listed(const run_data *rd, const char *name)
{
    char *text = NULL;
    size_t len;
    pf_error err;
    if (pf_read_file(predict_file, (size_t)1 << 24, &text, &len, &err) != 0) {
        fprintf(stderr, "bench_model: %s\n", err.msg);
        return;
    }
    for (char *p = text; p && *p;) {
        if (*p == '\n') {  /* more blank lines between two schedules */
            p++;
            continue;
        }
        char *end = strstr(p, "\n\n");
        if (end)
            *end = 0;
        pf_schedule s;
        if (pf_schedule_parse(rd->prog, p, predict_file, &s, &err) != 0) {
            printf("%-28s predict: %s\n", name, err.msg);
        } else {
            double t, e;
            pf_model_predict(&rd->all, &s, &t, &e);
            pf_features f;  /* the fit alone, before its relatives' residuals correct it */
            pf_features_of(rd->all.prog, &rd->all.ps, &s, &f);
            double fit = pf_time_model_predict(&rd->all.time, &f);
            pf_features_free(&f);
            for (char *c = p; *c; c++)
                *c = *c == '\n' ? '|' : *c;
            printf("%-28s predict time %.3f (fit %.3f) error %.3f: %s\n", name, t, fit, e, p);
            pf_schedule_free(&s);
        }
        p = end ? end + 2 : NULL;
    }
    free(text);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: bench_model [--dump] [--insample] [--predict FILE] RUN [RUN ...]\n");
        return 2;
    }
    printf("# held-out accuracy of the search's models; time: Spearman, relative error median "
           "and mean;\n# error: the same on new sets of genes with error >= 0.1 (n); lookups: "
           "held-out candidates whose genes were measured together before\n");
    printf("%-28s %-6s %5s %5s | %6s %6s %6s | %6s %6s %6s %4s | %s\n", "run", "how", "train",
           "test", "t.rho", "t.med", "t.mean", "e.rho", "e.med", "e.mean", "n", "lookups");
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dump") == 0 || strcmp(argv[i], "--insample") == 0) {
            *(argv[i][2] == 'd' ? &dump : &insample) = true;
            continue;
        }
        if (strcmp(argv[i], "--predict") == 0 && i + 1 < argc) {
            predict_file = argv[++i];
            continue;
        }
        run_data rd;
        memset(&rd, 0, sizeof rd);
        if (load_run(argv[i], &rd) != 0) {
            rc = 1;
            continue;
        }
        const char *name = strrchr(argv[i], '/') && strrchr(argv[i], '/')[1]
                               ? strrchr(argv[i], '/') + 1 : argv[i];
        pf_model_accuracy a;
        static per_gen pg;
        pg.n = 0;
        ahead(&rd, &a, &pg);
        print_row(name, "ahead", &a);
        print_per_gen(name, "ahead", &pg);
        recorded(argv[i], name);
        split(&rd, &a);
        print_row(name, "split", &a);
        pf_model_fit(&rd.all);
        printf("%-28s fitted on all %d: error composition a %.2f p %g (%d candidates with "
               "several genes), time model's typical error %.0f%%\n", name, rd.all.n,
               rd.all.error.a, rd.all.error.p, rd.all.error.n_multi,
               100 * (exp(rd.all.sigma) - 1));
        if (predict_file)
            predict_listed(&rd, name);
        pf_model_free(&rd.all);
        free(rd.gen);
        pf_program_free(rd.prog);
    }
    return rc;
}
