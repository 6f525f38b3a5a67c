/* The builtin table and the exact scalar semantics of the language (see builtins.h). Float
 * builtins call C's binary32 libm functions, so that constant folding gives what a run gives. */
#include "lang/builtins.h"

#include "base/arena.h"
#include "base/error.h"
#include "base/noise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ORDER BUILTINS: one row per pf_builtin, in enum order. */
static const pf_builtin_info builtins[PF_B_COUNT] = {
    {"exp", 1, 1, PF_BK_FLOAT},     {"log", 1, 1, PF_BK_FLOAT},
    {"sqrt", 1, 1, PF_BK_FLOAT},    {"sin", 1, 1, PF_BK_FLOAT},
    {"cos", 1, 1, PF_BK_FLOAT},     {"tan", 1, 1, PF_BK_FLOAT},
    {"pow", 2, 2, PF_BK_FLOAT},     {"atan2", 2, 2, PF_BK_FLOAT},
    {"floor", 1, 1, PF_BK_FLOAT},   {"ceil", 1, 1, PF_BK_FLOAT},
    {"round", 1, 1, PF_BK_FLOAT},
    {"abs", 1, 1, PF_BK_NUMERIC},   {"min", 2, 2, PF_BK_NUMERIC},
    {"max", 2, 2, PF_BK_NUMERIC},   {"clamp", 3, 3, PF_BK_NUMERIC},
    {"noise", 1, 4, PF_BK_NOISE},
    {"median", 2, 2, PF_BK_MEDIAN},
    {"yuv_y", 3, 3, PF_BK_FLOAT},   {"yuv_u", 3, 3, PF_BK_FLOAT},
    {"yuv_v", 3, 3, PF_BK_FLOAT},   {"yuv_r", 3, 3, PF_BK_FLOAT},
    {"yuv_g", 3, 3, PF_BK_FLOAT},   {"yuv_b", 3, 3, PF_BK_FLOAT},
};

const pf_builtin_info *pf_builtin_get(pf_builtin b)
{
    PF_ASSERT((int)b >= 0 && b < PF_B_COUNT);
    return &builtins[b];
}

int pf_builtin_lookup(const char *name)
{
    for (int b = 0; b < PF_B_COUNT; b++)
        if (strcmp(builtins[b].name, name) == 0)
            return b;
    return -1;
}

bool pf_builtin_reserved(const char *name)
{
    return pf_builtin_lookup(name) >= 0 || strcmp(name, "sum") == 0 ||
           strcmp(name, "sort") == 0;
}

const char *pf_builtin_name(pf_builtin b)
{
    return pf_builtin_get(b)->name;
}

/* ---- casts and operators ---- */

int32_t pf_float_to_int(float f)
{
    if (isnan(f))
        return 0;
    if (f >= 2147483648.0f)
        return INT32_MAX;
    if (f < -2147483648.0f)
        return INT32_MIN;
    return (int32_t)f;
}

pf_value pf_eval_cast(pf_type to, pf_type from, pf_value v)
{
    pf_value r = {0};
    if (to == PF_T_FLOAT)
        r.f = from == PF_T_FLOAT ? v.f : from == PF_T_INT ? (float)v.i : (v.b ? 1.0f : 0.0f);
    else if (to == PF_T_INT)
        r.i = from == PF_T_INT ? v.i : from == PF_T_FLOAT ? pf_float_to_int(v.f) : (v.b ? 1 : 0);
    else if (to == PF_T_BOOL)
        r.b = from == PF_T_BOOL ? v.b : from == PF_T_INT ? v.i != 0 : v.f != 0.0f;
    return r;
}

pf_value pf_eval_unary(pf_op op, pf_type t, pf_value a)
{
    pf_value r = {0};
    if (op == PF_OP_NOT)
        r.b = !a.b;
    else if (t == PF_T_FLOAT)
        r.f = -a.f;
    else
        r.i = (int32_t)(0u - (uint32_t)a.i);  /* wraps: -INT_MIN = INT_MIN */
    return r;
}

static int32_t int_div(int32_t a, int32_t b, bool mod)
{
    if (b == 0)
        return 0;
    if (a == INT32_MIN && b == -1)
        return mod ? 0 : INT32_MIN;
    return mod ? a % b : a / b;
}

static pf_value int_binary(pf_op op, int32_t a, int32_t b)
{
    pf_value r = {0};
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
    switch (op) {
    case PF_OP_ADD: r.i = (int32_t)(ua + ub); break;
    case PF_OP_SUB: r.i = (int32_t)(ua - ub); break;
    case PF_OP_MUL: r.i = (int32_t)(ua * ub); break;
    case PF_OP_DIV: r.i = int_div(a, b, false); break;
    case PF_OP_MOD: r.i = int_div(a, b, true); break;
    case PF_OP_LT: r.b = a < b; break;
    case PF_OP_LE: r.b = a <= b; break;
    case PF_OP_GT: r.b = a > b; break;
    case PF_OP_GE: r.b = a >= b; break;
    case PF_OP_EQ: r.b = a == b; break;
    case PF_OP_NE: r.b = a != b; break;
    default: pf_die("int operator %d", (int)op);
    }
    return r;
}

static pf_value float_binary(pf_op op, float a, float b)
{
    pf_value r = {0};
    switch (op) {
    case PF_OP_ADD: r.f = a + b; break;
    case PF_OP_SUB: r.f = a - b; break;
    case PF_OP_MUL: r.f = a * b; break;
    case PF_OP_DIV: r.f = a / b; break;
    case PF_OP_LT: r.b = a < b; break;
    case PF_OP_LE: r.b = a <= b; break;
    case PF_OP_GT: r.b = a > b; break;
    case PF_OP_GE: r.b = a >= b; break;
    case PF_OP_EQ: r.b = a == b; break;
    case PF_OP_NE: r.b = a != b; break;
    default: pf_die("float operator %d", (int)op);
    }
    return r;
}

static pf_value bool_binary(pf_op op, bool a, bool b)
{
    pf_value r = {0};
    switch (op) {
    case PF_OP_AND: r.b = a && b; break;
    case PF_OP_OR: r.b = a || b; break;
    case PF_OP_EQ: r.b = a == b; break;
    case PF_OP_NE: r.b = a != b; break;
    default: pf_die("bool operator %d", (int)op);
    }
    return r;
}

pf_value pf_eval_binary(pf_op op, pf_type t, pf_value a, pf_value b)
{
    if (t == PF_T_BOOL)
        return bool_binary(op, a.b, b.b);
    if (t == PF_T_FLOAT)
        return float_binary(op, a.f, b.f);
    return int_binary(op, a.i, b.i);
}

/* ---- builtins ---- */

/* The paper's YUV (docs/language.md Section 9), evaluated left to right in binary32. */
static float yuv(pf_builtin b, float x, float y, float z)
{
    switch (b) {
    case PF_B_YUV_Y: return 0.299f * x + 0.587f * y + 0.114f * z;
    case PF_B_YUV_U: return -0.14713f * x - 0.28886f * y + 0.436f * z;
    case PF_B_YUV_V: return 0.615f * x - 0.51499f * y - 0.10001f * z;
    case PF_B_YUV_R: return x + 1.13983f * z;
    case PF_B_YUV_G: return x - 0.39465f * y - 0.58060f * z;
    case PF_B_YUV_B: return x + 2.03211f * y;
    default: pf_die("not a yuv builtin");
    }
}

static float float_builtin(pf_builtin b, const pf_value *a)
{
    switch (b) {
    case PF_B_EXP: return expf(a[0].f);
    case PF_B_LOG: return logf(a[0].f);
    case PF_B_SQRT: return sqrtf(a[0].f);
    case PF_B_SIN: return sinf(a[0].f);
    case PF_B_COS: return cosf(a[0].f);
    case PF_B_TAN: return tanf(a[0].f);
    case PF_B_POW: return powf(a[0].f, a[1].f);
    case PF_B_ATAN2: return atan2f(a[0].f, a[1].f);
    case PF_B_FLOOR: return floorf(a[0].f);
    case PF_B_CEIL: return ceilf(a[0].f);
    case PF_B_ROUND: return roundf(a[0].f);
    default: return yuv(b, a[0].f, a[1].f, a[2].f);
    }
}

/* min = b < a ? b : a; max = a < b ? b : a (the order matters for NaN and -0). */
static pf_value numeric_min(pf_type t, pf_value a, pf_value b)
{
    bool lt = t == PF_T_FLOAT ? b.f < a.f : b.i < a.i;
    return lt ? b : a;
}

static pf_value numeric_max(pf_type t, pf_value a, pf_value b)
{
    bool lt = t == PF_T_FLOAT ? a.f < b.f : a.i < b.i;
    return lt ? b : a;
}

static pf_value numeric_abs(pf_type t, pf_value a)
{
    pf_value r = {0};
    if (t == PF_T_FLOAT)
        r.f = fabsf(a.f);
    else
        r.i = a.i < 0 ? (int32_t)(0u - (uint32_t)a.i) : a.i;  /* abs(INT_MIN) = INT_MIN */
    return r;
}

pf_value pf_eval_builtin(pf_builtin b, pf_type t, int n, const pf_value *args)
{
    pf_value r = {0};
    switch (b) {
    case PF_B_ABS: return numeric_abs(t, args[0]);
    case PF_B_MIN: return numeric_min(t, args[0], args[1]);
    case PF_B_MAX: return numeric_max(t, args[0], args[1]);
    case PF_B_CLAMP: return numeric_min(t, numeric_max(t, args[0], args[1]), args[2]);
    case PF_B_NOISE: {
        int32_t ints[4];
        PF_ASSERT(n >= 1 && n <= 4);
        for (int i = 0; i < n; i++)
            ints[i] = args[i].i;
        r.f = pf_noise(n, ints);
        return r;
    }
    case PF_B_MEDIAN: pf_die("median is not a scalar builtin");
    default:
        r.f = float_builtin(b, args);
        return r;
    }
}

/* ---- noise ---- */

float pf_noise(int n, const int32_t *args)
{
    return pf_noise_hash(n, args);
}

/* ---- sort, median, reductions ---- */

static bool value_less(pf_type t, pf_value a, pf_value b)
{
    return t == PF_T_FLOAT ? a.f < b.f : a.i < b.i;
}

static int clamp_count(int n, int lo, int hi)
{
    return n < lo ? lo : n > hi ? hi : n;
}

static void insertion_sort(pf_value *v, int n, pf_type t)
{
    for (int i = 1; i < n; i++) {
        pf_value x = v[i];
        int j = i - 1;
        while (j >= 0 && value_less(t, x, v[j])) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

void pf_sort_values(pf_value *v, int size, int n, pf_type t)
{
    insertion_sort(v, clamp_count(n, 0, size), t);
}

pf_value pf_median_values(const pf_value *v, int size, int n, pf_type t)
{
    PF_ASSERT(size >= 1);
    n = clamp_count(n, 1, size);
    pf_value small[256];
    pf_value *tmp = n <= 256 ? small : pf_xmalloc(sizeof *tmp * (size_t)n);
    memcpy(tmp, v, sizeof *tmp * (size_t)n);
    insertion_sort(tmp, n, t);
    pf_value r = tmp[n / 2];
    if (tmp != small)
        free(tmp);
    return r;
}

pf_value pf_reduce_identity(pf_reduce_op op, pf_type t)
{
    pf_value r = {0};
    if (t == PF_T_FLOAT) {
        r.f = op == PF_REDUCE_MIN ? INFINITY : op == PF_REDUCE_MAX ? -INFINITY : 0.0f;
    } else {
        r.i = op == PF_REDUCE_MIN ? INT32_MAX : op == PF_REDUCE_MAX ? INT32_MIN : 0;
    }
    return r;
}

pf_value pf_reduce_step(pf_reduce_op op, pf_type t, pf_value acc, pf_value v)
{
    if (op == PF_REDUCE_SUM)
        return pf_eval_binary(PF_OP_ADD, t, acc, v);
    if (op == PF_REDUCE_MIN)
        return numeric_min(t, acc, v);
    return numeric_max(t, acc, v);
}
