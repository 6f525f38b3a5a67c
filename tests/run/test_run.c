/* `perfora run` as a library (run/run.h): each --dump stage shows what that stage made and
 * says "(unchanged)" where a stage changed nothing, a run writes its outputs and times them,
 * and bad requests get a clear error; binding images to a program (run/pipeline_io.h). */
#include "codegen/compile.h"
#include "run/pipeline_io.h"
#include "run/run.h"

#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PHOTO "data/images/train/man_made_1_256x192.png"

static pf_run_request blur_request(const char *schedule, const char *dump)
{
    pf_run_request r;
    memset(&r, 0, sizeof r);
    r.program = pf_test_src("apps/blur.pf");
    r.schedule = schedule ? pf_test_src(schedule) : NULL;
    r.dump = dump;
    return r;
}

/* The dump of one stage of blur (schedule: a file under the source tree, or NULL). */
static char *dump_of(const char *schedule, const char *stage)
{
    pf_run_request r = blur_request(schedule, stage);
    pf_run_result out;
    pf_error err;
    int rc = pf_run(&r, &out, &err);
    if (rc)
        fprintf(stderr, "\n    --dump %s: %s\n", stage, err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    char *text = pf_sb_take(&out.dump);
    pf_run_result_free(&out);
    return text;
}

static void test_dump_stages(void)
{
    char *t = dump_of(NULL, "parse");
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "pipeline blur("));
    free(t);
    t = dump_of(NULL, "check");  /* checking adds nothing the printer shows */
    CU_ASSERT_STRING_EQUAL(t, "(unchanged)\n");
    free(t);
    t = dump_of("apps/blur_paper.sched", "plan");
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "stage loop_temp: sample grid 4 1 1, reconstruct on-demand"));
    free(t);
    t = dump_of(NULL, "lower");
    CU_ASSERT(strncmp(t, "func blur(", 10) == 0);
    free(t);
    /* the exact blur has no on-demand read: pass_ondemand changes nothing; the variant has */
    t = dump_of(NULL, "ondemand");
    CU_ASSERT_STRING_EQUAL(t, "(unchanged)\n");
    free(t);
    t = dump_of("apps/blur_paper.sched", "ondemand");
    CU_ASSERT(strncmp(t, "func blur(", 10) == 0);
    free(t);
    t = dump_of(NULL, "llvm");
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "define"));
    free(t);
    t = dump_of(NULL, "narrow");  /* blur has no window array */
    CU_ASSERT_STRING_EQUAL(t, "(unchanged)\n");
    free(t);
    /* every stage of the compiler is known, and the list ends after the last of them (its
     * table once had room for exactly the stages it had) */
    int n = 0;
    const char *const *names = pf_run_stage_names();
    while (names[n])
        n++;
    int compile = 0;
    while (pf_compile_stage_names[compile]) {
        CU_ASSERT(pf_run_stage_known(pf_compile_stage_names[compile]));
        compile++;
    }
    CU_ASSERT_EQUAL(n, 3 + compile);
    CU_ASSERT_STRING_EQUAL(names[n - 1], "llvm");
    CU_ASSERT(!pf_run_stage_known("nonesuch"));
}

static void test_run_writes_and_times(void)
{
    pf_run_request r = blur_request(NULL, NULL);
    r.in[r.n_in++] = pf_test_src(PHOTO);
    r.out[r.n_out++] = pf_test_tmp("blur.png");
    r.times = 3;
    pf_run_result out;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_run(&r, &out, &err), 0);
    CU_ASSERT_EQUAL(out.runs, 3);
    CU_ASSERT(out.min_ms > 0 && out.min_ms <= out.median_ms && out.median_ms <= out.max_ms);
    CU_ASSERT(out.compile_ms > 0);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&out.dump), "");
    pf_run_result_free(&out);
    pf_image *img = pf_image_load(pf_test_tmp("blur.png"), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    CU_ASSERT(img->width == 256 && img->height == 192 && img->channels == 3);
    pf_image_free(img);
}

static void expect_error(pf_run_request *r, const char *want)
{
    pf_run_result out;
    pf_error err;
    CU_ASSERT_EQUAL(pf_run(r, &out, &err), -1);
    if (!strstr(err.msg, want))
        fprintf(stderr, "\n    wanted '%s' in: %s\n", want, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    pf_run_result_free(&out);
}

static void test_bad_requests(void)
{
    pf_run_request r = blur_request(NULL, "assemble");
    expect_error(&r, "no stage 'assemble'");
    r = blur_request(NULL, NULL);
    r.in[r.n_in++] = pf_test_src(PHOTO);
    r.out[r.n_out++] = pf_test_tmp("a.bmp");
    expect_error(&r, "cannot tell the format");
    r.out[0] = pf_test_tmp("a.png");
    r.out[r.n_out++] = pf_test_tmp("b.png");
    expect_error(&r, "takes 1 input(s) and 1 output(s); got 1 --in and 2 --out");
    r = blur_request("apps/blur.pf", "plan");  /* not a schedule */
    expect_error(&r, "blur.pf:");
}

static void test_io_binds_photo(void)
{
    pf_error err;
    pf_program *p = pf_load_program(pf_test_src("apps/blur.pf"), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_image *in[1] = { pf_io_load_input(p, &pv, 0, pf_test_src(PHOTO), &err) };
    CU_ASSERT_PTR_NOT_NULL_FATAL(in[0]);
    pf_io io;
    CU_ASSERT_EQUAL_FATAL(pf_io_bind(&io, p, &pv, in, &err), 0);
    CU_ASSERT(io.n_in == 1 && io.n_out == 1);
    CU_ASSERT(io.buf[1].extent[0] == 256 && io.buf[1].extent[1] == 192);
    CU_ASSERT_EQUAL(io.buf[1].extent[2], 3);
    pf_io_free(&io);
    pf_params_free(&pv);
    pf_program_free(p);
}

PF_TEST_SUITE(run, PF_TEST(test_dump_stages), PF_TEST(test_run_writes_and_times),
              PF_TEST(test_bad_requests), PF_TEST(test_io_binds_photo))
