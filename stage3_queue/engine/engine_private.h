/* engine_private.h — what the engine's files share, and nothing outside engine/ sees:
 * the engine itself, one URL's way through it, and the managers it hands that URL to,
 * as Scrapy's engine hands a request to its downloader middleware manager, its scraper
 * and its item pipeline manager:
 *
 *   engine.c        the engine: made and assembled, engine_crawl (through the Queue),
 *                   engine_download, the record of each URL, and engine_handle — the
 *                   managers' calls in order (scrapy/core/engine.py)
 *   middleware.c    the downloader middleware manager: process_request in order, the
 *                   download, process_exception and process_response in reverse
 *                   (scrapy/core/downloader/middleware.py)
 *   scraper.c       the scraper: the spider between its middlewares' process_spider_input,
 *                   _exception and _output; the start requests (scrapy/core/scraper.py,
 *                   spidermw.py)
 *   itempipeline.c  the item pipeline manager: open, process_item in order, close
 *                   (scrapy/pipelines/__init__.py)
 */
#ifndef CRAWL_ENGINE_PRIVATE_H
#define CRAWL_ENGINE_PRIVATE_H

#include "engine.h"

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
    bool keep_bodies;           /* a pipeline stage wants bodies */
    bool keep_wire;             /* a pipeline stage wants the wire bytes (--warc) */
    bool keep_links;            /* a pipeline stage wants the page's links */
    item *capture;              /* the item whose record the crawl core is making */
    const request *recording;   /* and its request (for the record's own fields) */
    unsigned fields;            /* the record's own fields (engine_record_fields) */
    bool failed;                /* a pipeline stage raised */
    void (*on_open)(void *ctx); /* engine_on_open's, once every stage is open */
    void *on_open_ctx;
    spider sp; /* the crawl's spider (spider.h) */
    spider_middleware *smw;
    size_t nsmw;
};

/* One URL from the Queue, on its way through the managers: what engine_handle's frame
 * holds (and frees), and each manager reads and writes. */
typedef struct url_life {
    engine *e;
    request *req;
    mw_result res;      /* the last middleware's answer */
    char *error;        /* the download's error */
    crawl_fetch *fetch; /* the downloaded page in the crawl core, until recorded */
    bool truncated;
    response *resp;
    item it;            /* what the item pipeline gets: the record, once made */
    spider_response sr; /* what the spider is given */
    spider_outputs out; /* what it (and its middlewares) made */
    int nitems;         /* the spider's items handed to the pipeline so far */
    crawl_link *links;  /* the page's links, for the pipeline (keep_links) */
    size_t nlinks;
    crawl_request **again; /* its dont_filter requests, for the pipeline (item.again) */
    size_t nagain;
} url_life;

/* ---- the downloader middleware manager (middleware.c) ---- */

/* How the downloader middlewares and the download left a URL (the value.n of
 * middleware_download). */
typedef enum {
    URL_RESPONSE, /* u->resp: downloaded, or a middleware's, for the spider */
    URL_FAILED,   /* the download failed and no middleware recovered: u->error */
    URL_SETTLED,  /* a middleware answered a Request or IgnoreRequest (u->res) */
    URL_PARKED,   /* a process_request parked it (engine_unpark brings it back) */
} url_outcome;

/* Coroutine: process_request in order (the first answer other than "go on" wins),
 * the download unless a middleware answered, process_exception in reverse when it
 * failed, process_response in reverse. Returns a url_outcome; raises only a
 * cancellation. */
coro *middleware_download(url_life *u);
/* Coroutine: engine.download's way — the process_request of the middlewares that see
 * all requests, then the download; returns the response or raises. Takes req. */
coro *middleware_fetch(engine *e, request *req);

/* ---- the scraper (scraper.c) ---- */

/* Coroutine: the spider's callback for u->resp (fed to the crawl core already),
 * between its middlewares: what they make is in u->out, a raised error in
 * u->out.error. Raises only a cancellation. */
coro *scraper_scrape(url_life *u);
/* Coroutine: the start requests (engine_start_requests). */
coro *scraper_start_requests(engine *e);

/* ---- the item pipeline manager (itempipeline.c) ---- */

/* Coroutine: open (closing: false) or close every stage, in order. */
coro *itempipeline_open_close(engine *e, bool closing);
/* Coroutine: the spider's items of u, each through the stages in order until one
 * drops it, then u's record the same way. A stage that raises stops the crawl. */
coro *itempipeline_process(url_life *u);
/* A download of the engine's own that is kept (REQ_ARCHIVE): to each stage that keeps
 * such downloads. */
void itempipeline_download(engine *e, const request *req, const response *r);

#endif
