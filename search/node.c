/* The node protocol's locks (see node.h): open file description locks on two bytes of the
 * node's lock file. */
#define _GNU_SOURCE /* F_OFD_SETLKW (Linux 3.15) */
#include "search/node.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

enum { QUEUE_BYTE = 0, NODE_BYTE = 1 };

/* Sets (F_RDLCK / F_WRLCK, waiting) or drops (F_UNLCK) the lock on one byte. */
static void lock_byte(const pf_node *n, int byte, short type)
{
    if (n->fd < 0)
        return;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = byte;
    fl.l_len = 1;
    while (fcntl(n->fd, F_OFD_SETLKW, &fl) != 0 && errno == EINTR)
        ;  /* a signal (a heartbeat timer) interrupted the wait: wait again */
}

int pf_node_open(pf_node *n, const char *path, pf_error *err)
{
    n->fd = -1;
    if (!path)
        return 0;
    n->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (n->fd < 0)
        return pf_fail(err, "cannot open the node's timing lock %s: %s", path, strerror(errno));
    return 0;
}

void pf_node_close(pf_node *n)
{
    if (n->fd >= 0)
        close(n->fd);
    n->fd = -1;
}

void pf_node_build_begin(pf_node *n)
{
    lock_byte(n, QUEUE_BYTE, F_WRLCK);  /* granted once no worker wants to time */
    lock_byte(n, NODE_BYTE, F_RDLCK);   /* never waits: timers hold the queue */
    lock_byte(n, QUEUE_BYTE, F_UNLCK);
}

void pf_node_build_end(pf_node *n)
{
    lock_byte(n, NODE_BYTE, F_UNLCK);
}

void pf_node_time_announce(pf_node *n)
{
    lock_byte(n, QUEUE_BYTE, F_RDLCK);
}

void pf_node_time_acquire(pf_node *n)
{
    lock_byte(n, NODE_BYTE, F_WRLCK);
}

void pf_node_time_begin(pf_node *n)
{
    pf_node_time_announce(n);
    pf_node_time_acquire(n);
}

void pf_node_time_end(pf_node *n)
{
    lock_byte(n, NODE_BYTE, F_UNLCK);
    lock_byte(n, QUEUE_BYTE, F_UNLCK);
}
