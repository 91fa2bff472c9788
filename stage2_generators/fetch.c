/* fetch.c — http_get and fetch: the chapter's fetch coroutine, factored with
 * `yield from` (AWAIT) into connect, write_all and read_all. */
#include "fetch.h"

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "future.h"
#include "rawerr.h"
#include "sockio.h"
#include "task.h"
#include "url.h"

/* ---- http_get over raw sockets: connect, send the request, read the response ---- */

typedef struct {
    coro co;
    app *a;
    char *url;
    const char *const *fields; /* extra request header fields, or NULL */
    const http_sink *sink;
    http_full_fn full; /* the body went past the size limit: stop reading */
    const void *full_ctx;
    char *host;
    int port;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    unsigned fd_backoff; /* the last wait for a descriptor, ms */
    int fd;
    char *request;
    size_t request_len;
    http_parser *parser;
    uint64_t deadline;
} raw_get_frame;

static int raw_get_body(coro *co)
{
    raw_get_frame *f = (raw_get_frame *)co;
    CORO_BEGIN(co);
    {
        char *scheme = NULL, *path = NULL;
        int ok = url_split(f->url, &scheme, &f->host, &f->port, &path) == 0;
        free(scheme);
        free(path);
        if (!ok)
            CORO_RAISE(co, CORO_ERROR, 0, "not an http URL");
    }
    if (f->a->dns) {
        /* Stage 3: the lookup runs in the thread pool, cached and shared per host. */
        AWAIT(co, sock_getaddrinfo(f->a->dns, f->host, f->port, &f->addr, &f->addrlen));
    } else {
        /* The chapter's: getaddrinfo here, on the loop thread, cached. */
        char err[256];
        if (resolver_lookup(f->a->resolver, f->host, f->port, &f->addr, &f->addrlen, err,
                            sizeof err)
            < 0)
            CORO_RAISE(co, CORO_OSERROR, 0, "%s", err);
    }
    /* No descriptor free (EMFILE/ENFILE): other fetches hold them all. Not this URL's
     * fault, and not a try: sleep (asyncio.sleep), then try again. Meanwhile the fetch
     * is not in flight for the crawl core. */
    while ((f->fd = net_socket(f->addr.ss_family)) < 0 && net_out_of_fds(errno)) {
        http_sink_waiting_fd(f->sink, 1);
        AWAIT(co, sock_sleep(net_fd_backoff(&f->fd_backoff)));
    }
    if (f->fd < 0)
        CORO_RAISE(co, CORO_OSERROR, errno, "%s", raw_error((char[128]){0}, 128, "connect", errno));
    http_sink_waiting_fd(f->sink, 0);
    /* --timeout counts from here, once the try holds a socket. */
    f->deadline = selector_now_ms(f->a->loop) + (uint64_t)app_timeout_ms(f->a);
    AWAIT(co, sock_connect(f->fd, &f->addr, f->addrlen, f->deadline));
    http_sink_connected(f->sink); /* --trace-events: connect is done */
    f->request = http_build_get(f->url, f->a->opt.user_agent, f->fields, &f->request_len);
    if (!f->request)
        CORO_RAISE(co, CORO_ERROR, 0, "not an http URL"); /* as stage 1 says it */
    if (f->sink->on_wire) { /* --warc: the server's address, the request */
        char ip[NI_MAXHOST];
        if (getnameinfo((struct sockaddr *)&f->addr, f->addrlen, ip, sizeof ip, NULL, 0,
                        NI_NUMERICHOST)
            == 0)
            http_sink_wire(f->sink, HTTP_WIRE_PEER, ip, strlen(ip));
        http_sink_wire(f->sink, HTTP_WIRE_REQUEST, f->request, f->request_len);
    }
    AWAIT(co, sock_write_all(f->fd, f->request, f->request_len, f->deadline));
    f->parser = http_parser_new(f->sink);
    AWAIT(co, sock_read_all_until(f->fd, f->parser, f->deadline, f->full, f->full_ctx));
    /* n = 1: cut at --max-size, as the curl transport says it; finally closes fd */
    CORO_RETURN(co, NULL, f->full(f->full_ctx) ? 1 : 0);
    CORO_END(co);
}

static void raw_get_finally(coro *co)
{
    raw_get_frame *f = (raw_get_frame *)co;
    if (f->fd >= 0)
        close(f->fd);
    http_parser_free(f->parser);
    free(f->request);
    free(f->host);
    free(f->url);
}

static const coro_def raw_get_def = {"http_get", __FILE__, raw_get_body, raw_get_finally,
                                     sizeof(raw_get_frame)};

/* ---- http_get over libcurl: a Future resolved by the glue's done callback ---- */

typedef struct {
    coro co;
    app *a;
    char *url;
    const char *const *fields;
    const http_sink *sink;
    int lane;         /* the glue's lane (curlglue.h) */
    const char *post; /* a POST's body (the crawl_fetch's), or NULL: a GET */
    size_t post_len;
    curl_req *req;
    future done;
} curl_get_frame;

static void curl_done(void *arg, const char *error)
{
    curl_get_frame *f = arg;
    f->req = NULL; /* the glue frees it after we return */
    if (!error)
        future_set_result(&f->done, (coro_value){NULL, 0});
    else if (error == curl_glue_truncated)
        future_set_result(&f->done, (coro_value){NULL, 1});
    else
        future_set_error(&f->done, coro_error_new(CORO_ERROR, 0, "%s", error));
}

static int curl_get_body(coro *co)
{
    curl_get_frame *f = (curl_get_frame *)co;
    CORO_BEGIN(co);
    f->req = curl_glue_post_lane(f->a->curl, f->lane, f->url, f->fields, f->post, f->post_len,
                                 app_timeout_ms(f->a), f->a->opt.max_size, f->sink, curl_done, f);
    if (!f->req)
        CORO_RAISE(co, CORO_ERROR, 0, "could not start the transfer");
    AWAIT_FUTURE(co, &f->done);
    CORO_RETURN(co, NULL, co->value.n); /* n = 1: cut at --max-size */
    CORO_END(co);
}

static void curl_get_finally(coro *co)
{
    curl_get_frame *f = (curl_get_frame *)co;
    if (f->req)
        curl_glue_cancel(f->a->curl, f->req); /* cancelled while waiting */
    future_clear(&f->done);
    free(f->url);
}

static const coro_def curl_get_def = {"http_get", __FILE__, curl_get_body, curl_get_finally,
                                      sizeof(curl_get_frame)};

/* http_get_into in one of the glue's lanes (the raw transport has none). */
static coro *get_in_lane(app *a, const char *url, const char *const *fields, const http_sink *sink,
                         http_full_fn full, const void *full_ctx, int lane)
{
    if (a->raw) {
        raw_get_frame *f = (raw_get_frame *)coro_new(&raw_get_def);
        f->a = a;
        f->url = xstrdup(url);
        f->fields = fields;
        f->sink = sink;
        f->full = full;
        f->full_ctx = full_ctx;
        f->fd = -1;
        return &f->co;
    }
    curl_get_frame *f = (curl_get_frame *)coro_new(&curl_get_def);
    f->a = a;
    f->url = xstrdup(url);
    f->fields = fields;
    f->sink = sink;
    f->lane = lane;
    future_init(&f->done);
    return &f->co;
}

coro *http_get_into(app *a, const char *url, const char *const *fields, const http_sink *sink,
                    http_full_fn full, const void *full_ctx)
{
    return get_in_lane(a, url, fields, sink, full, full_ctx, CURL_LANE_PAGES);
}

static bool response_full(const void *response)
{
    return crawl_fetch_full(response);
}

coro *http_get(app *a, crawl_fetch *response, const char *const *fields)
{
    crawl_fetch_request_fields(response, fields); /* a 304 answers only a condition */
    coro *co =
        get_in_lane(a, crawl_fetch_url(response), fields, crawl_fetch_sink(response), response_full,
                    response, crawl_fetch_is_aside(response) ? CURL_LANE_SIDE : CURL_LANE_PAGES);
    size_t len = 0;
    const char *post = crawl_fetch_post(response, &len);
    if (post && !a->raw) { /* a POST (stage 3's spiders; fetch_response_post refuses it on
                            * the raw transport): the body lives in the crawl_fetch */
        curl_get_frame *f = (curl_get_frame *)co;
        f->post = post;
        f->post_len = len;
    }
    return co;
}

/* ---- fetch_response: crawling.py's retry loop around http_get ---- */

typedef struct {
    coro co;
    app *a;
    crawl_request *req;        /* the URL and what travels with it (crawl_request.h) */
    const char *const *fields; /* extra request header fields, or NULL */
    unsigned keep;             /* FETCH_KEEP_BODY | FETCH_KEEP_WIRE */
    char *post;                /* a POST's body, or NULL: a GET */
    size_t post_len;
    int tries;
    crawl_fetch *response; /* this attempt's page in the crawl core */
    char *exception;       /* the last attempt's error */
} fetch_response_frame;

char *fetch_error_text(const app *a, const coro_error *e)
{
    char buf[128];
    if (e->kind == CORO_TIMEOUT)
        return xstrdup(raw_timeout(buf, sizeof buf, a->opt.timeout));
    return xstrdup(e->msg ? e->msg : "error");
}

static void remember_error(fetch_response_frame *f, const coro_error *e)
{
    free(f->exception);
    f->exception = fetch_error_text(f->a, e);
}

static int fetch_response_body(coro *co)
{
    fetch_response_frame *f = (fetch_response_frame *)co;
    CORO_BEGIN(co);
    if (f->a->raw && strncmp(f->req->url, "https:", 6) == 0)
        CORO_RAISE(co, CORO_ERROR, 0, "%s", raw_https_unsupported);
    if (f->a->raw && f->post)
        CORO_RAISE(co, CORO_ERROR, 0,
                   "the raw transport sends GET requests only (a POST needs "
                   "--transport curl)");
    for (f->tries = 0; f->tries < f->a->opt.max_tries; f->tries++) {
        f->response = crawl_fetch_new(f->a->crawl, f->req);
        if (f->keep & FETCH_KEEP_BODY)
            crawl_fetch_keep_body(f->response);
        if (f->keep & FETCH_KEEP_WIRE)
            crawl_fetch_keep_wire(f->response);
        if (f->keep & FETCH_SIDE_LANE)
            crawl_fetch_aside(f->response);
        crawl_fetch_set_post(f->response, f->post, f->post_len);
        AWAIT_CATCH(co, http_get(f->a, f->response, f->fields));
        if (!co->err) {
            crawl_fetch *response = f->response;
            f->response = NULL; /* the caller's now */
            CORO_RETURN(co, response, co->value.n);
        }
        remember_error(f, co->err);
        crawl_fetch_fail(f->response, f->exception);
        f->response = NULL;
        if (co->err->kind == CORO_CANCELLED)
            CORO_RAISE_ERR(co);
        coro_error_free(co->err);
        co->err = NULL;
        if (f->keep & FETCH_ONE_TRY)
            break; /* stage 3's politeness tries again later, through its Queue */
    }
    CORO_RAISE(co, CORO_ERROR, 0, "%s", f->exception);
    CORO_END(co);
}

static void fetch_response_finally(coro *co)
{
    fetch_response_frame *f = (fetch_response_frame *)co;
    if (f->response)
        crawl_fetch_discard(f->response);
    free(f->exception);
    free(f->req);
    free(f->post);
}

static const coro_def fetch_response_def = {"fetch_response", __FILE__, fetch_response_body,
                                            fetch_response_finally, sizeof(fetch_response_frame)};

coro *fetch_response(app *a, const crawl_request *r, const char *const *fields, unsigned keep)
{
    return fetch_response_post(a, r, fields, NULL, 0, keep);
}

coro *fetch_response_post(app *a, const crawl_request *r, const char *const *fields,
                          const char *body, size_t body_len, unsigned keep)
{
    fetch_response_frame *f = (fetch_response_frame *)coro_new(&fetch_response_def);
    f->a = a;
    f->req = crawl_request_dup(r);
    f->fields = fields;
    f->keep = keep;
    if (body) {
        f->post = xmalloc(body_len + 1);
        memcpy(f->post, body, body_len);
        f->post[body_len] = '\0';
        f->post_len = body_len;
    }
    return &f->co;
}

/* ---- fetch: crawling.py's fetch — the response, then the crawl core's records ---- */

typedef struct {
    coro co;
    app *a;
    crawl_request *req;
    crawl_add_fn add_url;
    void *ctx;
} fetch_frame;

static int fetch_body(coro *co)
{
    fetch_frame *f = (fetch_frame *)co;
    CORO_BEGIN(co);
    AWAIT_CATCH(co, fetch_response(f->a, f->req, NULL, 0));
    if (co->err) {
        if (co->err->kind == CORO_CANCELLED)
            CORO_RAISE_ERR(co);
        crawl_record_failure(f->a->crawl, f->req->url, co->err->msg);
        coro_error_free(co->err);
        co->err = NULL;
        CORO_RETURN(co, NULL, 0);
    }
    if (co->value.n == 1)
        crawl_fetch_truncated(co->value.p, f->add_url, f->ctx);
    else
        crawl_fetch_done(co->value.p, f->add_url, f->ctx);
    CORO_END(co);
}

static void fetch_finally(coro *co)
{
    free(((fetch_frame *)co)->req);
}

static const coro_def fetch_def = {"fetch", __FILE__, fetch_body, fetch_finally,
                                   sizeof(fetch_frame)};

coro *fetch(app *a, const crawl_request *r, crawl_add_fn add_url, void *ctx)
{
    fetch_frame *f = (fetch_frame *)coro_new(&fetch_def);
    f->a = a;
    f->req = crawl_request_dup(r);
    f->add_url = add_url;
    f->ctx = ctx;
    return &f->co;
}
