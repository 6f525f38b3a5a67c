/* The local process pool's master side (see pool.h): spawning and restarting workers,
 * dispatching queued candidates, collecting records, and turning deaths and silences into
 * invalid records. */
#include "cluster/pool.h"
#include "cluster/pool_proto.h"

#include "base/arena.h"

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct job {
    long id;
    pf_image_set set;
    char *schedule;
} job;

typedef struct worker {
    pid_t pid;
    int fd;                /* master's end of the socket; -1 when not running */
    bool ready, busy, killed;
    job job;               /* the candidate it is measuring (busy) */
    double last_heard;     /* ms: start, or the last message */
} worker;

typedef struct pool {
    pf_evaluator base;
    pf_eval_config cfg;
    int jobs, spawned;
    double watchdog_ms;
    worker *w;
    job *queue;            /* FIFO of submitted, not yet dispatched candidates */
    int q_head, q_n, q_cap;
    pf_eval_record *done;  /* finished records not yet collected */
    int d_n, d_cap;
    char description[1024];
} pool;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- spawning ---- */

/* A worker keeps stdin, stdout, stderr and its socket: nothing else of the master's, above all
 * not the run directory's lock (results/rundir_lock.c), which would otherwise stay held by
 * workers that outlive a master killed with -9. */
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

static int spawn(pool *p, int i, pf_error *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return pf_fail(err, "socketpair: %s", strerror(errno));
    int parent = (int)getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return pf_fail(err, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close_inherited(sv[1]);  /* the other workers' sockets included */
        pf_pool_worker_main(&p->cfg, i, sv[1], parent);
    }
    close(sv[1]);
    worker *w = &p->w[i];
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->fd = sv[0];
    w->last_heard = now_ms();
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
        r.schedule = w->job.schedule;  /* moved */
        r.wall_ms = now_ms() - w->last_heard;
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
    w->last_heard = now_ms();
    int rc = 0;
    if (type == 'R')
        w->ready = true;
    else if (type == 'F')
        rc = pf_fail(err, "pool worker %d could not start: %s", i, msg);
    else if (type == 'E')
        rc = on_record(p, w, i, msg, err);
    free(msg);
    return rc;
}

/* ---- dispatch and the event loop ---- */

static int dispatch(pool *p, int i, pf_error *err)
{
    worker *w = &p->w[i];
    job j = p->queue[p->q_head++];
    p->q_n--;
    json_object *q = json_object_new_object();
    json_object_object_add(q, "id", json_object_new_int64(j.id));
    json_object_object_add(q, "set", json_object_new_string(pf_image_set_name(j.set)));
    json_object_object_add(q, "schedule", json_object_new_string(j.schedule));
    const char *s = json_object_to_json_string_ext(q, JSON_C_TO_STRING_PLAIN);
    w->busy = true;
    w->job = j;
    w->last_heard = now_ms();
    int rc = pf_pool_send(w->fd, 'Q', s, strlen(s));
    json_object_put(q);
    if (rc != 0)  /* it died between two candidates: that one is its candidate now */
        return handle_death(p, i, err);
    return 0;
}

static int dispatch_all(pool *p, pf_error *err)
{
    for (int i = 0; i < p->jobs && p->q_n > 0; i++)
        if (p->w[i].ready && !p->w[i].busy && dispatch(p, i, err) != 0)
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
    double now = now_ms();
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

/* Waits for messages (at most until the next watchdog check) and handles them. */
static int pump(pool *p, pf_error *err)
{
    struct pollfd *fds = pf_xcalloc((size_t)p->jobs, sizeof *fds);
    for (int i = 0; i < p->jobs; i++)
        fds[i] = (struct pollfd){ p->w[i].fd, POLLIN, 0 };
    int n = poll(fds, (nfds_t)p->jobs, 1000);
    int rc = 0;
    for (int i = 0; n > 0 && i < p->jobs && rc == 0; i++)
        if (fds[i].revents)
            rc = on_message(p, i, err);
    free(fds);
    if (n < 0 && errno != EINTR)
        return pf_fail(err, "poll: %s", strerror(errno));
    return rc ? rc : watchdog(p, err);
}

static int pool_wait(pf_evaluator *ev, pf_eval_record *out, pf_error *err)
{
    pool *p = (pool *)ev;
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
        if (pump(p, err) != 0)
            return -1;
    }
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
    p->queue[p->q_head + p->q_n++] = (job){ id, set, pf_xstrdup(schedule) };
    return dispatch_all(p, err);
}

static const char *pool_describe(pf_evaluator *ev)
{
    return ((pool *)ev)->description;
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
    free(p->w);
    pf_eval_config_free(&p->cfg);
    free(p);
}

static const pf_evaluator_ops pool_ops = { pool_submit, pool_wait, pool_describe,
                                           pool_destroy };

int pf_pool_spawned(const pf_evaluator *ev)
{
    return ((const pool *)ev)->spawned;
}

static void describe(pool *p)
{
    snprintf(p->description, sizeof p->description,
             "local pool of %d worker process%s (fork); a crash or hang kills only its worker, "
             "which is restarted; timing serialized by flock(2) on %s: one worker at a time on "
             "this node runs generated code (timed and untimed calls), while compiles and error "
             "metrics overlap", p->jobs, p->jobs == 1 ? "" : "es",
             p->cfg.lock_path ? p->cfg.lock_path : "(no lock: a single worker)");
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
        if (pump(p, err) != 0)
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
