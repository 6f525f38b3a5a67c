/* What the report takes from a run's log.txt (results/tune.c writes it): each line is
 * "YYYY-MM-DD HH:MM:SS  text"; a session (one `perfora tune` process) starts with its
 * "evaluator: ..." line; a finished generation logs "generation G/N: K genomes (M measured,
 * ...), I invalid; ...; S s". The records carry no clock, so the log is where wall time and
 * evaluations per second come from. Lines it does not recognise are ignored. */
#define _XOPEN_SOURCE 700 /* strptime */
#include "results/report_internal.h"

#include "base/arena.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Seconds since the epoch of a line's time stamp (local time, as written), or -1. */
static double stamp_seconds(const char *line)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(line, "%Y-%m-%d %H:%M:%S", &tm);
    if (!end)
        return -1;
    tm.tm_isdst = -1;
    return (double)mktime(&tm);
}

static void add_gen(pf_report_run *r, const pf_report_gen *g)
{
    for (int i = 0; i < r->n_gens; i++)
        if (r->gens[i].generation == g->generation) {  /* logged again: keep the last */
            r->gens[i] = *g;
            return;
        }
    r->gens = pf_xrealloc(r->gens, sizeof *r->gens * (size_t)(r->n_gens + 1));
    r->gens[r->n_gens++] = *g;
}

static void parse_generation(pf_report_run *r, const char *text)
{
    pf_report_gen g = { 0 };
    int total;
    if (sscanf(text, "generation %d/%d: %d genomes (%d measured", &g.generation, &total,
               &g.genomes, &g.measured) != 4)
        return;
    const char *inv = strstr(text, "), "), *semi = strrchr(text, ';');
    if (!inv || sscanf(inv, "), %d invalid", &g.invalid) != 1 || !semi ||
        sscanf(semi, "; %lf s", &g.seconds) != 1)
        return;
    add_gen(r, &g);
}

static void set_str(char **dst, const char *s, size_t n)
{
    free(*dst);
    *dst = pf_xmalloc(n + 1);
    memcpy(*dst, s, n);
    (*dst)[n] = '\0';
}

void pf_report_parse_log(pf_report_run *r, const char *text)
{
    double first = -1, last = -1;
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *copy = pf_xmalloc(len + 1);
        memcpy(copy, line, len);
        copy[len] = '\0';
        double t = stamp_seconds(copy);
        const char *body = len > 21 ? copy + 21 : "";
        if (t >= 0 && strncmp(body, "evaluator: ", 11) == 0) {
            if (first >= 0)
                r->wall_s += last - first;  /* the previous session */
            first = t;
            r->sessions++;
            set_str(&r->evaluator, body + 11, strlen(body + 11));
        }
        if (t >= 0) {
            if (!r->started)
                set_str(&r->started, copy, 19);
            set_str(&r->last_line, copy, 19);
            last = t;
            if (first < 0)
                first = t;
        }
        parse_generation(r, body);
        free(copy);
        line += len + (nl ? 1 : 0);
    }
    if (first >= 0)
        r->wall_s += last - first;
}
