/* The host side of a GPU-lowered function as C (cgen_cuda.h). The walk follows gpu_host.c
 * statement by statement: what gpu_host.c evaluates when it runs, this writes as C that the
 * exported library runs, so the two make the same launches (tests/results/test_export_cuda.c
 * compares them for every app). */
#include "codegen/cgen_cuda.h"

#include "base/arena.h"
#include "codegen/cgen.h"
#include "codegen/cuda_rt.h"
#include "codegen/gpu_host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hgen {
    const ir_func *f;
    const pf_gpu_module *m;
    pf_strbuf *out;
    int indent;
    const ir_var **known;   /* by var id: declared by the host code so far */
    int n_geo;              /* geometry blocks written (unique names) */
    pf_error *err;
    bool failed;
} hgen;

static const char *ctype(ir_type t)
{
    static const char *names[] = { "bool", "int32_t", "int64_t", "float", "double" };
    return names[t];
}

static int refuse(hgen *g, const char *fmt, const char *what)
{
    if (!g->failed)
        pf_fail(g->err, fmt, what);
    g->failed = true;
    return -1;
}

static void line(hgen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(hgen *g, const char *fmt, ...)
{
    pf_sb_indent(g->out, g->indent);
    va_list ap;
    va_start(ap, fmt);
    pf_sb_vprintf(g->out, fmt, ap);
    va_end(ap);
}

/* An expression the host computes: no image reads (gpu_host.c refuses them too). */
static bool host_expr(const ir_expr *e)
{
    if (!e)
        return true;
    if (e->kind == IR_LOAD || e->kind == IR_ALOAD || e->kind == IR_INTERP)
        return false;
    bool ok = host_expr(e->a) && host_expr(e->b) && host_expr(e->c);
    for (int i = 0; ok && i < e->n_args; i++)
        ok = host_expr(e->args[i]);
    return ok;
}

/* The first variable of e the host has no value for (neither declared by the host code nor
 * one of the n block variables geo), or NULL. */
static const ir_var *unknown_var(const hgen *g, const ir_expr *e, const ir_var **geo, int n)
{
    if (!e)
        return NULL;
    if (e->kind == IR_VARREF && !g->known[e->var->id]) {
        bool block = false;
        for (int k = 0; k < n; k++)
            block = block || geo[k] == e->var;
        if (!block)
            return e->var;
    }
    const ir_var *v = unknown_var(g, e->a, geo, n);
    v = v ? v : unknown_var(g, e->b, geo, n);
    v = v ? v : unknown_var(g, e->c, geo, n);
    for (int i = 0; !v && i < e->n_args; i++)
        v = unknown_var(g, e->args[i], geo, n);
    return v;
}

/* e as C into out, when the host can compute it (gpu_host.c refuses the same). */
static void host_value(hgen *g, const ir_expr *e, const ir_var **geo, int n, pf_strbuf *out)
{
    const ir_var *v = unknown_var(g, e, geo, n);
    if (!host_expr(e))
        refuse(g, "CUDA export: %s", "a read of an image in a scalar the host computes");
    else if (v)
        refuse(g, "CUDA export: %s has no value on the host (a kernel's grid or shared memory "
               "depends on a value a kernel computes)", v->name);
    else
        pf_cgen_expr(e, out);
}

static void expr(hgen *g, const ir_expr *e)
{
    host_value(g, e, NULL, 0, g->out);
}

/* `const T name = (T)(value);` for a value the host knows. */
static void declare(hgen *g, const ir_var *v, const char *value)
{
    line(g, "const %s %s = (%s)(%s);\n", ctype(v->type), v->name, ctype(v->type), value);
    line(g, "(void)%s;\n", v->name);
    g->known[v->id] = v;
}

/* ---- shared memory: gpu_host.c's shared_need as an expression ---- */

/* The floats of shared memory the block needs below s, as a C expression into out ("" when
 * none): a window's size plus its body's; statements in sequence share the space (the most);
 * nothing inside thread loops. */
static void shared_need(hgen *g, const ir_stmt *s, pf_strbuf *out, const ir_var **geo, int n)
{
    if (!s)
        return;
    pf_strbuf a, b;
    switch (s->kind) {
    case IR_S_BLOCK:
    case IR_S_IF:
        pf_sb_init(&a);
        for (int i = 0; i < (s->kind == IR_S_BLOCK ? s->n : 2); i++) {
            const ir_stmt *c = s->kind == IR_S_BLOCK ? s->body[i] : i ? s->else_s : s->then_s;
            pf_sb_init(&b);
            shared_need(g, c, &b, geo, n);
            if (b.len && a.len) {
                char *prev = pf_sb_take(&a);
                pf_sb_init(&a);
                pf_sb_printf(&a, "pf_max64(%s, %s)", prev, pf_sb_str(&b));
                free(prev);
            } else if (b.len) {
                pf_sb_puts(&a, pf_sb_str(&b));
            }
            pf_sb_free(&b);
        }
        pf_sb_puts(out, a.len ? pf_sb_str(&a) : "");
        pf_sb_free(&a);
        return;
    case IR_S_ALLOC:
        if (s->buf->gpu_shared) {
            pf_sb_puts(out, "(INT64_C(1)");
            for (int d = 0; d < s->buf->ndims; d++) {
                pf_sb_puts(out, " * (int64_t)(");
                host_value(g, s->window[2 * d + 1], geo, n, out);
                pf_sb_putc(out, ')');
            }
            pf_sb_init(&a);
            shared_need(g, s->then_s, &a, geo, n);
            pf_sb_printf(out, "%s%s)", a.len ? " + " : "", pf_sb_str(&a));
            pf_sb_free(&a);
            return;
        }
        shared_need(g, s->then_s, out, geo, n);
        return;
    case IR_S_FOR:
        if (s->loop_kind != IR_LOOP_GPU_THREAD)
            shared_need(g, s->then_s, out, geo, n);
        return;
    default:
        return;
    }
}

/* Whether a shared window's size depends on the block (then every block is sized). */
static bool need_uses_blocks(const ir_stmt *s, const ir_var **geo, int n)
{
    if (!s)
        return false;
    if (s->kind == IR_S_ALLOC && s->buf->gpu_shared)
        for (int d = 0; d < s->buf->ndims; d++)
            for (int k = 0; k < n; k++)
                if (ir_expr_uses_var(s->window[2 * d + 1], geo[k]))
                    return true;
    if (s->kind == IR_S_FOR && s->loop_kind == IR_LOOP_GPU_THREAD)
        return false;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        if (need_uses_blocks(s->body[i], geo, n))
            return true;
    return s->kind != IR_S_BLOCK &&
           (need_uses_blocks(s->then_s, geo, n) || need_uses_blocks(s->else_s, geo, n));
}

/* ---- launches ---- */

static int kernel_of(hgen *g, const ir_stmt *s)
{
    for (int k = 0; k < g->m->n_kernels; k++)
        if (g->m->kernels[k].nest == s)
            return k;
    return -1;
}


/* The kernel's host values into its slots p[0 ...], in its parameter order. */
static void fill_slots(hgen *g, const pf_gpu_kernel *k)
{
    static const char *setter[] = { "bool", "i32", "i64", "f32" };
    for (int i = 0; i < k->n_var_params; i++) {
        const ir_var *v = g->known[k->var_params[i]];
        if (k->var_types[i] == IR_F64) {  /* as gpu_device.c: only kernels make f64 values */
            refuse(g, "CUDA export: %s takes an f64 host value", k->name);
            return;
        }
        if (!v) {
            char what[64];
            snprintf(what, sizeof what, "variable %d", k->var_params[i]);
            refuse(g, "CUDA export: a kernel takes %s, which the host has no value for", what);
            return;
        }
        line(g, "pf_crt_slot_%s(&pf_p[%d], %s);\n", setter[k->var_types[i]], i, v->name);
    }
}

/* Trip counts of the block loops (gpu_host.c's trip_count), their limits, and the grid. */
static void grid_counts(hgen *g, const ir_stmt **loops, int n, int id)
{
    for (int k = 0; k < n; k++) {
        line(g, "const int64_t pf_g%d_lo%d = (int64_t)(", id, k);
        expr(g, loops[k]->lo);
        pf_sb_printf(g->out, "), pf_g%d_step%d = (int64_t)(", id, k);
        expr(g, loops[k]->step);
        pf_sb_printf(g->out, "), pf_g%d_hi%d = (int64_t)(", id, k);
        expr(g, loops[k]->hi);
        pf_sb_puts(g->out, ");\n");
        line(g, "const int64_t pf_g%d_n%d = pf_g%d_hi%d <= pf_g%d_lo%d || pf_g%d_step%d < 1 ? 0 : "
             "(pf_g%d_hi%d - pf_g%d_lo%d + pf_g%d_step%d - 1) / pf_g%d_step%d;\n", id, k, id, k, id, k, id, k, id, k,
             id, k, id, k, id, k);
    }
    line(g, "int pf_go%d = 1;\n", id);
    for (int k = 0; k < n; k++) {
        long long most = k == 0 && loops[k]->gpu_dim == 0 ? 2147483647LL : 65535LL;
        line(g, "pf_go%d = pf_go%d && pf_g%d_n%d > 0;\n", id, id, id, k);
        line(g, "if (pf_go%d && pf_g%d_n%d > %lld)\n", id, id, k, most);
        line(g, "    return pf_crt_fail(pf_plan, \"CUDA: too many blocks along %c for this "
             "image\");\n", "xyz"[loops[k]->gpu_dim]);
    }
}

/* The largest shared memory any block needs: every block when a window's size depends on
 * it, as gpu_host.c's shared_bytes (which refuses more than 2^24 blocks). */
static void shared_bytes(hgen *g, const ir_stmt **loops, int n, int id)
{
    const ir_var *geo[4];
    for (int k = 0; k < n; k++)
        geo[k] = loops[k]->var;
    pf_strbuf need;
    pf_sb_init(&need);
    shared_need(g, loops[n - 1]->then_s, &need, geo, n);
    if (!need.len) {
        line(g, "const int64_t pf_most = 0;\n");
    } else if (!need_uses_blocks(loops[n - 1]->then_s, geo, n)) {
        line(g, "const int64_t pf_most = %s;\n", pf_sb_str(&need));
    } else {
        line(g, "int64_t pf_most = 0;\n");
        line(g, "if (pf_g%d_n0", id);
        for (int k = 1; k < n; k++)
            pf_sb_printf(g->out, " * pf_g%d_n%d", id, k);
        pf_sb_puts(g->out, " > (INT64_C(1) << 24))\n");
        line(g, "    return pf_crt_fail(pf_plan, \"CUDA: too many blocks to size their shared "
             "memory\");\n");
        for (int k = 0; k < n; k++) {
            line(g, "for (int64_t pf_b%d = 0; pf_b%d < pf_g%d_n%d; pf_b%d++) {\n", k, k, id, k, k);
            g->indent++;
            line(g, "const %s %s = (%s)(pf_g%d_lo%d + pf_b%d * pf_g%d_step%d);\n", ctype(geo[k]->type),
                 geo[k]->name, ctype(geo[k]->type), id, k, k, id, k);
            line(g, "(void)%s;\n", geo[k]->name);
        }
        line(g, "const int64_t pf_need = %s;\n", pf_sb_str(&need));
        line(g, "pf_most = pf_need > pf_most ? pf_need : pf_most;\n");
        for (int k = 0; k < n; k++) {
            g->indent--;
            line(g, "}\n");
        }
    }
    pf_sb_free(&need);
}

static void launch(hgen *g, const ir_stmt *s)
{
    int k = kernel_of(g, s), id = g->n_geo++;
    if (k < 0) {
        refuse(g, "internal error: CUDA export: %s", "a host statement without a kernel");
        return;
    }
    const pf_gpu_kernel *kn = &g->m->kernels[k];
    line(g, "{   /* %s%s%s */\n", kn->name, kn->stage ? ": " : "", kn->stage ? kn->stage : "");
    g->indent++;
    unsigned block[3] = { 1, 1, 1 };
    const ir_stmt *loops[4];
    int n = s->kind == IR_S_FOR && s->loop_kind == IR_LOOP_GPU_BLOCK
                ? pf_gpu_block_loops(s, loops) : 0;
    if (n > 3) {
        refuse(g, "CUDA export: %s", "more than three block loops in one kernel");
        return;
    }
    if (n > 0) {
        pf_gpu_block_threads(s, block);
        grid_counts(g, loops, n, id);
        line(g, "if (pf_go%d) {\n", id);
        g->indent++;
        shared_bytes(g, loops, n, id);
        line(g, "unsigned pf_grid[3] = { 1, 1, 1 };\n");
        for (int j = 0; j < n; j++)
            line(g, "pf_grid[%d] = (unsigned)pf_g%d_n%d;\n", loops[j]->gpu_dim, id, j);
    } else {
        line(g, "{\n");
        g->indent++;
        line(g, "const int64_t pf_most = 0;\n");
        line(g, "const unsigned pf_grid[3] = { 1, 1, 1 };\n");
    }
    line(g, "const unsigned pf_block[3] = { %u, %u, %u };\n", block[0], block[1], block[2]);
    line(g, "uint64_t *pf_p = pf_crt_launch(pf_plan, %d, pf_grid, pf_block, 4 * pf_most);\n", k);
    line(g, "if (!pf_p)\n");
    line(g, "    return -1;\n");
    if (kn->n_var_params == 0)
        line(g, "(void)pf_p;\n");
    fill_slots(g, kn);
    g->indent--;
    line(g, "}\n");
    g->indent--;
    line(g, "}\n");
}

/* ---- the host's statements ---- */

static void stmt(hgen *g, const ir_stmt *s);

static void nested(hgen *g, const ir_stmt *s)
{
    pf_sb_puts(g->out, "{\n");
    g->indent++;
    stmt(g, s);
    g->indent--;
    line(g, "}\n");
}

/* A whole internal image: dense strides (x innermost), its bytes recorded, then its users. */
static void alloc(hgen *g, const ir_stmt *s)
{
    const ir_buffer *b = s->buf;
    if (b->window) {
        refuse(g, "CUDA export: a window buffer (%s) outside a kernel", b->name);
        return;
    }
    line(g, "{   /* %s */\n", b->name);
    g->indent++;
    char value[256] = "1";
    for (int d = 0; d < b->ndims; d++) {
        declare(g, b->stride[d], value);
        snprintf(value, sizeof value, "(int64_t)%s * (int64_t)%s", b->stride[d]->name,
                 b->extent[d]->name);
    }
    line(g, "if (pf_crt_alloc(pf_plan, %d, 4 * (%s), %s))\n", b->id, value,
         s->zero ? "true" : "false");
    line(g, "    return -1;\n");
    stmt(g, s->then_s);
    g->indent--;
    line(g, "}\n");
}

/* A loop of the host around kernels (gpu_host.c's host_loop: bounds evaluated once). */
static void host_loop(hgen *g, const ir_stmt *s)
{
    const char *v = s->var->name;
    line(g, "{\n");
    g->indent++;
    line(g, "const int64_t %s_lo = (int64_t)(", v);
    expr(g, s->lo);
    pf_sb_printf(g->out, "), %s_hi = (int64_t)(", v);
    expr(g, s->hi);
    pf_sb_printf(g->out, "), %s_step = (int64_t)(", v);
    expr(g, s->step);
    pf_sb_puts(g->out, ");\n");
    line(g, "for (int64_t %s_i = %s_lo; %s_i < %s_hi && %s_step > 0; %s_i += %s_step) {\n", v, v,
         v, v, v, v, v);
    g->indent++;
    char value[128];
    snprintf(value, sizeof value, "%s_i", v);
    declare(g, s->var, value);
    stmt(g, s->then_s);
    g->indent--;
    line(g, "}\n");
    g->indent--;
    line(g, "}\n");
}

static void let(hgen *g, const ir_stmt *s)
{
    const ir_var *v = s->var;
    if (s->kind == IR_S_ASSIGN)
        line(g, "%s = ", v->name);
    else
        line(g, "%s%s %s = ", s->kind == IR_S_LET ? "const " : "", ctype(v->type), v->name);
    expr(g, s->value);
    pf_sb_puts(g->out, ";\n");
    if (s->kind != IR_S_ASSIGN)
        line(g, "(void)%s;\n", v->name);
    g->known[v->id] = v;
}

static void comment(hgen *g, const char *text)
{
    line(g, "/* ");
    for (const char *p = text; *p; p++) {
        pf_sb_putc(g->out, *p == '\n' ? ' ' : *p);
        if (*p == '*' && p[1] == '/')
            pf_sb_putc(g->out, ' ');
    }
    pf_sb_puts(g->out, " */\n");
}

static void stmt(hgen *g, const ir_stmt *s)
{
    if (!s || g->failed)
        return;
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n && !g->failed; i++)
            stmt(g, s->body[i]);
        return;
    case IR_S_LET: case IR_S_DECL: case IR_S_ASSIGN: let(g, s); return;
    case IR_S_IF:
        line(g, "if (");
        expr(g, s->cond);
        pf_sb_puts(g->out, ") ");
        nested(g, s->then_s);
        if (s->else_s) {
            line(g, "else ");
            nested(g, s->else_s);
        }
        return;
    case IR_S_ALLOC: alloc(g, s); return;
    case IR_S_FOR:
        if (s->loop_kind != IR_LOOP_GPU_BLOCK && pf_gpu_has_block_loop(s->then_s))
            host_loop(g, s);
        else
            launch(g, s);
        return;
    case IR_S_STORE: case IR_S_ARRAY_DECL: case IR_S_ARRAY_STORE: case IR_S_SORT:
        launch(g, s);
        return;
    case IR_S_RTCALL:
        if (s->rt == IR_RT_ZERO_BUFFER) {
            line(g, "if (pf_crt_zero(pf_plan, %d))\n", s->bufs[0]->id);
            line(g, "    return -1;\n");
            return;
        }
        if (pf_gpu_rtcall_on_host(s))  /* the CUDA backend runs it on host copies */
            refuse(g, "CUDA export: the runtime call %s runs on the host between the kernels "
                   "(docs/gpu.md §5), which exported libraries do not do yet", ir_rt_name(s->rt));
        else
            refuse(g, "CUDA export: the runtime call %s (reconstruction, masks) does not run "
                   "with CUDA yet", ir_rt_name(s->rt));
        return;
    case IR_S_BARRIER: refuse(g, "CUDA export: %s", "a barrier outside a kernel"); return;
    case IR_S_COMMENT: comment(g, s->text); return;
    }
}

/* ---- the file ---- */

/* The PTX as a C string, a line of it per line of source. */
static void ptx_string(const pf_gpu_module *m, const char *name, pf_strbuf *out)
{
    pf_sb_printf(out, "static const char %s_ptx[] =\n", name);
    const char *p = m->ptx;
    while (*p) {
        pf_sb_puts(out, "    \"");
        for (; *p && *p != '\n'; p++) {
            if (*p == '"' || *p == '\\')
                pf_sb_printf(out, "\\%c", *p);
            else if (*p == '\t')
                pf_sb_puts(out, "\\t");
            else if ((unsigned char)*p < 32 || (unsigned char)*p > 126)
                pf_sb_printf(out, "\\%03o", (unsigned char)*p);
            else
                pf_sb_putc(out, *p);
        }
        if (*p == '\n')
            p++, pf_sb_puts(out, "\\n");
        pf_sb_puts(out, "\"\n");
    }
    pf_sb_puts(out, "    \"\";\n\n");
}

static void kernel_table(const ir_func *f, const pf_gpu_module *m, const char *name,
                         pf_strbuf *out)
{
    for (int k = 0; k < m->n_kernels; k++) {
        const pf_gpu_kernel *kn = &m->kernels[k];
        if (!kn->n_buf_params)
            continue;
        pf_sb_printf(out, "static const int %s_bufs%d[] = {", name, k);
        for (int i = 0; i < kn->n_buf_params; i++) {
            const ir_buffer *b = f->buffers[kn->buf_params[i]];
            pf_sb_printf(out, "%s%d", i ? ", " : " ", b->gpu_shared ? -1 : b->id);
        }
        pf_sb_puts(out, " };\n");
    }
    pf_sb_printf(out, "\nstatic const pf_crt_kernel %s_kernels[] = {\n", name);
    if (!m->n_kernels)  /* C has no empty initializer */
        pf_sb_puts(out, "    { NULL, 0, NULL, 0 },\n");
    for (int k = 0; k < m->n_kernels; k++) {
        const pf_gpu_kernel *kn = &m->kernels[k];
        char bufs[96] = "NULL";
        if (kn->n_buf_params)
            snprintf(bufs, sizeof bufs, "%s_bufs%d", name, k);
        pf_sb_printf(out, "    { \"%s\", %d, %s, %d },\n", kn->name, kn->n_buf_params, bufs,
                     kn->n_var_params);
    }
    pf_sb_printf(out, "};\n\nstatic const int %s_arg_bufs[] = {", name);
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++)
        pf_sb_printf(out, "%s%d", i ? ", " : " ", f->args[i]->id);
    pf_sb_puts(out, " };\n\n");
}

/* The walk's start: the arguments' extents (those taken from the caller) and dense strides. */
static void walk_args(hgen *g)
{
    for (int i = 0; i < g->f->n_inputs + g->f->n_outputs; i++) {
        const ir_buffer *b = g->f->args[i];
        char value[160] = "1";
        for (int d = 0; d < b->ndims; d++) {
            char e[64];
            snprintf(e, sizeof e, "pf_ext[%d][%d]", i, d);
            if (b->extent_is_param[d])
                declare(g, b->extent[d], e);
            declare(g, b->stride[d], value);
            snprintf(value, sizeof value, "(int64_t)%s * pf_ext[%d][%d]", b->stride[d]->name, i, d);
        }
    }
}

int pf_cgen_cuda_host(const ir_func *f, const pf_gpu_module *m, const char *name,
                      pf_strbuf *src, pf_error *err)
{
    if (f->n_inputs + f->n_outputs > 16)
        return pf_fail(err, "CUDA export: %d images (16 at most)", f->n_inputs + f->n_outputs);
    pf_sb_printf(src, "/* %s_host.c: the host side of pipeline '%s' on the GPU: its kernels' "
                 "PTX, and the walk\n * that records a call's launches (grid, block, shared "
                 "memory, parameters) for the\n * arguments' extents (generated by perfora "
                 "%s; codegen/cgen_cuda.c). */\n#include \"perfora_cuda_rt.h\"\n\n", name,
                 f->name, PF_VERSION);
    pf_sb_puts(src, pf_cgen_prelude());
    ptx_string(m, name, src);
    kernel_table(f, m, name, src);
    hgen g = { f, m, src, 1, pf_xcalloc((size_t)f->n_vars + 1, sizeof *g.known), 0, err, false };
    pf_sb_printf(src, "static int %s_walk(pf_crt_plan *pf_plan, const int64_t (*pf_ext)[%d])\n{\n",
                 name, PF_CRT_MAX_DIMS);
    walk_args(&g);
    stmt(&g, f->body);
    pf_sb_puts(src, "    return 0;\n}\n\n");
    pf_sb_printf(src, "const pf_crt_program %s_program = {\n    %s_ptx, %d, %s_kernels, %d, %d, "
                 "%d, %s_arg_bufs, %s_walk\n};\n", name, name, m->n_kernels, name, f->n_buffers,
                 f->n_inputs, f->n_outputs, name, name);
    free(g.known);
    return g.failed ? -1 : 0;
}
