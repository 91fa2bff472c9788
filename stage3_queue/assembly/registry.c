/* registry.c — crawl-queue's extensions, one row each, and their assembly (registry.h).
 * To add one: its file (in downloadermw/, pipelines/, frontier/ or seeds/), its row
 * below with an order number and an "enabled" predicate, its flag (docs/extensions.md
 * shows a whole example). */
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "depth.h"
#include "extract.h"
#include "headers.h"
#include "items.h"
#include "luaspider.h"
#include "hostqueue.h"
#include "log.h"
#include "polite.h"
#include "recrawl.h"
#include "redisqueue.h"
#include "referrer.h"
#include "requisites.h"
#include "robotstxt.h"
#include "scope.h"
#include "settings.h"
#include "sitemaps.h"
#include "state.h"
#include "store.h"
#include "warc.h"

/* ---- when each is enabled ---- */

static bool on_frontier(const app *a)
{
    return settings_of(a)->frontier != NULL;
}
static bool on_polite(const app *a)
{
    return settings_of(a)->polite;
}
static bool on_robots(const app *a)
{
    return !settings_of(a)->ignore_robots;
}
static bool on_headers(const app *a)
{
    return settings_of(a)->header.n > 0;
}
/* The Redis Queue keeps politeness in Redis: the middleware is for the polite Queue. */
static bool on_polite_mw(const app *a)
{
    return settings_of(a)->polite && !settings_of(a)->frontier;
}
static bool on_state(const app *a)
{
    return settings_of(a)->state != NULL;
}
static bool on_store(const app *a)
{
    return settings_of(a)->store != NULL;
}
static bool on_warc(const app *a)
{
    return settings_of(a)->warc != NULL;
}
static bool on_recrawl(const app *a)
{
    return settings_of(a)->recrawl != NULL;
}
static bool on_sitemaps(const app *a)
{
    return settings_of(a)->sitemaps;
}
static bool on_depth(const app *a)
{
    return settings_of(a)->depth;
}
static bool on_referrer(const app *a)
{
    return settings_of(a)->referrer;
}
static bool on_include(const app *a)
{
    return settings_of(a)->include.n > 0;
}
static bool on_requisites(const app *a)
{
    return settings_of(a)->requisites;
}
static bool on_spider(const app *a)
{
    return settings_of(a)->spider != NULL;
}
static bool on_extract(const app *a)
{
    return settings_of(a)->extract.n > 0;
}
static bool on_items(const app *a)
{
    return settings_of(a)->items != NULL;
}

/* ---- how each is made ---- */

/* --frontier redis://...: the Queue on Redis, politeness across processes in Redis. */
/* What makes the processes of a --frontier crawl one crawl: what --state keeps
 * (crawl_identity), and what the engine and the shared politeness change. */
static char *frontier_identity(const crawl_options *o, const settings *s)
{
    char *base = crawl_identity(o);
    char *id = xasprintf("%signore_robots %d\nper_host %d\ndelay %g\nrandom_delay %d\n", base,
                         s->ignore_robots, s->per_host, s->delay, s->random_delay);
    free(base);
    return id;
}

static int make_redis(app *a, frontier *out, char *err, size_t errlen)
{
    const settings *o = settings_of(a);
    char why[1024];
    char *id = frontier_identity(&a->opt, o);
    rqueue *rq =
        rqueue_new(a->loop, o->frontier, id, o->claim_after, a->opt.fetched_by, why, sizeof why);
    free(id);
    if (!rq) {
        snprintf(err, errlen, "--frontier: %s", why);
        return -1;
    }
    rqueue_politeness(rq, o->per_host, o->delay, o->random_delay);
    *out = rqueue_frontier(rq);
    return 0;
}

/* Politeness (the default, not --chapter): the polite Queue (a FIFO per host). */
static int make_polite(app *a, frontier *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const settings *o = settings_of(a);
    hostqueue_config cfg = {.per_host = o->per_host,
                            .per_ip = o->per_ip,
                            .delay = o->delay,
                            .random_delay = o->random_delay,
                            .max_crawl_delay = o->max_crawl_delay,
                            .autothrottle = o->autothrottle,
                            .target_concurrency = o->target_concurrency,
                            .max_delay = o->delay > 60 ? o->delay : 60};
    *out = hostqueue_frontier(a->loop, a->dns, &cfg);
    return 0;
}

/* The chapter's Queue. */
static int make_queue(app *a, frontier *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *out = queue_frontier(a->loop);
    return 0;
}

static downloader_middleware make_robots(engine *e)
{
    return robotstxt_middleware(e, engine_app(e)->opt.user_agent);
}

/* --header "Name: value", each field checked by the command line. */
static downloader_middleware make_headers(engine *e)
{
    const settings *s = settings_of(engine_app(e));
    return headers_middleware(s->header.v, s->header.n);
}

/* The archive as the command line gave it. */
static warc_config warc_settings(const settings *s)
{
    return (warc_config){.path = s->warc_base, /* rotated: the names derive from it */
                         .cdx_path = s->cdx,
                         .max_size = s->warc_max_size,
                         .resume = s->resume,
                         .ignore_robots = s->ignore_robots};
}

/* --state: every URL scheduled and every one done, in the file; with --resume, the URLs
 * an earlier run left go back into the Queue first. */
static int make_state(engine *e, item_pipeline *out, char *err, size_t errlen)
{
    app *a = engine_app(e);
    const settings *s = settings_of(a);
    warc_config w = warc_settings(s);
    state_config cfg = {
        .path = s->state, .resume = s->resume, .warc = s->warc ? &w : NULL, .items = s->items};
    *out = state_pipeline(a, s->state);
    crawl_add_add_listener(a->crawl, state_frontier_add, out->self);
    if (state_restore(a, &cfg, frontier_add, engine_frontier(e), err, errlen) < 0) {
        crawl_remove_listeners(a->crawl, out->self);
        if (out->free)
            out->free(out->self);
        return -1;
    }
    return 0;
}

static int make_store(engine *e, item_pipeline *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const settings *s = settings_of(engine_app(e));
    *out = store_pipeline(s->store);
    out->wants_links = s->referrer; /* the links table */
    return 0;
}

static int make_warc(engine *e, item_pipeline *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    warc_config cfg = warc_settings(settings_of(engine_app(e)));
    *out = warc_pipeline(&cfg);
    return 0;
}

/* --recrawl OLD.db: its pages are asked for with a condition. */
static downloader_middleware make_recrawl(engine *e)
{
    return recrawl_middleware(e, settings_of(engine_app(e))->recrawl);
}

/* --sitemaps: seeds from each root's host's sitemaps. */
static coro *seed_sitemaps(engine *e)
{
    return sitemaps_seed(e, settings_of(engine_app(e))->ignore_robots);
}

static int make_depth(engine *e, spider_middleware *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *out = depth_middleware(e, settings_of(engine_app(e))->max_depth);
    return 0;
}

/* --include: every pattern compiles (the command line has checked them), or the crawl
 * does not start — a pattern skipped would widen the scope. */
static int make_scope(engine *e, spider_middleware *out, char *err, size_t errlen)
{
    const settings *s = settings_of(engine_app(e));
    return scope_middleware(s->include.v, s->include.n, out, err, errlen);
}

static int make_referrer(engine *e, spider_middleware *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *out = referrer_middleware(e);
    return 0;
}

static int make_requisites(engine *e, spider_middleware *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *out = requisites_middleware(e);
    return 0;
}

/* --spider FILE.lua: the spider the command line's checks loaded (settings.c). */
static int make_lua(engine *e, spider *out, char *err, size_t errlen)
{
    lua_spider *ls = lua_spider_take();
    if (!ls) {
        snprintf(err, errlen, "--spider '%s' was not loaded", settings_of(engine_app(e))->spider);
        return -1;
    }
    *out = lua_spider_spider(ls, e);
    return 0;
}

static int make_extract(engine *e, spider *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const settings *s = settings_of(engine_app(e));
    *out = extract_spider(s->extract.v, s->extract.n);
    return 0;
}

/* --items FILE: first, so that the stages after it know where each item's line ends. */
static int make_items(engine *e, item_pipeline *out, char *err, size_t errlen)
{
    app *a = engine_app(e);
    const settings *s = settings_of(a);
    return items_pipeline(a, s->items, s->resume, s->state, out, err, errlen);
}

/* ---- the table ---- */

const extension registry[] = {
    /* Queues: the first enabled wins. */
    {"redis", EXT_FRONTIER, 100, on_frontier, .make_frontier = make_redis},
    {"polite", EXT_FRONTIER, 200, on_polite, .make_frontier = make_polite},
    {"queue", EXT_FRONTIER, 1000, NULL, .make_frontier = make_queue},
    /* Downloader middlewares: politeness last, so that its process_response (the retry
     * and back-off decisions) sees the download first. */
    {"robots.txt", EXT_DOWNLOADER_MW, 100, on_robots, .make_middleware = make_robots},
    {"headers", EXT_DOWNLOADER_MW, 550, on_headers, .make_middleware = make_headers},
    /* --recrawl: after --header, whose If-None-Match would be the user's own. */
    {"recrawl", EXT_DOWNLOADER_MW, 560, on_recrawl, .make_middleware = make_recrawl},
    {"politeness", EXT_DOWNLOADER_MW, 900, on_polite_mw, .make_middleware = polite_middleware},
    {"referer", EXT_DOWNLOADER_MW, 560, on_referrer, .make_middleware = referer_header_middleware},
    /* Item pipelines: --items before all (where each item's line ends), then --state
     * (its frontier rows before the pages' rows). */
    {"items", EXT_PIPELINE, 50, on_items, .make_pipeline = make_items},
    {"state", EXT_PIPELINE, 100, on_state, .make_pipeline = make_state},
    {"store", EXT_PIPELINE, 300, on_store, .make_pipeline = make_store},
    {"warc", EXT_PIPELINE, 500, on_warc, .make_pipeline = make_warc},
    /* Seeds. */
    {"sitemaps", EXT_SEEDS, 100, on_sitemaps, .seed = seed_sitemaps},
    /* Spider middlewares, at Scrapy's numbers: process_spider_output runs from
     * requisites (adds them, and takes the links that are requisites too out of the
     * links), through depth (drops the deep links, counted), down to scope (filters
     * the links, not the requisites). */
    {"scope", EXT_SPIDER_MW, 500, on_include, .make_spider_middleware = make_scope},
    {"referrer", EXT_SPIDER_MW, 700, on_referrer, .make_spider_middleware = make_referrer},
    {"depth", EXT_SPIDER_MW, 900, on_depth, .make_spider_middleware = make_depth},
    {"requisites", EXT_SPIDER_MW, 950, on_requisites, .make_spider_middleware = make_requisites},
    /* Spiders: the first enabled is the crawl's (none: the default, spider.h). */
    {"lua", EXT_SPIDER, 100, on_spider, .make_spider = make_lua},
    {"extract", EXT_SPIDER, 200, on_extract, .make_spider = make_extract},
};
const size_t registry_size = sizeof registry / sizeof registry[0];

/* ---- assembly ---- */

/* The enabled rows of kind, by order (table order among equals). */
static size_t enabled_rows(const app *a, const extension *rows, size_t n, ext_kind kind,
                           const extension **out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].kind != kind || (rows[i].enabled && !rows[i].enabled(a)))
            continue;
        size_t j = k++;
        for (; j > 0 && out[j - 1]->order > rows[i].order; j--) /* insertion: stable */
            out[j] = out[j - 1];
        out[j] = &rows[i];
    }
    return k;
}

int registry_assemble(app *a, const extension *rows, size_t n, frontier *fr, engine **e, char *err,
                      size_t errlen)
{
    const extension **on = xcalloc(n ? n : 1, sizeof *on);
    *e = NULL;
    *fr = (frontier){NULL, NULL};
    if (enabled_rows(a, rows, n, EXT_FRONTIER, on) == 0) {
        snprintf(err, errlen, "no Queue (frontier) is enabled");
        goto fail;
    }
    if (on[0]->make_frontier(a, fr, err, errlen) < 0)
        goto fail;
    log_debug("registry: the Queue is %s", on[0]->name);
    *e = engine_new(a, fr);
    size_t k = enabled_rows(a, rows, n, EXT_DOWNLOADER_MW, on);
    for (size_t i = 0; i < k; i++) {
        downloader_middleware mw = on[i]->make_middleware(*e);
        engine_add_middleware(*e, &mw);
        log_debug("registry: downloader middleware %d %s", on[i]->order, on[i]->name);
    }
    k = enabled_rows(a, rows, n, EXT_PIPELINE, on);
    for (size_t i = 0; i < k; i++) {
        item_pipeline p;
        if (on[i]->make_pipeline(*e, &p, err, errlen) < 0)
            goto fail;
        engine_add_pipeline(*e, &p);
        log_debug("registry: item pipeline %d %s", on[i]->order, on[i]->name);
    }
    k = enabled_rows(a, rows, n, EXT_SPIDER_MW, on);
    for (size_t i = 0; i < k; i++) {
        spider_middleware m;
        if (on[i]->make_spider_middleware(*e, &m, err, errlen) < 0)
            goto fail;
        engine_add_spider_middleware(*e, &m);
        log_debug("registry: spider middleware %d %s", on[i]->order, on[i]->name);
    }
    if (enabled_rows(a, rows, n, EXT_SPIDER, on) > 0) {
        spider sp;
        if (on[0]->make_spider(*e, &sp, err, errlen) < 0)
            goto fail;
        engine_set_spider(*e, &sp);
        log_debug("registry: the spider is %s", on[0]->name);
    }
    k = enabled_rows(a, rows, n, EXT_SEEDS, on);
    for (size_t i = 0; i < k; i++) {
        engine_add_seeds(*e, on[i]->seed);
        log_debug("registry: seeds %d %s", on[i]->order, on[i]->name);
    }
    free(on);
    return 0;
fail:
    free(on);
    engine_free(*e);
    *e = NULL;
    frontier_free(fr);
    return -1;
}
