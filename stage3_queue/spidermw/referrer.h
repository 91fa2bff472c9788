/* referrer.h — the referrer spider middleware, the spider half of Scrapy's
 * RefererMiddleware (the Referer header it sends is downloadermw/referer.h): every
 * record says "referrer" (the page where its URL was first found, null for a root); a
 * request a spider emits without one gets the response's URL.
 *
 * With --store, the store's links table holds every page's links (from, to): "which
 * pages link to X" is one query (docs/storage.md). crawl-queue enables both halves
 * unless --chapter (their descriptors).
 */
#ifndef CRAWL_REFERRER_H
#define CRAWL_REFERRER_H

#include "engine.h"

spider_middleware referrer_middleware(engine *e);

#endif
