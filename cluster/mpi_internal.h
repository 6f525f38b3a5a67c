/* What the MPI files share: the session, the message tags and the sleeping waits. Every
 * message is bytes (MPI_CHAR): JSON, or the data blob of --broadcast-data. */
#ifndef PF_CLUSTER_MPI_INTERNAL_H
#define PF_CLUSTER_MPI_INTERNAL_H

#include "cluster/mpi.h"

#include <mpi.h>

struct pf_mpi {
    int rank, size;
    MPI_Comm node;        /* the ranks on this host (MPI_Comm_split_type, shared memory) */
    int node_rank, node_size;
    char host[MPI_MAX_PROCESSOR_NAME];
};

/* Tags. Master -> worker: a candidate (the pool's request JSON), exit. Worker -> master:
 * ready {"host","cores","node_ranks"}, failed (message), a record (JSON), a heartbeat, and
 * goodbye (after exit: its evaluation process is gone, MPI_Finalize comes next). */
enum {
    PF_TAG_REQUEST = 1,
    PF_TAG_EXIT,
    PF_TAG_READY,
    PF_TAG_FAILED,
    PF_TAG_RECORD,
    PF_TAG_HEARTBEAT,
    PF_TAG_BYE,
};

/* A text from rank 0 to every rank (the job: {"eval": config, "lock_id", "heartbeat_s",
 * "watchdog_ms", "broadcast"}); *text is malloc'd on the others. */
int pf_mpi_bcast_text(char **text, pf_error *err);

/* A message from `source` (MPI_ANY_SOURCE for any), if one is waiting: returns 1 with *payload
 * malloc'd and NUL-terminated, else 0. */
int pf_mpi_poll(int source, int *from, int *tag, char **payload, int *len);
/* Sends and waits (sleeping) until the buffer is free again. */
int pf_mpi_send(int dest, int tag, const char *payload, int len);

/* Exponential back-off between polls: 10 us after a message, doubling up to 1 ms. */
typedef struct pf_mpi_backoff {
    long us;
} pf_mpi_backoff;
void pf_mpi_backoff_reset(pf_mpi_backoff *b);
void pf_mpi_backoff_sleep(pf_mpi_backoff *b);

/* --broadcast-data. Rank 0 (dir NULL): sends the program, a manifest of the config's images
 * and the images, as one blob. A worker: receives it; one worker rank per node writes it under
 * dir (*written: the files it wrote, NULL-terminated, for it to remove at the end; NULL on the
 * others), and cfg's program and dataset point there. Every rank calls it: a broadcast, then a
 * reduction on the node. */
int pf_mpi_share_data(pf_mpi *m, pf_eval_config *cfg, const char *dir, char ***written,
                      pf_error *err);
/* A broadcast from rank 0 of *n bytes (*data malloc'd on the other ranks, NUL-terminated). */
int pf_mpi_bcast_bytes(char **data, long long *n, pf_error *err);

double pf_mpi_now_ms(void);

#endif
