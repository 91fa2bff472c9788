/* test_selector.c — the selector's contract, checked once per backend (epoll, poll,
 * select): readiness, modify, timers and their order, cancel, call_soon, unregistering
 * from callbacks, fd reuse within an iteration, stop, notify, and a few hundred
 * descriptors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "selector.h"

/* The backend the current group of tests runs on. */
static const char *backend;

static selector *new_selector(void)
{
    char err[256] = "";
    selector *s = selector_new(backend, err, sizeof err);
    if (!s)
        fail_msg("selector_new(%s): %s", backend, err);
    assert_string_equal(selector_backend(s), backend);
    return s;
}

static void make_pair(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
}

static void close_pair(int sv[2])
{
    close(sv[0]);
    close(sv[1]);
}

/* Records of what ran, in order: small integers or letters. */
typedef struct {
    int items[64];
    int n;
} trace;

static void trace_add(trace *t, int v)
{
    assert_true(t->n < 64);
    t->items[t->n++] = v;
}

/* ---- readiness ----------------------------------------------------------------- */

typedef struct {
    int sv[2];
    int wrote, read_bytes;
    char got[8];
} rw_ctx;

static void on_readable(selector *s, int fd, int events, void *data)
{
    rw_ctx *c = data;
    assert_int_equal(events, SEL_READ);
    ssize_t n = read(fd, c->got, sizeof c->got);
    assert_true(n > 0);
    c->read_bytes += (int)n;
    selector_unregister(s, fd);
}

static void on_writable(selector *s, int fd, int events, void *data)
{
    rw_ctx *c = data;
    assert_int_equal(events, SEL_WRITE);
    assert_int_equal(write(fd, "hi", 2), 2);
    c->wrote++;
    selector_unregister(s, fd);
}

static void test_read_write_readiness(void **state)
{
    (void)state;
    selector *s = new_selector();
    rw_ctx c = {0};
    make_pair(c.sv);

    assert_int_equal(selector_register(s, c.sv[0], SEL_READ, on_readable, &c), 0);
    assert_int_equal(selector_register(s, c.sv[1], SEL_WRITE, on_writable, &c), 0);
    assert_int_equal(selector_count(s), 2);
    /* Nothing is readable yet: one bounded iteration only writes. */
    assert_int_equal(selector_run_once(s, 1000), 1);
    assert_int_equal(c.wrote, 1);
    assert_int_equal(c.read_bytes, 0);

    assert_int_equal(selector_run(s), 0);
    assert_int_equal(c.read_bytes, 2);
    assert_memory_equal(c.got, "hi", 2);
    assert_int_equal(selector_count(s), 0);

    close_pair(c.sv);
    selector_free(s);
}

/* ---- modify -------------------------------------------------------------------- */

typedef struct {
    int sv[2];
    trace t;
} mod_ctx;

static void mod_cb(selector *s, int fd, int events, void *data)
{
    mod_ctx *c = data;
    trace_add(&c->t, events);
    if (events == SEL_WRITE) {
        /* Writable right away; switch to reading and make the fd readable. */
        assert_int_equal(selector_modify(s, fd, SEL_READ, mod_cb, c), 0);
        assert_int_equal(write(c->sv[1], "x", 1), 1);
    } else {
        char b;
        assert_int_equal(read(fd, &b, 1), 1);
        selector_unregister(s, fd);
    }
}

static void test_modify(void **state)
{
    (void)state;
    selector *s = new_selector();
    mod_ctx c = {0};
    make_pair(c.sv);

    assert_int_equal(selector_register(s, c.sv[0], SEL_WRITE, mod_cb, &c), 0);
    assert_int_equal(selector_run(s), 0);
    assert_int_equal(c.t.n, 2);
    assert_int_equal(c.t.items[0], SEL_WRITE);
    assert_int_equal(c.t.items[1], SEL_READ);

    /* Modify an fd that is not registered is an error, and changes nothing. */
    assert_int_equal(selector_modify(s, c.sv[0], SEL_READ, mod_cb, &c), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(selector_count(s), 0);
    /* Unregistering it again is a no-op. */
    assert_int_equal(selector_unregister(s, c.sv[0]), 0);

    close_pair(c.sv);
    selector_free(s);
}

/* A hang-up is reported as the events registered for, so the write sees the error. */
typedef struct {
    int events, send_errno, calls;
} hup_ctx;

static void hup_cb(selector *s, int fd, int events, void *data)
{
    hup_ctx *c = data;
    c->events = events;
    c->calls++;
    if (send(fd, "x", 1, MSG_NOSIGNAL) < 0)
        c->send_errno = errno;
    selector_unregister(s, fd);
}

static void test_hangup_reported_as_registered_event(void **state)
{
    (void)state;
    selector *s = new_selector();
    hup_ctx c = {0};
    int sv[2];
    make_pair(sv);
    close(sv[1]);

    assert_int_equal(selector_register(s, sv[0], SEL_WRITE, hup_cb, &c), 0);
    assert_int_equal(selector_run(s), 0);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.events, SEL_WRITE);
    assert_int_equal(c.send_errno, EPIPE);

    close(sv[0]);
    selector_free(s);
}

static void dummy_io(selector *s, int fd, int events, void *data)
{
    (void)s, (void)fd, (void)events, (void)data;
    fail_msg("no callback expected");
}

static void test_bad_descriptors(void **state)
{
    (void)state;
    selector *s = new_selector();
    int sv[2];
    make_pair(sv);
    close(sv[1]);

    assert_int_equal(selector_register(s, -1, SEL_READ, dummy_io, NULL), -1);
    assert_int_equal(errno, EBADF);
    assert_int_equal(selector_register(s, sv[1], SEL_READ, dummy_io, NULL), -1);
    assert_int_equal(errno, EBADF);
    assert_true(strstr(selector_error(s), "fd") != NULL);
    assert_int_equal(selector_count(s), 0);
    assert_int_equal(selector_unregister(s, -5), 0);
    assert_int_equal(selector_unregister(s, 1 << 20), 0);

    close(sv[0]);
    selector_free(s);
}

/* ---- timers -------------------------------------------------------------------- */

typedef struct {
    trace *t;
    int id;
} tagged;

static void record_timer(selector *s, void *data)
{
    (void)s;
    tagged *g = data;
    trace_add(g->t, g->id);
}

static void test_timers_fire_in_due_order(void **state)
{
    (void)state;
    selector *s = new_selector();
    trace t = {0};
    tagged g[8];
    static const uint64_t delays[8] = {30, 10, 20, 0, 5, 5, 5, 5};

    uint64_t start = selector_now_ms(s); /* no later than when the timers are added */
    for (int i = 0; i < 8; i++) {
        g[i] = (tagged){&t, i};
        assert_non_null(selector_call_later(s, delays[i], record_timer, &g[i]));
    }
    assert_int_equal(selector_timer_count(s), 8);
    assert_int_equal(selector_run(s), 0);

    static const int want[8] = {3, 4, 5, 6, 7, 1, 2, 0};
    assert_int_equal(t.n, 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(t.items[i], want[i]);
    assert_true(selector_now_ms(s) >= start + 30);
    assert_int_equal(selector_timer_count(s), 0);
    selector_free(s);
}

typedef struct {
    trace t;
    sel_timer *victims[2];
} cancel_ctx;

static void cancel_others(selector *s, void *data)
{
    cancel_ctx *c = data;
    trace_add(&c->t, 100);
    selector_cancel(s, c->victims[0]);
    selector_cancel(s, c->victims[1]);
}

static void test_cancel(void **state)
{
    (void)state;
    selector *s = new_selector();
    cancel_ctx c = {0};
    tagged g[4];
    for (int i = 0; i < 4; i++)
        g[i] = (tagged){&c.t, i};

    /* Cancelled before the loop runs. */
    sel_timer *gone = selector_call_later(s, 1, record_timer, &g[0]);
    assert_non_null(selector_call_later(s, 2, record_timer, &g[1]));
    selector_cancel(s, gone);
    /* Cancelled by another timer: one due at the same moment, one later. */
    assert_non_null(selector_call_later(s, 10, cancel_others, &c));
    c.victims[0] = selector_call_later(s, 10, record_timer, &g[2]);
    c.victims[1] = selector_call_later(s, 40, record_timer, &g[3]);
    assert_int_equal(selector_timer_count(s), 4);

    assert_int_equal(selector_run(s), 0);
    assert_int_equal(c.t.n, 2);
    assert_int_equal(c.t.items[0], 1);
    assert_int_equal(c.t.items[1], 100);
    selector_free(s);
}

/* call_soon: in order, and one scheduled from a call_soon callback waits for the next
 * iteration, after the I/O that is ready now. */
typedef struct {
    trace t;
    int sv[2];
} soon_ctx;

static void soon_c(selector *s, void *data)
{
    (void)s;
    trace_add(&((soon_ctx *)data)->t, 'C');
}

static void soon_a(selector *s, void *data)
{
    trace_add(&((soon_ctx *)data)->t, 'A');
    assert_non_null(selector_call_soon(s, soon_c, data));
}

static void soon_b(selector *s, void *data)
{
    (void)s;
    trace_add(&((soon_ctx *)data)->t, 'B');
}

static void soon_io(selector *s, int fd, int events, void *data)
{
    (void)events;
    char b;
    trace_add(&((soon_ctx *)data)->t, 'I');
    assert_int_equal(read(fd, &b, 1), 1);
    selector_unregister(s, fd);
}

static void test_call_soon_order(void **state)
{
    (void)state;
    selector *s = new_selector();
    soon_ctx c = {0};
    make_pair(c.sv);
    assert_int_equal(write(c.sv[1], "x", 1), 1);

    assert_int_equal(selector_register(s, c.sv[0], SEL_READ, soon_io, &c), 0);
    assert_non_null(selector_call_soon(s, soon_a, &c));
    assert_non_null(selector_call_soon(s, soon_b, &c));
    assert_int_equal(selector_run(s), 0);

    assert_int_equal(c.t.n, 4);
    assert_int_equal(c.t.items[0], 'A');
    assert_int_equal(c.t.items[1], 'B');
    assert_int_equal(c.t.items[2], 'I');
    assert_int_equal(c.t.items[3], 'C');
    close_pair(c.sv);
    selector_free(s);
}

/* ---- unregistering and re-registering inside callbacks --------------------------- */

typedef struct {
    int a[2], b[2];
    int calls;
    int fresh_calls;
    int fresh_peer; /* writes to it make the re-registered fd readable */
} unreg_ctx;

static void unregister_both(selector *s, int fd, int events, void *data)
{
    (void)fd, (void)events;
    unreg_ctx *c = data;
    c->calls++;
    selector_unregister(s, c->a[0]);
    selector_unregister(s, c->b[0]);
}

static void test_unregister_inside_callback(void **state)
{
    (void)state;
    selector *s = new_selector();
    unreg_ctx c = {0};
    make_pair(c.a);
    make_pair(c.b);
    assert_int_equal(write(c.a[1], "x", 1), 1);
    assert_int_equal(write(c.b[1], "x", 1), 1);

    assert_int_equal(selector_register(s, c.a[0], SEL_READ, unregister_both, &c), 0);
    assert_int_equal(selector_register(s, c.b[0], SEL_READ, unregister_both, &c), 0);
    assert_int_equal(selector_run(s), 0);
    /* Both were ready; whichever ran first unregistered the other. */
    assert_int_equal(c.calls, 1);
    assert_int_equal(selector_count(s), 0);

    close_pair(c.a);
    close_pair(c.b);
    selector_free(s);
}

static void fresh_cb(selector *s, int fd, int events, void *data)
{
    (void)events;
    unreg_ctx *c = data;
    char b;
    c->fresh_calls++;
    assert_int_equal(read(fd, &b, 1), 1); /* fails if called for the stale event */
    selector_unregister(s, fd);
}

/* The first ready fd's callback replaces the other ready fd by a fresh, idle
 * descriptor under the same number and registers it: the old event must not reach it. */
static void swap_other(selector *s, int fd, int events, void *data)
{
    (void)events;
    unreg_ctx *c = data;
    int other = fd == c->a[0] ? c->b[0] : c->a[0];
    int fresh[2];
    char b;

    c->calls++;
    assert_int_equal(read(fd, &b, 1), 1);
    selector_unregister(s, fd);
    selector_unregister(s, other);
    make_pair(fresh);
    assert_int_equal(dup3(fresh[0], other, O_CLOEXEC), other);
    close(fresh[0]);
    c->fresh_peer = fresh[1];
    assert_int_equal(selector_register(s, other, SEL_READ, fresh_cb, c), 0);
}

static void test_reregister_same_fd_in_same_iteration(void **state)
{
    (void)state;
    selector *s = new_selector();
    unreg_ctx c = {0};
    make_pair(c.a);
    make_pair(c.b);
    assert_int_equal(write(c.a[1], "x", 1), 1);
    assert_int_equal(write(c.b[1], "x", 1), 1);
    assert_int_equal(selector_register(s, c.a[0], SEL_READ, swap_other, &c), 0);
    assert_int_equal(selector_register(s, c.b[0], SEL_READ, swap_other, &c), 0);

    /* Generous timeout, but both are ready at once, so it does not wait. */
    assert_int_equal(selector_run_once(s, 2000), 1);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.fresh_calls, 0);
    assert_int_equal(selector_count(s), 1);
    /* Still nothing for the fresh descriptor while it is idle. */
    assert_int_equal(selector_run_once(s, 0), 0);
    assert_int_equal(c.fresh_calls, 0);

    /* The new registration works once it has data. */
    assert_int_equal(write(c.fresh_peer, "y", 1), 1);
    assert_int_equal(selector_run(s), 0);
    assert_int_equal(c.fresh_calls, 1);

    close(c.fresh_peer);
    close_pair(c.a);
    close_pair(c.b);
    selector_free(s);
}

/* ---- stopping ------------------------------------------------------------------ */

static void stop_cb(selector *s, void *data)
{
    (*(int *)data)++;
    selector_stop(s);
}

static void never_timer(selector *s, void *data)
{
    (void)s, (void)data;
    fail_msg("this timer should not fire");
}

static void test_stop_from_callback(void **state)
{
    (void)state;
    selector *s = new_selector();
    int sv[2], stops = 0;
    make_pair(sv);

    assert_int_equal(selector_register(s, sv[0], SEL_READ, dummy_io, NULL), 0);
    sel_timer *later = selector_call_later(s, 60000, never_timer, NULL);
    assert_non_null(selector_call_later(s, 1, stop_cb, &stops));
    assert_int_equal(selector_stopped(s), 0);
    assert_int_equal(selector_run(s), 0);
    assert_int_equal(stops, 1);
    assert_int_equal(selector_stopped(s), 1);
    assert_int_equal(selector_timer_count(s), 1);
    assert_int_equal(selector_count(s), 1);

    selector_cancel(s, later);
    selector_unregister(s, sv[0]);
    close_pair(sv);
    selector_free(s);
}

static void test_run_returns_when_nothing_left(void **state)
{
    (void)state;
    selector *s = new_selector();
    assert_int_equal(selector_run(s), 0);
    assert_int_equal(selector_run_once(s, -1), 0); /* never blocks on nothing */

    trace t = {0};
    tagged g = {&t, 7};
    assert_non_null(selector_call_later(s, 3, record_timer, &g));
    assert_int_equal(selector_run(s), 0);
    assert_int_equal(t.n, 1);

    /* Pending timers are freed with the selector (valgrind/ASan check this). */
    assert_non_null(selector_call_later(s, 60000, never_timer, NULL));
    assert_non_null(selector_call_soon(s, never_timer, NULL));
    selector_free(s);
}

static selector *signal_target;

static void on_alarm(int sig)
{
    (void)sig;
    selector_stop(signal_target);
}

static void safety_stop(selector *s, void *data)
{
    *(int *)data = 1;
    selector_stop(s);
}

/* A signal handler stops a loop blocked in the backend's wait (EINTR). */
static void test_stop_from_signal_handler(void **state)
{
    (void)state;
    selector *s = new_selector();
    int sv[2], safety = 0;
    make_pair(sv);
    assert_int_equal(selector_register(s, sv[0], SEL_READ, dummy_io, NULL), 0);
    sel_timer *guard = selector_call_later(s, 20000, safety_stop, &safety);

    struct sigaction sa = {.sa_handler = on_alarm}, old;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    /* Repeats, in case one arrives before the loop is waiting. */
    struct itimerval it = {.it_value = {0, 20000}, .it_interval = {0, 20000}};
    signal_target = s;
    assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
    assert_int_equal(selector_run(s), 0);
    struct itimerval off = {0};
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);

    assert_int_equal(safety, 0);
    assert_int_equal(selector_stopped(s), 1);
    selector_cancel(s, guard);
    selector_unregister(s, sv[0]);
    close_pair(sv);
    selector_free(s);
}

/* A stop that comes with no EINTR — as when the signal lands just before the wait
 * begins, which is then too late for the stop check — still ends the wait at once:
 * the selector's self-pipe. Here another thread calls selector_stop once, while the
 * loop waits on an idle descriptor (without the pipe it would sleep until a 20 s timer). */
static void *stop_later(void *arg)
{
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    selector_stop(arg);
    return NULL;
}

/* Run s, waiting on an idle descriptor behind a 20 s safety timer, while another thread
 * runs poke(s) after 100 ms; poke must end the run (directly or through a callback)
 * within 5 s. */
static void run_while_poked(selector *s, void *(*poke)(void *))
{
    int sv[2], safety = 0;
    make_pair(sv);
    assert_int_equal(selector_register(s, sv[0], SEL_READ, dummy_io, NULL), 0);
    sel_timer *guard = selector_call_later(s, 20000, safety_stop, &safety);
    pthread_t th;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(pthread_create(&th, NULL, poke, s), 0);
    assert_int_equal(selector_run(s), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(th, NULL);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (secs > 5)
        fail_msg("the wait ended only after %.1f s", secs);
    assert_int_equal(safety, 0);
    assert_int_equal(selector_count(s), 1); /* the pipe is not a registration */
    selector_cancel(s, guard);
    selector_unregister(s, sv[0]);
    close_pair(sv);
}

static void test_stop_wakes_wait_without_eintr(void **state)
{
    (void)state;
    selector *s = new_selector();
    run_while_poked(s, stop_later);
    assert_int_equal(selector_stopped(s), 1);
    selector_free(s);
}

/* selector_interrupt before the loop runs (a SIGINT while the roots resolve): the run
 * returns at once, and so does every later one. */
static void test_interrupt_before_run(void **state)
{
    (void)state;
    selector *s = new_selector();
    int sv[2], safety = 0;
    make_pair(sv);
    assert_int_equal(selector_register(s, sv[0], SEL_READ, dummy_io, NULL), 0);
    sel_timer *guard = selector_call_later(s, 20000, safety_stop, &safety);
    selector_interrupt(s);
    assert_int_equal(selector_run(s), 0);
    assert_int_equal(selector_run(s), 0);
    assert_int_equal(selector_stopped(s), 1);
    assert_int_equal(safety, 0);
    selector_cancel(s, guard);
    selector_unregister(s, sv[0]);
    close_pair(sv);
    selector_free(s);
}

/* ---- notify: the loop runs a function at its next turn (SIGUSR1's dump) ----------- */

typedef struct {
    int calls;
    int stop; /* the notify function stops the loop */
    int timer_fired;
} notify_ctx;

static void on_notify(selector *s, void *data)
{
    notify_ctx *c = data;
    c->calls++;
    if (c->stop)
        selector_stop(s);
}

static void stop_timer(selector *s, void *data)
{
    ((notify_ctx *)data)->timer_fired = 1;
    selector_stop(s);
}

/* Notifications before the loop runs make one call, at the first turn, without a
 * wait; they do not stop the loop (here a timer does, afterwards). */
static void test_notify_once_at_next_turn(void **state)
{
    (void)state;
    selector *s = new_selector();
    notify_ctx c = {0};
    int sv[2];
    make_pair(sv);
    assert_int_equal(selector_register(s, sv[0], SEL_READ, dummy_io, NULL), 0);
    selector_on_notify(s, on_notify, &c);
    selector_notify(s);
    selector_notify(s);
    selector_notify(s);
    assert_int_equal(c.calls, 0);                    /* not from the notifier's stack */
    assert_int_equal(selector_run_once(s, 5000), 1); /* 0 ms: no 5 s wait */
    assert_int_equal(c.calls, 1);
    assert_int_equal(selector_stopped(s), 0);
    sel_timer *t = selector_call_later(s, 30, stop_timer, &c);
    (void)t;
    assert_int_equal(selector_run(s), 0);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.timer_fired, 1);
    selector_unregister(s, sv[0]);
    close_pair(sv);
    selector_free(s);
}

/* A notification while the loop waits on an idle descriptor ends the wait at once
 * (the self-pipe), from another thread as from a signal handler. */
static void *notify_later(void *arg)
{
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    selector_notify(arg);
    return NULL;
}

static void test_notify_wakes_wait(void **state)
{
    (void)state;
    selector *s = new_selector();
    notify_ctx c = {.stop = 1};
    selector_on_notify(s, on_notify, &c);
    run_while_poked(s, notify_later);
    assert_int_equal(c.calls, 1);
    selector_free(s);
}

/* ---- many descriptors ---------------------------------------------------------- */

#define NPAIRS 300

typedef struct {
    int pairs[NPAIRS][2];
    int hits[NPAIRS];
} many_ctx;

static many_ctx *many;

static void many_cb(selector *s, int fd, int events, void *data)
{
    (void)events;
    int i = (int)(intptr_t)data;
    char b;
    assert_int_equal(fd, many->pairs[i][0]);
    assert_int_equal(read(fd, &b, 1), 1);
    many->hits[i]++;
    selector_unregister(s, fd);
}

/* Raise the soft descriptor limit to at least want, if the hard limit allows. */
static int ensure_nofile(rlim_t want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -1;
    if (rl.rlim_cur >= want)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
        return -1;
    rl.rlim_cur = want;
    return setrlimit(RLIMIT_NOFILE, &rl);
}

static void test_hundreds_of_descriptors(void **state)
{
    (void)state;
    if (ensure_nofile(2 * NPAIRS + 64) < 0) {
        print_message("skipped: RLIMIT_NOFILE too low for %d socketpairs\n", NPAIRS);
        skip();
    }
    selector *s = new_selector();
    many = calloc(1, sizeof *many);
    assert_non_null(many);
    for (int i = 0; i < NPAIRS; i++) {
        make_pair(many->pairs[i]);
        assert_int_equal(write(many->pairs[i][1], "x", 1), 1);
        assert_int_equal(
            selector_register(s, many->pairs[i][0], SEL_READ, many_cb, (void *)(intptr_t)i), 0);
    }
    assert_int_equal(selector_count(s), NPAIRS);
    assert_int_equal(selector_run(s), 0);
    for (int i = 0; i < NPAIRS; i++) {
        assert_int_equal(many->hits[i], 1);
        close_pair(many->pairs[i]);
    }
    free(many);
    many = NULL;
    selector_free(s);
}

/* Descriptors above FD_SETSIZE: refused by select with ERANGE, fine elsewhere. */
static void test_fd_over_fd_setsize(void **state)
{
    (void)state;
    const int high = FD_SETSIZE + 6;
    if (ensure_nofile((rlim_t)high + 1) < 0) {
        print_message("skipped: hard RLIMIT_NOFILE is below %d\n", high + 1);
        skip();
    }
    selector *s = new_selector();
    int sv[2];
    make_pair(sv);
    assert_int_equal(dup2(sv[0], high), high);

    int rc = selector_register(s, high, SEL_READ, dummy_io, NULL);
    if (strcmp(backend, "select") == 0) {
        char want[160];
        assert_int_equal(rc, -1);
        assert_int_equal(errno, ERANGE);
        snprintf(want, sizeof want, "select backend: fd %d is over FD_SETSIZE (%d)", high,
                 FD_SETSIZE);
        assert_string_equal(selector_error(s), want);
        assert_int_equal(selector_count(s), 0);
    } else {
        assert_int_equal(rc, 0);
        assert_int_equal(selector_count(s), 1);
        assert_int_equal(selector_unregister(s, high), 0);
    }
    close(high);
    close_pair(sv);
    selector_free(s);
}

/* ---- stress: many timers ------------------------------------------------------- */

#define NTIMERS 20000

typedef struct {
    uint64_t due;
    uint64_t last_due; /* of the previous timer to fire */
    int fired, order_errors, early;
    int cancelled;
} stress_ctx;

static stress_ctx stress;
static uint64_t stress_due[NTIMERS];

static void stress_cb(selector *s, void *data)
{
    uint64_t due = stress_due[(intptr_t)data];
    if (due < stress.last_due)
        stress.order_errors++;
    if (selector_now_ms(s) < due)
        stress.early++;
    stress.last_due = due;
    stress.fired++;
}

static void test_many_timers(void **state)
{
    (void)state;
    selector *s = new_selector();
    sel_timer **handles = calloc(NTIMERS, sizeof *handles);
    assert_non_null(handles);
    memset(&stress, 0, sizeof stress);
    srand(12345);

    for (intptr_t i = 0; i < NTIMERS; i++) {
        uint64_t delay = (uint64_t)(rand() % 51);
        handles[i] = selector_call_later(s, delay, stress_cb, (void *)i);
        assert_non_null(handles[i]);
        stress_due[i] = selector_now_ms(s) + delay;
    }
    /* Cancel every seventh, in an order unrelated to the heap's. */
    for (int i = NTIMERS - 1; i >= 0; i -= 7) {
        selector_cancel(s, handles[i]);
        stress.cancelled++;
    }
    assert_int_equal(selector_timer_count(s), NTIMERS - stress.cancelled);
    assert_int_equal(selector_run(s), 0);

    assert_int_equal(stress.fired, NTIMERS - stress.cancelled);
    assert_int_equal(stress.order_errors, 0);
    assert_int_equal(stress.early, 0);
    free(handles);
    selector_free(s);
}

/* ---- names --------------------------------------------------------------------- */

static void test_unknown_backend(void **state)
{
    (void)state;
    char err[128] = "";
    assert_null(selector_new("kqueue", err, sizeof err));
    assert_string_equal(err, "unknown selector 'kqueue' (choose epoll, poll or select)");

    selector *s = selector_new(NULL, err, sizeof err);
    assert_non_null(s);
    assert_string_equal(selector_backend(s), "epoll");
    assert_string_equal(selector_backends[0], "epoll");
    selector_free(s);
}

int main(void)
{
    const struct CMUnitTest per_backend[] = {
        cmocka_unit_test(test_read_write_readiness),
        cmocka_unit_test(test_modify),
        cmocka_unit_test(test_hangup_reported_as_registered_event),
        cmocka_unit_test(test_bad_descriptors),
        cmocka_unit_test(test_timers_fire_in_due_order),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_call_soon_order),
        cmocka_unit_test(test_unregister_inside_callback),
        cmocka_unit_test(test_reregister_same_fd_in_same_iteration),
        cmocka_unit_test(test_stop_from_callback),
        cmocka_unit_test(test_run_returns_when_nothing_left),
        cmocka_unit_test(test_stop_from_signal_handler),
        cmocka_unit_test(test_stop_wakes_wait_without_eintr),
        cmocka_unit_test(test_interrupt_before_run),
        cmocka_unit_test(test_notify_once_at_next_turn),
        cmocka_unit_test(test_notify_wakes_wait),
        cmocka_unit_test(test_hundreds_of_descriptors),
        cmocka_unit_test(test_fd_over_fd_setsize),
        cmocka_unit_test(test_many_timers),
    };
    const struct CMUnitTest once[] = {
        cmocka_unit_test(test_unknown_backend),
    };
    int failed = 0;
    char name[64];

    for (int i = 0; selector_backends[i]; i++) {
        backend = selector_backends[i];
        snprintf(name, sizeof name, "selector_%s", backend);
        failed += _cmocka_run_group_tests(name, per_backend,
                                          sizeof per_backend / sizeof per_backend[0], NULL, NULL);
    }
    failed += cmocka_run_group_tests_name("selector_names", once, NULL, NULL);
    return failed ? 1 : 0;
}
