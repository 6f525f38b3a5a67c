/* Helpers shared by the front end's test files (lexer, parser, checker, errors, round trip). */
#ifndef PF_TESTS_LANG_TEST_FRONT_UTIL_H
#define PF_TESTS_LANG_TEST_FRONT_UTIL_H

#include "lang/lang.h"

/* Parses and checks; returns the program, or NULL. All diagnostics, rendered, go to *errors
 * (malloc'd, "" when none) when errors is not NULL. */
pf_program *ft_compile(const char *src, char **errors);
/* Parses, checks and asserts there was no diagnostic; prints them when there were. */
pf_program *ft_check_ok(const char *src);
/* The first diagnostic of a program that must fail, as "line:col: message" (malloc'd), or
 * NULL when it compiled. */
char *ft_first_error(const char *src);
/* Whether print(prog) parses back to a program equal to prog, and printing that again gives
 * the same text. Prints the text on failure. */
bool ft_roundtrip(const pf_program *prog);
/* Reads a whole file (malloc'd), or NULL. */
char *ft_read(const char *path, size_t *len);

#endif
