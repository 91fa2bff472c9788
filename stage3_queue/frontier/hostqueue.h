/* hostqueue.h — the chapter's Queue made polite: the same put_nowait, get, task_done
 * and join, but get hands out the next URL of a host that may be fetched *now*.
 *
 * The chapter's Queue is one FIFO: a worker takes the oldest URL whatever its host.
 * A polite crawler must not do that: when the oldest URL's host is at its cap of
 * requests in flight (--per-host) or inside its delay (--delay, robots.txt's
 * Crawl-delay, a 429's Retry-After), taking it means waiting — and every worker that
 * takes such a URL waits, while URLs of other hosts could go (head-of-line blocking:
 * Scrapy's download slots fill with one domain's requests this way).
 *
 * So here each politeness key (the host, or with --per-ip the address it resolves to)
 * has a `slot`: its own FIFO of URLs, its requests in flight, and the time its next
 * request may start. The slots that have URLs and room for one more request sit in a
 * min-heap by that time. get takes from the heap's top slot when its time has come;
 * otherwise the getter waits — for a put, for a task_done that frees a slot, or for
 * one timer set at the top slot's time. No worker ever waits on a host.
 *
 * A slot that never started a request (a host just met) is not in the heap but in a
 * FIFO of fresh slots, and get takes from the fresh FIFO and from the heap's due slots
 * in turn: a crawl meeting thousands of hosts goes on with the pages of the hosts it
 * knows, rather than starting every new host first (each new host's first request
 * is often its robots.txt).
 *
 *   the start of a request  get: in flight + 1, next start = now + the host's delay
 *   its end                 task_done(url): in flight - 1 (the chapter's task_done too)
 *   a 429, 503, 5xx, error  hostqueue_backoff: the host's next start moves later
 *   robots.txt Crawl-delay  hostqueue_crawl_delay: the host's delay grows (capped)
 *   --autothrottle          hostqueue_latency: the delay follows the latency
 *   a sitemap download      hostqueue_claim / hostqueue_release: a start and its end
 *                           on the host, for a download that is no URL of the Queue
 *   a host's first URL      the hosts watcher (robots.txt's middleware) is told; if a
 *                           download of its own comes (robots.txt), the host's URLs
 *                           wait for its end, and its start is the host's first
 *
 * A host that keeps asking to be left alone is given up: after HQ_GIVE_UP_BACKOFFS
 * back-offs in a row (none of its answers between them without one), or once those
 * add up to HQ_GIVE_UP_S seconds, hostqueue_gave_up says why, its delay no longer
 * applies, and the politeness middleware records each of its URLs left as a failure
 * without fetching it.
 *
 * join and task_done keep the chapter's meaning: the unfinished count is the embedded
 * chapter Queue's (`base`), and join is its join.
 *
 * With --per-ip a new host's URLs wait in the host's own line while its name is looked
 * up (dns.h, in the thread pool); then they join the slot of its address, which every
 * host of that address shares. A failed lookup keeps the host as its own key (its
 * fetches then fail and are recorded).
 *
 * Slots are kept for the whole crawl (a few hundred bytes per host), so a host's
 * learned delay and back-off survive while its FIFO is empty.
 */
#ifndef CRAWL_HOSTQUEUE_H
#define CRAWL_HOSTQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns.h"
#include "frontier.h"
#include "list.h"
#include "queue.h"
#include "strmap.h"

typedef struct hostqueue_config {
    int per_host;              /* --per-host N: requests in flight per key; 0: no cap */
    bool per_ip;               /* --per-ip: the key is the host's address */
    double delay;              /* --delay SECS between two starts on one key */
    bool random_delay;         /* --random-delay: each delay x [0.5, 1.5) */
    double max_crawl_delay;    /* --max-crawl-delay SECS: the cap on Crawl-delay */
    bool autothrottle;         /* --autothrottle */
    double target_concurrency; /* --target-concurrency: requests in flight wanted */
    double max_delay;          /* autothrottle's ceiling (seconds) */
} hostqueue_config;

typedef struct hostqueue {
    queue base; /* the chapter's Queue: unfinished_tasks, task_done, join */
    selector *loop;
    dns_resolver *dns; /* --per-ip: lookups (not owned) */
    hostqueue_config cfg;
    strmap hosts;   /* hq_host by host name */
    strmap slots;   /* hq_slot by key (host, or address with --per-ip) */
    hq_slot **heap; /* slots with URLs and room, by next start */
    size_t nheap, capheap;
    size_t queued;     /* URLs in every FIFO */
    list_node fresh;   /* slots that never started a request, with URLs */
    unsigned turns;    /* get's alternation between fresh and heap */
    list_node getters; /* get()s waiting, oldest first */
    sel_timer *timer;  /* wakes a getter when the top slot's time comes */
    uint64_t timer_at;
    uint64_t rng;                                    /* --random-delay's generator */
    bool (*on_new_host)(void *ctx, const char *url); /* the hosts watcher (frontier.h) */
    void *new_host_ctx;
} hostqueue;

void hostqueue_init(hostqueue *q, selector *loop, dns_resolver *dns, const hostqueue_config *cfg);
/* Free every slot and URL. No coroutine may be waiting in get or join. */
void hostqueue_clear(hostqueue *q);

/* put_nowait, the first of the chapter's four operations; get, task_done and join are
 * reached through the Frontier interface (hostqueue_frontier), as the engine's host
 * feedback is (its hosts op: back-off, claim and release, ...). */
void hostqueue_put_nowait(hostqueue *q, const crawl_request *r);
static inline size_t hostqueue_qsize(const hostqueue *q)
{
    return q->queued;
}

/* hq_slot and hq_outcome (how a try went) are frontier.h's: its host_feedback. */

/* The slot of url's host: what the calls below take, looked up once per answer. NULL
 * for a host never put (or, with --per-ip, still being looked up); the calls below
 * then do nothing. Valid until the queue is cleared. */
hq_slot *hostqueue_slot(hostqueue *q, const char *url);

#define HQ_GIVE_UP_BACKOFFS 5   /* back-offs in a row before a host is given up */
#define HQ_GIVE_UP_S        900 /* or seconds of back-off in a row */

/* What the engine learns about a host (the rest comes through the host feedback):
 * crawl_delay: robots.txt asks this many seconds between requests (capped by
 * max_crawl_delay; returns true when the cap applied). latency: a try took ms. */
bool hostqueue_crawl_delay(hostqueue *q, hq_slot *s, double secs);
void hostqueue_latency(hostqueue *q, hq_slot *s, uint64_t ms, hq_outcome how);

/* The polite Queue behind the Frontier interface (frontier.h), made with cfg; its
 * hosts op offers the host's calls as a host_feedback. */
frontier hostqueue_frontier(selector *loop, dns_resolver *dns, const hostqueue_config *cfg);

/* The host's current delay between starts, in seconds (tests, -v); -1: no slot. */
double hostqueue_delay_of(const hostqueue *q, const hq_slot *s);
/* The politeness key of a slot ("127.0.0.1", or the host's address with --per-ip);
 * NULL for no slot. */
const char *hostqueue_key(const hq_slot *s);

#endif
