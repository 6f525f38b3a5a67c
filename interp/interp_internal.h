/* The reference interpreter's private representation: the checked AST of each function, stage
 * and pipeline scalar is translated once per run into a flat, typed register code
 * (interp_compile*.c) that a dispatch loop executes (interp_exec.c, interp_stage.c). Names are
 * resolved to frame slots, images to descriptors with precomputed strides, and every operator
 * to an opcode specialised for its operand types, so the inner loop does no lookups, no
 * allocation and no type dispatch.
 *
 * This is still a direct reading of the checked AST (one instruction per operator node, in
 * source order, with literal operations folded and a product fused into the sum that consumes
 * it, both without changing any rounding); it shares nothing with codegen/, so it stays an
 * independent oracle.
 *
 * Code is an array of int32 words: an opcode followed by its operands, which are frame slots
 * (indices into the unit's pf_value frame), image indices, function indices or code positions.
 * Literals, consts, params, size names and pipeline scalars live in frame slots that are filled
 * before a unit runs (pf_ifill), so every operand is a plain slot. */
#ifndef PF_INTERP_INTERNAL_H
#define PF_INTERP_INTERNAL_H

#include "base/error.h"
#include "lang/lang.h"
#include "perforate/plan.h"

#include <stdatomic.h>
#include <stdint.h>

/* Opcodes with their operand signatures, one letter per operand word:
 *   d  a slot written          s  a slot read          b  the same slot read and written
 *   a  an array's first slot (its length is the next operand, n)
 *   n  a count                 o  a pf_assign_op       m  an image       f  a function
 *   p  a code position         l  a perforated named loop (index into pf_program.loops)
 * CALL is followed by its arguments' slots (count = its n operand). ORDER IOPS: the executor's
 * label table is generated from this list. */
#define PF_IOPS(X)                                                                          \
    X(HALT, "")          /* end of a unit's code */                                        \
    X(MOV, "ds")                                                                            \
    X(ZERO, "an")        /* slots a .. a+n-1 = 0 (declarations) */                         \
    X(I2F, "ds") X(F2I, "ds")  /* float(i); int(f) saturating, NaN -> 0 */                 \
    X(B2I, "ds") X(B2F, "ds")                                                               \
    /* int arithmetic: wrapping; / and % by 0 give 0 */                                     \
    X(ADD_I, "dss") X(SUB_I, "dss") X(MUL_I, "dss") X(DIV_I, "dss") X(MOD_I, "dss")         \
    X(NEG_I, "ds")                                                                          \
    /* float arithmetic (binary32) */                                                       \
    X(ADD_F, "dss") X(SUB_F, "dss") X(MUL_F, "dss") X(DIV_F, "dss") X(NEG_F, "ds")          \
    /* a product and a sum in one instruction, still rounded separately: d, x, y, z gives    \
     * MULADD (x*y)+z, MULSUB (x*y)-z; d, z, x, y gives ADDMUL z+(x*y), SUBMUL z-(x*y) */   \
    X(MULADD_F, "dsss") X(MULSUB_F, "dsss") X(ADDMUL_F, "dsss") X(SUBMUL_F, "dsss")         \
    /* comparisons: d (bool), a, b */                                                       \
    X(LT_I, "dss") X(LE_I, "dss") X(GT_I, "dss") X(GE_I, "dss") X(EQ_I, "dss")              \
    X(NE_I, "dss")                                                                          \
    X(LT_F, "dss") X(LE_F, "dss") X(GT_F, "dss") X(GE_F, "dss") X(EQ_F, "dss")              \
    X(NE_F, "dss")                                                                          \
    X(EQ_B, "dss") X(NE_B, "dss") X(NOT, "ds")                                              \
    /* builtins */                                                                          \
    X(MIN_I, "dss") X(MAX_I, "dss") X(MIN_F, "dss") X(MAX_F, "dss")                         \
    X(CLAMP_I, "dsss") X(CLAMP_F, "dsss")  /* d, x, lo, hi */                               \
    X(ABS_I, "ds") X(ABS_F, "ds")                                                           \
    X(EXP, "ds") X(LOG, "ds") X(SQRT, "ds") X(SIN, "ds") X(COS, "ds") X(TAN, "ds")          \
    X(FLOOR, "ds") X(CEIL, "ds") X(ROUND, "ds")                                             \
    X(POW, "dss") X(ATAN2, "dss")                                                           \
    X(YUV_Y, "dsss") X(YUV_U, "dsss") X(YUV_V, "dsss")                                      \
    X(YUV_R, "dsss") X(YUV_G, "dsss") X(YUV_B, "dsss")                                      \
    X(NOISE, "dnssss")   /* d, n, a0 .. a3: the first n are hashed */                       \
    X(MEDIAN_I, "dans") X(MEDIAN_F, "dans")  /* d, array, len, count */                     \
    X(SORT_I, "ans") X(SORT_F, "ans")        /* array, len, count */                        \
    /* arrays: the index is clamped into [0, len - 1] */                                    \
    X(ALOAD, "dans")     /* d, array, len, index */                                         \
    X(ASTORE, "anss")    /* array, len, index, value */                                     \
    /* images: indices in slots; out-of-image reads follow the image's boundary mode */     \
    X(READ1, "dms") X(READ2, "dmss") X(READ3, "dmsss") X(READ4, "dmssss")                   \
    X(WRITE, "omsssss")  /* op, image, value, i0 .. i3 (unused: any slot); outside: dropped */ \
    /* images stored on demand (docs/perforation.md §4; interp_ondemand.c): a read through    \
     * the downsampled array; the writer stage's own read and write at J = lattice / spacing */ \
    X(READ_OD, "dmssss") X(READ_J, "dmssss") X(WRITE_J, "omsssss")                        \
    /* control */                                                                           \
    X(JMP, "p")                                                                             \
    X(JMPF, "sp") X(JMPT, "sp")  /* jump when the bool is false / true */                   \
    /* a, b, pc: jump unless `a op b` (NaN compares false, so unless-< is not >=) */         \
    X(JNLT_I, "ssp") X(JNLE_I, "ssp") X(JNGT_I, "ssp") X(JNGE_I, "ssp") X(JNEQ_I, "ssp")    \
    X(JNNE_I, "ssp")                                                                        \
    X(JNLT_F, "ssp") X(JNLE_F, "ssp") X(JNGT_F, "ssp") X(JNGE_F, "ssp") X(JNEQ_F, "ssp")    \
    X(JNNE_F, "ssp")                                                                        \
    /* var, hi', step', lo, hi, step, exit: copies hi and step (< 1 -> 1) into private slots, \
     * var = lo, jumps to exit when lo > hi */                                              \
    X(FOR_INIT, "dddsssp")                                                                  \
    X(FOR_NEXT, "bssp")  /* var, hi', step', body: var += step' and back while <= hi' */   \
    /* var, lo', hi', step', loop, a, b, pc: jumps to pc (the FOR_NEXT) unless the loop's      \
     * perforation (docs/perforation.md §5) runs this iteration; a, b: the stage's first two   \
     * variables */                                                                         \
    X(PERF_SKIP, "sssslssp")                                                                \
    X(CALL, "dfn")       /* d, function, nargs, then nargs argument slots */                \
    X(RET, "s")

#define PF_IOP_ENUM(name, sig) PF_I_##name,
typedef enum pf_iop { PF_IOPS(PF_IOP_ENUM) PF_I_OP_COUNT } pf_iop;
#undef PF_IOP_ENUM

/* An opcode's name and operand signature (for the dump and the verifier). */
const char *pf_iop_name(pf_iop op);
const char *pf_iop_signature(pf_iop op);


/* The deepest chain of helper calls the interpreter accepts (each level uses C stack). */
#define PF_ICALL_DEPTH_MAX PF_MAX_CALL_DEPTH  /* what pf_check allows */

/* How a slot is filled before a unit runs. */
typedef enum pf_ifill_kind {
    PF_IFILL_VALUE,   /* a literal or folded const */
    PF_IFILL_PARAM,   /* params->values[index] */
    PF_IFILL_SIZE,    /* sizes[index] */
    PF_IFILL_SCALAR,  /* the pipeline scalar scalars[index] (evaluated earlier in the run) */
    PF_IFILL_ARRAY,   /* a const array: len slots from array */
} pf_ifill_kind;

typedef struct pf_ifill {
    pf_ifill_kind kind;
    int slot;
    int index;
    pf_value value;
    const pf_value *array;
    int len;
} pf_ifill;

/* One piece of code with its frame: a helper function, a stage or a pipeline scalar. */
typedef struct pf_iunit {
    int32_t *code;
    int n_code, cap_code;
    int n_slots;          /* frame size */
    pf_ifill *fills;
    int n_fills, cap_fills;
    int body_pc;          /* stage: where the per-iteration body starts (the prologue, at 0,
                             evaluates the `over` bounds); other units start at 0 */
    int result_slot;      /* pipeline scalar: where its value ends up */
    /* stage only */
    bool serial;          /* writes or reads other than its own elements: run in order even if
                             the checker did not mark the stage serial */
    int var_slot[PF_MAX_DIMS];
    int over_slot[PF_MAX_DIMS][3];  /* lo, hi, step of each variable, or -1 without `over` */
} pf_iunit;

/* A compiled program: one unit per function, per pipeline scalar, per stage. */
typedef struct pf_icode {
    const pf_program *prog;
    const pf_plan *plan;  /* what is approximated; NULL: nothing */
    pf_iunit *funcs;    /* [prog->n_funcs] */
    pf_iunit *scalars;  /* [prog->n_scalars] */
    pf_iunit *stages;   /* [prog->n_stages] */
    /* [prog->n_images]: the stage whose on-demand grid stores the image downsampled
     * (docs/perforation.md §4), or NULL for an image stored in full */
    const pf_stage **od_writer;
} pf_icode;

/* Compiles a checked program with the approximations of plan (NULL: none); refuses unchecked
 * trees and recursion. The plan (validated when it was made) is trusted. */
int pf_icode_build(pf_icode *ic, const pf_program *prog, const pf_plan *plan, pf_error *err);
void pf_icode_free(pf_icode *ic);

/* Checks the invariants the executor relies on without checking them itself: every slot
 * inside the frame, every position an instruction start, every image and function index
 * valid, every unit ending in HALT. A failure is a bug of the translator (pf_die). */
void pf_icode_verify(const pf_icode *ic);
/* Disassembles every unit (for debugging and tests). */
void pf_icode_dump(const pf_icode *ic, pf_strbuf *out);

/* How an image stored on demand is laid out (docs/perforation.md §4): its writer's lattice and
 * grid, and the downsampled array S (the pf_iimage's data and strides; its extents stay the
 * image's own, which the boundary mode needs). Filled when the writer starts. */
typedef struct pf_iod {
    int k;                        /* the writer's stage variables */
    int64_t lo[PF_MAX_DIMS], step[PF_MAX_DIMS], n[PF_MAX_DIMS];  /* its lattice */
    int64_t s[PF_MAX_DIMS];       /* grid spacing per stage dimension */
    int64_t ns[PF_MAX_DIMS];      /* S's extent per stage dimension: ceil(n / s) */
    bool linear;                  /* else nearest */
    int channels;                 /* > 0: lattice channels >= channels come from ref */
    int ref;                      /* the reference image (channels), or -1 */
    bool ready;                   /* S exists: the writer has started */
} pf_iod;

/* An image as the executing code sees it. */
typedef struct pf_iimage {
    float *data;
    int ndims;
    int64_t extent[PF_MAX_DIMS];
    int64_t stride[PF_MAX_DIMS];
    pf_boundary boundary;
    float constant;
    pf_iod *od;              /* stored on demand, or NULL */
} pf_iimage;

/* The state of one run. */
typedef struct pf_ictx {
    const pf_icode *ic;
    pf_iimage *images;       /* [prog->n_images] */
    pf_value **func_frames;  /* [prog->n_funcs]: no recursion, so one frame per function */
    pf_value ret;            /* the value of the last RET */
    const pf_value *params;
    const int32_t *sizes;    /* NULL outside a pipeline run: sizes read as 0 */
    const pf_value *scalars; /* NULL outside a pipeline run */
} pf_ictx;

/* Allocates (and fills) one frame per helper function for x: a context per thread. */
void pf_ictx_own_frames(pf_ictx *x);
void pf_ictx_free_frames(pf_ictx *x);
/* Threads for non-serial stages: 0 (the default) uses every CPU for stages of at least a few
 * thousand iterations; n > 0 forces n threads for every non-serial stage (tests). */
extern int pf_interp_threads;

/* Which lattice points of a stage run (docs/perforation.md §2, §5); NULL means all. */
typedef struct pf_isample {
    pf_sample_kind kind;
    int n_vars;
    int spacing[PF_MAX_DIMS];     /* GRID */
    const float *mask;            /* ADAPTIVE, IMPORTANCE: the mask plane, row stride n1 */
    int64_t n1;
    float pass;                   /* runs where mask == pass (2, then 1, for adaptive) */
    const unsigned char *rows;    /* LOOP: rows[j] = 1 when row j of the row variable runs */
    int row_var;
    int channels;                 /* > 0: runs only the lattice channels j_last < channels */
} pf_isample;

static inline bool pf_isample_keeps(const pf_isample *s, const int64_t *j)
{
    if (s->channels > 0 && j[s->n_vars - 1] >= s->channels)
        return false;
    switch (s->kind) {
    case PF_SAMPLE_GRID:
        for (int d = 0; d < s->n_vars; d++)
            if (j[d] % s->spacing[d] != 0)
                return false;
        return true;
    case PF_SAMPLE_ADAPTIVE:
    case PF_SAMPLE_IMPORTANCE:
        return s->mask[(s->n_vars > 1 ? j[1] : 0) * s->n1 + j[0]] == s->pass;
    case PF_SAMPLE_LOOP: return s->rows[j[s->row_var]] != 0;
    default: return true;
    }
}

/* The values of one stage variable: first, first + step, ... (count of them): the lattice of
 * docs/perforation.md §1 (lo = first). */
typedef struct pf_irange {
    int64_t first, count, step;
} pf_irange;

/* One stage run: its ranges and the shared work counter (interp_stage.c). */
typedef struct pf_ijob {
    pf_ictx *base;
    const pf_stage *st;
    const pf_iunit *u;
    int n_vars;
    pf_irange r[PF_MAX_DIMS];
    int64_t rows;            /* iterations of variables 1 .. n-1 together */
    int64_t blocks_per_row;  /* blocks of the first variable */
    atomic_llong next;       /* the next block to take */
    const pf_isample *sample;
} pf_ijob;

/* Runs a stage whose image has the bound extents `extent` (interp_stage.c); -1 with err set
 * when its approximation fails. */
int pf_istage_run(pf_ictx *x, const pf_stage *st, const int64_t *extent, pf_error *err);
/* Runs the lattice points of the job that `sample` keeps (all when NULL). */
void pf_ijob_run(pf_ijob *job, const pf_isample *sample);

/* ---- approximations (interp_approx.c, interp_ondemand.c) ---- */

/* A stage's approximation in the run's plan, or NULL. */
static inline const pf_stage_approx *pf_iapprox_of(const pf_icode *ic, const pf_stage *st)
{
    return ic->plan ? pf_plan_approx(ic->plan, st) : NULL;
}
/* A named loop's perforation in the run's plan, or NULL. */
static inline const pf_loop_approx *pf_iloop_approx(const pf_icode *ic, int loop_id)
{
    return ic->plan && loop_id >= 0 ? ic->plan->loops[loop_id] : NULL;
}
/* Runs an approximated stage: sampling passes, store reconstruction, channel copy. */
int pf_istage_run_approx(pf_ijob *job, pf_error *err);
/* Whether loop perforation `p` of loop `loop_id` runs iteration j of n (docs/perforation.md
 * §5); a, b: the enclosing stage's first two variables (0 for a stage's row variable). */
bool pf_iperf_runs(const pf_loop_perf *p, int loop_id, int64_t j, int64_t n, int32_t a,
                   int32_t b);
/* Allocates the on-demand image's downsampled array for its writer's lattice. */
int pf_iod_begin(pf_ijob *job, pf_error *err);
/* READ_OD, READ_J and WRITE_J (idx: the index slots). */
float pf_iread_od(const pf_ictx *x, const pf_iimage *im, const int32_t *idx, const pf_value *R);
float pf_iread_own(const pf_iimage *im, const int32_t *idx, const pf_value *R);
void pf_iwrite_own(const pf_iimage *im, int op, float v, const int32_t *idx, const pf_value *R);

/* The index used for i in a dimension of extent n (docs/language.md Section 8), or -1 for a
 * constant-boundary read outside. */
static inline int64_t pf_iboundary_index(int64_t i, int64_t n, pf_boundary mode)
{
    switch (mode) {
    case PF_BOUNDARY_CLAMP: return i < 0 ? 0 : n - 1;
    case PF_BOUNDARY_MIRROR: {
        if (n == 1)
            return 0;
        int64_t p = 2 * (n - 1);
        int64_t j = i % p;
        if (j < 0)
            j += p;
        return j < n ? j : p - j;
    }
    case PF_BOUNDARY_WRAP: {
        int64_t j = i % n;
        return j < 0 ? j + n : j;
    }
    case PF_BOUNDARY_CONSTANT: break;
    }
    return -1;
}

/* Applies a compound or plain assignment to *p. */
static inline void pf_iassign(float *p, int op, float v)
{
    switch ((pf_assign_op)op) {
    case PF_ASSIGN_SET: *p = v; break;
    case PF_ASSIGN_ADD: *p = *p + v; break;
    case PF_ASSIGN_SUB: *p = *p - v; break;
    case PF_ASSIGN_MUL: *p = *p * v; break;
    case PF_ASSIGN_DIV: *p = *p / v; break;
    }
}

/* Fills a unit's frame slots from literals, params, sizes and scalars. */
void pf_iunit_fill(const pf_iunit *u, const pf_ictx *x, pf_value *frame);
/* Runs a unit's code from pc until HALT or RET. */
void pf_iexec(pf_ictx *x, const pf_iunit *u, int pc, pf_value *frame);
/* The loop-perforation test of PERF_SKIP at ip. */
bool pf_iperf_skip_runs(const pf_ictx *x, const int32_t *ip, const pf_value *R);

#endif
