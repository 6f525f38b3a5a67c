/* The interpreter's inner loop: executes register code (interp/interp_internal.h) on a frame of
 * pf_values. Every operator computes exactly one binary32 or int32 result and stores it, so no
 * two operations can be contracted or reassociated; the scalar semantics match lang/builtins.c
 * (whose functions are called where they are not one-liners). */
#include "lang/builtins.h"
#include "interp/interp_internal.h"

#include <math.h>
#include <string.h>

void pf_iunit_fill(const pf_iunit *u, const pf_ictx *x, pf_value *frame)
{
    for (int k = 0; k < u->n_fills; k++) {
        const pf_ifill *f = &u->fills[k];
        pf_value *d = &frame[f->slot];
        switch (f->kind) {
        case PF_IFILL_VALUE: *d = f->value; break;
        case PF_IFILL_PARAM: *d = x->params[f->index]; break;
        case PF_IFILL_SIZE: d->i = x->sizes ? x->sizes[f->index] : 0; break;
        case PF_IFILL_SCALAR:
            if (x->scalars)
                *d = x->scalars[f->index];
            else
                memset(d, 0, sizeof *d);
            break;
        case PF_IFILL_ARRAY: memcpy(d, f->array, sizeof *d * (size_t)f->len); break;
        }
    }
}

/* ---- images ---- */

/* A read with at least one index outside the image. */
static float read_outside(const pf_iimage *im, const int32_t *idx, const pf_value *R)
{
    int64_t off = 0;
    for (int d = 0; d < im->ndims; d++) {
        int64_t i = R[idx[d]].i;
        if (i < 0 || i >= im->extent[d]) {
            i = pf_iboundary_index(i, im->extent[d], im->boundary);
            if (i < 0)
                return im->constant;
        }
        off += i * im->stride[d];
    }
    return im->data[off];
}

static inline int inside(int32_t i, int64_t n)
{
    return (uint64_t)(int64_t)i < (uint64_t)n;
}

static void write_image(const pf_iimage *im, int op, float v, const int32_t *idx,
                        const pf_value *R)
{
    int64_t off = 0;
    for (int d = 0; d < im->ndims; d++) {
        int32_t i = R[idx[d]].i;
        if (!inside(i, im->extent[d]))
            return;  /* a scatter outside the image is dropped */
        off += (int64_t)i * im->stride[d];
    }
    pf_iassign(&im->data[off], op, v);
}

/* ---- scalar helpers ---- */

static inline int32_t int_div(int32_t a, int32_t b)
{
    if (b == 0)
        return 0;
    return (a == INT32_MIN && b == -1) ? INT32_MIN : a / b;
}

static inline int32_t int_mod(int32_t a, int32_t b)
{
    if (b == 0 || (a == INT32_MIN && b == -1))
        return 0;
    return a % b;
}

/* Two's complement wrapping, computed in unsigned arithmetic (signed overflow is undefined). */
static inline int32_t wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t wrap_sub(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

static inline int32_t wrap_mul(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a * (uint32_t)b);
}

/* int(f): lang/builtins.c's pf_float_to_int, inlined for the inner loop. */
static inline int32_t float_to_int(float f)
{
    if (isnan(f))
        return 0;
    if (f >= 2147483648.0f)
        return INT32_MAX;
    if (f < -2147483648.0f)
        return INT32_MIN;
    return (int32_t)f;
}

static inline int32_t clamp_index(int32_t i, int32_t len)
{
    return i < 0 ? 0 : i >= len ? len - 1 : i;
}

static float yuv(pf_builtin b, const pf_value *R, const int32_t *ip)
{
    pf_value args[3] = { R[ip[0]], R[ip[1]], R[ip[2]] };
    return pf_eval_builtin(b, PF_T_FLOAT, 3, args).f;
}

static float noise(const pf_value *R, const int32_t *ip)
{
    int n = ip[0];
    int32_t a[4] = { R[ip[1]].i, R[ip[2]].i, R[ip[3]].i, R[ip[4]].i };
    return pf_noise(n, a);
}

/* ---- the loop ----
 *
 * With GCC or Clang, each handler jumps straight to the next one through a label table
 * ("threaded" dispatch: one indirect branch per handler, which branch predictors follow much
 * better than the single one of a switch); elsewhere (or with -DPF_INTERP_SWITCH) the same
 * handlers form a switch. */

#if defined(__GNUC__) && !defined(PF_INTERP_SWITCH)
#define PF_ITHREADED 1
#define OP(name) L_##name:
#define NEXT goto *labels[*ip]
#else
#define PF_ITHREADED 0
#define OP(name) case PF_I_##name:
#define NEXT break
#endif

#define A (R[ip[2]])
#define B (R[ip[3]])
#define C (R[ip[4]])
#define D (R[ip[1]])
/* d = f(a, b): operands are read before d is written (d may be one of them). */
#define BIN(op, rfield, expr_)                               \
    OP(op) {                                                 \
        const pf_value a = A, b = B;                         \
        D.rfield = (expr_);                                  \
        ip += 4;                                             \
    }                                                        \
    NEXT;
#define UN(op, rfield, expr_)                                \
    OP(op) {                                                 \
        const pf_value a = A;                                \
        D.rfield = (expr_);                                  \
        ip += 3;                                             \
    }                                                        \
    NEXT;
#define JUMP_UNLESS(op, field, cmp)                          \
    OP(op)                                                   \
        ip = (R[ip[1]].field cmp R[ip[2]].field) ? ip + 4 : code + ip[3]; \
        NEXT;

static void exec_rare(pf_ictx *x, const int32_t **ipp, pf_value *R);

#define PF_IOP_LABEL(name, sig) &&L_##name,

void pf_iexec(pf_ictx *x, const pf_iunit *u, int pc, pf_value *R)
{
    const int32_t *code = u->code;
    const int32_t *ip = code + pc;
#if PF_ITHREADED
    static const void *const labels[PF_I_OP_COUNT] = { PF_IOPS(PF_IOP_LABEL) };
    NEXT;
#else
    for (;;) switch ((pf_iop)ip[0]) {
#endif
    OP(HALT) return;
    OP(RET) x->ret = R[ip[1]]; return;
    OP(MOV) D = A; ip += 3; NEXT;
    OP(ZERO) memset(&D, 0, sizeof(pf_value) * (size_t)ip[2]); ip += 3; NEXT;
    UN(I2F, f, (float)a.i)
    UN(F2I, i, float_to_int(a.f))
    UN(B2I, i, a.b ? 1 : 0)
    UN(B2F, f, a.b ? 1.0f : 0.0f)
    BIN(ADD_I, i, wrap_add(a.i, b.i))
    BIN(SUB_I, i, wrap_sub(a.i, b.i))
    BIN(MUL_I, i, wrap_mul(a.i, b.i))
    BIN(DIV_I, i, int_div(a.i, b.i))
    BIN(MOD_I, i, int_mod(a.i, b.i))
    UN(NEG_I, i, wrap_sub(0, a.i))
    BIN(ADD_F, f, a.f + b.f)
    BIN(SUB_F, f, a.f - b.f)
    BIN(MUL_F, f, a.f * b.f)
    BIN(DIV_F, f, a.f / b.f)
    UN(NEG_F, f, -a.f)
    /* The product is stored in a float variable first: one rounding each (the build is ISO C,
     * -ffp-contract=off; the no-contraction test catches a build that fuses). */
    OP(MULADD_F) { float t = A.f * B.f; D.f = t + C.f; ip += 5; } NEXT;
    OP(MULSUB_F) { float t = A.f * B.f; D.f = t - C.f; ip += 5; } NEXT;
    OP(ADDMUL_F) { float t = B.f * C.f; D.f = A.f + t; ip += 5; } NEXT;
    OP(SUBMUL_F) { float t = B.f * C.f; D.f = A.f - t; ip += 5; } NEXT;
    BIN(LT_I, b, a.i < b.i)
    BIN(LE_I, b, a.i <= b.i)
    BIN(GT_I, b, a.i > b.i)
    BIN(GE_I, b, a.i >= b.i)
    BIN(EQ_I, b, a.i == b.i)
    BIN(NE_I, b, a.i != b.i)
    BIN(LT_F, b, a.f < b.f)
    BIN(LE_F, b, a.f <= b.f)
    BIN(GT_F, b, a.f > b.f)
    BIN(GE_F, b, a.f >= b.f)
    BIN(EQ_F, b, a.f == b.f)
    BIN(NE_F, b, a.f != b.f)
    BIN(EQ_B, b, a.b == b.b)
    BIN(NE_B, b, a.b != b.b)
    UN(NOT, b, !a.b)
    /* min = b < a ? b : a; max = a < b ? b : a (NaN and -0 depend on the order) */
    BIN(MIN_I, i, b.i < a.i ? b.i : a.i)
    BIN(MAX_I, i, a.i < b.i ? b.i : a.i)
    BIN(MIN_F, f, b.f < a.f ? b.f : a.f)
    BIN(MAX_F, f, a.f < b.f ? b.f : a.f)
    OP(CLAMP_I) {
        int32_t v = A.i, lo = B.i, hi = C.i;
        v = v < lo ? lo : v;
        D.i = hi < v ? hi : v;
        ip += 5;
    }
    NEXT;
    OP(CLAMP_F) {
        float v = A.f, lo = B.f, hi = C.f;
        v = v < lo ? lo : v;
        D.f = hi < v ? hi : v;
        ip += 5;
    }
    NEXT;
    UN(ABS_I, i, a.i < 0 ? wrap_sub(0, a.i) : a.i)
    UN(ABS_F, f, fabsf(a.f))
    UN(EXP, f, expf(a.f))
    UN(LOG, f, logf(a.f))
    UN(SQRT, f, sqrtf(a.f))
    UN(SIN, f, sinf(a.f))
    UN(COS, f, cosf(a.f))
    UN(TAN, f, tanf(a.f))
    UN(FLOOR, f, floorf(a.f))
    UN(CEIL, f, ceilf(a.f))
    UN(ROUND, f, roundf(a.f))
    BIN(POW, f, powf(a.f, b.f))
    BIN(ATAN2, f, atan2f(a.f, b.f))
    OP(ALOAD) D = R[ip[2] + clamp_index(R[ip[4]].i, ip[3])]; ip += 5; NEXT;
    OP(ASTORE) R[ip[1] + clamp_index(R[ip[3]].i, ip[2])] = R[ip[4]]; ip += 5; NEXT;
    OP(READ1) {
        const pf_iimage *im = &x->images[ip[2]];
        int32_t i0 = R[ip[3]].i;
        float v;
        if (inside(i0, im->extent[0]))
            v = im->data[(int64_t)i0 * im->stride[0]];
        else
            v = read_outside(im, ip + 3, R);
        D.f = v;
        ip += 4;
    }
    NEXT;
    OP(READ2) {
        const pf_iimage *im = &x->images[ip[2]];
        int32_t i0 = R[ip[3]].i, i1 = R[ip[4]].i;
        float v;
        if (inside(i0, im->extent[0]) && inside(i1, im->extent[1]))
            v = im->data[(int64_t)i0 * im->stride[0] + (int64_t)i1 * im->stride[1]];
        else
            v = read_outside(im, ip + 3, R);
        D.f = v;
        ip += 5;
    }
    NEXT;
    OP(READ3) {
        const pf_iimage *im = &x->images[ip[2]];
        int32_t i0 = R[ip[3]].i, i1 = R[ip[4]].i, i2 = R[ip[5]].i;
        float v;
        if (inside(i0, im->extent[0]) && inside(i1, im->extent[1]) &&
            inside(i2, im->extent[2]))
            v = im->data[(int64_t)i0 * im->stride[0] + (int64_t)i1 * im->stride[1] +
                         (int64_t)i2 * im->stride[2]];
        else
            v = read_outside(im, ip + 3, R);
        D.f = v;
        ip += 6;
    }
    NEXT;
    /* 4-D images are rare: the general read handles inside indices too */
    OP(READ4) D.f = read_outside(&x->images[ip[2]], ip + 3, R); ip += 7; NEXT;
    OP(WRITE) write_image(&x->images[ip[2]], ip[1], R[ip[3]].f, ip + 4, R); ip += 8; NEXT;
    OP(READ_OD) D.f = pf_iread_od(x, &x->images[ip[2]], ip + 3, R); ip += 7; NEXT;
    OP(READ_J) D.f = pf_iread_own(&x->images[ip[2]], ip + 3, R); ip += 7; NEXT;
    OP(WRITE_J) pf_iwrite_own(&x->images[ip[2]], ip[1], R[ip[3]].f, ip + 4, R); ip += 8; NEXT;
    OP(JMP) ip = code + ip[1]; NEXT;
    OP(JMPF) ip = R[ip[1]].b ? ip + 3 : code + ip[2]; NEXT;
    OP(JMPT) ip = R[ip[1]].b ? code + ip[2] : ip + 3; NEXT;
    JUMP_UNLESS(JNLT_I, i, <)
    JUMP_UNLESS(JNLE_I, i, <=)
    JUMP_UNLESS(JNGT_I, i, >)
    JUMP_UNLESS(JNGE_I, i, >=)
    JUMP_UNLESS(JNEQ_I, i, ==)
    JUMP_UNLESS(JNNE_I, i, !=)
    JUMP_UNLESS(JNLT_F, f, <)
    JUMP_UNLESS(JNLE_F, f, <=)
    JUMP_UNLESS(JNGT_F, f, >)
    JUMP_UNLESS(JNGE_F, f, >=)
    JUMP_UNLESS(JNEQ_F, f, ==)
    JUMP_UNLESS(JNNE_F, f, !=)
    OP(FOR_INIT) {
        int32_t lo = R[ip[4]].i, hi = R[ip[5]].i, st = R[ip[6]].i;
        R[ip[2]].i = hi;
        R[ip[3]].i = st < 1 ? 1 : st;
        R[ip[1]].i = lo;
        ip = lo > hi ? code + ip[7] : ip + 8;
    }
    NEXT;
    OP(FOR_NEXT) {
        int64_t next = (int64_t)R[ip[1]].i + R[ip[3]].i;
        if (next <= R[ip[2]].i) {
            R[ip[1]].i = (int32_t)next;
            ip = code + ip[4];
        } else {
            ip += 5;
        }
    }
    NEXT;
    OP(PERF_SKIP) ip = pf_iperf_skip_runs(x, ip, R) ? ip + 9 : code + ip[8]; NEXT;
    OP(YUV_Y) OP(YUV_U) OP(YUV_V) OP(YUV_R) OP(YUV_G) OP(YUV_B)
    OP(NOISE) OP(MEDIAN_I) OP(MEDIAN_F) OP(SORT_I) OP(SORT_F) OP(CALL)
        exec_rare(x, &ip, R);
        NEXT;
#if !PF_ITHREADED
    default: pf_die("interpreter: bad opcode %d", (int)ip[0]);
    }
#endif
}

/* The less frequent instructions, out of line to keep the loop compact. */
static void exec_rare(pf_ictx *x, const int32_t **ipp, pf_value *R)
{
    const int32_t *ip = *ipp;
    switch ((pf_iop)ip[0]) {
    case PF_I_YUV_Y: D.f = yuv(PF_B_YUV_Y, R, ip + 2); ip += 5; break;
    case PF_I_YUV_U: D.f = yuv(PF_B_YUV_U, R, ip + 2); ip += 5; break;
    case PF_I_YUV_V: D.f = yuv(PF_B_YUV_V, R, ip + 2); ip += 5; break;
    case PF_I_YUV_R: D.f = yuv(PF_B_YUV_R, R, ip + 2); ip += 5; break;
    case PF_I_YUV_G: D.f = yuv(PF_B_YUV_G, R, ip + 2); ip += 5; break;
    case PF_I_YUV_B: D.f = yuv(PF_B_YUV_B, R, ip + 2); ip += 5; break;
    case PF_I_NOISE: D.f = noise(R, ip + 2); ip += 7; break;
    case PF_I_MEDIAN_I:
    case PF_I_MEDIAN_F: {
        pf_type t = ip[0] == PF_I_MEDIAN_I ? PF_T_INT : PF_T_FLOAT;
        D = pf_median_values(&R[ip[2]], ip[3], R[ip[4]].i, t);
        ip += 5;
        break;
    }
    case PF_I_SORT_I:
    case PF_I_SORT_F:
        pf_sort_values(&R[ip[1]], ip[2], R[ip[3]].i, ip[0] == PF_I_SORT_I ? PF_T_INT : PF_T_FLOAT);
        ip += 4;
        break;
    case PF_I_CALL: {
        int fi = ip[2], n = ip[3];
        pf_value *F = x->func_frames[fi];
        for (int k = 0; k < n; k++)
            F[k] = R[ip[4 + k]];
        memset(&x->ret, 0, sizeof x->ret);
        pf_iexec(x, &x->ic->funcs[fi], 0, F);
        D = x->ret;
        ip += 4 + n;
        break;
    }
    default: pf_die("interpreter: bad opcode %d", (int)ip[0]);
    }
    *ipp = ip;
}
