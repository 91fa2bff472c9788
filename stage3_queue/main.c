/* main.c — crawl-queue: the Crawler (crawler.c) with the engine its options ask for. */
#include "crawler.h"
#include "engine.h"
#include "headers.h"
#include "robotstxt.h"
#include "settings.h"
#include "state.h"
#include "store.h"
#include "warc.h"

/* The engine of this run: robots.txt is obeyed unless --ignore-robots, --header adds
 * header fields to every request, --state keeps the frontier, --store adds the SQLite
 * pipeline stage, --warc the WARC archive (with none, this is the chapter's crawler). */
static engine *make_engine(app *a, crawl_add_fn put, void *ctx)
{
    engine *e = engine_new(a, put, ctx);
    const settings *s = settings_of(a);
    if (!s->ignore_robots) {
        downloader_middleware mw = robotstxt_middleware(e, a->opt.user_agent);
        engine_add_middleware(e, &mw);
    }
    if (s->header.n) {          /* --header */
        downloader_middleware mw = headers_middleware(s->header.v, s->header.n);
        engine_add_middleware(e, &mw);
    }
    if (s->state) {             /* the frontier: every URL scheduled, every one done */
        item_pipeline p = state_pipeline(a, s->state);
        crawl_add_add_listener(a->crawl, state_frontier_add, p.self);
        engine_add_pipeline(e, &p);
    }
    if (s->store) {
        item_pipeline p = store_pipeline(s->store);
        engine_add_pipeline(e, &p);
    }
    if (s->warc) {
        item_pipeline p = warc_pipeline(s->warc, s->cdx);
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
    static settings s;          /* its flags, filled by the command line */
    app_stage stage = settings_stage("crawl-queue", &s);
    return app_main(argc, argv, &stage, crawl_queue);
}
