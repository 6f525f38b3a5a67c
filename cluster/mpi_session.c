/* An MPI session of perfora: MPI_Init, the node communicator, the end;
 * and the message primitives every rank uses (sleeping polls, never a spinning wait). */
#include "cluster/mpi_internal.h"

#include "base/arena.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double pf_mpi_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

pf_mpi *pf_mpi_start(pf_error *err)
{
    int launched = pf_mpi_launched_size();
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        pf_fail(err, "MPI_Init failed");
        return NULL;
    }
    pf_mpi *m = pf_xcalloc(1, sizeof *m);
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    if (launched > 1 && m->size != launched) {
        pf_fail(err, "the launcher started %d processes but MPI sees %d: perfora was built with "
                "another MPI than the mpirun that started it (see README, \"Running on a "
                "cluster\")", launched, m->size);
        MPI_Finalize();
        free(m);
        return NULL;
    }
    /* a lost peer is our business (a record, a dropped worker), not a reason to abort */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &m->node);
    MPI_Comm_rank(m->node, &m->node_rank);
    MPI_Comm_size(m->node, &m->node_size);
    int len = 0;
    MPI_Get_processor_name(m->host, &len);
    return m;
}

int pf_mpi_rank(const pf_mpi *m)
{
    return m->rank;
}

int pf_mpi_size(const pf_mpi *m)
{
    return m->size;
}

void pf_mpi_end(pf_mpi *m, bool lost)
{
    fflush(NULL);
    if (lost)
        MPI_Abort(MPI_COMM_WORLD, 0);
    MPI_Comm_free(&m->node);
    MPI_Finalize();
    free(m);
}

_Noreturn void pf_mpi_abort(pf_mpi *m, int status)
{
    (void)m;
    fflush(NULL);
    MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);  /* MPI_Abort does not return; the compiler does not know */
}

/* ---- messages ---- */

int pf_mpi_bcast_bytes(char **data, long long *n, pf_error *err)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (MPI_Bcast(n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return pf_fail(err, "MPI_Bcast failed");
    if (*n > 0x7fffffffLL)
        return pf_fail(err, "a broadcast of %lld bytes is over MPI's 2 GiB count", *n);
    if (rank != 0) {
        *data = pf_xmalloc((size_t)*n + 1);
        (*data)[*n] = '\0';
    }
    if (MPI_Bcast(*data, (int)*n, MPI_CHAR, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return pf_fail(err, "MPI_Bcast failed");
    return 0;
}

int pf_mpi_bcast_text(char **text, pf_error *err)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long long n = rank == 0 ? (long long)strlen(*text) : 0;
    return pf_mpi_bcast_bytes(text, &n, err);
}

int pf_mpi_poll(int source, int *from, int *tag, char **payload, int *len)
{
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag)
        return 0;
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    char *buf = pf_xmalloc((size_t)n + 1);
    /* the message is there: this receive does not wait */
    if (MPI_Recv(buf, n, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        free(buf);
        return 0;
    }
    buf[n] = '\0';
    *from = st.MPI_SOURCE;
    *tag = st.MPI_TAG;
    *payload = buf;
    *len = n;
    return 1;
}

int pf_mpi_send(int dest, int tag, const char *payload, int len)
{
    MPI_Request req;
    if (MPI_Isend(payload, len, MPI_CHAR, dest, tag, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        return -1;
    pf_mpi_backoff b;
    pf_mpi_backoff_reset(&b);
    for (;;) {
        int done = 0;
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        if (done)
            return 0;
        pf_mpi_backoff_sleep(&b);
    }
}

void pf_mpi_backoff_reset(pf_mpi_backoff *b)
{
    b->us = 10;
}

void pf_mpi_backoff_sleep(pf_mpi_backoff *b)
{
    struct timespec ts = { 0, b->us * 1000 };
    nanosleep(&ts, NULL);
    if (b->us < 1000)
        b->us = b->us * 2 > 1000 ? 1000 : b->us * 2;
}
