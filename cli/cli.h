/* The perfora command's subcommands; each returns the process exit code
 * (0 ok, 1 failure, 2 usage error). */
#ifndef PF_CLI_CLI_H
#define PF_CLI_CLI_H

int pf_cmd_run(int argc, char **argv);
int pf_cmd_check(int argc, char **argv);
int pf_cmd_dataset(int argc, char **argv);
int pf_cmd_tune(int argc, char **argv);
int pf_cmd_report(int argc, char **argv);

/* Prints "perfora: " + message to stderr. */
void pf_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a usage error with a pointer to --help and returns 2. */
int pf_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
