/* perfora export as a library: the files of a library exported from a program and a schedule
 * and from a synthetic run's frontier (its header carries the schedule and the measured
 * numbers), and bad input (another format, a run a search holds, a variant out of range,
 * foreign files in the output, a missing program or schedule, a bad name, a schedule that does
 * not build): a message naming what and where, and nothing left that looks complete.
 * Building and calling the libraries: tests/export/test_export_build.sh. */
#define _GNU_SOURCE  /* F_OFD_SETLK */
#include "base/fileio.h"
#include "results/export.h"
#include "results/report_internal.h"
#include "tests/harness/harness.h"
#include "tests/results/report_test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define APPS PF_SOURCE_DIR "/apps"

static rt_synthetic run;
static const char *run_dir;

static const char *synthetic(void)
{
    if (!run_dir) {
        run_dir = pf_test_tmp("export-run");
        rt_make_run(run_dir, &run);
    }
    return run_dir;
}

static int export_program(const char *out, const char *sched, bool object, pf_error *err)
{
    pf_export_options o = { .program = APPS "/blur.pf", .schedule = sched, .out = out,
                            .name = "blurx", .no_object = !object };
    pf_export_result res;
    int rc = pf_export_write(&o, &res, err);
    if (rc == 0)
        pf_export_result_free(&res);
    return rc;
}

static void expect_words(int rc, const pf_error *err, const char *words)
{
    CU_ASSERT_EQUAL(rc, -1);
    if (rc == 0 || !strstr(err->msg, words))
        fprintf(stderr, "\nmessage: %s\nwanted: %s\n", rc ? err->msg : "(none)", words);
    CU_ASSERT_PTR_NOT_NULL(rc ? strstr(err->msg, words) : NULL);
}

/* No sibling OUT.partial-* is left behind. */
static bool partial_left(const char *out)
{
    char *copy = pf_xstrdup(out), *slash = strrchr(copy, '/');
    *slash = '\0';
    DIR *d = opendir(copy);
    struct dirent *e;
    bool found = false;
    while (d && (e = readdir(d)))
        found |= strncmp(e->d_name, slash + 1, strlen(slash + 1)) == 0 &&
                 strstr(e->d_name, ".partial-") != NULL;
    if (d)
        closedir(d);
    free(copy);
    return found;
}

static void test_files_of_a_program_export(void)
{
    const char *out = pf_test_tmp("export-paper");
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(export_program(out, APPS "/blur_paper.sched", true, &err), 0);
    const char *files[] = { "blurx.h", "blurx.c", "blurx_pipeline.c", "blurx_pipeline.h",
                            "perfora_rt.c", "perfora_rt.h", "CMakeLists.txt", "Makefile",
                            "blurx.pc", "README.md", "blurx.sched", PF_EXPORT_MANIFEST };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        CU_ASSERT(rt_exists(out, files[i]));
    char *obj = rt_read(out, "blurx_aot.o"), *h = rt_read(out, "blurx.h");
    CU_ASSERT(obj && memcmp(obj, "\177ELF", 4) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(h, "loop_temp grid 4 1 1 reconstruct on-demand linear"));
    CU_ASSERT_PTR_NOT_NULL(strstr(h, "Not measured"));
    CU_ASSERT_PTR_NOT_NULL(strstr(h, "int blurx(const float *in, const int64_t in_extent[3]"));
    char *c = rt_read(out, "blurx.c");
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "if (out_extent[0] != size_W)"));
    CU_ASSERT(!partial_left(out));
    /* Again into "OUT/": the earlier export is replaced, nothing is left inside it. A comment
     * of the schedule holding the end of a C comment does not end the header's. */
    char slash[512];
    snprintf(slash, sizeof slash, "%s/", out);
    const char *sched = pf_test_tmp("comment.sched");
    FILE *f = fopen(sched, "w");
    fputs("# perfora schedule 1\n# a */ in a comment\nloop_temp grid 2 2 1 reconstruct store "
          "linear\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(export_program(slash, sched, false, &err), 0);
    CU_ASSERT(!rt_exists(out, "blurx_aot.o"));
    char *h2 = rt_read(out, "blurx.h");
    CU_ASSERT_PTR_NOT_NULL(strstr(h2, "# a * / in a comment"));
    CU_ASSERT_PTR_EQUAL(strstr(h2, "*/"), strstr(h2, " */\n#ifndef") + 1);
    free(h2);
    DIR *d = opendir(out);
    struct dirent *e;
    while (d && (e = readdir(d)))
        CU_ASSERT_PTR_NULL(strstr(e->d_name, ".partial-"));
    if (d)
        closedir(d);
    free(obj), free(h), free(c);
}

static void test_run_export_carries_the_measurements(void)
{
    const char *dir = synthetic(), *out = pf_test_tmp("export-of-run");
    pf_report_run r;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_report_run_load(&r, dir, &err), 0);
    int k = r.n_front - 1;
    pf_export_options o = { .run = dir, .variant = k, .out = out, .no_object = true };
    pf_export_result res;
    CU_ASSERT_EQUAL_FATAL(pf_export_write(&o, &res, &err), 0);
    CU_ASSERT_STRING_EQUAL(res.name, "blur");
    char *h = rt_read(out, "blur.h"), want[128], *sched = rt_read(out, "blur.sched");
    const pf_eval_record *rec = &r.recs[r.front[k]];
    snprintf(want, sizeof want, "training speedup %.2fx over", 1 / rec->time);
    CU_ASSERT_PTR_NOT_NULL(strstr(h, want));
    snprintf(want, sizeof want, "error %.3g,", rec->error);
    CU_ASSERT_PTR_NOT_NULL(strstr(h, want));
    CU_ASSERT_PTR_NOT_NULL(strstr(h, "test     "));
    CU_ASSERT_STRING_EQUAL(sched, rec->schedule);
    free(h), free(sched);
    pf_export_result_free(&res);
    /* Exporting again replaces the earlier export. */
    o.variant = 0;
    CU_ASSERT_EQUAL(pf_export_write(&o, &res, &err), 0);
    sched = rt_read(out, "blur.sched");
    CU_ASSERT_STRING_EQUAL(sched, r.recs[r.front[0]].schedule);
    free(sched);
    pf_export_result_free(&res);
    /* The fastest within the run's error cap. */
    int fast = -1;
    for (int i = 0; i < r.n_front; i++)
        if (r.recs[r.front[i]].error <= r.cfg.max_error)
            fast = i;
    CU_ASSERT_FATAL(fast > 0);
    o.variant = PF_EXPORT_FASTEST;
    CU_ASSERT_EQUAL(pf_export_write(&o, &res, &err), 0);
    sched = rt_read(out, "blur.sched");
    CU_ASSERT_STRING_EQUAL(sched, r.recs[r.front[fast]].schedule);
    free(sched);
    pf_export_result_free(&res);
    /* Out of range: the message gives the range. */
    o.variant = r.n_front;
    char range[64];
    snprintf(range, sizeof range, "no variant %d: its frontier has variants 0 to %d",
             r.n_front, r.n_front - 1);
    expect_words(pf_export_write(&o, &res, &err), &err, range);
    pf_report_run_free(&r);
}

static void test_run_of_another_format(void)
{
    const char *dir = pf_test_tmp("export-format");
    rt_copy_tree(synthetic(), dir);
    char *cfg = rt_read(dir, "config.json"), *p = strstr(cfg, "\"perfora_run\":1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    p[strlen("\"perfora_run\":")] = '7';
    rt_write(dir, "config.json", cfg);
    free(cfg);
    const char *out = pf_test_tmp("export-format-out");
    pf_export_options o = { .run = dir, .variant = 0, .out = out, .no_object = true };
    pf_export_result res;
    pf_error err;
    expect_words(pf_export_write(&o, &res, &err), &err, "a run directory of format 7");
    CU_ASSERT(access(out, F_OK) != 0);
}

/* A search holds RUN/run.lock (an exclusive fcntl lock) for its whole life. */
static void test_run_being_written(void)
{
    const char *dir = pf_test_tmp("export-locked");
    rt_copy_tree(synthetic(), dir);
    char *lock = rt_path(dir, "run.lock");
    int fd = open(lock, O_RDWR | O_CREAT, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT(write(fd, "pid 1 on host h since t\n", 24) == 24);
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
    CU_ASSERT_EQUAL_FATAL(fcntl(fd, F_OFD_SETLK, &fl), 0);
    const char *out = pf_test_tmp("export-locked-out");
    pf_export_options o = { .run = dir, .variant = 0, .out = out, .no_object = true };
    pf_export_result res;
    pf_error err;
    expect_words(pf_export_write(&o, &res, &err), &err,
                 "is still being written by a search (pid 1 on host h since t holds its lock)");
    CU_ASSERT(access(out, F_OK) != 0);
    close(fd);  /* the search ended: now it exports */
    CU_ASSERT_EQUAL(pf_export_write(&o, &res, &err), 0);
    pf_export_result_free(&res);
    free(lock);
}

static void test_foreign_files_in_the_output(void)
{
    const char *out = pf_test_tmp("export-foreign");
    pf_mkdir_p(out, NULL);
    rt_write(out, "notes.txt", "mine");
    pf_error err;
    expect_words(export_program(out, NULL, false, &err), &err,
                 "holds files that are not a perfora export (no .perfora-export)");
    char *notes = rt_read(out, "notes.txt");
    CU_ASSERT_STRING_EQUAL(notes, "mine");
    CU_ASSERT(!rt_exists(out, "blurx.h"));
    CU_ASSERT(!partial_left(out));
    free(notes);
}

static void test_missing_files_and_bad_names(void)
{
    const char *out = pf_test_tmp("export-missing");
    pf_error err;
    expect_words(export_program(out, "/nonexistent/x.sched", false, &err), &err,
                 "/nonexistent/x.sched");
    pf_export_options o = { .program = "/nonexistent/app.pf", .out = out, .no_object = true };
    pf_export_result res;
    expect_words(pf_export_write(&o, &res, &err), &err, "/nonexistent/app.pf");
    o.program = APPS "/blur.pf";
    o.name = "1blur";
    expect_words(pf_export_write(&o, &res, &err), &err, "must be a C identifier");
    o.name = "pf_blur";
    expect_words(pf_export_write(&o, &res, &err), &err, "are the runtime's");
    CU_ASSERT(access(out, F_OK) != 0);
}

/* A schedule that does not build leaves neither OUT nor a partial directory. */
static void test_failed_build_leaves_nothing(void)
{
    const char *out = pf_test_tmp("export-bad-sched"), *sched = pf_test_tmp("bad.sched");
    FILE *f = fopen(sched, "w");
    fputs("# perfora schedule 1\nno_such_loop grid 2 2 1 reconstruct store linear\n", f);
    fclose(f);
    pf_error err;
    expect_words(export_program(out, sched, true, &err), &err, "no_such_loop");
    CU_ASSERT(access(out, F_OK) != 0);
    CU_ASSERT(!partial_left(out));
}

PF_TEST_SUITE(results_export, PF_TEST(test_files_of_a_program_export),
              PF_TEST(test_run_export_carries_the_measurements),
              PF_TEST(test_run_of_another_format),
              PF_TEST(test_run_being_written),
              PF_TEST(test_foreign_files_in_the_output), PF_TEST(test_missing_files_and_bad_names),
              PF_TEST(test_failed_build_leaves_nothing))
