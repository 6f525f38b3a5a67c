/* exp on W float lanes as inline LLVM code (no call): Cody-Waite range reduction and Cephes'
 * degree-5 polynomial, evaluated with fused multiply-adds.
 *
 * Why inline: a call into libmvec (_ZGVdN8v_expf) clobbers every vector register, so a window
 * filter with an exp per tap (the bilateral filter) spilled and reloaded its sums and centre
 * values around each call, and the call's own special-case tests ran per tap. Inline, the
 * ~20 instructions interleave with the rest of the tap and take any vector width.
 *
 * Accuracy, measured over every float in [-104.5, 89.5] against exp in double precision
 * (docs/bench-history.md): at most 1.02 ulp (glibc documents at most 4 ulp for libmvec's expf;
 * the interpreter's expf is within 0.502). Results are exact at the edges: +inf above
 * ln(FLT_MAX), gradual underflow to 0 below -103.97, NaN for NaN.
 *
 *   x' = clamp(x, -104, 89);  n = rint(x' log2 e);  r = x' - n ln2 (in two parts, exact)
 *   e^r = 1 + r + r^2 P(r)  (P of degree 5, by Estrin's scheme);  e^x = e^r 2^n
 * with 2^n applied by AVX-512's vscalefps where the host has it, else as two exponent
 * fields. */
#include "codegen/llvm_internal.h"

#include <pthread.h>
#include <string.h>

static LLVMValueRef splat_f(emit *e, LLVMTypeRef vt, float c)
{
    unsigned W = LLVMGetVectorSize(vt);
    LLVMValueRef s = LLVMConstReal(e->t_f32, c), lanes[64];
    for (unsigned i = 0; i < W; i++)
        lanes[i] = s;
    return LLVMConstVector(lanes, W);
}

static LLVMValueRef splat_i(emit *e, unsigned W, int c)
{
    LLVMValueRef s = em_i32(e, c), lanes[64];
    for (unsigned i = 0; i < W; i++)
        lanes[i] = s;
    return LLVMConstVector(lanes, W);
}

/* a * b + c, fused where the target has FMA. */
static LLVMValueRef fmuladd(emit *e, LLVMTypeRef vt, LLVMValueRef a, LLVMValueRef b,
                            LLVMValueRef c)
{
    LLVMValueRef args[3] = { a, b, c };
    return em_intrinsic(e, "llvm.fmuladd", vt, args, 3);
}

/* 2^n as a float, for integer lanes n in [-126, 127]: the exponent field alone. */
static LLVMValueRef pow2(emit *e, LLVMTypeRef vt, LLVMValueRef n)
{
    unsigned W = LLVMGetVectorSize(vt);
    LLVMValueRef biased = LLVMBuildAdd(e->b, n, splat_i(e, W, 127), "");
    LLVMValueRef bits = LLVMBuildShl(e->b, biased, splat_i(e, W, 23), "");
    return LLVMBuildBitCast(e->b, bits, vt, "");
}

bool pf_llvm_exp_no_scalef;
static bool avx512f, avx512vl;

static void probe_avx512(void)
{
    avx512f = em_host_has_feature("avx512f");
    avx512vl = avx512f && em_host_has_feature("avx512vl");
}

/* x clamped into [lo, hi] with NaN kept (ordered compares are false for NaN). */
static LLVMValueRef clamp_keep_nan(emit *e, LLVMTypeRef vt, LLVMValueRef x, float lo, float hi)
{
    LLVMValueRef h = splat_f(e, vt, hi), l = splat_f(e, vt, lo);
    x = LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, LLVMRealOGT, x, h, ""), h, x, "");
    return LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, LLVMRealOLT, x, l, ""), l, x, "");
}

/* AVX-512's vscalefps: y * 2^floor(n) in one instruction, rounded once, with overflow to inf
 * and gradual underflow; NaN in, NaN out. Only for the widths whose form the host has. */
static bool has_scalef(int W)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, probe_avx512);
    return !pf_llvm_exp_no_scalef && ((W == 16 && avx512f) || ((W == 8 || W == 4) && avx512vl));
}

static LLVMValueRef scalef(emit *e, LLVMTypeRef vt, int W, LLVMValueRef y, LLVMValueRef n)
{
    const char *name = W == 16 ? "llvm.x86.avx512.mask.scalef.ps.512"
                     : W == 8  ? "llvm.x86.avx512.mask.scalef.ps.256"
                               : "llvm.x86.avx512.mask.scalef.ps.128";
    LLVMTypeRef mask_t = LLVMIntTypeInContext(e->ctx, W == 16 ? 16 : 8);
    LLVMValueRef args[5] = { y, n, LLVMGetUndef(vt), LLVMConstAllOnes(mask_t),
                             em_i32(e, 4) };  /* 4: the current rounding mode */
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, NULL, 0);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, NULL, 0);
    return LLVMBuildCall2(e->b, fty, fn, args, W == 16 ? 5 : 4, "");
}

/* y * 2^n without AVX-512: n (integral floats in [-150, 128], past a single exponent field at
 * both ends) as two exponent fields n1 + n2, each a normal scale. */
static LLVMValueRef scale_by_fields(emit *e, LLVMTypeRef vt, int W, LLVMValueRef y,
                                    LLVMValueRef n)
{
    LLVMTypeRef it = LLVMVectorType(e->t_i32, (unsigned)W);
    LLVMValueRef ni = LLVMBuildFPToSI(e->b, n, it, "");
    LLVMValueRef n2 = LLVMBuildAShr(e->b, ni, splat_i(e, (unsigned)W, 1), "");
    LLVMValueRef n1 = LLVMBuildSub(e->b, ni, n2, "");
    return LLVMBuildFMul(e->b, LLVMBuildFMul(e->b, y, pow2(e, vt, n1), ""), pow2(e, vt, n2), "");
}

LLVMValueRef em_vector_exp(emit *e, LLVMValueRef x, int W)
{
    /* Cephes expf's coefficients of (e^r - 1 - r) / r^2, highest degree first. */
    static const float P[6] = { 1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f };
    LLVMTypeRef vt = LLVMVectorType(e->t_f32, (unsigned)W);
    /* Below -104 the result rounds to 0, above 89 to +inf: the clamp changes no result, and
     * keeps r exact for any x. A NaN passes through it and every step after. */
    LLVMValueRef xc = clamp_keep_nan(e, vt, x, -104.0f, 89.0f);
    LLVMValueRef t = LLVMBuildFMul(e->b, xc, splat_f(e, vt, 1.44269504088896341f), "");
    LLVMValueRef n = em_intrinsic(e, "llvm.rint", vt, &t, 1);
    /* ln 2 = C1 + C2, C1 with 12 significant bits: n * C1 is exact for |n| <= 150, and
     * x - n C1 is exact (the operands are within a factor 2 of each other). */
    LLVMValueRef r = fmuladd(e, vt, n, splat_f(e, vt, -0.693145751953125f), xc);
    r = fmuladd(e, vt, n, splat_f(e, vt, -1.428606765330187045e-06f), r);
    /* Estrin's scheme: (P0 r + P1) r^4 + (P2 r + P3) r^2 + (P4 r + P5), three fused steps
     * deep instead of Horner's five (the tap loop of a window filter is latency-bound: the
     * bilateral filter's exp sits in a chain of ~100 cycles per tap). Same accuracy. */
    LLVMValueRef r2 = LLVMBuildFMul(e->b, r, r, ""), q[3];
    for (int i = 0; i < 3; i++)
        q[i] = fmuladd(e, vt, splat_f(e, vt, P[2 * i]), r, splat_f(e, vt, P[2 * i + 1]));
    LLVMValueRef p = fmuladd(e, vt, fmuladd(e, vt, q[0], r2, q[1]), r2, q[2]);
    LLVMValueRef y = LLVMBuildFAdd(e->b, fmuladd(e, vt, p, r2, r), splat_f(e, vt, 1.0f), "");
    if (has_scalef(W))
        return scalef(e, vt, W, y, n);
    /* fptosi of a NaN lane is poison: that lane takes x (NaN) in the select below, and a
     * select's unchosen operand does not make it poison. */
    y = scale_by_fields(e, vt, W, y, n);
    return LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, LLVMRealUNO, x, x, ""), x, y, "");
}
