/* A short summary of a checked program (pf_describe_program): its signature, stages and named
 * loops, as `perfora check` shows it. */
#include "lang/lang.h"

static void describe_images(const char *label, pf_image_decl *const *imgs, int n,
                            pf_strbuf *out)
{
    pf_sb_printf(out, "  %-8s ", label);
    for (int i = 0; i < n; i++) {
        pf_sb_printf(out, "%s%s[", i ? ", " : "", imgs[i]->name);
        for (int d = 0; d < imgs[i]->ndims; d++) {
            if (d)
                pf_sb_puts(out, ", ");
            pf_print_expr(imgs[i]->extents[d], out);
        }
        pf_sb_putc(out, ']');
    }
    pf_sb_putc(out, '\n');
}

void pf_describe_program(const pf_program *prog, pf_strbuf *out)
{
    pf_sb_printf(out, "pipeline %s\n", prog->name);
    describe_images("inputs:", prog->inputs, prog->n_inputs, out);
    describe_images("outputs:", prog->outputs, prog->n_outputs, out);
    for (int i = 0; i < prog->n_loops; i++) {
        const pf_loop_info *li = &prog->loops[i];
        if (li->kind != PF_LOOP_STAGE) {
            pf_sb_printf(out, "    loop %s (depth %d)\n", li->name, li->depth);
            continue;
        }
        const pf_stage *st = li->stage;
        pf_sb_printf(out, "  stage %s of %s (", st->name, st->image_name);
        for (int v = 0; v < st->n_vars; v++)
            pf_sb_printf(out, "%s%s", v ? ", " : "", st->var_names[v]);
        pf_sb_printf(out, ")%s\n", st->serial ? " serial" : "");
    }
}
