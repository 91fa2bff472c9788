/* conn.c — the life of one client connection (see conn.h).
 *
 *   READ  --head--> WAIT (delay timer) --> SEND (as fast as the socket takes it)
 *                                      \-> DRIP (N bytes, timer, N bytes, ...)
 *   SEND --done--> READ (keep-alive) | LINGER (shutdown, drain, close) | RESET (RST)
 *
 * Every entry point (I/O callback, timer) moves the state machine as far as it can,
 * then settle() registers exactly the events the new state needs. Functions that may
 * free the connection return -1 when they did. */
#include "conn.h"

#include "alloc.h"
#include "log.h"
#include "reply.h"
#include "request.h"

#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define IN_START      1024
#define IN_MAX        (REQUEST_MAX_HEAD + REQUEST_MAX_BODY + 1024)
#define LINGER_MS     2000 /* how long a closing connection is drained */
#define RESET_POLL_MS 5    /* wait for the sent bytes to leave before a reset */
#define RESET_POLLS   400

enum state { C_READ, C_WAIT, C_SEND, C_DRIP, C_RESET, C_LINGER };

typedef struct conn {
    server *srv;
    int fd;
    list_node node; /* in srv->conns */
    enum state state;
    int watching; /* events registered with the selector */
    sel_timer *timer;
    char *in; /* received bytes not yet used */
    size_t in_len, in_cap;
    long long skip;            /* request body bytes still to discard */
    bool peer_eof;             /* the client will send nothing more */
    bool active;               /* a counted request is in progress */
    double begin_ms;           /* --log: when its head was read */
    char *log_host, *log_path; /* --log: its Host and path */
    char *log_fields;          /* --log-header: the fields asked for (server.h) */
    reply rep;
    uint64_t sent;         /* response bytes written so far */
    uint64_t drip_allowed; /* body bytes released by the drip timer so far */
    int reset_polls;
} conn;

static void on_io(selector *s, int fd, int events, void *data);
static int process(conn *c);

void conn_close(conn *c)
{
    server *srv = c->srv;
    if (c->timer)
        selector_cancel(srv->sel, c->timer);
    if (c->watching)
        selector_unregister(srv->sel, c->fd);
    close(c->fd);
    if (c->active) {
        server_log_request(srv, c->begin_ms, c->log_host, c->log_path, c->log_fields, END_ABORTED,
                           c->rep.status, c->sent);
        server_request_end(srv, END_ABORTED);
    }
    free(c->log_host);
    free(c->log_path);
    free(c->log_fields);
    reply_clear(&c->rep);
    free(c->in);
    list_remove(&c->node);
    srv->stats.connections--;
    free(c);
}

void conn_close_all(server *srv)
{
    list_node *n;
    while ((n = list_first(&srv->conns)))
        conn_close(list_entry(n, conn, node));
}

void conn_accepted(server *srv, int fd)
{
    conn *c = xcalloc(1, sizeof *c);
    c->srv = srv;
    c->fd = fd;
    c->rep.reset_after = -1;
    list_push_front(&srv->conns, &c->node);
    if (++srv->stats.connections > srv->stats.peak_connections)
        srv->stats.peak_connections = srv->stats.connections;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* drip exactly */
    if (selector_register(srv->sel, fd, SEL_READ, on_io, c) < 0) {
        if (!srv->warned_register) {
            log_warn("testsite: cannot watch a connection: %s (warned once)",
                     selector_error(srv->sel));
            srv->warned_register = true;
        }
        conn_close(c);
        return;
    }
    c->watching = SEL_READ;
}

/* Register the events the current state waits for. */
static int settle(conn *c)
{
    bool can_buffer = !c->peer_eof && c->in_len < IN_MAX;
    int want = 0;
    switch (c->state) {
    case C_READ: want = SEL_READ; break;
    case C_WAIT:
    case C_DRIP: want = can_buffer ? SEL_READ : 0; break;
    case C_SEND: want = SEL_WRITE | (can_buffer ? SEL_READ : 0); break;
    case C_RESET: want = 0; break;
    case C_LINGER: want = SEL_READ; break;
    }
    if (want == c->watching)
        return 0;
    selector *s = c->srv->sel;
    int rc = want == 0     ? selector_unregister(s, c->fd)
        : c->watching == 0 ? selector_register(s, c->fd, want, on_io, c)
                           : selector_modify(s, c->fd, want, on_io, c);
    if (rc < 0) {
        conn_close(c);
        return -1;
    }
    c->watching = want;
    return 0;
}

static void consume(conn *c, size_t n)
{
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
}

/* Read what the socket has into the input buffer (or drain it when lingering). */
static int read_input(conn *c)
{
    for (;;) {
        char drain[4096];
        char *dst = drain;
        size_t room = sizeof drain;
        if (c->state != C_LINGER) {
            if (c->in_len == c->in_cap) {
                if (c->in_cap >= IN_MAX)
                    return 0; /* full: the request is handled before reading more */
                size_t cap = c->in_cap ? c->in_cap * 2 : IN_START;
                if (cap > IN_MAX)
                    cap = IN_MAX;
                c->in = xrealloc(c->in, cap);
                c->in_cap = cap;
            }
            dst = c->in + c->in_len;
            room = c->in_cap - c->in_len;
        }
        ssize_t n = read(c->fd, dst, room);
        if (n > 0) {
            if (c->state != C_LINGER)
                c->in_len += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n == 0 && c->state != C_LINGER) {
            c->peer_eof = true;
            return 0;
        }
        conn_close(c); /* a lingering close is over, or the client reset */
        return -1;
    }
}

static void on_linger_timeout(selector *s, void *data)
{
    (void)s;
    conn *c = data;
    c->timer = NULL;
    conn_close(c);
}

/* Close after a response: send FIN, then drain what the client still sends (closing
 * with unread input would reset the connection and could destroy the response). */
static int linger_close(conn *c)
{
    reply_clear(&c->rep);
    if (c->peer_eof || shutdown(c->fd, SHUT_WR) < 0) {
        conn_close(c);
        return -1;
    }
    c->state = C_LINGER;
    c->in_len = 0;
    c->timer = selector_call_later(c->srv->sel, LINGER_MS, on_linger_timeout, c);
    return 0;
}

static void end_request(conn *c, enum request_end how)
{
    if (c->active) {
        server_log_request(c->srv, c->begin_ms, c->log_host, c->log_path, c->log_fields, how,
                           c->rep.status, c->sent);
        server_request_end(c->srv, how);
        c->active = false;
    }
}

/* Reset (RST) once the bytes written so far have left the socket buffer. */
static int reset_when_flushed(conn *c);

static void on_reset_poll(selector *s, void *data)
{
    (void)s;
    conn *c = data;
    c->timer = NULL;
    if (reset_when_flushed(c) == 0)
        settle(c);
}

static int reset_when_flushed(conn *c)
{
    int queued = 0;
    if (ioctl(c->fd, SIOCOUTQ, &queued) == 0 && queued > 0 && c->reset_polls++ < RESET_POLLS) {
        c->state = C_RESET;
        c->timer = selector_call_later(c->srv->sel, RESET_POLL_MS, on_reset_poll, c);
        return 0;
    }
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    end_request(c, END_DROPPED);
    conn_close(c);
    return -1;
}

static void on_drip(selector *s, void *data);

/* Write the response as far as allowed. Returns -1 (closed), 0 (waiting: state WAIT,
 * SEND, DRIP, RESET or LINGER) or 1 (done, back in READ). */
static int advance(conn *c)
{
    reply *r = &c->rep;
    if (r->drop) {
        end_request(c, END_DROPPED);
        return linger_close(c);
    }
    uint64_t total = reply_total(r);
    uint64_t limit =
        r->reset_after >= 0 && (uint64_t)r->reset_after < total ? (uint64_t)r->reset_after : total;
    uint64_t allowed = limit;
    if (r->drip_bytes > 0 && r->head_len + c->drip_allowed < limit)
        allowed = r->head_len + c->drip_allowed;
    while (c->sent < allowed) {
        struct iovec iov[2];
        int n_iov = 0;
        uint64_t off = c->sent, want = allowed - c->sent;
        while (n_iov < 2 && want > 0 && off < total) {
            size_t avail;
            const char *p = reply_bytes(r, off, &avail);
            if (avail > want)
                avail = (size_t)want;
            iov[n_iov].iov_base = (void *)p;
            iov[n_iov].iov_len = avail;
            n_iov++;
            off += avail;
            want -= avail;
        }
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n_iov};
        ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        if (n > 0) {
            c->sent += (uint64_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->state = C_SEND;
            return 0;
        }
        conn_close(c); /* the client went away */
        return -1;
    }
    if (c->sent < limit) { /* dripping: the next bytes after a pause */
        c->state = C_DRIP;
        c->timer = selector_call_later(c->srv->sel, (uint64_t)r->drip_ms, on_drip, c);
        return 0;
    }
    if (limit < total)
        return reset_when_flushed(c);
    end_request(c, END_SERVED);
    if (r->close)
        return linger_close(c);
    reply_clear(r);
    c->state = C_READ;
    return 1;
}

/* After a timer: write what may be written now, then go on with the connection. */
static void step(conn *c)
{
    int rc = advance(c);
    if (rc > 0)
        rc = process(c);
    if (rc >= 0)
        settle(c);
}

static void on_drip(selector *s, void *data)
{
    (void)s;
    conn *c = data;
    c->timer = NULL;
    c->drip_allowed += (uint64_t)c->rep.drip_bytes;
    step(c);
}

static void on_delay(selector *s, void *data)
{
    (void)s;
    conn *c = data;
    c->timer = NULL;
    step(c);
}

/* Start answering: the reply is in c->rep. */
static int start(conn *c)
{
    c->sent = 0;
    c->drip_allowed = (uint64_t)(c->rep.drip_bytes > 0 ? c->rep.drip_bytes : 0);
    c->reset_polls = 0;
    if (c->rep.counted) {
        server_request_begin(c->srv);
        c->active = true;
    }
    if (c->rep.delay_ms == 0)
        return advance(c);
    c->state = C_WAIT;
    c->timer = selector_call_later(c->srv->sel, c->rep.delay_ms, on_delay, c);
    return 0;
}

/* In READ: take requests from the input buffer and answer them, one at a time. */
static int process(conn *c)
{
    for (;;) {
        if (c->skip > 0) {
            size_t n = c->skip < (long long)c->in_len ? (size_t)c->skip : c->in_len;
            consume(c, n);
            c->skip -= (long long)n;
            if (c->skip > 0)
                break;
        }
        request req = {0};
        long n = c->in_len ? request_parse(c->in, c->in_len, &req) : REQ_MORE;
        if (n == REQ_MORE) {
            request_clear(&req);
            break;
        }
        if (n < 0) {
            request_clear(&req);
            c->in_len = 0;
            int status = n == REQ_TOO_BIG ? 431 : n == REQ_VERSION ? 505 : 400;
            reply_error(status, &c->rep);
            return start(c); /* closes after the response */
        }
        size_t taken = 0; /* the body's bytes, read with the head */
        if (req.path && req.body_len > 0 && req.body_len <= REQUEST_MAX_BODY) {
            if (c->in_len < (size_t)n + (size_t)req.body_len && !c->peer_eof) {
                request_clear(&req); /* the body (a form) is read with its head */
                break;
            }
            if (c->in_len >= (size_t)n + (size_t)req.body_len) {
                taken = (size_t)req.body_len;
                req.body = xstrndup(c->in + n, taken); /* a NUL ends it: no form has one */
                req.body_len = 0;                      /* consumed with the head, not skipped */
            }
        }
        if (c->srv->log && req.path) {
            free(c->log_host);
            free(c->log_path);
            free(c->log_fields);
            c->log_host = req.host ? xstrdup(req.host) : NULL;
            c->log_path = xstrdup(req.path);
            c->log_fields = server_log_fields(c->srv, c->in, (size_t)n);
            c->begin_ms = server_now_ms();
        }
        consume(c, (size_t)n + taken);
        if (!req.path) /* only empty lines */
            continue;
        c->skip = req.body_len;
        reply_build(c->srv, &req, &c->rep);
        request_clear(&req);
        int rc = start(c);
        if (rc <= 0)
            return rc;
    }
    if (c->peer_eof) { /* nothing more will come: done with this connection */
        conn_close(c);
        return -1;
    }
    return 0;
}

static void on_io(selector *s, int fd, int events, void *data)
{
    (void)s;
    (void)fd;
    conn *c = data;
    if ((events & SEL_READ) && read_input(c) < 0)
        return;
    if ((events & SEL_WRITE) && c->state == C_SEND && advance(c) < 0)
        return;
    if (c->state == C_READ && process(c) < 0)
        return;
    settle(c);
}
