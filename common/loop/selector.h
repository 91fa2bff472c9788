/* selector.h — the event loop of the chapter, shared by all three stages.
 *
 * One API, three backends (selector_epoll.c, selector_poll.c, selector_select.c), in
 * the manner of redis's ae.c: the core (selector.c) keeps, per file descriptor, the
 * events wanted and the callback to run; a backend only tells the kernel what to watch
 * and reports which descriptors are ready.
 *
 *   selector *s = selector_new("epoll", err, sizeof err);
 *   selector_register(s, fd, SEL_WRITE, connected, fetcher);
 *   selector_run(s);            // until selector_stop(s) — the chapter's `stopped`
 *
 * Timers: selector_call_later(s, ms, cb, data) returns a handle that stays valid until
 * the timer fires or is cancelled with selector_cancel(); call_soon is a zero delay.
 * Timers due at the same moment fire in the order they were added.
 *
 * Callbacks may register, modify and unregister any descriptor (their own included),
 * add and cancel timers, and stop the loop. A descriptor unregistered during an
 * iteration gets no further callbacks in that iteration.
 *
 * Other threads reach the loop only through selector_wakeup (see the end of this file
 * and threadpool.h: call_from_thread).
 */
#ifndef CRAWL_SELECTOR_H
#define CRAWL_SELECTOR_H

#include <stddef.h>
#include <stdint.h>

typedef struct selector selector;
typedef struct sel_timer sel_timer;

/* Event masks: what a descriptor is registered for, and what fired. */
enum { SEL_NONE = 0, SEL_READ = 1, SEL_WRITE = 2 };

/* An I/O callback gets the events that fired (SEL_READ and/or SEL_WRITE; an error or
 * hang-up is reported as whichever of the registered events applies, so the callback's
 * next read or write sees it). */
typedef void (*sel_io_fn)(selector *s, int fd, int events, void *data);
typedef void (*sel_timer_fn)(selector *s, void *data);

/* Create a selector with the named backend: "epoll", "poll" or "select" (NULL means the
 * default, epoll). On failure returns NULL with a one-line message in err. */
selector *selector_new(const char *backend, char *err, size_t errlen);
/* Frees the selector and any pending timers. Registered descriptors are not closed. */
void selector_free(selector *s);
/* The backend's name, as given to selector_new. */
const char *selector_backend(const selector *s);
/* The backend names, NULL-terminated, default first. */
extern const char *const selector_backends[];

/* Watch fd for `events` (SEL_READ|SEL_WRITE) and call fn(s, fd, fired, data).
 * Registering an fd that is already registered replaces its events, fn and data.
 * Returns 0, or -1 with errno set (EBADF, ENOMEM; ERANGE when the select backend is
 * given an fd >= FD_SETSIZE — selector_error() then names the limit). */
int selector_register(selector *s, int fd, int events, sel_io_fn fn, void *data);
/* Change the events (and callback) of a registered fd. Same return as register. */
int selector_modify(selector *s, int fd, int events, sel_io_fn fn, void *data);
/* Stop watching fd. Unregistering an fd that is not registered is a no-op (returns 0). */
int selector_unregister(selector *s, int fd);
/* The last registration error as one line, e.g.
 * "select backend: fd 1030 is over FD_SETSIZE (1024)". */
const char *selector_error(const selector *s);
/* Number of descriptors currently registered. */
size_t selector_count(const selector *s);

/* Call fn(s, data) once, after delay_ms milliseconds. Returns its handle (never NULL). */
sel_timer *selector_call_later(selector *s, uint64_t delay_ms, sel_timer_fn fn, void *data);
/* Call fn(s, data) on the next iteration, before waiting for I/O. */
sel_timer *selector_call_soon(selector *s, sel_timer_fn fn, void *data);
/* Cancel a pending timer. The handle must not have fired or been cancelled already. */
void selector_cancel(selector *s, sel_timer *t);
/* Number of pending timers. */
size_t selector_timer_count(const selector *s);

/* Milliseconds on a monotonic clock, as the loop sees them (updated once per iteration
 * and when timers run). */
uint64_t selector_now_ms(selector *s);

/* Run: wait for events, dispatch, run due timers, until selector_stop() is called or
 * there is nothing left to wait for (no descriptors and no timers). Returns 0, or -1
 * when the backend failed (message in selector_error()). EINTR is not a failure: it
 * returns to the loop, which checks the stop flag. */
int selector_run(selector *s);
/* One iteration: wait at most timeout_ms (-1 = until an event or timer), dispatch.
 * Returns the number of callbacks run, or -1 on a backend failure. */
int selector_run_once(selector *s, int timeout_ms);
/* Ask selector_run to return after the current iteration. Safe from a signal handler:
 * a wait in progress ends at once (a self-pipe, see selector.c), also when the signal
 * lands just before the wait begins. */
void selector_stop(selector *s);
/* selector_stop for good: this run and every later selector_run return at once. For a
 * SIGINT handler, whose stop must not be lost when it lands before the loop starts
 * (while the roots are resolved, say). The turn it lands in calls back no more timer
 * or descriptor after the callback running then. Safe from a signal handler. */
void selector_interrupt(selector *s);
/* Undo selector_interrupt, so that selector_run runs again: for a program that must
 * finish something on the loop after an interruption (close a store, say). Not safe
 * from a signal handler. */
void selector_uninterrupt(selector *s);
/* Ask the loop to call the function set with selector_on_notify once, at its next
 * turn (after the wait, before the I/O callbacks): for a signal handler that wants
 * something done by the loop, such as SIGUSR1's task dump. Safe from a signal handler:
 * a flag, and a byte on the self-pipe when the loop is waiting. Several notifications
 * before that turn make one call. */
void selector_notify(selector *s);
void selector_on_notify(selector *s, sel_timer_fn fn, void *data);
/* Whether selector_stop was called since the last selector_run started. */
int selector_stopped(const selector *s);

/* ---- Threads. The loop is single-threaded: every function above is for the loop's
 * own thread, except selector_stop/selector_interrupt (signal handlers, other threads)
 * and selector_wakeup. A thread pool (threadpool.h) is built on these three. */

typedef void (*sel_wakeup_fn)(selector *s, void *data);
/* fn(s, data) runs on the loop thread each time the loop wakes up through
 * selector_wakeup (and, harmlessly, after a selector_stop). One per selector; NULL
 * removes it. */
void selector_set_wakeup(selector *s, sel_wakeup_fn fn, void *data);
/* From any thread (or a signal handler): end the loop's wait at once, or the next one
 * if it is not waiting now, and run the wake-up function. It writes one byte to the
 * selector's self-pipe — the one descriptor through which threads and signals enter. */
void selector_wakeup(selector *s);
/* Outside work in progress (a job in a thread pool) that will wake the loop: while
 * holds outnumber releases, selector_run does not return for want of descriptors and
 * timers. Loop thread only. */
void selector_hold(selector *s);
void selector_release(selector *s);

#endif
