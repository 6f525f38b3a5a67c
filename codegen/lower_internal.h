/* State shared by the lowering files (lower.c: pipeline and stages, lower_stmt.c: statements,
 * lower_expr.c: expressions, calls and reductions). Not a public interface. */
#ifndef PF_CODEGEN_LOWER_INTERNAL_H
#define PF_CODEGEN_LOWER_INTERNAL_H

#include "codegen/ir_simplify.h"
#include "codegen/lower.h"
#include "perforate/plan.h"

/* One activation frame: a stage body or an inlined helper function. */
typedef struct lower_frame {
    int n_slots;
    ir_expr **slots;     /* slot -> value (ref of a loop/mutable var, or a substituted value) */
    ir_var **arrays;     /* slot -> local array var */
    ir_var *ret, *done;  /* inlined function: result and "has returned" flag (NULL in stages) */
} lower_frame;

typedef struct const_array_map {
    const pf_symbol *sym;
    ir_var *table;
} const_array_map;

/* A stage's lattice (docs/perforation.md §1): per stage variable, lo + j*step for j < n. */
typedef struct lower_lattice {
    bool ready;
    ir_expr *lo[IR_MAX_DIMS], *step[IR_MAX_DIMS], *n[IR_MAX_DIMS], *hi[IR_MAX_DIMS];
} lower_lattice;

/* How the stage being lowered addresses its own image: the storage index of its own pixel
 * along each stage dimension (the loop variable itself, or J = (v - lo) / (step*s) for an
 * on-demand image stored downsampled). */
typedef struct lower_own {
    ir_buffer *store;              /* where the stage's own image lives */
    ir_expr *index[IR_MAX_DIMS];   /* own-pixel storage index per stage dimension */
    ir_expr *coord[IR_MAX_DIMS];   /* image coordinate (the stage variable) per dimension */
} lower_own;

/* The part of an image a compute-at producer must compute in the current consumer tile,
 * inclusive, per dimension (NULL: everything). */
typedef struct lower_region {
    ir_expr *lo[IR_MAX_DIMS], *hi[IR_MAX_DIMS];
    bool in_parallel;  /* some consumer around runs its tiles in parallel */
    int gpu_threads[2];  /* > 0: the consumer is a GPU stage: the producer's x and y loops are
                            thread loops of its blocks with these many threads */
    int64_t most[IR_MAX_DIMS];  /* > 0: the region's extent along d is at most this in every
                                   tile (lower_at.c, span_bound) */
} lower_region;

typedef struct lower_ctx {
    ir_func *f;
    const pf_program *prog;
    const pf_param_values *params;
    const pf_plan *plan;   /* what runs: approximations and execution genes */
    ir_buffer **bufs;      /* by image index */
    ir_expr **sizes;       /* by size index */
    ir_expr **scalars;     /* by scalar index */
    lower_frame *frame;
    ir_list *out;          /* where statements go */
    const pf_stage *stage; /* the stage being lowered, or NULL */
    lower_own own;         /* the stage's own-pixel addressing */
    lower_lattice *lattice;   /* by stage index */
    ir_buffer **store;     /* by image index: the downsampled storage of on-demand images */
    bool *scratch;         /* by image index: computed at a consumer in per-tile windows */
    ir_interp **interp;    /* by image index: the grid description for on-demand reads */
    pf_error *err;
    bool failed;           /* a user-level error was recorded in err */
    const lower_region *region; /* while lowering a compute-at producer inside its consumer */
    int inline_depth;
    int n_tables;
    const_array_map tables[64];
} lower_ctx;

/* A stage's execution gene and approximation (NULL: exact), as the plan resolved them. */
static inline const pf_exec_gene *lower_exec(const lower_ctx *c, int stage)
{
    return &c->plan->stages[stage].exec;
}
static inline const pf_stage_approx *lower_approx(const lower_ctx *c, const pf_stage *st)
{
    return pf_plan_approx(c->plan, st);
}

ir_type lower_type(pf_type t);
ir_expr *lower_expr(lower_ctx *c, const pf_expr *e);
/* Lowers e and converts it to `to` (int -> float, as the language's implicit conversion). */
ir_expr *lower_expr_as(lower_ctx *c, const pf_expr *e, ir_type to);
void lower_stmt(lower_ctx *c, const pf_stmt *s);
/* The IR bounds [lo, end) of an inclusive range lo .. hi by step (lower_stmt.c). */
ir_expr *lower_range(lower_ctx *c, ir_expr **lo, ir_expr *hi, ir_expr **step, int64_t mult);
/* Whether s assigns the local sym anywhere inside it (lower_expr.c). */
bool lower_stmt_assigns(const pf_stmt *s, const pf_symbol *sym);
/* Emits `let name = value` unless value is trivial (constant or variable), and returns a
 * reference that is safe to use several times. */
ir_expr *lower_snapshot(lower_ctx *c, const char *name, ir_expr *value);
ir_expr *lower_convert(lower_ctx *c, ir_expr *v, ir_type to);
void lower_emit(lower_ctx *c, ir_stmt *s);
/* min(a * k, PF_MAX_EXTENT) without overflow, for 1 <= a <= PF_MAX_EXTENT and k >= 1: a
 * lattice step times a tile, a spacing or a perforation step (lower_stage.c). A step of
 * PF_MAX_EXTENT or more runs one iteration in any dimension (lang.h), like the product. */
ir_expr *lower_step_mul(ir_func *f, ir_expr *a, int64_t k);
/* lower_stage.c */
void lower_stage(lower_ctx *c, const pf_stage *st);
lower_lattice *lower_stage_lattice(lower_ctx *c, const pf_stage *st);
/* The distance between a grid-sampled stage's samples along d, in image coordinates: the
 * lattice step times the spacing. */
ir_expr *lower_sample_step(lower_ctx *c, const pf_stage *st, const lower_lattice *L, int d);
/* The storage buffer and grid of an on-demand image, created at its declaration. */
void lower_ondemand_image(lower_ctx *c, const pf_image_decl *img);
/* lower_fill.c: grid store reconstruction (linear, nearest) as loops; false when it does not
 * apply (the caller emits the runtime call). */
bool lower_grid_fill(lower_ctx *c, const pf_stage *st, const lower_lattice *L, ir_buffer *img);
/* lower_gpu_kernel.c: kernels for work that is a runtime call on the CPU. A range of points
 * v[0] in [0, n[0]) (and v[1] in [0, n[1]) unless v[1] is NULL) in blocks of threads[0] x
 * threads[1] threads, and z in [z_lo, z_n) (z_lo NULL: 0) as the grid's z unless z is NULL. */
typedef struct lower_gpu_range {
    ir_var *v[2];
    ir_expr *n[2];
    int threads[2];
    ir_var *z;
    ir_expr *z_lo, *z_n;
} lower_gpu_range;
ir_stmt *lower_gpu_kernel(lower_ctx *c, const lower_gpu_range *r, ir_stmt *body);
/* A stage's lattice view of its image: view index j along d is image index lo[d] + j * step[d]
 * (lo NULL: j), j in [0, n[d]), as the stage runtime gets it (reconstruct/stage_rt.h). */
typedef struct lower_view {
    ir_buffer *img;
    int nd;
    ir_expr *lo[IR_MAX_DIMS], *step[IR_MAX_DIMS], *n[IR_MAX_DIMS];
} lower_view;
void lower_gpu_view(lower_view *v, lower_ctx *c, const pf_stage *st, const lower_lattice *L,
                    ir_buffer *img);
void lower_gpu_view_index(ir_func *f, const lower_view *v, ir_expr *const *j, ir_expr **i);
/* Channel subsampling's copy as a kernel, on a plan for a GPU; false when it does not apply
 * (the caller emits the runtime call). */
bool lower_copy_channels_gpu(lower_ctx *c, const pf_stage *st, const lower_lattice *L,
                             ir_buffer *img, ir_buffer *ref, int c0);
/* lower_gauss_gpu.c: a grid stage's store-mode Gaussian reconstruction as kernels, on a plan
 * for a GPU; false when it does not apply (the caller emits the runtime call). */
bool lower_gauss_gpu(lower_ctx *c, const pf_stage *st, const lower_lattice *L, ir_buffer *img);
/* The same fill per tile of a store-mode stage tiled along x and y (NULL when it does not
 * apply): the stage computes its tile's samples, one more column and row, into the window
 * lower_tile_fill_samples() (its storage while it is lowered; loops over sample indices), and
 * lower_tile_fill_wrap() wraps them, inside the x tile loop, with the fill of the tile's pixels. */
typedef struct lower_tile_fill lower_tile_fill;
lower_tile_fill *lower_tile_fill_begin(lower_ctx *c, const pf_stage *st, const lower_lattice *L);
ir_buffer *lower_tile_fill_samples(const lower_tile_fill *T);
ir_stmt *lower_tile_fill_wrap(lower_tile_fill *T, ir_var *const *vars, ir_var *xo, ir_var *yo,
                         ir_stmt *samples);
/* lower_mask.c: adaptive sampling's coarse mask (2 at the coarse samples of the n1 x n2 plane,
 * 0 elsewhere: pf_srt_adaptive_coarse) as a GPU kernel, for a stage on the GPU. */
ir_stmt *lower_gpu_coarse_mask(lower_ctx *c, ir_buffer *mask, ir_expr *n1, ir_expr *n2, int k);
/* lower_at.c: compute-at producers inside a consumer's tile, and their restricted loops. */
typedef struct lower_tile {
    ir_expr *lo[2], *hi[2];  /* the consumer's x, y range in the tile, [lo, hi); NULL: all */
} lower_tile;
/* Producers `at C slide` of one nest of C (NULL: none): begun before the nest is built, their
 * rows computed at the top of C's row body (lower_at_rows), their folded windows allocated
 * with the others per tile (lower_at_tile). */
typedef struct lower_slide lower_slide;
lower_slide *lower_at_slide_begin(lower_ctx *c, const pf_stage *st);
ir_stmt *lower_at_rows(lower_ctx *c, const pf_stage *st, const lower_tile *t, lower_slide *S,
                       ir_stmt *row);
ir_stmt *lower_at_tile(lower_ctx *c, const pf_stage *st, const lower_tile *t, lower_slide *S,
                       ir_stmt *inner);
/* The downsampled storage of the stage's image when the stage writes that image (on-demand, or
 * a tile's fill), else NULL: a stage that only iterates an image another stage stores
 * downsampled (the bilateral grid's splat over yuv) runs over its full-resolution domain. */
ir_buffer *lower_own_store(const lower_ctx *c, const pf_stage *st);
/* Where a stage's image lives: its own downsampled storage when it has one, else its buffer. */
ir_buffer *lower_storage(const lower_ctx *c, const pf_stage *st);
void lower_at_restrict(lower_ctx *c, const pf_stage *p, int d, ir_expr **lo, ir_expr **hi,
                       const ir_expr *step);
/* lower.c: whether an image's allocation must start zeroed. */
bool lower_needs_zero(const lower_ctx *c, const pf_image_decl *img);
/* Records a user-level error (first one wins) and returns a harmless expression. */
ir_expr *lower_error(lower_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
