/* engine.c — stage 3's engine: downloader middlewares and an item pipeline around the
 * chapter's fetch, on the chapter's coroutines. See engine.h for the rules; this file
 * reads top to bottom as the life of one URL. */
#include "engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fetch.h"
#include "log.h"

struct engine {
    app *a;
    frontier *fr;                /* the crawl's Queue (the Crawler's) */
    crawl_add_fn schedule;       /* frontier_add, ctx fr: put in the Queue */
    void *schedule_ctx;
    void (*task_done)(void *ctx, const char *url); /* the Crawler's, for engine_unpark */
    bool one_try;                /* the Queue is polite: each try is one of its starts */
    downloader_middleware *mw;
    size_t nmw;
    item_pipeline *pipe;
    size_t npipe;
    coro *(**seeds)(engine *e);  /* seeding coroutines, in order */
    size_t nseeds;
    bool keep_bodies;            /* a pipeline stage wants bodies */
    bool keep_wire;              /* a pipeline stage wants the wire bytes (--warc) */
    item *capture;               /* the item whose record the crawl core is making */
    bool failed;                 /* a pipeline stage raised */
};

/* ---- results ---- */

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

/* ---- the engine ---- */

/* The crawl core made a record: if a worker is recording a response for the
 * pipeline, the item gets a copy of it — once its --output line is written. A record
 * whose write failed reaches no stage (the state would count its URL done) and stops
 * the crawl at once: the worker acknowledges nothing more (crawler.c), and the report
 * says which write failed. */
static void on_record(void *ctx, const fetch_stat *st, const crawl_fetch *f)
{
    (void)f;
    engine *e = ctx;
    char err[512];
    if (crawl_write_failed(e->a->crawl, err, sizeof err)) {
        e->failed = true;
        selector_stop(e->a->loop);
        return;
    }
    if (e->capture && !e->capture->record.url) {
        fetch_stat_copy(&e->capture->record, st);
        e->capture->output_end = crawl_output_end(e->a->crawl);
        clock_gettime(CLOCK_REALTIME, &e->capture->at);
    }
}

engine *engine_new(app *a, frontier *fr)
{
    engine *e = xcalloc(1, sizeof *e);
    host_feedback hosts;
    e->a = a;
    e->fr = fr;
    e->schedule = frontier_add;
    e->schedule_ctx = fr;
    e->one_try = frontier_hosts(fr, &hosts);
    crawl_add_record_listener(a->crawl, on_record, e);
    return e;
}

void engine_free(engine *e)
{
    if (!e)
        return;
    /* Whoever goes listens no more: the engine, its middlewares and stages. */
    crawl *c = e->a->crawl;
    crawl_remove_listeners(c, e);
    for (size_t i = 0; i < e->nmw; i++) {
        crawl_remove_listeners(c, e->mw[i].self);
        if (e->mw[i].free)
            e->mw[i].free(e->mw[i].self);
    }
    for (size_t i = 0; i < e->npipe; i++) {
        crawl_remove_listeners(c, e->pipe[i].self);
        if (e->pipe[i].free)
            e->pipe[i].free(e->pipe[i].self);
    }
    free(e->mw);
    free(e->pipe);
    free(e->seeds);
    free(e);
}

void engine_add_middleware(engine *e, const downloader_middleware *mw)
{
    e->mw = xreallocarray(e->mw, e->nmw + 1, sizeof *e->mw);
    e->mw[e->nmw++] = *mw;
}

void engine_add_pipeline(engine *e, const item_pipeline *p)
{
    e->pipe = xreallocarray(e->pipe, e->npipe + 1, sizeof *e->pipe);
    e->pipe[e->npipe++] = *p;
    e->keep_bodies |= p->wants_body;
    e->keep_wire |= p->wants_wire;
}

void engine_add_seeds(engine *e, coro *(*seed)(engine *e))
{
    e->seeds = xreallocarray(e->seeds, e->nseeds + 1, sizeof *e->seeds);
    e->seeds[e->nseeds++] = seed;
}

bool engine_has_seeds(const engine *e) { return e->nseeds > 0; }

const char *engine_middleware_name(const engine *e, size_t i)
{
    return i < e->nmw ? e->mw[i].name : NULL;
}

const char *engine_pipeline_name(const engine *e, size_t i)
{
    return i < e->npipe ? e->pipe[i].name : NULL;
}

typedef struct {
    coro co;
    engine *e;
    size_t i;
} seed_frame;

static int seed_body(coro *co)
{
    seed_frame *f = (seed_frame *)co;
    CORO_BEGIN(co);
    for (f->i = 0; f->i < f->e->nseeds; f->i++)
        AWAIT(co, f->e->seeds[f->i](f->e));
    CORO_END(co);
}

static const coro_def seed_def = {"engine_seed", __FILE__, seed_body, NULL,
                                  sizeof(seed_frame)};

coro *engine_seed(engine *e)
{
    seed_frame *f = (seed_frame *)coro_new(&seed_def);
    f->e = e;
    return &f->co;
}

bool engine_plain(const engine *e) { return e->nmw == 0 && e->npipe == 0; }
app *engine_app(engine *e) { return e->a; }
bool engine_failed(const engine *e) { return e->failed; }
frontier *engine_frontier(engine *e) { return e->fr; }

size_t engine_backlog(const engine *e) { return e->fr ? frontier_qsize(e->fr) : 0; }

/* ---- engine.crawl: through the Queue ---- */

bool engine_crawl(engine *e, request *req)
{
    bool scheduled;
    crawl_request r = request_view(req);
    if (req->flags & REQ_DONT_FILTER) {
        e->schedule(e->schedule_ctx, &r);
        scheduled = true;
    } else {
        scheduled = crawl_schedule(e->a->crawl, &r, e->schedule, e->schedule_ctx);
    }
    request_free(req);
    return scheduled;
}

void engine_set_task_done(engine *e, void (*task_done)(void *ctx, const char *url))
{
    e->task_done = task_done;
}

bool engine_can_park(const engine *e)
{
    return e->task_done != NULL;
}

void engine_unpark(engine *e, request *req)
{
    char *url = xstrdup(req->url);
    req->flags |= REQ_DONT_FILTER; /* this very URL, once more */
    engine_crawl(e, req);
    e->task_done(e->schedule_ctx, url);
    free(url);
}

/* ---- engine.download: straight to the downloader, a Future of the response ---- */

/* The downloaded page as a Response: every header as it came, the body moved out of
 * the crawl core. */
static response *response_of(crawl_fetch *cf, bool truncated)
{
    response *r = response_new(crawl_fetch_url(cf), crawl_fetch_status(cf));
    size_t n;
    const char *h = crawl_fetch_headers(cf, &n);
    for (; n > 0; n--) {                        /* "name\0value\0" each */
        const char *value = h + strlen(h) + 1;
        response_add_header(r, h, value);
        h = value + strlen(value) + 1;
    }
    size_t len;
    char *body = crawl_fetch_take_body(cf, &len);
    response_set_body(r, body, len);
    r->truncated = truncated;
    r->wire = crawl_fetch_take_wire(cf);
    return r;
}

typedef struct {
    coro co;
    engine *e;
    request *req;
    size_t i;                   /* the middleware being called */
    coro *call;
    mw_result res;
} download_frame;

/* The chapter's retry loop for req (fetch_response) with its header fields, keeping
 * what flags say. */
static coro *download(engine *e, const request *req, unsigned flags)
{
    crawl_request r = request_view(req);
    if (req->flags & REQ_ONE_TRY)
        flags |= FETCH_ONE_TRY;
    if (req->flags & REQ_SIDE_LANE)
        flags |= FETCH_SIDE_LANE;
    return fetch_response(e->a, &r, request_fields(req), flags);
}

/* A download of the engine's own that is kept (REQ_ARCHIVE): to each stage that keeps
 * such downloads. */
static void pipeline_download(engine *e, const request *req, const response *r)
{
    for (size_t i = 0; i < e->npipe; i++)
        if (e->pipe[i].process_download)
            e->pipe[i].process_download(e->pipe[i].self, req, r);
}

/* The downloader alone: fetch_response's tries, the body kept, no record — after the
 * process_request of the middlewares that see all requests. */
static int download_body(coro *co)
{
    download_frame *f = (download_frame *)co;
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
    AWAIT(co, download(f->e, f->req,
                       FETCH_KEEP_BODY | (f->req->flags & REQ_ARCHIVE && f->e->keep_wire
                                              ? FETCH_KEEP_WIRE
                                              : 0)));
    {
        crawl_fetch *cf = co->value.p;
        response *r = response_of(cf, co->value.n == 1);
        crawl_fetch_release(cf);
        if (f->req->flags & REQ_ARCHIVE)
            pipeline_download(f->e, f->req, r);
        CORO_RETURN(co, r, 0);
    }
    CORO_END(co);
}

static void download_finally(coro *co)
{
    download_frame *f = (download_frame *)co;
    response_free(f->res.response);
    request_free(f->res.request);
    request_free(f->req);
}

static const coro_def download_def = {"download", __FILE__, download_body, download_finally,
                                      sizeof(download_frame)};

coro *engine_fetch(engine *e, request *req)
{
    download_frame *f = (download_frame *)coro_new(&download_def);
    f->e = e;
    f->req = req;
    return &f->co;
}

task *engine_download(engine *e, request *req)
{
    task *t = task_new(e->a->loop, engine_fetch(e, req), "download");
    t->report_errors = 0;       /* the awaiter reads the error */
    return t;
}

/* ---- open and close the pipeline ---- */

typedef struct {
    coro co;
    engine *e;
    size_t i;
    bool closing;
    coro *call;
} pipeline_frame;

static int pipeline_body(coro *co)
{
    pipeline_frame *f = (pipeline_frame *)co;
    CORO_BEGIN(co);
    for (f->i = 0; f->i < f->e->npipe; f->i++) {
        item_pipeline *p = &f->e->pipe[f->i];
        if (f->closing)
            f->call = p->close ? p->close(p->self) : NULL;
        else
            f->call = p->open ? p->open(p->self, f->e) : NULL;
        if (f->call)
            AWAIT_CATCH(co, f->call);
        if (co->err) {
            if (co->err->kind == CORO_CANCELLED)
                CORO_RAISE_ERR(co);
            char why[1024];
            snprintf(why, sizeof why, "%s the %s failed: %s", f->closing ? "closing" : "opening",
                     f->e->pipe[f->i].name, co->err->msg);
            log_error("crawl-queue: %s", why);
            crawl_fail(f->e->a->crawl, why);
            f->e->failed = true;
            coro_error_free(co->err);
            co->err = NULL;
            if (!f->closing)
                CORO_RETURN(co, NULL, -1);   /* no crawl without its pipeline */
        }
    }
    CORO_END(co);
}

static const coro_def pipeline_def = {"pipeline", __FILE__, pipeline_body, NULL,
                                      sizeof(pipeline_frame)};

static coro *pipeline_run(engine *e, bool closing)
{
    pipeline_frame *f = (pipeline_frame *)coro_new(&pipeline_def);
    f->e = e;
    f->closing = closing;
    return &f->co;
}

coro *engine_open(engine *e) { return pipeline_run(e, false); }
coro *engine_close(engine *e) { return pipeline_run(e, true); }

/* ---- the life of one URL ---- */

typedef struct {
    coro co;
    engine *e;
    request *req;
    size_t i;                   /* the middleware or pipeline stage being called */
    coro *call;                 /* its coroutine, when it gave one */
    mw_result res;
    char *error;                /* the download's error */
    crawl_fetch *fetch;         /* the downloaded page in the crawl core, until recorded */
    bool truncated;
    response *resp;
    item it;
    bool drop;
} handle_frame;

/* A Request or IgnoreRequest from a middleware ends this URL's life: schedule the
 * new request (this URL's record says so when it is another URL) or record why the
 * URL was ignored. */
static void record_failure(handle_frame *f, const char *why);

static void settle(handle_frame *f)
{
    if (f->res.kind == MW_IGNORE) {
        char why[300];
        snprintf(why, sizeof why, "IgnoreRequest: %s", f->res.reason);
        record_failure(f, why);
    } else if (f->res.kind == MW_REQUEST) {
        request *next = f->res.request;
        f->res.request = NULL;
        if (strcmp(next->url, f->req->url) == 0) {
            next->flags |= REQ_DONT_FILTER;     /* this very URL, once more */
        } else {
            char why[300];
            snprintf(why, sizeof why, "rescheduled as %.250s", next->url);
            record_failure(f, why);
        }
        engine_crawl(f->e, next);
    }
}

/* Record the response through the crawl core (which queues its links or the
 * redirect target), capturing the record for the item. */
static void record_response(handle_frame *f)
{
    engine *e = f->e;
    e->capture = &f->it;
    if (f->fetch) {
        crawl_fetch *cf = f->fetch;
        f->fetch = NULL;
        if (f->truncated)
            crawl_fetch_truncated(cf, e->schedule, e->schedule_ctx);
        else
            crawl_fetch_done(cf, e->schedule, e->schedule_ctx);
    } else {
        /* a Response a middleware made: fed through the core as if downloaded */
        response *r = f->resp;
        crawl_request cr = request_view(f->req);
        crawl_fetch *cf = crawl_fetch_new(e->a->crawl, &cr);
        const http_sink *s = crawl_fetch_sink(cf);
        if (r->not_modified)
            crawl_fetch_not_modified(cf);   /* its body is the stored page's */
        http_head head = {r->status, response_header(r, "Content-Type"),
                          response_header(r, "Location"), (long long)r->body_len,
                          NULL}; /* made here, not fetched: no HTTP version */
        s->on_head(s->ctx, &head);
        if (r->body_len)
            s->on_body(s->ctx, r->body, r->body_len);
        if (r->truncated)
            crawl_fetch_truncated(cf, e->schedule, e->schedule_ctx);
        else
            crawl_fetch_done(cf, e->schedule, e->schedule_ctx);
    }
    e->capture = NULL;
}

/* The middleware's method, of the chain being run, for f->i. */
static coro *call_request(handle_frame *f)
{
    downloader_middleware *m = &f->e->mw[f->i];
    mw_continue(&f->res);
    return m->process_request ? m->process_request(m->self, f->req, &f->res) : NULL;
}

static coro *call_exception(handle_frame *f)
{
    downloader_middleware *m = &f->e->mw[f->i];
    mw_continue(&f->res);
    return m->process_exception ? m->process_exception(m->self, f->req, f->error, &f->res)
                                : NULL;
}

static coro *call_response(handle_frame *f)
{
    downloader_middleware *m = &f->e->mw[f->i];
    mw_continue(&f->res);
    return m->process_response ? m->process_response(m->self, f->req, f->resp, &f->res)
                               : NULL;
}

/* A middleware's response replaces the one we have (which came from the download,
 * or from an earlier middleware). */
static void replace_response(handle_frame *f)
{
    response *r = f->res.response;
    f->res.response = NULL;
    if (r == f->resp)
        return;
    response_free(f->resp);
    f->resp = r;
    if (f->fetch) {
        crawl_fetch_discard(f->fetch);
        f->fetch = NULL;
    }
}

/* A failure record (no response): made with the capture on, so the item gets it. */
static void record_failure(handle_frame *f, const char *why)
{
    f->e->capture = &f->it;
    crawl_record_failure(f->e->a->crawl, f->req->url, why);
    f->e->capture = NULL;
}

static int handle_body(coro *co)
{
    handle_frame *f = (handle_frame *)co;
    engine *e = f->e;
    CORO_BEGIN(co);

    /* process_request, in order: the first answer other than "go on" wins. */
    for (f->i = 0; f->i < e->nmw; f->i++) {
        f->call = call_request(f);
        if (f->call)
            AWAIT(co, f->call);
        if (f->res.kind != MW_CONTINUE)
            break;
    }
    if (f->res.kind == MW_PARK)
        CORO_RETURN(co, NULL, ENGINE_PARKED); /* no record: engine_unpark brings it back */
    if (f->res.kind == MW_IGNORE || f->res.kind == MW_REQUEST) {
        settle(f);
        goto pipeline;
    }

    if (f->res.kind == MW_RESPONSE) {
        f->resp = f->res.response;              /* the download is skipped */
        f->res.response = NULL;
    } else {
        /* The download: the chapter's retry loop. */
        AWAIT_CATCH(co, download(e, f->req, (e->keep_bodies ? FETCH_KEEP_BODY : 0) |
                                                (e->keep_wire ? FETCH_KEEP_WIRE : 0) |
                                                (e->one_try ? FETCH_ONE_TRY : 0)));
        if (!co->err) {
            f->fetch = co->value.p;
            f->truncated = co->value.n == 1;
            f->resp = response_of(f->fetch, f->truncated);
        } else {
            if (co->err->kind == CORO_CANCELLED)
                CORO_RAISE_ERR(co);
            f->error = xstrdup(co->err->msg);
            coro_error_free(co->err);
            co->err = NULL;
            /* process_exception, in reverse order: a Response recovers. */
            for (f->i = e->nmw; f->i-- > 0;) {
                f->call = call_exception(f);
                if (f->call)
                    AWAIT(co, f->call);
                if (f->res.kind != MW_CONTINUE)
                    break;
            }
            if (f->res.kind == MW_CONTINUE) {
                record_failure(f, f->error);
                goto pipeline;
            }
            if (f->res.kind != MW_RESPONSE) {
                settle(f);
                goto pipeline;
            }
            f->resp = f->res.response;
            f->res.response = NULL;
        }
    }

    /* process_response, in reverse order. */
    for (f->i = e->nmw; f->i-- > 0;) {
        f->call = call_response(f);
        if (f->call)
            AWAIT(co, f->call);
        if (f->res.kind == MW_RESPONSE) {
            replace_response(f);
        } else if (f->res.kind != MW_CONTINUE) {
            settle(f);
            goto pipeline;
        }
    }
    record_response(f);

pipeline:
    /* The item pipeline, in order, until a stage drops the item. A URL that was
     * rescheduled as itself has no record yet: its next visit makes one. */
    if (!f->it.record.url)
        CORO_RETURN(co, NULL, 0);
    f->it.request = f->req;
    f->it.response = f->resp;
    for (f->i = 0; f->i < e->npipe && !f->drop; f->i++) {
        item_pipeline *p = &e->pipe[f->i];
        f->call = p->process_item ? p->process_item(p->self, &f->it, &f->drop) : NULL;
        if (f->call)
            AWAIT_CATCH(co, f->call);
        if (co->err) {
            if (co->err->kind == CORO_CANCELLED)
                CORO_RAISE_ERR(co);
            char why[1024];
            snprintf(why, sizeof why, "the %s failed on %s: %s", e->pipe[f->i].name,
                     f->req->url, co->err->msg);
            log_error("crawl-queue: %s", why);
            crawl_fail(e->a->crawl, why);
            e->failed = true;
            selector_stop(e->a->loop);          /* a lost item is not a finished crawl */
            coro_error_free(co->err);
            co->err = NULL;
            break;
        }
    }
    CORO_END(co);
}

static void handle_finally(coro *co)
{
    handle_frame *f = (handle_frame *)co;
    if (f->fetch)
        crawl_fetch_discard(f->fetch);
    response_free(f->resp);
    response_free(f->res.response);
    request_free(f->res.request);
    request_free(f->req);
    fetch_stat_clear(&f->it.record);
    free(f->error);
}

static const coro_def handle_def = {"engine_handle", __FILE__, handle_body, handle_finally,
                                    sizeof(handle_frame)};

coro *engine_handle(engine *e, const crawl_request *r)
{
    handle_frame *f = (handle_frame *)coro_new(&handle_def);
    f->e = e;
    f->req = request_from(r, 0);
    return &f->co;
}
