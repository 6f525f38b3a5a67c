/* Helpers shared by the front end's test files. */
#include "tests/lang/test_front_util.h"

#include "base/fileio.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pf_program *ft_compile(const char *src, char **errors)
{
    pf_diags d;
    pf_diags_init(&d, "test.pf", src);
    pf_program *prog = pf_parse("test.pf", src, strlen(src), &d);
    if (prog && pf_check(prog, &d) != 0) {
        pf_program_free(prog);
        prog = NULL;
    }
    if (errors) {
        pf_strbuf sb;
        pf_sb_init(&sb);
        pf_diags_render(&d, &sb);
        *errors = pf_xstrdup(pf_sb_str(&sb));
        pf_sb_free(&sb);
    }
    pf_diags_free(&d);
    return prog;
}

pf_program *ft_check_ok(const char *src)
{
    char *errors;
    pf_program *prog = ft_compile(src, &errors);
    if (!prog || errors[0])
        fprintf(stderr, "\nunexpected errors:\n%s\nin:\n%s\n", errors, src);
    bool clean = errors[0] == '\0';
    free(errors);
    CU_ASSERT_TRUE(clean);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    return prog;
}

char *ft_first_error(const char *src)
{
    pf_diags d;
    pf_diags_init(&d, "test.pf", src);
    pf_program *prog = pf_parse("test.pf", src, strlen(src), &d);
    int rc = prog ? pf_check(prog, &d) : -1;
    char *out = NULL;
    if (rc != 0 && d.count > 0) {
        size_t n = strlen(d.items[0].message) + 32;
        out = malloc(n);
        snprintf(out, n, "%d:%d: %s", d.items[0].loc.line, d.items[0].loc.col,
                 d.items[0].message);
    }
    pf_program_free(prog);
    pf_diags_free(&d);
    return out;
}

static pf_program *reparse(const char *text)
{
    pf_diags d;
    pf_diags_init(&d, "printed.pf", text);
    pf_program *p = pf_parse("printed.pf", text, strlen(text), &d);
    if (!p) {
        pf_strbuf sb;
        pf_sb_init(&sb);
        pf_diags_render(&d, &sb);
        fprintf(stderr, "\nprinted program does not parse:\n%s\n%s\n", pf_sb_str(&sb), text);
        pf_sb_free(&sb);
    }
    pf_diags_free(&d);
    return p;
}

bool ft_roundtrip(const pf_program *prog)
{
    pf_strbuf a, b;
    pf_sb_init(&a);
    pf_sb_init(&b);
    pf_print_program(prog, &a);
    pf_program *q = reparse(pf_sb_str(&a));
    bool ok = q && pf_program_equal(prog, q);
    if (q) {
        pf_print_program(q, &b);
        ok = ok && strcmp(pf_sb_str(&a), pf_sb_str(&b)) == 0;
    }
    if (!ok)
        fprintf(stderr, "\nround trip failed for:\n%s\n", pf_sb_str(&a));
    pf_program_free(q);
    pf_sb_free(&a);
    pf_sb_free(&b);
    return ok;
}

char *ft_read(const char *path, size_t *len)
{
    char *buf;
    size_t n;
    pf_error err;
    if (pf_read_file(path, PF_SOURCE_MAX_BYTES + 1, &buf, &n, &err) != 0)
        return NULL;
    if (len)
        *len = n;
    return buf;
}
