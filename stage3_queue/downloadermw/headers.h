/* headers.h — the default-headers downloader middleware: Scrapy's
 * DefaultHeadersMiddleware on stage 3's engine. Every request the crawl sends — its
 * pages, and the engine's own downloads (robots.txt, sitemaps: it sees all_requests)
 * — gets each of the given header fields it does not have yet.
 *
 * crawl-queue enables it with --header "Name: value" (repeatable; its descriptor, in
 * headers.c). The command line checks each field (http_field_check); what a field may replace is in
 * docs/extensions.md.
 */
#ifndef CRAWL_HEADERS_H
#define CRAWL_HEADERS_H

#include <stddef.h>

#include "engine.h"

/* The middleware, for engine_add_middleware (which then owns it). fields: n checked
 * "Name: value" strings (copied). */
downloader_middleware headers_middleware(const char *const *fields, size_t n);

#endif
