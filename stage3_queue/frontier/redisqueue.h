/* redisqueue.h — crawl-queue's Queue ("Coordinating Coroutines") on Redis Streams, so
 * that many crawl-queue processes, on one machine or many, run one crawl
 * (--frontier redis://HOST:PORT/NAME). The same four operations as queue.h — put_nowait,
 * get, task_done, join — and the same meaning, held for every process at once:
 *
 *   put_nowait  one Lua script: SADD of the URL's 64-bit fingerprint (of its RFC 3986
 *               normal form, url_normalize: "/%7Euser" and "/~user" are one) into the
 *               crawl's seen set decides whether it is new (atomically across processes);
 *               if so INCR of the unfinished counter and XADD to the stream (fields
 *               u: the URL, r: redirects left, x: depth, referrer and callback).
 *   get         waits until a worker of this process may have an entry: XREADGROUP
 *               (this process is one consumer of the crawl's consumer group), or an
 *               entry idle in a dead process's hands for longer than --claim-after
 *               (XAUTOCLAIM).
 *   task_done   once the URL's record is written: one script, XACK, and only if that
 *               acknowledged the entry, XDEL and DECR of the counter.
 *   join        every process stops when the counter is zero (docs/scale.md says why
 *               that ends the crawl and cannot end it early).
 *
 * Keys: crawl:NAME:stream, :seen, :unfinished, :fpkey (the fingerprints' SipHash key,
 * drawn at random by the first process), :crawl (its roots and options, kept by the
 * first process); the group is "crawlers", a consumer is HOST:PID. A Redis error or a
 * lost connection is fatal: the join returns, and rqueue_error says why in one line;
 * what was acknowledged stays acknowledged.
 */
#ifndef CRAWL_REDISQUEUE_H
#define CRAWL_REDISQUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "coro.h"
#include "frontier.h"
#include "selector.h"

typedef struct rqueue rqueue;

/* Connect to url's server (redisurl.h; AUTH first when it gives a password) and join
 * its crawl as `consumer` (the loop runs until the server has answered, at most the
 * connection's timeout). identity: the crawl's roots and options (crawl_identity and
 * more); the first process keeps them in crawl:NAME:crawl, and a process that gives
 * others is refused. claim_after: seconds an entry may sit unacknowledged in another
 * consumer's hands before this one takes it over. NULL with one line in err on
 * failure: a process refused for other roots or options has changed nothing in Redis. */
rqueue *rqueue_new(selector *loop, const char *url, const char *identity, double claim_after,
                   const char *consumer, char *err, size_t errlen);
/* Politeness for the whole crawl, every process's requests counted (docs/scale.md):
 * at most per_host requests in flight per host (0: no cap), starts delay seconds
 * apart (x [0.5, 1.5) with random_delay). Every process of the crawl must give the
 * same. Call before the first get. */
void rqueue_politeness(rqueue *q, int per_host, double delay, bool random_delay);
/* q behind the Frontier interface (frontier.h), the only way to its operations
 * (redisqueue.c): put_nowait, get, task_done, join (the whole crawl's, every process's),
 * qsize and unfinished (the entries this process holds); its error op says the failure
 * that ended the crawl for this process as "--frontier: ..." (the option it comes
 * from); its free sends what is still waiting to be sent (task_done's
 * acknowledgements), then closes. */
frontier rqueue_frontier(rqueue *q);

#endif
