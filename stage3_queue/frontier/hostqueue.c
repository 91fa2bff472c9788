/* hostqueue.c — the polite Queue (hostqueue.h): per-key FIFOs, a heap of the keys
 * that may start a request, and the chapter's task_done and join underneath. */
#include "hostqueue.h"

#include <math.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hash.h"
#include "log.h"
#include "sockio.h"
#include "url.h"
#include "extension.h"

#define NOT_IN_HEAP              ((size_t)-1)
#define AUTOTHROTTLE_START_DELAY 1.0 /* seconds, until a host's first answer */

/* A politeness key: its URLs, its requests in flight, when the next may start. */
struct hq_slot {
    char *key;
    strmap_node node; /* in q->slots */
    jobq items;
    unsigned inflight;
    uint64_t next_ms;       /* no start before this (delay, back-off) */
    uint64_t last_start_ms; /* the latest start */
    double crawl_delay;     /* robots.txt's, capped; 0: none */
    double auto_delay;      /* --autothrottle's; < 0 until the first answer */
    unsigned errors5;       /* 5xx answers in a row */
    size_t heap_idx;        /* in q->heap, or NOT_IN_HEAP */
    bool started;           /* a request started here once: no longer fresh */
    unsigned char held;     /* 1: the watcher's download comes first; 2: it runs, a
                             * start of the host's, in flight (fb_first_done) */
    list_node fresh;        /* in q->fresh while it is fresh and wants a start */
    unsigned claiming;      /* hostqueue_claim()s waiting for a start here */
    unsigned backoffs;      /* back-offs in a row (no answer without one since) */
    uint64_t backoff_ms;    /* their total */
    uint64_t backoff_until; /* the end of the latest */
    char *gave_up;          /* why the host was given up, or NULL */
};

/* A host name and the slot its URLs go to (NULL with --per-ip while it is looked up:
 * its URLs wait in `pending`). */
typedef struct hq_host {
    char *name;
    strmap_node node; /* in q->hosts */
    hq_slot *slot;
    jobq pending;
    hostqueue *q;
    dns_waiter lookup;
    bool looking_up;
} hq_host;

/* url's host name ("" when it has none: not an http URL — one key for all such, and
 * their fetches fail at once). The caller frees it. */
static char *host_name(const char *url)
{
    char *host = NULL;
    url_split(url, NULL, &host, NULL, NULL); /* host stays NULL on failure */
    return host ? host : xstrdup("");
}

/* ---- the heap of slots that have URLs and room, by next start ---- */

static bool heap_less(const hq_slot *a, const hq_slot *b)
{
    return a->next_ms < b->next_ms;
}

static void heap_set(hostqueue *q, size_t i, hq_slot *s)
{
    q->heap[i] = s;
    s->heap_idx = i;
}

static void heap_up(hostqueue *q, size_t i)
{
    hq_slot *s = q->heap[i];
    while (i > 0 && heap_less(s, q->heap[(i - 1) / 2])) {
        heap_set(q, i, q->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(q, i, s);
}

static void heap_down(hostqueue *q, size_t i)
{
    hq_slot *s = q->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->nheap)
            break;
        if (c + 1 < q->nheap && heap_less(q->heap[c + 1], q->heap[c]))
            c++;
        if (!heap_less(q->heap[c], s))
            break;
        heap_set(q, i, q->heap[c]);
        i = c;
    }
    heap_set(q, i, s);
}

static void heap_remove(hostqueue *q, hq_slot *s)
{
    size_t i = s->heap_idx;
    s->heap_idx = NOT_IN_HEAP;
    hq_slot *last = q->heap[--q->nheap];
    if (last == s)
        return;
    heap_set(q, i, last);
    heap_up(q, i);
    heap_down(q, last->heap_idx);
}

/* Put s where a getter finds it, take it out, or move it, as its URLs, room and time
 * say: a slot that never started a request waits in the fresh line (FIFO), the others
 * in the heap by next start. A slot being claimed (hostqueue_claim) is in neither: the
 * claim takes its next start. */
static void slot_update(hostqueue *q, hq_slot *s)
{
    bool room = q->cfg.per_host <= 0 || s->inflight < (unsigned)q->cfg.per_host;
    bool want = room && jobq_size(&s->items) > 0 && !s->claiming && !s->held;
    if (!want || s->started) {
        list_remove(&s->fresh);
    } else if (!list_linked(&s->fresh)) {
        list_push_back(&q->fresh, &s->fresh);
        return;
    }
    if (!want || !s->started) {
        if (s->heap_idx != NOT_IN_HEAP)
            heap_remove(q, s);
        return;
    }
    if (s->heap_idx == NOT_IN_HEAP) {
        if (q->nheap == q->capheap) {
            q->capheap = q->capheap ? 2 * q->capheap : 64;
            q->heap = xreallocarray(q->heap, q->capheap, sizeof *q->heap);
        }
        heap_set(q, q->nheap++, s);
    }
    heap_up(q, s->heap_idx);
    heap_down(q, s->heap_idx);
}

/* The slot whose URL a getter takes now, or NULL when none may start now. Fresh slots
 * and due ones of the heap take turns: a crawl of many hosts starts pages on the hosts
 * it knows while it meets new ones (their first request is often robots.txt), rather
 * than every new host first. */
static hq_slot *slot_next(hostqueue *q)
{
    list_node *n = list_first(&q->fresh);
    hq_slot *fresh = n ? list_entry(n, hq_slot, fresh) : NULL;
    hq_slot *due = q->nheap && q->heap[0]->next_ms <= selector_now_ms(q->loop) ? q->heap[0] : NULL;
    if (fresh && due)
        return (q->turns++ & 1) ? fresh : due;
    return fresh ? fresh : due;
}

/* ---- waking getters (queue.h's getter line) ---- */

static void on_timer(selector *s, void *arg);

/* A getter waits and the top slot may start now: wake the oldest getter (it takes
 * the URL and kicks again for the next). Its time is later: one timer for it. */
static void kick(hostqueue *q)
{
    if (list_empty(&q->getters))
        return;
    uint64_t now = selector_now_ms(q->loop);
    if (!list_empty(&q->fresh) || (q->nheap && q->heap[0]->next_ms <= now)) {
        getter_wake_oldest(q->loop, &q->getters);
        return;
    }
    if (q->nheap == 0)
        return;
    uint64_t at = q->heap[0]->next_ms;
    if (q->timer && q->timer_at <= at)
        return; /* one is set for then or sooner */
    if (q->timer)
        selector_cancel(q->loop, q->timer);
    q->timer = selector_call_later(q->loop, at - now, on_timer, q);
    q->timer_at = at;
}

static void on_timer(selector *s, void *arg)
{
    (void)s;
    hostqueue *q = arg;
    q->timer = NULL;
    kick(q);
}

/* ---- slots and hosts ---- */

static hq_slot *slot_get(hostqueue *q, const char *key)
{
    strmap_node *n = strmap_find(&q->slots, key);
    if (n)
        return strmap_entry(n, hq_slot, node);
    hq_slot *s = xcalloc(1, sizeof *s);
    s->key = xstrdup(key);
    jobq_init(&s->items);
    s->auto_delay = -1;
    s->heap_idx = NOT_IN_HEAP;
    list_node_init(&s->fresh);
    strmap_add(&q->slots, &s->node, s->key);
    return s;
}

static void slot_push(hostqueue *q, hq_slot *s, const crawl_request *r)
{
    jobq_push(&s->items, r);
    q->queued++;
    slot_update(q, s);
}

/* The host's lookup ended (--per-ip): its URLs join its address's slot. */
static void host_resolved(dns_waiter *w, const struct sockaddr_storage *addr, socklen_t len,
                          const char *error)
{
    hq_host *h = w->data;
    hostqueue *q = h->q;
    char ip[NI_MAXHOST];
    h->looking_up = false;
    if (error
        || getnameinfo((const struct sockaddr *)addr, len, ip, sizeof ip, NULL, 0, NI_NUMERICHOST)
            != 0) {
        log_info("--per-ip: %s not resolved (%s): its own key", h->name,
                 error ? error : "no address");
        h->slot = slot_get(q, h->name);
    } else {
        h->slot = slot_get(q, ip);
    }
    crawl_request *r;
    while ((r = jobq_pop(&h->pending))) {
        q->queued--;
        slot_push(q, h->slot, r);
        free(r);
    }
    jobq_clear(&h->pending);
    kick(q);
}

/* The host entry of url (made on first sight: with --per-ip its lookup starts). */
static hq_host *host_of(hostqueue *q, const char *url)
{
    char *name = host_name(url);
    strmap_node *n = strmap_find(&q->hosts, name);
    if (n) {
        free(name);
        return strmap_entry(n, hq_host, node);
    }
    hq_host *h = xcalloc(1, sizeof *h);
    h->name = name;
    h->q = q;
    jobq_init(&h->pending);
    strmap_add(&q->hosts, &h->node, h->name);
    if (q->cfg.per_ip && q->dns && *name) {
        h->looking_up = true;
        dns_lookup(q->dns, &h->lookup, name, 80, host_resolved, h); /* may answer now */
    } else {
        h->slot = slot_get(q, name);
    }
    return h;
}

/* ---- the queue ---- */

void hostqueue_init(hostqueue *q, selector *loop, dns_resolver *dns, const hostqueue_config *cfg)
{
    memset(q, 0, sizeof *q);
    queue_init(&q->base, loop);
    q->loop = loop;
    q->dns = dns;
    q->cfg = *cfg;
    strmap_init(&q->hosts);
    strmap_init(&q->slots);
    list_init(&q->fresh);
    list_init(&q->getters);
    q->rng = hash_str("hostqueue") | 1; /* keyed per process: no fixed sequence */
}

static void host_drop(strmap_node *n)
{
    hq_host *h = strmap_entry(n, hq_host, node);
    if (h->looking_up)
        dns_cancel(&h->lookup);
    jobq_clear(&h->pending);
    free(h->name);
    free(h);
}

static void slot_drop(strmap_node *n)
{
    hq_slot *s = strmap_entry(n, hq_slot, node);
    jobq_clear(&s->items);
    free(s->gave_up);
    free(s->key);
    free(s);
}

void hostqueue_clear(hostqueue *q)
{
    if (q->timer)
        selector_cancel(q->loop, q->timer);
    q->timer = NULL;
    strmap_clear(&q->hosts, host_drop);
    strmap_free(&q->hosts);
    strmap_clear(&q->slots, slot_drop);
    strmap_free(&q->slots);
    free(q->heap);
    q->heap = NULL;
    q->nheap = q->capheap = 0;
    list_init(&q->fresh);
    queue_clear(&q->base);
}

/* A host's first URL: the watcher is told. When a download of its own comes there
 * (robots.txt), the host's URLs wait until it ends (fb_first_done). */
static void host_met(hostqueue *q, hq_host *h, const char *url)
{
    hq_slot *s = h->slot;
    if (!q->on_new_host || !s || s->started)
        return;
    s->held = 1; /* first: the watcher may start its download at once */
    if (!q->on_new_host(q->new_host_ctx, url))
        s->held = 0;
}

void hostqueue_put_nowait(hostqueue *q, const crawl_request *r)
{
    q->base.unfinished_tasks++; /* the chapter's count, for task_done and join */
    size_t hosts = q->hosts.count;
    hq_host *h = host_of(q, r->url);
    if (q->hosts.count != hosts)
        host_met(q, h, r->url);
    if (h->slot) {
        slot_push(q, h->slot, r);
    } else {
        jobq_push(&h->pending, r);
        q->queued++;
    }
    kick(q);
}

/* The delay before the next start on s, in ms: the largest of --delay, Crawl-delay
 * and autothrottle's, times [0.5, 1.5) with --random-delay. */
static double slot_delay(const hostqueue *q, const hq_slot *s)
{
    double d = q->cfg.delay;
    if (s->crawl_delay > d)
        d = s->crawl_delay;
    if (q->cfg.autothrottle) {
        double a = s->auto_delay < 0 ? AUTOTHROTTLE_START_DELAY : s->auto_delay;
        if (a > d)
            d = a;
    }
    return d;
}

static uint64_t delay_ms(hostqueue *q, const hq_slot *s)
{
    double d = slot_delay(q, s) * 1000.0;
    if (q->cfg.random_delay)
        d *= hash_jitter(&q->rng);
    return (uint64_t)llround(d);
}

/* ---- get ---- */

typedef struct {
    coro co;
    hostqueue *q;
    getter g;
    hq_slot *s; /* slot_next's choice */
} hget_frame;

/* A request starts on s now: in flight + 1, the next start after the host's delay (a
 * host given up has no delay: its URLs are recorded without a request). */
static void slot_start(hostqueue *q, hq_slot *s)
{
    uint64_t now = selector_now_ms(q->loop);
    s->inflight++;
    s->started = true;
    s->last_start_ms = now;
    /* now is whole ms: + 1, so that two starts are never closer than a delay; no
     * delay, nothing to round (starts in the same ms, up to the cap) */
    uint64_t d = s->gave_up ? 0 : delay_ms(q, s);
    s->next_ms = d ? now + d + 1 : now;
    slot_update(q, s);
    /* -vv: the Queue's own log of starts, on its clock (monotonic ms), which tests read
     * for the spacing it chose: a server sees a start later by a varying trip */
    log_debug("queue: start on %s at %llu ms, next from %llu ms", s->key, (unsigned long long)now,
              (unsigned long long)s->next_ms);
}

/* Take the oldest URL of s (slot_next's choice): a request starts there now. */
static crawl_request *take(hostqueue *q, hq_slot *s)
{
    crawl_request *r = jobq_pop(&s->items);
    q->queued--;
    slot_start(q, s);
    return r;
}

static int hget_body(coro *co)
{
    hget_frame *f = (hget_frame *)co;
    hostqueue *q = f->q;
    CORO_BEGIN(co);
    while (!(f->s = slot_next(q))) {
        /* Nothing may start now: wait for a put, a task_done or the top's time. */
        future_clear(&f->g.wake);
        list_push_back(&q->getters, &f->g.link);
        kick(q);                      /* the timer, if a slot waits */
        AWAIT_FUTURE(co, &f->g.wake); /* a worker is cancelled here */
    }
    {
        crawl_request *r = take(q, f->s);
        kick(q); /* the next getter, if another may go */
        CORO_RETURN(co, r, 0);
    }
    CORO_END(co);
}

static void hget_finally(coro *co)
{
    hget_frame *f = (hget_frame *)co;
    list_remove(&f->g.link);
    if (f->g.wakeup) {
        /* Woken but cancelled before it ran: pass the wake-up on. */
        selector_cancel(f->q->loop, f->g.wakeup);
        kick(f->q);
    }
    future_clear(&f->g.wake);
}

static const coro_def hget_def = {"hostqueue_get", __FILE__, hget_body, hget_finally,
                                  sizeof(hget_frame)};

/* The chapter's get, task_done and join (put_nowait: hostqueue.h). task_done takes the
 * URL that get handed out: its slot gets its request back. */
static coro *hostqueue_get(hostqueue *q)
{
    hget_frame *f = (hget_frame *)coro_new(&hget_def);
    f->q = q;
    future_init(&f->g.wake);
    list_node_init(&f->g.link);
    return &f->co;
}

/* ---- task_done and join: the chapter's, after the slot gets its request back ---- */

hq_slot *hostqueue_slot(hostqueue *q, const char *url)
{
    char *name = host_name(url);
    strmap_node *n = strmap_find(&q->hosts, name);
    free(name);
    return n ? strmap_entry(n, hq_host, node)->slot : NULL;
}

/* A request on url's host ended: its slot gets the request back. */
static void slot_end(hostqueue *q, const char *url)
{
    hq_slot *s = hostqueue_slot(q, url);
    if (s && s->inflight > 0) {
        s->inflight--;
        slot_update(q, s);
        kick(q);
    }
}

static void hostqueue_task_done(hostqueue *q, const char *url)
{
    slot_end(q, url);
    queue_task_done(&q->base);
}

static coro *hostqueue_join(hostqueue *q)
{
    return queue_join(&q->base);
}

/* ---- a start for a download that is no URL of the Queue (a sitemap) ---- */

#define CLAIM_POLL_MS 20 /* a claim waiting for room or a lookup looks again */

typedef struct {
    coro co;
    hostqueue *q;
    char *url;
    hq_slot *s; /* the slot whose claiming count holds this claim */
} claim_frame;

/* Wait until the host may start a request, as a getter would for one of its URLs;
 * meanwhile the slot is kept out of the getters' way, so the claim cannot starve. */
static int claim_body(coro *co)
{
    claim_frame *f = (claim_frame *)co;
    hostqueue *q = f->q;
    CORO_BEGIN(co);
    for (;;) {
        if (!f->s) {
            f->s = host_of(q, f->url)->slot; /* NULL while --per-ip looks it up */
            if (f->s) {
                f->s->claiming++;
                slot_update(q, f->s);
            }
        }
        if (f->s) {
            hq_slot *s = f->s;
            bool room = q->cfg.per_host <= 0 || s->inflight < (unsigned)q->cfg.per_host;
            uint64_t now = selector_now_ms(q->loop);
            if (room && s->next_ms <= now) {
                s->claiming--;
                f->s = NULL;
                slot_start(q, s);
                kick(q);
                break;
            }
            if (room) {
                AWAIT(co, sock_sleep(s->next_ms - now));
                continue;
            }
        }
        AWAIT(co, sock_sleep(CLAIM_POLL_MS));
    }
    CORO_END(co);
}

static void claim_finally(coro *co)
{
    claim_frame *f = (claim_frame *)co;
    if (f->s) { /* cancelled while waiting */
        f->s->claiming--;
        slot_update(f->q, f->s);
        kick(f->q);
    }
    free(f->url);
}

static const coro_def claim_def = {"hostqueue_claim", __FILE__, claim_body, claim_finally,
                                   sizeof(claim_frame)};

/* A download outside the Queue (a sitemap file) obeys the host's politeness too: claim
 * waits until url's host may start a request (its delay, its cap of requests in flight;
 * the host's URLs in the Queue wait meanwhile) and takes that start; release, after the
 * download, gives it back. claim never raises but CancelledError. */
static coro *hostqueue_claim(hostqueue *q, const char *url)
{
    claim_frame *f = (claim_frame *)coro_new(&claim_def);
    f->q = q;
    f->url = xstrdup(url);
    return &f->co;
}

static void hostqueue_release(hostqueue *q, const char *url)
{
    slot_end(q, url);
}

/* ---- what the engine learns ---- */

/* A back-off that starts while an earlier one lasts (the answers of requests that were
 * in flight together) lengthens it; only one that starts after it counts in the run. */
/* Nothing starts on s's host for ms (returns true when the host is given up, now or
 * before); backoff_end: an answer that asked for no back-off ends the run of
 * back-offs. */
static bool hostqueue_backoff(hostqueue *q, hq_slot *s, uint64_t ms)
{
    if (!s || s->gave_up)
        return s && s->gave_up;
    uint64_t now = selector_now_ms(q->loop);
    uint64_t until = now + ms;
    if (now >= s->backoff_until) {
        s->backoffs++;
        s->backoff_ms += ms;
    } else if (until > s->backoff_until) {
        s->backoff_ms += until - s->backoff_until;
    }
    if (until > s->backoff_until)
        s->backoff_until = until;
    log_debug("queue: back-off on %s at %llu ms for %llu ms", s->key, (unsigned long long)now,
              (unsigned long long)ms);
    if (s->backoffs >= HQ_GIVE_UP_BACKOFFS || s->backoff_ms >= HQ_GIVE_UP_S * 1000ull) {
        s->gave_up = xasprintf("%u back-offs in a row, %.1f s in all", s->backoffs,
                               (double)s->backoff_ms / 1000);
        s->next_ms = now; /* what is left goes at once, to be recorded */
        slot_update(q, s);
        kick(q);
        return true;
    }
    if (until > s->next_ms) {
        s->next_ms = until;
        slot_update(q, s);
    }
    return false;
}

static void hostqueue_backoff_end(hq_slot *s)
{
    if (s && !s->gave_up) {
        s->backoffs = 0;
        s->backoff_ms = 0;
    }
}

/* Why the host was given up ("5 back-offs in a row, 5.0 s in all"), or NULL. */
static const char *hostqueue_gave_up(const hq_slot *s)
{
    return s ? s->gave_up : NULL;
}

bool hostqueue_crawl_delay(hostqueue *q, hq_slot *s, double secs)
{
    bool capped = secs > q->cfg.max_crawl_delay;
    if (capped)
        secs = q->cfg.max_crawl_delay;
    if (s && secs > s->crawl_delay) {
        s->crawl_delay = secs;
        /* learned after a start (robots.txt's own): it counts from that start */
        uint64_t at = s->last_start_ms + (uint64_t)llround(secs * 1000.0) + 1;
        if (s->last_start_ms && at > s->next_ms) {
            s->next_ms = at;
            slot_update(q, s);
        }
    }
    return capped;
}

/* Autothrottle. Scrapy's rule, for an answer: aim at latency / target concurrency;
 * move halfway there, but never stay below the aim; only a good answer lowers it. Ours
 * differs where Scrapy's is blind: trouble (no answer, a 429, a 5xx) doubles the delay
 * — Scrapy leaves errors out, so a host that times out is never slowed down. The
 * delay stays within [--delay, max_delay]. */
void hostqueue_latency(hostqueue *q, hq_slot *s, uint64_t ms, hq_outcome how)
{
    if (!s || !q->cfg.autothrottle)
        return;
    double old = s->auto_delay < 0 ? AUTOTHROTTLE_START_DELAY : s->auto_delay;
    double aim = (double)ms / 1000.0 / q->cfg.target_concurrency;
    double d;
    if (how != HQ_TROUBLE) {
        d = (old + aim) / 2;
        if (d < aim)
            d = aim;
        if (how == HQ_OTHER && d < old)
            d = old; /* only a good answer lowers it */
    } else {
        d = 2 * old;
        if (d < aim)
            d = aim;
        if (d < 0.1)
            d = 0.1;
    }
    if (d < q->cfg.delay)
        d = q->cfg.delay;
    if (d > q->cfg.max_delay)
        d = q->cfg.max_delay;
    s->auto_delay = d;
}

/* An answer of the host: a 5xx (error) or not. Returns how many 5xx it gave in a row,
 * this one included (0 after any other answer). */
static unsigned hostqueue_server_error(hq_slot *s, bool error)
{
    if (!s)
        return 0;
    s->errors5 = error ? s->errors5 + 1 : 0;
    return s->errors5;
}

double hostqueue_delay_of(const hostqueue *q, const hq_slot *s)
{
    return s ? slot_delay(q, s) : -1;
}

const char *hostqueue_key(const hq_slot *s)
{
    return s ? s->key : NULL;
}

/* ---- behind the Frontier interface ---- */

static void fr_put_nowait(void *self, const crawl_request *r)
{
    hostqueue_put_nowait(self, r);
}

static coro *fr_get(void *self)
{
    return hostqueue_get(self);
}
static void fr_task_done(void *self, const char *url)
{
    hostqueue_task_done(self, url);
}
static coro *fr_join(void *self)
{
    return hostqueue_join(self);
}
static size_t fr_qsize(const void *self)
{
    return hostqueue_qsize(self);
}

static size_t fr_unfinished(const void *self)
{
    return queue_unfinished(&((const hostqueue *)self)->base);
}

static void fr_free(void *self)
{
    if (!self)
        return;
    hostqueue_clear(self);
    free(self);
}

static hq_slot *fb_slot(void *self, const char *url)
{
    return hostqueue_slot(self, url);
}
static bool fb_backoff(void *self, hq_slot *s, uint64_t ms)
{
    return hostqueue_backoff(self, s, ms);
}

static coro *fb_claim(void *self, const char *url)
{
    return hostqueue_claim(self, url);
}
static void fb_release(void *self, const char *url)
{
    hostqueue_release(self, url);
}

static bool fb_crawl_delay(void *self, hq_slot *s, double secs)
{
    return hostqueue_crawl_delay(self, s, secs);
}

static double fb_max_crawl_delay(const void *self)
{
    return ((const hostqueue *)self)->cfg.max_crawl_delay;
}

static void fb_latency(void *self, hq_slot *s, uint64_t ms, hq_outcome how)
{
    hostqueue_latency(self, s, ms, how);
}

static void fb_watch_hosts(void *self, bool (*fn)(void *ctx, const char *url), void *ctx)
{
    hostqueue *q = self;
    q->on_new_host = fn;
    q->new_host_ctx = ctx;
}

/* The watcher's download starts on url's host: the host's first start, as a sitemap's
 * claim takes one. */
static void fb_first_start(void *self, const char *url)
{
    hostqueue *q = self;
    hq_slot *s = hostqueue_slot(q, url);
    if (s && s->held == 1) {
        s->held = 2;
        slot_start(q, s);
    }
}

/* It ended (or will never start): the host's URLs may go. */
static void fb_first_done(void *self, const char *url)
{
    hostqueue *q = self;
    hq_slot *s = hostqueue_slot(q, url);
    if (!s || !s->held)
        return;
    if (s->held == 2 && s->inflight > 0)
        s->inflight--;
    s->held = 0;
    slot_update(q, s);
    kick(q);
}

static const host_feedback_ops feedback_ops = {
    .slot = fb_slot,
    .backoff = fb_backoff,
    .crawl_delay = fb_crawl_delay,
    .max_crawl_delay = fb_max_crawl_delay,
    .latency = fb_latency,
    .server_error = hostqueue_server_error,
    .backoff_end = hostqueue_backoff_end,
    .gave_up = hostqueue_gave_up,
    .claim = fb_claim,
    .release = fb_release,
    .watch_hosts = fb_watch_hosts,
    .first_start = fb_first_start,
    .first_done = fb_first_done,
};

static bool fr_hosts(void *self, host_feedback *out)
{
    *out = (host_feedback){&feedback_ops, self};
    return true;
}

static const frontier_ops polite_ops = {
    .name = "polite",
    .takes_back = true,
    .put_nowait = fr_put_nowait,
    .get = fr_get,
    .task_done = fr_task_done,
    .join = fr_join,
    .qsize = fr_qsize,
    .unfinished = fr_unfinished,
    .hosts = fr_hosts,
    .free = fr_free,
};

frontier hostqueue_frontier(selector *loop, dns_resolver *dns, const hostqueue_config *cfg)
{
    hostqueue *q = xmalloc(sizeof *q);
    hostqueue_init(q, loop, dns, cfg);
    return (frontier){&polite_ops, q};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->polite;
}

static int make(app *a, const settings *s, frontier *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    hostqueue_config cfg = {.per_host = s->per_host,
                            .per_ip = s->per_ip,
                            .delay = s->delay,
                            .random_delay = s->random_delay,
                            .max_crawl_delay = s->max_crawl_delay,
                            .autothrottle = s->autothrottle,
                            .target_concurrency = s->target_concurrency,
                            .max_delay = s->delay > 60 ? s->delay : 60};
    *out = hostqueue_frontier(a->loop, a->dns, &cfg);
    return 0;
}

/* The descriptor (extension.h): the polite Queue, unless --chapter; order 200. */
const extension polite_extension = {"polite", EXT_FRONTIER, 200, on, .make_frontier = make};
