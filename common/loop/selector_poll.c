/* selector_poll.c — the poll(2) backend: a compact pollfd array (one entry per watched
 * descriptor, removed by swapping in the last entry) plus an fd -> index map, so
 * changes are O(1); each wait passes and scans the whole array, as poll must. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "selector.h"
#include "selector_backend.h"

typedef struct {
    struct pollfd *pfds;
    int npfds, cap;
    int *index; /* index[fd] = position in pfds, or -1 */
    int nindex;
} poll_state;

static void *poll_create(char *err, size_t errlen)
{
    (void)err, (void)errlen;
    return xcalloc(1, sizeof(poll_state));
}

static void poll_destroy(void *b)
{
    poll_state *st = b;
    free(st->pfds);
    free(st->index);
    free(st);
}

static short to_poll(int events)
{
    return (short)((events & SEL_READ ? POLLIN : 0) | (events & SEL_WRITE ? POLLOUT : 0));
}

/* Make room for one more pollfd and for index[fd]. */
static void poll_reserve(poll_state *st, int fd)
{
    if (st->npfds == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 64;
        st->pfds = xreallocarray(st->pfds, (size_t)st->cap, sizeof *st->pfds);
    }
    if (fd >= st->nindex) {
        int n = st->nindex ? st->nindex : 64;
        while (n <= fd)
            n *= 2;
        st->index = xreallocarray(st->index, (size_t)n, sizeof *st->index);
        for (int i = st->nindex; i < n; i++)
            st->index[i] = -1;
        st->nindex = n;
    }
}

static void poll_remove(poll_state *st, int fd)
{
    if (fd >= st->nindex || st->index[fd] < 0)
        return;
    int i = st->index[fd];
    struct pollfd last = st->pfds[--st->npfds];
    if (i != st->npfds) {
        st->pfds[i] = last;
        st->index[last.fd] = i;
    }
    st->index[fd] = -1;
}

static int poll_set(void *b, int fd, int old_events, int new_events)
{
    poll_state *st = b;
    (void)old_events;

    if (new_events == 0) {
        poll_remove(st, fd);
        return 0;
    }
    if (fd < st->nindex && st->index[fd] >= 0) {
        st->pfds[st->index[fd]].events = to_poll(new_events);
        return 0;
    }
    /* poll would only say POLLNVAL for a bad fd; refuse it now, as epoll would. */
    if (fcntl(fd, F_GETFD) < 0)
        return -1;
    poll_reserve(st, fd);
    st->pfds[st->npfds] = (struct pollfd){.fd = fd, .events = to_poll(new_events)};
    st->index[fd] = st->npfds++;
    return 0;
}

static int poll_wait_fired(void *b, int timeout_ms, sel_fired *fired, int max)
{
    poll_state *st = b;
    int n = poll(st->pfds, (nfds_t)st->npfds, timeout_ms);
    if (n <= 0)
        return n;

    int out = 0;
    for (int i = 0; i < st->npfds && out < n && out < max; i++) {
        short r = st->pfds[i].revents;
        if (!r)
            continue;
        fired[out].fd = st->pfds[i].fd;
        fired[out].events = (r & POLLIN ? SEL_READ : 0) | (r & POLLOUT ? SEL_WRITE : 0)
            | (r & (POLLERR | POLLHUP | POLLNVAL) ? SEL_ERROR : 0);
        out++;
    }
    return out;
}

const sel_backend_ops sel_backend_poll = {
    .name = "poll",
    .fd_limit = 0,
    .create = poll_create,
    .destroy = poll_destroy,
    .set = poll_set,
    .wait = poll_wait_fired,
};
