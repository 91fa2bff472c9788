/* engine.c — stage 3's engine, after Scrapy's scrapy/core/engine.py: made and
 * assembled, its two doors in (engine_crawl through the Queue, engine_download
 * straight to the downloader), the record of each URL, and the life of one URL from
 * the Queue — the downloader middleware manager (middleware.c), the scraper
 * (scraper.c) and the item pipeline manager (itempipeline.c), called in order. See
 * engine.h for the rules, engine_private.h for the managers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "engine_private.h"
#include "log.h"

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
        if (st->with_times)
            e->capture->at = st->at; /* the record's fetched_at */
        else
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

coro *engine_start_requests(engine *e)
{
    return scraper_start_requests(e);
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

coro *engine_fetch(engine *e, request *req)
{
    return middleware_fetch(e, req);
}

task *engine_download(engine *e, request *req)
{
    task *t = task_new(e->a->loop, engine_fetch(e, req), "download");
    t->report_errors = 0; /* the awaiter reads the error */
    return t;
}

/* ---- open and close the pipeline ---- */

void engine_on_open(engine *e, void (*fn)(void *ctx), void *ctx)
{
    e->on_open = fn;
    e->on_open_ctx = ctx;
}

coro *engine_open(engine *e)
{
    return itempipeline_open_close(e, false);
}
coro *engine_close(engine *e)
{
    return itempipeline_open_close(e, true);
}

/* ---- the record of one URL ---- */

/* The record the crawl core is about to make is this URL's: its item gets a copy, and
 * its own fields (engine_record_fields) come from this request. */
static void begin_record(url_life *u)
{
    u->e->capture = &u->it;
    u->e->recording = u->req;
}

static void end_record(url_life *u)
{
    u->e->capture = NULL;
    u->e->recording = NULL;
}

/* A failure record (no response): made with the capture on, so the item gets it. */
static void record_failure(url_life *u, const char *why)
{
    begin_record(u);
    crawl_record_failure(u->e->a->crawl, u->req->url, why);
    end_record(u);
}

/* A Request or IgnoreRequest from a middleware ends this URL's life: schedule the
 * new request (this URL's record says so when it is another URL) or record why the
 * URL was ignored. */
static void settle(url_life *u)
{
    if (u->res.kind == MW_IGNORE) {
        char why[300];
        snprintf(why, sizeof why, "IgnoreRequest: %s", u->res.reason);
        record_failure(u, why);
        if (u->res.robots)
            crawl_skip(u->e->a->crawl, u->req->url, CRAWL_SKIP_ROBOTS, u->req->referrer);
    } else if (u->res.kind == MW_REQUEST) {
        request *next = u->res.request;
        u->res.request = NULL;
        if (strcmp(next->url, u->req->url) == 0) {
            next->flags |= REQ_DONT_FILTER; /* this very URL, once more */
        } else {
            char why[300];
            snprintf(why, sizeof why, "rescheduled as %.250s", next->url);
            record_failure(u, why);
        }
        engine_crawl(u->e, next);
    }
}

/* A Response a middleware made: fed through the crawl core as if downloaded, so that
 * it has its links and makes its record. */
static void feed_response(url_life *u)
{
    if (u->fetch)
        return;
    response *r = u->resp;
    crawl_request cr = request_view(u->req);
    crawl_fetch *cf = crawl_fetch_new(u->e->a->crawl, &cr);
    const http_sink *s = crawl_fetch_sink(cf);
    if (r->not_modified)
        crawl_fetch_not_modified(cf); /* its body is the stored page's */
    crawl_fetch_set_times(cf, &r->times);
    http_head head = {r->status, response_header(r, "Content-Type"), response_header(r, "Location"),
                      (long long)r->body_len, NULL}; /* made here, not fetched: no HTTP version */
    s->on_head(s->ctx, &head);
    if (r->body_len)
        s->on_body(s->ctx, r->body, r->body_len);
    u->fetch = cf;
    u->truncated = r->truncated;
}

/* The page's links, copied for a pipeline stage that wants them (the crawl core frees
 * its own with the record). */
static void keep_links(url_life *u)
{
    if (!u->e->keep_links)
        return;
    size_t n;
    const crawl_link *links = crawl_fetch_links(u->fetch, &n);
    u->links = xcalloc(n ? n : 1, sizeof *u->links);
    for (u->nlinks = 0; u->nlinks < n; u->nlinks++)
        u->links[u->nlinks] = (crawl_link){xstrdup(links[u->nlinks].url), links[u->nlinks].allowed};
    u->it.links = u->links;
    u->it.nlinks = u->nlinks;
}

/* Record the response through the crawl core — which follows a redirect, but leaves
 * the page's links to the spider — with the spider's error, if one stayed. */
static void record_response(url_life *u)
{
    engine *e = u->e;
    keep_links(u);
    crawl_fetch *cf = u->fetch;
    u->fetch = NULL;
    begin_record(u);
    crawl_fetch_done_by_spider(cf, u->truncated, u->out.error, e->schedule, e->schedule_ctx);
    end_record(u);
}

/* The spider's requests, each through engine_crawl (Scrapy's engine.crawl), in order;
 * its items stay for the pipeline. */
static void schedule_outputs(url_life *u)
{
    for (size_t k = 0; k < u->out.n; k++) {
        spider_output *o = &u->out.v[k];
        if (o->kind == SPIDER_REQUEST) {
            if (o->request->flags & REQ_DONT_FILTER) {
                crawl_request v = request_view(o->request);
                u->again = xreallocarray(u->again, u->nagain + 1, sizeof *u->again);
                u->again[u->nagain++] = crawl_request_dup(&v);
            }
            engine_crawl(u->e, o->request);
            o->request = NULL;
        }
    }
    u->it.again = u->again;
    u->it.nagain = u->nagain;
}

/* ---- the life of one URL ---- */

typedef struct {
    coro co;
    url_life u;          /* what the managers make of the URL: freed here */
    url_outcome outcome; /* how the downloader middlewares left it */
} handle_frame;

/* Scrapy's engine: the downloader middlewares around the download, the scraper for a
 * response, the item pipeline for the record. (No switch here: AWAIT's resume points
 * are the cases of the coroutine's own.) */
static int handle_body(coro *co)
{
    handle_frame *f = (handle_frame *)co;
    url_life *u = &f->u;
    CORO_BEGIN(co);
    AWAIT(co, middleware_download(u));
    f->outcome = (url_outcome)co->value.n;
    if (f->outcome == URL_PARKED)
        CORO_RETURN(co, NULL, ENGINE_PARKED); /* no record: engine_unpark brings it back */
    if (f->outcome == URL_SETTLED)
        settle(u);
    if (f->outcome == URL_FAILED)
        record_failure(u, u->error);
    if (f->outcome == URL_RESPONSE) {
        /* The spider between its middlewares, then the record and the spider's
         * requests. */
        feed_response(u);
        AWAIT(co, scraper_scrape(u));
        record_response(u);
        schedule_outputs(u);
    }
    /* The spider's items, then the record. A URL that was rescheduled as itself has no
     * record yet: its next visit makes one. */
    if (u->it.record.url)
        AWAIT(co, itempipeline_process(u));
    CORO_END(co);
}

static void handle_finally(coro *co)
{
    url_life *u = &((handle_frame *)co)->u;
    if (u->fetch)
        crawl_fetch_discard(u->fetch);
    response_free(u->resp);
    response_free(u->res.response);
    request_free(u->res.request);
    request_free(u->req);
    fetch_stat_clear(&u->it.record);
    free(u->error);
    spider_outputs_clear(&u->out);
    for (size_t k = 0; k < u->nlinks; k++)
        free((char *)u->links[k].url);
    free(u->links);
    for (size_t k = 0; k < u->nagain; k++)
        free(u->again[k]);
    free(u->again);
}

static const coro_def handle_def = {"engine_handle", __FILE__, handle_body, handle_finally,
                                    sizeof(handle_frame)};

coro *engine_handle(engine *e, const crawl_request *r)
{
    handle_frame *f = (handle_frame *)coro_new(&handle_def);
    f->u.e = e;
    f->u.req = request_from(r, 0);
    return &f->co;
}
