/* test_sockio.c — stage 2's socket coroutines (connect, read, write_all, read_all) on
 * socketpairs and 127.0.0.1 listeners made here, and sleep. Each coroutine is run inside a small
 * driver coroutine that catches what it raises, wrapped in a Task on a real selector;
 * a guard timer stops the loop and fails the test rather than let it hang. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coro.h"
#include "future.h"
#include "http.h"
#include "net.h"
#include "selector.h"
#include "sockio.h"
#include "task.h"

#include "loopguard.h"

/* A check that, when it fails, says what the test observed (the exercises' hints are
 * chosen by these words, as test_coro's). */
#define expect_that(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg(__VA_ARGS__);                                                                 \
    } while (0)

static selector *loop;

static int setup(void **state)
{
    (void)state;
    loop = guarded_loop_new(5000);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    task_free_all();
    guarded_loop_free(loop);
    loop = NULL;
    return 0;
}

/* The lowest free descriptor: the same before and after means nothing leaked. */
static int lowest_free_fd(void)
{
    int fd = dup(0);
    assert_true(fd >= 0);
    close(fd);
    return fd;
}

/* ---- the driver: runs one coroutine, catches what it raises ---------------------- */

typedef struct {
    int done, failed;
    coro_value value;
    char data[4096]; /* a copy of the chunk, when value.p is one */
    coro_error_kind kind;
    int errnum;
    char msg[256];
    char line[300];
} outcome;

typedef struct {
    coro co;
    coro *pending; /* the coroutine to run, until the driver takes it */
    outcome *out;
} driver_frame;

static coro *take(driver_frame *f)
{
    coro *c = f->pending;
    f->pending = NULL;
    return c;
}

static int driver_body(coro *co)
{
    driver_frame *f = (driver_frame *)co;
    CORO_BEGIN(co);
    AWAIT_CATCH(co, take(f));
    if (co->err) {
        f->out->failed = 1;
        f->out->kind = co->err->kind;
        f->out->errnum = co->err->errnum;
        snprintf(f->out->msg, sizeof f->out->msg, "%s", co->err->msg);
        coro_error_line(co->err, f->out->line, sizeof f->out->line);
        coro_error_free(co->err);
        co->err = NULL;
    } else {
        f->out->value = co->value;
        if (co->value.p && co->value.n > 0 && co->value.n <= (long long)sizeof f->out->data)
            memcpy(f->out->data, co->value.p, (size_t)co->value.n);
    }
    f->out->done = 1;
    CORO_END(co);
}

static void driver_finally(coro *co)
{
    driver_frame *f = (driver_frame *)co;
    coro_free(f->pending); /* never started */
}

static const coro_def driver_def = {"driver", __FILE__, driver_body, driver_finally,
                                    sizeof(driver_frame)};

static task *start(coro *c, outcome *out)
{
    assert_non_null(c);
    memset(out, 0, sizeof *out);
    driver_frame *f = (driver_frame *)coro_new(&driver_def);
    assert_non_null(f);
    f->pending = c;
    f->out = out;
    task *t = task_new(loop, &f->co, "driver");
    assert_non_null(t);
    return t;
}

static void finish(task *t, outcome *out)
{
    assert_int_equal(run_until_complete(loop, t), 0);
    assert_false(guarded_loop_hit());
    assert_int_equal(task_future(t)->state, FUTURE_DONE);
    assert_true(out->done);
    task_free(t);
    assert_int_equal(task_live_count(), 0);
}

static void run_coro(coro *c, outcome *out)
{
    finish(start(c, out), out);
}

/* ---- helpers: listeners, socketpairs, writes from timers -------------------------- */

static int listener(struct sockaddr_storage *ss, socklen_t *len)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    assert_int_equal(listen(fd, 8), 0);
    *len = sizeof *ss;
    assert_int_equal(getsockname(fd, (struct sockaddr *)ss, len), 0);
    return fd;
}

/* An address where nothing listens: a port bound, then released. */
static void closed_port(struct sockaddr_storage *ss, socklen_t *len)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    *len = sizeof *ss;
    assert_int_equal(getsockname(fd, (struct sockaddr *)ss, len), 0);
    close(fd);
}

static void make_pair(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
}

typedef struct {
    int fd;
    const char *data;
    size_t len;
    int close_after;
} delayed_write;

static void write_now(selector *s, void *arg)
{
    (void)s;
    delayed_write *w = arg;
    if (w->len)
        assert_int_equal(write(w->fd, w->data, w->len), (ssize_t)w->len);
    if (w->close_after)
        close(w->fd);
}

static void write_in(uint64_t ms, delayed_write *w)
{
    assert_non_null(selector_call_later(loop, ms, write_now, w));
}

/* ---- connect ------------------------------------------------------------------------ */

static void test_connect_succeeds(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    socklen_t len;
    int lfd = listener(&ss, &len);
    outcome out;
    int fd = net_socket(ss.ss_family);
    assert_true(fd >= 0);
    assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    run_coro(sock_connect(fd, &ss, len, 0), &out);
    assert_false(out.failed);
    assert_int_equal(out.value.n, fd);
    assert_null(out.value.p);
    int peer = accept(lfd, NULL, NULL);
    assert_true(peer >= 0);
    assert_int_equal(write(fd, "x", 1), 1);
    char c;
    assert_int_equal(read(peer, &c, 1), 1);
    assert_int_equal(selector_count(loop), 0);
    close(peer);
    close(fd);
    close(lfd);
}

/* A refused connect raises; the socket stays the caller's, and nothing is left in the
 * selector. */
static void test_connect_refused(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    socklen_t len;
    closed_port(&ss, &len);
    int lowest = lowest_free_fd();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    outcome out;
    run_coro(sock_connect(fd, &ss, len, 0), &out);
    assert_true(out.failed);
    assert_int_equal(out.kind, CORO_OSERROR);
    assert_int_equal(out.errnum, ECONNREFUSED);
    assert_string_equal(out.msg, "connect: Connection refused");
    assert_string_equal(out.line, "OSError: [Errno 111] connect: Connection refused");
    assert_true(fcntl(fd, F_GETFD) >= 0); /* still open: the caller closes it */
    close(fd);
    assert_int_equal(lowest_free_fd(), lowest);
    assert_int_equal(selector_count(loop), 0);
    assert_int_equal(selector_timer_count(loop), 1); /* the guard only */
}

/* A connect that fails at once (here: an address of length 0) reports its own errno,
 * even when other calls fail between making the coroutine and its first step. */
static void test_connect_immediate_failure_keeps_errno(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    outcome out;
    task *t = start(sock_connect(fd, &ss, 0, 0), &out);
    assert_int_equal(close(-1), -1); /* errno = EBADF meanwhile */
    finish(t, &out);
    assert_true(out.failed);
    assert_int_equal(out.kind, CORO_OSERROR);
    assert_int_equal(out.errnum, EINVAL);
    assert_string_equal(out.msg, "connect: Invalid argument");
    close(fd);
}

/* What a cancel left (the stage2 exercises' hints, in their grade.conf, are
 * chosen by these words): the coroutine ended with CancelledError, and nothing it
 * waited with (WHAT: the fd, the timers) is left in the loop. */
static void expect_cancelled(const outcome *out, const char *how, size_t fds, size_t timers)
{
    expect_that(out->done,
                "cancelled %s, the coroutine never ended: it went back to waiting, or was not "
                "resumed to raise the CancelledError thrown in",
                how);
    expect_that(out->failed,
                "cancelled %s, the coroutine returned a value (%lld) as if the future had "
                "resolved: the CancelledError thrown in was not raised at the await",
                how, out->value.n);
    expect_that(out->kind == CORO_CANCELLED,
                "cancelled %s, the coroutine raised \"%s\", want CancelledError", how, out->msg);
    expect_that(selector_count(loop) == fds,
                "cancelled %s, %zu fd(s) still registered with the selector, want %zu: the "
                "frame's finally did not run",
                how, selector_count(loop), fds);
    expect_that(selector_timer_count(loop) == timers,
                "cancelled %s, %zu timer(s) left, want %zu (the guard): the frame's finally did "
                "not run",
                how, selector_timer_count(loop), timers);
}

/* ---- sleep ------------------------------------------------------------------------------ */

static void test_sleep(void **state)
{
    (void)state;
    uint64_t t0 = selector_now_ms(loop);
    outcome out;
    run_coro(sock_sleep(30), &out);
    assert_false(out.failed);
    assert_true(selector_now_ms(loop) - t0 >= 30);
    assert_int_equal(selector_timer_count(loop), 1); /* the guard only */
}

/* Cancelled while asleep: its finally cancels the timer. */
static void test_sleep_cancelled(void **state)
{
    (void)state;
    outcome out;
    task *t = start(sock_sleep(3000), &out);
    assert_true(selector_run_once(loop, 0) >= 1);
    assert_int_equal(selector_timer_count(loop), 2);
    task_cancel(t);
    expect_cancelled(&out, "while asleep", 0, 1);
    task_free(t);
}

/* ---- write_all ----------------------------------------------------------------------- */

typedef struct {
    size_t got;
    int calls, eof, mismatch;
} drain;

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 7 + (i >> 12));
}

static void on_drain(selector *s, int fd, int events, void *arg)
{
    (void)events;
    drain *d = arg;
    unsigned char buf[8192];
    d->calls++;
    ssize_t n = read(fd, buf, sizeof buf); /* one read per wakeup: the writer must wait */
    if (n > 0) {
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] != pattern(d->got + (size_t)i))
                d->mismatch++;
        d->got += (size_t)n;
    } else if (n == 0) {
        d->eof = 1;
        selector_unregister(s, fd);
        selector_stop(s);
    }
}

static void test_write_all_one_megabyte(void **state)
{
    (void)state;
    enum { MB = 1 << 20 };
    int sv[2];
    make_pair(sv);
    int small = 16384;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    unsigned char *buf = malloc(MB);
    assert_non_null(buf);
    for (size_t i = 0; i < MB; i++)
        buf[i] = pattern(i);
    drain d = {0, 0, 0, 0};
    assert_int_equal(selector_register(loop, sv[1], SEL_READ, on_drain, &d), 0);

    outcome out;
    run_coro(sock_write_all(sv[0], (const char *)buf, MB, 0), &out);
    assert_false(out.failed);
    assert_int_equal(out.value.n, MB);
    assert_true(d.got < MB); /* the reader was still behind: it had to wait */

    close(sv[0]);
    selector_run(loop); /* drain the rest, until EOF */
    assert_false(guarded_loop_hit());
    assert_true(d.eof);
    assert_int_equal(d.got, MB);
    assert_int_equal(d.mismatch, 0);
    assert_true(d.calls > 2);
    close(sv[1]);
    free(buf);
}

static void test_write_all_to_closed_peer(void **state)
{
    (void)state;
    int sv[2];
    make_pair(sv);
    close(sv[1]);
    outcome out;
    run_coro(sock_write_all(sv[0], "hello", 5, 0), &out);
    assert_true(out.failed);
    assert_int_equal(out.kind, CORO_OSERROR);
    assert_int_equal(out.errnum, EPIPE);
    assert_string_equal(out.msg, "send: Broken pipe");
    close(sv[0]);
}

/* ---- read ---------------------------------------------------------------------------- */

static void test_read_chunks_then_eof(void **state)
{
    (void)state;
    int sv[2];
    make_pair(sv);
    outcome out;

    delayed_write w1 = {sv[1], "hello", 5, 0};
    write_in(20, &w1);
    run_coro(sock_read(sv[0], 0), &out); /* waits for the delayed write */
    assert_false(out.failed);
    assert_int_equal(out.value.n, 5);
    assert_memory_equal(out.data, "hello", 5);

    delayed_write w2 = {sv[1], "world", 5, 1};
    write_in(10, &w2);
    run_coro(sock_read(sv[0], 0), &out);
    assert_int_equal(out.value.n, 5);
    assert_memory_equal(out.data, "world", 5);

    run_coro(sock_read(sv[0], 0), &out); /* the peer closed: EOF */
    assert_false(out.failed);
    assert_int_equal(out.value.n, 0);
    assert_int_equal(selector_count(loop), 0);
    close(sv[0]);
}

static void test_read_deadline_times_out(void **state)
{
    (void)state;
    int sv[2];
    make_pair(sv);
    outcome out;
    uint64_t t0 = selector_now_ms(loop);
    run_coro(sock_read(sv[0], t0 + 100), &out);
    uint64_t elapsed = selector_now_ms(loop) - t0;
    assert_true(out.failed);
    assert_int_equal(out.kind, CORO_TIMEOUT);
    assert_string_equal(out.line, "TimeoutError: timeout");
    assert_true(elapsed >= 95);
    assert_true(elapsed < 2000);
    assert_int_equal(selector_count(loop), 0);       /* fd unregistered */
    assert_int_equal(selector_timer_count(loop), 1); /* the guard only */
    close(sv[0]);
    close(sv[1]);
}

/* Data arriving before the deadline: the deadline timer is cancelled. */
static void test_read_within_deadline(void **state)
{
    (void)state;
    int sv[2];
    make_pair(sv);
    delayed_write w = {sv[1], "ok", 2, 0};
    write_in(10, &w);
    outcome out;
    run_coro(sock_read(sv[0], selector_now_ms(loop) + 1000), &out);
    assert_false(out.failed);
    assert_int_equal(out.value.n, 2);
    assert_int_equal(selector_timer_count(loop), 1);
    close(sv[0]);
    close(sv[1]);
}

/* A task cancelled while it waits in read: the fd is unregistered and the deadline
 * timer cancelled by the frame's finally. */
static void test_cancel_while_reading(void **state)
{
    (void)state;
    int sv[2];
    make_pair(sv);
    outcome out;
    task *t = start(sock_read(sv[0], selector_now_ms(loop) + 3000), &out);
    assert_true(selector_run_once(loop, 0) >= 1);
    assert_int_equal(selector_count(loop), 1);
    assert_int_equal(selector_timer_count(loop), 2);
    task_cancel(t);
    expect_cancelled(&out, "while reading", 0, 1);
    task_free(t);
    close(sv[0]);
    close(sv[1]);
}

/* ---- read_all ------------------------------------------------------------------------ */

typedef struct {
    int status;
    char ctype[64];
    long long clen;
    char body[256];
    size_t nbody;
    int heads;
} response;

static void on_head(void *ctx, const http_head *h)
{
    response *r = ctx;
    r->heads++;
    r->status = h->status;
    r->clen = h->content_length;
    snprintf(r->ctype, sizeof r->ctype, "%s", h->content_type ? h->content_type : "");
}

static void on_body(void *ctx, const char *data, size_t len)
{
    response *r = ctx;
    assert_true(r->nbody + len <= sizeof r->body);
    memcpy(r->body + r->nbody, data, len);
    r->nbody += len;
}

static void test_read_all_feeds_parser(void **state)
{
    (void)state;
    static const char resp[] = "HTTP/1.0 200 OK\r\n"
                               "Content-Type: text/html\r\n"
                               "Content-Length: 11\r\n"
                               "\r\n"
                               "hello world";
    int sv[2];
    make_pair(sv);
    /* In pieces, with pauses: head split mid-line, body split in two. */
    delayed_write w[] = {
        {sv[1], resp, 10, 0},
        {sv[1], resp + 10, 30, 0},
        {sv[1], resp + 40, sizeof resp - 1 - 40 - 6, 0},
        {sv[1], resp + sizeof resp - 1 - 6, 6, 0},
    };
    for (int i = 0; i < 4; i++)
        write_in(10 + 15 * (uint64_t)i, &w[i]);
    response r;
    memset(&r, 0, sizeof r);
    http_sink sink = {.on_head = on_head, .on_body = on_body, .ctx = &r};
    http_parser *p = http_parser_new(&sink);
    assert_non_null(p);

    outcome out;
    run_coro(sock_read_all(sv[0], p, 0), &out);
    assert_false(out.failed);
    assert_int_equal(out.value.n, sizeof resp - 1); /* every byte read */
    assert_int_equal(r.heads, 1);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "text/html");
    assert_int_equal(r.clen, 11);
    assert_int_equal(r.nbody, 11);
    assert_memory_equal(r.body, "hello world", 11);
    assert_int_equal(selector_count(loop), 0);
    http_parser_free(p);
    close(sv[0]);
    close(sv[1]);
}

/* No Content-Length: the body ends at EOF. */
static void test_read_all_until_eof(void **state)
{
    (void)state;
    static const char resp[] = "HTTP/1.0 404 Not Found\r\n\r\nmissing";
    int sv[2];
    make_pair(sv);
    delayed_write w1 = {sv[1], resp, 12, 0};
    delayed_write w2 = {sv[1], resp + 12, sizeof resp - 1 - 12, 1};
    write_in(10, &w1);
    write_in(30, &w2);
    response r;
    memset(&r, 0, sizeof r);
    http_sink sink = {.on_head = on_head, .on_body = on_body, .ctx = &r};
    http_parser *p = http_parser_new(&sink);
    outcome out;
    run_coro(sock_read_all(sv[0], p, 0), &out);
    assert_false(out.failed);
    assert_int_equal(out.value.n, sizeof resp - 1);
    assert_int_equal(r.status, 404);
    assert_int_equal(r.nbody, 7);
    assert_memory_equal(r.body, "missing", 7);
    http_parser_free(p);
    close(sv[0]);
}

/* The peer closes before the body is complete: the parser's error is raised. */
static void test_read_all_short_body(void **state)
{
    (void)state;
    static const char resp[] = "HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\nshort";
    int sv[2];
    make_pair(sv);
    delayed_write w = {sv[1], resp, sizeof resp - 1, 1};
    write_in(10, &w);
    http_sink sink = {0};
    http_parser *p = http_parser_new(&sink);
    outcome out;
    run_coro(sock_read_all(sv[0], p, 0), &out);
    assert_true(out.failed);
    assert_int_equal(out.kind, CORO_ERROR);
    assert_string_equal(out.msg, http_parser_error(p));
    assert_true(out.msg[0] != '\0');
    http_parser_free(p);
    close(sv[0]);
}

/* A deadline on read_all applies to each wait: no data, TimeoutError. */
static void test_read_all_timeout(void **state)
{
    (void)state;
    int sv[2];
    make_pair(sv);
    http_sink sink = {0};
    http_parser *p = http_parser_new(&sink);
    outcome out;
    run_coro(sock_read_all(sv[0], p, selector_now_ms(loop) + 100), &out);
    assert_true(out.failed);
    assert_int_equal(out.kind, CORO_TIMEOUT);
    assert_int_equal(selector_count(loop), 0);
    http_parser_free(p);
    close(sv[0]);
    close(sv[1]);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_connect_succeeds),
        T(test_connect_refused),
        T(test_connect_immediate_failure_keeps_errno),
        T(test_sleep),
        T(test_sleep_cancelled),
        T(test_write_all_one_megabyte),
        T(test_write_all_to_closed_peer),
        T(test_read_chunks_then_eof),
        T(test_read_deadline_times_out),
        T(test_read_within_deadline),
        T(test_cancel_while_reading),
        T(test_read_all_feeds_parser),
        T(test_read_all_until_eof),
        T(test_read_all_short_body),
        T(test_read_all_timeout),
    };
    /* env CRAWL_TEST_FILTER: only the cases it matches (a cmocka glob), as the
     * exercise grader runs a case alone again (scripts/exercise.sh, `repeat`). */
    const char *only = getenv("CRAWL_TEST_FILTER");
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests_name("sockio", tests, NULL, NULL);
}
