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
#include "url.h"

struct engine {
    app *a;
    frontier *fr;          /* the crawl's Queue (the Crawler's) */
    crawl_add_fn schedule; /* frontier_add, ctx fr: put in the Queue */
    void *schedule_ctx;
    void (*task_done)(void *ctx, const char *url); /* the Crawler's, for engine_unpark */
    bool one_try; /* the Queue is polite: each try is one of its starts */
    downloader_middleware *mw;
    size_t nmw;
    item_pipeline *pipe;
    size_t npipe;
    coro *(**seeds)(engine *e); /* seeding coroutines, in order */
    size_t nseeds;
    bool keep_bodies;         /* a pipeline stage wants bodies */
    bool keep_wire;           /* a pipeline stage wants the wire bytes (--warc) */
    bool keep_links;          /* a pipeline stage wants the page's links */
    item *capture;            /* the item whose record the crawl core is making */
    const request *recording; /* and its request (for the record's own fields) */
    unsigned fields;          /* the record's own fields (engine_record_fields) */
    bool failed;              /* a pipeline stage raised */
    spider sp;                /* the crawl's spider (spider.h) */
    spider_middleware *smw;
    size_t nsmw;
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
    e->sp = spider_default();
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
    for (size_t i = 0; i < e->nsmw; i++) {
        crawl_remove_listeners(c, e->smw[i].self);
        if (e->smw[i].free)
            e->smw[i].free(e->smw[i].self);
    }
    if (e->sp.free)
        e->sp.free(e->sp.self);
    if (e->fields)
        crawl_set_fields(c, NULL, NULL);
    free(e->mw);
    free(e->pipe);
    free(e->smw);
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
    e->keep_links |= p->wants_links;
}

void engine_set_spider(engine *e, const spider *s)
{
    if (e->sp.free)
        e->sp.free(e->sp.self);
    e->sp = *s;
    e->keep_bodies |= s->wants_body;
}

void engine_add_spider_middleware(engine *e, const spider_middleware *m)
{
    e->smw = xreallocarray(e->smw, e->nsmw + 1, sizeof *e->smw);
    e->smw[e->nsmw++] = *m;
    e->keep_bodies |= m->wants_body;
}

/* The crawl core's hook: the record being made gets the fields asked for, from the
 * request of the URL being recorded. */
static void fill_fields(void *ctx, fetch_stat *st)
{
    engine *e = ctx;
    const request *r = e->recording;
    if (!r)
        return;
    st->extra = e->fields;
    st->depth = r->depth;
    st->referrer = r->referrer;
    st->requisite = r->callback && strcmp(r->callback, SPIDER_CB_REQUISITE) == 0;
}

void engine_record_fields(engine *e, unsigned fields)
{
    if (!e->fields)
        crawl_set_fields(e->a->crawl, fill_fields, e);
    e->fields |= fields;
}

void engine_add_seeds(engine *e, coro *(*seed)(engine *e))
{
    e->seeds = xreallocarray(e->seeds, e->nseeds + 1, sizeof *e->seeds);
    e->seeds[e->nseeds++] = seed;
}

bool engine_has_seeds(const engine *e)
{
    return e->nseeds > 0;
}

const char *engine_middleware_name(const engine *e, size_t i)
{
    return i < e->nmw ? e->mw[i].name : NULL;
}

const char *engine_pipeline_name(const engine *e, size_t i)
{
    return i < e->npipe ? e->pipe[i].name : NULL;
}

const char *engine_spider_middleware_name(const engine *e, size_t i)
{
    return i < e->nsmw ? e->smw[i].name : NULL;
}

const char *engine_spider_name(const engine *e)
{
    return e->sp.name;
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

static const coro_def seed_def = {"engine_seed", __FILE__, seed_body, NULL, sizeof(seed_frame)};

coro *engine_seed(engine *e)
{
    seed_frame *f = (seed_frame *)coro_new(&seed_def);
    f->e = e;
    return &f->co;
}

/* ---- start requests ---- */

bool engine_has_start_requests(const engine *e)
{
    if (e->sp.start_requests)
        return true;
    for (size_t i = 0; i < e->nsmw; i++)
        if (e->smw[i].process_start_requests)
            return true;
    return false;
}

typedef struct {
    coro co;
    engine *e;
    size_t i;
    spider_outputs out;
} start_frame;

/* The roots, as crawl_add_roots makes them: depth 0, no referrer. */
static void root_requests(engine *e, spider_outputs *out)
{
    const crawl_options *o = &e->a->opt;
    for (int i = 0; i < o->nroots; i++) {
        char why[256];
        char *root = url_fix(o->roots[i], why, sizeof why);
        if (!root) {
            log_warn("skipping root: %s", why);
            continue;
        }
        spider_emit_request(out, request_new(root, o->max_redirect, REQ_ROOT));
        free(root);
    }
}

static int start_body(coro *co)
{
    start_frame *f = (start_frame *)co;
    engine *e = f->e;
    CORO_BEGIN(co);
    if (e->sp.start_requests) {
        coro *call = e->sp.start_requests(e->sp.self, &f->out);
        if (call)
            AWAIT(co, call);
        for (size_t k = 0; k < f->out.n; k++)
            if (f->out.v[k].kind == SPIDER_REQUEST)
                f->out.v[k].request->flags |= REQ_ROOT;
    } else {
        root_requests(e, &f->out);
    }
    for (f->i = e->nsmw; f->i-- > 0;) {
        spider_middleware *m = &e->smw[f->i];
        coro *call = m->process_start_requests ? m->process_start_requests(m->self, &f->out) : NULL;
        if (call)
            AWAIT(co, call);
    }
    for (size_t k = 0; k < f->out.n; k++) {
        spider_output *o = &f->out.v[k];
        if (o->kind == SPIDER_REQUEST) {
            engine_crawl(e, o->request);
            o->request = NULL;
        } else {
            log_warn("a start request that is an item is dropped: %s", o->item);
        }
    }
    CORO_END(co);
}

static void start_finally(coro *co)
{
    spider_outputs_clear(&((start_frame *)co)->out);
}

static const coro_def start_def = {"start_requests", __FILE__, start_body, start_finally,
                                   sizeof(start_frame)};

coro *engine_start_requests(engine *e)
{
    start_frame *f = (start_frame *)coro_new(&start_def);
    f->e = e;
    return &f->co;
}

bool engine_plain(const engine *e)
{
    return e->nmw == 0 && e->npipe == 0 && e->nsmw == 0 && spider_is_default(&e->sp);
}
app *engine_app(engine *e)
{
    return e->a;
}
bool engine_failed(const engine *e)
{
    return e->failed;
}
frontier *engine_frontier(engine *e)
{
    return e->fr;
}

size_t engine_backlog(const engine *e)
{
    return e->fr ? frontier_qsize(e->fr) : 0;
}

/* ---- engine.crawl: through the Queue ---- */

bool engine_crawl(engine *e, request *req)
{
    bool scheduled;
    crawl_request r = request_view(req);
    if (req->flags & REQ_DONT_FILTER) {
        e->schedule(e->schedule_ctx, &r);
        scheduled = true;
    } else if (req->flags & REQ_ROOT) {
        scheduled = crawl_schedule_root(e->a->crawl, &r, e->schedule, e->schedule_ctx);
    } else if (req->flags & REQ_ANY_HOST) {
        scheduled = crawl_schedule_any_host(e->a->crawl, &r, e->schedule, e->schedule_ctx);
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
    return r;
}

typedef struct {
    coro co;
    engine *e;
    request *req;
    size_t i; /* the middleware being called */
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
    AWAIT(co,
          download(f->e, f->req,
                   FETCH_KEEP_BODY
                       | (f->req->flags & REQ_ARCHIVE && f->e->keep_wire ? FETCH_KEEP_WIRE : 0)));
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
    t->report_errors = 0; /* the awaiter reads the error */
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
                CORO_RETURN(co, NULL, -1); /* no crawl without its pipeline */
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

coro *engine_open(engine *e)
{
    return pipeline_run(e, false);
}
coro *engine_close(engine *e)
{
    return pipeline_run(e, true);
}

/* ---- the life of one URL ---- */

typedef struct {
    coro co;
    engine *e;
    request *req;
    size_t i;   /* the middleware or pipeline stage being called */
    coro *call; /* its coroutine, when it gave one */
    mw_result res;
    char *error;        /* the download's error */
    crawl_fetch *fetch; /* the downloaded page in the crawl core, until recorded */
    bool truncated;
    response *resp;
    item it;
    bool drop;
    spider_response sr; /* what the spider is given */
    size_t step;        /* its step (spider_step) */
    spider_outputs out; /* what it (and its middlewares) made */
    size_t k;           /* the output going through the pipeline */
    spider_item sitem;
    int nitems;        /* the spider's items handed to the pipeline so far */
    crawl_link *links; /* the page's links, for the pipeline (keep_links) */
    size_t nlinks;
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
            next->flags |= REQ_DONT_FILTER; /* this very URL, once more */
        } else {
            char why[300];
            snprintf(why, sizeof why, "rescheduled as %.250s", next->url);
            record_failure(f, why);
        }
        engine_crawl(f->e, next);
    }
}

/* A Response a middleware made: fed through the crawl core as if downloaded, so that
 * it has its links and makes its record. */
static void feed_response(handle_frame *f)
{
    if (f->fetch)
        return;
    response *r = f->resp;
    crawl_request cr = request_view(f->req);
    crawl_fetch *cf = crawl_fetch_new(f->e->a->crawl, &cr);
    const http_sink *s = crawl_fetch_sink(cf);
    if (r->not_modified)
        crawl_fetch_not_modified(cf); /* its body is the stored page's */
    http_head head = {r->status, response_header(r, "Content-Type"), response_header(r, "Location"),
                      (long long)r->body_len, NULL}; /* made here, not fetched: no HTTP version */
    s->on_head(s->ctx, &head);
    if (r->body_len)
        s->on_body(s->ctx, r->body, r->body_len);
    f->fetch = cf;
    f->truncated = r->truncated;
}

/* The record the crawl core is about to make is this URL's: its item gets a copy, and
 * its own fields (engine_record_fields) come from this request. */
static void begin_record(handle_frame *f)
{
    f->e->capture = &f->it;
    f->e->recording = f->req;
}

static void end_record(handle_frame *f)
{
    f->e->capture = NULL;
    f->e->recording = NULL;
}

/* The page's links, copied for a pipeline stage that wants them (the crawl core frees
 * its own with the record). */
static void keep_links(handle_frame *f)
{
    if (!f->e->keep_links)
        return;
    size_t n;
    const crawl_link *links = crawl_fetch_links(f->fetch, &n);
    f->links = xcalloc(n ? n : 1, sizeof *f->links);
    for (f->nlinks = 0; f->nlinks < n; f->nlinks++)
        f->links[f->nlinks] = (crawl_link){xstrdup(links[f->nlinks].url), links[f->nlinks].allowed};
    f->it.links = f->links;
    f->it.nlinks = f->nlinks;
}

/* Record the response through the crawl core — which follows a redirect, but leaves
 * the page's links to the spider — with the spider's error, if one stayed. */
static void record_response(handle_frame *f)
{
    engine *e = f->e;
    feed_response(f);
    keep_links(f);
    crawl_fetch *cf = f->fetch;
    f->fetch = NULL;
    begin_record(f);
    crawl_fetch_done_by_spider(cf, f->truncated, f->out.error, e->schedule, e->schedule_ctx);
    end_record(f);
}

/* The spider's requests, each through engine_crawl (Scrapy's engine.crawl), in order;
 * its items stay for the pipeline. */
static void schedule_outputs(handle_frame *f)
{
    for (size_t k = 0; k < f->out.n; k++) {
        spider_output *o = &f->out.v[k];
        if (o->kind == SPIDER_REQUEST) {
            engine_crawl(f->e, o->request);
            o->request = NULL;
        }
    }
}

/* What the spider is given, for the response about to be recorded. */
static void spider_setup(handle_frame *f)
{
    size_t n;
    const crawl_link *links = crawl_fetch_links(f->fetch, &n);
    f->sr = (spider_response){.request = f->req,
                              .response = f->resp,
                              .content_type = crawl_fetch_content_type(f->fetch),
                              .encoding = crawl_fetch_encoding(f->fetch),
                              .links = links,
                              .nlinks = n,
                              .max_redirect = f->e->a->opt.max_redirect};
}

static bool is_requisite(const request *r)
{
    return r->callback && strcmp(r->callback, SPIDER_CB_REQUISITE) == 0;
}

/* The spider's step f->step, of 3 * n + 1 for n spider middlewares: process_spider_input
 * in order (while there is no error), the callback (unless there is one, or the
 * response is a requisite's), process_spider_exception in reverse order (while there
 * is an error: one that recovers ends the chain), process_spider_output in reverse
 * order. Returns the call's coroutine, or NULL (done, or skipped). */
static coro *spider_step(handle_frame *f)
{
    typedef coro *(*method)(void *, const spider_response *, spider_outputs *);
    engine *e = f->e;
    size_t n = e->nsmw, k = f->step;
    spider_middleware *m;
    method fn;
    if (k < n) {
        m = &e->smw[k];
        fn = f->out.error ? NULL : m->process_spider_input;
    } else if (k == n) {
        bool skip = f->out.error || is_requisite(f->req);
        return skip ? NULL : e->sp.parse(e->sp.self, &f->sr, &f->out);
    } else if (k <= 2 * n) {
        m = &e->smw[2 * n - k];
        fn = f->out.error ? m->process_spider_exception : NULL;
    } else {
        m = &e->smw[3 * n - k];
        fn = m->process_spider_output;
    }
    return fn ? fn(m->self, &f->sr, &f->out) : NULL;
}

/* A spider's (or spider middleware's) coroutine raised: its message is the error. */
static void spider_raised(handle_frame *f, coro *co)
{
    spider_fail(&f->out, "%s", co->err->msg);
    coro_error_free(co->err);
    co->err = NULL;
}

/* A pipeline stage raised: the crawl stops (a lost item is not a finished crawl). */
static void pipeline_raised(handle_frame *f, coro *co)
{
    engine *e = f->e;
    char why[1024];
    snprintf(why, sizeof why, "the %s failed on %s: %s", e->pipe[f->i].name, f->req->url,
             co->err->msg);
    log_error("crawl-queue: %s", why);
    crawl_fail(e->a->crawl, why);
    e->failed = true;
    selector_stop(e->a->loop);
    coro_error_free(co->err);
    co->err = NULL;
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
    return m->process_exception ? m->process_exception(m->self, f->req, f->error, &f->res) : NULL;
}

static coro *call_response(handle_frame *f)
{
    downloader_middleware *m = &f->e->mw[f->i];
    mw_continue(&f->res);
    return m->process_response ? m->process_response(m->self, f->req, f->resp, &f->res) : NULL;
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
    begin_record(f);
    crawl_record_failure(f->e->a->crawl, f->req->url, why);
    end_record(f);
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
        f->resp = f->res.response; /* the download is skipped */
        f->res.response = NULL;
    } else {
        /* The download: the chapter's retry loop. */
        AWAIT_CATCH(co,
                    download(e, f->req,
                             (e->keep_bodies ? FETCH_KEEP_BODY : 0)
                                 | (e->keep_wire ? FETCH_KEEP_WIRE : 0)
                                 | (e->one_try ? FETCH_ONE_TRY : 0)));
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
    /* The spider, between its middlewares (spider.h): its steps in turn, each a call
     * that may wait; one that raises (or fails) sets the error. */
    feed_response(f);
    spider_setup(f);
    for (f->step = 0; f->step < 3 * e->nsmw + 1; f->step++) {
        f->call = spider_step(f);
        if (f->call)
            AWAIT_CATCH(co, f->call);
        if (co->err && co->err->kind == CORO_CANCELLED)
            CORO_RAISE_ERR(co);
        if (co->err)
            spider_raised(f, co);
    }
    record_response(f);
    schedule_outputs(f);

pipeline:
    /* The item pipeline, in order, until a stage drops the item. A URL that was
     * rescheduled as itself has no record yet: its next visit makes one. */
    if (!f->it.record.url)
        CORO_RETURN(co, NULL, 0);
    /* The spider's items first, each through the stages that take them, then the
     * record (spider.h's order): --state counts the URL done only after its items
     * (items.h), so a kill -9 between them fetches it again rather than lose them. */
    for (f->k = 0; f->k < f->out.n; f->k++) {
        if (f->out.v[f->k].kind != SPIDER_ITEM)
            continue;
        f->sitem = (spider_item){f->out.v[f->k].item, f->req, f->nitems++, -1};
        f->drop = false;
        for (f->i = 0; f->i < e->npipe && !f->drop; f->i++) {
            item_pipeline *p = &e->pipe[f->i];
            f->call = p->process_spider_item ? p->process_spider_item(p->self, &f->sitem, &f->drop)
                                             : NULL;
            if (f->call)
                AWAIT_CATCH(co, f->call);
            if (co->err && co->err->kind == CORO_CANCELLED)
                CORO_RAISE_ERR(co);
            if (co->err) {
                pipeline_raised(f, co);
                CORO_RETURN(co, NULL, 0);
            }
        }
    }
    f->drop = false;
    f->it.request = f->req;
    f->it.response = f->resp;
    for (f->i = 0; f->i < e->npipe && !f->drop; f->i++) {
        item_pipeline *p = &e->pipe[f->i];
        f->call = p->process_item ? p->process_item(p->self, &f->it, &f->drop) : NULL;
        if (f->call)
            AWAIT_CATCH(co, f->call);
        if (co->err && co->err->kind == CORO_CANCELLED)
            CORO_RAISE_ERR(co);
        if (co->err) {
            pipeline_raised(f, co);
            CORO_RETURN(co, NULL, 0);
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
    spider_outputs_clear(&f->out);
    for (size_t k = 0; k < f->nlinks; k++)
        free((char *)f->links[k].url);
    free(f->links);
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
