/* The runtime's median (codegen/runtime.c) against a full sort: every window size from 1 to
 * 200 (both selection paths: rank counting up to 128 values, quickselect above), values with
 * many ties, signed zeros, and NaNs (whose order the stable sort defines). */
#include "codegen/runtime.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffff;
}

static void test_median_matches_sort(void)
{
    unsigned seed = 7;
    float v[200], sorted[200];
    for (int n = 1; n <= 200; n++)
        for (int rep = 0; rep < 20; rep++) {
            int levels = rep % 2 ? 5 : 1000;  /* many ties, or few */
            for (int i = 0; i < n; i++) {
                v[i] = (float)(lcg(&seed) % levels) / 7.0f - 3.0f;
                if (v[i] == 0.0f && lcg(&seed) % 2)
                    v[i] = -0.0f;
            }
            memcpy(sorted, v, sizeof v[0] * (size_t)n);
            qsort(sorted, (size_t)n, sizeof sorted[0], cmp_float);
            float m = pf_rt_median_f32(v, n);
            CU_ASSERT(m == sorted[n / 2]);
        }
}

static void test_median_with_nan_and_ints(void)
{
    float v[9] = { 3, NAN, 1, 2, NAN, 5, 4, 0, 6 }, s[9];
    memcpy(s, v, sizeof v);
    pf_rt_sort_f32(s, 9);
    float m = pf_rt_median_f32(v, 9);
    CU_ASSERT(memcmp(&m, &s[4], sizeof m) == 0);
    int32_t w[6] = { 9, -2, 7, 7, 0, 3 };
    CU_ASSERT_EQUAL(pf_rt_median_i32(w, 6), 7);  /* sorted -2 0 3 7 7 9: element 3 */
    CU_ASSERT_EQUAL(pf_rt_median_f32(v, 0), v[0]);  /* n < 1 counts as 1 */
}

PF_TEST_SUITE(codegen_runtime, PF_TEST(test_median_matches_sort),
              PF_TEST(test_median_with_nan_and_ints))
