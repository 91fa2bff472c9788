/* fetcher.c — the chapter's stage 1, "Programming With Callbacks": Fetcher.fetch,
 * Fetcher.connected and Fetcher.read_response in C, in the chapter's order, grown
 * into a real fetcher: partial sends, a timeout per try, retries, errors. The same
 * Fetcher over libcurl (--transport curl) is fetcher_curl.c.
 *
 * Read it next to stage2_generators/fetch.c and sockio.c: the same system calls in
 * the same order, but here each step ends by registering the next callback and
 * returning, and whatever the next step needs is saved in the Fetcher first.
 */
#include "fetcher.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "alloc.h"
#include "net.h"
#include "rawerr.h"
#include "url.h"

static int start_raw(Fetcher *f);
static void connected(selector *s, int fd, int events, void *data);
static void read_response(selector *s, int fd, int events, void *data);
static void timed_out(selector *s, void *data);
static void attempt_failed(Fetcher *f, const char *error);
static void wait_for_descriptor(Fetcher *f);

/* No descriptor was free (EMFILE/ENFILE): the try ends as a failed one would, but
 * fetch does not count it and waits for a descriptor instead (wait_for_descriptor). */
enum { NO_DESCRIPTOR = 1 };

/* Every Fetcher not yet freed, oldest first: for fetcher_free_all, `kill -USR1`
 * (fetcher_dump_all) and gdb's `info fetchers`, which walks it in memory. */
static list_node live_fetchers = {&live_fetchers, &live_fetchers};

/* The chapter's Fetcher(url). */
Fetcher *fetcher_new(app *a, const crawl_request *r, crawl_add_fn add_url, fetcher_done_fn done,
                     void *ctx)
{
    Fetcher *f = xcalloc(1, sizeof *f);
    f->a = a;
    f->job = crawl_request_dup(r);
    f->url = f->job->url;
    f->sock = -1;
    f->add_url = add_url;
    f->done = done;
    f->ctx = ctx;
    list_push_back(&live_fetchers, &f->link);
    return f;
}

/* ---- fetch: begin, and begin again ---- */

/* crawling.py's retry loop, torn in pieces: this loop covers the tries that fail at
 * once; a try that fails later, in a callback, comes back here through fetcher_fail. */
void fetch(Fetcher *f)
{
    crawl *c = f->a->crawl;
    if (f->a->raw && strncmp(f->url, "https:", 6) == 0) {
        crawl_record_failure(c, f->url, raw_https_unsupported);
        f->done(f, f->ctx);
        return;
    }
    while (f->tries < f->a->opt.max_tries) {
        f->tries++;
        f->response = crawl_fetch_new(c, f->job);
        int r = f->a->raw ? start_raw(f) : fetcher_start_curl(f);
        if (r == 0)
            return; /* the event loop holds our continuation now */
        if (r == NO_DESCRIPTOR) {
            f->tries--; /* waiting for a descriptor is not a try */
            wait_for_descriptor(f);
            return; /* ... and fd_wait_over is the continuation */
        }
    }
    crawl_record_failure(c, f->url, f->exception);
    f->done(f, f->ctx);
}

/* The chapter's fetch proper, for one try: resolve, begin connecting without
 * blocking, register `connected`. 0 when waiting, -1 when the try failed at once,
 * NO_DESCRIPTOR when it could not begin. */
static int start_raw(Fetcher *f)
{
    selector *loop = f->a->loop;
    char err[256];
    char *scheme = NULL, *host = NULL, *path = NULL;
    int port = 0;
    struct sockaddr_storage addr;
    socklen_t len = 0;

    if (url_split(f->url, &scheme, &host, &port, &path) < 0) {
        free(scheme), free(host), free(path);
        return fetcher_fail_now(f, "not an http URL");
    }
    /* getaddrinfo blocks the whole loop while it works (cached, so once per host);
     * asyncio and Scrapy hand it to a thread pool instead. */
    int r = resolver_lookup(f->a->resolver, host, port, &addr, &len, err, sizeof err);
    free(scheme), free(host), free(path);
    if (r < 0)
        return fetcher_fail_now(f, err);

    bool at_once = false;
    f->sock = net_connect_start((const struct sockaddr *)&addr, len, &at_once);
    if (f->sock < 0 && net_out_of_fds(errno)) {
        attempt_failed(f, raw_error(err, sizeof err, "connect", errno));
        return NO_DESCRIPTOR;
    }
    if (f->sock < 0)
        return fetcher_fail_now(f, raw_error(err, sizeof err, "connect", errno));
    f->fd_backoff = 0; /* had a descriptor: a later wait starts short again */

    /* From here the try has --timeout to complete: a timer, cancelled by end_attempt. */
    f->timer = selector_call_later(loop, (uint64_t)app_timeout_ms(f->a), timed_out, f);
    f->request = http_build_get(f->url, f->a->opt.user_agent, NULL, &f->request_len);
    if (!f->request)
        return fetcher_fail_now(f, "not an http URL");
    f->parser = http_parser_new(crawl_fetch_sink(f->response));

    /* Usually EINPROGRESS: the continuation is `connected`, run once writable. */
    if (selector_register(loop, f->sock, SEL_WRITE, connected, f) < 0)
        return fetcher_fail_now(f, selector_error(loop));
    /* On loopback the connection is often made already: send now, one trip round the
     * loop sooner. connected may end this try and start the next, or even finish f:
     * nothing may touch f after it. */
    if (at_once)
        connected(loop, f->sock, SEL_WRITE, f);
    return 0;
}

/* ---- connected ---- */

/* Writable: the connection is made (or failed). Send the request; while the socket
 * takes only part of it, stay registered for SEL_WRITE and come back here. */
static void connected(selector *s, int fd, int events, void *data)
{
    (void)events;
    Fetcher *f = data;
    char err[128];
    if (!f->connected) {
        int e = net_connect_result(fd);
        if (e) {
            fetcher_fail(f, raw_error(err, sizeof err, "connect", e));
            return;
        }
        f->connected = true; /* so the next visit goes straight to sending */
        http_sink_connected(crawl_fetch_sink(f->response)); /* --trace-events */
    }
    while (f->sent < f->request_len) {
        ssize_t n = send(fd, f->request + f->sent, f->request_len - f->sent, MSG_NOSIGNAL);
        if (n > 0) {
            f->sent += (size_t)n; /* the chapter's "check the return value of send" */
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            fetcher_fail(f, raw_error(err, sizeof err, "send", errno));
            return;
        }
        return; /* the socket buffer is full: wait for writability again */
    }
    /* All sent: the next continuation is read_response. */
    if (selector_modify(s, fd, SEL_READ, read_response, f) < 0)
        fetcher_fail(f, selector_error(s));
}

/* ---- read_response ---- */

/* EXERCISE stage1-read_response: BEGIN (docs/exercises.md) */
/* Readable: data, or the peer closed. One chunk (up to 64 KB, net.h) per call, fed to
 * the parser (and through it to the link parser) at once; the loop calls again for the
 * rest.
 * A body past --max-size ends the try at once (end_attempt closes the socket) and is
 * recorded as truncated, as the curl transport does. */
static void read_response(selector *s, int fd, int events, void *data)
{
    (void)s, (void)events;
    Fetcher *f = data;
    static char chunk[NET_READ_CHUNK]; /* consumed before the callback returns */
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n < 0) {
        char err[128];
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            fetcher_fail(f, raw_error(err, sizeof err, "recv", errno));
        return; /* a false alarm: stay registered */
    }
    int r = n > 0 ? http_parser_feed(f->parser, chunk, (size_t)n) : http_parser_eof(f->parser);
    if (crawl_fetch_full(f->response))
        fetcher_succeeded(f, true); /* past --max-size: stop reading, keep what we have */
    else if (r < 0)
        fetcher_fail(f, http_parser_error(f->parser));
    else if (r == 1 || n == 0)
        fetcher_succeeded(f, false);
}
/* EXERCISE stage1-read_response: END */

/* ---- how a try ends ---- */

/* Release what the current try holds. A thread would do this by returning from its
 * function; here every exit from the chain has to remember to call it. */
static void end_attempt(Fetcher *f)
{
    selector *loop = f->a->loop;
    if (f->timer)
        selector_cancel(loop, f->timer);
    f->timer = NULL;
    if (f->sock >= 0) {
        selector_unregister(loop, f->sock);
        close(f->sock);
    }
    f->sock = -1;
    if (f->req)
        curl_glue_cancel(f->a->curl, f->req);
    f->req = NULL;
    http_parser_free(f->parser);
    f->parser = NULL;
    free(f->request);
    f->request = NULL;
    f->request_len = f->sent = 0;
    f->connected = false;
}

/* The whole response arrived: the end of read_response in the chapter. The crawl
 * core records it and calls add_url for each new link, which starts new Fetchers. */
void fetcher_succeeded(Fetcher *f, bool truncated)
{
    crawl_fetch *response = f->response;
    f->response = NULL;
    end_attempt(f);
    if (truncated)
        crawl_fetch_truncated(response, f->add_url, f->ctx);
    else
        crawl_fetch_done(response, f->add_url, f->ctx);
    f->done(f, f->ctx);
}

/* This try failed: keep its error (copied first, as it may live in the parser), and
 * drop what it received. */
static void attempt_failed(Fetcher *f, const char *error)
{
    char *copy = xstrdup(error ? error : "error");
    free(f->exception);
    f->exception = copy;
    end_attempt(f);
    crawl_fetch_fail(f->response, f->exception);
    f->response = NULL;
}

/* A failure inside a callback: there is no caller to return an error to (the caller
 * is the event loop), so the callback itself must start the next try. */
void fetcher_fail(Fetcher *f, const char *error)
{
    attempt_failed(f, error);
    fetch(f);
}

/* A try that failed before it could wait for anything: fetch's loop goes on. */
int fetcher_fail_now(Fetcher *f, const char *error)
{
    attempt_failed(f, error);
    return -1;
}

static void timed_out(selector *s, void *data)
{
    (void)s;
    Fetcher *f = data;
    char err[128];
    f->timer = NULL; /* fired: end_attempt must not cancel it */
    fetcher_fail(f, raw_timeout(err, sizeof err, f->a->opt.timeout));
}

/* ---- out of descriptors: wait, then fetch again ---- */

static void fd_wait_over(selector *s, void *data)
{
    (void)s;
    Fetcher *f = data;
    f->fd_wait = NULL; /* fired: fetcher_free must not cancel it */
    fetch(f);
}

/* Come back to fetch after a wait of 10 ms, doubling up to 1 s while descriptors stay
 * short. The Fetcher stays alive meanwhile (it holds a --max-tasks slot). A thread
 * would simply sleep in its loop; a callback has to save even the waiting. */
static void wait_for_descriptor(Fetcher *f)
{
    unsigned ms = net_fd_backoff(&f->fd_backoff);
    f->fd_wait = selector_call_later(f->a->loop, ms, fd_wait_over, f);
}

void fetcher_free(Fetcher *f)
{
    if (!f)
        return;
    end_attempt(f);
    if (f->fd_wait)
        selector_cancel(f->a->loop, f->fd_wait);
    crawl_fetch_discard(f->response);
    list_remove(&f->link);
    free(f->exception);
    free(f->job);
    free(f);
}

void fetcher_free_all(void)
{
    list_node *n;
    while ((n = list_first(&live_fetchers)))
        fetcher_free(list_entry(n, Fetcher, link));
}

/* What a Fetcher waits for, read from the fields it saved by hand. */
static const char *fetcher_state(const Fetcher *f)
{
    if (f->fd_wait)
        return "waiting for a free descriptor";
    if (f->req)
        return "transfer (curl)";
    if (f->sock >= 0)
        return !f->connected ? "connecting" : f->sent < f->request_len ? "sending" : "reading";
    return f->tries ? "between tries" : "not started";
}

void fetcher_dump_all(FILE *out)
{
    size_t n = 0;
    list_for_each(it, &live_fetchers) n++;
    fprintf(out, "%zu live Fetcher(s):\n", n);
    list_for_each(it, &live_fetchers)
    {
        const Fetcher *f = list_entry(it, Fetcher, link);
        fprintf(out, "  Fetcher '%s' %s, %lld bytes, try %d\n", f->url, fetcher_state(f),
                f->response ? crawl_fetch_size(f->response) : 0LL, f->tries);
    }
}
