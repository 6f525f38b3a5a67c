/* The local process pool's master side (see pool.h): spawning and restarting workers,
 * dispatching queued candidates, collecting records, and turning deaths and silences into
 * invalid records. */
#include "cluster/pool.h"
#include "cluster/pool_proto.h"

#include "base/arena.h"
#include "base/clock.h"

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct job {
    long id;
    pf_image_set set;
    char *schedule;
    int samples;           /* timing samples per image (0: the config's) */
} job;

typedef struct worker {
    pid_t pid;
    int fd;                /* master's end of the socket; -1 when not running */
    bool ready, busy, killed;
    bool ending;           /* sent its last record ('Z'): no more work; its exit is expected */
    job job;               /* the candidate it is measuring (busy) */
    double last_heard;     /* ms: start, or the last message */
} worker;

typedef struct pool {
    pf_evaluator base;
    pf_eval_config cfg;
    int jobs, spawned;
    double watchdog_ms;
    const char *exe;       /* NULL: fork */
    int rank;
    char host[256];
    pf_front_point *front; /* sent with every request */
    int n_front;
    int samples;           /* of the candidates submitted from now on (0: the config's) */
    worker *w;
    job *queue;            /* FIFO of submitted, not yet dispatched candidates */
    int q_head, q_n, q_cap;
    pf_eval_record *done;  /* finished records not yet collected */
    int d_n, d_cap;
    char description[1024];
    char load_line[128];
} pool;

/* ---- spawning ---- */

extern char **environ;

/* `exe __pool-worker FD PARENT ID` with the worker's end of the socket on FD, then its config.
 * posix_spawn (vfork and exec) copies nothing of this process: safe after MPI_Init, which
 * fork is not. */
static pid_t spawn_exec(pool *p, int i, int fd, int master_fd, pf_error *err)
{
    int target = fd == 3 ? 4 : 3;  /* dup2 to another number clears close-on-exec */
    char fd_s[16], parent_s[16], id_s[16];
    snprintf(fd_s, sizeof fd_s, "%d", target);
    snprintf(parent_s, sizeof parent_s, "%d", (int)getpid());
    snprintf(id_s, sizeof id_s, "%d", i);
    char *argv[] = { (char *)p->exe, "__pool-worker", fd_s, parent_s, id_s, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, target);
    pid_t pid;
    int rc = posix_spawn(&pid, p->exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        pf_fail(err, "cannot start %s: %s", p->exe, strerror(rc));
        return -1;
    }
    json_object *o = pf_eval_config_to_json(&p->cfg);
    const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    pf_pool_send(master_fd, 'C', s, strlen(s));  /* a failure shows as the worker's death */
    json_object_put(o);
    return pid;
}

/* A forked worker keeps stdin, stdout, stderr and its socket: nothing else of the master's,
 * above all not the run directory's lock (results/rundir_lock.c), which would otherwise stay
 * held by workers that outlive a master killed with -9. (An exec'd worker loses the lock too:
 * its descriptor is close-on-exec.) */
static void close_inherited(int keep)
{
    DIR *dp = opendir("/proc/self/fd");
    if (!dp)
        return;
    int self = dirfd(dp);
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end == '\0' && end != de->d_name && fd > 2 && fd != keep && fd != self)
            close((int)fd);
    }
    closedir(dp);
}

static pid_t spawn_fork(pool *p, int i, int fd, int master_fd, pf_error *err)
{
    int parent = (int)getpid();
    pid_t pid = fork();
    if (pid < 0) {
        pf_fail(err, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        (void)master_fd;  /* closed with the rest: */
        close_inherited(fd);  /* the other workers' sockets included */
        pf_pool_worker_main(&p->cfg, i, fd, parent);
    }
    return pid;
}

static int spawn(pool *p, int i, pf_error *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return pf_fail(err, "socketpair: %s", strerror(errno));
    pid_t pid = p->exe ? spawn_exec(p, i, sv[1], sv[0], err) : spawn_fork(p, i, sv[1], sv[0],
                                                                          err);
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    close(sv[1]);
    worker *w = &p->w[i];
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->fd = sv[0];
    w->last_heard = pf_now_ms();
    p->spawned++;
    return 0;
}

static void reap(worker *w, int *status)
{
    close(w->fd);
    w->fd = -1;
    while (waitpid(w->pid, status, 0) < 0 && errno == EINTR)
        ;
}

/* ---- records ---- */

static void push_done(pool *p, pf_eval_record *r)
{
    if (p->d_n == p->d_cap) {
        p->d_cap = p->d_cap ? 2 * p->d_cap : 16;
        p->done = pf_xrealloc(p->done, sizeof *p->done * (size_t)p->d_cap);
    }
    p->done[p->d_n++] = *r;
}

/* Why a worker died, in the words of its wait status. */
static void death_reason(const pool *p, const worker *w, int status, char *buf, size_t size)
{
    if (w->killed)
        snprintf(buf, size, "timed out: the worker was silent for %.0f s (a compile or run "
                 "that never returned) and was killed", p->watchdog_ms / 1000);
    else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        snprintf(buf, size, "timed out: a call ran past %g x the exact program's time + %g ms",
                 p->cfg.timeout_factor, p->cfg.timeout_min_ms);
    else if (WIFSIGNALED(status))
        snprintf(buf, size, "crashed: the worker was killed by signal %d (%s)",
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, size, "crashed: the worker exited with status %d during the evaluation",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* A worker went away: its candidate (if any) becomes an invalid record; a fresh worker takes
 * its slot. A worker that dies before it was ready fails the pool. */
static int handle_death(pool *p, int i, pf_error *err)
{
    worker *w = &p->w[i];
    int status = 0;
    reap(w, &status);
    if (!w->ready)
        return pf_fail(err, "pool worker %d died while starting (wait status %d)", i, status);
    if (w->busy) {
        char why[512];
        death_reason(p, w, status, why, sizeof why);
        pf_eval_record r;
        pf_record_init(&r);
        r.id = w->job.id;
        r.set = w->job.set;
        r.worker = i;
        r.rank = p->rank;
        r.host = pf_xstrdup(p->host);
        r.schedule = w->job.schedule;  /* moved */
        r.wall_ms = pf_now_ms() - w->last_heard;
        pf_record_set_invalid(&r, "%s", why);
        push_done(p, &r);
    }
    return spawn(p, i, err);
}

/* ---- messages from workers ---- */

static int on_record(pool *p, worker *w, int i, const char *json, pf_error *err)
{
    pf_eval_record r;
    if (pf_record_from_json(json, &r, err) != 0)
        return pf_fail_prefix(err, "pool worker %d sent a bad record", i);
    r.worker = i;
    r.rank = p->rank;
    free(r.host);
    r.host = pf_xstrdup(p->host);
    free(w->job.schedule);
    w->job.schedule = NULL;
    w->busy = false;
    push_done(p, &r);
    return 0;
}

static int on_message(pool *p, int i, pf_error *err)
{
    worker *w = &p->w[i];
    char type, *msg;
    size_t len;
    if (pf_pool_recv(w->fd, &type, &msg, &len) != 0)
        return handle_death(p, i, err);
    w->last_heard = pf_now_ms();
    int rc = 0;
    if (type == 'R')
        w->ready = true;
    else if (type == 'F')
        rc = pf_fail(err, "pool worker %d could not start: %s", i, msg);
    else if (type == 'E' || type == 'Z')
        rc = on_record(p, w, i, msg, err);
    w->ending = w->ending || type == 'Z';
    free(msg);
    return rc;
}

/* ---- dispatch and the event loop ---- */

static int dispatch(pool *p, int i, pf_error *err)
{
    worker *w = &p->w[i];
    job j = p->queue[p->q_head++];
    p->q_n--;
    json_object *q = pf_pool_request_json(j.id, j.set, j.schedule, p->front, p->n_front,
                                          j.samples);
    const char *s = json_object_to_json_string_ext(q, JSON_C_TO_STRING_PLAIN);
    w->busy = true;
    w->job = j;
    w->last_heard = pf_now_ms();
    int rc = pf_pool_send(w->fd, 'Q', s, strlen(s));
    json_object_put(q);
    if (rc != 0)  /* it died between two candidates: that one is its candidate now */
        return handle_death(p, i, err);
    return 0;
}

static int dispatch_all(pool *p, pf_error *err)
{
    for (int i = 0; i < p->jobs && p->q_n > 0; i++)
        if (p->w[i].ready && !p->w[i].busy && !p->w[i].ending && dispatch(p, i, err) != 0)
            return -1;
    return 0;
}

static bool anything_pending(const pool *p)
{
    if (p->q_n > 0)
        return true;
    for (int i = 0; i < p->jobs; i++)
        if (p->w[i].busy)
            return true;
    return false;
}

/* Kills busy workers (and starting ones) that have been silent past the watchdog. */
static int watchdog(pool *p, pf_error *err)
{
    double now = pf_now_ms();
    for (int i = 0; i < p->jobs; i++) {
        worker *w = &p->w[i];
        if ((w->busy || !w->ready) && now - w->last_heard > p->watchdog_ms) {
            kill(w->pid, SIGKILL);
            w->killed = true;
            if (handle_death(p, i, err) != 0)
                return -1;
        }
    }
    return 0;
}

/* Waits for messages (at most until the next watchdog check, or timeout_ms) and handles
 * them. */
static int pump(pool *p, double timeout_ms, pf_error *err)
{
    struct pollfd *fds = pf_xcalloc((size_t)p->jobs, sizeof *fds);
    for (int i = 0; i < p->jobs; i++)
        fds[i] = (struct pollfd){ p->w[i].fd, POLLIN, 0 };
    int n = poll(fds, (nfds_t)p->jobs, (int)ceil(fmin(fmax(timeout_ms, 0), 1000)));
    int rc = 0;
    for (int i = 0; n > 0 && i < p->jobs && rc == 0; i++)
        if (fds[i].revents)
            rc = on_message(p, i, err);
    free(fds);
    if (n < 0 && errno != EINTR)
        return pf_fail(err, "poll: %s", strerror(errno));
    return rc ? rc : watchdog(p, err);
}

int pf_pool_wait_for(pf_evaluator *ev, pf_eval_record *out, double timeout_ms, pf_error *err)
{
    pool *p = (pool *)ev;
    double end = pf_now_ms() + timeout_ms;
    for (;;) {
        if (p->d_n > 0) {
            *out = p->done[0];
            memmove(p->done, p->done + 1, sizeof *p->done * (size_t)--p->d_n);
            return 1;
        }
        if (dispatch_all(p, err) != 0)
            return -1;
        if (!anything_pending(p))
            return 0;
        if (p->base.stop && *p->base.stop)
            return pf_fail(err, "stopped on request");
        double left = end - pf_now_ms();
        if (left <= 0)
            return 2;
        if (pump(p, left, err) != 0)
            return -1;
    }
}

static int pool_wait(pf_evaluator *ev, pf_eval_record *out, pf_error *err)
{
    return pf_pool_wait_for(ev, out, INFINITY, err);
}

static int pool_submit(pf_evaluator *ev, long id, pf_image_set set, const char *schedule,
                       pf_error *err)
{
    pool *p = (pool *)ev;
    if (p->q_head > 0 && p->q_n == 0)
        p->q_head = 0;
    if (p->q_head + p->q_n == p->q_cap) {
        if (p->q_n > 0)
            memmove(p->queue, p->queue + p->q_head, sizeof *p->queue * (size_t)p->q_n);
        p->q_head = 0;
        if (p->q_n == p->q_cap) {
            p->q_cap = p->q_cap ? 2 * p->q_cap : 64;
            p->queue = pf_xrealloc(p->queue, sizeof *p->queue * (size_t)p->q_cap);
        }
    }
    p->queue[p->q_head + p->q_n++] = (job){ id, set, pf_xstrdup(schedule), p->samples };
    return dispatch_all(p, err);
}

static const char *pool_describe(pf_evaluator *ev)
{
    return ((pool *)ev)->description;
}

static void pool_set_samples(pf_evaluator *ev, int samples)
{
    ((pool *)ev)->samples = samples;
}

static void pool_set_frontier(pf_evaluator *ev, const pf_front_point *pts, int n)
{
    pool *p = (pool *)ev;
    free(p->front);
    p->front = pf_front_copy(pts, n);
    p->n_front = n;
}

static const char *pool_load(pf_evaluator *ev)
{
    pool *p = (pool *)ev;
    int busy = 0;
    for (int i = 0; i < p->jobs; i++)
        busy += p->w[i].busy;
    snprintf(p->load_line, sizeof p->load_line, "workers %d busy %d idle", busy,
             p->jobs - busy);
    return p->load_line;
}

static void pool_destroy(pf_evaluator *ev)
{
    pool *p = (pool *)ev;
    for (int i = 0; i < p->jobs; i++) {
        worker *w = &p->w[i];
        if (w->fd < 0)
            continue;
        if (w->busy || !w->ready)
            kill(w->pid, SIGKILL);
        else
            pf_pool_send(w->fd, 'X', "", 0);
        int status;
        reap(w, &status);
        free(w->job.schedule);
    }
    for (int i = 0; i < p->q_n; i++)
        free(p->queue[p->q_head + i].schedule);
    for (int i = 0; i < p->d_n; i++)
        pf_record_free(&p->done[i]);
    free(p->queue);
    free(p->done);
    free(p->front);
    free(p->w);
    pf_eval_config_free(&p->cfg);
    free(p);
}

static const pf_evaluator_ops pool_ops = { .submit = pool_submit, .wait = pool_wait,
                                           .describe = pool_describe, .destroy = pool_destroy,
                                           .set_frontier = pool_set_frontier,
                                           .set_samples = pool_set_samples,
                                           .load = pool_load };

int pf_pool_spawned(const pf_evaluator *ev)
{
    return ((const pool *)ev)->spawned;
}

static void describe(pool *p)
{
    char threads[32] = "all cores";
    if (p->cfg.threads > 0)
        snprintf(threads, sizeof threads, "%d thread%s", p->cfg.threads,
                 p->cfg.threads == 1 ? "" : "s");
    snprintf(p->description, sizeof p->description,
             "local pool of %d worker process%s (%s) on %s; a crash or hang kills only its "
             "worker, which is restarted; node protocol on %s: the workers build (compile, "
             "outputs, error) together and time one at a time with the node quiet (timed "
             "candidates on %s)", p->jobs, p->jobs == 1 ? "" : "es",
             p->exe ? "exec" : "fork", p->host,
             p->cfg.lock_path ? p->cfg.lock_path : "(no lock: a single worker)", threads);
}

/* Waits until every worker is ready (or one fails). */
static int wait_ready(pool *p, pf_error *err)
{
    for (;;) {
        bool all = true;
        for (int i = 0; i < p->jobs; i++)
            all &= p->w[i].ready;
        if (all)
            return 0;
        if (pump(p, 1000, err) != 0)
            return -1;
    }
}

pf_evaluator *pf_pool_new(const pf_eval_config *cfg, const pf_pool_options *opt,
                          pf_error *err)
{
    pool *p = pf_xcalloc(1, sizeof *p);
    p->base.ops = &pool_ops;
    pf_eval_config_copy(&p->cfg, cfg);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    p->jobs = opt && opt->jobs > 0 ? opt->jobs : cores > 0 ? (int)cores : 1;
    p->watchdog_ms = opt && opt->watchdog_ms > 0 ? opt->watchdog_ms : 600000;
    p->exe = opt ? opt->exe : NULL;
    p->rank = opt ? opt->rank : 0;
    if (gethostname(p->host, sizeof p->host - 1) != 0)
        snprintf(p->host, sizeof p->host, "localhost");
    p->w = pf_xcalloc((size_t)p->jobs, sizeof *p->w);
    for (int i = 0; i < p->jobs; i++)
        p->w[i].fd = -1;
    describe(p);
    int rc = 0;
    for (int i = 0; i < p->jobs && rc == 0; i++)
        rc = spawn(p, i, err);
    if (rc == 0)
        rc = wait_ready(p, err);
    if (rc != 0) {
        pool_destroy(&p->base);
        return NULL;
    }
    return &p->base;
}
