/* selector.c — the event loop core: which descriptors are watched and by whom, the
 * timers, and the loop that waits and dispatches. The kernel side lives in a backend
 * (selector_epoll.c, selector_poll.c, selector_select.c) behind selector_backend.h.
 *
 * One iteration (selector_run_once):
 *   1. run the timers that are due, call_soon ones included;
 *   2. wait for I/O, no longer than until the next timer is due;
 *   3. call back each ready descriptor.
 * Timers added while step 1 runs wait for the next iteration, so a call_soon chain
 * cannot starve I/O.
 *
 * selector_interrupt (SIGINT, SIGTERM) also ends the turn it lands in: no more timer
 * or descriptor of that turn is called back, so a loop with twenty thousand ready
 * descriptors stops after the callback running now, not after all of them.
 *
 * selector_stop from a signal handler: the handler sets `stopped`, which step 2 checks
 * before it waits (a wait of 0 ms). A signal landing between that check and the
 * kernel's wait would be noticed only at the next event, so each selector also
 * watches the read end of a pipe of its own (the self-pipe trick): while the loop is
 * `waiting` (from just before the check until the wait returns), selector_stop writes
 * a byte to it, which ends the wait at once. The pipe is not a registration: it does
 * not count in selector_count and keeps no loop alive.
 * selector_notify uses the same pipe: its flag makes the next turn call the function
 * set with selector_on_notify, without stopping the loop.
 *
 * Threads come in through the same pipe, as in asyncio (call_soon_threadsafe and
 * signals both write to its one self-pipe): selector_wakeup writes a byte from any
 * thread, and after draining the pipe the loop runs the wake-up function that the
 * thread pool set (common/loop/threadpool.c), which takes the threads' messages.
 * The flags are C11 atomics, not volatile: another thread may stop the loop, and the
 * "set waiting, check stopped" / "set stopped, check waiting" pair needs the order
 * that only atomics promise between threads (lock-free atomics are safe in a signal
 * handler too).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "selector.h"
#include "selector_backend.h"

/* One entry per fd number, indexed by fd. */
typedef struct {
    sel_io_fn fn;
    void *data;
    uint32_t gen; /* which registration of this fd number; see dispatch_io */
    unsigned char events;
    unsigned char registered;
} sel_slot;

struct sel_timer {
    uint64_t due; /* ms on the monotonic clock */
    uint64_t seq; /* insertion order, breaks ties between equal due times */
    sel_timer_fn fn;
    void *data;
    size_t heap_index; /* NOT_IN_HEAP once fired or cancelled */
    sel_timer *next_free;
};

#define NOT_IN_HEAP     SIZE_MAX
#define FREE_TIMERS_MAX 65536 /* spare timer structs kept for reuse */

struct selector {
    const sel_backend_ops *ops;
    void *backend;

    sel_slot *slots;
    size_t nslots;
    size_t count; /* registered fds */
    uint32_t next_gen;

    sel_fired *fired; /* the backend's output; never resized during dispatch */
    size_t fired_cap;

    sel_timer **heap; /* binary min-heap on (due, seq) */
    size_t nheap, heap_cap;
    uint64_t next_seq;
    sel_timer *free_timers;
    size_t nfree;

    uint64_t now;
    int depth; /* > 0 while selector_run_once runs */
    atomic_int stopped;
    atomic_int waiting, interrupted; /* see selector_stop, selector_interrupt */
    atomic_int notified;             /* see selector_notify */
    sel_timer_fn notify_fn;
    void *notify_data;
    int wake[2];           /* the self-pipe: read end watched, write end for stop */
    sel_wakeup_fn wake_fn; /* run after the pipe was drained (the thread pool) */
    bool woken;            /* the pipe was drained: wake_fn is due */
    void *wake_data;
    size_t holds; /* selector_hold: outside work that keeps the loop alive */
    char err[192];
};

const char *const selector_backends[] = {"epoll", "poll", "select", NULL};

static const sel_backend_ops *const backend_table[] = {&sel_backend_epoll, &sel_backend_poll,
                                                       &sel_backend_select, NULL};

static uint64_t clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- creation ------------------------------------------------------------------ */

selector *selector_new(const char *backend, char *err, size_t errlen)
{
    const sel_backend_ops *ops = NULL;
    char dummy[1];

    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    if (!backend)
        backend = selector_backends[0];
    for (int i = 0; backend_table[i]; i++)
        if (strcmp(backend, backend_table[i]->name) == 0)
            ops = backend_table[i];
    if (!ops) {
        snprintf(err, errlen, "unknown selector '%s' (choose epoll, poll or select)", backend);
        return NULL;
    }

    selector *s = xcalloc(1, sizeof *s);
    s->ops = ops;
    s->wake[0] = s->wake[1] = -1;
    s->backend = ops->create(err, errlen);
    if (!s->backend) {
        free(s);
        return NULL;
    }
    if (pipe2(s->wake, O_NONBLOCK | O_CLOEXEC) < 0
        || ops->set(s->backend, s->wake[0], 0, SEL_READ) < 0) {
        snprintf(err, errlen, "%s backend: wake-up pipe: %s", ops->name, strerror(errno));
        selector_free(s);
        return NULL;
    }
    s->now = clock_ms();
    return s;
}

void selector_free(selector *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nheap; i++)
        free(s->heap[i]);
    while (s->free_timers) {
        sel_timer *t = s->free_timers;
        s->free_timers = t->next_free;
        free(t);
    }
    s->ops->destroy(s->backend);
    for (int i = 0; i < 2; i++)
        if (s->wake[i] >= 0)
            close(s->wake[i]);
    free(s->heap);
    free(s->fired);
    free(s->slots);
    free(s);
}

const char *selector_backend(const selector *s)
{
    return s->ops->name;
}

const char *selector_error(const selector *s)
{
    return s->err;
}

size_t selector_count(const selector *s)
{
    return s->count;
}

/* ---- descriptors --------------------------------------------------------------- */

static int fail(selector *s, int err, int fd, const char *what)
{
    snprintf(s->err, sizeof s->err, "%s backend: %s fd %d: %s", s->ops->name, what, fd,
             strerror(err));
    errno = err;
    return -1;
}

/* Grow the slot table so that slots[fd] exists. */
static void reserve_slot(selector *s, int fd)
{
    if ((size_t)fd < s->nslots)
        return;
    size_t n = s->nslots ? s->nslots : 64;
    while (n <= (size_t)fd)
        n *= 2;
    s->slots = xreallocarray(s->slots, n, sizeof *s->slots);
    memset(s->slots + s->nslots, 0, (n - s->nslots) * sizeof *s->slots);
    s->nslots = n;
}

/* Register (fresh = 1) or modify (fresh = 0) fd. A NULL fn keeps the callback and data
 * of an fd that is already registered (and is EINVAL for one that is not). */
static int set_fd(selector *s, int fd, int events, sel_io_fn fn, void *data, int fresh)
{
    const char *what = fresh ? "register" : "modify";

    if (fd < 0)
        return fail(s, EBADF, fd, what);
    if (s->ops->fd_limit && fd >= s->ops->fd_limit) {
        snprintf(s->err, sizeof s->err, "%s backend: fd %d is over FD_SETSIZE (%d)", s->ops->name,
                 fd, s->ops->fd_limit);
        errno = ERANGE;
        return -1;
    }
    reserve_slot(s, fd);

    sel_slot *slot = &s->slots[fd];
    if (!fresh && !slot->registered)
        return fail(s, ENOENT, fd, what);
    if (!fn && !slot->registered)
        return fail(s, EINVAL, fd, what);

    events &= SEL_READ | SEL_WRITE;
    int old = slot->registered ? slot->events : 0;
    if (old != events && s->ops->set(s->backend, fd, old, events) < 0)
        return fail(s, errno, fd, what);

    if (!slot->registered) {
        slot->registered = 1;
        slot->gen = ++s->next_gen;
        s->count++;
    }
    slot->events = (unsigned char)events;
    if (fn) {
        slot->fn = fn;
        slot->data = data;
    }
    return 0;
}

int selector_register(selector *s, int fd, int events, sel_io_fn fn, void *data)
{
    return set_fd(s, fd, events, fn, data, 1);
}

int selector_modify(selector *s, int fd, int events, sel_io_fn fn, void *data)
{
    return set_fd(s, fd, events, fn, data, 0);
}

int selector_unregister(selector *s, int fd)
{
    if (fd < 0 || (size_t)fd >= s->nslots || !s->slots[fd].registered)
        return 0;
    sel_slot *slot = &s->slots[fd];
    if (slot->events)
        s->ops->set(s->backend, fd, slot->events, 0);
    slot->registered = 0;
    slot->events = 0;
    slot->fn = NULL;
    slot->data = NULL;
    s->count--;
    return 0;
}

/* ---- timers -------------------------------------------------------------------- */

static int timer_before(const sel_timer *a, const sel_timer *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_place(selector *s, size_t i, sel_timer *t)
{
    s->heap[i] = t;
    t->heap_index = i;
}

static void sift_up(selector *s, size_t i)
{
    sel_timer *t = s->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!timer_before(t, s->heap[parent]))
            break;
        heap_place(s, i, s->heap[parent]);
        i = parent;
    }
    heap_place(s, i, t);
}

static void sift_down(selector *s, size_t i)
{
    sel_timer *t = s->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= s->nheap)
            break;
        if (child + 1 < s->nheap && timer_before(s->heap[child + 1], s->heap[child]))
            child++;
        if (!timer_before(s->heap[child], t))
            break;
        heap_place(s, i, s->heap[child]);
        i = child;
    }
    heap_place(s, i, t);
}

static void heap_remove(selector *s, sel_timer *t)
{
    size_t i = t->heap_index;
    sel_timer *last = s->heap[--s->nheap];
    t->heap_index = NOT_IN_HEAP;
    if (last == t)
        return;
    heap_place(s, i, last);
    if (i > 0 && timer_before(last, s->heap[(i - 1) / 2]))
        sift_up(s, i);
    else
        sift_down(s, i);
}

static void timer_release(selector *s, sel_timer *t)
{
    if (s->nfree >= FREE_TIMERS_MAX) {
        free(t);
        return;
    }
    t->next_free = s->free_timers;
    s->free_timers = t;
    s->nfree++;
}

sel_timer *selector_call_later(selector *s, uint64_t delay_ms, sel_timer_fn fn, void *data)
{
    if (s->nheap == s->heap_cap) {
        size_t cap = s->heap_cap ? s->heap_cap * 2 : 64;
        s->heap = xreallocarray(s->heap, cap, sizeof *s->heap);
        s->heap_cap = cap;
    }
    sel_timer *t = s->free_timers;
    if (t) {
        s->free_timers = t->next_free;
        s->nfree--;
    } else {
        t = xmalloc(sizeof *t);
    }
    /* Outside the loop the cached clock may be stale; inside, use the loop's time. */
    if (s->depth == 0)
        s->now = clock_ms();
    t->due = delay_ms > UINT64_MAX - s->now ? UINT64_MAX : s->now + delay_ms;
    t->seq = s->next_seq++;
    t->fn = fn;
    t->data = data;
    t->next_free = NULL;
    s->heap[s->nheap] = t;
    sift_up(s, s->nheap++);
    return t;
}

sel_timer *selector_call_soon(selector *s, sel_timer_fn fn, void *data)
{
    return selector_call_later(s, 0, fn, data);
}

void selector_cancel(selector *s, sel_timer *t)
{
    /* A handle that already fired or was cancelled is ignored while its struct has
     * not been reused: cheap protection against the common double-cancel. */
    if (!t || t->heap_index >= s->nheap || s->heap[t->heap_index] != t)
        return;
    heap_remove(s, t);
    timer_release(s, t);
}

size_t selector_timer_count(const selector *s)
{
    return s->nheap;
}

uint64_t selector_now_ms(selector *s)
{
    return s->now;
}

/* Run the timers due now that existed before this call. */
static int run_timers(selector *s)
{
    uint64_t seq_limit = s->next_seq;
    int ran = 0;

    while (s->nheap > 0 && !s->interrupted) {
        sel_timer *t = s->heap[0];
        if (t->due > s->now || t->seq >= seq_limit)
            break;
        heap_remove(s, t);
        if (t->fn)
            t->fn(s, t->data);
        /* Released only now, so a cancel of its own handle inside fn is a no-op. */
        timer_release(s, t);
        ran++;
    }
    return ran;
}

/* How long the backend may wait: until the next timer, capped by timeout_ms. */
static int wait_timeout(selector *s, int timeout_ms)
{
    if (s->stopped || s->notified || s->woken)
        return 0;
    if (s->nheap == 0) /* never block on nothing */
        return s->count == 0 && s->holds == 0 && timeout_ms < 0 ? 0 : timeout_ms;
    uint64_t due = s->heap[0]->due;
    int until = 0;
    if (due > s->now)
        until = due - s->now > INT_MAX ? INT_MAX : (int)(due - s->now);
    return timeout_ms < 0 || until < timeout_ms ? until : timeout_ms;
}

/* ---- the loop ------------------------------------------------------------------ */

static void reserve_fired(selector *s)
{
    size_t want = s->count + 1 > 16 ? s->count + 1 : 16; /* + 1: the wake-up pipe */
    if (want <= s->fired_cap)
        return;
    size_t cap = s->fired_cap ? s->fired_cap : 16;
    while (cap < want)
        cap *= 2;
    s->fired = xreallocarray(s->fired, cap, sizeof *s->fired);
    s->fired_cap = cap;
}

/* Call back the n ready descriptors. Each event was stamped with its registration's
 * generation before any callback ran, so an fd unregistered by an earlier callback —
 * or unregistered and registered anew under the same number — is skipped. */
static int dispatch_io(selector *s, int n)
{
    int ran = 0;

    for (int i = 0; i < n; i++) {
        int fd = s->fired[i].fd;
        if (fd >= 0 && (size_t)fd < s->nslots)
            s->fired[i].gen = s->slots[fd].gen;
    }
    for (int i = 0; i < n && !s->interrupted; i++) {
        int fd = s->fired[i].fd;
        if (fd < 0 || (size_t)fd >= s->nslots)
            continue;
        sel_slot *slot = &s->slots[fd];
        if (!slot->registered || slot->gen != s->fired[i].gen)
            continue;
        int ev = s->fired[i].events;
        if (ev & SEL_ERROR)
            ev |= slot->events;
        ev &= slot->events; /* an earlier callback may have changed them */
        if (!ev)
            continue;
        /* The callback may grow (move) the slot table: take what we need first. */
        sel_io_fn fn = slot->fn;
        void *data = slot->data;
        fn(s, fd, ev, data);
        ran++;
    }
    return ran;
}

static void drain_wake(selector *s)
{
    char buf[64];
    while (read(s->wake[0], buf, sizeof buf) > 0)
        ;
}

int selector_run_once(selector *s, int timeout_ms)
{
    int ran;

    s->depth++;
    s->now = clock_ms();
    ran = run_timers(s);
    if (ran)
        s->now = clock_ms();

    reserve_fired(s);
    int max = s->fired_cap > INT_MAX ? INT_MAX : (int)s->fired_cap;
    s->waiting = 1; /* from here a selector_stop also writes to the pipe */
    int n = s->ops->wait(s->backend, wait_timeout(s, timeout_ms), s->fired, max);
    s->waiting = 0;
    s->now = clock_ms();
    if (n < 0) {
        if (errno != EINTR) {
            snprintf(s->err, sizeof s->err, "%s backend: wait: %s", s->ops->name, strerror(errno));
            s->depth--;
            return -1;
        }
        n = 0;
    }
    for (int i = 0; i < n; i++)
        if (s->fired[i].fd == s->wake[0]) {
            drain_wake(s); /* not a registration: dispatch_io skips it */
            s->woken = true;
        }
    /* After the drain (a later wake-up is a new byte); not in an interrupted turn, but
     * kept for the next turn that is not. */
    if (s->woken && s->wake_fn && !s->interrupted) {
        s->woken = false;
        s->wake_fn(s, s->wake_data);
        ran++;
    }
    if (s->notified) {
        s->notified = 0;
        if (s->notify_fn) {
            s->notify_fn(s, s->notify_data);
            ran++;
        }
    }
    ran += dispatch_io(s, n);
    s->depth--;
    return ran;
}

int selector_run(selector *s)
{
    s->stopped = s->interrupted;
    while (!s->stopped && (s->count > 0 || s->nheap > 0 || s->holds > 0)) {
        if (selector_run_once(s, -1) < 0)
            return -1;
    }
    return 0;
}

/* End a wait in progress: a byte on the self-pipe. Async-signal-safe: at most one
 * write(2), errno preserved. `waiting` is set from just before the flags are checked
 * until the wait returns. */
static void wake_up(selector *s)
{
    if (s->waiting && s->wake[1] >= 0) {
        int saved = errno;
        ssize_t n = write(s->wake[1], "", 1); /* full pipe: a wake-up is pending */
        (void)n;
        errno = saved;
    }
}

void selector_stop(selector *s)
{
    s->stopped = 1;
    wake_up(s);
}

void selector_on_notify(selector *s, sel_timer_fn fn, void *data)
{
    s->notify_fn = fn;
    s->notify_data = data;
}

void selector_notify(selector *s)
{
    s->notified = 1;
    wake_up(s);
}

void selector_interrupt(selector *s)
{
    s->interrupted = 1;
    selector_stop(s);
}

void selector_uninterrupt(selector *s)
{
    s->interrupted = 0;
    s->stopped = 0;
}

int selector_stopped(const selector *s)
{
    return s->stopped;
}

/* ---- threads ------------------------------------------------------------------- */

void selector_set_wakeup(selector *s, sel_wakeup_fn fn, void *data)
{
    s->wake_fn = fn;
    s->wake_data = data;
}

/* Any thread, and async-signal-safe: one write(2), errno preserved. wake[1] is set
 * before any thread can know the selector and never changes until selector_free. */
void selector_wakeup(selector *s)
{
    int saved = errno;
    ssize_t n = write(s->wake[1], "", 1); /* full pipe: a wake-up is pending anyway */
    (void)n;
    errno = saved;
}

void selector_hold(selector *s)
{
    s->holds++;
}

void selector_release(selector *s)
{
    if (s->holds > 0)
        s->holds--;
}
