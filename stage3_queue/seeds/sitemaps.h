/* sitemaps.h — --sitemaps: seed the crawl from each root host's sitemaps.
 *
 * For each root's origin, one after the other: its robots.txt's Sitemap lines and
 * /sitemap.xml are downloaded (engine_fetch: no record), each through the
 * streaming parser of common/web/sitemap_parser.h (libxml2's push parser; gzip inflated on
 * the way; the protocol's 50,000 URLs and 50 MB per file; nothing expanded); every
 * URL it lists goes through engine_crawl — the host policy, the seen set and
 * --max-pages decide, as for a link — and every sitemap an index lists is read in
 * turn, SITEMAPS_MAX_NESTING levels deep and SITEMAPS_MAX_FILES files per origin at
 * most. A sitemap that fails (no answer, not 200, not a sitemap) is a -v line, never
 * the crawl's end.
 *
 * The Crawler awaits this coroutine after starting its workers and before join, so
 * the workers crawl what is found while the seeding goes on, and join cannot end the
 * crawl before the last sitemap is read.
 *
 * A body is held whole while it is parsed, so memory per sitemap is bounded by
 * --max-size (16 MiB by default) plus the parser's own bound, not by the file.
 */
#ifndef CRAWL_SITEMAPS_H
#define CRAWL_SITEMAPS_H

#include "engine.h"

#define SITEMAPS_MAX_NESTING 3    /* robots.txt or /sitemap.xml -> index -> index */
#define SITEMAPS_MAX_FILES 100    /* sitemap files read per origin */

coro *sitemaps_seed(engine *e);

#endif
