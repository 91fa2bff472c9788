/* main.c — crawl-queue: the Crawler (crawler.c) with the extensions its options enable
 * (assembly/registry.c: with none — --chapter --ignore-robots — this is the chapter's
 * crawler). */
#include "crawler.h"
#include "registry.h"
#include "settings.h"

static int crawl_queue(app *a)
{
    return crawler_run(a, registry, registry_size);
}

int main(int argc, char **argv)
{
    static settings s; /* its flags, filled by the command line */
    app_stage stage = settings_stage("crawl-queue", &s);
    return app_main(argc, argv, &stage, crawl_queue);
}
