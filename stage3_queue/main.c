/* main.c — crawl-queue: the Crawler (crawler.c) with the engine its options ask for. */
#include "crawler.h"
#include "engine.h"

/* The engine of this run: no middleware or pipeline stage is enabled yet by default,
 * so this is the chapter's crawler. */
static engine *make_engine(app *a, crawl_add_fn put, void *ctx)
{
    return engine_new(a, put, ctx);
}

static int crawl_queue(app *a)
{
    return crawler_run(a, make_engine);
}

int main(int argc, char **argv)
{
    return app_main(argc, argv, "crawl-queue", "queue", "curl", crawl_queue);
}
