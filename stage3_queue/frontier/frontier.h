/* frontier.h — the Frontier: what the Crawler asks of its Queue, whichever it has
 * ("Coordinating Coroutines": put_nowait, get, task_done, join), as one operations
 * table, after the selector backends' sel_backend_ops and Scrapy's pluggable scheduler
 * queues.
 *
 * Three Queues implement it: the chapter's (queue.h, wrapped in frontier.c), the polite
 * one (hostqueue.h: a FIFO per host) and the one on Redis (redisqueue.h). Which one a
 * crawl has is decided once, by the registry (assembly/registry.c); the Crawler only
 * calls the frontier_* functions below and never reads a Queue's fields.
 *
 * A polite Queue also offers what it learns of each host (host_feedback): the
 * politeness middleware and robots.txt's Crawl-delay tell it about answers and delays.
 * The other Queues offer none (frontier_hosts returns false).
 */
#ifndef CRAWL_FRONTIER_H
#define CRAWL_FRONTIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coro.h"
#include "crawl_request.h"
#include "selector.h"

/* ---- what a polite Queue learns of a host ---- */

typedef struct hq_slot hq_slot; /* a host's (or address's) place in the Queue */

/* How a try went, for autothrottle: a 2xx/3xx answer; another answer (a 404: it never
 * lowers the delay); trouble (no answer, a 429, a 5xx: the delay doubles). */
typedef enum { HQ_GOOD, HQ_OTHER, HQ_TROUBLE } hq_outcome;

typedef struct host_feedback_ops {
    /* The slot of url's host, looked up once per answer; NULL (the calls below then do
     * nothing) for a host the Queue does not know yet. */
    hq_slot *(*slot)(void *self, const char *url);
    /* Nothing starts on the slot for ms; true when the host is given up (now or
     * before: too many back-offs in a row). */
    bool (*backoff)(void *self, hq_slot *s, uint64_t ms);
    /* An answer that asked for no back-off: the run of back-offs ends. */
    void (*backoff_end)(hq_slot *s);
    /* Why the host was given up, or NULL. */
    const char *(*gave_up)(const hq_slot *s);
    /* robots.txt asks secs between requests: true when the Queue's cap applied. */
    bool (*crawl_delay)(void *self, hq_slot *s, double secs);
    /* That cap, in seconds (--max-crawl-delay). */
    double (*max_crawl_delay)(const void *self);
    /* A try took ms, and went how. */
    void (*latency)(void *self, hq_slot *s, uint64_t ms, hq_outcome how);
    /* An answer: a 5xx (error) or not; returns the 5xx in a row, this one included. */
    unsigned (*server_error)(hq_slot *s, bool error);
    /* A download that is no URL of the Queue (a sitemap file) takes a start on url's
     * host as a request would (claim: a coroutine, waiting for the host's turn; never
     * raises but CancelledError), and gives it back after (release). */
    coro *(*claim)(void *self, const char *url);
    void (*release)(void *self, const char *url);
    /* fn(ctx, url) for the first URL put of each host from now on (robots.txt's
     * middleware fetches the host's rules then, before a worker takes that URL). When
     * it returns true, a download for the crawl itself is coming on the host: none of
     * the host's URLs is handed out until first_done; first_start, when that download
     * starts, is the host's first start (its delay runs from then). One watcher; NULL
     * fn: none. */
    void (*watch_hosts)(void *self, bool (*fn)(void *ctx, const char *url), void *ctx);
    void (*first_start)(void *self, const char *url);
    void (*first_done)(void *self, const char *url);
} host_feedback_ops;

typedef struct host_feedback {
    const host_feedback_ops *ops;
    void *self;
} host_feedback;

/* The calls, for a host_feedback that may be empty (ops NULL: the Queue is not polite;
 * every call then does nothing). */
static inline hq_slot *hosts_slot(const host_feedback *h, const char *url)
{
    return h->ops ? h->ops->slot(h->self, url) : NULL;
}
static inline bool hosts_backoff(const host_feedback *h, hq_slot *s, uint64_t ms)
{
    return h->ops && h->ops->backoff(h->self, s, ms);
}
static inline void hosts_backoff_end(const host_feedback *h, hq_slot *s)
{
    if (h->ops)
        h->ops->backoff_end(s);
}
static inline const char *hosts_gave_up(const host_feedback *h, const hq_slot *s)
{
    return h->ops ? h->ops->gave_up(s) : NULL;
}
/* claim: NULL when the Queue is not polite (nothing to wait for). */
static inline coro *hosts_claim(const host_feedback *h, const char *url)
{
    return h->ops ? h->ops->claim(h->self, url) : NULL;
}
static inline void hosts_release(const host_feedback *h, const char *url)
{
    if (h->ops)
        h->ops->release(h->self, url);
}
static inline void hosts_watch(const host_feedback *h, bool (*fn)(void *ctx, const char *url),
                               void *ctx)
{
    if (h->ops && h->ops->watch_hosts)
        h->ops->watch_hosts(h->self, fn, ctx);
}
static inline void hosts_first_start(const host_feedback *h, const char *url)
{
    if (h->ops && h->ops->first_start)
        h->ops->first_start(h->self, url);
}
static inline void hosts_first_done(const host_feedback *h, const char *url)
{
    if (h->ops && h->ops->first_done)
        h->ops->first_done(h->self, url);
}
static inline bool hosts_crawl_delay(const host_feedback *h, hq_slot *s, double secs)
{
    return h->ops && h->ops->crawl_delay(h->self, s, secs);
}
static inline double hosts_max_crawl_delay(const host_feedback *h)
{
    return h->ops ? h->ops->max_crawl_delay(h->self) : 0;
}
static inline void hosts_latency(const host_feedback *h, hq_slot *s, uint64_t ms, hq_outcome how)
{
    if (h->ops)
        h->ops->latency(h->self, s, ms, how);
}
static inline unsigned hosts_server_error(const host_feedback *h, hq_slot *s, bool error)
{
    return h->ops ? h->ops->server_error(s, error) : 0;
}

/* ---- the Frontier ---- */

typedef struct frontier_ops {
    const char *name;
    /* put_nowait takes back a URL the crawl has already seen, as itself (a request the
     * engine parked: engine.h); Redis's put drops it, so it parks nothing. */
    bool takes_back;
    /* Add a copy of r (crawl_request.h: the URL and what travels with it) to do; wake
     * the oldest waiting get. */
    void (*put_nowait)(void *self, const crawl_request *r);
    /* Coroutine: {crawl_request * (the caller frees it, with free), 0}, waiting while
     * there is none. */
    coro *(*get)(void *self);
    /* The URL got with get has been dealt with (its record is written). */
    void (*task_done)(void *self, const char *url);
    /* Coroutine: wait until every URL put has been marked done (or the Queue failed). */
    coro *(*join)(void *self);
    /* URLs waiting for a worker; URLs put and not yet done. */
    size_t (*qsize)(const void *self);
    size_t (*unfinished)(const void *self);
    /* Optional (NULL: never fails): the failure that ended the crawl, or NULL — one
     * line, naming the option the Queue comes from ("--frontier: ..."). */
    const char *(*error)(const void *self);
    /* Optional (NULL: not polite): what the Queue learns of hosts, in *out. */
    bool (*hosts)(void *self, host_feedback *out);
    /* Free the Queue and what it holds (after the last task_done). Accepts NULL. */
    void (*free)(void *self);
} frontier_ops;

typedef struct frontier {
    const frontier_ops *ops;
    void *self;
} frontier;

static inline void frontier_put_nowait(frontier *f, const crawl_request *r)
{
    f->ops->put_nowait(f->self, r);
}
static inline coro *frontier_get(frontier *f)
{
    return f->ops->get(f->self);
}
static inline void frontier_task_done(frontier *f, const char *url)
{
    f->ops->task_done(f->self, url);
}
static inline coro *frontier_join(frontier *f)
{
    return f->ops->join(f->self);
}
static inline bool frontier_takes_back(const frontier *f)
{
    return f->ops->takes_back;
}
static inline size_t frontier_qsize(const frontier *f)
{
    return f->ops->qsize(f->self);
}
static inline size_t frontier_unfinished(const frontier *f)
{
    return f->ops->unfinished(f->self);
}
static inline const char *frontier_error(const frontier *f)
{
    return f->ops->error ? f->ops->error(f->self) : NULL;
}
/* Whether f is polite; *out is then its host_feedback, else empty. f may be NULL. */
static inline bool frontier_hosts(const frontier *f, host_feedback *out)
{
    *out = (host_feedback){NULL, NULL};
    return f && f->ops && f->ops->hosts && f->ops->hosts(f->self, out);
}
/* Free the Queue; *f is then empty. Accepts an empty frontier. */
static inline void frontier_free(frontier *f)
{
    if (f->ops)
        f->ops->free(f->self);
    f->ops = NULL;
    f->self = NULL;
}

/* The crawl core's add_url (crawl.h's crawl_add_fn) for a frontier: ctx is the
 * frontier; the URL is put in its Queue. */
void frontier_add(void *ctx, const crawl_request *r);

/* The chapter's Queue (queue.h) behind the interface: one FIFO in memory. */
frontier queue_frontier(selector *loop);

#endif
