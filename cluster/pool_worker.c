/* The pool's wire format and the worker process's loop (see pool_proto.h). */
#include "cluster/pool.h"
#include "cluster/pool_proto.h"

#include "base/arena.h"
#include "search/evaluate.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *data, size_t len)
{
    char *p = data;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int pf_pool_send(int fd, char type, const char *payload, size_t len)
{
    char head[5];
    uint32_t n = (uint32_t)len;
    head[0] = type;
    memcpy(head + 1, &n, 4);
    char *msg = pf_xmalloc(len + 5);  /* one write: a message is never interleaved */
    memcpy(msg, head, 5);
    if (len)
        memcpy(msg + 5, payload, len);
    int rc = write_all(fd, msg, len + 5);
    free(msg);
    return rc;
}

int pf_pool_recv(int fd, char *type, char **payload, size_t *len)
{
    char head[5];
    uint32_t n;
    if (read_all(fd, head, 5) != 0)
        return -1;
    memcpy(&n, head + 1, 4);
    if (n > PF_POOL_MAX_MESSAGE)
        return -1;
    char *p = pf_xmalloc((size_t)n + 1);
    if (read_all(fd, p, n) != 0) {
        free(p);
        return -1;
    }
    p[n] = '\0';
    *type = head[0];
    *payload = p;
    *len = n;
    return 0;
}

static void heartbeat(void *ctx, const char *phase)
{
    pf_pool_send(*(int *)ctx, 'H', phase, strlen(phase));
}

/* ---- requests ---- */

/* Seven significant digits, as the records hold them. */
static json_object *num(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", v);
    return json_object_new_double_s(v, buf);
}

json_object *pf_pool_request_json(long id, pf_image_set set, const char *schedule,
                                  const pf_front_point *front, int n_front, int samples)
{
    json_object *q = json_object_new_object();
    json_object_object_add(q, "id", json_object_new_int64(id));
    json_object_object_add(q, "set", json_object_new_string(pf_image_set_name(set)));
    json_object_object_add(q, "schedule", json_object_new_string(schedule));
    json_object *f = json_object_new_array();
    for (int i = 0; i < n_front; i++) {
        json_object *pt = json_object_new_array();
        json_object_array_add(pt, num(front[i].error));
        json_object_array_add(pt, num(front[i].time));
        json_object_array_add(f, pt);
    }
    json_object_object_add(q, "frontier", f);
    if (samples > 0)
        json_object_object_add(q, "samples", json_object_new_int(samples));
    return q;
}

static void read_frontier(json_object *a, pf_pool_request *q)
{
    int n = a && json_object_is_type(a, json_type_array) ? (int)json_object_array_length(a) : 0;
    q->front = n > 0 ? pf_xcalloc((size_t)n, sizeof *q->front) : NULL;
    for (int i = 0; i < n; i++) {
        json_object *pt = json_object_array_get_idx(a, (size_t)i);
        if (!json_object_is_type(pt, json_type_array) || json_object_array_length(pt) != 2)
            continue;
        q->front[q->n_front].error = json_object_get_double(json_object_array_get_idx(pt, 0));
        q->front[q->n_front++].time = json_object_get_double(json_object_array_get_idx(pt, 1));
    }
}

int pf_pool_request_parse(const char *json, pf_pool_request *q, pf_error *err)
{
    memset(q, 0, sizeof *q);
    json_object *o = json_tokener_parse(json), *v;
    if (!o || !json_object_object_get_ex(o, "schedule", &v) ||
        !json_object_is_type(v, json_type_string)) {
        json_object_put(o);
        return pf_fail(err, "a request needs a schedule");
    }
    q->schedule = pf_xstrdup(json_object_get_string(v));
    q->id = json_object_object_get_ex(o, "id", &v) ? (long)json_object_get_int64(v) : 0;
    const char *set = json_object_object_get_ex(o, "set", &v) ? json_object_get_string(v) : "";
    q->set = pf_image_set_parse(set);
    read_frontier(json_object_object_get_ex(o, "frontier", &v) ? v : NULL, q);
    q->samples = json_object_object_get_ex(o, "samples", &v) ? json_object_get_int(v) : 0;
    if (q->samples < 0)
        q->samples = 0;
    json_object_put(o);
    return 0;
}

void pf_pool_request_free(pf_pool_request *q)
{
    free(q->schedule);
    free(q->front);
    memset(q, 0, sizeof *q);
}

/* ---- the worker ---- */

static void serve(pf_eval_worker *w, int fd, const char *request)
{
    pf_pool_request q;
    pf_eval_record rec;
    pf_error err;
    if (pf_pool_request_parse(request, &q, &err) != 0) {
        pf_record_init(&rec);
        rec.schedule = pf_xstrdup("");
        pf_record_set_invalid(&rec, "bad request: %s", err.msg);
    } else {
        pf_eval_worker_set_frontier(w, q.front, q.n_front);
        pf_eval_worker_set_samples(w, q.samples);
        pf_eval_worker_evaluate(w, q.id, q.set, q.schedule, &rec);
    }
    pf_pool_request_free(&q);
    /* A candidate that faulted the GPU leaves the context lost: a fresh process has a fresh
     * one. 'Z' tells the master before it sends another candidate, which would otherwise be
     * recorded as this exit's crash. */
    bool broken = pf_eval_worker_broken(w);
    char *json = pf_record_to_json(&rec);
    pf_pool_send(fd, broken ? 'Z' : 'E', json, strlen(json));
    free(json);
    pf_record_free(&rec);
    if (broken)
        _exit(3);
}

/* _exit, never exit: the worker is a fork of the master (or of a test program) and must not
 * run its atexit handlers or flush its stdio buffers a second time. */
_Noreturn void pf_pool_worker_main(const pf_eval_config *cfg, int id, int fd, int parent_pid)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);  /* die with the master, even after kill -9 */
    if (getppid() != parent_pid)   /* it died before prctl took effect */
        _exit(1);
    signal(SIGALRM, SIG_DFL);  /* the run-time limit kills the worker */
    /* A stop (Ctrl-C, a batch system's SIGTERM) is the master's to handle: it records nothing
     * more and ends its workers, which must not die first (their candidates would be recorded
     * as crashes). SIGUSR1 is MPICH's word that a rank died. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGUSR1, SIG_IGN);
    pf_error err;
    pf_eval_worker *w = pf_eval_worker_new(cfg, id, &err);
    if (w)  /* starting (measuring the exact program) is not silence either */
        pf_eval_worker_set_heartbeat(w, heartbeat, &fd);
    if (!w || pf_eval_worker_prepare(w, PF_SET_TRAIN, &err) != 0) {
        pf_pool_send(fd, 'F', err.msg, strlen(err.msg));
        _exit(1);
    }
    pf_eval_worker_use_alarms(w, true);
    pf_pool_send(fd, 'R', "", 0);
    for (;;) {
        char type;
        char *msg;
        size_t len;
        if (pf_pool_recv(fd, &type, &msg, &len) != 0 || type == 'X')
            _exit(0);
        if (type == 'Q')
            serve(w, fd, msg);
        free(msg);
    }
}

/* A worker started by exec: the config comes first, over the socket. */
_Noreturn void pf_pool_worker_exec_main(int argc, char **argv)
{
    if (argc < 5)
        _exit(2);
    int fd = atoi(argv[2]), parent = atoi(argv[3]), id = atoi(argv[4]);
    fcntl(fd, F_SETFD, FD_CLOEXEC);  /* not for the compilers a C backend may run */
    char type, *msg;
    size_t len;
    if (pf_pool_recv(fd, &type, &msg, &len) != 0 || type != 'C')
        _exit(1);
    pf_eval_config cfg;
    pf_error err;
    json_object *o = json_tokener_parse(msg);
    free(msg);
    if (pf_eval_config_from_json(o, &cfg, &err) != 0) {
        pf_pool_send(fd, 'F', err.msg, strlen(err.msg));
        _exit(1);
    }
    json_object_put(o);
    pf_pool_worker_main(&cfg, id, fd, parent);
}
