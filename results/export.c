/* perfora export (export.h): the variant read (export_source.c), built once by the driver with
 * the JIT backend, which also writes the C backend's source and the LLVM object of the module
 * it compiles, then the public function (export_api.c) and the build files (export_build.c),
 * all into a temporary sibling directory renamed into place at the end (report_dir.h). */
#include "results/export_internal.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "codegen/compile.h"
#include "codegen/jit.h"
#include "perforate/plan.h"
#include "results/report_dir.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A C identifier that cannot collide with the runtime's names or the files beside it. */
static int check_name(const char *name, pf_error *err)
{
    size_t n = strlen(name);
    bool ok = n > 0 && n <= 48 && (isalpha((unsigned char)name[0]) || name[0] == '_');
    for (size_t i = 0; ok && i < n; i++)
        ok = isalnum((unsigned char)name[i]) || name[i] == '_';
    if (!ok)
        return pf_fail(err, "--name '%s': the library's name must be a C identifier of at most "
                       "48 characters (letters, digits, '_')", name);
    if (strncmp(name, "pf_", 3) == 0 || strcmp(name, "perfora_rt") == 0)
        return pf_fail(err, "--name '%s': names starting with pf_ (and perfora_rt) are the "
                       "runtime's", name);
    return 0;
}

int pf_export_write_text(const char *dir, const char *name, const char *suffix,
                         const pf_strbuf *sb, pf_error *err)
{
    char file[512];
    snprintf(file, sizeof file, "%s%s", name, suffix);
    char *path = pf_path_join(dir, file);
    int rc = pf_write_file_atomic(path, pf_sb_str(sb), sb->len, err);
    free(path);
    return rc;
}

/* The driver builds the variant with the JIT backend; on the way it writes the C source and
 * (unless o->no_object) the object, named after the library. */
static int build_code(const pf_export_options *o, const pf_export_source *s,
                      const pf_export_target *t, const char *tmp, pf_error *err)
{
    pf_plan_target target = pf_host_plan_target();
    pf_plan *plan = pf_plan_parse(s->prog, s->schedule, o->schedule ? o->schedule : "<schedule>",
                                  &target, err);
    if (!plan)
        return pf_fail_prefix(err, "the variant's schedule");
    char c_name[80], o_name[80], obj_file[96];
    snprintf(c_name, sizeof c_name, "%s_pipeline", t->name);
    snprintf(o_name, sizeof o_name, "%s_aot", t->name);
    snprintf(obj_file, sizeof obj_file, "%s_aot.o", t->name);
    char *obj = pf_path_join(tmp, obj_file);
    pf_compile_options co = { .backend = PF_BACKEND_JIT, .emit_c_dir = tmp,
                              .emit_c_name = c_name, .emit_object = t->object ? obj : NULL,
                              .emit_object_name = o_name, .compile_threads = 1 };
    pf_variant *v = pf_variant_build(s->prog, &s->pv, plan, &co, err);
    int rc = v ? 0 : -1;
    pf_variant_free(v);
    pf_plan_free(plan);
    free(obj);
    return rc;
}

static int write_files(const pf_export_source *s, const pf_export_target *t, const char *tmp,
                       pf_error *err)
{
    pf_strbuf sb[7];
    for (int i = 0; i < 7; i++)
        pf_sb_init(&sb[i]);
    int rc = pf_export_api(s, t, &sb[0], &sb[1], err);
    pf_export_cmake(t, &sb[2]);
    pf_export_makefile(t, &sb[3]);
    pf_export_pc(s, t, &sb[4]);
    pf_export_readme(s, t, &sb[5]);
    pf_sb_puts(&sb[6], s->schedule);
    struct { const char *name, *suffix; } f[7] = {
        { t->name, ".h" }, { t->name, ".c" }, { "CMakeLists", ".txt" }, { "Makefile", "" },
        { t->name, ".pc" }, { "README", ".md" }, { t->name, ".sched" } };
    for (int i = 0; rc == 0 && i < 7; i++)
        rc = pf_export_write_text(tmp, f[i].name, f[i].suffix, &sb[i], err);
    for (int i = 0; i < 7; i++)
        pf_sb_free(&sb[i]);
    return rc;
}

/* The target triple, CPU name and features of the object (the host's, as the JIT's). */
static void host_target(pf_export_target *t)
{
    t->triple = pf_jit_host_triple();
    t->cpu = pf_jit_host_cpu();
    t->features = pf_jit_host_features();
}

static int export_into(const pf_export_options *o, const pf_export_source *s,
                       const pf_export_target *t, const char *tmp, pf_error *err)
{
    if (o->note) {
        char line[256];
        snprintf(line, sizeof line, "export: compiling %s (%s)", s->prog->name,
                 t->object ? "C source and LLVM object" : "C source");
        o->note(o->note_ctx, line);
    }
    if (build_code(o, s, t, tmp, err) != 0 || write_files(s, t, tmp, err) != 0)
        return -1;
    return 0;
}

static int export_cuda_into(const pf_export_options *o, const pf_export_source *s,
                            pf_export_target *t, const char *tmp, pf_error *err)
{
    if (o->note) {
        char line[256];
        snprintf(line, sizeof line, "export: compiling %s for CUDA (PTX and host code)",
                 s->prog->name);
        o->note(o->note_ctx, line);
    }
    if (pf_export_cuda(o, s, t, tmp, err) != 0 || write_files(s, t, tmp, err) != 0)
        return -1;
    return 0;
}

int pf_export_write(const pf_export_options *o, pf_export_result *res, pf_error *err)
{
    memset(res, 0, sizeof *res);
    if (!o->out)
        return pf_fail(err, "where to? (--out DIR)");
    pf_export_source s;
    int rc = pf_export_source_load(o, &s, err);
    pf_export_target t = { .object = !o->no_object };
    t.name = o->name ? o->name : s.prog ? s.prog->name : "";
    char *tmp = NULL;
    if (rc == 0)
        rc = check_name(t.name, err);
    if (rc == 0)
        rc = pf_report_dir_check(o->out, &pf_outdir_export, err);
    if (rc == 0 && !(tmp = pf_report_dir_begin(o->out, err)))
        rc = -1;
    if (rc == 0 && s.cuda) {
        t.cuda = true;
        t.object = false;
        t.cpu = t.triple = t.features = "";
        rc = export_cuda_into(o, &s, &t, tmp, err);
    } else if (rc == 0) {
        host_target(&t);
        rc = export_into(o, &s, &t, tmp, err);
    }
    if (rc == 0)
        rc = pf_report_dir_commit(tmp, o->out, &pf_outdir_export, err);
    if (rc != 0)
        pf_report_dir_abort(tmp);
    if (rc == 0) {
        res->dir = pf_xstrdup(o->out);
        res->name = pf_xstrdup(t.name);
        res->object = t.object;
        res->cpu = pf_xstrdup(t.cuda ? t.gpu_arch : t.cpu);
        res->cuda = t.cuda;
    }
    free(tmp);
    pf_export_source_free(&s);
    return rc;
}

void pf_export_result_free(pf_export_result *r)
{
    free(r->dir);
    free(r->name);
    free(r->cpu);
    memset(r, 0, sizeof *r);
}
