/* The CUnit harness shared by every suite: a file registers its suite with PF_TEST_SUITE and the
 * harness's main() runs them all (or those named on the command line). */
#ifndef PF_TESTS_HARNESS_H
#define PF_TESTS_HARNESS_H

#include <CUnit/CUnit.h>

void pf_test_add_suite(const char *name, CU_TestInfo *tests);

#define PF_TEST(fn) { #fn, fn }
#define PF_TEST_SUITE(name, ...)                                                   \
    static CU_TestInfo name##_suite_tests[] = { __VA_ARGS__, CU_TEST_INFO_NULL };  \
    __attribute__((constructor)) static void name##_suite_register(void)           \
    {                                                                               \
        pf_test_add_suite(#name, name##_suite_tests);                              \
    }

/* A path inside the source tree; the returned string lives until exit. */
const char *pf_test_src(const char *relative);
/* A fresh empty directory under $TMPDIR for this test process (removed at exit). */
const char *pf_test_tmpdir(void);
/* A path inside pf_test_tmpdir(); the returned string lives until exit. */
const char *pf_test_tmp(const char *name);

#define PF_ASSERT_NEAR(a, b, tol) CU_ASSERT_DOUBLE_EQUAL((a), (b), (tol))

#endif
