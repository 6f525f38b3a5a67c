/* The schedule of one program: per perforable loop an optional approximation gene (the paper's
 * Section 3 and 5), per stage an execution gene (reserved for Halide-style scheduling), its text
 * format (docs/schedule.md, the spec), validation against the program, and canonical equality.
 * A schedule is the search's genome; its canonical text is the evaluation cache's key.
 *
 * The model is explicit: parsing fills every default in, so a pf_approx_gene always says what
 * runs. Code that builds genes (the search) sets `recon` itself; pf_gene_set_default_recon gives
 * the defaults the text format uses. What a schedule resolves to for one program and target is
 * a plan (perforate/plan.h). */
#ifndef PF_PERFORATE_SCHEDULE_H
#define PF_PERFORATE_SCHEDULE_H

#include "base/error.h"
#include "base/strbuf.h"
#include "perforate/approx.h"
#include "lang/ast.h"

#include <stdbool.h>

#define PF_SCHEDULE_VERSION 1
#define PF_SCHEDULE_MAX_BYTES ((size_t)1 << 20)

/* Gene parameter ranges (docs/schedule.md). Fractions and sigmas are checked after rounding to
 * the canonical six significant digits and conversion to float, i.e. on what actually runs. */
#define PF_GENE_MAX_SPACING 64   /* grid spacings 1..64 */
#define PF_GENE_MIN_K 2          /* adaptive K 2..16 */
#define PF_GENE_MAX_K 16
#define PF_GENE_MAX_STEP 64      /* step N 1..64 */
#define PF_GENE_MAX_CHANNELS 64  /* channels C 1..64 */
#define PF_GENE_MAX_SIGMA 16.0   /* reconstruction sigma (0, 16] */

/* ORDER GENES: keep in step with the name table in perforate/schedule.c. */
typedef enum pf_gene_kind {
    PF_GENE_EXACT,       /* no approximation (the loop has no line) */
    PF_GENE_GRID,        /* grid s1 .. sk */
    PF_GENE_ADAPTIVE,    /* adaptive K F */
    PF_GENE_IMPORTANCE,  /* importance F SIGMA */
    PF_GENE_CHANNELS,    /* channels C, without sampling */
    PF_GENE_STEP,        /* step N: loop perforation, step multiplied by N */
    PF_GENE_FIRST,       /* first F: only the first fraction F of the iterations */
    PF_GENE_LAST,        /* last F: only the last fraction F */
    PF_GENE_RANDOM,      /* random P: each iteration kept with probability P (hashed) */
    PF_GENE_KIND_COUNT
} pf_gene_kind;

/* One loop's approximation. Which fields matter depends on `kind` (and `recon`); the others are
 * ignored by printing, equality and application. */
typedef struct pf_approx_gene {
    pf_gene_kind kind;
    int n_spacing;                     /* GRID: number of spacings given (= stage variables) */
    int spacing[PF_BUFFER_MAX_DIMS];   /* GRID: 1..64 per stage variable */
    int k;                             /* ADAPTIVE: coarse spacing 2..16 */
    int step;                          /* STEP: 1..64 */
    double frac;                       /* ADAPTIVE, IMPORTANCE, FIRST, LAST, RANDOM: (0, 1] */
    double sigma_imp;                  /* IMPORTANCE: map blur, fraction of the height, (0, 1] */
    int channels;                      /* CHANNELS: 1..64; GRID, ADAPTIVE, IMPORTANCE: 0 = all
                                          channels, else 1..64 */
    pf_recon_kind recon;               /* GRID, ADAPTIVE, IMPORTANCE: the reconstruction; NONE
                                          only (and always) on serial stages */
    double sigma;                      /* recon GAUSSIAN, GAUSSIAN_SV: (0, 16] */
    bool on_demand;                    /* recon LINEAR or NEAREST of a GRID: reconstruct on
                                          demand (run as store on a pipeline output) */
    int line;                          /* the schedule line it came from; 0 if built in code */
} pf_approx_gene;

/* The execution schedule of one stage (docs/schedule.md, "Execution"): where it is computed,
 * how its loops are tiled, ordered, vectorized, parallelized and unrolled. `set` false means the
 * default schedule (codegen's heuristic) decides. See perforate/exec.h for its functions. */
#define PF_EXEC_MAX_TILE 1024
#define PF_EXEC_INLINE (-2)
/* At most this many stages in a chain computed `at` one another (producer at consumer at its
 * consumer ...) or `inline` into one another: each link nests the producer's loops (or its
 * expression) in the consumer's, so compile time and depth grow with the chain (issue 27). */
#define PF_EXEC_MAX_CHAIN 8
/* An inlined stage's expression, with the stages inlined into it, at most this many expression
 * nodes (helper calls counted inlined, unrolled reductions counted per tap): inlining copies it
 * into every read, so chains of stencils multiply (a 3x3 stencil inlined 8 deep: 9^8 copies). */
#define PF_EXEC_MAX_INLINE_NODES 20000
#define PF_EXEC_MAX_ORDER (PF_BUFFER_MAX_DIMS + 2)  /* stage variables and two tile loops */
#define PF_EXEC_TILE_LOOP(d) (16 + (d))            /* loop id of the tile loop of variable d */
typedef struct pf_exec_gene {
    bool set;        /* an `exec` line was given (else: the default schedule) */
    int at;          /* -1: compute root; PF_EXEC_INLINE: inlined into every read; else the
                        index of the consumer stage whose tiles compute this stage's needed
                        region (compute_at with recomputation) */
    bool slide;      /* with at >= 0: stored per consumer tile in a window of rows folded
                        modulo a power of two, computed row by row inside the consumer's row
                        loop (store_at the tile, compute_at the row: a sliding window) */
    int tile[2];     /* tile sizes over the first two stage variables; 0 = not tiled */
    int vectorize;   /* SIMD width of the first stage variable: 0 (none), 4, 8 or 16 */
    bool parallel;   /* outermost (tile or row) loop on the thread pool */
    int unroll;      /* innermost loop unrolled by this factor: 0 (none), 2, 4 or 8 */
    int n_order;     /* `reorder`: 0 = the default loop order, else the number of loops */
    int order[PF_EXEC_MAX_ORDER];  /* the loops, innermost first: d for stage variable d,
                                      PF_EXEC_TILE_LOOP(d) for the tile loop of d (0, 1) */
    bool gpu;        /* GPU (docs/gpu.md): tiles are blocks (a third variable the grid's z),
                        a tile's points are dealt to threads[0] x threads[1] threads */
    int threads[2];  /* threads of a block along x and y; 0 = the tile size (one point each) */
    int line;        /* the schedule line it came from; 0 if built in code or absent */
} pf_exec_gene;

typedef struct pf_schedule {
    int n_loops;             /* = the program's n_loops */
    pf_approx_gene *approx;  /* [n_loops], by index in pf_program.loops; kind EXACT = none */
    int n_stages;            /* = the program's n_stages */
    pf_exec_gene *exec;      /* [n_stages], by pf_stage.index */
    char *file_name;         /* where it was read from (messages); NULL if built in code */
} pf_schedule;

/* ---- life cycle ---- */

/* An all-exact schedule for prog (malloc'd arrays; never fails). */
void pf_schedule_init(pf_schedule *s, const pf_program *prog);
void pf_schedule_free(pf_schedule *s);
/* dst := src (dst uninitialized or freed). */
void pf_schedule_copy(pf_schedule *dst, const pf_schedule *src);
/* Sets every gene to exact (keeps the arrays). */
void pf_schedule_reset(pf_schedule *s);

/* ---- text ---- */

/* Parses schedule text (NUL-terminated) for prog. file_name is used in messages
 * ("FILE:LINE: message"). On success *out is initialized (free with pf_schedule_free); on
 * failure it is left zeroed (pf_schedule_free is safe) and err names the first bad line.
 * Every gene is validated as its line is read. */
int pf_schedule_parse(const pf_program *prog, const char *text, const char *file_name,
                      pf_schedule *out, pf_error *err);
/* Reads a file (at most PF_SCHEDULE_MAX_BYTES, no NUL bytes) and parses it. */
int pf_schedule_load(const pf_program *prog, const char *path, pf_schedule *out, pf_error *err);
/* Convenience: parses text named "<schedule>" into a malloc'd schedule; NULL on error. Free
 * with pf_schedule_delete. */
pf_schedule *pf_schedule_from_string(const pf_program *prog, const char *text, pf_error *err);
void pf_schedule_delete(pf_schedule *s);

/* Appends the canonical text: the version line, then, in program order, one line per
 * approximated loop with every clause spelled out and numbers printed "%.6g". Parsing it gives
 * an equal schedule back and printing that gives the same text. The schedule should be valid
 * (pf_schedule_validate); an invalid one prints, but may not parse back. */
void pf_schedule_print(const pf_program *prog, const pf_schedule *s, pf_strbuf *out);
/* One gene as its canonical clause text, without the loop name ("grid 4 4 1 reconstruct store
 * linear"); nothing for EXACT. */
void pf_gene_print(const pf_approx_gene *g, pf_strbuf *out);

/* ---- canonical form and equality ---- */

/* The canonical projection of a gene: the fields `kind` ignores are zeroed, fractions and
 * sigmas rounded to six significant digits (what the text holds), `line` dropped. */
void pf_gene_canonical(const pf_approx_gene *in, pf_approx_gene *out);
/* Equal canonical projections, i.e. equal canonical text for the same loop. */
bool pf_gene_equal(const pf_approx_gene *a, const pf_approx_gene *b);
/* Whether g is loop perforation that skips no iteration (`step 1`, `first 1`, `last 1`): it
 * lowers to the loop the exact program runs, so it changes neither the code nor the output. */
bool pf_gene_skips_nothing(const pf_approx_gene *g);
/* A grid of spacing 1 on every variable and all channels: it samples every point, and its
 * reconstruction has nothing to fill. */
bool pf_gene_full_grid(const pf_approx_gene *g);
/* Two schedules of the same program are equal exactly when their canonical texts are. */
bool pf_schedule_equal(const pf_schedule *a, const pf_schedule *b);
/* The same execution gene on every stage (pf_exec_equal). */
bool pf_schedule_exec_equal(const pf_schedule *a, const pf_schedule *b);
/* x rounded to six significant digits ("%.6g" and back). */
double pf_round6(double x);

/* ---- validation ---- */

/* Checks every gene against its loop (docs/schedule.md, "Validation"): loop kinds, counts,
 * ranges, reconstruction rules, serial stages, writers, reference images. Messages are
 * "FILE:LINE: LOOP: why" for genes with a line (FILE: the schedule's file_name), else
 * "LOOP: why". */
int pf_schedule_validate(const pf_program *prog, const pf_schedule *s, pf_error *err);
/* Checks one gene for loop `loop` (index in prog->loops); the message has no location. */
int pf_gene_validate(const pf_program *prog, int loop, const pf_approx_gene *g, pf_error *err);
/* The default reconstruction for a sampling gene on loop `loop`, as the text format fills it
 * in: grid -> store linear, adaptive -> store gaussian-sv 0.9, importance -> store gaussian-sv
 * 0.73; none on a serial stage. Other kinds: recon NONE. */
void pf_gene_set_default_recon(const pf_program *prog, int loop, pf_approx_gene *g);

/* ---- what each loop accepts (for the search and `perfora check`) ---- */

typedef enum pf_perforable_kind {
    PF_PERFORABLE_STAGE,         /* a parallel for-each stage: image perforation */
    PF_PERFORABLE_SERIAL_STAGE,  /* a serial (scatter) stage: sampling without reconstruction */
    PF_PERFORABLE_FOR,           /* a named for loop: loop perforation */
} pf_perforable_kind;

typedef struct pf_perforable {
    int loop;                    /* index in pf_program.loops */
    const char *name;
    pf_perforable_kind kind;
    int n_vars;                  /* stage variables; 0 for a for loop */
    unsigned genes;              /* bit (1u << kind) for every gene kind some gene of which is
                                    legal here (EXACT always) */
    bool channels;               /* channel subsampling is legal (alone or as a clause) */
    bool on_demand;              /* on-demand reconstruction is legal (with grid) */
    bool channel_loop;           /* the last variable is a per-channel loop (pf_stage_channel_loop):
                                    the search draws no spacing for it */
    bool output;                 /* writes a pipeline output: on-demand runs as store */
    const pf_image_decl *ref;    /* the reference image (importance, channels), or NULL */
} pf_perforable;

/* What loop `loop` of a checked program accepts. */
void pf_perforable_info(const pf_program *prog, int loop, pf_perforable *out);
const char *pf_perforable_kind_name(pf_perforable_kind k);  /* "stage", "serial stage", "for" */
/* One line per loop, e.g. "  loop_temp  stage (x, y, c)  grid adaptive importance channels
 * step first last random; on-demand; ref in" — for `perfora check`. */
void pf_perforable_describe(const pf_program *prog, pf_strbuf *out);

/* The gene kind's keyword ("grid", ...; "exact" for EXACT) and the reconstruction's
 * ("nearest", "linear", "gaussian", "gaussian-sv"; "none"). */
const char *pf_gene_kind_name(pf_gene_kind k);
const char *pf_recon_name(pf_recon_kind r);

/* The reference image of a stage: the first image it reads (in source order) that has at
 * least 2 dimensions and that the stage does not write; NULL if none. */
const pf_image_decl *pf_stage_reference(const pf_stage *st);
/* True when the stage iterates a 3-D image with 3 variables and the last one (the colour
 * channel) occurs only as the channel index of 3-D image accesses: the prototype's implicit
 * per-channel loop (perforate/channel_loop.c). */
bool pf_stage_channel_loop(const pf_stage *st);
/* How many stages write img (own image or scatter). */
int pf_image_writer_count(const pf_program *prog, const pf_image_decl *img);

#endif
