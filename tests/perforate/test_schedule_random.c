/* Property test with a fixed seed: many random legal schedules per app validate, print, parse
 * back to an equal schedule with the same text, and apply and clear cleanly; their texts with
 * the lines in reverse order are still the same schedule. */
#include "tests/harness/harness.h"
#include "tests/perforate/perf_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEDULES_PER_APP 400

static void random_schedule(const pf_program *p, uint64_t *rng, pf_schedule *s)
{
    pf_schedule_reset(s);
    for (int l = 0; l < p->n_loops; l++)
        pt_random_gene(p, l, rng, &s->approx[l]);
    pt_fix_references(p, s);
}

/* The canonical text reversed line by line (the version line stays first), which must parse to
 * the same schedule: line order does not matter. */
static char *reverse_lines(const char *text)
{
    size_t n = strlen(text);
    char *out = malloc(n + 1), *o = out;
    const char *first_end = strchr(text, '\n') + 1;
    memcpy(o, text, (size_t)(first_end - text));
    o += first_end - text;
    const char *end = text + n;
    while (end > first_end) {
        const char *start = end - 1;
        while (start > first_end && start[-1] != '\n')
            start--;
        memcpy(o, start, (size_t)(end - start));
        o += end - start;
        end = start;
    }
    *o = '\0';
    return out;
}

static void check_round_trip(pf_program *p, const pf_schedule *s)
{
    pf_error err;
    int rc = pf_schedule_validate(p, s, &err);
    if (rc)
        fprintf(stderr, "random schedule invalid: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    char *text = pt_print(p, s);
    pf_schedule t;
    rc = pt_parse(p, text, &t, &err);
    if (rc)
        fprintf(stderr, "%s\nin:\n%s", err.msg, text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT(pf_schedule_equal(s, &t));
    char *again = pt_print(p, &t);
    CU_ASSERT_STRING_EQUAL(again, text);
    char *reversed = reverse_lines(text);
    pf_schedule u;
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, reversed, &u, &err), 0);
    CU_ASSERT(pf_schedule_equal(&t, &u));
    pf_plan *plan = pf_plan_new(p, &u, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL(plan);
    pf_plan_free(plan);
    free(reversed);
    free(again);
    free(text);
    pf_schedule_free(&u);
    pf_schedule_free(&t);
}

static void test_random_schedules_round_trip(void)
{
    uint64_t rng = 20160713;  /* fixed: reproducible */
    for (int a = 0; pt_apps[a]; a++) {
        pf_program *p = pt_load_app(pt_apps[a]);
        pf_schedule s;
        pf_schedule_init(&s, p);
        for (int i = 0; i < SCHEDULES_PER_APP; i++) {
            random_schedule(p, &rng, &s);
            check_round_trip(p, &s);
        }
        pf_schedule_free(&s);
        pf_program_free(p);
    }
}

/* Copying and equality: a copy is equal; changing one gene makes it unequal. */
static void test_copy_and_mutate(void)
{
    uint64_t rng = 7;
    pf_program *p = pt_load_app("bilateral_grid");
    pf_schedule s, c;
    pf_schedule_init(&s, p);
    for (int i = 0; i < 200; i++) {
        random_schedule(p, &rng, &s);
        pf_schedule_copy(&c, &s);
        CU_ASSERT(pf_schedule_equal(&s, &c));
        int l = pt_rand_int(&rng, 0, p->n_loops - 1);
        pf_approx_gene g;
        pt_random_gene(p, l, &rng, &g);
        bool same = pf_gene_equal(&g, &c.approx[l]);
        c.approx[l] = g;
        CU_ASSERT_EQUAL(pf_schedule_equal(&s, &c), same);
        char *a = pt_print(p, &s), *b = pt_print(p, &c);
        CU_ASSERT_EQUAL(strcmp(a, b) == 0, same);
        free(a);
        free(b);
        pf_schedule_free(&c);
    }
    pf_schedule_free(&s);
    pf_program_free(p);
}

/* Random damage to valid texts (bytes replaced, words dropped or repeated, truncation): parsing
 * never crashes, and either succeeds with a text that round-trips or names a line. */
static const char *const junk[] = {
    "grid", "adaptive", "importance", "channels", "reconstruct", "store", "on-demand",
    "gaussian", "gaussian-sv", "linear", "nearest", "step", "first", "last", "random", "exec",
    "0", "-1", "1e999", "0.5", "99999999999", "#", "\t", "\r", "loop_temp", "", "\xff",
    "reorder", "tile", "x", "xo", "c",
};

static void damage(char *buf, size_t cap, const char *text, uint64_t *rng)
{
    size_t n = strlen(text);
    snprintf(buf, cap, "%s", text);
    int edits = pt_rand_int(rng, 1, 4);
    for (int e = 0; e < edits; e++) {
        n = strlen(buf);
        size_t at = n ? (size_t)pt_rand_int(rng, 0, (int)n - 1) : 0;
        switch (pt_rand_int(rng, 0, 3)) {
        case 0: if (n) buf[at] = (char)pt_rand_int(rng, 1, 255); break;
        case 1: buf[at] = '\0'; break;
        default: {
            const char *w = junk[pt_rand_int(rng, 0, (int)(sizeof junk / sizeof *junk) - 1)];
            char tail[4096];
            snprintf(tail, sizeof tail, "%s", buf + at);
            snprintf(buf + at, cap - at, " %s %s", w, tail);
            break;
        }
        }
    }
}

static void test_damaged_texts_never_crash(void)
{
    uint64_t rng = 99;
    static char buf[8192];
    for (int a = 0; pt_apps[a]; a++) {
        pf_program *p = pt_load_app(pt_apps[a]);
        pf_schedule s;
        pf_schedule_init(&s, p);
        for (int i = 0; i < 300; i++) {
            random_schedule(p, &rng, &s);
            char *text = pt_print(p, &s);
            damage(buf, sizeof buf, text, &rng);
            pf_schedule t;
            pf_error err;
            if (pt_parse(p, buf, &t, &err) == 0) {
                char *again = pt_print(p, &t);
                pf_schedule u;
                CU_ASSERT_EQUAL(pt_parse(p, again, &u, &err), 0);
                CU_ASSERT(pf_schedule_equal(&t, &u));
                pf_schedule_free(&u);
                free(again);
                pf_schedule_free(&t);
            } else {
                CU_ASSERT(strncmp(err.msg, "t.sched:", 8) == 0);
            }
            free(text);
        }
        pf_schedule_free(&s);
        pf_program_free(p);
    }
}

PF_TEST_SUITE(schedule_random,
              PF_TEST(test_random_schedules_round_trip), PF_TEST(test_copy_and_mutate),
              PF_TEST(test_damaged_texts_never_crash))
