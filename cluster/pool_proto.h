/* The pool's wire format over a Unix stream socket: one type byte, a 32-bit length, then the
 * payload (JSON or text). Master -> worker: 'C' the evaluation config (JSON; only to a worker
 * started with exec), 'Q' request {"id","set","schedule","frontier":[[error,time],...]},
 * 'X' exit.
 * Worker -> master: 'R' ready, 'F' failed to start (message), 'H' heartbeat (phase), 'E' the
 * evaluation record (search/eval.h's JSON), 'Z' the same as its last: the worker ends after it
 * (a candidate faulted the GPU context; the master gives it no more work and starts another). */
#ifndef PF_CLUSTER_POOL_PROTO_H
#define PF_CLUSTER_POOL_PROTO_H

#include "search/eval.h"

#include <stddef.h>
#include <stdint.h>

#define PF_POOL_MAX_MESSAGE ((uint32_t)64 << 20)

/* Sends one message (MSG_NOSIGNAL: a dead peer is an error, not SIGPIPE). */
int pf_pool_send(int fd, char type, const char *payload, size_t len);
/* Receives one message; *payload is malloc'd and NUL-terminated. Returns 0, or -1 on EOF,
 * error or an oversized message. */
int pf_pool_recv(int fd, char *type, char **payload, size_t *len);

/* A request: {"id","set","schedule","frontier","samples"} (json-c object; the caller puts
 * it); samples 0 (or absent): the evaluation config's. */
struct json_object;
struct json_object *pf_pool_request_json(long id, pf_image_set set, const char *schedule,
                                         const pf_front_point *front, int n_front, int samples);
/* Reads a request; *schedule and *front are malloc'd (NULL front when empty). */
typedef struct pf_pool_request {
    long id;
    pf_image_set set;
    char *schedule;
    pf_front_point *front;
    int n_front;
    int samples;           /* timing samples per image (0: the config's) */
} pf_pool_request;
int pf_pool_request_parse(const char *json, pf_pool_request *q, pf_error *err);
void pf_pool_request_free(pf_pool_request *q);

/* The worker process: runs until the master says exit or goes away; never returns. */
struct pf_eval_config;
_Noreturn void pf_pool_worker_main(const struct pf_eval_config *cfg, int id, int fd,
                                   int parent_pid);

#endif
