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
 * A sitemap file is downloaded only where a page could be (docs/politeness.md#sitemaps):
 *   - an index lists sitemaps of its own origin (sitemaps.org); others are left out;
 *   - a robots.txt Sitemap line may name another host only if the host policy and
 *     --exclude allow a page there; so must every sitemap URL;
 *   - the robots.txt of the sitemap's origin must allow its path (read once per
 *     origin, its redirects followed ROBOTSTXT_MAX_REDIRECTS deep; a 5xx or no answer:
 *     no sitemap read there; a 4xx: all allowed), unless --ignore-robots; a sitemap's
 *     own redirect is not followed;
 *   - with politeness on, each download takes a start on its host (hostqueue_claim):
 *     the host's delay and cap of requests in flight hold for it as for a page.
 *
 * Bounds. Each file (robots.txt too) gets one try, whatever --max-tries; after
 * SITEMAPS_MAX_FAILURES downloads of an origin got no answer (timeouts, refusals),
 * its other sitemaps are left unread: a host whose sitemaps time out costs at most
 * SITEMAPS_MAX_FAILURES x --timeout. The seeder feeds the parser FEED_CHUNK bytes at a
 * time and pauses while the Crawler's Queue holds more than SITEMAPS_BACKLOG URLs
 * (engine_backlog), so a million URLs in sitemaps never sit in memory at once; once
 * --max-pages URLs are scheduled, nothing more is read.
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

#define SITEMAPS_MAX_NESTING  3     /* robots.txt or /sitemap.xml -> index -> index */
#define SITEMAPS_MAX_FILES    100   /* sitemap files read per origin */
#define SITEMAPS_MAX_FAILURES 3     /* downloads of an origin without an answer */
#define SITEMAPS_BACKLOG      10000 /* URLs in the Queue above which seeding waits */

/* The seeding coroutine for engine_add_seeds; ignore_robots: no robots.txt rule checked
 * (robots.txt is still read for its Sitemap lines). */
coro *sitemaps_seed(engine *e, bool ignore_robots);

#endif
