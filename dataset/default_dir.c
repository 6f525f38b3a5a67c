/* Where the bundled benchmark is when no --dataset is given (issue 27: the path of the build
 * tree was compiled in, so an installed or moved perfora could not find data/images). */
#include "dataset/manifest.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "base/strbuf.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REL "data/images"

static bool has_manifest(const char *dir)
{
    char *m = pf_path_join(dir, "manifest.tsv");
    bool ok = access(m, R_OK) == 0;
    free(m);
    return ok;
}

/* DIR/../../share/perfora/data/images for the directory of the running executable. */
static char *installed(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    return pf_path_join(exe, "../share/perfora/" REL);
}

char *pf_dataset_default(const char *program, pf_error *err)
{
    const char *env = getenv(PF_DATASET_ENV);
    if (env && *env)
        return pf_xstrdup(env);
    char *cand[5] = { NULL };
    int n = 0;
    char *dir = pf_xstrdup(program ? program : "");
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    const char *base = slash ? dir : ".";
    char *up = pf_path_join(base, "..");  /* apps/blur.pf in a source tree */
    cand[n++] = pf_path_join(up, REL);
    cand[n++] = pf_path_join(base, REL);
    cand[n++] = pf_xstrdup(REL);
    cand[n++] = installed();
    cand[n++] = pf_xstrdup(PF_SOURCE_DIR "/" REL);  /* the tree this binary was built from */
    free(up);
    free(dir);
    char *found = NULL;
    pf_strbuf tried;
    pf_sb_init(&tried);
    for (int i = 0; i < n; i++) {
        if (!cand[i])
            continue;
        if (!found && has_manifest(cand[i]))
            found = pf_xstrdup(cand[i]);
        pf_sb_printf(&tried, "%s%s", tried.data ? ", " : "", cand[i]);
        free(cand[i]);
    }
    if (!found)
        pf_fail(err, "no benchmark found (give --dataset DIR or set %s; looked in %s)",
                PF_DATASET_ENV, tried.data ? tried.data : "nothing");
    pf_sb_free(&tried);
    return found;
}
