/* middleware.c — the downloader middleware manager, after Scrapy's
 * scrapy/core/downloader/middleware.py: a request goes through every middleware's
 * process_request in order, then to the downloader (the chapter's fetch_response, its
 * retry loop); the response comes back through process_response in reverse order, a
 * failed download through process_exception in reverse order (engine.h has the rules,
 * engine_private.h the managers). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "engine_private.h"
#include "fetch.h"

/* ---- what a middleware answers ---- */

void mw_continue(mw_result *out)
{
    memset(out, 0, sizeof *out);
}

void mw_respond(mw_result *out, response *r)
{
    mw_continue(out);
    out->kind = MW_RESPONSE;
    out->response = r;
}

void mw_reschedule(mw_result *out, request *r)
{
    mw_continue(out);
    out->kind = MW_REQUEST;
    out->request = r;
}

void mw_ignore(mw_result *out, const char *fmt, ...)
{
    mw_continue(out);
    out->kind = MW_IGNORE;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
}

void mw_park(mw_result *out)
{
    mw_continue(out);
    out->kind = MW_PARK;
}

/* ---- the downloader ---- */

/* The downloaded page as a Response: every header as it came, the body moved out of
 * the crawl core. */
static response *response_of(crawl_fetch *cf, bool truncated)
{
    response *r = response_new(crawl_fetch_url(cf), crawl_fetch_status(cf));
    size_t n;
    const char *h = crawl_fetch_headers(cf, &n);
    for (; n > 0; n--) { /* "name\0value\0" each */
        const char *value = h + strlen(h) + 1;
        response_add_header(r, h, value);
        h = value + strlen(value) + 1;
    }
    size_t len;
    char *body = crawl_fetch_take_body(cf, &len);
    response_set_body(r, body, len);
    r->truncated = truncated;
    r->wire = crawl_fetch_take_wire(cf);
    crawl_fetch_times(cf, &r->times);
    return r;
}

/* The chapter's retry loop for req (fetch_response) with its header fields, keeping
 * what flags say. */
static coro *download(engine *e, const request *req, unsigned flags)
{
    crawl_request r = request_view(req);
    if (req->flags & REQ_ONE_TRY)
        flags |= FETCH_ONE_TRY;
    if (req->flags & REQ_SIDE_LANE)
        flags |= FETCH_SIDE_LANE;
    return fetch_response_post(e->a, &r, request_fields(req), req->post, req->post_len, flags);
}

/* ---- engine.download's way: no record ---- */

typedef struct {
    coro co;
    engine *e;
    request *req;
    size_t i; /* the middleware being called */
    coro *call;
    mw_result res;
} fetch_frame;

/* The downloader alone: fetch_response's tries, the body kept, no record — after the
 * process_request of the middlewares that see all requests. */
static int fetch_body(coro *co)
{
    fetch_frame *f = (fetch_frame *)co;
    CORO_BEGIN(co);
    for (f->i = 0; f->i < f->e->nmw; f->i++) {
        downloader_middleware *m = &f->e->mw[f->i];
        if (!m->all_requests || !m->process_request)
            continue;
        mw_continue(&f->res);
        f->call = m->process_request(m->self, f->req, &f->res);
        if (f->call)
            AWAIT(co, f->call);
        if (f->res.kind == MW_RESPONSE) {
            response *r = f->res.response;
            f->res.response = NULL;
            CORO_RETURN(co, r, 0);
        }
        if (f->res.kind == MW_IGNORE)
            CORO_RAISE(co, CORO_ERROR, 0, "IgnoreRequest: %s", f->res.reason);
        if (f->res.kind == MW_REQUEST)
            CORO_RAISE(co, CORO_ERROR, 0, "the %s middleware rescheduled a download (%s)",
                       f->e->mw[f->i].name, f->req->url);
    }
    AWAIT(co,
          download(f->e, f->req,
                   FETCH_KEEP_BODY
                       | (f->req->flags & REQ_ARCHIVE && f->e->keep_wire ? FETCH_KEEP_WIRE : 0)));
    {
        crawl_fetch *cf = co->value.p;
        response *r = response_of(cf, co->value.n == 1);
        crawl_fetch_release(cf);
        if (f->req->flags & REQ_ARCHIVE)
            itempipeline_download(f->e, f->req, r);
        CORO_RETURN(co, r, 0);
    }
    CORO_END(co);
}

static void fetch_finally(coro *co)
{
    fetch_frame *f = (fetch_frame *)co;
    response_free(f->res.response);
    request_free(f->res.request);
    request_free(f->req);
}

static const coro_def fetch_def = {"download", __FILE__, fetch_body, fetch_finally,
                                   sizeof(fetch_frame)};

coro *middleware_fetch(engine *e, request *req)
{
    fetch_frame *f = (fetch_frame *)coro_new(&fetch_def);
    f->e = e;
    f->req = req;
    return &f->co;
}

/* ---- a URL of the crawl: the whole chain ---- */

typedef struct {
    coro co;
    url_life *u; /* engine_handle's: it owns (and frees) what the chain leaves there */
    size_t i;    /* the middleware being called */
    coro *call;  /* its coroutine, when it gave one */
} chain_frame;

/* The middleware's method, of the chain being run, for f->i. */
static coro *call_request(chain_frame *f)
{
    url_life *u = f->u;
    downloader_middleware *m = &u->e->mw[f->i];
    mw_continue(&u->res);
    return m->process_request ? m->process_request(m->self, u->req, &u->res) : NULL;
}

static coro *call_exception(chain_frame *f)
{
    url_life *u = f->u;
    downloader_middleware *m = &u->e->mw[f->i];
    mw_continue(&u->res);
    return m->process_exception ? m->process_exception(m->self, u->req, u->error, &u->res) : NULL;
}

static coro *call_response(chain_frame *f)
{
    url_life *u = f->u;
    downloader_middleware *m = &u->e->mw[f->i];
    mw_continue(&u->res);
    return m->process_response ? m->process_response(m->self, u->req, u->resp, &u->res) : NULL;
}

/* The response a middleware answered becomes the URL's (the download's, or an earlier
 * middleware's, is dropped). */
static void take_response(url_life *u)
{
    response *r = u->res.response;
    u->res.response = NULL;
    if (r == u->resp)
        return;
    response_free(u->resp);
    u->resp = r;
    if (u->fetch) {
        crawl_fetch_discard(u->fetch);
        u->fetch = NULL;
    }
}

/* The download's flags: what the pipeline stages keep, one try on a polite Queue. */
static unsigned download_flags(const engine *e)
{
    return (e->keep_bodies ? FETCH_KEEP_BODY : 0) | (e->keep_wire ? FETCH_KEEP_WIRE : 0)
        | (e->one_try ? FETCH_ONE_TRY : 0);
}

static int chain_body(coro *co)
{
    chain_frame *f = (chain_frame *)co;
    url_life *u = f->u;
    engine *e = u->e;
    CORO_BEGIN(co);
    /* process_request, in order: the first answer other than "go on" wins. */
    for (f->i = 0; f->i < e->nmw; f->i++) {
        if ((f->call = call_request(f)))
            AWAIT(co, f->call);
        if (u->res.kind != MW_CONTINUE)
            break;
    }
    if (u->res.kind == MW_PARK)
        CORO_RETURN(co, NULL, URL_PARKED);
    if (u->res.kind == MW_IGNORE || u->res.kind == MW_REQUEST)
        CORO_RETURN(co, NULL, URL_SETTLED);
    if (u->res.kind == MW_RESPONSE) {
        take_response(u); /* the download is skipped */
    } else {
        /* The download: the chapter's retry loop. */
        AWAIT_CATCH(co, download(e, u->req, download_flags(e)));
        if (co->err && co->err->kind == CORO_CANCELLED)
            CORO_RAISE_ERR(co);
        if (!co->err) {
            u->fetch = co->value.p;
            u->truncated = co->value.n == 1;
            u->resp = response_of(u->fetch, u->truncated);
        } else {
            u->error = xstrdup(co->err->msg);
            coro_error_free(co->err);
            co->err = NULL;
            /* process_exception, in reverse order: a Response recovers. */
            for (f->i = e->nmw; f->i-- > 0;) {
                if ((f->call = call_exception(f)))
                    AWAIT(co, f->call);
                if (u->res.kind != MW_CONTINUE)
                    break;
            }
            if (u->res.kind == MW_CONTINUE)
                CORO_RETURN(co, NULL, URL_FAILED);
            if (u->res.kind != MW_RESPONSE)
                CORO_RETURN(co, NULL, URL_SETTLED);
            take_response(u);
        }
    }
    /* process_response, in reverse order. */
    for (f->i = e->nmw; f->i-- > 0;) {
        if ((f->call = call_response(f)))
            AWAIT(co, f->call);
        if (u->res.kind == MW_RESPONSE)
            take_response(u);
        else if (u->res.kind != MW_CONTINUE)
            CORO_RETURN(co, NULL, URL_SETTLED);
    }
    CORO_RETURN(co, NULL, URL_RESPONSE);
    CORO_END(co);
}

static const coro_def chain_def = {"downloader_middleware", __FILE__, chain_body, NULL,
                                   sizeof(chain_frame)};

coro *middleware_download(url_life *u)
{
    chain_frame *f = (chain_frame *)coro_new(&chain_def);
    f->u = u;
    return &f->co;
}
