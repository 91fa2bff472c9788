/* robotstxt.h — the robots.txt downloader middleware: Scrapy's RobotsTxtMiddleware,
 * as the second source of this project reads it, on stage 3's engine.
 *
 * The first request to an origin (scheme://host:port) starts the one download of its
 * /robots.txt, through engine_download (no record, no middleware but --header's); every
 * request to that origin, the first included, waits on the same Future until the rules
 * are known — one fetch per host however many requests arrive meanwhile. Then each URL
 * is allowed (the chain goes on) or ignored: a record with status null and the
 * exception "IgnoreRequest: forbidden by robots.txt ...".
 *
 * Waiting: a request that finds its origin's rules unknown is parked (engine.h,
 * Parking): a Task of its own waits on the Future and the worker goes on with other
 * URLs; when the rules are known, the request goes back in the Queue. At most
 * --max-tasks robots.txt downloads run at once; the other origins wait in line. A
 * download still running after ROBOTSTXT_SLOW_MS (a server dripping its file, one
 * that never answers) goes on but leaves its place in line to the next origin, up to
 * ROBOTSTXT_SLOW_FACTOR x --max-tasks downloads at once (issue #27 M6: ten dripping
 * files at --max-tasks 10 no longer hold a good host's robots.txt for their
 * --timeout). On the curl transport they run in the glue's side lane (curlglue.h),
 * with as many connections of their own: they never take the pages' connections.
 *
 * Memory: the rules of all origins together are kept under max_bytes (robots_bytes:
 * only our group, each rule once); past it the least recently used origins are
 * dropped, and rules older than max_age too (RFC 9309, 2.4, allows caching for 24
 * hours): the next request to such an origin fetches its robots.txt again. An origin
 * whose requests are parked, or handed back and not seen again yet, keeps its rules
 * until they are answered: the rules of the origins in use at once may pass the bound.
 *
 * What the answer means (RFC 9309, 2.3.1): 2xx, the file's rules for our product
 * token (common/web/robots_parser.h); 3xx, followed (each hop through engine_download), up
 * to ROBOTSTXT_MAX_REDIRECTS; a redirect past those, or 4xx, no rules (everything
 * allowed); 5xx, another status, or no response at all (the --max-tries attempts
 * failed), everything forbidden. No response at all is the host's failure, and the
 * record says so first: "IgnoreRequest: host could not be reached: <libcurl's reason>
 * (fetching URL; RFC 9309: nothing fetched without its robots.txt)"; each such origin is
 * counted in the summary's ROBOTSTXT_UNREACHABLE (crawl_count), which the summary on
 * stderr turns into a line, and --fail-on-broken takes it as a network failure (4).
 *
 * crawl-queue enables it unless --ignore-robots is given (stage3_queue/main.c).
 */
#ifndef CRAWL_ROBOTSTXT_H
#define CRAWL_ROBOTSTXT_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

#define ROBOTSTXT_MAX_REDIRECTS 5
#define ROBOTSTXT_MAX_BYTES     (64u << 20)           /* the rules of all origins */
#define ROBOTSTXT_MAX_AGE_MS    (24ull * 3600 * 1000) /* RFC 9309, 2.4 */
#define ROBOTSTXT_SLOW_MS       1000                  /* a download this old leaves */
#define ROBOTSTXT_SLOW_FACTOR                                                                      \
    4 /* its place in line, up to this
                                                         x --max-tasks downloads */

/* The summary's counter of origins whose robots.txt got no answer at all. */
#define ROBOTSTXT_UNREACHABLE "unreachable_hosts"

/* What the middleware did, for tests and benchmarks. */
typedef struct robotstxt_stats {
    size_t fetches;           /* robots.txt answers settled (each origin's, each time) */
    size_t parked;            /* requests that waited for their origin's rules */
    size_t evictions;         /* origins dropped past max_bytes */
    size_t expiries;          /* origins dropped for their age */
    size_t bytes, peak_bytes; /* the origins' entries and rules now, and at most */
} robotstxt_stats;

typedef struct robotstxt_limits {
    size_t max_bytes;       /* 0: ROBOTSTXT_MAX_BYTES */
    uint64_t max_age_ms;    /* 0: ROBOTSTXT_MAX_AGE_MS */
    robotstxt_stats *stats; /* NULL, or kept up to date here (the caller's) */
} robotstxt_limits;

/* The middleware, for engine_add_middleware (which then owns it). user_agent is
 * --user-agent (NULL: the transports' default): its product token picks the group. */
downloader_middleware robotstxt_middleware(engine *e, const char *user_agent);
/* The same with limits of its own (lim may be NULL). */
downloader_middleware robotstxt_middleware_limits(engine *e, const char *user_agent,
                                                  const robotstxt_limits *lim);

#endif
