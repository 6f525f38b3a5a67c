/* C11 source emission from the loop IR (see cgen.h). Integer arithmetic goes through small
 * inline helpers so wrapping and safe division are explicit, and float constants are printed
 * as hexadecimal literals so they are exact. */
#include "codegen/cgen.h"

#include "base/arena.h"
#include "base/error.h"
#include "base/fileio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cgen {
    const ir_func *f;
    pf_strbuf *out;
    int indent;
} cgen;

static const char *ctype(ir_type t)
{
    static const char *names[] = { "bool", "int32_t", "int64_t", "float", "double" };
    return names[t];
}

static void cg_expr(cgen *g, const ir_expr *e);

static void cg_const(cgen *g, const ir_expr *e)
{
    switch (e->type) {
    case IR_BOOL: pf_sb_puts(g->out, e->ival ? "true" : "false"); break;
    case IR_I32:
        if (e->ival == INT32_MIN)
            pf_sb_puts(g->out, "INT32_MIN");
        else
            pf_sb_printf(g->out, "%lld", (long long)e->ival);
        break;
    case IR_I64:
        if (e->ival == INT64_MIN)
            pf_sb_puts(g->out, "INT64_MIN");
        else
            pf_sb_printf(g->out, "INT64_C(%lld)", (long long)e->ival);
        break;
    case IR_F32:
        if (e->fval != e->fval)
            pf_sb_puts(g->out, "NAN");
        else if (e->fval == __builtin_inff() || e->fval == -__builtin_inff())
            pf_sb_puts(g->out, e->fval > 0 ? "INFINITY" : "(-INFINITY)");
        else
            pf_sb_printf(g->out, "%af", (double)e->fval);
        break;
    case IR_F64:  /* finite: only lowering makes them (codegen/lower_gauss_gpu.c) */
        pf_sb_printf(g->out, "%a", e->dval);
        break;
    }
}

static void cg_call2(cgen *g, const char *fn, const ir_expr *a, const ir_expr *b)
{
    pf_sb_printf(g->out, "%s(", fn);
    cg_expr(g, a);
    pf_sb_puts(g->out, ", ");
    cg_expr(g, b);
    pf_sb_putc(g->out, ')');
}

static const char *int_helper(ir_op op, ir_type t)
{
    bool wide = t == IR_I64;
    switch (op) {
    case IR_ADD: return wide ? "pf_add64" : "pf_add32";
    case IR_SUB: return wide ? "pf_sub64" : "pf_sub32";
    case IR_MUL: return wide ? "pf_mul64" : "pf_mul32";
    case IR_DIV: return wide ? "pf_div64" : "pf_div32";
    case IR_MOD: return wide ? "pf_mod64" : "pf_mod32";
    case IR_MIN: return wide ? "pf_min64" : "pf_min32";
    case IR_MAX: return wide ? "pf_max64" : "pf_max32";
    default: return NULL;
    }
}

static void cg_bin(cgen *g, const ir_expr *e)
{
    ir_type t = e->a->type;
    if (t == IR_F32 && (e->op == IR_MIN || e->op == IR_MAX)) {
        cg_call2(g, e->op == IR_MIN ? "pf_fmin" : "pf_fmax", e->a, e->b);
        return;
    }
    const char *helper = (t == IR_I32 || t == IR_I64) ? int_helper(e->op, t) : NULL;
    if (helper) {
        cg_call2(g, helper, e->a, e->b);
        return;
    }
    pf_sb_putc(g->out, '(');
    cg_expr(g, e->a);
    pf_sb_printf(g->out, " %s ", ir_op_name(e->op));
    cg_expr(g, e->b);
    pf_sb_putc(g->out, ')');
}

static void cg_cast(cgen *g, const ir_expr *e)
{
    ir_type from = e->a->type, to = e->type;
    const char *fn = NULL;
    if (from == IR_F32 && to == IR_I32)
        fn = "pf_f2i";
    else if (from == IR_F32 && to == IR_I64)
        fn = "(int64_t)pf_f2i";
    else if (to == IR_BOOL)
        fn = "(bool)";
    if (fn) {
        pf_sb_printf(g->out, "%s(", fn);
        cg_expr(g, e->a);
        pf_sb_putc(g->out, ')');
        return;
    }
    pf_sb_printf(g->out, "((%s)", ctype(to));
    cg_expr(g, e->a);
    pf_sb_putc(g->out, ')');
}

static void cg_index(cgen *g, const ir_buffer *b, int d, const ir_expr *i, bool boundary)
{
    if (!boundary) {
        cg_expr(g, i);
        return;
    }
    static const char *fns[] = { "pf_clamp_idx", "pf_mirror_idx", "pf_wrap_idx",
                                 "pf_clamp_idx" };
    pf_sb_printf(g->out, "%s(", fns[b->boundary]);
    cg_expr(g, i);
    pf_sb_printf(g->out, ", %s)", b->extent[d]->name);
}

static void cg_offset(cgen *g, const ir_buffer *b, ir_expr **idx, uint8_t mask)
{
    pf_sb_printf(g->out, "%s[", b->name);
    for (int d = 0; d < b->ndims; d++) {
        if (d)
            pf_sb_puts(g->out, " + ");
        pf_sb_puts(g->out, b->fold[d] ? "(int64_t)((" : "(int64_t)");
        cg_index(g, b, d, idx[d], (mask >> d) & 1);
        if (b->fold[d])  /* a folded window (ir.h): after the boundary mode */
            pf_sb_printf(g->out, ") & %d)", b->fold[d] - 1);
        if (d)
            pf_sb_printf(g->out, " * %s", b->stride[d]->name);
    }
    if (b->window)
        pf_sb_printf(g->out, " - %s_offset", b->name);
    pf_sb_putc(g->out, ']');
}

static void cg_load(cgen *g, const ir_expr *e)
{
    const ir_buffer *b = e->buf;
    if (b->boundary != PF_BOUNDARY_CONSTANT || !e->clamp_mask) {
        cg_offset(g, b, e->args, e->clamp_mask);
        return;
    }
    pf_sb_puts(g->out, "((");
    bool first = true;
    for (int d = 0; d < b->ndims; d++) {
        if (!((e->clamp_mask >> d) & 1))
            continue;
        pf_sb_printf(g->out, "%spf_inside(", first ? "" : " && ");
        cg_expr(g, e->args[d]);
        pf_sb_printf(g->out, ", %s)", b->extent[d]->name);
        first = false;
    }
    pf_sb_puts(g->out, ") ? ");
    cg_offset(g, b, e->args, e->clamp_mask);
    pf_sb_printf(g->out, " : %af)", (double)b->constant_value);
}

static void cg_call(cgen *g, const ir_expr *e)
{
    static const char *math[] = { "expf", "logf", "sqrtf", "sinf", "cosf", "tanf", "powf",
                                  "atan2f", "floorf", "ceilf", "roundf", "fabsf" };
    _Static_assert(sizeof math / sizeof *math == IR_FN_FABS + 1, "a math name per IR_FN");
    if (e->fn == IR_FN_MEDIAN) {
        const ir_var *a = e->args[0]->var;
        pf_sb_printf(g->out, "%s(%s, pf_clamp_count(", a->type == IR_F32 ? "pf_rt_median_f32"
                                                                          : "pf_rt_median_i32",
                     a->name);
        cg_expr(g, e->args[1]);
        pf_sb_printf(g->out, ", 1, %d))", a->array_len);
        return;
    }
    if (e->fn == IR_FN_PERF_HASH) {  /* base/noise.h, in the runtime header */
        pf_sb_puts(g->out, "pf_perf_hash(");
        for (int i = 0; i < e->n_args; i++) {
            if (i)
                pf_sb_puts(g->out, ", ");
            cg_expr(g, e->args[i]);
        }
        pf_sb_putc(g->out, ')');
        return;
    }
    if (e->fn == IR_FN_NOISE) {
        pf_sb_printf(g->out, "pf_rt_noise(%d", e->n_args);
        for (int i = 0; i < 4; i++) {
            pf_sb_puts(g->out, ", ");
            if (i < e->n_args)
                cg_expr(g, e->args[i]);
            else
                pf_sb_putc(g->out, '0');
        }
        pf_sb_putc(g->out, ')');
        return;
    }
    /* (math[] ends before perf_hash: indexing it read past the table, issue 27) */
    pf_sb_printf(g->out, "%s(", e->fn == IR_FN_PERF_HASH ? "pf_rt_perf_hash" : math[e->fn]);
    for (int i = 0; i < e->n_args; i++) {
        if (i)
            pf_sb_puts(g->out, ", ");
        cg_expr(g, e->args[i]);
    }
    pf_sb_putc(g->out, ')');
}

static void cg_expr(cgen *g, const ir_expr *e)
{
    switch (e->kind) {
    case IR_CONST: cg_const(g, e); return;
    case IR_VARREF: pf_sb_puts(g->out, e->var->name); return;
    case IR_BIN: cg_bin(g, e); return;
    case IR_UN:
        if (e->op == IR_NEG && e->type != IR_F32) {
            pf_sb_printf(g->out, "%s(0, ", e->type == IR_I64 ? "pf_sub64" : "pf_sub32");
            cg_expr(g, e->a);
            pf_sb_putc(g->out, ')');
            return;
        }
        pf_sb_printf(g->out, "(%s", e->op == IR_NOT ? "!" : "-");
        cg_expr(g, e->a);
        pf_sb_putc(g->out, ')');
        return;
    case IR_SELECT:
        pf_sb_puts(g->out, "(");
        cg_expr(g, e->a);
        pf_sb_puts(g->out, " ? ");
        cg_expr(g, e->b);
        pf_sb_puts(g->out, " : ");
        cg_expr(g, e->c);
        pf_sb_putc(g->out, ')');
        return;
    case IR_CAST: cg_cast(g, e); return;
    case IR_LOAD: cg_load(g, e); return;
    case IR_ALOAD:
        pf_sb_printf(g->out, "%s[pf_clamp_count(", e->var->name);
        cg_expr(g, e->a);
        pf_sb_printf(g->out, ", 0, %d)]", e->var->array_len - 1);
        return;
    case IR_CALL: cg_call(g, e); return;
    case IR_INTERP: pf_die("cgen: on-demand reads must be expanded before emission");
    }
}

/* ---- statements ---- */

static void line(cgen *g)
{
    pf_sb_indent(g->out, g->indent);
}

static void cg_stmt(cgen *g, const ir_stmt *s);

static void cg_nested(cgen *g, const ir_stmt *s)
{
    pf_sb_puts(g->out, "{\n");
    g->indent++;
    cg_stmt(g, s);
    g->indent--;
    line(g);
    pf_sb_puts(g->out, "}\n");
}

static void cg_store(cgen *g, const ir_stmt *s)
{
    const ir_buffer *b = s->buf;
    if (s->check_mask) {
        pf_sb_puts(g->out, "if (");
        bool first = true;
        for (int d = 0; d < b->ndims; d++) {
            if (!((s->check_mask >> d) & 1))
                continue;
            pf_sb_printf(g->out, "%spf_inside(", first ? "" : " && ");
            cg_expr(g, s->idx[d]);
            pf_sb_printf(g->out, ", %s)", b->extent[d]->name);
            first = false;
        }
        pf_sb_puts(g->out, ") ");
    }
    cg_offset(g, b, s->idx, 0);
    pf_sb_puts(g->out, " = ");
    cg_expr(g, s->value);
    pf_sb_puts(g->out, ";\n");
}

static void cg_for(cgen *g, const ir_stmt *s)
{
    const char *v = s->var->name;
    if (s->text)
        pf_sb_printf(g->out, "/* %s */\n", s->text), line(g);
    bool wide = ir_for_counts_wide(s);  /* counted in 64 bits: v += step must not wrap */
    pf_sb_printf(g->out, "for (%s %s%s = ", wide ? "int64_t" : "int32_t", v, wide ? "_w" : "");
    cg_expr(g, s->lo);
    pf_sb_printf(g->out, ", %s_end = ", v);
    cg_expr(g, s->hi);
    pf_sb_printf(g->out, ", %s_step = ", v);
    cg_expr(g, s->step);
    if (!wide) {
        pf_sb_printf(g->out, "; %s < %s_end; %s += %s_step) ", v, v, v, v);
        cg_nested(g, s->then_s);
        return;
    }
    pf_sb_printf(g->out, "; %s_w < %s_end; %s_w += %s_step) {\n", v, v, v, v);
    g->indent++;
    line(g);
    pf_sb_printf(g->out, "const int32_t %s = (int32_t)%s_w;\n", v, v);
    cg_nested(g, s->then_s);
    g->indent--;
    line(g);
    pf_sb_puts(g->out, "}\n");
}

/* A window buffer's element (origin) is its first: offset = sum origin[d] * stride[d]. */
static void cg_window_offset(cgen *g, const ir_buffer *b)
{
    line(g);
    pf_sb_printf(g->out, "const int64_t %s_offset = 0", b->name);
    for (int d = 0; d < b->ndims; d++)
        pf_sb_printf(g->out, " + (int64_t)%s * %s", b->origin[d]->name, b->stride[d]->name);
    pf_sb_puts(g->out, ";\n");
}

static void cg_alloc(cgen *g, const ir_stmt *s)
{
    const ir_buffer *b = s->buf;
    ir_var *const *held = b->window ? b->size : b->extent;
    pf_sb_puts(g->out, "{\n");
    g->indent++;
    for (int d = 0; s->window && d < b->ndims; d++) {
        line(g);
        pf_sb_printf(g->out, "const int32_t %s = ", b->origin[d]->name);
        cg_expr(g, s->window[2 * d]);
        pf_sb_printf(g->out, ", %s = ", b->size[d]->name);
        cg_expr(g, s->window[2 * d + 1]);
        pf_sb_puts(g->out, ";\n");
    }
    for (int d = 0; d < b->ndims; d++) {
        line(g);
        if (d == 0)
            pf_sb_printf(g->out, "const int64_t %s = 1;\n", b->stride[0]->name);
        else if (d == 1)
            pf_sb_printf(g->out, "const int64_t %s = %s(%s);\n", b->stride[1]->name,
                         b->dense ? "(int64_t)" : "pf_row_stride", held[0]->name);
        else
            pf_sb_printf(g->out, "const int64_t %s = %s * %s;\n", b->stride[d]->name,
                         b->stride[d - 1]->name, held[d - 1]->name);
    }
    if (b->window)
        cg_window_offset(g, b);
    /* Element count as the JIT computes it: the padded row times the other extents. */
    line(g);
    pf_sb_printf(g->out, "const int64_t %s_count = %s(%s)", b->name,
                 b->dense ? "(int64_t)" : "pf_row_stride", held[0]->name);
    for (int d = 1; d < b->ndims; d++)
        pf_sb_printf(g->out, " * %s", held[d]->name);
    pf_sb_puts(g->out, ";\n");
    line(g);
    pf_sb_printf(g->out, "float *restrict %s = pf_rt_alloc(4 * %s_count, %d);\n", b->name, b->name,
                 s->zero ? 1 : 0);
    line(g);
    pf_sb_printf(g->out, "if (!%s) return 1;\n", b->name);
    line(g);
    cg_nested(g, s->then_s);
    line(g);
    pf_sb_printf(g->out, "pf_rt_free(%s);\n", b->name);
    g->indent--;
    line(g);
    pf_sb_puts(g->out, "}\n");
}

/* Declares `pf_buffer NAME` describing b, or its lattice view when view gives (lo, step, n)
 * for the first k dimensions (docs/perforation.md §1). */
static void cg_view(cgen *g, const char *name, const ir_buffer *b, ir_expr *const *view, int k)
{
    line(g);
    pf_sb_printf(g->out, "pf_buffer %s = { %s", name, b->name);
    for (int d = 0; d < k; d++) {
        pf_sb_puts(g->out, " + (int64_t)(");
        cg_expr(g, view[3 * d]);
        pf_sb_printf(g->out, ") * %s", b->stride[d]->name);
    }
    pf_sb_printf(g->out, ", %d, {", b->ndims);
    for (int d = 0; d < 4; d++) {
        pf_sb_puts(g->out, d ? ", " : " ");
        if (d < k)
            cg_expr(g, view[3 * d + 2]);
        else
            pf_sb_puts(g->out, d < b->ndims ? b->extent[d]->name : "1");
    }
    pf_sb_puts(g->out, " }, {");
    for (int d = 0; d < 4; d++) {
        pf_sb_puts(g->out, d ? ", " : " ");
        if (d < k) {
            pf_sb_printf(g->out, "%s * (int64_t)(", b->stride[d]->name);
            cg_expr(g, view[3 * d + 1]);
            pf_sb_putc(g->out, ')');
        } else {
            pf_sb_puts(g->out, d < b->ndims ? b->stride[d]->name : "0");
        }
    }
    pf_sb_puts(g->out, " } };\n");
}

static void cg_args(cgen *g, ir_expr *const *a, int n, int stride)
{
    for (int i = 0; i < n; i++) {
        if (i)
            pf_sb_puts(g->out, ", ");
        cg_expr(g, a[i * stride]);
    }
}

static const char *data_or_null(const ir_stmt *s, int i)
{
    return i < s->n_bufs ? s->bufs[i]->name : "NULL";
}

static void cg_stage_rt(cgen *g, const ir_stmt *s)
{
    int k = s->view_dims;
    ir_expr *const *a = s->args;
    switch (s->rt) {
    case IR_RT_IMPORTANCE_MASK:
        cg_view(g, "ref", s->bufs[0], NULL, 0);
        line(g);
        pf_sb_puts(g->out, "const int64_t lo[2] = { ");
        cg_args(g, a, 2, 2);
        pf_sb_puts(g->out, " }, step[2] = { ");
        cg_args(g, a + 1, 2, 2);
        pf_sb_puts(g->out, " };\n");
        line(g);
        pf_sb_puts(g->out, "if (pf_srt_importance_mask(&ref, lo, step, ");
        cg_args(g, a + 4, 4, 1);
        pf_sb_printf(g->out, ", %s, %s) < 0) return 3;\n", data_or_null(s, 1),
                     data_or_null(s, 2));
        return;
    case IR_RT_ADAPTIVE_COARSE:
        line(g);
        pf_sb_puts(g->out, "if (pf_srt_adaptive_coarse(");
        cg_args(g, a, 3, 1);
        pf_sb_printf(g->out, ", %s) < 0) return 3;\n", data_or_null(s, 0));
        return;
    case IR_RT_ADAPTIVE_REFINE:
        cg_view(g, "view", s->bufs[0], a, k);
        line(g);
        pf_sb_puts(g->out, "if (pf_srt_adaptive_refine(&view, ");
        cg_args(g, a + 3 * k, 2, 1);
        pf_sb_printf(g->out, ", %s, %s) < 0) return 3;\n", data_or_null(s, 1),
                     data_or_null(s, 2));
        return;
    case IR_RT_RECONSTRUCT:
        cg_view(g, "view", s->bufs[0], a, k);
        line(g);
        pf_sb_puts(g->out, "const pf_recon_spec spec = { ");
        cg_args(g, a + 3 * k, 2, 1);
        pf_sb_puts(g->out, ", { ");
        cg_args(g, a + 3 * k + 2, 4, 1);
        pf_sb_puts(g->out, " }, ");
        cg_args(g, a + 3 * k + 6, 3, 1);
        pf_sb_puts(g->out, " };\n");
        line(g);
        pf_sb_printf(g->out, "if (pf_srt_reconstruct(&view, &spec, %s, %s) < 0) return 3;\n",
                     data_or_null(s, 1), data_or_null(s, 2));
        return;
    case IR_RT_COPY_CHANNELS:
        cg_view(g, "view", s->bufs[0], a, k);
        cg_view(g, "ref", s->bufs[1], NULL, 0);
        line(g);
        pf_sb_puts(g->out, "const int64_t lo[4] = { ");
        cg_args(g, a, k, 3);
        pf_sb_puts(g->out, " }, step[4] = { ");
        cg_args(g, a + 1, k, 3);
        pf_sb_puts(g->out, " };\n");
        line(g);
        pf_sb_printf(g->out, "if (pf_srt_copy_channels(&view, %d, lo, step, &ref, ", k);
        cg_expr(g, a[3 * k]);
        pf_sb_puts(g->out, ") < 0) return 3;\n");
        return;
    default:
        pf_die("cgen: runtime call %d", (int)s->rt);
    }
}

static void cg_rtcall(cgen *g, const ir_stmt *s)
{
    pf_sb_puts(g->out, "{\n");
    g->indent++;
    if (s->rt != IR_RT_ZERO_BUFFER) {
        cg_stage_rt(g, s);
    } else {
        const ir_buffer *b = s->bufs[0];
        line(g);
        pf_sb_puts(g->out, "const int64_t e[4] = {");
        for (int d = 0; d < b->ndims; d++)
            pf_sb_printf(g->out, "%s%s", d ? ", " : "", b->extent[d]->name);
        pf_sb_puts(g->out, "}, s[4] = {");
        for (int d = 0; d < b->ndims; d++)
            pf_sb_printf(g->out, "%s%s", d ? ", " : "", b->stride[d]->name);
        pf_sb_puts(g->out, "};\n");
        line(g);
        pf_sb_printf(g->out, "pf_rt_zero_buffer(%s, %d, e, s);\n", b->name, b->ndims);
    }
    g->indent--;
    line(g);
    pf_sb_puts(g->out, "}\n");
}

static void cg_simple(cgen *g, const ir_stmt *s)
{
    const ir_var *v = s->var;
    switch (s->kind) {
    case IR_S_LET:
    case IR_S_DECL:
        pf_sb_printf(g->out, "%s%s %s = ", s->kind == IR_S_LET ? "const " : "", ctype(v->type),
                     v->name);
        break;
    case IR_S_ASSIGN:
        pf_sb_printf(g->out, "%s = ", v->name);
        break;
    case IR_S_ARRAY_DECL:
        pf_sb_printf(g->out, "%s %s[%d] = {0};\n", ctype(v->type), v->name, v->array_len);
        return;
    case IR_S_ARRAY_STORE:
        pf_sb_printf(g->out, "%s[pf_clamp_count(", v->name);
        cg_expr(g, s->index);
        pf_sb_printf(g->out, ", 0, %d)] = ", v->array_len - 1);
        break;
    case IR_S_SORT:
        pf_sb_printf(g->out, "%s(%s, pf_clamp_count(", v->type == IR_F32 ? "pf_rt_sort_f32"
                                                                        : "pf_rt_sort_i32",
                     v->name);
        cg_expr(g, s->value);
        pf_sb_printf(g->out, ", 0, %d));\n", v->array_len);
        return;
    default:
        return;
    }
    cg_expr(g, s->value);
    pf_sb_puts(g->out, ";\n");
}

static void cg_stmt(cgen *g, const ir_stmt *s)
{
    if (s->kind == IR_S_BLOCK) {
        for (int i = 0; i < s->n; i++)
            cg_stmt(g, s->body[i]);
        return;
    }
    line(g);
    switch (s->kind) {
    case IR_S_STORE: cg_store(g, s); return;
    case IR_S_FOR: cg_for(g, s); return;
    case IR_S_IF:
        pf_sb_puts(g->out, "if (");
        cg_expr(g, s->cond);
        pf_sb_puts(g->out, ") ");
        cg_nested(g, s->then_s);
        if (s->else_s) {
            line(g);
            pf_sb_puts(g->out, "else ");
            cg_nested(g, s->else_s);
        }
        return;
    case IR_S_ALLOC: cg_alloc(g, s); return;
    case IR_S_RTCALL: cg_rtcall(g, s); return;
    case IR_S_COMMENT: pf_sb_printf(g->out, "/* %s */\n", s->text); return;
    case IR_S_BARRIER: pf_sb_puts(g->out, "/* barrier: serial thread loops need none */\n"); return;
    default: cg_simple(g, s); return;
    }
}

/* ---- the file ---- */

static const char prelude[] =
    "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n\n"
    "/* The language's integer semantics: wrapping arithmetic, x/0 = 0, x%0 = 0. */\n"
    "static inline int32_t pf_add32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }\n"
    "static inline int32_t pf_sub32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }\n"
    "static inline int32_t pf_mul32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }\n"
    "static inline int32_t pf_div32(int32_t a, int32_t b) { return b == 0 ? 0 : b == -1 ? pf_sub32(0, a) : a / b; }\n"
    "static inline int32_t pf_mod32(int32_t a, int32_t b) { return (b == 0 || b == -1) ? 0 : a % b; }\n"
    "static inline int32_t pf_min32(int32_t a, int32_t b) { return b < a ? b : a; }\n"
    "static inline int32_t pf_max32(int32_t a, int32_t b) { return a < b ? b : a; }\n"
    "static inline int64_t pf_add64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }\n"
    "static inline int64_t pf_sub64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }\n"
    "static inline int64_t pf_mul64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }\n"
    "static inline int64_t pf_div64(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? pf_sub64(0, a) : a / b; }\n"
    "static inline int64_t pf_mod64(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }\n"
    "static inline int64_t pf_min64(int64_t a, int64_t b) { return b < a ? b : a; }\n"
    "static inline int64_t pf_max64(int64_t a, int64_t b) { return a < b ? b : a; }\n"
    "static inline float pf_fmin(float a, float b) { return b < a ? b : a; }\n"
    "static inline float pf_fmax(float a, float b) { return a < b ? b : a; }\n"
    "static inline int32_t pf_f2i(float f) {\n"
    "    if (f != f) return 0;\n"
    "    if (f >= 2147483648.0f) return INT32_MAX;\n"
    "    if (f <= -2147483648.0f) return INT32_MIN;\n"
    "    return (int32_t)f;\n}\n"
    "static inline bool pf_inside(int32_t i, int32_t n) { return (uint32_t)i < (uint32_t)n; }\n"
    "static inline int32_t pf_clamp_count(int32_t i, int32_t lo, int32_t hi) { return i < lo ? lo : i > hi ? hi : i; }\n"
    "static inline int32_t pf_clamp_idx(int32_t i, int32_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }\n"
    "static inline int32_t pf_wrap_idx(int32_t i, int32_t n) { int32_t r = i % n; return r < 0 ? r + n : r; }\n"
    "static inline int32_t pf_mirror_idx(int32_t i, int32_t n) {\n"
    "    if (n <= 1) return 0;\n"
    "    int32_t p = 2 * (n - 1), j = pf_wrap_idx(i, p);\n"
    "    return j < n ? j : p - j;\n}\n"
    "static inline int64_t pf_row_stride(int32_t w)\n"
    "{\n"
    "    int64_t p = ((int64_t)w + 7) & ~(int64_t)7;  /* 32-byte rows; no 4 KiB multiple */\n"
    "    return w < 32 ? w : p % 1024 == 0 ? p + 16 : p;\n"
    "}\n\n";

static void cg_params(cgen *g, const ir_func *f)
{
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++) {
        const ir_buffer *b = f->args[i];
        pf_sb_printf(g->out, "%s%sfloat *restrict %s", i ? ",\n    " : "",
                     b->kind == IR_BUF_INPUT ? "const " : "", b->name);
        for (int d = 0; d < b->ndims; d++)
            if (b->extent_is_param[d])
                pf_sb_printf(g->out, ", int32_t %s", b->extent[d]->name);
        for (int d = 0; d < b->ndims; d++)
            pf_sb_printf(g->out, ", int64_t %s", b->stride[d]->name);
    }
}

static void cg_tables(cgen *g, const ir_func *f)
{
    for (int i = 0; i < f->n_tables; i++) {
        const ir_var *t = f->tables[i];
        pf_sb_printf(g->out, "static const %s %s[%d] = {", ctype(t->type), t->name, t->array_len);
        for (int k = 0; k < t->array_len; k++) {
            if (t->type == IR_F32)
                pf_sb_printf(g->out, "%s%af", k ? ", " : "", (double)((const float *)t->const_init)[k]);
            else
                pf_sb_printf(g->out, "%s%d", k ? ", " : "", ((const int32_t *)t->const_init)[k]);
        }
        pf_sb_puts(g->out, "};\n");
    }
}

static void cg_entry(cgen *g, const ir_func *f, const char *name)
{
    pf_sb_printf(g->out, "\nint %s(const pf_buffer *buffers)\n{\n", name);
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++)
        pf_sb_printf(g->out, "    if (buffers[%d].stride[0] != 1) return 2;\n", i);
    pf_sb_printf(g->out, "    return %s_body(", name);
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++) {
        const ir_buffer *b = f->args[i];
        pf_sb_printf(g->out, "%sbuffers[%d].data", i ? ",\n        " : "", i);
        for (int d = 0; d < b->ndims; d++)
            if (b->extent_is_param[d])
                pf_sb_printf(g->out, ", (int32_t)buffers[%d].extent[%d]", i, d);
        for (int d = 0; d < b->ndims; d++)
            pf_sb_printf(g->out, ", buffers[%d].stride[%d]", i, d);
    }
    pf_sb_puts(g->out, ");\n}\n");
}

void pf_cgen(const ir_func *f, const char *name, pf_strbuf *src, pf_strbuf *hdr)
{
    pf_sb_printf(hdr, "/* Generated by perfora %s: pipeline '%s'. */\n", PF_VERSION, f->name);
    pf_sb_printf(hdr, "#ifndef PF_GENERATED_%s_H\n#define PF_GENERATED_%s_H\n\n", name, name);
    pf_sb_puts(hdr, "#include \"perfora_rt.h\"\n\n");
    pf_sb_printf(hdr, "/* Runs the pipeline on %d input and %d output buffers (inputs first).\n"
                      " * Returns 0 on success, 1 when memory ran out, 2 when a buffer's x stride"
                      " is not 1. */\n", f->n_inputs, f->n_outputs);
    pf_sb_printf(hdr, "int %s(const pf_buffer *buffers);\n\n#endif\n", name);

    cgen g = { f, src, 0 };
    pf_sb_printf(src, "/* Generated by perfora %s from pipeline '%s'.\n"
                      " * Compile as ISO C11 without FP contraction: cc -std=c11 "
                      "-ffp-contract=off. */\n", PF_VERSION, f->name);
    pf_sb_printf(src, "#include \"%s.h\"\n", name);
    pf_sb_puts(src, prelude);
    cg_tables(&g, f);
    pf_sb_printf(src, "static int %s_body(", name);
    cg_params(&g, f);
    pf_sb_puts(src, ")\n{\n");
    g.indent = 1;
    cg_stmt(&g, f->body);
    pf_sb_puts(src, "    return 0;\n}\n");
    cg_entry(&g, f, name);
}

int pf_cgen_write_dir(const ir_func *f, const char *name, const char *dir, pf_error *err)
{
    if (pf_mkdir_p(dir, err) != 0)
        return -1;
    pf_strbuf src, hdr;
    pf_sb_init(&src);
    pf_sb_init(&hdr);
    pf_cgen(f, name, &src, &hdr);
    char file[512];
    int rc = 0;
    struct { const char *suffix; const char *text; size_t len; } files[] = {
        { ".c", pf_sb_str(&src), src.len },
        { ".h", pf_sb_str(&hdr), hdr.len },
    };
    for (int i = 0; i < 2 && rc == 0; i++) {
        snprintf(file, sizeof file, "%s/%s%s", dir, name, files[i].suffix);
        rc = pf_write_file_atomic(file, files[i].text, files[i].len, err);
    }
    const char *rt_h = pf_cgen_runtime_header(), *rt_c = pf_cgen_runtime_source();
    snprintf(file, sizeof file, "%s/perfora_rt.h", dir);
    if (rc == 0)
        rc = pf_write_file_atomic(file, rt_h, strlen(rt_h), err);
    snprintf(file, sizeof file, "%s/perfora_rt.c", dir);
    if (rc == 0)
        rc = pf_write_file_atomic(file, rt_c, strlen(rt_c), err);
    pf_sb_free(&src);
    pf_sb_free(&hdr);
    return rc;
}
