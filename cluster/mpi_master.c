/* Rank 0's side of the search over MPI (see mpi.h): the evaluator over the worker ranks.
 * Dynamic dispatch: a worker gets the next queued candidate the moment it returns a record.
 * Every wait is a poll (MPI_Iprobe, MPI_Test) with sleeps between: rank 0 often shares a node
 * whose candidates are being timed. A busy worker silent past the deadline is dropped and its
 * candidate goes back to the front of the queue. */
#include "cluster/mpi_internal.h"
#include "cluster/pool_proto.h"

#include "base/arena.h"
#include "base/strbuf.h"

#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct job {
    long id;
    pf_image_set set;
    char *schedule;
    int samples;           /* timing samples per image (0: the config's) */
} job;

/* LOST: silent past its deadline (dead or hung); FAILED: it said it cannot evaluate, and
 * waits for the word to exit; LEAVING: told to exit, GONE: it said goodbye. */
typedef enum wstate { W_STARTING, W_IDLE, W_BUSY, W_LOST, W_FAILED, W_LEAVING, W_GONE } wstate;

typedef struct worker {
    wstate state;
    int node;              /* index into nodes */
    job job;               /* while busy */
    double last_heard;     /* ms */
    double idle_since;     /* ms: dispatch picks the longest idle */
    MPI_Request send;      /* the request sent to it, while in flight */
    char *send_buf;
} worker;

typedef struct node_stat {
    char *host;
    int workers, cores, ranks;
    long done;
} node_stat;

typedef struct master {
    pf_evaluator base;
    pf_mpi *m;
    double deadline_ms;
    worker *w;             /* [size]; w[0] is rank 0 itself, never used */
    node_stat *nodes;
    int n_nodes, lost, failed;
    job *queue;            /* candidates not yet dispatched (a deque: re-dispatches go first) */
    int q_head, q_n, q_cap;
    pf_eval_record *done;
    int d_n, d_cap;
    pf_front_point *front;
    int n_front;
    int samples;           /* of the candidates submitted from now on (0: the config's) */
    char **notes;          /* log lines not yet taken */
    int n_notes, notes_taken;
    char *note_out;
    double t_start;
    pf_mpi_backoff backoff;
    char description[2048];
    char load_line[512];
    char first_failure[512];
    bool said_goodbye;
} master;

static void note(master *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(master *p, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    p->notes = pf_xrealloc(p->notes, sizeof *p->notes * (size_t)(p->n_notes + 1));
    p->notes[p->n_notes++] = pf_xstrdup(buf);
}

/* ---- the queue ---- */

static void queue_grow(master *p)
{
    if (p->q_n < p->q_cap)
        return;
    int cap = p->q_cap ? 2 * p->q_cap : 64;
    job *q = pf_xmalloc(sizeof *q * (size_t)cap);
    for (int i = 0; i < p->q_n; i++)
        q[i] = p->queue[(p->q_head + i) % p->q_cap];
    free(p->queue);
    p->queue = q;
    p->q_head = 0;
    p->q_cap = cap;
}

static void queue_push(master *p, job j, bool front)
{
    queue_grow(p);
    if (front) {
        p->q_head = (p->q_head + p->q_cap - 1) % p->q_cap;
        p->queue[p->q_head] = j;
    } else {
        p->queue[(p->q_head + p->q_n) % p->q_cap] = j;
    }
    p->q_n++;
}

static job queue_pop(master *p)
{
    job j = p->queue[p->q_head];
    p->q_head = (p->q_head + 1) % p->q_cap;
    p->q_n--;
    return j;
}

static void push_done(master *p, pf_eval_record *r)
{
    if (p->d_n == p->d_cap) {
        p->d_cap = p->d_cap ? 2 * p->d_cap : 16;
        p->done = pf_xrealloc(p->done, sizeof *p->done * (size_t)p->d_cap);
    }
    p->done[p->d_n++] = *r;
}

/* ---- sending ---- */

/* Frees the buffer of a worker's finished send. */
static void sent(worker *w)
{
    if (!w->send_buf)
        return;
    int flag = 0;
    MPI_Test(&w->send, &flag, MPI_STATUS_IGNORE);
    if (flag) {
        free(w->send_buf);
        w->send_buf = NULL;
    }
}

static int dispatch_to(master *p, int r, pf_error *err)
{
    worker *w = &p->w[r];
    job j = queue_pop(p);
    json_object *q = pf_pool_request_json(j.id, j.set, j.schedule, p->front, p->n_front,
                                          j.samples);
    const char *s = json_object_to_json_string_ext(q, JSON_C_TO_STRING_PLAIN);
    if (w->send_buf) {  /* its previous request was received (it answered): no wait */
        MPI_Wait(&w->send, MPI_STATUS_IGNORE);
        free(w->send_buf);
    }
    w->send_buf = pf_xstrdup(s);
    json_object_put(q);
    if (MPI_Isend(w->send_buf, (int)strlen(w->send_buf), MPI_CHAR, r, PF_TAG_REQUEST,
                  MPI_COMM_WORLD, &w->send) != MPI_SUCCESS)
        return pf_fail(err, "MPI_Isend to rank %d failed", r);
    w->state = W_BUSY;
    w->job = j;
    w->last_heard = pf_mpi_now_ms();
    return 0;
}

/* Every queued candidate to an idle worker, the longest idle first. */
static int dispatch_all(master *p, pf_error *err)
{
    while (p->q_n > 0) {
        int best = -1;
        for (int r = 1; r < p->m->size; r++)
            if (p->w[r].state == W_IDLE && (best < 0 || p->w[r].idle_since < p->w[best].idle_since))
                best = r;
        if (best < 0)
            return 0;
        if (dispatch_to(p, best, err) != 0)
            return -1;
    }
    return 0;
}

/* ---- messages from workers ---- */

/* A worker out of the run: its candidate (if any) goes to the front of the queue. */
static void lose(master *p, int r, bool silent, const char *why)
{
    worker *w = &p->w[r];
    bool busy = w->state == W_BUSY;
    w->state = silent ? W_LOST : W_FAILED;
    p->lost += silent;
    p->failed += !silent;
    if (busy) {
        note(p, "worker rank %d on %s %s (%s); its candidate %ld is dispatched again", r,
             p->nodes[w->node].host, silent ? "lost" : "failed", why, w->job.id);
        queue_push(p, w->job, true);
        memset(&w->job, 0, sizeof w->job);
    } else {
        note(p, "worker rank %d %s (%s)", r, silent ? "lost" : "failed", why);
    }
    /* its pending send may never complete: the buffer stays until the end */
}

static int find_node(master *p, const char *host)
{
    for (int i = 0; i < p->n_nodes; i++)
        if (strcmp(p->nodes[i].host, host) == 0)
            return i;
    p->nodes = pf_xrealloc(p->nodes, sizeof *p->nodes * (size_t)(p->n_nodes + 1));
    memset(&p->nodes[p->n_nodes], 0, sizeof *p->nodes);
    p->nodes[p->n_nodes].host = pf_xstrdup(host);
    return p->n_nodes++;
}

static void on_ready(master *p, int r, const char *json)
{
    json_object *o = json_tokener_parse(json), *v;
    const char *host = o && json_object_object_get_ex(o, "host", &v) ? json_object_get_string(v)
                                                                     : "?";
    worker *w = &p->w[r];
    w->node = find_node(p, host ? host : "?");
    node_stat *n = &p->nodes[w->node];
    n->workers++;
    if (json_object_object_get_ex(o, "cores", &v))
        n->cores = json_object_get_int(v);
    if (json_object_object_get_ex(o, "node_ranks", &v))
        n->ranks = json_object_get_int(v);
    json_object_put(o);
    w->state = W_IDLE;
    w->idle_since = pf_mpi_now_ms();
}

static void on_record(master *p, int r, const char *json)
{
    worker *w = &p->w[r];
    pf_eval_record rec;
    pf_error err;
    if (w->state != W_BUSY)
        return;  /* a worker already given up on: its candidate was dispatched again */
    if (pf_record_from_json(json, &rec, &err) != 0) {
        pf_record_init(&rec);
        rec.schedule = pf_xstrdup(w->job.schedule);
        pf_record_set_invalid(&rec, "rank %d sent a bad record: %s", r, err.msg);
    }
    rec.id = w->job.id;
    rec.set = w->job.set;
    free(w->job.schedule);
    memset(&w->job, 0, sizeof w->job);
    push_done(p, &rec);
    p->nodes[w->node].done++;
    w->state = W_IDLE;
    w->idle_since = pf_mpi_now_ms();
}

static void on_message(master *p, int r, int tag, const char *msg)
{
    if (r <= 0 || r >= p->m->size)
        return;
    if (tag == PF_TAG_BYE && p->w[r].state == W_LEAVING)
        p->w[r].state = W_GONE;
    if (p->w[r].state >= W_LOST)
        return;
    p->w[r].last_heard = pf_mpi_now_ms();
    if (tag == PF_TAG_READY) {
        on_ready(p, r, msg);
    } else if (tag == PF_TAG_FAILED) {
        if (!p->first_failure[0])
            snprintf(p->first_failure, sizeof p->first_failure, "rank %d: %s", r, msg);
        lose(p, r, false, msg);
    } else if (tag == PF_TAG_RECORD) {
        on_record(p, r, msg);
    }
}

/* Drops the busy (or starting) workers silent past their deadline. */
static void check_deadlines(master *p, double starting_ms)
{
    double now = pf_mpi_now_ms();
    for (int r = 1; r < p->m->size; r++) {
        worker *w = &p->w[r];
        double limit = w->state == W_STARTING ? starting_ms : p->deadline_ms;
        if ((w->state == W_BUSY || w->state == W_STARTING) && now - w->last_heard > limit) {
            char why[64];
            snprintf(why, sizeof why, "silent for %.0f s", (now - w->last_heard) / 1000);
            lose(p, r, true, why);
        }
    }
}

/* One round: every message waiting, or a sleep when there was none. */
static void pump(master *p, double starting_ms)
{
    bool any = false;
    int from, tag, len;
    char *msg;
    while (pf_mpi_poll(MPI_ANY_SOURCE, &from, &tag, &msg, &len)) {
        on_message(p, from, tag, msg);
        free(msg);
        any = true;
    }
    for (int r = 1; r < p->m->size; r++)
        sent(&p->w[r]);
    check_deadlines(p, starting_ms);
    if (any)
        pf_mpi_backoff_reset(&p->backoff);
    else
        pf_mpi_backoff_sleep(&p->backoff);
}

static int live_workers(const master *p)
{
    int n = 0;
    for (int r = 1; r < p->m->size; r++)
        n += p->w[r].state < W_LOST;
    return n;
}

/* ---- the evaluator ---- */

static int master_wait(pf_evaluator *ev, pf_eval_record *out, pf_error *err)
{
    master *p = (master *)ev;
    for (;;) {
        if (p->d_n > 0) {
            *out = p->done[0];
            memmove(p->done, p->done + 1, sizeof *p->done * (size_t)--p->d_n);
            return 1;
        }
        if (dispatch_all(p, err) != 0)
            return -1;
        bool busy = false;
        for (int r = 1; r < p->m->size; r++)
            busy |= p->w[r].state == W_BUSY;
        if (!busy && p->q_n == 0)
            return 0;
        if (live_workers(p) == 0)
            return pf_fail(err, "every worker rank was lost%s%s", p->first_failure[0] ? "; "
                           : "", p->first_failure);
        if (p->base.stop && *p->base.stop)
            return pf_fail(err, "stopped on request");
        pump(p, INFINITY);
    }
}

static int master_submit(pf_evaluator *ev, long id, pf_image_set set, const char *schedule,
                         pf_error *err)
{
    master *p = (master *)ev;
    queue_push(p, (job){ id, set, pf_xstrdup(schedule), p->samples }, false);
    return dispatch_all(p, err);
}

static const char *master_describe(pf_evaluator *ev)
{
    return ((master *)ev)->description;
}

static void master_set_samples(pf_evaluator *ev, int samples)
{
    ((master *)ev)->samples = samples;
}

static void master_set_frontier(pf_evaluator *ev, const pf_front_point *pts, int n)
{
    master *p = (master *)ev;
    free(p->front);
    p->front = pf_front_copy(pts, n);
    p->n_front = n;
}

/* "workers 14 busy 2 idle 1 lost; per node: a 1.52/s b 1.49/s" (the slowest and fastest of
 * many nodes). */
static const char *master_load(pf_evaluator *ev)
{
    master *p = (master *)ev;
    int busy = 0, idle = 0;
    for (int r = 1; r < p->m->size; r++) {
        busy += p->w[r].state == W_BUSY;
        idle += p->w[r].state == W_IDLE;
    }
    double secs = fmax((pf_mpi_now_ms() - p->t_start) / 1000, 1e-3);
    int n = snprintf(p->load_line, sizeof p->load_line, "workers %d busy %d idle", busy, idle);
    if (p->lost + p->failed)
        n += snprintf(p->load_line + n, sizeof p->load_line - (size_t)n, " %d lost",
                      p->lost + p->failed);
    if (p->n_nodes <= 4) {
        for (int i = 0; i < p->n_nodes && n < (int)sizeof p->load_line - 40; i++)
            n += snprintf(p->load_line + n, sizeof p->load_line - (size_t)n, "%s %.40s %.2f/s",
                          i ? "," : ";", p->nodes[i].host, p->nodes[i].done / secs);
        return p->load_line;
    }
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        lo = fmin(lo, p->nodes[i].done / secs);
        hi = fmax(hi, p->nodes[i].done / secs);
    }
    snprintf(p->load_line + n, sizeof p->load_line - (size_t)n, "; %d nodes %.2f-%.2f/s each",
             p->n_nodes, lo, hi);
    return p->load_line;
}

static const char *master_note(pf_evaluator *ev)
{
    master *p = (master *)ev;
    free(p->note_out);
    p->note_out = NULL;
    if (p->notes_taken == p->n_notes)
        return NULL;
    p->note_out = p->notes[p->notes_taken];
    p->notes[p->notes_taken++] = NULL;
    return p->note_out;
}

/* Tells every worker still in the run to exit and waits (sleeping) for its goodbye, at most
 * the deadline, and not at all after a stop request (the job is ending). One that does not
 * answer counts as lost: MPI is then ended with MPI_Abort, not an MPI_Finalize that would
 * wait for it forever. */
static void goodbye(master *p)
{
    static char empty[1];
    if (p->said_goodbye)
        return;
    p->said_goodbye = true;
    for (int r = 1; r < p->m->size; r++) {
        worker *w = &p->w[r];
        if (w->state == W_LOST)
            continue;
        MPI_Request req;
        if (MPI_Isend(empty, 0, MPI_CHAR, r, PF_TAG_EXIT, MPI_COMM_WORLD, &req) == MPI_SUCCESS)
            MPI_Request_free(&req);
        w->state = W_LEAVING;
    }
    bool stopping = p->base.stop && *p->base.stop;
    double end = pf_mpi_now_ms() + (stopping ? 0 : p->deadline_ms);
    for (;;) {
        int leaving = 0;
        for (int r = 1; r < p->m->size; r++)
            leaving += p->w[r].state == W_LEAVING;
        if (leaving == 0 || pf_mpi_now_ms() > end) {
            p->lost += leaving;
            return;
        }
        pump(p, INFINITY);
    }
}

static void free_job(job *j)
{
    free(j->schedule);
}

static void master_destroy(pf_evaluator *ev)
{
    master *p = (master *)ev;
    goodbye(p);
    for (int r = 1; r < p->m->size; r++) {
        free_job(&p->w[r].job);
        if (p->w[r].send_buf && p->w[r].state == W_GONE)
            MPI_Wait(&p->w[r].send, MPI_STATUS_IGNORE);  /* received: returns at once */
        free(p->w[r].send_buf);  /* a lost worker's too: MPI_Abort comes next */
    }
    while (p->q_n > 0) {
        job j = queue_pop(p);
        free_job(&j);
    }
    for (int i = 0; i < p->d_n; i++)
        pf_record_free(&p->done[i]);
    for (int i = 0; i < p->n_notes; i++)
        free(p->notes[i]);
    for (int i = 0; i < p->n_nodes; i++)
        free(p->nodes[i].host);
    free(p->notes);
    free(p->note_out);
    free(p->nodes);
    free(p->queue);
    free(p->done);
    free(p->front);
    free(p->w);
    free(p);
}

static const pf_evaluator_ops master_ops = { .submit = master_submit, .wait = master_wait,
                                             .describe = master_describe,
                                             .destroy = master_destroy,
                                             .set_frontier = master_set_frontier,
                                             .set_samples = master_set_samples,
                                             .load = master_load, .note = master_note };

int pf_mpi_master_close(pf_evaluator *ev)
{
    master *p = (master *)ev;
    goodbye(p);
    int lost = p->lost;
    master_destroy(ev);
    return lost;
}

/* ---- start ---- */

/* The job every worker gets: the evaluation config and how to behave. */
static char *job_text(const pf_eval_config *cfg, const char *run_dir, const pf_mpi_options *opt)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "eval", pf_eval_config_to_json(cfg));
    char id[32];
    uint64_t h = 0xcbf29ce484222325ull;  /* FNV-1a of the run directory: the node's lock name */
    for (const char *s = run_dir; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    snprintf(id, sizeof id, "%016llx", (unsigned long long)h);
    json_object_object_add(o, "lock_id", json_object_new_string(id));
    json_object_object_add(o, "heartbeat_s", json_object_new_double(opt->deadline_s / 4));
    json_object_object_add(o, "watchdog_ms", json_object_new_double(opt->watchdog_ms));
    json_object_object_add(o, "broadcast", json_object_new_boolean(opt->broadcast_data));
    char *s = pf_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return s;
}

static void describe(master *p, const pf_mpi_options *opt)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_printf(&sb, "MPI: rank 0 (%s) runs the search, %d worker rank%s on %d node%s", p->m->host,
                 live_workers(p), live_workers(p) == 1 ? "" : "s", p->n_nodes,
                 p->n_nodes == 1 ? "" : "s");
    for (int i = 0; i < p->n_nodes && i < 8; i++)
        pf_sb_printf(&sb, "%s %s (%d worker%s, %d cores)", i ? "," : ":", p->nodes[i].host,
                     p->nodes[i].workers, p->nodes[i].workers == 1 ? "" : "s", p->nodes[i].cores);
    pf_sb_printf(&sb, "; each worker rank evaluates in a process of its own (posix_spawn), "
                 "restarted after a crash or hang; the workers of a node follow the node "
                 "protocol on a node-local lock: they build together and time one at a time "
                 "with the node quiet; a worker silent for %g s is dropped and its candidate "
                 "dispatched again; data %s", opt->deadline_s,
                 opt->broadcast_data ? "broadcast by rank 0 (--broadcast-data)"
                                     : "read from the shared filesystem");
    snprintf(p->description, sizeof p->description, "%s", pf_sb_str(&sb));
    pf_sb_free(&sb);
    for (int i = 0; i < p->n_nodes; i++)
        if (p->nodes[i].cores > 0 && p->nodes[i].workers > p->nodes[i].cores)
            note(p, "node %s oversubscribes its cores: %d worker ranks (%d ranks in all) on %d "
                 "cores; builds share cores, timing stays one candidate at a time with the node "
                 "quiet", p->nodes[i].host, p->nodes[i].workers, p->nodes[i].ranks,
                 p->nodes[i].cores);
}

/* Waits until every worker is ready, failed or silent past the start-up limit. */
static void wait_ready(master *p, double limit_ms)
{
    for (;;) {
        bool starting = false;
        for (int r = 1; r < p->m->size; r++)
            starting |= p->w[r].state == W_STARTING;
        if (!starting)
            return;
        pump(p, limit_ms);
    }
}

pf_evaluator *pf_mpi_master_new(pf_mpi *m, const pf_eval_config *cfg, const char *run_dir,
                                const pf_mpi_options *opt, pf_error *err)
{
    char *text = job_text(cfg, run_dir, opt);
    int rc = pf_mpi_bcast_text(&text, err);
    free(text);
    pf_eval_config copy;
    pf_eval_config_copy(&copy, cfg);
    if (rc == 0 && opt->broadcast_data)
        rc = pf_mpi_share_data(m, &copy, NULL, NULL, err);
    pf_eval_config_free(&copy);
    if (rc != 0)
        return NULL;
    master *p = pf_xcalloc(1, sizeof *p);
    p->base.ops = &master_ops;
    p->m = m;
    p->deadline_ms = opt->deadline_s * 1000;
    p->w = pf_xcalloc((size_t)m->size, sizeof *p->w);
    double now = pf_mpi_now_ms();
    for (int r = 1; r < m->size; r++)
        p->w[r].last_heard = now;
    pf_mpi_backoff_reset(&p->backoff);
    wait_ready(p, (opt->watchdog_ms > 0 ? opt->watchdog_ms : 600000) + p->deadline_ms);
    if (live_workers(p) == 0) {
        pf_fail(err, "no worker rank started%s%s", p->first_failure[0] ? ": " : "",
                p->first_failure);
        master_destroy(&p->base);
        return NULL;
    }
    describe(p, opt);
    p->t_start = pf_mpi_now_ms();
    return &p->base;
}
