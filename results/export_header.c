/* An exported library's header, NAME.h: what the variant is (the schedule, in words, what the
 * search measured, the parameters compiled in, the CPU of the object), perfora's image layout,
 * the error codes and the function's signature. */
#include "results/export_internal.h"

#include <stdio.h>
#include <string.h>

/* Text from the user (schedule comments, paths) inside the header's comment: a "*" + "/" in
 * it would end the comment early. */
static void put_safe(pf_strbuf *h, const char *text, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        pf_sb_putc(h, text[i]);
        if (text[i] == '*' && i + 1 < n && text[i + 1] == '/')
            pf_sb_putc(h, ' ');
    }
}

static void comment_lines(pf_strbuf *h, const char *indent, const char *text)
{
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, "\n");
        if (n > 0 && strncmp(p, "# perfora schedule", 18) != 0) {
            pf_sb_printf(h, " * %s", indent);
            put_safe(h, p, n);
            pf_sb_putc(h, '\n');
        }
        p += n;
        if (*p)
            p++;
    }
}

/* A comma-separated list as comment lines of at most about 90 columns. */
static void wrapped(pf_strbuf *h, const char *list)
{
    int col = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " ");
        if (col == 0 || col + (int)n > 86) {
            pf_sb_puts(h, col ? "\n *   " : " *   ");
            col = 5;
        } else {
            pf_sb_putc(h, ' ');
            col++;
        }
        pf_sb_printf(h, "%.*s", (int)n, p);
        col += (int)n;
        p += n;
        p += strspn(p, " ");
    }
    pf_sb_putc(h, '\n');
}

static void measured(pf_strbuf *h, const char *split, const pf_export_measure *m)
{
    if (!m->have)
        return;
    pf_sb_printf(h, " *   %-8s speedup %.2fx over the exact program (relative time %.3f,\n"
                 " *            quartile means %.3f-%.3f), error %.3g, PSNR %.1f dB, SSIM %.4f,"
                 "\n *            mean of %d image%s\n", split, m->speedup, 1 / m->speedup, m->time_lo,
                 m->time_hi, m->error, m->psnr, m->ssim, m->images, m->images == 1 ? "" : "s");
}

static void param_lines(const pf_export_source *s, pf_strbuf *h)
{
    if (s->prog->n_params == 0) {
        pf_sb_puts(h, " * Parameters: none.\n");
        return;
    }
    pf_sb_puts(h, " * Parameters, fixed when it was exported (perfora compiles them in):\n");
    for (int i = 0; i < s->prog->n_params; i++) {
        const pf_param_decl *p = s->prog->params[i];
        pf_value v = s->pv.values[i];
        if (p->type == PF_T_FLOAT)
            pf_sb_printf(h, " *   %s = %.9g\n", p->name, (double)v.f);
        else if (p->type == PF_T_BOOL)
            pf_sb_printf(h, " *   %s = %s\n", p->name, v.b ? "true" : "false");
        else
            pf_sb_printf(h, " *   %s = %d\n", p->name, (int)v.i);
    }
}

static void describe(const pf_export_source *s, const pf_export_target *t, pf_strbuf *h)
{
    pf_sb_printf(h, "/* %s.h: pipeline '%s', one variant exported by perfora %s.\n", t->name,
                 s->prog->name, PF_VERSION);
    pf_sb_puts(h, " * Program:\n");
    comment_lines(h, "  ", s->prog->file_name);
    pf_sb_puts(h, " * From:\n");
    comment_lines(h, "  ", s->origin);
    pf_sb_printf(h, " * Schedule (perfora's text; also in %s.sched):\n", t->name);
    comment_lines(h, "  ", s->schedule);
    pf_sb_puts(h, " * In words:\n");
    comment_lines(h, "  ", s->genes);
    if (s->train.have || s->test.have) {
        pf_sb_puts(h, " * Measured by the search, on its machine");
        if (s->run_host) {
            pf_sb_puts(h, " (");
            put_safe(h, s->run_host, strlen(s->run_host));
            pf_sb_putc(h, ')');
        }
        pf_sb_printf(h, ", against the exact program\n * %s; error: %s:\n",
                     s->cuda ? "on the same GPU (kernel time, CUDA events)"
                             : "compiled by the same JIT", s->metric);
        measured(h, "training", &s->train);
        measured(h, "test", &s->test);
    } else {
        pf_sb_puts(h, " * Not measured: exported from a schedule, not from a search run.\n");
    }
    param_lines(s, h);
    if (t->cuda) {
        pf_sb_printf(h, " * Code: the PTX of %d CUDA kernel%s for %s (in %s_host.c), which the "
                     "driver compiles\n * for the GPU at the first call (compute capability "
                     "8.0 or newer), and the host code\n * that sizes and launches them "
                     "(%s_host.c, perfora_cuda_rt.c). The CUDA driver\n * (libcuda.so.1) is "
                     "loaded at run time: the library links and loads without it.\n",
                     t->kernels, t->kernels == 1 ? "" : "s", t->gpu_arch, t->name, t->name);
    } else if (t->object) {
        pf_sb_printf(h, " * Code: %s_aot.o, compiled by LLVM ahead of time from the module the "
                     "JIT runs, for the\n * CPU of the machine that exported it: %s (%s).\n"
                     " * %s.c calls it when the running CPU has (checked once):\n", t->name,
                     t->cpu, t->triple, t->name);
        pf_strbuf w;
        pf_sb_init(&w);
        pf_export_cpu_checks(t, true, &w);
        wrapped(h, pf_sb_str(&w));
        pf_sb_free(&w);
        pf_sb_printf(h, " * otherwise the C source %s_pipeline.c (portable, possibly slower).\n",
                     t->name);
    } else {
        pf_sb_printf(h, " * Code: the C source %s_pipeline.c only (exported without an LLVM "
                     "object).\n", t->name);
    }
    pf_sb_puts(h, " */\n");
}

static void image_doc(const pf_export_source *s, const pf_image_decl *img, pf_strbuf *h)
{
    pf_sb_printf(h, " *   %s%s[", img->role == PF_IMAGE_INPUT ? "input  " : "output ", img->name);
    for (int d = 0; d < img->ndims; d++) {
        const char *size;
        int32_t v = 0;
        if (pf_export_extent(s, img, d, &size, &v, NULL) != 0)
            size = "?";
        if (size)
            pf_sb_printf(h, "%s%s", d ? ", " : "", size);
        else
            pf_sb_printf(h, "%s%d", d ? ", " : "", (int)v);
    }
    pf_sb_puts(h, "]\n");
}

void pf_export_header(const pf_export_source *s, const pf_export_target *t, pf_strbuf *h)
{
    char up[80];
    pf_export_upper(t->name, up, sizeof up);
    describe(s, t, h);
    pf_sb_printf(h, "#ifndef %s_H\n#define %s_H\n\n#include <stdint.h>\n\n#ifdef __cplusplus\n"
                 "extern \"C\" {\n#endif\n\n", up, up);
    pf_sb_printf(h, "#if defined(__GNUC__) && __GNUC__ >= 4\n#define %s_API "
                 "__attribute__((visibility(\"default\")))\n#else\n#define %s_API\n#endif\n\n",
                 up, up);
    pf_sb_printf(h, "#define %s_OK 0\n"
                 "#define %s_ERROR_ARGUMENT 1 /* a NULL pointer, or threads < 0 */\n"
                 "#define %s_ERROR_EXTENT 2   /* an extent < 1 or > INT32_MAX, an image of more "
                 "than 2^31\n                                 elements, a size that differs "
                 "between images, or an\n                                 output whose extents "
                 "are not the pipeline's */\n"
                 "#define %s_ERROR_STRIDE 3   /* a stride[0] that is not 1 */\n"
                 "#define %s_ERROR_MEMORY 4   /* memory ran out (or an intermediate image "
                 "exceeds 2^31\n                                 elements) */\n",
                 up, up, up, up, up);
    if (t->cuda)
        pf_sb_printf(h, "#define %s_ERROR_NO_DEVICE 5 /* no CUDA driver, or no CUDA device */\n"
                     "#define %s_ERROR_CUDA 6      /* the driver failed: a launch, a kernel's "
                     "fault (then every\n                                    later call fails: "
                     "the CUDA context is lost), the\n                                    "
                     "device's limits (%s_last_error() says) */\n", up, up, t->name);
    pf_sb_putc(h, '\n');
    pf_sb_printf(h, "/* Runs the variant. Images (perfora's layout, docs/export.md): floats, "
                 "element\n * (i0, i1, i2, i3) at data[i0*stride[0] + i1*stride[1] + ...], "
                 "strides in floats\n * (not bytes), stride[0] = 1; an RGB image of W x H is "
                 "extents {W, H, 3}, dimension 0\n * running along a row. Pixel values as perfora "
                 "reads 8-bit images: 0..1. Extents:\n");
    for (int i = 0; i < s->prog->n_inputs + s->prog->n_outputs; i++)
        image_doc(s, s->prog->images[i], h);
    pf_sb_puts(h, " * Inputs are only read; outputs are wholly written and must not overlap "
               "the inputs.\n");
    if (t->cuda)
        pf_sb_printf(h, " * On the GPU: the inputs are uploaded, the kernels run, the outputs "
                     "are downloaded;\n * device memory is kept for the next call (%s_release "
                     "frees it). Calls from several\n * threads take turns. threads: unused "
                     "(the CPU library's signature), >= 0.\n * Returns %s_OK, or one of the "
                     "errors above (then the outputs are untouched unless\n * "
                     "%s_ERROR_MEMORY or %s_ERROR_CUDA). */\n%s_API ", t->name, up, up, up, up);
    else
        pf_sb_printf(h, " * threads: threads for the parallel loops (0: one per core); it sets "
                     "the library's\n * pool for every later call, so give every concurrent "
                     "caller the same value.\n * Returns %s_OK, or one of the errors above "
                     "(then the outputs are untouched unless\n * %s_ERROR_MEMORY). */\n"
                     "%s_API ", up, up, up);
    pf_export_signature(s, t, h);
    if (t->cuda) {
        pf_sb_puts(h, ";\n\n");
        pf_export_cuda_functions(s, t, h);
        pf_sb_puts(h, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
        return;
    }
    pf_sb_printf(h, ";\n\n/* A sentence for an error code (static storage). */\n"
                 "%s_API const char *%s_error_string(int code);\n\n"
                 "/* Which code this machine runs: 1 the LLVM object, 0 the C source. */\n"
                 "%s_API int %s_uses_object(void);\n\n"
                 "#ifdef __cplusplus\n}\n#endif\n\n#endif\n", up, t->name, up, t->name);
}

