/* perfora check: parse and check a program; diagnostics to stderr (exit 1), or a short summary
 * of the pipeline to stdout. --print writes the program as the pretty-printer sees it. */
#include "base/fileio.h"
#include "cli/cli.h"
#include "lang/lang.h"
#include "perforate/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char check_usage[] =
    "usage: perfora check [--print] FILE.pf\n"
    "  parses and checks a pipeline; errors are printed as file:line:col\n"
    "  --print   print the checked program (pretty-printed) instead of the summary\n";

static void print_summary(const pf_program *prog)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_describe_program(prog, &sb);
    pf_sb_puts(&sb, "tunable loops (what a schedule may give each):\n");
    pf_perforable_describe(prog, &sb);
    fputs(pf_sb_str(&sb), stdout);
    pf_sb_free(&sb);
}

static int check_file(const char *path, bool print)
{
    char *src;
    size_t len;
    pf_error err;
    if (pf_read_file(path, PF_SOURCE_MAX_BYTES, &src, &len, &err) != 0) {
        pf_cli_error("%s", err.msg);
        return 1;
    }
    pf_diags d;
    pf_diags_init(&d, path, src);
    pf_program *prog = pf_parse(path, src, len, &d);
    int rc = prog && pf_check(prog, &d) == 0 ? 0 : 1;
    if (rc != 0) {
        pf_strbuf sb;
        pf_sb_init(&sb);
        pf_diags_render(&d, &sb);
        fputs(pf_sb_str(&sb), stderr);
        pf_sb_free(&sb);
    } else if (print) {
        pf_strbuf sb;
        pf_sb_init(&sb);
        pf_print_program(prog, &sb);
        fputs(pf_sb_str(&sb), stdout);
        pf_sb_free(&sb);
    } else {
        print_summary(prog);
    }
    pf_program_free(prog);
    pf_diags_free(&d);
    free(src);
    return rc;
}

int pf_cmd_check(int argc, char **argv)
{
    const char *file = NULL;
    bool print = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            fputs(check_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--print") == 0) {
            print = true;
        } else if (argv[i][0] == '-' || file) {
            return pf_cli_usage("check", "unexpected argument '%s'", argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (!file)
        return pf_cli_usage("check", "a program file is required");
    return check_file(file, print);
}
