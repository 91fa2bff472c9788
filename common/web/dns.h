/* dns.h — DNS off the loop: Scrapy's CachingThreadedResolver, for the raw transport
 * of a crawler with a thread pool. getaddrinfo blocks, so it runs in the thread pool
 * (threadpool.h) while the loop goes on; the answers are cached.
 *
 *   dns_lookup(r, &f->waiter, "example.org", 80, got_address, f);
 *   ...later, on the loop thread: got_address(&f->waiter, &addr, len, NULL)
 *
 * - The cache: up to cache_size host names (the oldest answer goes first), each kept
 *   for ttl_ms, failures too (a crawl retries a URL several times; the name does not
 *   come back meanwhile). Keyed by host alone: the port is set on the way out.
 * - Sharing: while a host's lookup is under way, every other lookup of it joins that
 *   one's waiter list — a hundred URLs of one new host cost one getaddrinfo (Scrapy's
 *   resolver starts one each; ours does not).
 * - Timeout: a lookup not answered after timeout_ms fails for all its waiters with
 *   "DNS lookup of HOST timed out after N s", and that failure is cached like any
 *   other. The thread cannot be stopped: its late answer is dropped.
 * - Numeric addresses are answered at once, without a thread.
 *
 * Without a pool, the chapter's synchronous cached resolver (net.h) serves.
 */
#ifndef CRAWL_DNS_H
#define CRAWL_DNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "list.h"
#include "selector.h"
#include "threadpool.h"

typedef struct dns_resolver dns_resolver;
typedef struct dns_waiter dns_waiter;

/* On the loop thread: addr and len (with the waiter's port), or error (one line) with
 * addr NULL. The waiter is free to be reused or freed from here on. */
typedef void (*dns_done_fn)(dns_waiter *w, const struct sockaddr_storage *addr, socklen_t len,
                            const char *error);

/* One lookup's place in line. The caller owns it (in a coroutine frame, say) and keeps
 * it until done runs or it is cancelled; the fields are the resolver's. */
struct dns_waiter {
    list_node node;
    int port;
    dns_done_fn done;
    void *data; /* the caller's */
};

/* The blocking lookup, run on a pool thread: fill addr (any port) and len and return 0,
 * or write one line into err and return -1. */
typedef int (*dns_resolve_fn)(const char *host, struct sockaddr_storage *addr, socklen_t *len,
                              char *err, size_t errlen);

typedef struct dns_config {
    size_t cache_size;      /* host names kept at most (DNS_CACHE_SIZE) */
    uint64_t ttl_ms;        /* an answer is kept this long (DNS_TTL_MS) */
    uint64_t timeout_ms;    /* a lookup fails when not answered by then */
    dns_resolve_fn resolve; /* NULL: getaddrinfo (net_resolve_name); tests count calls */
} dns_config;

#define DNS_CACHE_SIZE 10000        /* Scrapy's DNSCACHE_SIZE */
#define DNS_TTL_MS     (300 * 1000) /* getaddrinfo tells no TTL: five minutes */

dns_resolver *dns_new(selector *loop, threadpool *pool, const dns_config *cfg);
/* Lookups still running in the pool are left to end there (their answers dropped).
 * No waiter may be waiting (cancel them first). Accepts NULL. */
void dns_free(dns_resolver *r);

/* Look host:port up; done(w, ...) is called exactly once, unless cancelled: from here
 * (before dns_lookup returns) for a numeric address, a cached answer or a bad
 * argument; later, from the loop, when the lookup ends or times out. */
void dns_lookup(dns_resolver *r, dns_waiter *w, const char *host, int port, dns_done_fn done,
                void *data);
/* Stop waiting: done will not be called. The host's lookup goes on for the others and
 * for the cache. A no-op for a waiter that is not waiting. */
void dns_cancel(dns_waiter *w);

/* Lookups started (resolve calls handed to the pool): numeric hosts, cache hits and
 * waiters that joined a lookup under way make none. */
size_t dns_lookups(const dns_resolver *r);

#endif
