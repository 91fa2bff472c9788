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
 * What the answer means (RFC 9309, 2.3.1): 2xx, the file's rules for our product
 * token (common/web/robots.h); 3xx, followed (each hop through engine_download), up
 * to ROBOTSTXT_MAX_REDIRECTS; a redirect past those, or 4xx, no rules (everything
 * allowed); 5xx, another status, or no response at all (the --max-tries attempts
 * failed), everything forbidden.
 *
 * crawl-queue enables it unless --ignore-robots is given (stage3_queue/main.c).
 */
#ifndef CRAWL_ROBOTSTXT_H
#define CRAWL_ROBOTSTXT_H

#include "engine.h"

#define ROBOTSTXT_MAX_REDIRECTS 5

/* The middleware, for engine_add_middleware (which then owns it). user_agent is
 * --user-agent (NULL: the transports' default): its product token picks the group. */
downloader_middleware robotstxt_middleware(engine *e, const char *user_agent);

#endif
