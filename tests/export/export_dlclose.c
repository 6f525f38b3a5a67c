/* Two exported shared libraries loaded, called with 2 threads and unloaded in turn, three
 * times over: a library's pool threads must be gone before dlclose unmaps their code, or the
 * next library mapped there wakes them in the middle of other code (test_export_build.sh).
 *
 *   export_dlclose A.so NAME_A B.so NAME_B     exits 0 when every call returned 0 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*export_fn)(const float *, const int64_t *, const int64_t *, float *,
                         const int64_t *, const int64_t *, int);

/* The threads of this process (/proc/self/task). */
static int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int most = 1;
    if (argc != 5)
        return 2;
    int64_t e[3] = { 256, 192, 3 }, s[3] = { 1, 256, 256 * 192 };
    float *in = calloc(256 * 192 * 3, sizeof *in), *out = calloc(256 * 192 * 3, sizeof *out);
    for (int i = 0; i < 256 * 192 * 3; i++)
        in[i] = (float)(i % 97) / 97.0f;
    for (int round = 0; round < 6; round++) {
        const char *path = argv[1 + 2 * (round % 2)], *name = argv[2 + 2 * (round % 2)];
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        export_fn fn = dl ? (export_fn)(uintptr_t)dlsym(dl, name) : NULL;
        if (!fn) {
            fprintf(stderr, "%s: %s\n", path, dlerror());
            return 1;
        }
        for (int call = 0; call < 3; call++)
            if (fn(in, e, s, out, e, s, 2) != 0) {
                fprintf(stderr, "round %d: the call failed\n", round);
                return 1;
            }
        if (threads_now() > most)
            most = threads_now();
        dlclose(dl);
        if (threads_now() != 1) {
            fprintf(stderr, "round %d: %d threads left after dlclose of %s\n", round,
                    threads_now() - 1, path);
            return 1;
        }
    }
    if (most < 2) {
        fprintf(stderr, "no library started a pool thread: nothing was tested\n");
        return 1;
    }
    printf("  dlopen, 3 calls with 2 threads (up to %d threads), dlclose (1 thread left): 6 "
           "rounds, two libraries in turn\n", most);
    free(in);
    free(out);
    return 0;
}
