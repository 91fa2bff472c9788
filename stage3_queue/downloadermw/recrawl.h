/* recrawl.h — the conditional-recrawl downloader middleware: --recrawl OLD.db, where
 * OLD.db is a database an earlier crawl's --store wrote (docs/recrawl.md).
 *
 * Each URL whose page OLD.db holds (its last row with status 200, or 304 from an
 * earlier recrawl, and no exception) is requested with If-None-Match (the stored ETag)
 * and/or If-Modified-Since (the stored Last-Modified), as Scrapy's HttpCacheMiddleware
 * revalidates with RFC2616Policy. A URL with neither stored, or not in OLD.db, is
 * fetched as usual; so is one whose server ignores the conditions (a 200).
 *
 * A 304 answer becomes the stored page: process_response reads that row in the thread
 * pool and answers a Response with status 304, not_modified set, the stored headers
 * updated by the 304's (RFC 9111, 4.3.4), the stored body and the 304's wire bytes.
 * The crawl core then parses that body's links as a 200's (crawl_fetch_not_modified),
 * the record says "not_modified": true, the store keeps the page (a copy), and the
 * WARC writes a revisit record (profile server-not-modified).
 */
#ifndef CRAWL_RECRAWL_H
#define CRAWL_RECRAWL_H

#include <stddef.h>

#include "engine.h"

/* The middleware for engine_add_middleware (which then owns it), reading the known
 * pages of old_path (--recrawl OLD.db) now, on the loop thread, before the crawl starts. */
downloader_middleware recrawl_middleware(engine *e, const char *old_path);

#endif
