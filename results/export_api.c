/* An exported library's public function, NAME.c: the checks of extents and strides the
 * driver's pf_bind makes inside perfora, then the variant's code: the LLVM object when the
 * running CPU has what it was compiled for, else the C backend's source. The header
 * (export_header.c) documents it. */
#include "results/export_internal.h"

#include "base/arena.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* x86 features LLVM may use that GCC's and Clang's (14 and later) __builtin_cpu_supports can
 * test. Not testable by both, and implied by AVX2 on every CPU that has it: F16C, LZCNT,
 * MOVBE. */
static const char *const x86_features[] = {
    "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2", "fma", "bmi", "bmi2",
    "avx512f", "avx512vl", "avx512bw", "avx512dq", "avx512cd", "avx512vbmi", "avx512ifma",
    "avx512vbmi2", "avx512vnni", "avx512bitalg", "avx512vpopcntdq", "avx512bf16", "gfni",
    "vpclmulqdq" };

static bool has_feature(const char *features, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = features; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (p[0] == '+' && strncmp(p + 1, name, n) == 0 && (p[n + 1] == ',' || !p[n + 1]))
            return true;
    return false;
}

/* The features of the list the object was compiled with, " and "-separated into out as
 * __builtin_cpu_supports calls (words: a readable list instead). */
void pf_export_cpu_checks(const pf_export_target *t, bool words, pf_strbuf *out)
{
    int n = 0;
    for (size_t i = 0; i < sizeof x86_features / sizeof *x86_features; i++) {
        if (!has_feature(t->features, x86_features[i]))
            continue;
        if (words)
            pf_sb_printf(out, "%s%s", n ? ", " : "", x86_features[i]);
        else
            pf_sb_printf(out, "%s__builtin_cpu_supports(\"%s\")", n ? " &&\n           " : "",
                         x86_features[i]);
        n++;
    }
    if (!n)
        pf_sb_puts(out, words ? "(none of the checked list)" : "1");
}

void pf_export_upper(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        out[i] = (char)toupper((unsigned char)s[i]);
    out[i] = '\0';
}

/* Does e name a size or a pipeline scalar (anything not fixed at export)? */
static bool uses_run_values(const pf_expr *e)
{
    if (!e)
        return false;
    if (e->kind == PF_E_NAME && e->sym &&
        (e->sym->kind == PF_SYM_SIZE || e->sym->kind == PF_SYM_SCALAR))
        return true;
    if (uses_run_values(e->a) || uses_run_values(e->b) || uses_run_values(e->c))
        return true;
    for (int i = 0; i < e->n_args; i++)
        if (uses_run_values(e->args[i]))
            return true;
    return false;
}

/* "W" when extent d of img is a size name, else its constant (in *value); -1 with err when it
 * is neither (an output extent computed from sizes). */
int pf_export_extent(const pf_export_source *s, const pf_image_decl *img, int d,
                     const char **size, int32_t *value, pf_error *err)
{
    const pf_expr *e = img->extents[d];
    *size = NULL;
    if (e->kind == PF_E_NAME && e->sym && e->sym->kind == PF_SYM_SIZE) {
        *size = e->sym->name;
        return 0;
    }
    pf_value v;
    if (!uses_run_values(e) && pf_eval_const_expr(e, &s->pv, NULL, &v) == 0) {
        *value = v.i;
        return 0;
    }
    return pf_fail(err, "%s: image '%s', dimension %d: an extent computed from the input's "
                   "sizes; an export checks only size names and constants (not yet this)",
                   s->prog->file_name, img->name, d);
}

void pf_export_signature(const pf_export_source *s, const pf_export_target *t, pf_strbuf *out)
{
    pf_sb_printf(out, "int %s(", t->name);
    for (int i = 0; i < s->prog->n_inputs + s->prog->n_outputs; i++) {
        const pf_image_decl *img = s->prog->images[i];
        bool in = i < s->prog->n_inputs;
        pf_sb_printf(out, "%s%sfloat *%s, const int64_t %s_extent[%d], const int64_t "
                     "%s_stride[%d]", i ? ",\n        " : "", in ? "const " : "", img->name,
                     img->name, img->ndims, img->name, img->ndims);
    }
    pf_sb_puts(out, ",\n        int threads)");
}

/* ---- NAME.c ---- */

static void code_choice(const pf_export_target *t, pf_strbuf *c)
{
    char up[80];
    pf_export_upper(t->name, up, sizeof up);
    pf_sb_printf(c, "/* The LLVM object (%s_AOT: the build links %s_aot.o) when this CPU has "
                 "what it was\n * compiled for (%s), else the C source. */\n"
                 "#if defined(%s_AOT) && %s_AOT\nint %s_aot(const pf_buffer *buffers);\n\n"
                 "static int cpu_has_features(void)\n{\n"
                 "#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))\n"
                 "    __builtin_cpu_init();\n    return ", up, t->name, t->cpu, up, up, t->name);
    pf_export_cpu_checks(t, false, c);
    pf_sb_printf(c, ";\n#else\n    return 0;\n#endif\n}\n#endif\n\nint %s_uses_object(void)\n{\n"
                 "#if defined(%s_AOT) && %s_AOT\n    static int use = -1;\n"
                 "    if (use < 0)  /* every thread computes the same value */\n"
                 "        use = cpu_has_features();\n    return use;\n#else\n    return 0;\n"
                 "#endif\n}\n\nstatic int run_code(const pf_buffer *b)\n{\n"
                 "#if defined(%s_AOT) && %s_AOT\n    if (%s_uses_object())\n"
                 "        return %s_aot(b);\n#endif\n    return %s_pipeline(b);\n}\n\n",
                 t->name, up, up, up, up, t->name, t->name, t->name);
}

static const char stop_pool[] =
    "/* Unloading the library (dlclose) must not leave the pool's threads running in its code:\n"
    " * they are stopped first. Linked into a program, this runs at exit and waits for a call\n"
    " * still running on another thread. */\n"
    "#if defined(__GNUC__)\n__attribute__((destructor)) static void stop_pool(void)\n{\n"
    "    pf_rt_pool_stop();\n}\n#endif\n\n";

static const char wrapper_helpers[] =
    "/* Each extent in [1, INT32_MAX], at most 2^31 elements, rows contiguous. */\n"
    "static int check_image(const float *data, const int64_t *extent, const int64_t *stride,\n"
    "                       int ndims)\n{\n"
    "    if (!data || !extent || !stride)\n        return 1;\n"
    "    int64_t n = 1;\n    for (int d = 0; d < ndims; d++) {\n"
    "        if (extent[d] < 1 || extent[d] > INT32_MAX)\n            return 2;\n"
    "        n *= extent[d];\n        if (n > ((int64_t)1 << 31))\n            return 2;\n"
    "    }\n    return stride[0] != 1 ? 3 : 0;\n}\n\n"
    "static pf_buffer view(const float *data, const int64_t *extent, const int64_t *stride,\n"
    "                      int ndims)\n{\n"
    "    pf_buffer b = { (float *)(uintptr_t)data, ndims, { 1, 1, 1, 1 }, { 0, 0, 0, 0 } };\n"
    "    for (int d = 0; d < ndims; d++) {\n        b.extent[d] = extent[d];\n"
    "        b.stride[d] = stride[d];\n    }\n    return b;\n}\n\n";

/* The checks of one image's extents: constants, and size names (bound by their first image,
 * compared in the others). */
static int extent_checks(const pf_export_source *s, const pf_image_decl *img, bool *bound,
                         pf_strbuf *c, pf_error *err)
{
    for (int d = 0; d < img->ndims; d++) {
        const char *size;
        int32_t v = 0;
        if (pf_export_extent(s, img, d, &size, &v, err) != 0)
            return -1;
        int k = -1;
        for (int i = 0; size && i < s->prog->n_sizes; i++)
            if (strcmp(s->prog->sizes[i]->name, size) == 0)
                k = i;
        if (size && k >= 0 && !bound[k]) {
            pf_sb_printf(c, "    const int64_t size_%s = %s_extent[%d];\n", size, img->name, d);
            bound[k] = true;
        } else if (size) {
            pf_sb_printf(c, "    if (%s_extent[%d] != size_%s)\n        return 2;\n", img->name,
                         d, size);
        } else {
            pf_sb_printf(c, "    if (%s_extent[%d] != %d)\n        return 2;\n", img->name, d,
                         (int)v);
        }
    }
    return 0;
}

/* The argument checks of NAME.c (the CPU's and the GPU's): check_image, view, and check_all
 * with the function's own signature. */
int pf_export_checks(const pf_export_source *s, const pf_export_target *t, pf_strbuf *c,
                     pf_error *err)
{
    const pf_program *p = s->prog;
    int n = p->n_inputs + p->n_outputs;
    pf_sb_puts(c, wrapper_helpers);
    pf_sb_puts(c, "static ");
    pf_strbuf sig;
    pf_sb_init(&sig);
    pf_export_signature(s, t, &sig);
    pf_sb_printf(c, "int check_all%s\n{\n    int rc;\n", strchr(pf_sb_str(&sig), '('));
    pf_sb_free(&sig);
    for (int i = 0; i < n; i++) {
        const char *m = p->images[i]->name;
        pf_sb_printf(c, "    if ((rc = check_image(%s, %s_extent, %s_stride, %d)) != 0)\n"
                     "        return rc;\n", m, m, m, p->images[i]->ndims);
    }
    pf_sb_puts(c, "    if (threads < 0)\n        return 1;\n");
    bool *bound = pf_xcalloc((size_t)p->n_sizes + 1, sizeof *bound);
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        rc = extent_checks(s, p->images[i], bound, c, err);
    free(bound);
    pf_sb_puts(c, "    return 0;\n}\n\n");
    return rc;
}

/* The start of the function's body in NAME.c: the checks (returning their code), then
 * `pf_buffer b[]`, the arguments as views. */
void pf_export_views(const pf_export_source *s, pf_strbuf *c)
{
    const pf_program *p = s->prog;
    int n = p->n_inputs + p->n_outputs;
    pf_sb_puts(c, "\n{\n    int rc = check_all(");
    for (int i = 0; i < n; i++) {
        const char *m = p->images[i]->name;
        pf_sb_printf(c, "%s%s, %s_extent, %s_stride", i ? ", " : "", m, m, m);
    }
    pf_sb_printf(c, ", threads);\n    if (rc != 0)\n        return rc;\n    pf_buffer b[%d] = {",
                 n);
    for (int i = 0; i < n; i++) {
        const char *m = p->images[i]->name;
        pf_sb_printf(c, "%s\n        view(%s, %s_extent, %s_stride, %d)", i ? "," : "", m, m, m,
                     p->images[i]->ndims);
    }
    pf_sb_puts(c, "\n    };\n");
}

static int write_source(const pf_export_source *s, const pf_export_target *t, pf_strbuf *c,
                        pf_error *err)
{
    pf_sb_printf(c, "/* %s.c: %s's checks and the choice of its code (generated by perfora %s; "
                 "see %s.h). */\n#include \"%s.h\"\n#include \"%s_pipeline.h\"\n\n"
                 "#include <stdint.h>\n\n", t->name, t->name, PF_VERSION, t->name, t->name,
                 t->name);
    if (t->object)
        code_choice(t, c);
    else
        pf_sb_printf(c, "int %s_uses_object(void)\n{\n    return 0;\n}\n\nstatic int "
                     "run_code(const pf_buffer *b)\n{\n    return %s_pipeline(b);\n}\n\n",
                     t->name, t->name);
    pf_sb_puts(c, stop_pool);
    return pf_export_checks(s, t, c, err);
}

static void write_entry(const pf_export_source *s, const pf_export_target *t, pf_strbuf *c)
{
    pf_export_signature(s, t, c);
    pf_export_views(s, c);
    pf_sb_puts(c, "    pf_rt_set_threads(threads);\n    int status = run_code(b);\n"
               "    return status == 0 ? 0 : status == 2 ? 3 : 4;\n}\n\n");
    pf_export_error_strings(t, c);
}

/* NAME_error_string: a sentence per code (the GPU's two more for a CUDA export). */
void pf_export_error_strings(const pf_export_target *t, pf_strbuf *c)
{
    char up[80];
    pf_export_upper(t->name, up, sizeof up);
    pf_sb_printf(c, "const char *%s_error_string(int code)\n{\n    switch (code) {\n"
                 "    case %s_OK: return \"ok\";\n"
                 "    case %s_ERROR_ARGUMENT: return \"a NULL pointer or a negative thread "
                 "count\";\n"
                 "    case %s_ERROR_EXTENT: return \"an image's extents do not fit the "
                 "pipeline (see %s.h)\";\n"
                 "    case %s_ERROR_STRIDE: return \"a buffer's stride[0] is not 1\";\n"
                 "    case %s_ERROR_MEMORY: return \"memory ran out\";\n",
                 t->name, up, up, up, t->name, up, up);
    if (t->cuda)
        pf_sb_printf(c, "    case %s_ERROR_NO_DEVICE: return \"no CUDA driver or no CUDA device "
                     "(%s_last_error() says which)\";\n"
                     "    case %s_ERROR_CUDA: return \"the CUDA driver failed (%s_last_error() "
                     "has its message)\";\n", up, t->name, up, t->name);
    pf_sb_puts(c, "    default: return \"unknown error code\";\n    }\n}\n");
}

int pf_export_api(const pf_export_source *s, const pf_export_target *t, pf_strbuf *h,
                  pf_strbuf *c, pf_error *err)
{
    if (t->cuda) {
        if (pf_export_cuda_source(s, t, c, err) != 0)
            return -1;
    } else {
        if (write_source(s, t, c, err) != 0)
            return -1;
        write_entry(s, t, c);
    }
    pf_export_header(s, t, h);
    return 0;
}
