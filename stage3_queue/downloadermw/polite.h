/* polite.h — the politeness downloader middleware: what Scrapy spreads over its
 * RetryMiddleware and its AutoThrottle extension, on stage 3's engine, telling the
 * polite Queue (hostqueue.h) what each answer says about its host, through the host
 * feedback the Queue offers (frontier.h's frontier_hosts).
 *
 *   process_request    notes when the try starts (for the latency); a URL of a host
 *                      given up (hostqueue.h: too many back-offs in a row) is
 *                      ignored instead — its record says "host gave up: ..."
 *   process_response   the latency goes to autothrottle; a 429 or 503 backs the host
 *                      off for its Retry-After (seconds or an HTTP date; none given:
 *                      1 s, doubled on each try of the URL), and so does a 5xx that
 *                      follows another 5xx of the host; a 408, 429, 500, 502, 503 or
 *                      504 is tried again later (a Request for itself, through the
 *                      Queue), until --max-tries tries — the last answer is then the
 *                      URL's record (at once when the back-off gives the host up)
 *   process_exception  a failed try (timeout, refused, reset): slows autothrottle
 *                      down and is tried again later, until --max-tries
 *
 * With politeness on, the engine's download makes one try (FETCH_ONE_TRY): every try
 * is a start the Queue scheduled, so no retry comes closer than the host's delay.
 * A back-off never blocks a worker: the host's next start moves, other hosts go on.
 */
#ifndef CRAWL_POLITE_H
#define CRAWL_POLITE_H

#include "engine.h"

#define POLITE_MAX_BACKOFF_S 600 /* a Retry-After longer than this is cut to it */

/* Tells what it learns to e's Queue when that is polite (frontier_hosts); with another
 * Queue it only tries again. */
downloader_middleware polite_middleware(engine *e);

/* Retry-After's value (RFC 9110, 10.2.3: delay-seconds or an HTTP-date) as
 * milliseconds from now (now_s: the current time, seconds since the epoch); -1 when
 * it is neither. A date in the past is 0. */
long long polite_retry_after_ms(const char *value, long long now_s);

#endif
