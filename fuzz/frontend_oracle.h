/* The front end's fuzzing oracle, shared by the libFuzzer target (fuzz_frontend.c) and the
 * regression test that replays fuzz/regressions/ (tests/lang/test_fuzz_regressions.c).
 *
 * On any input: parse, render diagnostics, check, bind; and for a program that parses,
 * print -> reparse must succeed and give an equal program whose printout is the same text,
 * and checking both must agree. A violation aborts (a finding); crashes, hangs, leaks and
 * undefined behaviour are caught by the sanitizers. */
#ifndef PF_FUZZ_FRONTEND_ORACLE_H
#define PF_FUZZ_FRONTEND_ORACLE_H

#include "lang/lang.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pf_oracle_fail(const char *what, const char *text)
{
    fprintf(stderr, "front-end oracle: %s\n%s\n", what, text ? text : "");
    abort();
}

static char *pf_oracle_print(const pf_program *prog)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_print_program(prog, &sb);
    return pf_sb_take(&sb);
}

/* Binds a checked program to small made-up input extents (constants where declared). */
static void pf_oracle_bind(const pf_program *prog)
{
    int64_t (*ext)[PF_MAX_DIMS] = calloc((size_t)prog->n_inputs + 1, sizeof *ext);
    for (int i = 0; i < prog->n_inputs; i++)
        for (int d = 0; d < prog->inputs[i]->ndims; d++) {
            pf_value v;
            bool is_const = pf_eval_const_expr(prog->inputs[i]->extents[d], NULL, NULL, &v) == 0;
            ext[i][d] = is_const ? v.i : 3 + d;
        }
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_binding b;
    pf_error err;
    if (pf_bind(prog, &pv, (const int64_t(*)[PF_MAX_DIMS])ext, &b, &err) == 0)
        pf_binding_free(&b);
    pf_params_free(&pv);
    free(ext);
}

static void pf_oracle_compare_checked(const pf_program *a, const pf_program *b)
{
    if (a->n_stages != b->n_stages || a->n_loops != b->n_loops || a->n_images != b->n_images)
        pf_oracle_fail("checking the reparsed program gives other tables", NULL);
    for (int i = 0; i < a->n_stages; i++)
        if (a->stages[i]->serial != b->stages[i]->serial ||
            a->stages[i]->n_slots != b->stages[i]->n_slots)
            pf_oracle_fail("checking the reparsed program gives another stage", NULL);
}

static void pf_oracle_roundtrip(pf_program *prog)
{
    char *text = pf_oracle_print(prog);
    pf_diags d;
    pf_diags_init(&d, "printed.pf", text);
    pf_program *again = pf_parse("printed.pf", text, strlen(text), &d);
    if (!again)
        pf_oracle_fail("the printed program does not parse", text);
    if (!pf_program_equal(prog, again))
        pf_oracle_fail("the printed program parses to another program", text);
    char *text2 = pf_oracle_print(again);
    if (strcmp(text, text2) != 0)
        pf_oracle_fail("printing is not stable", text2);
    pf_diags_free(&d);
    pf_diags d1, d2;
    pf_diags_init(&d1, "fuzz.pf", NULL);
    pf_diags_init(&d2, "printed.pf", NULL);
    int rc1 = pf_check(prog, &d1), rc2 = pf_check(again, &d2);
    if (rc1 != rc2)
        pf_oracle_fail("the printed program checks differently", text);
    if (rc1 == 0) {
        char *text3 = pf_oracle_print(prog);
        if (strcmp(text, text3) != 0 || !pf_program_equal(prog, again))
            pf_oracle_fail("checking changed the printed program", text3);
        free(text3);
        pf_oracle_compare_checked(prog, again);
        pf_oracle_bind(prog);
    }
    pf_diags_free(&d1);
    pf_diags_free(&d2);
    pf_program_free(again);
    free(text);
    free(text2);
}

static void pf_oracle_run(const unsigned char *data, size_t size)
{
    char *src = malloc(size + 1);
    if (size)
        memcpy(src, data, size);
    src[size] = '\0';
    pf_diags d;
    pf_diags_init(&d, "fuzz.pf", src);
    pf_program *prog = pf_parse("fuzz.pf", src, size, &d);
    if (!prog && d.count == 0)
        pf_oracle_fail("parse failed without a diagnostic", NULL);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_diags_render(&d, &sb);
    pf_sb_free(&sb);
    if (prog)
        pf_oracle_roundtrip(prog);
    pf_program_free(prog);
    pf_diags_free(&d);
    free(src);
}

#endif
