/* The pool's wire format over a Unix stream socket: one type byte, a 32-bit length, then the
 * payload (JSON or text). Master -> worker: 'Q' request {"id","set","schedule"}, 'X' exit.
 * Worker -> master: 'R' ready, 'F' failed to start (message), 'H' heartbeat (phase), 'E' the
 * evaluation record (search/eval.h's JSON). */
#ifndef PF_CLUSTER_POOL_PROTO_H
#define PF_CLUSTER_POOL_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PF_POOL_MAX_MESSAGE ((uint32_t)64 << 20)

/* Sends one message (MSG_NOSIGNAL: a dead peer is an error, not SIGPIPE). */
int pf_pool_send(int fd, char type, const char *payload, size_t len);
/* Receives one message; *payload is malloc'd and NUL-terminated. Returns 0, or -1 on EOF,
 * error or an oversized message. */
int pf_pool_recv(int fd, char *type, char **payload, size_t *len);

/* The worker process: runs until the master says exit or goes away; never returns. */
struct pf_eval_config;
_Noreturn void pf_pool_worker_main(const struct pf_eval_config *cfg, int id, int fd,
                                   int parent_pid);

#endif
