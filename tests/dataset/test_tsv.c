/* Reading tab-separated text (dataset/tsv.h): lines with "\n" and "\r\n" ends, a last line
 * without one, field counts beyond the array, and "NAME:LINE:" in errors. */
#include "dataset/tsv.h"

#include "tests/harness/harness.h"

#include <string.h>

static void test_lines_and_fields(void)
{
    pf_error err;
    pf_tsv t;
    pf_tsv_begin(&t, "a\tb\r\n\nc\td\te\tf", "x.tsv", &err);
    char *f[3];
    char *line = pf_tsv_next(&t);
    CU_ASSERT_EQUAL_FATAL(pf_tsv_split(line, f, 3), 2);
    CU_ASSERT(strcmp(f[0], "a") == 0 && strcmp(f[1], "b") == 0);  /* "\r" dropped */
    CU_ASSERT_STRING_EQUAL(pf_tsv_next(&t), "");
    line = pf_tsv_next(&t);
    CU_ASSERT_EQUAL(t.line, 3);
    CU_ASSERT_EQUAL(pf_tsv_split(line, f, 3), 4);  /* counted beyond the array */
    CU_ASSERT_STRING_EQUAL(f[2], "e");
    CU_ASSERT_EQUAL(pf_tsv_fail(&t, "bad %s", "thing"), -1);
    CU_ASSERT_STRING_EQUAL(err.msg, "x.tsv:3: bad thing");
    CU_ASSERT_PTR_NULL(pf_tsv_next(&t));
    pf_tsv_end(&t);
}

PF_TEST_SUITE(dataset_tsv, PF_TEST(test_lines_and_fields))
