/* Shared by the report suites: a synthetic run directory whose records are known (real blur
 * schedules with chosen times and errors), small file helpers, and parsing a page with
 * libxml2's XML and HTML parsers. */
#ifndef PF_TESTS_RESULTS_UTIL_H
#define PF_TESTS_RESULTS_UTIL_H

#include "results/tune.h"
#include "search/eval.h"

#include <libxml/tree.h>
#include <stdbool.h>

/* What the synthetic run holds. */
typedef struct rt_synthetic {
    int n_train;           /* valid training records written */
    int n_invalid;         /* invalid training records (three reasons) */
    int n_front;           /* of which on the training frontier */
    char *front[64];       /* the frontier's schedules, in order of training error */
    int generations;
} rt_synthetic;

/* Writes a finished run into dir (created): config.json (blur, the bundled 256x192 photos, 2
 * per split), program.pf, evaluations.jsonl (a test record for every frontier variant),
 * checkpoint.json and a log of two sessions. */
void rt_make_run(const char *dir, rt_synthetic *out);
void rt_synthetic_free(rt_synthetic *s);

/* A search of blur on the bundled 256x192 photos, at most max_images per split. */
void rt_blur_config(pf_tune_config *cfg, int max_images);

/* dir/name as a malloc'd string; the whole file (NULL if unreadable); writing one. */
char *rt_path(const char *dir, const char *name);
char *rt_read(const char *dir, const char *name);
void rt_write(const char *dir, const char *name, const char *text);
/* The run's config.json with its evaluation backend "jit" replaced by `backend`. */
void rt_set_backend(const char *dir, const char *backend);
/* The run becomes a --target cuda --strict-float search's. */
void rt_set_cuda_strict_float(const char *dir);
bool rt_exists(const char *dir, const char *name);
/* cp -r src dst (dst created). */
void rt_copy_tree(const char *src, const char *dst);

/* The page parsed strictly as XML (every element closed, entities defined): NULL and a
 * CUnit failure when it is not well-formed. */
xmlDocPtr rt_parse_xml(const char *path);
/* The page through libxml2's HTML parser: the number of errors other than unknown tags (its
 * HTML 4 tables do not know HTML5's section or SVG's elements). */
int rt_html_errors(const char *path);
/* Nodes matching an XPath over the XHTML page (prefix h: for XHTML, s: for SVG). */
int rt_xpath_count(xmlDocPtr doc, const char *expr);
/* The string value of the first match, malloc'd (NULL when none). */
char *rt_xpath_string(xmlDocPtr doc, const char *expr, int index);

#endif
