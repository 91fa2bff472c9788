/* referrer.h — the referrer middlewares: Scrapy's RefererMiddleware on stage 3's
 * engine, in two parts.
 *
 *   spider middleware      every record says "referrer" (the page where its URL was
 *                          first found, null for a root); a request a spider emits
 *                          without one gets the response's URL
 *   downloader middleware  each request sends "Referer: <its referrer>", by the
 *                          default policy of browsers and Scrapy,
 *                          no-referrer-when-downgrade: nothing from an https page to
 *                          an http URL
 *
 * With --store, the store's links table holds every page's links (from, to): "which
 * pages link to X" is one query (docs/storage.md). crawl-queue enables all three
 * unless --chapter (its rows in assembly/registry.c).
 */
#ifndef CRAWL_REFERRER_H
#define CRAWL_REFERRER_H

#include "engine.h"

spider_middleware referrer_middleware(engine *e);
downloader_middleware referer_header_middleware(engine *e);

#endif
