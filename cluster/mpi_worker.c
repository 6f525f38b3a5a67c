/* A worker rank of the search over MPI (see mpi.h): it receives the job, starts its evaluation
 * process (a pool of one, started with posix_spawn), says it is ready, then relays candidates
 * from rank 0 to that process and records back, with a heartbeat while one is in flight. It
 * waits by polling with sleeps: a spinning rank would take a core from the candidate the node
 * is timing. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "cluster/mpi_internal.h"
#include "cluster/pool.h"
#include "cluster/pool_proto.h"

#include "base/arena.h"

#include <json-c/json.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct relay {
    pf_mpi *m;
    pf_eval_config cfg;
    pf_evaluator *pool;    /* NULL with the "instant" hook */
    double heartbeat_ms, watchdog_ms;
    bool broadcast;
    char lock_id[32];
    char data_dir[512];
    char **written;        /* the broadcast data this rank wrote for its node */
    long served;
    int exit_rank, exit_after;  /* PF_MPI_TEST_HOOK exit:R:K (-1: none) */
    bool instant;
} relay;

static void read_hook(relay *r)
{
    r->exit_rank = -1;
    const char *h = getenv(PF_MPI_TEST_HOOK_ENV);
    if (!h)
        return;
    if (strcmp(h, "instant") == 0)
        r->instant = true;
    else if (sscanf(h, "exit:%d:%d", &r->exit_rank, &r->exit_after) != 2)
        r->exit_rank = -1;
}

/* The job rank 0 broadcast (mpi_master.c's job_text). */
static int read_job(relay *r, const char *text, pf_error *err)
{
    json_object *o = json_tokener_parse(text), *v;
    if (!o || !json_object_object_get_ex(o, "eval", &v) ||
        pf_eval_config_from_json(v, &r->cfg, err) != 0) {
        json_object_put(o);
        return pf_fail(err, "rank %d: a bad job from rank 0", r->m->rank);
    }
    if (json_object_object_get_ex(o, "lock_id", &v))
        snprintf(r->lock_id, sizeof r->lock_id, "%s", json_object_get_string(v));
    r->heartbeat_ms = json_object_object_get_ex(o, "heartbeat_s", &v)
                          ? 1000 * json_object_get_double(v) : 15000;
    r->watchdog_ms = json_object_object_get_ex(o, "watchdog_ms", &v) ? json_object_get_double(v)
                                                                     : 0;
    r->broadcast = json_object_object_get_ex(o, "broadcast", &v) && json_object_get_boolean(v);
    json_object_put(o);
    return 0;
}

/* The node-local place of the node protocol's lock (and of broadcast data): every worker of
 * the run on this host names the same file; a shared filesystem's locks would span nodes. */
static void node_paths(relay *r)
{
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char lock[600];
    snprintf(lock, sizeof lock, "%s/perfora-%u-%s.lock", tmp, (unsigned)getuid(), r->lock_id);
    free(r->cfg.lock_path);
    r->cfg.lock_path = pf_xstrdup(lock);
    snprintf(r->data_dir, sizeof r->data_dir, "%s/perfora-%u-%s-data", tmp, (unsigned)getuid(),
             r->lock_id);
}

static int cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int start(relay *r, pf_error *err)
{
    char *text = NULL;
    if (pf_mpi_bcast_text(&text, err) != 0)
        return -1;
    int rc = read_job(r, text, err);
    free(text);
    if (rc != 0)
        return -1;
    node_paths(r);
    if (r->broadcast && pf_mpi_share_data(r->m, &r->cfg, r->data_dir, &r->written, err) != 0)
        return -1;
    if (r->instant)
        return 0;
    pf_pool_options opt = { .jobs = 1, .watchdog_ms = r->watchdog_ms, .exe = "/proc/self/exe",
                            .rank = r->m->rank };
    r->pool = pf_pool_new(&r->cfg, &opt, err);
    return r->pool ? 0 : -1;
}

static void say_ready(relay *r)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "host", json_object_new_string(r->m->host));
    json_object_object_add(o, "cores", json_object_new_int(cores()));
    json_object_object_add(o, "node_ranks", json_object_new_int(r->m->node_size));
    const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    pf_mpi_send(0, PF_TAG_READY, s, (int)strlen(s));
    json_object_put(o);
}

/* ---- one candidate ---- */

/* The "instant" hook's record: made up from the text, as the tests' fake evaluator does. */
static void instant_record(const pf_pool_request *q, pf_eval_record *rec)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = q->schedule; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    pf_record_init(rec);
    rec->id = q->id;
    rec->set = q->set;
    rec->schedule = pf_xstrdup(q->schedule);
    rec->valid = true;
    rec->time = 0.05 + (double)(h % 1000) / 1000.0;
    rec->error = (double)((h >> 20) % 2000) / 100.0;
    rec->n_images = 1;
    rec->images = pf_xcalloc(1, sizeof *rec->images);
    rec->images[0].rel_time = rec->time;
    rec->images[0].error = rec->error;
}

/* Waits for the pool's record, with a heartbeat to rank 0 every heartbeat_ms. Returns 1 with
 * the record, 0 when rank 0 said exit meanwhile, -1 when the pool failed. */
static int await_record(relay *r, pf_eval_record *rec, pf_error *err)
{
    for (;;) {
        int rc = pf_pool_wait_for(r->pool, rec, r->heartbeat_ms, err);
        if (rc == 1)
            return 1;
        if (rc != 2)
            return rc == 0 ? pf_fail(err, "the evaluation process lost the candidate") : -1;
        pf_mpi_send(0, PF_TAG_HEARTBEAT, "", 0);
        int from, tag, len;
        char *msg;
        if (pf_mpi_poll(0, &from, &tag, &msg, &len)) {
            free(msg);
            if (tag == PF_TAG_EXIT)
                return 0;
        }
    }
}

/* Returns 1 to go on, 0 on exit, -1 when this worker cannot go on. */
static int serve(relay *r, const char *request, pf_error *err)
{
    if (r->exit_rank == r->m->rank && r->served >= r->exit_after)
        _exit(1);  /* the test hook: a node that dies, with a candidate in flight */
    r->served++;
    pf_pool_request q;
    if (pf_pool_request_parse(request, &q, err) != 0)
        return -1;
    pf_eval_record rec;
    int rc = 1;
    if (r->instant) {
        instant_record(&q, &rec);
    } else {
        pf_evaluator_set_frontier(r->pool, q.front, q.n_front);
        pf_evaluator_set_samples(r->pool, q.samples);
        rc = pf_evaluator_submit(r->pool, q.id, q.set, q.schedule, err) == 0
                 ? await_record(r, &rec, err) : -1;
    }
    pf_pool_request_free(&q);
    if (rc != 1)
        return rc;
    rec.worker = rec.rank = r->m->rank;
    free(rec.host);
    rec.host = pf_xstrdup(r->m->host);
    char *json = pf_record_to_json(&rec);
    pf_mpi_send(0, PF_TAG_RECORD, json, (int)strlen(json));
    free(json);
    pf_record_free(&rec);
    return 1;
}

/* Until rank 0 says exit (its goodbye follows when the evaluation process is gone). After a
 * failure (told to rank 0, which drops this worker) the rank only waits for that word. */
static void serve_all(relay *r, bool failed)
{
    pf_mpi_backoff b;
    pf_mpi_backoff_reset(&b);
    for (;;) {
        int from, tag, len;
        char *msg;
        if (!pf_mpi_poll(0, &from, &tag, &msg, &len)) {
            pf_mpi_backoff_sleep(&b);
            continue;
        }
        pf_mpi_backoff_reset(&b);
        int rc = tag == PF_TAG_EXIT ? 0 : 1;
        if (rc && tag == PF_TAG_REQUEST && !failed) {
            pf_error err;
            rc = serve(r, msg, &err);
            if (rc < 0) {
                pf_mpi_send(0, PF_TAG_FAILED, err.msg, (int)strlen(err.msg));
                failed = true;
            }
        }
        free(msg);
        if (rc == 0)
            return;
    }
}

/* Removes the broadcast data this rank wrote, and the directories left empty. */
static void remove_written(relay *r)
{
    for (int i = 0; r->written && r->written[i]; i++) {
        unlink(r->written[i]);
        for (char *slash; (slash = strrchr(r->written[i], '/')) &&
                          (size_t)(slash - r->written[i]) > strlen(r->data_dir);) {
            *slash = '\0';
            rmdir(r->written[i]);
        }
        free(r->written[i]);
    }
    if (r->written)
        rmdir(r->data_dir);
    free(r->written);
}

int pf_mpi_worker_run(pf_mpi *m, pf_error *err)
{
    signal(SIGUSR1, SIG_IGN);  /* mpirun forwards the batch system's warning to every rank: it
                                  is for rank 0; ignored across exec by the evaluation process */
    relay r;
    memset(&r, 0, sizeof r);
    r.m = m;
    read_hook(&r);
    int rc = start(&r, err);
    if (rc == 0)
        say_ready(&r);
    else
        pf_mpi_send(0, PF_TAG_FAILED, err->msg, (int)strlen(err->msg));
    serve_all(&r, rc != 0);
    pf_evaluator_destroy(r.pool);
    remove_written(&r);
    pf_mpi_send(0, PF_TAG_BYE, "", 0);
    pf_eval_config_free(&r.cfg);
    return 0;
}
