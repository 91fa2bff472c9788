/* registry.h — every extension of crawl-queue in one table, and the one place where the
 * crawl's Queue and engine are assembled from it, after Scrapy's DOWNLOADER_MIDDLEWARES,
 * ITEM_PIPELINES and SCHEDULER settings (docs/extensions.md).
 *
 * A row names an extension: its kind, its order number, when it is enabled (a predicate
 * on the options; NULL: always) and how it is made (the maker of its kind). Assembly:
 *
 *   frontier             the enabled row with the lowest order is the crawl's Queue
 *   downloader mw        in ascending order: process_request runs lowest first,
 *                        process_response and process_exception highest first
 *   item pipeline        in ascending order: process_item lowest first
 *   seeds                in ascending order: the Crawler awaits each seeding coroutine
 *                        in turn while its workers crawl (engine_seed)
 *   spider middleware    in ascending order: process_spider_input lowest first,
 *                        process_spider_output, process_spider_exception and
 *                        process_start_requests highest first (spider.h)
 *   spider               the enabled row with the lowest order is the crawl's spider
 *
 * Rows of one kind with the same order keep their table order.
 */
#ifndef CRAWL_REGISTRY_H
#define CRAWL_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"
#include "engine.h"
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
    bool (*enabled)(const app *a);
    /* How it is made: the one of its kind. 0, or -1 with one line in err. */
    int (*make_frontier)(app *a, frontier *out, char *err, size_t errlen);
    downloader_middleware (*make_middleware)(engine *e);
    int (*make_pipeline)(engine *e, item_pipeline *out, char *err, size_t errlen);
    coro *(*seed)(engine *e);
    int (*make_spider_middleware)(engine *e, spider_middleware *out, char *err, size_t errlen);
    int (*make_spider)(engine *e, spider *out, char *err, size_t errlen);
} extension;

/* crawl-queue's extensions. */
extern const extension registry[];
extern const size_t registry_size;

/* Make the Queue (*fr) and the engine (*e) of a's run from rows. 0, or -1 with one line
 * in err (nothing is left made). */
int registry_assemble(app *a, const extension *rows, size_t n, frontier *fr, engine **e, char *err,
                      size_t errlen);

#endif
