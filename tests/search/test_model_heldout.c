/* The search's models on candidates that real runs measured (tests/search/measured_APP.tsv,
 * written by tests/search/measured.sh from a `perfora tune` run): fitted on the first half of a
 * run's generations, they predict the second half, which they have not seen, with stated
 * accuracy. The bars sit below what the models do today (docs/search.md §10), so that a change
 * which makes them markedly worse at predicting fails here. */
#include "base/arena.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "search/model.h"
#include "tests/harness/harness.h"
#include "tests/search/search_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bars: Spearman's rank correlation at least RHO and the median relative error at most
 * TIME_MED (time) and ERROR_MED (error, of candidates whose genes were never measured together:
 * the others are looked up) on the held-out half. */
#define RHO 0.8
#define TIME_MED 0.35
#define ERROR_MED 0.3
/* The fixtures were measured on 2026-11-27's Zen 4 (AVX-512), whose default schedule gave the
 * bilateral filter's pixels 16 lanes (pf_default_width). */
#define FIXTURE_LANES 16

/* Adds the fixture's candidates to m; their generations go to gen (room for MAX_ROWS). */
#define MAX_ROWS 1024
static int load_measured(const char *app, pf_model *m, int *gen)
{
    char rel[128], *text = NULL;
    size_t len;
    pf_error err;
    snprintf(rel, sizeof rel, "tests/search/measured_%s.tsv", app);
    CU_ASSERT_EQUAL_FATAL(pf_read_file(pf_test_src(rel), 1 << 24, &text, &len, &err), 0);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *f[4] = { line }, *p = line;
        for (int k = 1; k < 4; k++) {
            p = strchr(p, '\t');
            CU_ASSERT_PTR_NOT_NULL_FATAL(p);
            *p++ = 0;
            f[k] = p;
        }
        pf_strbuf sb;  /* the schedule's text: its lines were joined by | */
        pf_sb_init(&sb);
        for (char *q = strchr(f[3], '|'); q; q = strchr(q, '|'))
            *q = '\n';
        pf_sb_printf(&sb, "# perfora schedule 1\n%s\n", f[3]);
        CU_ASSERT_FATAL(m->n < MAX_ROWS);
        int n = m->n;
        CU_ASSERT(pf_model_add(m, pf_sb_str(&sb), strtod(f[1], NULL), strtod(f[2], NULL)));
        if (m->n > n)
            gen[n] = atoi(f[0]);
        pf_sb_free(&sb);
    }
    free(text);
    return m->n;
}

static void check_app(const char *app)
{
    pf_program *prog = st_load_app(app);
    if (!prog)
        return;
    pf_model m;
    pf_model_init(&m, prog, FIXTURE_LANES);
    int gen[MAX_ROWS], last = 0;
    int n = load_measured(app, &m, gen);
    CU_ASSERT(n >= 200);
    for (int i = 0; i < n; i++)
        last = gen[i] > last ? gen[i] : last;
    int train[MAX_ROWS], test[MAX_ROWS], n_train = 0, n_test = 0;
    for (int i = 0; i < n; i++) {
        if (2 * gen[i] <= last)
            train[n_train++] = i;
        else
            test[n_test++] = i;
    }
    pf_model_accuracy a;
    pf_model_accuracy_of(&m, train, n_train, test, n_test, &a);
    printf("\n  %s: fitted on %d, %d held out: time Spearman %.3f, median relative error %.3f;"
           " error (%d predicted) Spearman %.3f, median relative error %.3f ", app, n_train,
           n_test, a.time_spearman, a.time_rel_median, a.error_n, a.error_spearman,
           a.error_rel_median);
    CU_ASSERT(n_test >= 100 && a.error_n >= 50);
    CU_ASSERT(a.time_spearman >= RHO);
    CU_ASSERT(a.time_rel_median <= TIME_MED);
    CU_ASSERT(a.error_spearman >= RHO);
    CU_ASSERT(a.error_rel_median <= ERROR_MED);
    pf_model_free(&m);
    pf_program_free(prog);
}

static void test_blur(void)
{
    check_app("blur");
}

static void test_bilateral_filter(void)
{
    check_app("bilateral_filter");
}

static void test_unsharp_mask(void)
{
    check_app("unsharp_mask");
}

PF_TEST_SUITE(search_model_heldout, PF_TEST(test_blur), PF_TEST(test_bilateral_filter),
              PF_TEST(test_unsharp_mask))
