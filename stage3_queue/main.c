/* main.c — crawl-queue: the Crawler (crawler.c) with the engine its options ask for. */
#include "crawler.h"
#include "engine.h"
#include "headers.h"
#include "robotstxt.h"
#include "store.h"
#include "warc.h"

/* The engine of this run: robots.txt is obeyed unless --ignore-robots, --header adds
 * header fields to every request, --state keeps the frontier, --store adds the SQLite
 * pipeline stage, --warc the WARC archive (with none, this is the chapter's crawler). */
static engine *make_engine(app *a, crawl_add_fn put, void *ctx)
{
    engine *e = engine_new(a, put, ctx);
    if (!a->opt.ignore_robots) {
        downloader_middleware mw = robotstxt_middleware(e, a->opt.user_agent);
        engine_add_middleware(e, &mw);
    }
    if (a->opt.nheaders) {      /* --header */
        downloader_middleware mw = headers_middleware(a->opt.headers, (size_t)a->opt.nheaders);
        engine_add_middleware(e, &mw);
    }
    if (a->opt.state) {         /* the frontier: every URL scheduled, every one done */
        item_pipeline p = state_pipeline(a, a->opt.state);
        crawl_add_add_listener(a->crawl, store_frontier_add, p.self);
        engine_add_pipeline(e, &p);
    }
    if (a->opt.store) {
        item_pipeline p = store_pipeline(a->opt.store);
        engine_add_pipeline(e, &p);
    }
    if (a->opt.warc) {
        item_pipeline p = warc_pipeline(a->opt.warc, a->opt.cdx);
        engine_add_pipeline(e, &p);
    }
    return e;
}

static int crawl_queue(app *a)
{
    return crawler_run(a, make_engine);
}

int main(int argc, char **argv)
{
    return app_main(argc, argv, "crawl-queue", "queue", "curl", crawl_queue);
}
