/* Tests for base/: arena, string buffer, bounded reads and atomic writes. */
#include "base/arena.h"
#include "base/fileio.h"
#include "base/resident.h"
#include "base/strbuf.h"
#include "tests/harness/harness.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_arena_zeroed_and_aligned(void)
{
    pf_arena a;
    pf_arena_init(&a);
    for (int i = 1; i < 5000; i += 37) {
        unsigned char *p = pf_arena_alloc(&a, (size_t)i);
        CU_ASSERT(((uintptr_t)p & 15) == 0);
        for (int k = 0; k < i; k++)
            CU_ASSERT_EQUAL_FATAL(p[k], 0);
        memset(p, 0xab, (size_t)i);
    }
    void *big = pf_arena_alloc(&a, 1 << 20);
    CU_ASSERT_PTR_NOT_NULL(big);
    CU_ASSERT_STRING_EQUAL(pf_arena_strndup(&a, "hello world", 5), "hello");
    pf_arena_free(&a);
    CU_ASSERT_PTR_NULL(a.head);
}

static void test_strbuf_printf_grows(void)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb), "");
    for (int i = 0; i < 1000; i++)
        pf_sb_printf(&sb, "%d,", i);
    CU_ASSERT(strncmp(pf_sb_str(&sb), "0,1,2,", 6) == 0);
    CU_ASSERT(sb.len == strlen(sb.data));
    char *s = pf_sb_take(&sb);
    CU_ASSERT_PTR_NULL(sb.data);
    free(s);
}

static void test_atomic_write_and_bounded_read(void)
{
    pf_error err;
    const char *path = pf_test_tmp("a.txt");
    CU_ASSERT_EQUAL(pf_write_file_atomic(path, "abcdef", 6, &err), 0);
    char *buf;
    size_t len;
    CU_ASSERT_EQUAL(pf_read_file(path, 100, &buf, &len, &err), 0);
    CU_ASSERT_EQUAL(len, 6);
    CU_ASSERT_STRING_EQUAL(buf, "abcdef");
    free(buf);
    CU_ASSERT_EQUAL(pf_read_file(path, 3, &buf, &len, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "limit"));
    CU_ASSERT_EQUAL(pf_read_file(pf_test_tmp("missing"), 100, &buf, &len, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing"));
}

static void test_atomic_abort_leaves_nothing(void)
{
    pf_error err;
    pf_atomic_file f;
    const char *path = pf_test_tmp("b.txt");
    CU_ASSERT_EQUAL(pf_atomic_open(&f, path, &err), 0);
    fputs("partial", f.fp);
    pf_atomic_abort(&f);
    struct stat st;
    CU_ASSERT_NOT_EQUAL(stat(path, &st), 0);
}

/* Issue 27: the temporary was OUT.tmp.<pid> opened with fopen, which followed a symlink
 * planted at that name and overwrote its target; its mode was fopen's, not the file's. */
static void test_atomic_write_never_follows_links(void)
{
    pf_error err;
    const char *victim = pf_test_tmp("victim"), *out = pf_test_tmp("out.png");
    CU_ASSERT_EQUAL(pf_write_file_atomic(victim, "keep", 4, &err), 0);
    char planted[1024];
    snprintf(planted, sizeof planted, "%s.tmp.%ld", out, (long)getpid());
    unlink(planted);
    CU_ASSERT_EQUAL(symlink(victim, planted), 0);
    CU_ASSERT_EQUAL(pf_write_file_atomic(out, "new", 3, &err), 0);
    char *buf;
    size_t len;
    CU_ASSERT_EQUAL_FATAL(pf_read_file(victim, 100, &buf, &len, &err), 0);
    CU_ASSERT_STRING_EQUAL(buf, "keep");
    free(buf);
    unlink(planted);
    /* the replaced file's mode is kept */
    CU_ASSERT_EQUAL(chmod(out, 0600), 0);
    CU_ASSERT_EQUAL(pf_write_file_atomic(out, "newer", 5, &err), 0);
    struct stat st;
    CU_ASSERT(stat(out, &st) == 0 && (st.st_mode & 0777) == 0600);
    /* an output path that is a symlink: the link is replaced, its target left alone */
    const char *link = pf_test_tmp("link.png");
    unlink(link);
    CU_ASSERT_EQUAL(symlink(victim, link), 0);
    CU_ASSERT_EQUAL(pf_write_file_atomic(link, "via", 3, &err), 0);
    CU_ASSERT(lstat(link, &st) == 0 && S_ISREG(st.st_mode));
    CU_ASSERT_EQUAL_FATAL(pf_read_file(victim, 100, &buf, &len, &err), 0);
    CU_ASSERT_STRING_EQUAL(buf, "keep");
    free(buf);
    /* a directory read as a file says so (it said "read error") */
    CU_ASSERT_EQUAL(pf_read_file(pf_test_tmp(""), 100, &buf, &len, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is a directory"));
}

static void test_mkdir_p(void)
{
    pf_error err;
    const char *dir = pf_test_tmp("x/y/z");
    CU_ASSERT_EQUAL(pf_mkdir_p(dir, &err), 0);
    CU_ASSERT_EQUAL(pf_mkdir_p(dir, &err), 0);
    struct stat st;
    CU_ASSERT(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    pf_write_file_atomic(pf_test_tmp("file"), "x", 1, &err);
    CU_ASSERT_EQUAL(pf_mkdir_p(pf_test_tmp("file/sub"), &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a directory"));
}

/* The executable's code is found and measured, dropping it leaves it runnable, and calling
 * code maps some of it back. (tests/codegen/test_jit.c checks the drop on LLVM's pages.) */
static void test_resident_code(void)
{
    long long before = pf_resident_code_bytes();
    CU_ASSERT(before > 0);
    CU_ASSERT(pf_drop_code_pages() > 0);
    pf_error err;
    CU_ASSERT_EQUAL(pf_mkdir_p(pf_test_tmp("after_drop"), &err), 0);
    long long after = pf_resident_code_bytes();
    CU_ASSERT(after > 0 && after <= before);
}

PF_TEST_SUITE(base,
              PF_TEST(test_arena_zeroed_and_aligned),
              PF_TEST(test_strbuf_printf_grows),
              PF_TEST(test_atomic_write_and_bounded_read),
              PF_TEST(test_atomic_abort_leaves_nothing),
              PF_TEST(test_atomic_write_never_follows_links),
              PF_TEST(test_mkdir_p),
              PF_TEST(test_resident_code))
