/* The run directory's lock (rundir.h, PF_RUN_RUN_LOCK): one search per run directory at a time.
 *
 * An exclusive fcntl lock on the whole of RUN/run.lock, taken with F_OFD_SETLK (open file
 * description locks, Linux >= 3.15: owned by this open file, so a second pf_tune in the same
 * process conflicts too, and closing another descriptor of the file cannot drop it), or with
 * F_SETLK where OFD locks are not supported. The kernel drops it when the process exits
 * however it exits (kill -9 included), so a stale lock cannot outlive its holder on a local
 * filesystem. On NFS, fcntl locks go to the server (NFSv4 state, or the NLM/lockd protocol
 * for v3) and hold across client machines; a client that dies keeps the lock until the server
 * notices (the NFSv4 lease, 90 s by default; for v3, when statd reports the client's reboot).
 * A filesystem without lock support (ENOLCK: NFSv3 mounted nolock, some FUSE) is refused
 * rather than run unlocked. The holder writes "pid N on host H since T" into the file so that
 * the one refused can say who holds it. */
#define _GNU_SOURCE  /* F_OFD_SETLK is a GNU extension of <fcntl.h> */

#include "results/rundir.h"

#include "base/arena.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int try_lock(int fd)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
#ifdef F_OFD_SETLK
    if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
        return 0;
    if (errno != EINVAL)
        return -1;
#endif
    return fcntl(fd, F_SETLK, &fl);
}

/* The holder's line, as it wrote it (empty when it has not yet). */
static void read_holder(int fd, char *buf, size_t n)
{
    ssize_t got = pread(fd, buf, n - 1, 0);
    buf[got > 0 ? got : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
}

static void write_holder(int fd)
{
    char host[256] = "?", stamp[32] = "?", line[400];
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm))
        strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    int n = snprintf(line, sizeof line, "pid %ld on host %s since %s\n", (long)getpid(), host,
                     stamp);
    if (ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)n, 0) == n)
        fdatasync(fd);  /* best effort: the lock itself is what counts */
}

int pf_run_lock_take(pf_run_lock *l, const char *dir, pf_error *err)
{
    l->fd = -1;
    char *path = pf_run_path(dir, PF_RUN_RUN_LOCK);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        pf_fail(err, "%s: cannot open the run's lock: %s", path, strerror(errno));
        free(path);
        return -1;
    }
    if (try_lock(fd) != 0) {
        int e = errno;
        char holder[300];
        read_holder(fd, holder, sizeof holder);
        close(fd);
        if (e == EAGAIN || e == EACCES)
            pf_fail(err, "%s is in use by %s: one search per run directory (wait for it to "
                    "end, or stop it, then resume)", dir, holder[0] ? holder : "another process");
        else
            pf_fail(err, "%s: cannot lock: %s (the run directory needs a filesystem with fcntl "
                    "locks; on NFS, mount with locking)", path, strerror(e));
        free(path);
        return -1;
    }
    free(path);
    write_holder(fd);
    l->fd = fd;
    return 0;
}

void pf_run_lock_release(pf_run_lock *l)
{
    if (l->fd >= 0)
        close(l->fd);  /* drops the lock; the file stays (removing it would race a taker) */
    l->fd = -1;
}
