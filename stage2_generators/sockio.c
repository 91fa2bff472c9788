/* sockio.c — connect, read, write_all, read_all as coroutines. Compare each with
 * stage 1's Fetcher: the same system calls, but the continuation is the next line. */
#include "sockio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "alloc.h"
#include "future.h"
#include "net.h"
#include "rawerr.h"
#include "selector.h"
#include "task.h"

static char chunk_buf[NET_READ_CHUNK]; /* one buffer serves every read: a chunk is consumed
                                  before its coroutine suspends again */

/* ---- waiting for readiness: a Future resolved by the selector, failed by a timer */

typedef struct io_wait {
    future fut;
    selector *loop;
    int fd;
    int registered;
    sel_timer *timer;
} io_wait;

static void io_ready(selector *s, int fd, int events, void *arg)
{
    (void)s;
    (void)fd;
    io_wait *w = arg;
    future_set_result(&w->fut, (coro_value){NULL, events});
}

static void io_timeout(selector *s, void *arg)
{
    (void)s;
    io_wait *w = arg;
    w->timer = NULL;
    future_set_error(&w->fut, coro_error_new(CORO_TIMEOUT, ETIMEDOUT, "timeout"));
}

/* Arm: register fd for events and start the deadline timer. */
static int io_wait_start(io_wait *w, coro *co, int fd, int events, uint64_t deadline)
{
    future_clear(&w->fut);
    w->loop = co->task->loop;
    w->fd = fd;
    if (selector_register(w->loop, fd, events, io_ready, w) < 0)
        return -1;
    w->registered = 1;
    if (deadline) {
        uint64_t now = selector_now_ms(w->loop);
        w->timer = selector_call_later(w->loop, deadline > now ? deadline - now : 0, io_timeout, w);
    }
    return 0;
}

/* Disarm: what the chapter does with selector.unregister after `yield f`. */
static void io_wait_stop(io_wait *w)
{
    if (w->registered)
        selector_unregister(w->loop, w->fd);
    w->registered = 0;
    if (w->timer)
        selector_cancel(w->loop, w->timer);
    w->timer = NULL;
}

/* A frame's finally: disarm, and free what the future holds. */
static void io_wait_clear(io_wait *w)
{
    io_wait_stop(w);
    future_clear(&w->fut);
}

/* ---- sleep: asyncio.sleep, a Future resolved by a selector timer ---- */

typedef struct {
    coro co;
    uint64_t ms;
    future fut;
    selector *loop;
    sel_timer *timer;
} sleep_frame;

static void sleep_over(selector *s, void *arg)
{
    (void)s;
    sleep_frame *f = arg;
    f->timer = NULL;
    future_set_result(&f->fut, (coro_value){NULL, 0});
}

static int sleep_body(coro *co)
{
    sleep_frame *f = (sleep_frame *)co;
    CORO_BEGIN(co);
    f->loop = co->task->loop;
    f->timer = selector_call_later(f->loop, f->ms, sleep_over, f);
    AWAIT_FUTURE(co, &f->fut);
    CORO_END(co);
}

static void sleep_finally(coro *co)
{
    sleep_frame *f = (sleep_frame *)co;
    if (f->timer) /* cancelled while asleep: the timer must not fire */
        selector_cancel(f->loop, f->timer);
    future_clear(&f->fut);
}

static const coro_def sleep_def = {"sleep", __FILE__, sleep_body, sleep_finally,
                                   sizeof(sleep_frame)};

coro *sock_sleep(uint64_t ms)
{
    sleep_frame *f = (sleep_frame *)coro_new(&sleep_def);
    f->ms = ms;
    future_init(&f->fut);
    return &f->co;
}

/* ---- getaddrinfo: asyncio's loop.getaddrinfo — the lookup runs in the thread pool
 * (dns.h: cached, shared with the other lookups of the host) and a Future brings the
 * address back to this coroutine. ---- */

typedef struct {
    coro co;
    dns_resolver *dns;
    char *host;
    int port;
    struct sockaddr_storage *addr; /* the caller's */
    socklen_t *len;
    dns_waiter waiter;
    future fut;
} getaddrinfo_frame;

static void resolved(dns_waiter *w, const struct sockaddr_storage *addr, socklen_t len,
                     const char *error)
{
    getaddrinfo_frame *f = w->data;
    if (error) {
        future_set_error(&f->fut, coro_error_new(CORO_OSERROR, 0, "%s", error));
        return;
    }
    *f->addr = *addr;
    *f->len = len;
    future_set_result(&f->fut, (coro_value){NULL, 0});
}

static int getaddrinfo_body(coro *co)
{
    getaddrinfo_frame *f = (getaddrinfo_frame *)co;
    CORO_BEGIN(co);
    dns_lookup(f->dns, &f->waiter, f->host, f->port, resolved, f);
    AWAIT_FUTURE(co, &f->fut); /* cached: resolved already, no wait */
    CORO_END(co);
}

static void getaddrinfo_finally(coro *co)
{
    getaddrinfo_frame *f = (getaddrinfo_frame *)co;
    dns_cancel(&f->waiter); /* cancelled while waiting: no callback later */
    future_clear(&f->fut);
    free(f->host);
}

static const coro_def getaddrinfo_def = {"getaddrinfo", __FILE__, getaddrinfo_body,
                                         getaddrinfo_finally, sizeof(getaddrinfo_frame)};

coro *sock_getaddrinfo(dns_resolver *dns, const char *host, int port, struct sockaddr_storage *addr,
                       socklen_t *len)
{
    getaddrinfo_frame *f = (getaddrinfo_frame *)coro_new(&getaddrinfo_def);
    f->dns = dns;
    f->host = xstrdup(host);
    f->port = port;
    f->addr = addr;
    f->len = len;
    list_node_init(&f->waiter.node);
    future_init(&f->fut);
    return &f->co;
}

/* ---- connect ---- */

typedef struct {
    coro co;
    int fd; /* the caller's: it closes it, whatever happens */
    struct sockaddr_storage addr;
    socklen_t len;
    uint64_t deadline;
    io_wait w;
} connect_frame;

static int connect_body(coro *co)
{
    connect_frame *f = (connect_frame *)co;
    CORO_BEGIN(co);
    {
        int r = net_connect(f->fd, (const struct sockaddr *)&f->addr, f->len);
        if (r < 0)
            CORO_RAISE(co, CORO_OSERROR, errno, "%s",
                       raw_error((char[128]){0}, 128, "connect", errno));
        if (r == 1)
            CORO_RETURN(co, NULL, f->fd); /* connected already (loopback): no wait */
    }
    if (io_wait_start(&f->w, co, f->fd, SEL_WRITE, f->deadline) < 0)
        CORO_RAISE(co, CORO_OSERROR, errno, "%s", selector_error(co->task->loop));
    AWAIT_FUTURE(co, &f->w.fut);
    io_wait_stop(&f->w);
    {
        int err = net_connect_result(f->fd);
        if (err)
            CORO_RAISE(co, CORO_OSERROR, err, "%s", raw_error((char[128]){0}, 128, "connect", err));
    }
    CORO_RETURN(co, NULL, f->fd);
    CORO_END(co);
}

static void connect_finally(coro *co)
{
    io_wait_clear(&((connect_frame *)co)->w);
}

static const coro_def connect_def = {"connect", __FILE__, connect_body, connect_finally,
                                     sizeof(connect_frame)};

coro *sock_connect(int fd, const struct sockaddr_storage *addr, socklen_t len, uint64_t deadline_ms)
{
    connect_frame *f = (connect_frame *)coro_new(&connect_def);
    f->fd = fd;
    if (len <= sizeof f->addr)
        memcpy(&f->addr, addr, len);
    f->len = len;
    f->deadline = deadline_ms;
    return &f->co;
}

/* ---- read ---- */

typedef struct {
    coro co;
    int fd;
    uint64_t deadline;
    io_wait w;
} read_frame;

static int read_body(coro *co)
{
    read_frame *f = (read_frame *)co;
    CORO_BEGIN(co);
    for (;;) {
        if (io_wait_start(&f->w, co, f->fd, SEL_READ, f->deadline) < 0)
            CORO_RAISE(co, CORO_OSERROR, errno, "%s", selector_error(co->task->loop));
        AWAIT_FUTURE(co, &f->w.fut);
        io_wait_stop(&f->w);
        {
            ssize_t n = recv(f->fd, chunk_buf, sizeof chunk_buf, 0);
            if (n >= 0)
                CORO_RETURN(co, chunk_buf, n);
            if (errno != EAGAIN && errno != EINTR)
                CORO_RAISE(co, CORO_OSERROR, errno, "%s",
                           raw_error((char[128]){0}, 128, "recv", errno));
        }
    }
    CORO_END(co);
}

static void wait_finally(coro *co)
{
    io_wait_clear(&((read_frame *)co)->w);
}

static const coro_def read_def = {"read", __FILE__, read_body, wait_finally, sizeof(read_frame)};

coro *sock_read(int fd, uint64_t deadline_ms)
{
    read_frame *f = (read_frame *)coro_new(&read_def);
    f->fd = fd;
    f->deadline = deadline_ms;
    return &f->co;
}

/* ---- write_all ---- */

typedef struct {
    coro co; /* same head as read_frame, so wait_finally serves both */
    int fd;
    uint64_t deadline;
    io_wait w;
    const char *buf;
    size_t len, sent;
} write_frame;

static int write_all_body(coro *co)
{
    write_frame *f = (write_frame *)co;
    CORO_BEGIN(co);
    while (f->sent < f->len) {
        {
            ssize_t n = send(f->fd, f->buf + f->sent, f->len - f->sent, MSG_NOSIGNAL);
            if (n > 0) {
                f->sent += (size_t)n;
                continue;
            }
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                CORO_RAISE(co, CORO_OSERROR, errno, "%s",
                           raw_error((char[128]){0}, 128, "send", errno));
        }
        /* The socket buffer is full: wait until it drains. */
        if (io_wait_start(&f->w, co, f->fd, SEL_WRITE, f->deadline) < 0)
            CORO_RAISE(co, CORO_OSERROR, errno, "%s", selector_error(co->task->loop));
        AWAIT_FUTURE(co, &f->w.fut);
        io_wait_stop(&f->w);
    }
    CORO_RETURN(co, NULL, (long long)f->sent);
    CORO_END(co);
}

static const coro_def write_all_def = {"write_all", __FILE__, write_all_body, wait_finally,
                                       sizeof(write_frame)};

coro *sock_write_all(int fd, const char *buf, size_t len, uint64_t deadline_ms)
{
    write_frame *f = (write_frame *)coro_new(&write_all_def);
    f->fd = fd;
    f->deadline = deadline_ms;
    f->buf = buf;
    f->len = len;
    return &f->co;
}

/* ---- read_all ---- */

typedef struct {
    coro co;
    int fd;
    uint64_t deadline;
    http_parser *parser;
    bool (*full)(const void *ctx);
    const void *full_ctx;
    long long total;
} read_all_frame;

static int read_all_body(coro *co)
{
    read_all_frame *f = (read_all_frame *)co;
    CORO_BEGIN(co);
    for (;;) {
        AWAIT(co, sock_read(f->fd, f->deadline));
        {
            const char *chunk = co->value.p;
            size_t n = (size_t)co->value.n;
            int r = n ? http_parser_feed(f->parser, chunk, n) : http_parser_eof(f->parser);
            f->total += (long long)n;
            if (f->full && f->full(f->full_ctx))
                break; /* the sink has enough: stop reading */
            if (r < 0)
                CORO_RAISE(co, CORO_ERROR, 0, "%s", http_parser_error(f->parser));
            if (r == 1 || n == 0)
                break;
        }
    }
    CORO_RETURN(co, NULL, f->total);
    CORO_END(co);
}

static const coro_def read_all_def = {"read_all", __FILE__, read_all_body, NULL,
                                      sizeof(read_all_frame)};

coro *sock_read_all_until(int fd, http_parser *parser, uint64_t deadline_ms,
                          bool (*full)(const void *ctx), const void *ctx)
{
    read_all_frame *f = (read_all_frame *)coro_new(&read_all_def);
    f->fd = fd;
    f->parser = parser;
    f->deadline = deadline_ms;
    f->full = full;
    f->full_ctx = ctx;
    return &f->co;
}

coro *sock_read_all(int fd, http_parser *parser, uint64_t deadline_ms)
{
    return sock_read_all_until(fd, parser, deadline_ms, NULL, NULL);
}
