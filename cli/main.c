/* perfora's entry point: global options and dispatch to the subcommands. */
#include "cli/cli.h"
#include "cluster/pool.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: perfora [--help] [--version] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  check    parse and check a pipeline (errors as file:line:col)\n"
    "  run      run a pipeline (or an image round trip) on images\n"
    "  dataset  build the image benchmark from Debian packages, or summarise one\n"
    "  tune     search a pipeline's perforated variants (genetic algorithm, Pareto frontier)\n"
    "  report   the HTML report of a search run: Pareto plots, variants, pictures\n"
    "\n"
    "Run 'perfora COMMAND --help' for a command's options.\n";

void pf_cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("perfora: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int pf_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "perfora %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'perfora %s --help'.\n", cmd);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "__pool-worker") == 0)  /* a worker the pool started with exec */
        pf_pool_worker_exec_main(argc, argv);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("perfora %s\n", PF_VERSION);
        return 0;
    }
    if (strcmp(cmd, "check") == 0)
        return pf_cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0)
        return pf_cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "dataset") == 0)
        return pf_cmd_dataset(argc - 1, argv + 1);
    if (strcmp(cmd, "tune") == 0)
        return pf_cmd_tune(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return pf_cmd_report(argc - 1, argv + 1);
    fprintf(stderr, "perfora: unknown command or option '%s'\n%s", cmd, usage);
    return 2;
}
