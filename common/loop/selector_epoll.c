/* selector_epoll.c — the epoll backend: the kernel keeps the interest list, so adding,
 * changing and removing a descriptor is one epoll_ctl each, and a wait costs in
 * proportion to the descriptors that are ready, not to those registered. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "alloc.h"
#include "selector.h"
#include "selector_backend.h"

typedef struct {
    int epfd;
    struct epoll_event *events; /* epoll_wait's buffer, grown to the core's max */
    int cap;
} epoll_state;

static void *epoll_create_state(char *err, size_t errlen)
{
    epoll_state *st = xcalloc(1, sizeof *st);
    st->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (st->epfd < 0) {
        snprintf(err, errlen, "epoll backend: epoll_create1: %s", strerror(errno));
        free(st);
        return NULL;
    }
    return st;
}

static void epoll_destroy(void *b)
{
    epoll_state *st = b;
    close(st->epfd);
    free(st->events);
    free(st);
}

static uint32_t to_epoll(int events)
{
    return (events & SEL_READ ? EPOLLIN : 0) | (events & SEL_WRITE ? EPOLLOUT : 0);
}

static int epoll_set(void *b, int fd, int old_events, int new_events)
{
    epoll_state *st = b;
    struct epoll_event ev = {.events = to_epoll(new_events), .data.fd = fd};

    if (new_events == 0) {
        /* Fails harmlessly when fd was closed first: the kernel already dropped it. */
        epoll_ctl(st->epfd, EPOLL_CTL_DEL, fd, NULL);
        return 0;
    }
    int op = old_events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(st->epfd, op, fd, &ev) == 0)
        return 0;
    /* The kernel's view can differ from ours if the caller closed and reopened the
     * fd number without unregistering; fall back to the other operation. */
    if (op == EPOLL_CTL_MOD && errno == ENOENT)
        return epoll_ctl(st->epfd, EPOLL_CTL_ADD, fd, &ev);
    if (op == EPOLL_CTL_ADD && errno == EEXIST)
        return epoll_ctl(st->epfd, EPOLL_CTL_MOD, fd, &ev);
    return -1;
}

static int epoll_wait_fired(void *b, int timeout_ms, sel_fired *fired, int max)
{
    epoll_state *st = b;
    if (max > st->cap) {
        st->events = xreallocarray(st->events, (size_t)max, sizeof *st->events);
        st->cap = max;
    }
    int n = epoll_wait(st->epfd, st->events, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        uint32_t e = st->events[i].events;
        fired[i].fd = st->events[i].data.fd;
        fired[i].events = (e & EPOLLIN ? SEL_READ : 0) | (e & EPOLLOUT ? SEL_WRITE : 0)
            | (e & (EPOLLERR | EPOLLHUP) ? SEL_ERROR : 0);
    }
    return n;
}

const sel_backend_ops sel_backend_epoll = {
    .name = "epoll",
    .fd_limit = 0,
    .create = epoll_create_state,
    .destroy = epoll_destroy,
    .set = epoll_set,
    .wait = epoll_wait_fired,
};
