/* selector_backend.h — the private interface between the selector core and its
 * backends (epoll, poll, select), after redis's ae_epoll.c / ae_select.c.
 *
 * A backend only mirrors, in the kernel, which descriptors the core wants watched and
 * for what, and reports which ones are ready. It knows nothing of callbacks, timers or
 * registrations: the core owns all of that.
 */
#ifndef CRAWL_SELECTOR_BACKEND_H
#define CRAWL_SELECTOR_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* Reported alongside SEL_READ/SEL_WRITE for an error or hang-up; the core turns it into
 * whatever events the descriptor is registered for. */
enum { SEL_ERROR = 4 };

/* One ready descriptor. The backend fills fd and events; the core stamps gen with the
 * registration the event belongs to. */
typedef struct sel_fired {
    int fd;
    int events;
    uint32_t gen;
} sel_fired;

typedef struct sel_backend_ops {
    const char *name;
    /* Descriptors >= fd_limit cannot be watched (select's FD_SETSIZE); 0 = no limit. */
    int fd_limit;
    /* NULL on failure, with a message in err. */
    void *(*create)(char *err, size_t errlen);
    void (*destroy)(void *b);
    /* Change what the kernel watches for fd from old_events to new_events (both
     * SEL_READ|SEL_WRITE; 0 means not watched: old 0 adds, new 0 deletes). The core
     * only calls it when they differ. Returns 0, or -1 with errno. Deleting never
     * fails (the descriptor may already be closed). */
    int (*set)(void *b, int fd, int old_events, int new_events);
    /* Wait up to timeout_ms (-1 = forever) and write at most max ready descriptors to
     * fired, one entry per fd. Returns how many, or -1 with errno (EINTR included). */
    int (*wait)(void *b, int timeout_ms, sel_fired *fired, int max);
} sel_backend_ops;

extern const sel_backend_ops sel_backend_epoll;
extern const sel_backend_ops sel_backend_poll;
extern const sel_backend_ops sel_backend_select;

#endif
