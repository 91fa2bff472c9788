/* main.c — crawl-queue: the Crawler (crawler.c) with the engine its options ask for. */
#include "crawler.h"
#include "engine.h"
#include "polite.h"
#include "robotstxt.h"
#include "store.h"
#include "warc.h"

/* The engine of this run: robots.txt is obeyed unless --ignore-robots, --state keeps
 * the frontier, --store adds the SQLite pipeline stage, --warc the WARC archive (with
 * none, this is the chapter's crawler). */
static engine *make_engine(app *a, frontier *q)
{
    engine *e = engine_new(a, q);
    if (!a->opt.ignore_robots) {
        downloader_middleware mw = robotstxt_middleware(e, a->opt.user_agent);
        engine_add_middleware(e, &mw);
    }
    if (a->opt.polite && !a->opt.frontier) {   /* last: its process_response runs first */
        downloader_middleware mw = polite_middleware(e);
        engine_add_middleware(e, &mw);
    }
    if (a->opt.state) {         /* the frontier: every URL scheduled, every one done */
        item_pipeline p = state_pipeline(a, a->opt.state);
        crawl_set_add_hook(a->crawl, store_frontier_add, p.self);
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
