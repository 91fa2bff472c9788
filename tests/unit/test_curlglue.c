/* test_curlglue.c — the libcurl glue against a tiny HTTP/1.1 server that lives in the
 * test itself, on 127.0.0.1, driven by the same selector as the client.
 *
 * The server answers by path (see respond()), keeps connections alive, and counts
 * connections (accepted, open now, most open at once) so the tests can check reuse and
 * the connection cap. Every loop runs under a deadline timer that stops the selector
 * and fails the test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "curlglue.h"
#include "http.h"
#include "list.h"
#include "selector.h"

#define DEADLINE_MS 20000 /* generous: only reached when something is broken */
#define BIG_SIZE    100000

/* gzip of GZIP_PLAIN (made with Python's gzip.compress, mtime 0). */
static const char GZIP_PLAIN[] = "gzip body: the quick brown fox jumps over the lazy dog, "
                                 "twice: the quick brown fox jumps over the lazy dog\n";
static const unsigned char GZIP_BYTES[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0xaf, 0xca, 0x2c,
    0x50, 0x48, 0xca, 0x4f, 0xa9, 0xb4, 0x52, 0x28, 0xc9, 0x48, 0x55, 0x28, 0x2c, 0xcd,
    0x4c, 0xce, 0x56, 0x48, 0x2a, 0xca, 0x2f, 0xcf, 0x53, 0x48, 0xcb, 0xaf, 0x50, 0xc8,
    0x2a, 0xcd, 0x2d, 0x28, 0x56, 0xc8, 0x2f, 0x4b, 0x2d, 0x02, 0x4b, 0xe7, 0x24, 0x56,
    0x55, 0x2a, 0xa4, 0xe4, 0xa7, 0xeb, 0x28, 0x94, 0x94, 0x67, 0x26, 0xa7, 0x92, 0xa4,
    0x87, 0x0b, 0x00, 0x27, 0x60, 0xbd, 0x7c, 0x6b, 0x00, 0x00, 0x00};

/* ---- the test server ------------------------------------------------------------- */

typedef struct tsrv tsrv;

typedef struct tconn {
    tsrv *srv;
    int fd;
    char in[8192];
    size_t inlen;
    char *out;
    size_t outlen, outoff;
    sel_timer *delay; /* a /slow answer waiting to be sent */
    int hanging;      /* got /hang: never answers again */
    int close_after;  /* close once everything queued is sent */
    list_node node;   /* in srv->conns */
} tconn;

struct tsrv {
    selector *s;
    int lfd;
    int port;
    list_node conns;
    int accepted, open, max_open;
    int requests, hang_requests, peer_closes;
    int stop_at_hangs;      /* stop the selector when this many /hang arrived (0: no) */
    int stop_at_peer_close; /* stop the selector when a client closes a connection */
};

static void conn_close(tconn *c, int by_peer)
{
    tsrv *srv = c->srv;
    selector_unregister(srv->s, c->fd);
    close(c->fd);
    if (c->delay)
        selector_cancel(srv->s, c->delay);
    free(c->out);
    list_remove(&c->node);
    srv->open--;
    if (by_peer) {
        srv->peer_closes++;
        if (srv->stop_at_peer_close)
            selector_stop(srv->s);
    }
    free(c);
}

static void conn_io(selector *s, int fd, int events, void *data);

/* Send what is buffered; -1 when the connection broke. */
static int conn_flush(tconn *c)
{
    while (c->outoff < c->outlen) {
        ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
        if (n > 0) {
            c->outoff += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            selector_modify(c->srv->s, c->fd, SEL_READ | SEL_WRITE, conn_io, c);
            return 0;
        } else {
            return -1;
        }
    }
    c->outoff = c->outlen = 0;
    if (c->close_after)
        return -1; /* sent: the caller closes */
    selector_modify(c->srv->s, c->fd, SEL_READ, conn_io, c);
    return 0;
}

static void conn_queue(tconn *c, const void *data, size_t len)
{
    char *nb = realloc(c->out, c->outlen + len);
    assert_non_null(nb);
    c->out = nb;
    memcpy(c->out + c->outlen, data, len);
    c->outlen += len;
}

static void queue_response(tconn *c, const char *status, const char *extra_headers,
                           const void *body, size_t body_len)
{
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Length: %zu\r\nConnection: keep-alive\r\n%s\r\n",
                     status, body_len, extra_headers);
    assert_true(n > 0 && (size_t)n < sizeof head);
    conn_queue(c, head, (size_t)n);
    if (body_len)
        conn_queue(c, body, body_len);
}

/* /raw/N: the bytes of raw_responses[N] as they are, then close (see
 * test_same_as_raw_parser). */
typedef struct raw_response {
    const char *name;
    char *bytes;
    size_t len;
} raw_response;

static raw_response raw_responses[40];
static size_t n_raw_responses;

static void slow_fire(selector *s, void *data)
{
    (void)s;
    tconn *c = data;
    c->delay = NULL;
    queue_response(c, "200 OK", "Content-Type: text/plain\r\n", "slow", 4);
    if (conn_flush(c) < 0)
        conn_close(c, 0);
}

/* Answer one request. Returns -1 when the connection was closed. */
static int respond(tconn *c, const char *path)
{
    tsrv *srv = c->srv;
    srv->requests++;
    if (strcmp(path, "/ok") == 0) {
        queue_response(c, "200 OK", "Content-Type: text/html; charset=utf-8\r\n", "hello world",
                       11);
    } else if (strcmp(path, "/redirect") == 0) {
        queue_response(c, "301 Moved Permanently", "Location: /ok\r\n", "", 0);
    } else if (strcmp(path, "/gzip") == 0) {
        queue_response(c, "200 OK", "Content-Type: text/plain\r\nContent-Encoding: gzip\r\n",
                       GZIP_BYTES, sizeof GZIP_BYTES);
    } else if (strcmp(path, "/early") == 0) {
        static const char interim[] = "HTTP/1.1 103 Early Hints\r\n"
                                      "Link: </style.css>; rel=preload\r\n"
                                      "Location: /bogus\r\n\r\n";
        conn_queue(c, interim, sizeof interim - 1);
        queue_response(c, "200 OK", "Content-Type: text/plain\r\n", "final", 5);
    } else if (strcmp(path, "/chunked") == 0) {
        static const char resp[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                                   "Content-Type: text/plain\r\n\r\n"
                                   "5\r\nhello\r\n6\r\n world\r\n0\r\n"
                                   "Location: /trailer\r\n\r\n";
        conn_queue(c, resp, sizeof resp - 1);
    } else if (strcmp(path, "/big") == 0) {
        char *body = malloc(BIG_SIZE);
        assert_non_null(body);
        for (size_t i = 0; i < BIG_SIZE; i++)
            body[i] = (char)('a' + i % 26);
        queue_response(c, "200 OK", "Content-Type: text/plain\r\n", body, BIG_SIZE);
        free(body);
    } else if (strcmp(path, "/slow") == 0) {
        c->delay = selector_call_later(srv->s, 30, slow_fire, c);
        assert_non_null(c->delay);
        return 0;
    } else if (strcmp(path, "/hang") == 0) {
        c->hanging = 1;
        srv->hang_requests++;
        if (srv->stop_at_hangs && srv->hang_requests >= srv->stop_at_hangs)
            selector_stop(srv->s);
        return 0;
    } else if (strncmp(path, "/raw/", 5) == 0) {
        raw_response *rr = &raw_responses[atoi(path + 5)];
        conn_queue(c, rr->bytes, rr->len);
        c->close_after = 1;
    } else if (strcmp(path, "/close") == 0) {
        conn_close(c, 0);
        return -1;
    } else {
        queue_response(c, "404 Not Found", "Content-Type: text/plain\r\n", "not found", 9);
    }
    if (conn_flush(c) < 0) {
        conn_close(c, 0);
        return -1;
    }
    return 0;
}

/* Handle every complete request head in the input buffer. */
static int conn_process(tconn *c)
{
    char *end;
    while (!c->hanging && !c->delay && (end = memmem(c->in, c->inlen, "\r\n\r\n", 4)) != NULL) {
        char path[256] = "";
        sscanf(c->in, "GET %255s ", path);
        size_t used = (size_t)(end + 4 - c->in);
        memmove(c->in, c->in + used, c->inlen - used);
        c->inlen -= used;
        if (respond(c, path) < 0)
            return -1;
    }
    return 0;
}

static void conn_io(selector *s, int fd, int events, void *data)
{
    (void)s;
    tconn *c = data;
    if ((events & SEL_WRITE) && conn_flush(c) < 0) {
        conn_close(c, 0);
        return;
    }
    if (!(events & SEL_READ))
        return;
    for (;;) {
        if (c->inlen == sizeof c->in) {
            conn_close(c, 0);
            return;
        }
        ssize_t n = recv(fd, c->in + c->inlen, sizeof c->in - c->inlen, 0);
        if (n > 0) {
            c->inlen += (size_t)n;
        } else if (n == 0) {
            conn_close(c, 1);
            return;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
        } else {
            conn_close(c, 1);
            return;
        }
    }
    conn_process(c);
}

static void srv_accept(selector *s, int fd, int events, void *data)
{
    (void)events;
    tsrv *srv = data;
    for (int i = 0; i < 64; i++) {
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
            return;
        tconn *c = calloc(1, sizeof *c);
        assert_non_null(c);
        c->srv = srv;
        c->fd = cfd;
        list_push_front(&srv->conns, &c->node);
        assert_int_equal(selector_register(s, cfd, SEL_READ, conn_io, c), 0);
        srv->accepted++;
        srv->open++;
        if (srv->open > srv->max_open)
            srv->max_open = srv->open;
    }
}

static int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t alen = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static void srv_start(tsrv *srv, selector *s)
{
    memset(srv, 0, sizeof *srv);
    srv->s = s;
    list_init(&srv->conns);
    srv->lfd = listen_loopback(&srv->port);
    assert_int_equal(listen(srv->lfd, 128), 0);
    assert_int_equal(selector_register(s, srv->lfd, SEL_READ, srv_accept, srv), 0);
}

static void srv_stop(tsrv *srv)
{
    list_node *n;
    while ((n = list_first(&srv->conns)))
        conn_close(list_entry(n, tconn, node), 0);
    selector_unregister(srv->s, srv->lfd);
    close(srv->lfd);
}

/* ---- the client side ------------------------------------------------------------- */

typedef struct env {
    selector *s;
    tsrv srv;
    curl_glue *g;
    int timed_out;
    int outstanding; /* requests whose done is awaited; 0 stops the loop */
} env;

static env E;

typedef struct result {
    curl_req *req;
    int heads, dones;
    int status;
    int has_ctype, has_location;
    char ctype[256], location[256];
    char *fields; /* "name: value\n" per on_header call */
    size_t fields_len;
    int fields_after_head;
    long long clen;
    char *body;
    size_t body_len, body_calls;
    int body_before_head;
    const char *err_ptr;
    char err[512];
    /* behaviour */
    int cancel_in_head, cancel_in_body, cancel_in_header;
    struct result *then; /* started from inside this one's sink/done */
    const char *then_path;
    struct result *cancel_other; /* cancelled from this one's done */
    int chain_left;              /* sequential chain: requests still to start */
} result;

static void on_header(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen);
static void on_head(void *ctx, const http_head *h);
static void on_body(void *ctx, const char *data, size_t len);
static void on_done(void *ctx, const char *error);

static void url_for(char *buf, size_t n, const char *path)
{
    snprintf(buf, n, "http://127.0.0.1:%d%s", E.srv.port, path);
}

static curl_req *start(result *r, const char *path, long timeout_ms, long long max_size)
{
    char url[256];
    url_for(url, sizeof url, path);
    http_sink sink = {.on_head = on_head, .on_body = on_body, .ctx = r, .on_header = on_header};
    r->req = curl_glue_get(E.g, url, NULL, timeout_ms, max_size, &sink, on_done, r);
    if (r->req)
        E.outstanding++;
    return r->req;
}

static void on_header(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen)
{
    result *r = ctx;
    if (r->heads)
        r->fields_after_head = 1;
    char *nf = realloc(r->fields, r->fields_len + nlen + vlen + 4);
    assert_non_null(nf);
    r->fields = nf;
    r->fields_len += (size_t)sprintf(r->fields + r->fields_len, "%.*s: %.*s\n", (int)nlen, name,
                                     (int)vlen, value);
    if (r->cancel_in_header) {
        curl_glue_cancel(E.g, r->req);
        E.outstanding--;
    }
}

static void on_head(void *ctx, const http_head *h)
{
    result *r = ctx;
    r->heads++;
    r->status = h->status;
    r->clen = h->content_length;
    if ((r->has_ctype = h->content_type != NULL))
        snprintf(r->ctype, sizeof r->ctype, "%s", h->content_type);
    if ((r->has_location = h->location != NULL))
        snprintf(r->location, sizeof r->location, "%s", h->location);
    if (r->cancel_in_head) {
        curl_glue_cancel(E.g, r->req);
        E.outstanding--;
        if (r->then) /* a get from inside a sink callback */
            assert_non_null(start(r->then, r->then_path, 0, 0));
    }
}

static void on_body(void *ctx, const char *data, size_t len)
{
    result *r = ctx;
    if (!r->heads)
        r->body_before_head = 1;
    r->body_calls++;
    char *nb = realloc(r->body, r->body_len + len + 1);
    assert_non_null(nb);
    r->body = nb;
    memcpy(r->body + r->body_len, data, len);
    r->body_len += len;
    r->body[r->body_len] = '\0';
    if (r->cancel_in_body) {
        curl_glue_cancel(E.g, r->req);
        curl_glue_cancel(E.g, r->req); /* twice is harmless */
        E.outstanding--;
        if (r->then)
            assert_non_null(start(r->then, r->then_path, 0, 0));
    }
}

static void on_done(void *ctx, const char *error)
{
    result *r = ctx;
    r->dones++;
    r->err_ptr = error;
    if (error)
        snprintf(r->err, sizeof r->err, "%s", error);
    if (r->cancel_other) {
        curl_glue_cancel(E.g, r->cancel_other->req);
        E.outstanding--;
    }
    if (r->chain_left > 0) { /* the next request of a sequential chain */
        result *next = r + 1;
        next->chain_left = r->chain_left - 1;
        assert_non_null(start(next, "/ok", 0, 0));
    }
    if (--E.outstanding <= 0)
        selector_stop(E.s);
}

static void deadline(selector *s, void *data)
{
    (void)data;
    E.timed_out = 1;
    selector_stop(s);
}

/* Run the loop until something stops it or ms pass. Returns 1 if stopped in time. */
static int run_for(uint64_t ms)
{
    E.timed_out = 0;
    sel_timer *t = selector_call_later(E.s, ms, deadline, NULL);
    assert_non_null(t);
    assert_int_equal(selector_run(E.s), 0);
    if (!E.timed_out)
        selector_cancel(E.s, t);
    return !E.timed_out;
}

static void run_until_done(void)
{
    if (E.outstanding > 0)
        assert_true(run_for(DEADLINE_MS));
}

static void result_free(result *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].body);
        free(r[i].fields);
    }
}

static int setup_with(const char *backend, int max_conns)
{
    char err[256];
    memset(&E, 0, sizeof E);
    E.s = selector_new(backend, err, sizeof err);
    assert_non_null(E.s);
    srv_start(&E.srv, E.s);
    E.g = curl_glue_new(E.s, max_conns, NULL, err, sizeof err);
    assert_non_null(E.g);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    return setup_with(NULL, 4);
}

static int teardown(void **state)
{
    (void)state;
    if (E.g) {
        curl_glue_free(E.g);
        E.g = NULL;
    }
    /* the glue left nothing behind in the selector: only the server's own fds */
    assert_int_equal(selector_count(E.s), (size_t)(1 + E.srv.open));
    assert_int_equal(selector_timer_count(E.s), 0);
    srv_stop(&E.srv);
    assert_int_equal(selector_count(E.s), 0);
    selector_free(E.s);
    return 0;
}

/* Replace the fixture's glue with one of another size. */
static void regrow(int max_conns)
{
    char err[256];
    curl_glue_free(E.g);
    E.g = curl_glue_new(E.s, max_conns, NULL, err, sizeof err);
    assert_non_null(E.g);
}

/* ---- tests ----------------------------------------------------------------------- */

static void test_ok(void **state)
{
    (void)state;
    result r = {0};
    assert_non_null(start(&r, "/ok", 5000, 0));
    assert_int_equal(r.dones, 0); /* never from inside curl_glue_get */
    assert_int_equal(curl_glue_in_flight(E.g), 1);
    run_until_done();
    assert_int_equal(r.dones, 1);
    assert_null(r.err_ptr);
    assert_int_equal(r.heads, 1);
    assert_int_equal(r.status, 200);
    assert_true(r.has_ctype);
    assert_string_equal(r.ctype, "text/html; charset=utf-8");
    assert_false(r.has_location);
    assert_int_equal(r.clen, 11);
    assert_int_equal(r.body_len, 11);
    assert_string_equal(r.body, "hello world");
    assert_false(r.body_before_head);
    assert_int_equal(curl_glue_in_flight(E.g), 0);
    result_free(&r, 1);
}

static void test_every_backend(void **state)
{
    (void)state;
    for (size_t i = 0; selector_backends[i]; i++) {
        teardown(NULL);
        setup_with(selector_backends[i], 2);
        result r[3] = {{0}};
        assert_non_null(start(&r[0], "/ok", 5000, 0));
        assert_non_null(start(&r[1], "/big", 5000, 0));
        assert_non_null(start(&r[2], "/missing", 5000, 0));
        run_until_done();
        assert_null(r[0].err_ptr);
        assert_string_equal(r[0].body, "hello world");
        assert_null(r[1].err_ptr);
        assert_int_equal(r[1].body_len, BIG_SIZE);
        assert_int_equal(r[2].status, 404);
        result_free(r, 3);
    }
}

static void test_redirect_not_followed(void **state)
{
    (void)state;
    result r = {0};
    assert_non_null(start(&r, "/redirect", 5000, 0));
    run_until_done();
    assert_null(r.err_ptr);
    assert_int_equal(r.status, 301);
    assert_true(r.has_location);
    assert_string_equal(r.location, "/ok");
    assert_int_equal(r.clen, 0);
    assert_int_equal(r.body_len, 0);
    assert_int_equal(E.srv.requests, 1); /* /ok was not fetched */
    result_free(&r, 1);
}

static void test_not_found_is_not_an_error(void **state)
{
    (void)state;
    result r = {0};
    assert_non_null(start(&r, "/nowhere", 5000, 0));
    run_until_done();
    assert_null(r.err_ptr);
    assert_int_equal(r.heads, 1);
    assert_int_equal(r.status, 404);
    assert_string_equal(r.body, "not found");
    result_free(&r, 1);
}

static void test_gzip_is_decoded(void **state)
{
    (void)state;
    if (!(curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_LIBZ))
        skip();
    result r = {0};
    assert_non_null(start(&r, "/gzip", 5000, 0));
    run_until_done();
    assert_null(r.err_ptr);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.clen, (long long)sizeof GZIP_BYTES); /* as sent, encoded */
    assert_int_equal(r.body_len, strlen(GZIP_PLAIN));
    assert_string_equal(r.body, GZIP_PLAIN);
    result_free(&r, 1);
}

static void test_interim_head_is_skipped(void **state)
{
    (void)state;
    result r = {0};
    assert_non_null(start(&r, "/early", 5000, 0));
    run_until_done();
    assert_null(r.err_ptr);
    assert_int_equal(r.heads, 1);
    assert_int_equal(r.status, 200);
    assert_false(r.has_location); /* that was the 103's */
    assert_string_equal(r.ctype, "text/plain");
    assert_string_equal(r.body, "final");
    result_free(&r, 1);
}

static void test_chunked_trailers_are_not_head(void **state)
{
    (void)state;
    result r = {0};
    assert_non_null(start(&r, "/chunked", 5000, 0));
    run_until_done();
    assert_null(r.err_ptr);
    assert_int_equal(r.heads, 1);
    assert_int_equal(r.clen, -1);
    assert_false(r.has_location);
    assert_string_equal(r.body, "hello world");
    result_free(&r, 1);
}

static void test_timeout(void **state)
{
    (void)state;
    result r = {0};
    assert_non_null(start(&r, "/hang", 300, 0));
    run_until_done();
    assert_int_equal(r.dones, 1);
    assert_non_null(r.err_ptr);
    assert_non_null(strstr(r.err, "Timeout was reached"));
    assert_null(strchr(r.err, '\n'));
    assert_int_equal(r.heads, 0);
    result_free(&r, 1);
}

static void test_close_without_response(void **state)
{
    (void)state;
    result r = {0};
    assert_non_null(start(&r, "/close", 5000, 0));
    run_until_done();
    assert_int_equal(r.dones, 1);
    assert_non_null(r.err_ptr);
    assert_string_equal(r.err, "connection closed before the response head");
    assert_int_equal(r.heads, 0);
    result_free(&r, 1);
}

static void test_refused(void **state)
{
    (void)state;
    int port, fd = listen_loopback(&port);
    close(fd); /* bound, never listened: nothing there now */
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
    result r = {0};
    http_sink sink = {.on_head = on_head, .on_body = on_body, .ctx = &r};
    r.req = curl_glue_get(E.g, url, NULL, 5000, 0, &sink, on_done, &r);
    assert_non_null(r.req);
    E.outstanding++;
    run_until_done();
    assert_non_null(r.err_ptr);
    assert_non_null(strstr(r.err, "Couldn't connect"));
    result_free(&r, 1);
}

static void test_bad_input(void **state)
{
    (void)state;
    char err[256] = "";
    assert_null(curl_glue_new(E.s, 0, NULL, err, sizeof err));
    assert_true(err[0] != '\0');
    err[0] = '\0';
    assert_null(curl_glue_new(E.s, 4, "/nonexistent/ca.pem", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/ca.pem"));
    assert_null(curl_glue_new(NULL, 4, NULL, NULL, 0));
    assert_null(curl_glue_get(E.g, NULL, NULL, 0, 0, NULL, NULL, NULL));
    assert_null(curl_glue_get(NULL, "http://127.0.0.1/", NULL, 0, 0, NULL, NULL, NULL));
    curl_glue_cancel(E.g, NULL);
    curl_glue_cancel(NULL, NULL);
    curl_glue_free(NULL);
    assert_int_equal(curl_glue_in_flight(NULL), 0);

    /* Unusable URLs fail through done, from the loop; other schemes are refused. */
    const char *urls[] = {"not a url", "file:///etc/passwd", "ftp://127.0.0.1/", "http://"};
    enum { N = sizeof urls / sizeof *urls };
    result r[N] = {{0}};
    for (size_t i = 0; i < N; i++) {
        http_sink sink = {.on_head = on_head, .on_body = on_body, .ctx = &r[i]};
        r[i].req = curl_glue_get(E.g, urls[i], NULL, 5000, 0, &sink, on_done, &r[i]);
        assert_non_null(r[i].req);
        E.outstanding++;
    }
    for (size_t i = 0; i < N; i++)
        assert_int_equal(r[i].dones, 0);
    run_until_done();
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(r[i].dones, 1);
        assert_non_null(r[i].err_ptr);
        assert_int_equal(r[i].body_len, 0);
    }
    assert_non_null(strstr(r[1].err, "Unsupported protocol"));
    assert_non_null(strstr(r[2].err, "Unsupported protocol"));

    /* No sink and no done: runs and is forgotten. */
    char url[128];
    url_for(url, sizeof url, "/ok");
    assert_non_null(curl_glue_get(E.g, url, NULL, 5000, 0, NULL, NULL, NULL));
    result w = {0};
    assert_non_null(start(&w, "/ok", 5000, 0));
    run_until_done();
    assert_int_equal(curl_glue_in_flight(E.g), 0);
    result_free(r, N);
    result_free(&w, 1);
}

static void test_sequential_reuse(void **state)
{
    (void)state;
    regrow(2);
    enum { N = 20 };
    result r[N] = {{0}};
    r[0].chain_left = N - 1; /* each done starts the next */
    assert_non_null(start(&r[0], "/ok", 5000, 0));
    run_until_done();
    for (int i = 0; i < N; i++) {
        assert_int_equal(r[i].dones, 1);
        assert_null(r[i].err_ptr);
        assert_string_equal(r[i].body, "hello world");
    }
    assert_int_equal(E.srv.requests, N);
    assert_true(E.srv.accepted < N);
    assert_true(E.srv.accepted <= 2);
    result_free(r, N);
}

static void test_connection_cap(void **state)
{
    (void)state;
    regrow(3);
    enum { N = 10 };
    result r[N] = {{0}};
    for (int i = 0; i < N; i++)
        assert_non_null(start(&r[i], "/slow", 10000, 0));
    assert_int_equal(curl_glue_in_flight(E.g), N);
    run_until_done();
    for (int i = 0; i < N; i++) {
        assert_null(r[i].err_ptr);
        assert_string_equal(r[i].body, "slow");
    }
    assert_true(E.srv.max_open <= 3);
    assert_true(E.srv.max_open >= 2); /* the answers are delayed: they overlap */
    assert_true(E.srv.accepted <= 3); /* and then are reused */
    result_free(r, N);
}

/* Lanes (issue #27 M6): two requests that never answer fill the pages' lane of a glue
 * of 2; a third page waits; a request in the side lane goes at once, on a connection
 * of its own — and without a side lane it waits behind them like the third page. */
static void lanes_run(bool side_lane, result *hang, result *page, result *side)
{
    char url[256];
    regrow(2);
    if (side_lane)
        curl_glue_set_side_lane(E.g, 2);
    for (int i = 0; i < 2; i++)
        assert_non_null(start(&hang[i], "/hang", 10000, 0));
    assert_non_null(start(page, "/ok", 10000, 0));
    url_for(url, sizeof url, "/ok");
    http_sink sink = {.on_head = on_head, .on_body = on_body, .ctx = side};
    side->req = curl_glue_get_lane(E.g, CURL_LANE_SIDE, url, NULL, 10000, 0, &sink, on_done, side);
    assert_non_null(side->req);
    E.outstanding++;
    assert_false(run_for(500)); /* the hanging ones keep it running */
    assert_int_equal(hang[0].dones + hang[1].dones + page->dones, 0);
    assert_int_equal(side->dones, side_lane ? 1 : 0);
    if (side_lane)
        assert_string_equal(side->body, "hello world");
    curl_glue_free(E.g); /* cancels the rest */
    E.g = NULL;
    regrow(4);
}

static void test_side_lane(void **state)
{
    (void)state;
    for (int with = 0; with < 2; with++) {
        result hang[2] = {{0}}, page = {0}, side = {0};
        lanes_run(with, hang, &page, &side);
        result_free(hang, 2);
        result_free(&page, 1);
        result_free(&side, 1);
    }
}

/* Many hosts (issue #27 M4). libcurl 7.88, evicting an idle connection from a full
 * cache, leaves its host's empty bundle behind and walks them all at every later
 * eviction: a crawl of N hosts cost N^2 (50,000 hosts: 206.8 s, the raw transport
 * 7.1 s; docs/benchmarks.md). So the glue never lets the cache fill: once its idle
 * budget is used, a transfer closes its own connection when done. With max_conns 2,
 * twelve servers (twelve ports: twelve hosts to libcurl) one after the other: the
 * first servers' idle connections stay open, none evicted (before, libcurl closed the
 * oldest idle one for each new server), and the others' connections are closed. */
enum { MANY_HOSTS = 12 };

static void test_many_hosts_no_eviction(void **state)
{
    (void)state;
    regrow(2);
    static tsrv srv[MANY_HOSTS];
    result r[MANY_HOSTS] = {{0}};
    for (int i = 0; i < MANY_HOSTS; i++)
        srv_start(&srv[i], E.s);
    for (int i = 0; i < MANY_HOSTS; i++) {
        char url[128];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/ok", srv[i].port);
        http_sink sink = {
            .on_head = on_head, .on_body = on_body, .ctx = &r[i], .on_header = on_header};
        r[i].req = curl_glue_get(E.g, url, NULL, 5000, 0, &sink, on_done, &r[i]);
        assert_non_null(r[i].req);
        E.outstanding++;
        run_until_done();
        assert_null(r[i].err_ptr);
        assert_int_equal(r[i].status, 200);
    }
    run_for(100); /* the servers see every close made so far */
    int open = 0;
    for (int i = 0; i < MANY_HOSTS; i++) {
        assert_int_equal(srv[i].accepted, 1);
        open += srv[i].open;
    }
    assert_int_equal(srv[0].open, 1); /* kept, not evicted */
    assert_int_equal(srv[1].open, 1);
    assert_int_equal(srv[MANY_HOSTS - 1].open, 0); /* past the idle budget: closed */
    assert_true(open <= 3);
    for (int i = 0; i < MANY_HOSTS; i++)
        srv_stop(&srv[i]);
    result_free(r, MANY_HOSTS);
}

static void test_many_in_flight(void **state)
{
    (void)state;
    regrow(8);
    enum { N = 500 };
    result *r = calloc(N, sizeof *r);
    assert_non_null(r);
    for (int i = 0; i < N; i++)
        assert_non_null(start(&r[i], i % 5 ? "/ok" : "/missing", 20000, 0));
    run_until_done();
    for (int i = 0; i < N; i++) {
        assert_int_equal(r[i].dones, 1);
        assert_null(r[i].err_ptr);
        assert_int_equal(r[i].status, i % 5 ? 200 : 404);
    }
    assert_true(E.srv.max_open <= 8);
    assert_int_equal(E.srv.requests, N);
    assert_int_equal(curl_glue_in_flight(E.g), 0);
    result_free(r, N);
    free(r);
}

static void test_max_size(void **state)
{
    (void)state;
    result r[3] = {{0}};
    assert_non_null(start(&r[0], "/big", 5000, 1000));
    assert_non_null(start(&r[1], "/big", 5000, BIG_SIZE));     /* exactly fits */
    assert_non_null(start(&r[2], "/big", 5000, BIG_SIZE - 1)); /* one byte over */
    run_until_done();
    assert_ptr_equal(r[0].err_ptr, curl_glue_truncated);
    assert_int_equal(r[0].body_len, 1000);
    assert_int_equal(r[0].heads, 1);
    for (size_t i = 0; i < r[0].body_len; i++)
        assert_int_equal(r[0].body[i], 'a' + i % 26);
    assert_null(r[1].err_ptr);
    assert_int_equal(r[1].body_len, BIG_SIZE);
    assert_ptr_equal(r[2].err_ptr, curl_glue_truncated);
    assert_int_equal(r[2].body_len, BIG_SIZE - 1);
    result_free(r, 3);
}

/* Cancel from inside the request's own on_body, and start another from there. */
static void test_cancel_in_body(void **state)
{
    (void)state;
    result big = {0}, next = {0};
    big.cancel_in_body = 1;
    big.then = &next;
    big.then_path = "/ok";
    assert_non_null(start(&big, "/big", 5000, 0));
    run_until_done();
    assert_int_equal(next.dones, 1);
    assert_string_equal(next.body, "hello world");
    /* give a stray callback of the cancelled one the chance to show up */
    run_for(100);
    assert_int_equal(big.body_calls, 1);
    assert_int_equal(big.dones, 0);
    assert_int_equal(curl_glue_in_flight(E.g), 0);
    result_free(&big, 1);
    result_free(&next, 1);
}

static void test_cancel_in_head(void **state)
{
    (void)state;
    result big = {0}, next = {0};
    big.cancel_in_head = 1;
    big.then = &next;
    big.then_path = "/redirect";
    assert_non_null(start(&big, "/big", 5000, 0));
    run_until_done();
    assert_int_equal(next.dones, 1);
    assert_int_equal(next.status, 301);
    run_for(100);
    assert_int_equal(big.heads, 1);
    assert_int_equal(big.body_calls, 0);
    assert_int_equal(big.dones, 0);
    assert_int_equal(curl_glue_in_flight(E.g), 0);
    result_free(&big, 1);
    result_free(&next, 1);
}

/* Cancel a hanging request from the done callback of another. */
static void test_cancel_from_other_done(void **state)
{
    (void)state;
    result hang = {0}, ok = {0};
    assert_non_null(start(&hang, "/hang", 0, 0));
    ok.cancel_other = &hang;
    assert_non_null(start(&ok, "/slow", 5000, 0));
    run_until_done();
    assert_int_equal(ok.dones, 1);
    assert_int_equal(curl_glue_in_flight(E.g), 0);
    /* the abandoned transfer's connection is closed */
    if (E.srv.peer_closes == 0) {
        E.srv.stop_at_peer_close = 1;
        assert_true(run_for(DEADLINE_MS));
    }
    assert_int_equal(E.srv.peer_closes, 1);
    assert_int_equal(hang.dones, 0);
    assert_int_equal(hang.heads, 0);
    result_free(&hang, 1);
    result_free(&ok, 1);
}

/* Cancel from outside any callback. */
static void test_cancel_outside(void **state)
{
    (void)state;
    result hang = {0};
    assert_non_null(start(&hang, "/hang", 0, 0));
    E.srv.stop_at_hangs = 1;
    assert_true(run_for(DEADLINE_MS));
    assert_int_equal(E.srv.hang_requests, 1);
    curl_glue_cancel(E.g, hang.req);
    assert_int_equal(curl_glue_in_flight(E.g), 0);
    E.srv.stop_at_peer_close = 1;
    assert_true(run_for(DEADLINE_MS));
    assert_int_equal(E.srv.peer_closes, 1);
    assert_int_equal(hang.dones, 0);
    /* the glue still works afterwards */
    E.outstanding = 0;
    result ok = {0};
    assert_non_null(start(&ok, "/ok", 5000, 0));
    run_until_done();
    assert_string_equal(ok.body, "hello world");
    result_free(&hang, 1);
    result_free(&ok, 1);
}

/* Freeing the glue with requests in flight: no done, nothing left in the selector
 * (teardown checks the selector). */
static void test_free_in_flight(void **state)
{
    (void)state;
    result r[3] = {{0}};
    for (int i = 0; i < 3; i++)
        assert_non_null(start(&r[i], "/hang", 0, 0));
    E.srv.stop_at_hangs = 3;
    assert_true(run_for(DEADLINE_MS));
    assert_int_equal(curl_glue_in_flight(E.g), 3);
    assert_true(selector_count(E.s) > (size_t)(1 + E.srv.open)); /* curl's sockets */
    curl_glue_free(E.g);
    E.g = NULL;
    assert_int_equal(selector_count(E.s), (size_t)(1 + E.srv.open));
    assert_int_equal(selector_timer_count(E.s), 0);
    E.srv.stop_at_hangs = 0;
    E.srv.stop_at_peer_close = 0;
    run_for(50); /* the server sees the closes; nothing of the glue may run */
    for (int i = 0; i < 3; i++)
        assert_int_equal(r[i].dones, 0);
    result_free(r, 3);
}

/* ---- the same record as the raw transport ------------------------------------------ */

static void add_raw(const char *name, const char *bytes, size_t len)
{
    assert_true(n_raw_responses < sizeof raw_responses / sizeof *raw_responses);
    raw_response *rr = &raw_responses[n_raw_responses++];
    rr->name = name;
    rr->bytes = malloc(len ? len : 1);
    assert_non_null(rr->bytes);
    memcpy(rr->bytes, bytes, len);
    rr->len = len;
}

#define RAW(name, lit) add_raw(name, lit, sizeof(lit) - 1)

/* A response whose head is one line of n bytes (a 1 MB Location), or whose chunk
 * size line has an extension of n bytes. */
static void add_long_line(const char *name, const char *before, char fill, size_t n,
                          const char *after)
{
    size_t b = strlen(before), a = strlen(after);
    char *buf = malloc(b + n + a);
    assert_non_null(buf);
    memcpy(buf, before, b);
    memset(buf + b, fill, n);
    memcpy(buf + b + n, after, a);
    add_raw(name, buf, b + n + a);
    free(buf);
}

/* The borderline responses of issue 13 item 7, and the heads libcurl refuses itself. */
static void make_raw_responses(void)
{
    RAW("duplicate Content-Type",
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
        "Content-Type: text/html\r\nContent-Length: 5\r\n\r\nhello");
    RAW("duplicate Location",
        "HTTP/1.1 302 Found\r\nLocation: /a\r\nLocation: /a\r\n"
        "Content-Length: 0\r\n\r\n");
    RAW("conflicting Location",
        "HTTP/1.1 302 Found\r\nLocation: /a\r\nLocation: /b\r\n"
        "Content-Length: 0\r\n\r\n");
    RAW("folded Location",
        "HTTP/1.1 302 Found\r\nLocation: /a\r\n  b\r\nX-Other: 1\r\n"
        "\tmore\r\nContent-Length: 0\r\n\r\n");
    RAW("continuation first", "HTTP/1.1 200 OK\r\n folded: first\r\nContent-Length: 0\r\n\r\n");
    RAW("line without colon",
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
        "this line has no colon\r\nContent-Length: 5\r\n\r\nhello");
    RAW("space before colon", "HTTP/1.1 302 Found\r\nLocation : /x\r\nContent-Length: 0\r\n\r\n");
    RAW("conflicting Content-Length",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
        "Content-Length: 7\r\n\r\nhello12");
    RAW("Content-Length +5", "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello");
    RAW("Content-Length 0x5", "HTTP/1.1 200 OK\r\nContent-Length: 0x5\r\n\r\nhello");
    RAW("101 then 200",
        "HTTP/1.1 101 Switching Protocols\r\n\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    RAW("100 then 200",
        "HTTP/1.1 100 Continue\r\n\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    RAW("status 600", "HTTP/1.1 600 High\r\nContent-Length: 5\r\n\r\nhello");
    RAW("status 999", "HTTP/1.1 999 Weird\r\nContent-Length: 5\r\n\r\nhello");
    RAW("status 2x0", "HTTP/1.1 2x0 OK\r\nContent-Length: 5\r\n\r\nhello");
    RAW("not HTTP", "HELLO, THIS IS NOT HTTP\r\n\r\n");
    RAW("NUL in a header", "HTTP/1.1 200 OK\r\nX-A: a\0b\r\nContent-Length: 0\r\n\r\n");
    RAW("head never ends", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n");
    RAW("nothing", "");
    add_long_line("1 MB Location", "HTTP/1.1 302 Found\r\nLocation: /", 'a', 1 << 20,
                  "\r\nContent-Length: 0\r\n\r\n");
    add_long_line("10 KB chunk extension",
                  "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
                  "\r\n\r\n5;",
                  'x', 10240, "\r\nhello\r\n0\r\n\r\n");
    RAW("bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    char head[128], buf[512];
    int h = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     sizeof GZIP_BYTES);
    memcpy(buf, head, (size_t)h);
    memcpy(buf + h, GZIP_BYTES, sizeof GZIP_BYTES);
    add_raw("gzip unasked", buf, (size_t)h + sizeof GZIP_BYTES);
    h = snprintf(head, sizeof head,
                 "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
                 "Content-Length: %zu\r\n\r\n",
                 sizeof GZIP_BYTES + 7);
    memcpy(buf, head, (size_t)h);
    memcpy(buf + h, GZIP_BYTES, sizeof GZIP_BYTES);
    memcpy(buf + h + sizeof GZIP_BYTES, "GARBAGE", 7);
    add_raw("gzip then garbage", buf, (size_t)h + sizeof GZIP_BYTES + 7);
    RAW("not gzip",
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\n"
        "hello");
    RAW("brotli", "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 5\r\n\r\nhello");
}

static void free_raw_responses(void)
{
    for (size_t i = 0; i < n_raw_responses; i++)
        free(raw_responses[i].bytes);
    n_raw_responses = 0;
}

/* What the raw transport's parser makes of the same bytes, into the same record. */
static void parse_raw(const raw_response *rr, result *r)
{
    http_sink sink = {.on_head = on_head, .on_body = on_body, .ctx = r, .on_header = on_header};
    http_parser *p = http_parser_new(&sink);
    int rc = http_parser_feed(p, rr->bytes, rr->len);
    if (rc == 0)
        rc = http_parser_eof(p);
    if (rc < 0)
        snprintf(r->err, sizeof r->err, "%s", http_parser_error(p));
    http_parser_free(p);
}

static void expect_same(const char *name, const result *raw, const result *curl)
{
    if (strcmp(raw->err, curl->err) != 0 || raw->heads != curl->heads || raw->status != curl->status
        || strcmp(raw->ctype, curl->ctype) != 0 || strcmp(raw->location, curl->location) != 0
        || raw->clen != curl->clen || raw->fields_len != curl->fields_len
        || (raw->fields_len && memcmp(raw->fields, curl->fields, raw->fields_len) != 0)
        || raw->body_len != curl->body_len
        || (raw->body_len && memcmp(raw->body, curl->body, raw->body_len) != 0))
        fail_msg("%s: the transports disagree\n"
                 "  raw:  error '%s', %d head(s), status %d, type '%s', location '%.40s', "
                 "length %lld, %zu body bytes, fields:\n%.300s\n"
                 "  curl: error '%s', %d head(s), status %d, type '%s', location '%.40s', "
                 "length %lld, %zu body bytes, fields:\n%.300s",
                 name, raw->err, raw->heads, raw->status, raw->ctype, raw->location, raw->clen,
                 raw->body_len, raw->fields ? raw->fields : "", curl->err, curl->heads,
                 curl->status, curl->ctype, curl->location, curl->clen, curl->body_len,
                 curl->fields ? curl->fields : "");
    assert_false(curl->fields_after_head);
}

/* Every borderline response gives libcurl's glue and the raw parser the same head,
 * fields, body and error (issue 13 item 7). */
static void test_same_as_raw_parser(void **state)
{
    (void)state;
    if (!(curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_LIBZ))
        skip();
    make_raw_responses();
    for (size_t i = 0; i < n_raw_responses; i++) {
        result raw = {0}, curl = {0};
        parse_raw(&raw_responses[i], &raw);
        char path[32];
        snprintf(path, sizeof path, "/raw/%zu", i);
        assert_non_null(start(&curl, path, 5000, 0));
        run_until_done();
        expect_same(raw_responses[i].name, &raw, &curl);
        result_free(&raw, 1);
        result_free(&curl, 1);
    }
    free_raw_responses();
}

/* A sink that cancels from on_header hears nothing more: no field, head or done. */
static void test_cancel_in_header(void **state)
{
    (void)state;
    result r = {.cancel_in_header = 1};
    assert_non_null(start(&r, "/ok", 5000, 0));
    run_for(200); /* no done comes to stop the loop */
    assert_int_equal(E.outstanding, 0);
    assert_string_equal(r.fields, "Content-Length: 11\n"); /* the first, then nothing */
    assert_int_equal(r.heads, 0);
    assert_int_equal(r.dones, 0);
    result_free(&r, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_backend, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redirect_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_found_is_not_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gzip_is_decoded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interim_head_is_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_as_raw_parser, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_in_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chunked_trailers_are_not_head, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_without_response, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sequential_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_hosts_no_eviction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connection_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_side_lane, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_in_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_in_head, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_from_other_done, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_in_flight, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
