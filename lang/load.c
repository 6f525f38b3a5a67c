/* Loading a program: read (bounded), parse, check; every diagnostic rendered into a pf_error
 * (cut to fit, pointing at `perfora check` for the full list). */
#include "lang/lang.h"

#include "base/fileio.h"

#include <stdlib.h>
#include <string.h>

/* Copies rendered diagnostics into err, cutting at a line boundary when they do not fit. */
static void diags_to_error(const pf_diags *d, pf_error *err)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_diags_render(d, &sb);
    const char *s = pf_sb_str(&sb);
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == '\n')
        len--;
    if (len >= PF_ERROR_MAX) {
        const char *more = "\n(more errors: run 'perfora check' for all of them)";
        size_t keep = PF_ERROR_MAX - strlen(more) - 1;
        while (keep > 0 && s[keep] != '\n')
            keep--;
        pf_fail(err, "%.*s%s", (int)keep, s, more);
    } else {
        pf_fail(err, "%.*s", (int)len, s);
    }
    pf_sb_free(&sb);
}

static pf_program *parse_buffer(const char *name, const char *src, size_t len, pf_error *err)
{
    pf_diags d;
    pf_diags_init(&d, name, src);
    pf_program *prog = pf_parse(name, src, len, &d);
    if (!prog)
        diags_to_error(&d, err);
    pf_diags_free(&d);
    return prog;
}

int pf_check_program(pf_program *prog, pf_error *err)
{
    pf_diags d;
    pf_diags_init(&d, prog->file_name, prog->source);
    int rc = pf_check(prog, &d);
    if (rc != 0)
        diags_to_error(&d, err);
    pf_diags_free(&d);
    return rc;
}

static pf_program *compile_buffer(const char *name, const char *src, size_t len, pf_error *err)
{
    pf_program *prog = parse_buffer(name, src, len, err);
    if (prog && pf_check_program(prog, err) != 0) {
        pf_program_free(prog);
        prog = NULL;
    }
    return prog;
}

pf_program *pf_compile_string(const char *name, const char *source, pf_error *err)
{
    return compile_buffer(name, source, strlen(source), err);
}

static pf_program *load(const char *path, bool check, pf_error *err)
{
    char *buf;
    size_t len;
    if (pf_read_file(path, PF_SOURCE_MAX_BYTES, &buf, &len, err) != 0)
        return NULL;
    pf_program *prog = check ? compile_buffer(path, buf, len, err)
                             : parse_buffer(path, buf, len, err);
    free(buf);
    return prog;
}

pf_program *pf_load_program(const char *path, pf_error *err)
{
    return load(path, true, err);
}

pf_program *pf_load_unchecked(const char *path, pf_error *err)
{
    return load(path, false, err);
}
