/* referer.h — the Referer header, the downloader half of Scrapy's RefererMiddleware
 * (the spider half, which gives each request its referrer, is spidermw/referrer.h):
 * each request sends "Referer: <its referrer>", by the default policy of browsers and
 * Scrapy, no-referrer-when-downgrade — nothing from an https page to an http URL. A
 * request that has a Referer field already (--header) keeps it. crawl-queue enables it
 * unless --chapter (its descriptor, below).
 */
#ifndef CRAWL_REFERER_H
#define CRAWL_REFERER_H

#include "engine.h"

downloader_middleware referer_header_middleware(engine *e);

#endif
