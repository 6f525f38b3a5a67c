/* Process and file-tree helpers of the benchmark builder (proc.h). */
#include "dataset/proc.h"

#include "base/arena.h"
#include "base/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PF_COPY_MAX_BYTES ((size_t)1 << 30)

static int wait_child(pid_t pid, const char *name, pf_error *err)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return pf_fail(err, "%s: waitpid: %s", name, strerror(errno));
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return pf_fail(err, "%s: killed by signal %d", name,
                   WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int pf_run_program(char *const argv[], const char *out_path, const char *log_path,
                   pf_error *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_path)
        posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    else
        posix_spawn_file_actions_adddup2(&fa, 2, 1);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return pf_fail(err, "cannot run %s: %s", argv[0], strerror(rc));
    return wait_child(pid, argv[0], err);
}

char *pf_file_tail(const char *path, size_t max_bytes)
{
    char *text;
    size_t len;
    pf_error ignored;
    if (pf_read_file(path, (size_t)64 << 20, &text, &len, &ignored) != 0)
        return pf_xstrdup("");
    size_t start = len > max_bytes ? len - max_bytes : 0;
    while (len > start && (text[len - 1] == '\n' || text[len - 1] == ' '))
        text[--len] = '\0';
    char *tail = pf_xstrdup(text + start);
    free(text);
    return tail;
}

static int remove_entries(const char *dir, pf_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return pf_fail(err, "%s: cannot open directory: %s", dir, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *child = pf_path_join(dir, e->d_name);
        rc = pf_remove_tree(child, err);
        free(child);
    }
    closedir(d);
    return rc;
}

int pf_remove_tree(const char *path, pf_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : pf_fail(err, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        /* Packages unpack some directories read-only; we own them, so open them up. */
        if ((st.st_mode & 0700) != 0700)
            chmod(path, st.st_mode | 0700);
        if (remove_entries(path, err) != 0)
            return -1;
        if (rmdir(path) != 0)
            return pf_fail(err, "%s: cannot remove: %s", path, strerror(errno));
        return 0;
    }
    if (unlink(path) != 0)
        return pf_fail(err, "%s: cannot remove: %s", path, strerror(errno));
    return 0;
}

int pf_copy_file(const char *from, const char *to, pf_error *err)
{
    char *data;
    size_t len;
    if (pf_read_file(from, PF_COPY_MAX_BYTES, &data, &len, err) != 0)
        return -1;
    int rc = pf_write_file_atomic(to, data, len, err);
    free(data);
    return rc;
}
