/* selector_select.c — the select(2) backend, the chapter's DefaultSelector on systems
 * without epoll: two fd_sets copied into every call, and a scan up to the highest
 * descriptor afterwards. Descriptors must be below FD_SETSIZE (the core refuses
 * others before they reach this file). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/select.h>

#include "alloc.h"
#include "selector.h"
#include "selector_backend.h"

typedef struct {
    fd_set rfds, wfds;
    int maxfd; /* highest fd in either set, or -1 */
} select_state;

static void *select_create(char *err, size_t errlen)
{
    (void)err, (void)errlen;
    select_state *st = xmalloc(sizeof *st);
    FD_ZERO(&st->rfds);
    FD_ZERO(&st->wfds);
    st->maxfd = -1;
    return st;
}

static void select_destroy(void *b)
{
    free(b);
}

static int watched(const select_state *st, int fd)
{
    return FD_ISSET(fd, &st->rfds) || FD_ISSET(fd, &st->wfds);
}

static int select_set(void *b, int fd, int old_events, int new_events)
{
    select_state *st = b;

    /* select fails as a whole (EBADF) on one bad fd: refuse it up front. */
    if (old_events == 0 && fcntl(fd, F_GETFD) < 0)
        return -1;
    FD_CLR(fd, &st->rfds);
    FD_CLR(fd, &st->wfds);
    if (new_events & SEL_READ)
        FD_SET(fd, &st->rfds);
    if (new_events & SEL_WRITE)
        FD_SET(fd, &st->wfds);
    if (new_events && fd > st->maxfd)
        st->maxfd = fd;
    while (st->maxfd >= 0 && !watched(st, st->maxfd))
        st->maxfd--;
    return 0;
}

/* After EBADF: report each watched fd that is no longer open as an error, so its
 * callback's read or write fails and the owner can unregister it. */
static int report_bad_fds(select_state *st, sel_fired *fired, int max)
{
    int out = 0;
    for (int fd = 0; fd <= st->maxfd && out < max; fd++) {
        if (watched(st, fd) && fcntl(fd, F_GETFD) < 0) {
            fired[out].fd = fd;
            fired[out].events = SEL_ERROR;
            out++;
        }
    }
    return out;
}

static int select_wait_fired(void *b, int timeout_ms, sel_fired *fired, int max)
{
    select_state *st = b;
    fd_set r = st->rfds, w = st->wfds;
    struct timeval tv, *tvp = NULL;

    if (timeout_ms >= 0) {
        tv.tv_sec = timeout_ms / 1000;
        tv.tv_usec = (timeout_ms % 1000) * 1000;
        tvp = &tv;
    }
    int n = select(st->maxfd + 1, &r, &w, NULL, tvp);
    if (n < 0 && errno == EBADF)
        return report_bad_fds(st, fired, max);
    if (n <= 0)
        return n;

    int out = 0;
    for (int fd = 0; fd <= st->maxfd && out < max; fd++) {
        int ev = (FD_ISSET(fd, &r) ? SEL_READ : 0) | (FD_ISSET(fd, &w) ? SEL_WRITE : 0);
        if (ev) {
            fired[out].fd = fd;
            fired[out].events = ev;
            out++;
        }
    }
    return out;
}

const sel_backend_ops sel_backend_select = {
    .name = "select",
    .fd_limit = FD_SETSIZE,
    .create = select_create,
    .destroy = select_destroy,
    .set = select_set,
    .wait = select_wait_fired,
};
