/* Tests for congruence simplification (reconstruct/congruence.h): the paper's Figure 3 cases, the
 * 100-tap example of Section 3.3.3, refusals, C division semantics, fallbacks, the proof cache
 * and a randomized cross-check of Z3's answers against brute-force enumeration. */
#include "reconstruct/congruence.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Variables of the tests: x and y as in Listing 2, z a third one. */
enum { X, Y, Z, NVARS };

typedef struct fixture {
    pf_arena arena;
    pf_congruence_ctx *ctx;
    pf_cfact fact[NVARS];
    pf_cfacts facts;
} fixture;

static void fx_init(fixture *f)
{
    pf_arena_init(&f->arena);
    /* The resource limit decides, as in production; the wall clock must not, even for a
     * sanitizer build on a loaded machine (100 ms was once hit there). */
    pf_congruence_options opt = { .timeout_ms = 60000 };
    f->ctx = pf_congruence_new(&opt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->ctx);
    for (int i = 0; i < NVARS; i++)
        f->fact[i] = pf_cfact_any();
    f->facts = (pf_cfacts){ f->fact, NVARS };
}

static void fx_free(fixture *f)
{
    pf_congruence_free(f->ctx);
    pf_arena_free(&f->arena);
}

static pf_cexpr *var(fixture *f, int id)
{
    return pf_ce_var(&f->arena, id);
}

static pf_cexpr *cst(fixture *f, int64_t c)
{
    return pf_ce_const(&f->arena, c);
}

static pf_cexpr *bin(fixture *f, pf_cexpr_kind k, const pf_cexpr *a, const pf_cexpr *b)
{
    return pf_ce_bin(&f->arena, k, a, b);
}

static pf_cong_result prove(fixture *f, const pf_cexpr *e, int64_t modulus)
{
    pf_cong_result r;
    pf_cong_status s = pf_congruence_prove(f->ctx, e, &f->facts, modulus, &r);
    CU_ASSERT_EQUAL(s, r.status);
    return r;
}

#define ASSERT_PROVEN(res, r)                                \
    do {                                                     \
        pf_cong_result res_ = (res);                         \
        CU_ASSERT_EQUAL(res_.status, PF_CONG_PROVEN);        \
        CU_ASSERT_EQUAL(res_.residue, (r));                  \
    } while (0)

/* The status of a fresh (uncached) answer. */
#define ASSERT_STATUS(res, st) CU_ASSERT_EQUAL((res).status, (st))

/* Figure 3 (b): stage2 loops x = 0 .. W step 4, so the read A[x, y - i] hits stored samples. */
static void test_fig3b_reads_on_grid(void)
{
    fixture f;
    fx_init(&f);
    f.fact[X] = pf_cfact_loop(0, 4, false, 0);
    f.fact[Y] = pf_cfact_loop(0, 4, false, 0);
    ASSERT_PROVEN(prove(&f, var(&f, X), 4), 0);
    for (int i = -8; i <= 8; i += 4)
        ASSERT_PROVEN(prove(&f, pf_ce_addc(&f.arena, var(&f, X), -i), 4), 0);
    /* y - i along A's dimension of spacing 1: every integer is on that grid. */
    for (int i = -3; i <= 3; i++)
        ASSERT_PROVEN(prove(&f, pf_ce_addc(&f.arena, var(&f, Y), -i), 1), 0);
    pf_interp_1d w = pf_interp_constant_1d(0, 4, 0);
    CU_ASSERT_EQUAL(w.ntaps, 1);
    PF_ASSERT_NEAR(w.weight[0], 1.0, 0);
    PF_ASSERT_NEAR(w.weight[1], 0.0, 0);
    fx_free(&f);
}

/* Figure 3 (c): A[x + 2, y - i] lies midway between stored samples: weights (0.5, 0.5). */
static void test_fig3c_half_way_weights(void)
{
    fixture f;
    fx_init(&f);
    f.fact[X] = pf_cfact_loop(0, 4, false, 0);
    pf_cexpr *e = pf_ce_addc(&f.arena, var(&f, X), 2);
    pf_cong_result r = prove(&f, e, 4);
    ASSERT_PROVEN(r, 2);
    pf_interp_1d w = pf_interp_constant_1d(r.residue, 4, 0);
    CU_ASSERT_EQUAL(w.ntaps, 2);
    PF_ASSERT_NEAR(w.weight[0], 0.5, 0);
    PF_ASSERT_NEAR(w.weight[1], 0.5, 0);
    CU_ASSERT_EQUAL(w.shift, 2);
    /* At x = 8 the read is at 10: stored samples 2 and 3 (indices 8 and 12). */
    const pf_cexpr *base = pf_interp_base_index(&f.arena, e, &w);
    int64_t vals[NVARS] = { 8, 0, 0 }, b;
    CU_ASSERT_EQUAL(pf_cexpr_eval(base, vals, NVARS, &b), 0);
    CU_ASSERT_EQUAL(b, 2);
    /* With the grid anchored at origin 1, x + 2 - 1 ≡ 1: weights (0.75, 0.25). */
    r = prove(&f, pf_ce_addc(&f.arena, e, -1), 4);
    ASSERT_PROVEN(r, 1);
    w = pf_interp_constant_1d(r.residue, 4, 1);
    PF_ASSERT_NEAR(w.weight[0], 0.75, 0);
    PF_ASSERT_NEAR(w.weight[1], 0.25, 0);
    CU_ASSERT_EQUAL(w.shift, 2);
    fx_free(&f);
}

/* Section 3.3.3: a 100-tap filter reading x - i, i = -50..49, of an image sampled with spacing 2
 * by a stage looping over even x. The residues alternate, so half the taps are plain loads and
 * half are (0.5, 0.5) pairs; together they touch 51 stored samples, which CSE can share. */
static void test_hundred_taps_alternate(void)
{
    fixture f;
    fx_init(&f);
    f.fact[X] = pf_cfact_loop(0, 2, false, 0);
    const int64_t k = 10;  /* evaluate bases at x = 2k; they are k + a constant */
    int64_t vals[NVARS] = { 2 * k, 0, 0 };
    int seen[200] = { 0 }, unique = 0, loads = 0, pairs = 0;
    for (int i = -50; i <= 49; i++) {
        pf_cexpr *e = pf_ce_addc(&f.arena, var(&f, X), -i);
        pf_cong_result r = prove(&f, e, 2);
        ASSERT_PROVEN(r, ((-i) % 2 + 2) % 2);
        pf_interp_1d w = pf_interp_constant_1d(r.residue, 2, 0);
        loads += w.ntaps == 1;
        pairs += w.ntaps == 2;
        PF_ASSERT_NEAR(w.weight[0] + w.weight[1], 1.0, 1e-12);
        int64_t b;
        CU_ASSERT_EQUAL_FATAL(pf_cexpr_eval(pf_interp_base_index(&f.arena, e, &w), vals,
                                            NVARS, &b), 0);
        for (int t = 0; t < w.ntaps; t++) {
            int slot = (int)(b + t - k) + 100;
            unique += !seen[slot];
            seen[slot] = 1;
        }
    }
    CU_ASSERT_EQUAL(loads, 50);
    CU_ASSERT_EQUAL(pairs, 50);
    CU_ASSERT_EQUAL(unique, 51);
    CU_ASSERT(seen[100 - 25] && seen[100 + 25]);
    fx_free(&f);
}

/* x ≡ 0 (mod 4) says nothing about x + y when y is free. */
static void test_refuses_free_offset(void)
{
    fixture f;
    fx_init(&f);
    f.fact[X] = pf_cfact_mod(0, 4);
    pf_cong_result r = prove(&f, pf_ce_add(&f.arena, var(&f, X), var(&f, Y)), 4);
    ASSERT_STATUS(r, PF_CONG_NOT_CONSTANT);
    CU_ASSERT(r.residue != r.other);
    CU_ASSERT(r.residue >= 0 && r.residue < 4 && r.other >= 0 && r.other < 4);
    CU_ASSERT_PTR_NULL(r.reason);
    fx_free(&f);
}

/* x ≡ 0 (mod 2) leaves x mod 4 in {0, 2}; bounds that pin x to 0 make it constant again. */
static void test_refuses_coarser_congruence(void)
{
    fixture f;
    fx_init(&f);
    f.fact[X] = pf_cfact_mod(0, 2);
    pf_cong_result r = prove(&f, var(&f, X), 4);
    ASSERT_STATUS(r, PF_CONG_NOT_CONSTANT);
    CU_ASSERT((r.residue == 0 && r.other == 2) || (r.residue == 2 && r.other == 0));
    ASSERT_PROVEN(prove(&f, var(&f, X), 2), 0);
    f.fact[X] = pf_cfact_loop(0, 2, true, 2);  /* x in {0} */
    ASSERT_PROVEN(prove(&f, var(&f, X), 4), 0);
    f.fact[X] = pf_cfact_loop(6, 2, true, 8);  /* x in {6} */
    ASSERT_PROVEN(prove(&f, var(&f, X), 4), 2);
    fx_free(&f);
}

/* Products of variables are outside the encoding: UNKNOWN without asking Z3 (so no hang). An
 * opaque leaf may still be proven irrelevant, else its residue is UNKNOWN, not NOT_CONSTANT. */
static void test_nonlinear_and_opaque_fall_back(void)
{
    fixture f;
    fx_init(&f);
    f.fact[X] = pf_cfact_mod(0, 2);
    pf_congruence_stats before, after;
    pf_congruence_get_stats(f.ctx, &before);
    pf_cong_result r = prove(&f, pf_ce_mul(&f.arena, var(&f, X), var(&f, X)), 4);
    ASSERT_STATUS(r, PF_CONG_UNKNOWN);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, "nonlinear"));
    r = prove(&f, pf_ce_mul(&f.arena, var(&f, X), var(&f, Y)), 2);
    ASSERT_STATUS(r, PF_CONG_UNKNOWN);
    pf_congruence_get_stats(f.ctx, &after);
    CU_ASSERT_EQUAL(after.z3_checks, before.z3_checks);
    CU_ASSERT_EQUAL(after.unknowns, before.unknowns + 2);
    /* A constant factor keeps a product linear, even when it must be folded first. */
    pf_cexpr *four = bin(&f, PF_CE_ADD, cst(&f, 2), cst(&f, 2));
    ASSERT_PROVEN(prove(&f, pf_ce_mul(&f.arena, var(&f, Y), four), 4), 0);
    pf_cexpr *opq = pf_ce_opaque(&f.arena);
    r = prove(&f, pf_ce_add(&f.arena, var(&f, X), opq), 2);
    ASSERT_STATUS(r, PF_CONG_UNKNOWN);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, "opaque"));
    ASSERT_PROVEN(prove(&f, pf_ce_addc(&f.arena, pf_ce_mul(&f.arena, opq, cst(&f, 4)), 3), 4), 3);
    r = prove(&f, bin(&f, PF_CE_DIV, var(&f, X), var(&f, Y)), 2);
    ASSERT_STATUS(r, PF_CONG_UNKNOWN);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, "divisor"));
    r = prove(&f, bin(&f, PF_CE_MOD, var(&f, X), cst(&f, 0)), 2);
    ASSERT_STATUS(r, PF_CONG_UNKNOWN);
    fx_free(&f);
}

/* x / 2 of x ≡ 0 (mod 4) is even; (x + 1) / 2 tells C's truncation from Z3's floor division
 * as soon as x can be negative. */
static void test_division_has_c_semantics(void)
{
    fixture f;
    fx_init(&f);
    f.fact[X] = pf_cfact_loop(0, 4, false, 0);
    pf_cexpr *x = var(&f, X), *x1 = pf_ce_addc(&f.arena, x, 1);
    ASSERT_PROVEN(prove(&f, bin(&f, PF_CE_DIV, x, cst(&f, 2)), 2), 0);
    ASSERT_PROVEN(prove(&f, bin(&f, PF_CE_DIV, x1, cst(&f, 2)), 2), 0);
    ASSERT_PROVEN(prove(&f, bin(&f, PF_CE_DIV, x1, cst(&f, -2)), 2), 0);
    ASSERT_PROVEN(prove(&f, bin(&f, PF_CE_MOD, x1, cst(&f, 4)), 8), 1);
    f.fact[X] = pf_cfact_loop(-16, 4, true, 17);  /* x in {-16, -12, ..., 16} */
    ASSERT_PROVEN(prove(&f, bin(&f, PF_CE_DIV, x, cst(&f, 2)), 2), 0);
    ASSERT_STATUS(prove(&f, bin(&f, PF_CE_DIV, x1, cst(&f, 2)), 2), PF_CONG_NOT_CONSTANT);
    ASSERT_STATUS(prove(&f, bin(&f, PF_CE_DIV, x1, cst(&f, -2)), 2), PF_CONG_NOT_CONSTANT);
    ASSERT_STATUS(prove(&f, bin(&f, PF_CE_MOD, x1, cst(&f, 4)), 8), PF_CONG_NOT_CONSTANT);
    f.fact[X] = pf_cfact_loop(-16, 4, true, -3);  /* x in {-16, ..., -4}: -3 % 4 == -3 in C */
    ASSERT_PROVEN(prove(&f, bin(&f, PF_CE_MOD, x1, cst(&f, 4)), 8), 5);
    ASSERT_PROVEN(prove(&f, bin(&f, PF_CE_DIV, x1, cst(&f, 2)), 2), 1);
    fx_free(&f);
}

/* Boundary clamps: max(x - 8, 0) stays on the grid, min(x, 102) leaves it near the edge. */
static void test_min_max_clamps(void)
{
    fixture f;
    fx_init(&f);
    f.fact[X] = pf_cfact_loop(0, 4, false, 0);
    pf_cexpr *x = var(&f, X);
    ASSERT_PROVEN(prove(&f, bin(&f, PF_CE_MAX, pf_ce_addc(&f.arena, x, -8), cst(&f, 0)), 4), 0);
    ASSERT_PROVEN(prove(&f, bin(&f, PF_CE_MIN, x, cst(&f, 100)), 4), 0);
    ASSERT_STATUS(prove(&f, bin(&f, PF_CE_MIN, x, cst(&f, 102)), 4), PF_CONG_NOT_CONSTANT);
    f.fact[X] = pf_cfact_loop(0, 4, true, 100);  /* x <= 96: the clamp at 102 never bites */
    ASSERT_PROVEN(prove(&f, bin(&f, PF_CE_MIN, x, cst(&f, 102)), 4), 0);
    ASSERT_PROVEN(prove(&f, pf_ce_neg(&f.arena, pf_ce_addc(&f.arena, x, 1)), 4), 3);
    fx_free(&f);
}

/* The cache is keyed by the canonical text, the mentioned variables' facts and the modulus. */
static void test_cache_hits(void)
{
    fixture f;
    fx_init(&f);
    f.fact[X] = pf_cfact_loop(0, 4, false, 0);
    pf_cong_result r = prove(&f, pf_ce_addc(&f.arena, var(&f, X), 2), 4);
    CU_ASSERT_FALSE(r.cached);
    r = prove(&f, pf_ce_addc(&f.arena, var(&f, X), 2), 4);  /* same text, other nodes */
    CU_ASSERT_TRUE(r.cached);
    ASSERT_PROVEN(r, 2);
    f.fact[Y] = pf_cfact_mod(1, 3);  /* not mentioned: still a hit */
    CU_ASSERT_TRUE(prove(&f, pf_ce_addc(&f.arena, var(&f, X), 2), 4).cached);
    f.fact[X] = pf_cfact_loop(0, 2, false, 0);  /* mentioned: a new question */
    r = prove(&f, pf_ce_addc(&f.arena, var(&f, X), 2), 4);
    CU_ASSERT_FALSE(r.cached);
    ASSERT_STATUS(r, PF_CONG_NOT_CONSTANT);
    CU_ASSERT_FALSE(prove(&f, pf_ce_addc(&f.arena, var(&f, X), 2), 8).cached);  /* modulus */
    pf_congruence_stats st;
    pf_congruence_get_stats(f.ctx, &st);
    CU_ASSERT_EQUAL(st.queries, 5);
    CU_ASSERT_EQUAL(st.hits, 2);
    CU_ASSERT_EQUAL(st.misses, 3);
    CU_ASSERT(st.z3_checks >= 5);
    /* Enough distinct questions to make the table grow; the old answers survive it. */
    for (int i = 0; i < 300; i++)
        prove(&f, pf_ce_addc(&f.arena, var(&f, Z), i), 1 + i % 5);
    f.fact[X] = pf_cfact_loop(0, 4, false, 0);
    CU_ASSERT_TRUE(prove(&f, pf_ce_addc(&f.arena, var(&f, X), 2), 4).cached);
    fx_free(&f);
}

/* When Z3 gives up (here: a resource limit it cannot meet), the answer is UNKNOWN and the
 * context stays usable. */
static void test_z3_giving_up_is_unknown(void)
{
    pf_congruence_options opt = { .rlimit = 1 };
    pf_congruence_ctx *ctx = pf_congruence_new(&opt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    pf_arena a;
    pf_arena_init(&a);
    pf_cfact fx[1] = { pf_cfact_loop(0, 4, false, 0) };
    pf_cfacts facts = { fx, 1 };
    pf_cexpr *e = pf_ce_bin(&a, PF_CE_MOD, pf_ce_addc(&a, pf_ce_var(&a, 0), 6), pf_ce_const(&a, 8));
    pf_cong_result r;
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(pf_congruence_prove(ctx, pf_ce_addc(&a, e, i), &facts, 4, &r),
                        PF_CONG_UNKNOWN);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, "z3"));
    }
    pf_congruence_free(ctx);
    /* Without a prover at all (pf_congruence_new failed) every question stays open. */
    CU_ASSERT_EQUAL(pf_congruence_prove(NULL, e, &facts, 4, &r), PF_CONG_UNKNOWN);
    pf_arena_free(&a);
}

/* Facts no valuation satisfies mean the read never runs: no claim either way. */
static void test_contradictory_facts(void)
{
    fixture f;
    fx_init(&f);
    f.fact[X] = pf_cfact_loop(1, 4, true, 5);  /* x ≡ 1 (mod 4), 1 <= x <= 4 */
    f.fact[X].lo = 2;
    pf_cong_result r = prove(&f, var(&f, X), 4);
    ASSERT_STATUS(r, PF_CONG_UNKNOWN);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, "contradictory"));
    fx_free(&f);
}

static void test_print_and_eval(void)
{
    pf_arena a;
    pf_arena_init(&a);
    pf_cexpr *x = pf_ce_var(&a, 0), *y = pf_ce_var(&a, 1);
    pf_cexpr *e = pf_ce_bin(&a, PF_CE_MIN, pf_ce_sub(&a, pf_ce_mul(&a, x, pf_ce_const(&a, 2)),
                                                    pf_ce_neg(&a, y)),
                            pf_ce_bin(&a, PF_CE_MOD, pf_ce_opaque(&a), pf_ce_const(&a, -3)));
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_cexpr_print(&sb, e, NULL, 0);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb), "min(((v0 * 2) - -(v1)), (? % -3))");
    pf_sb_clear(&sb);
    const char *names[] = { "x", NULL };
    pf_cexpr_print(&sb, e, names, 2);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb), "min(((x * 2) - -(v1)), (? % -3))");
    pf_sb_free(&sb);
    int64_t vals[2] = { -7, 3 }, v;
    CU_ASSERT_EQUAL(pf_cexpr_eval(e, vals, 2, &v), -1);  /* opaque */
    CU_ASSERT_EQUAL(pf_cexpr_eval(pf_ce_bin(&a, PF_CE_DIV, x, pf_ce_const(&a, 2)), vals, 2, &v), 0);
    CU_ASSERT_EQUAL(v, -3);
    CU_ASSERT_EQUAL(pf_cexpr_eval(pf_ce_bin(&a, PF_CE_MOD, x, pf_ce_const(&a, 2)), vals, 2, &v), 0);
    CU_ASSERT_EQUAL(v, -1);
    pf_cexpr *div0 = pf_ce_bin(&a, PF_CE_DIV, x, pf_ce_const(&a, 0));
    CU_ASSERT_EQUAL(pf_cexpr_eval(div0, vals, 2, &v), -1);
    CU_ASSERT_EQUAL(pf_cexpr_eval(pf_ce_mul(&a, pf_ce_const(&a, INT64_MAX), y), vals, 2, &v), -1);
    CU_ASSERT_EQUAL(pf_cexpr_eval(pf_ce_var(&a, 5), vals, 2, &v), -1);
    pf_arena_free(&a);
}

/* Bilinear taps: residues (2 of 4) and (1 of 2) give four taps of 0.25; a plain dimension
 * halves the count. Dimension 0 varies fastest. */
static void test_multilinear_taps(void)
{
    pf_interp_tap taps[1 << PF_INTERP_MAX_DIMS];
    pf_interp_1d d[3] = { pf_interp_constant_1d(2, 4, 0), pf_interp_constant_1d(1, 2, 0),
                          pf_interp_constant_1d(0, 4, 0) };
    CU_ASSERT_EQUAL(pf_interp_constant_nd(d, 2, taps), 4);
    for (int t = 0; t < 4; t++) {
        PF_ASSERT_NEAR(taps[t].weight, 0.25, 1e-15);
        CU_ASSERT_EQUAL(taps[t].step[0], t & 1);
        CU_ASSERT_EQUAL(taps[t].step[1], t >> 1);
    }
    d[0] = pf_interp_constant_1d(-1, 4, 0);  /* normalised to 3: weights (0.25, 0.75) */
    CU_ASSERT_EQUAL(d[0].shift, 3);
    CU_ASSERT_EQUAL(pf_interp_constant_nd(&d[0], 1, taps), 2);
    PF_ASSERT_NEAR(taps[0].weight, 0.25, 1e-15);
    PF_ASSERT_NEAR(taps[1].weight, 0.75, 1e-15);
    CU_ASSERT_EQUAL(pf_interp_constant_nd(&d[1], 2, taps), 2);  /* (1 of 2) x (0 of 4) */
    CU_ASSERT_EQUAL(taps[1].step[0], 1);
    CU_ASSERT_EQUAL(taps[1].step[1], 0);
    CU_ASSERT_EQUAL(pf_interp_constant_nd(d, 0, taps), 1);
    PF_ASSERT_NEAR(taps[0].weight, 1.0, 0);
}

/* ---- randomized cross-check against enumeration ---- */

#define BOX 12  /* every variable lies in [-BOX, BOX], so enumeration is exact */

static uint64_t rng_state;

static int64_t rnd(int64_t lo, int64_t hi)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return lo + (int64_t)((rng_state >> 33) % (uint64_t)(hi - lo + 1));
}

static int64_t nonzero_const(void)
{
    int64_t c = rnd(1, 5);
    return rnd(0, 1) ? c : -c;
}

/* A random linear expression over X and Y of the kinds the encoding accepts. */
static const pf_cexpr *random_expr(pf_arena *a, int depth)
{
    int pick = (int)rnd(0, depth > 0 ? 9 : 2);
    const pf_cexpr *x, *y;
    switch (pick) {
    case 0: return pf_ce_var(a, X);
    case 1: return pf_ce_var(a, Y);
    case 2: return pf_ce_const(a, rnd(-6, 6));
    case 3: return pf_ce_neg(a, random_expr(a, depth - 1));
    default: break;
    }
    /* One draw per statement: the order of evaluation of arguments is unspecified in C, and
     * the sequence must replay from the seed. */
    x = random_expr(a, depth - 1);
    if (pick == 4)
        return pf_ce_mul(a, x, pf_ce_const(a, rnd(-4, 4)));
    if (pick == 5 || pick == 6)
        return pf_ce_bin(a, pick == 5 ? PF_CE_DIV : PF_CE_MOD, x, pf_ce_const(a, nonzero_const()));
    static const pf_cexpr_kind kinds[] = { PF_CE_ADD, PF_CE_SUB, PF_CE_MIN, PF_CE_MAX };
    y = random_expr(a, depth - 1);
    return pf_ce_bin(a, kinds[rnd(0, 3)], x, y);
}

static pf_cfact random_fact(void)
{
    int64_t r = rnd(-3, 8);
    pf_cfact f = pf_cfact_mod(r, rnd(1, 6));
    f.has_lo = f.has_hi = true;
    f.lo = rnd(-BOX, BOX);
    f.hi = rnd(f.lo, BOX);
    return f;
}

static bool fact_holds(const pf_cfact *f, int64_t v)
{
    int64_t d = (v - f->residue) % f->modulus;
    return d == 0 && v >= f->lo && v <= f->hi;
}

static bool mentions(const pf_cexpr *e, int id)
{
    return (e->kind == PF_CE_VAR && e->var == id) || (e->a && mentions(e->a, id)) ||
           (e->b && mentions(e->b, id));
}

/* The set of residues of e over the box as a bit mask (modulus <= 8). Like the prover, only
 * the facts of the variables e mentions count. */
static unsigned brute_residues(const pf_cexpr *e, const pf_cfact *fx, int64_t s)
{
    unsigned mask = 0;
    bool has_x = mentions(e, X), has_y = mentions(e, Y);
    for (int64_t x = has_x ? -BOX : 0; x <= (has_x ? BOX : 0); x++) {
        for (int64_t y = has_y ? -BOX : 0; y <= (has_y ? BOX : 0); y++) {
            int64_t vals[NVARS] = { x, y, 0 }, v;
            if ((has_x && !fact_holds(&fx[X], x)) || (has_y && !fact_holds(&fx[Y], y)))
                continue;
            CU_ASSERT_EQUAL_FATAL(pf_cexpr_eval(e, vals, NVARS, &v), 0);
            mask |= 1u << (((v % s) + s) % s);
        }
    }
    return mask;
}

static bool check_against(const pf_cong_result *r, unsigned mask)
{
    if (mask == 0)
        return r->status == PF_CONG_UNKNOWN;
    if (r->status == PF_CONG_PROVEN)
        return mask == 1u << r->residue;
    return r->status == PF_CONG_NOT_CONSTANT && r->residue != r->other &&
           (mask >> r->residue & 1) && (mask >> r->other & 1);
}

static void test_random_cross_check(void)
{
    fixture f;
    fx_init(&f);
    rng_state = 20240605;
    int agree = 0, proven = 0, refused = 0, n = 400;
    for (int i = 0; i < n; i++) {
        f.fact[X] = random_fact();
        f.fact[Y] = random_fact();
        const pf_cexpr *e = random_expr(&f.arena, (int)rnd(1, 3));
        int64_t s = rnd(2, 8);
        pf_cong_result r = prove(&f, e, s);
        unsigned mask = brute_residues(e, f.fact, s);
        bool ok = check_against(&r, mask);
        agree += ok;
        proven += r.status == PF_CONG_PROVEN;
        refused += r.status == PF_CONG_NOT_CONSTANT;
        if (!ok) {
            pf_strbuf sb;
            pf_sb_init(&sb);
            pf_cexpr_print(&sb, e, NULL, 0);
            fprintf(stderr, "cross-check %d (seed 20240605): %s mod %lld: %s %lld/%lld, "
                    "brute mask 0x%x\n", i, pf_sb_str(&sb), (long long)s,
                    pf_cong_status_name(r.status), (long long)r.residue, (long long)r.other,
                    mask);
            pf_sb_free(&sb);
        }
    }
    CU_ASSERT_EQUAL(agree, n);
    CU_ASSERT(proven > n / 10 && refused > n / 10);  /* both answers exercised */
    fx_free(&f);
}

static void test_many_contexts_do_not_leak(void)
{
    for (int i = 0; i < 20; i++) {
        fixture f;
        fx_init(&f);
        f.fact[X] = pf_cfact_mod(1, 3);
        ASSERT_PROVEN(prove(&f, pf_ce_addc(&f.arena, var(&f, X), i), 3), (1 + i) % 3);
        fx_free(&f);
    }
    pf_congruence_free(NULL);
}

PF_TEST_SUITE(congruence,
              PF_TEST(test_fig3b_reads_on_grid),
              PF_TEST(test_fig3c_half_way_weights),
              PF_TEST(test_hundred_taps_alternate),
              PF_TEST(test_refuses_free_offset),
              PF_TEST(test_refuses_coarser_congruence),
              PF_TEST(test_nonlinear_and_opaque_fall_back),
              PF_TEST(test_division_has_c_semantics),
              PF_TEST(test_min_max_clamps),
              PF_TEST(test_cache_hits),
              PF_TEST(test_z3_giving_up_is_unknown),
              PF_TEST(test_contradictory_facts),
              PF_TEST(test_print_and_eval),
              PF_TEST(test_multilinear_taps),
              PF_TEST(test_random_cross_check),
              PF_TEST(test_many_contexts_do_not_leak))
