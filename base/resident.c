/* Resident code pages of the executable: measured from /proc/self/smaps, dropped with madvise
 * (see resident.h). perfora is linked statically against LLVM: a compile touches ~10 MiB of
 * LLVM's code (passes, the X86 back end), and startup touches more (LLVM's static
 * constructors, each page faulted in with its 64 KiB neighbourhood); `perfora run` keeps none
 * of it in use while the pipeline runs over the images. */
#include "base/resident.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#if defined(__linux__)
/* One mapping line of /proc/self/maps or smaps: its range when it is an executable, read-only
 * mapping of the file at exe (the program's own text). */
static int own_code_range(const char *line, const char *exe, unsigned long *lo,
                          unsigned long *hi)
{
    char perms[8], path[4096];
    unsigned long off;
    path[0] = '\0';
    if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", lo, hi, perms, &off, path) < 4)
        return 0;
    return strcmp(perms, "r-xp") == 0 && strcmp(path, exe) == 0;
}

/* smaps interleaves mapping lines ("55d0...-55d1... r-xp ...") with field lines ("Rss: ..."). */
static int is_mapping_line(const char *line)
{
    size_t hex = strspn(line, "0123456789abcdef");
    return hex > 0 && line[hex] == '-';
}

/* Opens /proc/self/<file> (maps or smaps), with the executable's path in exe; NULL if either
 * cannot be had. */
static FILE *open_own_maps(const char *file, char *exe, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", exe, n - 1);
    if (len <= 0)
        return NULL;
    exe[len] = '\0';
    char path[64];
    snprintf(path, sizeof path, "/proc/self/%s", file);
    return fopen(path, "r");
}
#endif

long long pf_resident_code_bytes(void)
{
#if defined(__linux__)
    char exe[4096], line[4352];
    FILE *fp = open_own_maps("smaps", exe, sizeof exe);
    if (!fp)
        return -1;
    long long total = 0;
    int in_code = 0;
    while (fgets(line, sizeof line, fp)) {
        unsigned long lo, hi, kb;
        if (is_mapping_line(line))
            in_code = own_code_range(line, exe, &lo, &hi);
        else if (in_code && sscanf(line, "Rss: %lu kB", &kb) == 1)
            total += (long long)kb * 1024;
    }
    fclose(fp);
    return total;
#else
    return -1;
#endif
}

size_t pf_drop_code_pages(void)
{
#if defined(__linux__) && defined(MADV_DONTNEED)
    char exe[4096], line[4352];
    FILE *fp = open_own_maps("maps", exe, sizeof exe);
    if (!fp)
        return 0;
    size_t dropped = 0;
    while (fgets(line, sizeof line, fp)) {
        unsigned long lo, hi;
        if (own_code_range(line, exe, &lo, &hi) && madvise((void *)lo, hi - lo, MADV_DONTNEED) == 0)
            dropped += hi - lo;
    }
    fclose(fp);
    return dropped;
#else
    return 0;
#endif
}
