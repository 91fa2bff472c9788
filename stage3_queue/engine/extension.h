/* extension.h — how an extension of crawl-queue describes itself, beside its code, as
 * Scrapy's components do with from_crawler and NotConfigured: its name, its kind, its
 * order number, when it is on (from the settings, engine_settings.h), how it is made
 * from them, and the flags of its own. The registry (assembly/registry.c) is the list
 * of these descriptors, and the one place where the crawl's Queue and engine are
 * assembled from them (docs/extensions.md):
 *
 *   frontier             the enabled descriptor with the lowest order is the Queue
 *   downloader mw        in ascending order: process_request runs lowest first,
 *                        process_response and process_exception highest first
 *   item pipeline        in ascending order: process_item lowest first
 *   seeds                in ascending order: the Crawler awaits each seeding coroutine
 *                        in turn while its workers crawl (engine_seed)
 *   spider middleware    in ascending order: process_spider_input lowest first,
 *                        process_spider_output, process_spider_exception and
 *                        process_start_requests highest first (spider.h)
 *   spider               the enabled descriptor with the lowest order is the spider
 *
 * Orders are unique within a kind (a test checks crawl-queue's).
 */
#ifndef CRAWL_EXTENSION_H
#define CRAWL_EXTENSION_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "engine.h"
#include "engine_settings.h"
#include "frontier.h"

typedef enum {
    EXT_FRONTIER,
    EXT_DOWNLOADER_MW,
    EXT_PIPELINE,
    EXT_SEEDS,
    EXT_SPIDER_MW,
    EXT_SPIDER
} ext_kind;

typedef struct extension {
    const char *name;
    ext_kind kind;
    int order;
    /* When it is on (NULL: always): Scrapy's NotConfigured, asked before anything is
     * made. */
    bool (*enabled)(const settings *s);
    /* How it is made, from the settings: the one of its kind. 0, or -1 with one line in
     * err. */
    int (*make_frontier)(app *a, const settings *s, frontier *out, char *err, size_t errlen);
    int (*make_middleware)(engine *e, const settings *s, downloader_middleware *out, char *err,
                           size_t errlen);
    int (*make_pipeline)(engine *e, const settings *s, item_pipeline *out, char *err,
                         size_t errlen);
    coro *(*seed)(engine *e); /* the seeding coroutine engine_seed awaits */
    int (*make_spider_middleware)(engine *e, const settings *s, spider_middleware *out, char *err,
                                  size_t errlen);
    int (*make_spider)(engine *e, const settings *s, spider *out, char *err, size_t errlen);
    /* Its own flags (NULL: none): rows whose offsets are into opts, a struct of
     * opts_size bytes that its enabled and makers read (the command line zeroes it,
     * then calls opts_defaults, before parsing). */
    const cli_flag *flags;
    void *opts;
    size_t opts_size;
    void (*opts_defaults)(void *opts);
} extension;

#endif
