/* Byte-identical outputs across refactorings: every app with its default schedule, every
 * schedule file in the repository, and 50 random genomes per app (the search's own generator,
 * fixed seeds) is run on the JIT, the C backend and the interpreter, and the SHA-256 of its
 * output floats is compared with tests/search/variant_hashes.tsv, written once by the code
 * before issue 21's refactoring.
 *
 * The CI run (suite search_hashes) checks a subset that takes about a minute: per app the
 * default schedule, every schedule file and the first PF_HASHES_CI_GENOMES genomes on the JIT
 * and the interpreter, and the C backend on each app's default schedule. The full set (about
 * 1,300 variants, 15 minutes or more) runs when PF_HASHES_FULL=1 is set, by hand:
 *     PF_HASHES_FULL=1 build/tests/test_search search_hashes
 * PF_HASHES_WRITE=1 rewrites the file from the code at hand (only when outputs are meant to
 * change, saying why in the commit); PF_HASHES_WRITE=errors computes only the outputs recorded
 * as "error" (a variant that failed to build or run) and keeps every other hash. */
#include "base/fileio.h"
#include "base/strbuf.h"
#include "codegen/compile.h"
#include "dataset/image.h"
#include "dataset/sha256.h"
#include "perforate/plan.h"
#include "perforate/schedule.h"
#include "search/genome.h"
#include "search/rng.h"

#include "tests/harness/harness.h"
#include "tests/search/search_test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_FILE "tests/search/variant_hashes.tsv"
#define N_GENOMES 50
#define PF_HASHES_CI_GENOMES 4
#define SEED 2100
#define CROP_X 40
#define CROP_Y 30
#define CROP_W 160
#define CROP_H 112
#define MAX_ROWS 1024

static const pf_backend backends[3] = { PF_BACKEND_JIT, PF_BACKEND_C, PF_BACKEND_INTERP };

/* One row of the file: an app, where its schedule comes from, the schedule's text ("" = the
 * default schedule) and one hash per backend. */
typedef struct hrow {
    char app[32];
    char label[64];
    char *text;
    char hash[3][65];
} hrow;

/* ---- the variant: the only part that knows how a variant is built ---- */

static int hash_variant(const pf_program *prog, const pf_param_values *pv, const char *text,
                        pf_backend backend, const pf_image *in, char hex[65])
{
    pf_error err;
    pf_plan_target t = pf_host_plan_target();
    pf_plan *plan = pf_plan_parse(prog, text, "<hashes>", &t, &err);
    if (!plan) {
        fprintf(stderr, "\n%s: schedule refused: %s\n", prog->name, err.msg);
        return -1;
    }
    pf_compile_options o = { 0 };
    o.backend = backend;
    o.threads = 2;
    pf_variant *v = pf_variant_build(prog, pv, plan, &o, &err);
    int rc = -1;
    pf_image *out = pf_image_new(in->width, in->height, in->channels, &err);
    if (v && out) {
        pf_buffer b[2] = { pf_image_buffer(in, 0), pf_image_buffer(out, 0) };
        rc = pf_variant_run(v, b, &err);
    }
    if (rc)
        fprintf(stderr, "\n%s (%s): %s\n", prog->name, pf_backend_name(backend), err.msg);
    else {
        pf_sha256 h;
        pf_sha256_init(&h);
        for (int c = 0; c < out->channels; c++)
            for (int y = 0; y < out->height; y++)
                pf_sha256_update(&h, pf_image_at(out, 0, y, c), sizeof(float) * out->width);
        pf_sha256_final_hex(&h, hex);
    }
    pf_image_free(out);
    pf_variant_free(v);
    pf_plan_free(plan);
    return rc;
}

/* ---- inputs and schedules ---- */

/* Newlines as "\n" (two characters), so a schedule fits a TSV field. */
static char *escape(const char *text)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    for (const char *c = text; *c; c++)
        if (*c == '\n')
            pf_sb_puts(&sb, "\\n");
        else
            pf_sb_putc(&sb, *c);
    char *s = pf_xstrdup(pf_sb_str(&sb));
    pf_sb_free(&sb);
    return s;
}

static char *unescape(const char *field)
{
    char *s = pf_xstrdup(field), *o = s;
    for (const char *c = field; *c; c++) {
        if (c[0] == '\\' && c[1] == 'n') {
            *o++ = '\n';
            c++;
        } else {
            *o++ = *c;
        }
    }
    *o = 0;
    return s;
}

/* The app a schedule file is for: the longest app name its file name starts with. */
static const char *file_app(const char *base)
{
    const char *best = NULL;
    for (int i = 0; st_apps[i]; i++) {
        size_t n = strlen(st_apps[i]);
        if (strncmp(base, st_apps[i], n) == 0 && (base[n] == '.' || base[n] == '_') &&
            (!best || n > strlen(best)))
            best = st_apps[i];
    }
    return best;
}

static int add_row(hrow *rows, int n, const char *app, const char *label, char *text)
{
    CU_ASSERT_FATAL(n < MAX_ROWS);
    memset(&rows[n], 0, sizeof rows[n]);
    snprintf(rows[n].app, sizeof rows[n].app, "%s", app);
    snprintf(rows[n].label, sizeof rows[n].label, "%.*s", (int)sizeof rows[n].label - 1, label);
    rows[n].text = text;
    return n + 1;
}

static int add_files(hrow *rows, int n, const char *app, const char *dir)
{
    DIR *d = opendir(pf_test_src(dir));
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    char *names[64];
    int k = 0;
    for (struct dirent *e; (e = readdir(d)) && k < 64;) {
        size_t l = strlen(e->d_name);
        if (l > 6 && strcmp(e->d_name + l - 6, ".sched") == 0)
            names[k++] = pf_xstrdup(e->d_name);
    }
    closedir(d);
    for (int i = 0; i < k; i++)  /* a fixed order: sorted names */
        for (int j = i + 1; j < k; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    for (int i = 0; i < k; i++) {
        const char *a = file_app(names[i]);
        if (a && strcmp(a, app) == 0) {
            char rel[256], *text;
            size_t len;
            pf_error err;
            snprintf(rel, sizeof rel, "%s/%s", dir, names[i]);
            CU_ASSERT_EQUAL_FATAL(pf_read_file(pf_test_src(rel), 1 << 20, &text, &len, &err), 0);
            n = add_row(rows, n, app, rel, text);
        }
        free(names[i]);
    }
    return n;
}

/* The rows the code at hand generates: default, files, genomes (canonical text). */
static int generate_rows(hrow *rows)
{
    int n = 0;
    for (int a = 0; st_apps[a]; a++) {
        pf_program *prog = st_load_app(st_apps[a]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
        n = add_row(rows, n, st_apps[a], "default", pf_xstrdup(""));
        n = add_files(rows, n, st_apps[a], "apps");
        n = add_files(rows, n, st_apps[a], "bench/schedules");
        pf_genome_params gp = pf_genome_params_default();
        gp.exec_rate = 0.5;  /* execution genes in about half of the genomes */
        pf_genome_ctx gc;
        pf_genome_ctx_init(&gc, prog, &gp);
        pf_rng r;
        pf_rng_seed(&r, SEED + (uint64_t)a);
        for (int g = 0; g < N_GENOMES; g++) {
            pf_schedule s;
            pf_genome_initial(&gc, &r, &s);
            for (int m = pf_rng_below(&r, 4); m > 0; m--)
                pf_genome_mutate(&gc, &r, &s);
            pf_strbuf sb;
            pf_sb_init(&sb);
            pf_schedule_print(prog, &s, &sb);
            char label[32];
            snprintf(label, sizeof label, "genome-%02d", g);
            n = add_row(rows, n, st_apps[a], label, pf_xstrdup(pf_sb_str(&sb)));
            pf_sb_free(&sb);
            pf_schedule_free(&s);
        }
        pf_genome_ctx_free(&gc);
        pf_program_free(prog);
    }
    return n;
}

static int read_rows(hrow *rows)
{
    char *text;
    size_t len;
    pf_error err;
    if (pf_read_file(pf_test_src(HASH_FILE), 16 << 20, &text, &len, &err)) {
        fprintf(stderr, "\n%s\n", err.msg);
        return -1;
    }
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *f[6], *s2 = NULL;
        int k = 0;
        for (char *t = strtok_r(line, "\t", &s2); t && k < 6; t = strtok_r(NULL, "\t", &s2))
            f[k++] = t;
        CU_ASSERT_EQUAL_FATAL(k, 6);
        n = add_row(rows, n, f[0], f[1], unescape(strcmp(f[2], "-") == 0 ? "" : f[2]));
        for (int b = 0; b < 3; b++)
            snprintf(rows[n - 1].hash[b], 65, "%s", f[3 + b]);
    }
    free(text);
    return n;
}

static void free_rows(hrow *rows, int n)
{
    for (int i = 0; i < n; i++)
        free(rows[i].text);
}

/* ---- which rows a run checks ---- */

static bool full_run(void)
{
    const char *e = getenv("PF_HASHES_FULL");
    return e && *e && strcmp(e, "0") != 0;
}

static bool selected(const hrow *r, int backend)
{
    if (full_run())
        return true;
    bool genome = strncmp(r->label, "genome-", 7) == 0;
    if (backends[backend] == PF_BACKEND_C)
        return strcmp(r->label, "default") == 0;
    return !genome || atoi(r->label + 7) < PF_HASHES_CI_GENOMES;
}

/* What compute() does with the rows: check the selected ones, or fill in every hash or only
 * those recorded as "error". */
typedef enum mode { CHECK, WRITE_ALL, WRITE_ERRORS } mode;

static bool wanted(const hrow *r, int b, mode m)
{
    return m == WRITE_ALL || (m == WRITE_ERRORS ? strcmp(r->hash[b], "error") == 0
                                                : selected(r, b));
}

/* Computes the hashes the mode wants, one program per app. */
static void compute(hrow *rows, int n, mode m, const pf_image *in, int *checked)
{
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && strcmp(rows[j].app, rows[i].app) == 0)
            j++;
        pf_program *prog = st_load_app(rows[i].app);
        CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
        pf_param_values pv;
        pf_params_init(&pv, prog);
        for (int k = i; k < j; k++)
            for (int b = 0; b < 3; b++) {
                if (!wanted(&rows[k], b, m))
                    continue;
                char hex[65] = "error";
                hash_variant(prog, &pv, rows[k].text, backends[b], in, hex);
                if (m != CHECK) {
                    snprintf(rows[k].hash[b], 65, "%s", hex);
                    continue;
                }
                (*checked)++;
                if (strcmp(hex, rows[k].hash[b]) != 0)
                    fprintf(stderr, "\n%s %s (%s): output hash %.16s, was %.16s\n", rows[k].app,
                            rows[k].label, pf_backend_name(backends[b]), hex, rows[k].hash[b]);
                CU_ASSERT_STRING_EQUAL(hex, rows[k].hash[b]);
            }
        pf_params_free(&pv);
        pf_program_free(prog);
        i = j;
    }
}

static void write_rows(const hrow *rows, int n)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_printf(&sb, "# The outputs' SHA-256 per app, schedule and backend (jit, c, interp), on a "
                      "%dx%d crop at (%d, %d) of data/images/train/man_made_1_256x192.png, "
                      "2 threads.\n# Genomes: pf_genome_initial then 0-3 pf_genome_mutate, "
                      "exec_rate 0.5, seed %d + app index. tests/search/test_variant_hashes.c "
                      "writes and checks this file.\n",
                 CROP_W, CROP_H, CROP_X, CROP_Y, SEED);
    for (int i = 0; i < n; i++) {
        char *t = escape(rows[i].text);
        pf_sb_printf(&sb, "%s\t%s\t%s\t%s\t%s\t%s\n", rows[i].app, rows[i].label, *t ? t : "-",
                     rows[i].hash[0], rows[i].hash[1], rows[i].hash[2]);
        free(t);
    }
    pf_error err;
    CU_ASSERT_EQUAL(pf_write_file_atomic(pf_test_src(HASH_FILE), pf_sb_str(&sb), sb.len, &err),
                    0);
    pf_sb_free(&sb);
}

static void test_outputs_unchanged(void)
{
    hrow *rows = pf_xcalloc(MAX_ROWS, sizeof *rows);
    pf_image *in = st_train_crop(CROP_X, CROP_Y, CROP_W, CROP_H);
    const char *w = getenv("PF_HASHES_WRITE");
    if (w && strcmp(w, "errors") == 0) {
        int n = read_rows(rows);
        CU_ASSERT_FATAL(n > 0);
        compute(rows, n, WRITE_ERRORS, in, NULL);
        write_rows(rows, n);
        printf("\n  recomputed the failed outputs of %s\n", HASH_FILE);
        free_rows(rows, n);
    } else if (w && *w && strcmp(w, "0") != 0) {
        int n = generate_rows(rows);
        compute(rows, n, WRITE_ALL, in, NULL);
        write_rows(rows, n);
        printf("\n  wrote %d rows to %s\n", n, HASH_FILE);
    } else {
        int n = read_rows(rows);
        CU_ASSERT_FATAL(n > 0);
        /* The generator still draws the genomes the file holds (same schedules checked). */
        hrow *now = pf_xcalloc(MAX_ROWS, sizeof *now);
        int m = generate_rows(now);
        CU_ASSERT_EQUAL(m, n);
        for (int i = 0; i < n && i < m; i++)
            CU_ASSERT_STRING_EQUAL(now[i].text, rows[i].text);
        free_rows(now, m);
        free(now);
        int checked = 0;
        compute(rows, n, CHECK, in, &checked);
        printf("\n  %d outputs identical to %s (%s set%s)\n", checked, HASH_FILE,
               full_run() ? "full" : "CI",
               full_run() ? "" : "; PF_HASHES_FULL=1 checks all of them");
        free_rows(rows, n);
    }
    pf_image_free(in);
    free(rows);
}

PF_TEST_SUITE(search_hashes, PF_TEST(test_outputs_unchanged))
