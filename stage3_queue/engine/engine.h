/* engine.h — stage 3's engine: where user code may wait.
 *
 * The second source of this project (Scrapy's asynchronous extension points) shows
 * where a crawler built on one event loop lets extensions wait for something: a
 * downloader middleware's process_request, process_response and process_exception,
 * and an item pipeline's process_item, may each return a Deferred that the engine
 * waits for. Here the Deferred is our Future, and "may return one" is this rule:
 *
 *   A method returns NULL when its result is ready at once (it wrote *out), or a
 *   coroutine that the engine awaits — it writes *out before it returns.
 *
 * That is Twisted's maybeDeferred: the engine treats both alike. The coroutine may in
 * turn await any Future (a robots.txt download shared by every request to one host,
 * a database write in the thread pool): it is the article's inlineCallbacks
 * generator, written with AWAIT.
 *
 * The life of one URL taken from the Queue (engine_handle, engine.c), handed in turn
 * to the downloader middleware manager (middleware.c: process_request to
 * process_response), the scraper (scraper.c: the spider) and the item pipeline manager
 * (itempipeline.c: process_item), as Scrapy's engine hands it on:
 *
 *   process_request   in registration order; the first result other than CONTINUE
 *                     ends the chain: a Response skips the download, a Request is
 *                     scheduled instead, IGNORE makes the URL a failure record
 *   download          the chapter's fetch_response (retries, either transport)
 *   process_exception in reverse order, when the download failed: a Response
 *                     recovers, a Request reschedules, IGNORE records
 *   process_response  in reverse order: CONTINUE keeps the response, a Response
 *                     replaces it, a Request reschedules, IGNORE records
 *   the spider        spider middleware and the spider's callback (spider.h) turn
 *                     the response into outputs: requests and items
 *   record            the crawl core records the response (or the failure: every
 *                     URL ends as exactly one record), follows a redirect, and the
 *                     spider's requests go to the Queue (engine_crawl); a record
 *                     whose --output write failed stops the crawl here
 *   process_item      each pipeline stage in order, until one drops the item (and
 *                     each spider item through process_spider_item, spider.h)
 *
 * Two doors in, as in Scrapy: engine_crawl (through the Queue — it counts for join —
 * the middlewares, a record and the pipeline) and engine_download (straight to the
 * downloader: no queue, no record, and only the middlewares that see all_requests; a
 * Future of the response).
 */
#ifndef CRAWL_ENGINE_H
#define CRAWL_ENGINE_H

#include <stdbool.h>
#include <time.h>

#include "app.h"
#include "coro.h"
#include "frontier.h"
#include "report.h"
#include "request.h"
#include "spider.h"
#include "task.h"

typedef struct engine engine;

/* ---- downloader middleware ---- */

typedef enum {
    MW_CONTINUE = 0, /* None: go on with the chain */
    MW_RESPONSE,     /* a Response: out->response, handed to the engine */
    MW_REQUEST,      /* a Request: out->request, scheduled instead of this one */
    MW_IGNORE,       /* IgnoreRequest: out->reason is recorded */
    /* process_request only: the middleware keeps the URL for later (engine_unpark) and
     * the worker goes on to another */
    MW_PARK,
} mw_kind;

typedef struct mw_result {
    mw_kind kind;
    response *response;
    request *request;
    char reason[256];
    bool robots; /* MW_IGNORE: robots.txt forbids the URL (a skip the summary counts) */
} mw_result;

/* Helpers for writing *out. */
void mw_continue(mw_result *out);
void mw_respond(mw_result *out, response *r);
void mw_reschedule(mw_result *out, request *r);
void mw_ignore(mw_result *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mw_park(mw_result *out);

typedef struct downloader_middleware {
    const char *name;
    void *self;
    /* process_request sees the engine's own downloads too (engine_download: robots.txt,
     * sitemaps), as every middleware does in Scrapy; there a Response answers the
     * download, IGNORE fails it, a Request is an error. Off: the crawl's URLs only. */
    bool all_requests;
    /* Each may be NULL (skipped). NULL return: *out is set; else a coroutine to await. */
    coro *(*process_request)(void *self, request *req, mw_result *out);
    coro *(*process_response)(void *self, request *req, const response *resp, mw_result *out);
    coro *(*process_exception)(void *self, request *req, const char *error, mw_result *out);
    void (*free)(void *self);
} downloader_middleware;

/* ---- item pipeline ---- */

/* What reaches the pipeline for each record the engine made: every URL it handled,
 * fetched or not. */
typedef struct item {
    fetch_stat record; /* the record, as written to the report (owned) */
    const request *request;
    const response *response; /* NULL for a failure; else status, kept headers, and
                                 * the body if a stage wants_body */
    long long output_end;     /* where its line ends in --output (-1: no offset) */
    const spider_link *links; /* the page's links (spider.h), nlinks of them, when a
                                 * stage wants_links; else NULL */
    size_t nlinks;
    /* The requests the spider made from this response with dont_filter (scheduled
     * though seen, not through the crawl core's add listeners), nagain of them: a
     * stage that journals the frontier keeps them with the record (--state). */
    crawl_request *const *again;
    size_t nagain;
    struct timespec at; /* the record's fetched_at (CLOCK_REALTIME): the store's
                                 * fetched_at and the WARC-Date, one time for both */
} item;

/* What reaches the pipeline for each item a spider emitted (spider.h), after the
 * record of the response it came from. */
typedef struct spider_item {
    const char *json;       /* the item: one JSON object */
    const request *request; /* the request of the response it came from: url,
                                 * callback (NULL: parse), depth, referrer */
    int seq;                /* its place among that response's items: 0, 1, ... */
    long long items_end;    /* where its line ends in --items, once a stage wrote it
                                 * there (-1: not written) */
    long long record_end;   /* where the record of its response ends in --output (its
                             * item.output_end: which fetch of a URL it is of) */
} spider_item;

typedef struct item_pipeline {
    const char *name;
    void *self;
    bool wants_body;  /* keep response bodies for this stage */
    bool wants_wire;  /* keep the bytes as they went over the wire
                                 * (response->wire: an archive) */
    bool wants_links; /* the page's links in item->links */
    /* open: once, before the first URL; close: once, after the last (also after an
     * interruption), awaited before the report is written. process_item: may set
     * *drop to stop the item here. Same NULL-or-coroutine rule; a coroutine that
     * raises is a fatal error of the crawl (exit 1), said in one line. */
    coro *(*open)(void *self, engine *e);
    coro *(*process_item)(void *self, item *it, bool *drop);
    /* A spider's item (may be NULL: the stage takes none), in the same order of stages
     * and with the same rules as process_item. */
    coro *(*process_spider_item)(void *self, spider_item *it, bool *drop);
    /* NULL, or: a response the engine downloaded for itself and that is no record of
     * the crawl (engine_download of a request marked REQ_ARCHIVE: robots.txt), for the
     * stages that keep what was fetched (--warc, --store). Never waits. */
    void (*process_download)(void *self, const request *req, const response *resp);
    coro *(*close)(void *self);
    void (*free)(void *self);
} item_pipeline;

/* ---- the engine ---- */

/* fr: the crawl's Queue (frontier.h; not owned), where the crawl core puts new links
 * and engine_crawl new requests. NULL for an engine that only downloads. */
engine *engine_new(app *a, frontier *fr);
/* Frees the middlewares and pipeline stages too. */
void engine_free(engine *e);
/* Add at the end of the chain (the engine takes mw / p and frees them). */
void engine_add_middleware(engine *e, const downloader_middleware *mw);
void engine_add_pipeline(engine *e, const item_pipeline *p);
/* The crawl's spider (spider.h; the engine takes s and frees it, and the one it had).
 * Until one is set, the default: spider_default (spider.h), which follows the links. */
void engine_set_spider(engine *e, const spider *s);
/* Add a spider middleware at the end of its chain (the engine takes m). */
void engine_add_spider_middleware(engine *e, const spider_middleware *m);
/* Every record of the crawl says these fields too (report.h's FETCH_STAT_DEPTH,
 * _REFERRER, _REQUISITE: --format jsonl), from the request of its URL. */
void engine_record_fields(engine *e, unsigned fields);
/* A seeding coroutine (seeds/: start URLs from elsewhere than the roots), awaited by
 * engine_seed after the ones added before it. */
void engine_add_seeds(engine *e, coro *(*seed)(engine *e));
bool engine_has_seeds(const engine *e);
/* Coroutine: await each seeding coroutine in turn (the Crawler awaits it while its
 * workers crawl, before join). */
coro *engine_seed(engine *e);
/* The names of the chain, for logs and tests: the i-th downloader middleware, the i-th
 * pipeline stage, NULL past the last. */
const char *engine_middleware_name(const engine *e, size_t i);
const char *engine_pipeline_name(const engine *e, size_t i);
const char *engine_spider_middleware_name(const engine *e, size_t i);
const char *engine_spider_name(const engine *e);
/* Coroutine: the spider's start requests (its start_requests, or the roots), through
 * process_start_requests in reverse order, then engine_crawl — when the spider has
 * start_requests or a middleware has process_start_requests (engine_has_start_requests);
 * else the Crawler adds the roots itself, as the chapter does. */
bool engine_has_start_requests(const engine *e);
coro *engine_start_requests(engine *e);
/* No middleware, no pipeline stage, no spider middleware and the default spider: the
 * Crawler awaits the chapter's fetch itself. */
bool engine_plain(const engine *e);
app *engine_app(engine *e);

/* Coroutines for the Crawler: open the pipeline; handle one URL from the Queue (the
 * life above; never raises but CancelledError); close the pipeline.
 *
 * Parking: a process_request that must wait for something slow (robots.txt dripping
 * one byte a second) need not hold the worker. It copies the request, answers
 * mw_park, and engine_handle returns ENGINE_PARKED at once: no record, and the Crawler
 * does not call the Queue's task_done — the URL stays unfinished, so join waits for
 * it. When the wait is over the middleware calls engine_unpark: the URL goes back in
 * the Queue as itself (its next visit makes its record), then task_done is called for
 * the visit that parked it, in that order so join never sees zero between.
 * engine_can_park says whether the Crawler's Queue allows it (not the Redis frontier,
 * whose put drops a URL the crawl has seen); when not, the middleware returns a
 * coroutine that waits, as any other. */
/* engine_handle's result (value.n) for a parked URL */
#define ENGINE_PARKED 1
coro *engine_open(engine *e);
/* fn(ctx) once engine_open has opened every stage (the robots.txt middleware starts
 * the downloads it lined up before then). One; a later call replaces it. */
void engine_on_open(engine *e, void (*fn)(void *ctx), void *ctx);
coro *engine_handle(engine *e, const crawl_request *r);
coro *engine_close(engine *e);
/* The crawl's Queue. When it is polite (frontier_hosts: it offers what it learns of a
 * host, as robots.txt's Crawl-delay), the download makes one try — retries go back
 * through the Queue (polite.h). */
frontier *engine_frontier(engine *e);
/* URLs waiting in the Queue, for a seeder's back-pressure (seeds/sitemaps.c). */
size_t engine_backlog(const engine *e);
/* Whether a pipeline stage failed, or the write of a record to --output (the crawl
 * then stops at once and ends with exit 1; a worker acknowledges nothing after it). */
bool engine_failed(const engine *e);

/* Scrapy's engine.crawl: schedule req through the Queue (unless seen, or not allowed
 * by the host policy; REQ_DONT_FILTER skips both checks). Takes req. Returns whether
 * it was scheduled. */
bool engine_crawl(engine *e, request *req);
/* The Crawler's task_done(ctx, url), for engine_unpark (ctx: engine_new's): set when
 * its Queue can take a parked URL back. */
void engine_set_task_done(engine *e, void (*task_done)(void *ctx, const char *url));
bool engine_can_park(const engine *e);
/* Hand back a request a middleware parked (see Parking above). Takes req. */
void engine_unpark(engine *e, request *req);
/* Scrapy's engine.download: a Task (a Future) that downloads req — up to --max-tries
 * attempts (one with REQ_ONE_TRY), no redirect followed — and resolves to the response
 * (response *, the awaiter's to free) or fails with the last error. Takes req. Free the
 * task (task_free) once its result is read. */
task *engine_download(engine *e, request *req);
/* The same download as a coroutine, for a coroutine to AWAIT itself (no Task to free):
 * returns the response (response *, the awaiter's to free) or raises. Takes req. */
coro *engine_fetch(engine *e, request *req);

#endif
