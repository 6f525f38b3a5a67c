/* The report's model of a run directory, read without changing it (so a run in progress can be
 * reported while it runs), and the parts of the page built from it: report_run.c (config,
 * records, checkpoint, frontiers), report_log.c (log.txt: generations, sessions, wall time),
 * report_pareto.c and report_search.c (plots), report_words.c (genes in words),
 * report_variant.c (variant images), report_page.c (the HTML), report_dir.c (the output
 * directory, written whole or not at all). report.c strings them together. */
#ifndef PF_RESULTS_REPORT_INTERNAL_H
#define PF_RESULTS_REPORT_INTERNAL_H

#include "base/strbuf.h"
#include "results/report.h"
#include "results/report_canvas.h"
#include "results/tune.h"

struct json_object;
typedef struct pf_report_images pf_report_images;

/* A generation's line of log.txt. */
typedef struct pf_report_gen {
    int generation;
    int genomes, measured, invalid;
    double seconds;        /* its wall time as the search measured it */
} pf_report_gen;

/* What is optional in a record line (read from the JSON beside pf_record_from_json). */
typedef struct pf_report_extra {
    char *host;            /* "host" (an MPI evaluator's node), or NULL */
    int rank;              /* "rank", or -1 */
    double spread_lo, spread_hi;  /* per-sample rel_time range over all images ("rel_time_min",
                                     "rel_time_max" of each image), NaN when absent */
} pf_report_extra;

typedef struct pf_report_run {
    char *dir;
    char *label;               /* the directory's last component */
    pf_tune_config cfg;        /* config.json */
    char *pipeline, *version;  /* from config.json */
    char **images[PF_SET_COUNT];  /* config.json's image lists (NULL-terminated) */
    int n_images[PF_SET_COUNT];
    /* evaluations.jsonl: the complete lines */
    pf_eval_record *recs;
    pf_report_extra *extra;
    int n_recs;
    long torn_bytes;           /* after the last complete line (a line being written) */
    /* checkpoint.json */
    bool has_checkpoint, finished;
    int checkpoint_generation; /* the last finished generation (-1: none) */
    /* log.txt */
    pf_report_gen *gens;
    int n_gens;
    int sessions;              /* `perfora tune` processes that worked on it (1 + resumes) */
    double wall_s;             /* summed over sessions, from the log's time stamps */
    char *evaluator;           /* the evaluator's description, or NULL */
    char *started, *last_line; /* time stamps of the first and last log lines */
    /* derived */
    int *front, n_front;       /* the training frontier: indices into recs, sorted by error */
    int *test;                 /* [n_front]: the test record of each variant, or -1 */
    int last_generation;       /* the highest generation among the records */
} pf_report_run;

/* A progress or warning line through o->note, if set. */
void pf_report_note(const pf_report_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reads RUN: config.json (a perfora run of format 1, else an error naming the format), the
 * complete lines of evaluations.jsonl (a torn last line is skipped, a bad line elsewhere is an
 * error with its line number), checkpoint.json and log.txt when present. Never writes. */
int pf_report_run_load(pf_report_run *r, const char *dir, pf_error *err);
void pf_report_run_free(pf_report_run *r);
/* The program as the run saw it (RUN/program.pf), checked; NULL with err. */
pf_program *pf_report_run_program(const pf_report_run *r, pf_error *err);
/* "blur-tune (blur, full)". */
char *pf_report_run_title(const pf_report_run *r);

/* Parses log.txt's text into r's log fields (report_log.c). */
void pf_report_parse_log(pf_report_run *r, const char *text);

/* Our area (docs/search.md §5) of the training frontier after generation gen, at the run's
 * error cap. */
double pf_report_area(const pf_report_run *r, int gen);
/* The invalid records (both splits) grouped by the kind of their reason ("compile error",
 * "crashed", "run error", ...: the reason's words before a colon or " on IMAGE"). */
typedef struct pf_report_reason {
    char *kind;
    int count;
    char *example;             /* the first reason of this kind, whole */
} pf_report_reason;
int pf_report_invalid_kinds(const pf_report_run *r, pf_report_reason **out);
void pf_report_reasons_free(pf_report_reason *k, int n);
/* The spread of a record's per-image relative times: min and max (NaN without images). */
void pf_report_rel_spread(const pf_eval_record *rec, double *lo, double *hi);

/* ---- plots ---- */

/* The Pareto plot of runs[0] with runs[1..n-1] overlaid (report_pareto.c). */
pf_canvas *pf_report_pareto(pf_report_run *const *runs, int n);
/* The frontier's area per generation (every run), evaluations per second per generation, and
 * the workers' time per phase (report_search.c). NULL when there is nothing to plot. */
pf_canvas *pf_report_area_plot(pf_report_run *const *runs, int n);
pf_canvas *pf_report_rate_plot(const pf_report_run *r);
pf_canvas *pf_report_phase_plot(pf_report_run *const *runs, int n);

/* ---- genes in words (report_words.c) ---- */

/* One sentence per approximated loop and per scheduled stage of schedule text s, e.g. "stage
 * loop_temp: every 4th row, all columns, reconstructed on demand, linear", each line appended
 * to out as an HTML list item (escaped); the exact program gives "exact: every loop as
 * written". A text this program cannot parse gives the parser's message. */
void pf_report_genes_html(const pf_program *prog, const char *s, pf_strbuf *out);
/* The same as plain text, lines separated by "\n". */
void pf_report_genes_text(const pf_program *prog, const char *s, pf_strbuf *out);

/* ---- variant images (report_variant.c) ---- */

/* One frontier variant's pictures. */
typedef struct pf_report_shot {
    int variant;
    char *file, *error_file;   /* relative to the report directory; NULL when it failed */
    char *failed;              /* why there is no picture, or NULL */
    double mean_de;            /* the mean of its error map: its error on this image */
    double recorded_de;        /* the run's record of the same (NaN when not comparable) */
} pf_report_shot;

struct pf_report_images {
    char *skipped;             /* why the page has no pictures, or NULL */
    char *image;               /* the photo (a path from config.json) */
    pf_image_set set;          /* its split */
    int index;                 /* its position in the split's list */
    int output, n_outputs;     /* the output shown, of how many */
    int width, height;
    char *input_file, *exact_file;
    double top;                /* the heat maps' scale: 0 .. top Lab units */
    pf_report_shot *shots;     /* [n]: the frontier variants in order */
    int n;
};

/* Runs the exact program and each frontier variant of r on one photo, the first test photo
 * when every variant has a valid test record, else the first training photo (so every variant
 * has already run on it in the search's workers), and writes dir/img/: input.png, exact.png,
 * variant-NNN.png and variant-NNN-error.png. A variant that fails to build or run gets a
 * reason instead of pictures; a photo that cannot be read is an error. */
int pf_report_images_make(const pf_report_run *r, pf_program *prog, const char *dir,
                          const pf_report_options *opt, pf_report_images *im, pf_error *err);
void pf_report_images_free(pf_report_images *im);

/* The colour of error e (Lab units) on the heat map's scale 0 .. top. */
uint32_t pf_report_heat_colour(double e, double top);
/* The colour scale's legend: a bar from 0 to top in Lab Delta E76. */
pf_canvas *pf_report_heat_legend(double top);

#endif
