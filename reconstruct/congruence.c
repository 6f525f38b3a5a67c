/* The congruence prover: encodes a pf_cexpr and its variables' facts for Z3, decides whether the
 * expression has one residue modulo the grid spacing, and caches the answers.
 *
 * Method, per query: assert each mentioned variable's facts as v = m*k_v + r, lo <= v <= hi
 * (k_v a fresh integer); ask Z3 for one model and read the candidate residue c = e mod s from it;
 * then ask whether e mod s != c is satisfiable. UNSAT proves the residue c; SAT is a second
 * valuation with another residue (NOT_CONSTANT); unknown (timeout, resource limit) is UNKNOWN.
 * Z3's div/mod are Euclidean, so C's truncating division and remainder are encoded with ite on
 * the dividend's sign. Only linear integer arithmetic (with division by constants) reaches Z3:
 * a product of two non-constant terms is UNKNOWN before any solving (see enc_binary).
 *
 * Z3 discipline: a reference-counted context (Z3_mk_context_rc) with the error handler removed, so
 * a Z3 error becomes an error code here (UNKNOWN) instead of Z3's default exit(). Every AST built
 * for a query is pinned in one Z3_ast_vector released when the query ends; the solver is shared
 * and each query runs inside push/pop. */
#include "reconstruct/congruence.h"

#include "base/clock.h"
#include "base/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <z3.h>

/* Z3's resource limit is the one that normally decides when it gives up, so that the answer does
 * not depend on machine load (searches replay); the wall-clock timeout is the safety net. Measured
 * with Z3 4.8.12 on one core: index expressions of a few operators need 150 to 2,000 units and
 * about 1 ms; 30,000 units are 40 to 60 ms of the hardest linear queries we could build. */
#define DEFAULT_TIMEOUT_MS 1000u  /* 100 ms was hit on a loaded machine under ASan */
#define DEFAULT_RLIMIT 30000u

typedef struct cache_entry {
    char *key;        /* NULL: empty slot */
    uint64_t hash;
    pf_cong_result result;
} cache_entry;

struct pf_congruence_ctx {
    Z3_context z3;
    Z3_solver solver;
    Z3_sort int_sort;
    cache_entry *slots;
    size_t cap, count;  /* cap is a power of two; count <= cap * 7 / 10 */
    pf_congruence_stats stats;
};

/* ---- context ---- */

static void set_solver_params(pf_congruence_ctx *ctx, const pf_congruence_options *opt)
{
    Z3_context z = ctx->z3;
    Z3_params p = Z3_mk_params(z);
    Z3_params_inc_ref(z, p);
    unsigned timeout = opt && opt->timeout_ms ? opt->timeout_ms : DEFAULT_TIMEOUT_MS;
    unsigned rlimit = opt && opt->rlimit ? opt->rlimit : DEFAULT_RLIMIT;
    Z3_params_set_uint(z, p, Z3_mk_string_symbol(z, "timeout"), timeout);
    Z3_params_set_uint(z, p, Z3_mk_string_symbol(z, "rlimit"), rlimit);
    Z3_solver_set_params(z, ctx->solver, p);
    Z3_params_dec_ref(z, p);
}

pf_congruence_ctx *pf_congruence_new(const pf_congruence_options *opt)
{
    Z3_config cfg = Z3_mk_config();
    if (!cfg)
        return NULL;
    Z3_set_param_value(cfg, "model", "true");
    Z3_context z = Z3_mk_context_rc(cfg);
    Z3_del_config(cfg);
    if (!z)
        return NULL;
    Z3_set_error_handler(z, NULL);
    pf_congruence_ctx *ctx = pf_xcalloc(1, sizeof *ctx);
    ctx->z3 = z;
    ctx->int_sort = Z3_mk_int_sort(z);
    Z3_inc_ref(z, Z3_sort_to_ast(z, ctx->int_sort));
    ctx->solver = Z3_mk_solver(z);
    Z3_solver_inc_ref(z, ctx->solver);
    set_solver_params(ctx, opt);
    if (Z3_get_error_code(z) != Z3_OK) {
        pf_congruence_free(ctx);
        return NULL;
    }
    return ctx;
}

static void cache_clear(pf_congruence_ctx *ctx)
{
    for (size_t i = 0; i < ctx->cap; i++)
        free(ctx->slots[i].key);
    free(ctx->slots);
    ctx->slots = NULL;
    ctx->cap = ctx->count = 0;
}

void pf_congruence_free(pf_congruence_ctx *ctx)
{
    if (!ctx)
        return;
    Z3_context z = ctx->z3;
    if (ctx->solver)
        Z3_solver_dec_ref(z, ctx->solver);
    if (ctx->int_sort)
        Z3_dec_ref(z, Z3_sort_to_ast(z, ctx->int_sort));
    Z3_del_context(z);
    cache_clear(ctx);
    free(ctx);
}

void pf_congruence_get_stats(const pf_congruence_ctx *ctx, pf_congruence_stats *out)
{
    *out = ctx->stats;
}

const char *pf_cong_status_name(pf_cong_status s)
{
    switch (s) {
    case PF_CONG_PROVEN: return "proven";
    case PF_CONG_NOT_CONSTANT: return "not-constant";
    case PF_CONG_UNKNOWN: return "unknown";
    }
    return "?";
}

/* ---- encoding ---- */

typedef struct query {
    pf_congruence_ctx *ctx;
    Z3_context z3;
    Z3_ast_vector pins;     /* every AST of this query, kept alive until it ends */
    const pf_cfacts *facts;
    int *seen;              /* variable ids whose facts are asserted */
    int nseen, capseen;
    int nopaque;
    const char *fail;       /* why the expression could not be encoded */
} query;

/* Keeps a freshly built AST alive for the rest of the query (its reference count starts at 0). */
static Z3_ast pin(query *q, Z3_ast a)
{
    if (!a || Z3_get_error_code(q->z3) != Z3_OK) {
        q->fail = "z3 error while encoding";
        return NULL;
    }
    Z3_ast_vector_push(q->z3, q->pins, a);
    return a;
}

static Z3_ast num(query *q, int64_t v)
{
    return pin(q, Z3_mk_int64(q->z3, v, q->ctx->int_sort));
}

static Z3_ast named_const(query *q, const char *prefix, int id)
{
    char name[32];
    snprintf(name, sizeof name, "%s%d", prefix, id);
    return pin(q, Z3_mk_const(q->z3, Z3_mk_string_symbol(q->z3, name), q->ctx->int_sort));
}

static Z3_ast add2(query *q, Z3_ast x, Z3_ast y)
{
    Z3_ast args[2] = { x, y };
    return x && y ? pin(q, Z3_mk_add(q->z3, 2, args)) : NULL;
}

static Z3_ast sub2(query *q, Z3_ast x, Z3_ast y)
{
    Z3_ast args[2] = { x, y };
    return x && y ? pin(q, Z3_mk_sub(q->z3, 2, args)) : NULL;
}

static Z3_ast mul2(query *q, Z3_ast x, Z3_ast y)
{
    Z3_ast args[2] = { x, y };
    return x && y ? pin(q, Z3_mk_mul(q->z3, 2, args)) : NULL;
}

static Z3_ast neg(query *q, Z3_ast x)
{
    return x ? pin(q, Z3_mk_unary_minus(q->z3, x)) : NULL;
}

static Z3_ast not1(query *q, Z3_ast x)
{
    return x ? pin(q, Z3_mk_not(q->z3, x)) : NULL;
}

static Z3_ast ite(query *q, Z3_ast c, Z3_ast x, Z3_ast y)
{
    return c && x && y ? pin(q, Z3_mk_ite(q->z3, c, x, y)) : NULL;
}

static Z3_ast cmp(query *q, Z3_ast (*mk)(Z3_context, Z3_ast, Z3_ast), Z3_ast x, Z3_ast y)
{
    return x && y ? pin(q, mk(q->z3, x, y)) : NULL;
}

static void assert_fact(query *q, Z3_ast f)
{
    if (f)
        Z3_solver_assert(q->z3, q->ctx->solver, f);
}

static const pf_cfact *fact_of(const pf_cfacts *facts, int var)
{
    static const pf_cfact any = { .modulus = 1 };
    return facts && var < facts->nvars ? &facts->vars[var] : &any;
}

static int64_t norm_residue(int64_t r, int64_t m)
{
    int64_t x = r % m;
    return x < 0 ? x + m : x;
}

/* v = m*k + r and the bounds, asserted once per variable per query. */
static void assert_var_facts(query *q, Z3_ast v, int id)
{
    const pf_cfact *f = fact_of(q->facts, id);
    PF_ASSERT(f->modulus >= 1);
    if (f->modulus > 1) {
        Z3_ast k = named_const(q, "k!", id);
        Z3_ast rhs = add2(q, mul2(q, num(q, f->modulus), k),
                          num(q, norm_residue(f->residue, f->modulus)));
        assert_fact(q, cmp(q, Z3_mk_eq, v, rhs));
    }
    if (f->has_lo)
        assert_fact(q, cmp(q, Z3_mk_ge, v, num(q, f->lo)));
    if (f->has_hi)
        assert_fact(q, cmp(q, Z3_mk_le, v, num(q, f->hi)));
}

static Z3_ast enc_var(query *q, int id)
{
    Z3_ast v = named_const(q, "v", id);
    for (int i = 0; i < q->nseen; i++)
        if (q->seen[i] == id)
            return v;
    if (q->nseen == q->capseen) {
        q->capseen = q->capseen ? 2 * q->capseen : 8;
        q->seen = pf_xrealloc(q->seen, sizeof *q->seen * (size_t)q->capseen);
    }
    q->seen[q->nseen++] = id;
    if (v)
        assert_var_facts(q, v, id);
    return v;
}

/* C's a / c for a nonzero constant c: truncation is floor for a >= 0 and mirrors it below. */
static Z3_ast tdiv_const(query *q, Z3_ast a, int64_t c)
{
    Z3_ast ac = num(q, c < 0 ? -c : c), na = neg(q, a);
    if (!a || !ac || !na)
        return NULL;
    Z3_ast up = pin(q, Z3_mk_div(q->z3, a, ac));
    Z3_ast down = neg(q, pin(q, Z3_mk_div(q->z3, na, ac)));
    Z3_ast t = ite(q, cmp(q, Z3_mk_ge, a, num(q, 0)), up, down);
    return c < 0 ? neg(q, t) : t;
}

static bool is_closed(const pf_cexpr *e)
{
    switch (e->kind) {
    case PF_CE_CONST: return true;
    case PF_CE_VAR:
    case PF_CE_OPAQUE: return false;
    case PF_CE_NEG: return is_closed(e->a);
    default: return is_closed(e->a) && is_closed(e->b);
    }
}

static Z3_ast enc(query *q, const pf_cexpr *e);

static Z3_ast enc_divmod(query *q, const pf_cexpr *e)
{
    int64_t c;
    if (!is_closed(e->b) || pf_cexpr_eval(e->b, NULL, 0, &c) < 0) {
        q->fail = "divisor is not a constant";
        return NULL;
    }
    if (c == 0 || c == INT64_MIN) {
        q->fail = c == 0 ? "division by zero" : "divisor out of range";
        return NULL;
    }
    Z3_ast a = enc(q, e->a);
    Z3_ast t = tdiv_const(q, a, c);
    if (e->kind == PF_CE_DIV)
        return t;
    return sub2(q, a, mul2(q, num(q, c), t));  /* a % c == a - c * (a / c) in C */
}

static Z3_ast enc_binary(query *q, const pf_cexpr *e)
{
    if (e->kind == PF_CE_DIV || e->kind == PF_CE_MOD)
        return enc_divmod(q, e);
    if (e->kind == PF_CE_MUL && !is_closed(e->a) && !is_closed(e->b)) {
        /* Z3 4.8.12 proves nothing useful here (not even x*x with x even) and its nonlinear
         * arithmetic overruns the timeout by seconds, so products stay outside the encoding. */
        q->fail = "nonlinear (product of two non-constant terms)";
        return NULL;
    }
    Z3_ast x = enc(q, e->a), y = enc(q, e->b);
    switch (e->kind) {
    case PF_CE_ADD: return add2(q, x, y);
    case PF_CE_SUB: return sub2(q, x, y);
    case PF_CE_MUL: return mul2(q, x, y);
    case PF_CE_MIN: return ite(q, cmp(q, Z3_mk_le, x, y), x, y);
    case PF_CE_MAX: return ite(q, cmp(q, Z3_mk_ge, x, y), x, y);
    default: pf_die("bad pf_cexpr kind %d", (int)e->kind);
    }
}

/* The Z3 term of e, or NULL with q->fail set. Closed subtrees fold to numerals first so that
 * e.g. x * (2 + 2) stays linear for Z3. */
static Z3_ast enc(query *q, const pf_cexpr *e)
{
    int64_t c;
    if (q->fail)
        return NULL;
    if (e->kind != PF_CE_CONST && is_closed(e) && pf_cexpr_eval(e, NULL, 0, &c) == 0)
        return num(q, c);
    switch (e->kind) {
    case PF_CE_CONST: return num(q, e->value);
    case PF_CE_VAR: return enc_var(q, e->var);
    case PF_CE_OPAQUE: return named_const(q, "?", q->nopaque++);
    case PF_CE_NEG: return neg(q, enc(q, e->a));
    default: return enc_binary(q, e);
    }
}

/* ---- deciding ---- */

static const char *unknown_reason(query *q)
{
    Z3_string why = Z3_solver_get_reason_unknown(q->z3, q->ctx->solver);
    if (!why)
        return "z3 unknown";
    /* Z3 4.8.12 reports both the timeout and the resource limit as "canceled". */
    if (strstr(why, "timeout") || strstr(why, "canceled") || strstr(why, "resource"))
        return "z3 gave up (timeout or resource limit)";
    return "z3 incomplete";
}

static Z3_lbool check(query *q)
{
    q->ctx->stats.z3_checks++;
    return Z3_solver_check(q->z3, q->ctx->solver);
}

/* The value of term t (t = e mod s, so it fits int64) in the solver's current model. */
static int model_value(query *q, Z3_ast t, int64_t *out)
{
    Z3_model m = Z3_solver_get_model(q->z3, q->ctx->solver);
    if (!m)
        return -1;
    Z3_model_inc_ref(q->z3, m);
    Z3_ast v = NULL;
    bool ok = Z3_model_eval(q->z3, m, t, true, &v) && pin(q, v) &&
              Z3_get_numeral_int64(q->z3, v, out);
    Z3_model_dec_ref(q->z3, m);
    return ok ? 0 : -1;
}

static void set_unknown(pf_cong_result *r, const char *why)
{
    *r = (pf_cong_result){ .status = PF_CONG_UNKNOWN, .reason = why };
}

/* The second check: is there a valuation whose residue is not c1? */
static void decide_unique(query *q, Z3_ast t, int64_t c1, bool opaque, pf_cong_result *r)
{
    int64_t c2;
    assert_fact(q, not1(q, cmp(q, Z3_mk_eq, t, num(q, c1))));
    Z3_lbool second = q->fail ? Z3_L_UNDEF : check(q);
    if (q->fail)
        set_unknown(r, q->fail);
    else if (second == Z3_L_FALSE)
        *r = (pf_cong_result){ .status = PF_CONG_PROVEN, .residue = c1 };
    else if (second == Z3_L_UNDEF)
        set_unknown(r, unknown_reason(q));
    else if (opaque)  /* the second valuation may need an opaque value the program never has */
        set_unknown(r, "residue depends on an opaque value");
    else if (model_value(q, t, &c2) < 0)
        set_unknown(r, "z3 model has no numeral");
    else
        *r = (pf_cong_result){ .status = PF_CONG_NOT_CONSTANT, .residue = c1, .other = c2 };
}

/* Both checks, inside the query's push/pop: a residue from one model, then its uniqueness. */
static void decide(query *q, Z3_ast t, bool opaque, pf_cong_result *r)
{
    int64_t c1;
    Z3_lbool first = check(q);
    if (first == Z3_L_FALSE)
        set_unknown(r, "facts are contradictory (the read never runs)");
    else if (first == Z3_L_UNDEF)
        set_unknown(r, unknown_reason(q));
    else if (model_value(q, t, &c1) < 0)
        set_unknown(r, "z3 model has no numeral");
    else
        decide_unique(q, t, c1, opaque, r);
}

static void prove_z3(pf_congruence_ctx *ctx, const pf_cexpr *e, const pf_cfacts *facts,
                     int64_t modulus, pf_cong_result *r)
{
    Z3_context z = ctx->z3;
    query q = { .ctx = ctx, .z3 = z, .facts = facts };
    q.pins = Z3_mk_ast_vector(z);
    Z3_ast_vector_inc_ref(z, q.pins);
    Z3_solver_push(z, ctx->solver);
    Z3_ast t = enc(&q, e), s = num(&q, modulus);
    Z3_ast tm = t && s ? pin(&q, Z3_mk_mod(z, t, s)) : NULL;
    if (!tm)
        set_unknown(r, q.fail ? q.fail : "z3 error while encoding");
    else
        decide(&q, tm, q.nopaque > 0, r);
    Z3_solver_pop(z, ctx->solver, 1);
    Z3_ast_vector_dec_ref(z, q.pins);
    free(q.seen);
}

/* ---- the proof cache ---- */

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

static void collect_vars(const pf_cexpr *e, int **ids, int *n, int *cap)
{
    if (e->kind == PF_CE_VAR) {
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 8;
            *ids = pf_xrealloc(*ids, sizeof **ids * (size_t)*cap);
        }
        (*ids)[(*n)++] = e->var;
    }
    if (e->a)
        collect_vars(e->a, ids, n, cap);
    if (e->b)
        collect_vars(e->b, ids, n, cap);
}

static void print_fact(pf_strbuf *sb, int id, const pf_cfact *f)
{
    PF_ASSERT(f->modulus >= 1);
    pf_sb_printf(sb, ";v%d", id);
    if (f->modulus > 1)
        pf_sb_printf(sb, "=%" PRId64 "m%" PRId64, norm_residue(f->residue, f->modulus),
                     f->modulus);
    if (f->has_lo)
        pf_sb_printf(sb, ">=%" PRId64, f->lo);
    if (f->has_hi)
        pf_sb_printf(sb, "<=%" PRId64, f->hi);
}

/* The canonical expression, the facts of the variables it mentions in id order, the modulus. */
static void cache_key(pf_strbuf *sb, const pf_cexpr *e, const pf_cfacts *facts, int64_t s)
{
    int *ids = NULL, n = 0, cap = 0;
    pf_cexpr_print(sb, e, NULL, 0);
    collect_vars(e, &ids, &n, &cap);
    if (n)
        qsort(ids, (size_t)n, sizeof *ids, cmp_int);
    for (int i = 0; i < n; i++)
        if (i == 0 || ids[i] != ids[i - 1])
            print_fact(sb, ids[i], fact_of(facts, ids[i]));
    pf_sb_printf(sb, "|%" PRId64, s);
    free(ids);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603u;  /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static cache_entry *cache_slot(cache_entry *slots, size_t cap, const char *key, uint64_t h)
{
    size_t i = (size_t)h & (cap - 1);
    while (slots[i].key && (slots[i].hash != h || strcmp(slots[i].key, key) != 0))
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

static void cache_grow(pf_congruence_ctx *ctx)
{
    size_t cap = ctx->cap ? 2 * ctx->cap : 64;
    cache_entry *slots = pf_xcalloc(cap, sizeof *slots);
    for (size_t i = 0; i < ctx->cap; i++)
        if (ctx->slots[i].key)
            *cache_slot(slots, cap, ctx->slots[i].key, ctx->slots[i].hash) = ctx->slots[i];
    free(ctx->slots);
    ctx->slots = slots;
    ctx->cap = cap;
}

static void cache_put(pf_congruence_ctx *ctx, char *key, uint64_t h, const pf_cong_result *r)
{
    if ((ctx->count + 1) * 10 > ctx->cap * 7)
        cache_grow(ctx);
    cache_entry *slot = cache_slot(ctx->slots, ctx->cap, key, h);
    *slot = (cache_entry){ .key = key, .hash = h, .result = *r };
    ctx->count++;
}

/* ---- entry point ---- */

pf_cong_status pf_congruence_prove(pf_congruence_ctx *ctx, const pf_cexpr *e,
                                   const pf_cfacts *facts, int64_t modulus, pf_cong_result *out)
{
    PF_ASSERT(e && out && modulus >= 1);
    if (modulus == 1) {  /* every integer is ≡ 0 (mod 1): no question for Z3 */
        *out = (pf_cong_result){ .status = PF_CONG_PROVEN };
        return out->status;
    }
    if (!ctx) {  /* pf_congruence_new failed: the generator still works, with general weights */
        set_unknown(out, "no prover");
        return out->status;
    }
    ctx->stats.queries++;
    pf_strbuf key;
    pf_sb_init(&key);
    cache_key(&key, e, facts, modulus);
    uint64_t h = hash_str(pf_sb_str(&key));
    cache_entry *hit = ctx->cap ? cache_slot(ctx->slots, ctx->cap, pf_sb_str(&key), h) : NULL;
    if (hit && hit->key) {
        ctx->stats.hits++;
        *out = hit->result;
        out->cached = true;
        pf_sb_free(&key);
        return out->status;
    }
    ctx->stats.misses++;
    double t0 = pf_now_ms();
    prove_z3(ctx, e, facts, modulus, out);
    ctx->stats.z3_seconds += (pf_now_ms() - t0) / 1e3;
    ctx->stats.unknowns += out->status == PF_CONG_UNKNOWN;
    cache_put(ctx, pf_sb_take(&key), h, out);
    return out->status;
}
