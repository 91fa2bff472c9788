/* main.c — crawl-queue: the Crawler (crawler.c) with the extensions its options enable
 * (engine/registry.c: with none, this is the chapter's crawler). */
#include "crawler.h"
#include "registry.h"

static int crawl_queue(app *a)
{
    return crawler_run(a, registry, registry_size);
}

int main(int argc, char **argv)
{
    return app_main(argc, argv, "crawl-queue", "queue", "curl", crawl_queue);
}
