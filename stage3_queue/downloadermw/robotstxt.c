/* robotstxt.c — the robots.txt downloader middleware (robotstxt.h), after the second
 * source's reading of Scrapy's RobotsTxtMiddleware: robot_parser keeps one Deferred per
 * netloc, made by the first request and fired by the download of robots.txt; every
 * request meanwhile waits on it.
 *
 * Here the netloc is an origin (scheme://host:port) in a hash table of `origin`
 * entries; the Deferred is the entry's Future, `ready`; the download is a Task of our
 * own (fetch_rules) that awaits engine_download once per hop; and process_request
 * answers at once when the rules are known, or else parks the request: a wait_rules
 * Task of its own awaits `ready` and then hands the request back to the Queue
 * (engine_unpark), while the worker goes on with other URLs. Scrapy's inlineCallbacks
 * chain holds nothing while it waits for the Deferred; a worker here is a slot of
 * --max-tasks, and a robots.txt dripping one byte a second must not keep it.
 *
 * The entries with rules are also in a list, most recently used first: past the
 * limits' max_bytes of rules (robots_bytes, all origins together), the least recently
 * used go, and rules older than max_age (RFC 9309, 2.4: 24 hours) too — the next
 * request to such an origin fetches its robots.txt again.
 */
#include "robotstxt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "http.h"
#include "list.h"
#include "log.h"
#include "robots_parser.h"
#include "strmap.h"
#include "url.h"
#include "extension.h"

/* One origin's rules, and the Future everyone waits on until they are known. */
typedef struct origin {
    char *key;              /* "http://example.com:80" */
    strmap_node node;       /* in the middleware's table, by key */
    future ready;           /* resolved once rules is set */
    robots *rules;          /* NULL while robots.txt is being fetched */
    char *why;              /* why everything is forbidden (the record's words), or
                                 * NULL */
    task *fetcher;          /* fetch_rules, while it runs */
    char *robots_url;       /* its robots.txt, while it waits for a download slot */
    list_node to_fetch;     /* in the middleware's line then */
    list_node waiters;      /* the wait_rules Tasks of the requests parked here */
    size_t unparked;        /* requests handed back and not yet seen again */
    bool awaited;           /* fetched ahead (prefetch): its first request is to come */
    bool holds;             /* the Queue holds the host's URLs until its download ends */
    list_node lru;          /* in the middleware's list once rules is set */
    size_t bytes;           /* what the entry holds, rules included, once set */
    uint64_t fetched_ms;    /* when rules was set (the loop's clock) */
    robotstxt_stats *stats; /* the middleware's, where bytes is counted */
} origin;

typedef struct robotstxt {
    engine *e;
    const char *agent;          /* the User-Agent: its product token picks the group */
    strmap origins;             /* origin by key */
    list_node lru;              /* origins with rules, most recently used first */
    int fetching, max_fetching; /* robots.txt downloads in line's places, and at most */
    int slow, max_all;          /* those past ROBOTSTXT_SLOW_MS; at most, in all */
    list_node to_fetch;         /* origins waiting for a download slot, oldest first */
    size_t max_bytes;
    uint64_t max_age_ms;
    robotstxt_stats own_stats;
    robotstxt_stats *stats; /* own_stats, or the caller's */
    host_feedback hosts;    /* the polite Queue's, which tells of new hosts */
    bool live;              /* the engine is open (or a request came): downloads may start */
} robotstxt;

/* ---- the table of origins (their names come from strangers' links: strmap's keyed
 * hash) ---- */

static origin *origin_find(const robotstxt *mw, const char *key)
{
    strmap_node *n = strmap_find(&mw->origins, key);
    return n ? strmap_entry(n, origin, node) : NULL;
}

/* A new entry for key (not in the table yet): no rules, `ready` pending. */
static origin *origin_add(robotstxt *mw, const char *key)
{
    origin *o = xcalloc(1, sizeof *o);
    o->key = xstrdup(key);
    o->stats = mw->stats;
    future_init(&o->ready);
    list_init(&o->waiters);
    list_node_init(&o->lru);
    list_node_init(&o->to_fetch);
    strmap_add(&mw->origins, &o->node, o->key);
    return o;
}

static void origin_free(strmap_node *n);

/* Whether o may go: its rules known, no download and no request waiting on it, nor
 * handed back and on its way (dropping the rules then would only fetch them again). */
static bool origin_idle(const origin *o)
{
    return o->rules && !o->fetcher && list_empty(&o->waiters) && o->unparked == 0 && !o->awaited;
}

/* Out of the table and freed: the next request to the origin fetches its robots.txt
 * again. */
static void origin_drop(robotstxt *mw, origin *o)
{
    strmap_remove(&mw->origins, &o->node);
    origin_free(&o->node);
}

/* o's rules were used: it goes to the front of the list. */
static void origin_touch(robotstxt *mw, origin *o)
{
    list_remove(&o->lru);
    list_push_front(&mw->lru, &o->lru);
}

/* While the rules of all origins take more than max_bytes, drop the least recently
 * used that may go (never keep). */
static void evict(robotstxt *mw, const origin *keep)
{
    robotstxt_stats *st = mw->stats;
    for (list_node *n = mw->lru.prev; st->bytes > mw->max_bytes && n != &mw->lru;) {
        origin *old = list_entry(n, origin, lru);
        n = n->prev;
        if (old != keep && origin_idle(old)) {
            log_info("robots.txt of %s dropped from memory (%zu octets of rules over "
                     "%zu): fetched again when needed",
                     old->key, st->bytes, mw->max_bytes);
            st->evictions++;
            origin_drop(mw, old);
        }
    }
}

/* o's rules are set: account for them, then make room. */
static void origin_settled(robotstxt *mw, origin *o)
{
    robotstxt_stats *st = mw->stats;
    o->bytes =
        sizeof *o + strlen(o->key) + 1 + (o->why ? strlen(o->why) + 1 : 0) + robots_bytes(o->rules);
    o->fetched_ms = selector_now_ms(engine_app(mw->e)->loop);
    st->bytes += o->bytes;
    st->fetches++;
    if (st->bytes > st->peak_bytes)
        st->peak_bytes = st->bytes;
    origin_touch(mw, o);
    evict(mw, o);
}

/* ---- fetching robots.txt: one Task per origin ---- */

typedef struct {
    coro co;
    robotstxt *mw;
    origin *o;
    char *url; /* the robots.txt URL of this hop */
    int redirects;
    task *dl;              /* engine_download's Task, while it runs */
    bool counted;          /* in mw->fetching (or mw->slow) */
    bool slow;             /* past ROBOTSTXT_SLOW_MS: in mw->slow */
    sel_timer *slow_timer; /* until then */
} fetch_frame;

static void fetch_next(robotstxt *mw);

/* The Queue held o's host's URLs for its robots.txt (prefetch): they may go now. */
static void origin_unhold(robotstxt *mw, origin *o)
{
    if (o->holds) {
        o->holds = false;
        hosts_first_done(&mw->hosts, o->key);
    }
}

/* Out of the download count (done or cancelled), and its timer cancelled. */
static void uncount(fetch_frame *f)
{
    if (f->slow_timer)
        selector_cancel(engine_app(f->mw->e)->loop, f->slow_timer);
    f->slow_timer = NULL;
    if (f->counted)
        f->slow ? f->mw->slow-- : f->mw->fetching--;
    f->counted = false;
}

/* ROBOTSTXT_SLOW_MS have passed and the download still runs: it goes on, and the next
 * origin in line gets its place. */
static void slow_fired(selector *s, void *data)
{
    (void)s;
    fetch_frame *f = data;
    f->slow_timer = NULL;
    if (!f->counted)
        return;
    f->slow = true;
    f->mw->fetching--;
    f->mw->slow++;
    fetch_next(f->mw);
}

/* Politeness on: the Crawl-delay of our group slows the origin's host down — up to
 * --max-crawl-delay (a -v line each time that cap applies). The origin's, not the last
 * hop's: robots.txt may have been redirected to another host. */
static void obey_crawl_delay(fetch_frame *f)
{
    host_feedback hosts;
    double d = robots_crawl_delay(f->o->rules);
    if (!frontier_hosts(engine_frontier(f->mw->e), &hosts) || d <= 0)
        return;
    if (hosts_crawl_delay(&hosts, hosts_slot(&hosts, f->o->key), d))
        log_info("robots.txt of %s asks a Crawl-delay of %g s: capped at %g s "
                 "(--max-crawl-delay)",
                 f->o->key, d, hosts_max_crawl_delay(&hosts));
    else
        log_info("robots.txt of %s: Crawl-delay %g s", f->o->key, d);
}

/* The rules an answer gives (RFC 9309, 2.3.1); a redirect is followed before this. */
static void settle_rules(fetch_frame *f, const response *r)
{
    origin *o = f->o;
    if (r->status >= 200 && r->status < 300) {
        o->rules = robots_parse(r->body ? r->body : "", r->body ? r->body_len : 0, f->mw->agent);
        log_info("robots.txt of %s: %d, %zu rule(s) for us", o->key, r->status,
                 robots_rule_count(o->rules));
        obey_crawl_delay(f);
    } else if (r->status >= 300 && r->status < 500) {
        o->rules = robots_allow_all(); /* 4xx, or no file within the redirects */
        log_info("robots.txt of %s: %d, everything allowed", o->key, r->status);
    } else {
        o->rules = robots_disallow_all();
        o->why = xasprintf("forbidden by robots.txt (%s answered %d)", f->url, r->status);
        log_info("robots.txt of %s: %d, everything forbidden", o->key, r->status);
    }
}

static int fetch_body(coro *co)
{
    fetch_frame *f = (fetch_frame *)co;
    CORO_BEGIN(co);
    for (;;) {
        { /* robots.txt is archived (--warc) and has connections of its own */
            unsigned flags = REQ_DONT_OBEY_ROBOTS | REQ_ARCHIVE | REQ_SIDE_LANE;
            f->dl = engine_download(f->mw->e, request_new(f->url, 0, flags));
        }
        AWAIT_FUTURE_CATCH(co, task_future(f->dl));
        if (co->err && co->err->kind == CORO_CANCELLED) {
            /* Cancelled: this task (the download then still runs, and the finally
             * frees it) or the download (whoever cancelled it frees it). */
            if (future_done(task_future(f->dl)))
                f->dl = NULL;
            CORO_RAISE_ERR(co);
        }
        if (co->err) { /* no answer after --max-tries attempts: unreachable */
            task_free(f->dl);
            f->dl = NULL;
            f->o->rules = robots_disallow_all();
            /* The user's problem is the host (why first: a certificate problem, say, is
             * what the user must fix); RFC 9309, 2.3.1.4, why nothing is fetched. */
            f->o->why = xasprintf("host could not be reached: %s (fetching %s; RFC 9309: "
                                  "nothing fetched without its robots.txt)",
                                  co->err->msg, f->url);
            log_info("robots.txt of %s unreachable (%s): the host could not be reached, "
                     "everything forbidden",
                     f->o->key, co->err->msg);
            crawl_count(engine_app(f->mw->e)->crawl, ROBOTSTXT_UNREACHABLE, 1);
            coro_error_free(co->err);
            co->err = NULL;
            break;
        }
        {
            response *r = co->value.p;
            task_free(f->dl);
            f->dl = NULL;
            const char *loc = response_header(r, "Location");
            char *next =
                r->status >= 300 && r->status < 400 && loc && f->redirects < ROBOTSTXT_MAX_REDIRECTS
                ? url_resolve(r->url, loc)
                : NULL;
            if (!next)
                settle_rules(f, r);
            response_free(r);
            if (!next)
                break;
            free(f->url);
            f->url = next;
            f->redirects++;
        }
    }
    origin_settled(f->mw, f->o);
    uncount(f);
    fetch_next(f->mw); /* the next origin in line gets this download slot */
    /* Everyone waiting on this origin goes on. */
    future_set_result(&f->o->ready, (coro_value){f->o->rules, 0});
    CORO_END(co);
}

static void fetch_finally(coro *co)
{
    fetch_frame *f = (fetch_frame *)co;
    task_free(f->dl); /* cancelled while downloading */
    free(f->url);
    f->o->fetcher = NULL;
    origin_unhold(f->mw, f->o);
    uncount(f); /* cancelled: the crawl ends, nothing more is started */
}

static const coro_def fetch_def = {"robots.txt", __FILE__, fetch_body, fetch_finally,
                                   sizeof(fetch_frame)};

/* Start the Task that downloads robots_url (taken) for o. */
static void fetch_run(robotstxt *mw, origin *o, char *robots_url)
{
    fetch_frame *f = (fetch_frame *)coro_new(&fetch_def);
    f->mw = mw;
    f->o = o;
    f->url = robots_url;
    f->counted = true;
    mw->fetching++;
    f->slow_timer = selector_call_later(engine_app(mw->e)->loop, ROBOTSTXT_SLOW_MS, slow_fired, f);
    if (o->holds) /* the host's first start: its delay runs from here */
        hosts_first_start(&mw->hosts, o->key);
    o->fetcher = task_new(engine_app(mw->e)->loop, &f->co, "robots.txt");
    task_detach(o->fetcher); /* it frees itself when done */
}

/* Origins in line get the download slots that are free. */
static void fetch_next(robotstxt *mw)
{
    /* Before the engine is open (roots, or URLs put back by --resume, while the crawl
     * is assembled) nothing may be downloaded: its pipeline (--warc) is not open. */
    while (mw->live && mw->fetching < mw->max_fetching && mw->fetching + mw->slow < mw->max_all
           && !list_empty(&mw->to_fetch)) {
        origin *o = list_entry(list_pop_front(&mw->to_fetch), origin, to_fetch);
        char *u = o->robots_url;
        o->robots_url = NULL;
        fetch_run(mw, o, u);
    }
}

/* Start the Task that fetches o's robots.txt (url: any URL of the origin) and
 * resolves o->ready when the rules are known — at once, or when a download slot is
 * free: at most max_fetching (--max-tasks) run at once, as many as when each waited
 * in a worker, now that a parked request no longer holds one (a slow one steps aside:
 * slow_fired). They have libcurl transfers of their own (the glue's side lane,
 * robotstxt_middleware_limits), never the pages'. */
static void fetch_start(robotstxt *mw, origin *o, const char *url)
{
    o->robots_url = url_resolve(url, "/robots.txt");
    list_push_back(&mw->to_fetch, &o->to_fetch);
    fetch_next(mw);
}

/* ---- the answer for one request ---- */

/* Allowed: the chain goes on; forbidden: IgnoreRequest. */
static void decide(const origin *o, const char *path_query, mw_result *out)
{
    if (!out || !path_query) {
        /* A caller's mistake, said in words (the exercise's hints key on them), before
         * it becomes a crash that only a sanitizer would name. */
        fprintf(stderr,
                "crawl-queue: robotstxt: decide() has no result to write to (out %s, "
                "path_query %s)\n",
                out ? "set" : "NULL", path_query ? "set" : "NULL");
        abort();
    }
    robots_verdict v = robots_check(o->rules, path_query);
    if (v.allowed) {
        mw_continue(out);
        return;
    }
    if (o->why)
        mw_ignore(out, "%s", o->why);
    else if (v.over_budget)
        mw_ignore(out,
                  "forbidden by robots.txt (its rules cost over %d octets of "
                  "matching for this URL)",
                  ROBOTS_MAX_WORK);
    else
        mw_ignore(out, "forbidden by robots.txt");
    /* a host that could not be reached is a failure (--fail-on-broken's), not a skip */
    out->robots = strncmp(out->reason, "forbidden by robots.txt", 23) == 0;
}

/* One request waiting for its origin's rules: parked (a Task of its own, req set), or
 * — when the Queue cannot take it back (engine_can_park) — awaited by its worker
 * (path_query and out set). */
typedef struct {
    coro co;
    robotstxt *mw;
    origin *o;
    request *req;     /* the parked request: the Queue gets it back */
    task *t;          /* the Task running this frame, when parked */
    char *path_query; /* awaited by the worker: the URL's, */
    mw_result *out;   /* and where its answer goes */
    list_node link;   /* in o->waiters */
} wait_frame;

/* The rules are known. A parked request goes back in the Queue, where its next visit
 * finds them and is answered at once (politeness: robots.txt was its start on the
 * host; the page waits its turn like any other request). One its worker awaits is
 * answered here. */
static void answer(wait_frame *f)
{
    if (f->req) {
        request *req = f->req;
        f->req = NULL;
        f->o->unparked++;
        engine_unpark(f->mw->e, req);
    } else {
        decide(f->o, f->path_query, f->out);
    }
}

/* EXERCISE stage3-robots: BEGIN (docs/exercises.md) */
/* The entry of key (an origin: "http://host:80"); on the first request to it, a new
 * entry whose Future is pending, and the one download of its robots.txt started
 * (url is the request's URL). */
static origin *origin_rules(robotstxt *mw, const char *key, const char *url)
{
    origin *o = origin_find(mw, key);
    if (!o) {
        o = origin_add(mw, key);
        fetch_start(mw, o, url);
    }
    return o;
}

/* A request's coroutine while the rules are being fetched: wait for them (with every
 * other request to the origin), then answer. */
static int wait_body(coro *co)
{
    wait_frame *f = (wait_frame *)co;
    CORO_BEGIN(co);
    AWAIT_FUTURE(co, &f->o->ready);
    answer(f);
    CORO_END(co);
}
/* EXERCISE stage3-robots: END */

static void wait_finally(coro *co)
{
    wait_frame *f = (wait_frame *)co;
    list_remove(&f->link); /* cancelled (the crawl ends) or done */
    request_free(f->req);  /* cancelled: the URL stays unfinished, to do */
    free(f->path_query);
}

static const coro_def wait_def = {"wait_rules", __FILE__, wait_body, wait_finally,
                                  sizeof(wait_frame)};

/* url's origin, "scheme://host:port" (an IPv6 host in brackets), and its path and
 * query ("/p?q") in *path_query; NULL when url is not an http(s) URL. */
static char *origin_of(const char *url, char **path_query)
{
    char *scheme = NULL, *host = NULL;
    int port = 0;
    if (url_split(url, &scheme, &host, &port, path_query) != 0)
        return NULL;
    bool v6 = strchr(host, ':') != NULL;
    char *key = xasprintf("%s://%s%s%s:%d", scheme, v6 ? "[" : "", host, v6 ? "]" : "", port);
    free(scheme);
    free(host);
    return key;
}

/* req waits for o's rules: parked, a wait_rules Task of its own (the worker goes on
 * with another URL), or else the coroutine its worker awaits (returned). Takes pq. */
static coro *wait_rules(robotstxt *mw, origin *o, const request *req, char *pq, mw_result *out)
{
    wait_frame *f = (wait_frame *)coro_new(&wait_def);
    f->mw = mw;
    f->o = o;
    list_push_back(&o->waiters, &f->link);
    mw->stats->parked++;
    if (!engine_can_park(mw->e)) {
        f->path_query = pq;
        f->out = out;
        return &f->co;
    }
    free(pq);
    f->req = request_copy(req); /* with its depth and referrer */
    f->t = task_new(engine_app(mw->e)->loop, &f->co, "wait_rules");
    task_detach(f->t); /* it frees itself when done */
    mw_park(out);
    return NULL;
}

/* The polite Queue met a host (its first URL, url): its robots.txt is fetched now, in
 * the line of robots.txt downloads, not when a worker takes that URL — a worker busy
 * with pages would otherwise be what starts the next host's robots.txt, and the
 * downloads of rules and of pages would wait on each other. Returns whether a download
 * starts (the Queue counts it as the host's first start). */
static bool prefetch(void *ctx, const char *url)
{
    robotstxt *mw = ctx;
    char *pq = NULL;
    char *key = origin_of(url, &pq);
    free(pq);
    bool fresh = key && !origin_find(mw, key);
    if (fresh) {
        origin *o = origin_add(mw, key);
        o->awaited = o->holds = true;
        fetch_start(mw, o, url);
    }
    free(key);
    return fresh;
}

static coro *process_request(void *self, request *req, mw_result *out)
{
    robotstxt *mw = self;
    mw->live = true; /* a request: the engine runs */
    char *pq = NULL;
    char *key = req->flags & REQ_DONT_OBEY_ROBOTS ? NULL : origin_of(req->url, &pq);
    if (!key) {
        mw_continue(out); /* not an http(s) URL (or told so): not ours to judge */
        return NULL;
    }
    origin *o = origin_find(mw, key);
    if (o && origin_idle(o)
        && selector_now_ms(engine_app(mw->e)->loop) - o->fetched_ms >= mw->max_age_ms) {
        log_info("robots.txt of %s is older than %g s: fetched again", o->key,
                 (double)mw->max_age_ms / 1000);
        mw->stats->expiries++;
        origin_drop(mw, o);
    }
    o = origin_rules(mw, key, req->url);
    free(key);
    if (o)
        o->awaited = false;
    if (!o) {
        mw_ignore(out, "robots.txt: no entry for this origin (origin_rules)");
    } else if (o->rules) {
        if (o->unparked > 0) /* most likely one handed back (else one comes later) */
            o->unparked--;
        origin_touch(mw, o);
        decide(o, pq, out); /* known: at once, no coroutine */
        evict(mw, o);       /* others may have become free to go */
    } else {
        return wait_rules(mw, o, req, pq, out);
    }
    free(pq);
    return NULL;
}

/* ---- the middleware ---- */

static void origin_free(strmap_node *n)
{
    origin *o = strmap_entry(n, origin, node);
    o->holds = false;      /* the crawl ends: nothing more is handed out */
    task_free(o->fetcher); /* still running (its finally clears o->fetcher) */
    list_remove(&o->to_fetch);
    free(o->robots_url);
    while (!list_empty(&o->waiters)) { /* a parked one's finally unlinks its frame */
        wait_frame *f = list_entry(list_first(&o->waiters), wait_frame, link);
        if (f->t)
            task_free(f->t);
        else
            list_remove(&f->link); /* its worker's, freed with it */
    }
    if (list_linked(&o->lru)) {
        o->stats->bytes -= o->bytes;
        list_remove(&o->lru);
    }
    future_clear(&o->ready);
    robots_free(o->rules);
    free(o->why);
    free(o->key);
    free(o);
}

static void robotstxt_free(void *self)
{
    robotstxt *mw = self;
    hosts_watch(&mw->hosts, NULL, NULL);
    strmap_clear(&mw->origins, origin_free);
    strmap_free(&mw->origins);
    free(mw);
}

/* The engine is open: the downloads lined up before (prefetch) start. */
static void engine_opened(void *ctx)
{
    robotstxt *mw = ctx;
    mw->live = true;
    fetch_next(mw);
}

downloader_middleware robotstxt_middleware(engine *e, const char *user_agent)
{
    return robotstxt_middleware_limits(e, user_agent, NULL);
}

downloader_middleware robotstxt_middleware_limits(engine *e, const char *user_agent,
                                                  const robotstxt_limits *lim)
{
    robotstxt *mw = xcalloc(1, sizeof *mw);
    mw->e = e;
    mw->agent = user_agent ? user_agent : http_default_user_agent;
    strmap_init(&mw->origins);
    list_init(&mw->lru);
    list_init(&mw->to_fetch);
    mw->max_fetching = engine_app(e)->opt.max_tasks;
    mw->max_all = ROBOTSTXT_SLOW_FACTOR * mw->max_fetching;
    if (engine_app(e)->curl) /* connections of their own, never the pages' */
        curl_glue_set_side_lane(engine_app(e)->curl, mw->max_all);
    mw->max_bytes = lim && lim->max_bytes ? lim->max_bytes : ROBOTSTXT_MAX_BYTES;
    mw->max_age_ms = lim && lim->max_age_ms ? lim->max_age_ms : ROBOTSTXT_MAX_AGE_MS;
    mw->stats = lim && lim->stats ? lim->stats : &mw->own_stats;
    *mw->stats = (robotstxt_stats){0};
    if (frontier_hosts(engine_frontier(e), &mw->hosts)) /* the polite Queue */
        hosts_watch(&mw->hosts, prefetch, mw);
    engine_on_open(e, engine_opened, mw);
    return (downloader_middleware){.name = "robots.txt",
                                   .self = mw,
                                   .process_request = process_request,
                                   .free = robotstxt_free};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return !s->ignore_robots;
}

static int make(engine *e, const settings *s, downloader_middleware *out, char *err, size_t errlen)
{
    (void)s, (void)err, (void)errlen;
    *out = robotstxt_middleware(e, engine_app(e)->opt.user_agent);
    return 0;
}

/* The descriptor (extension.h): unless --ignore-robots; order 100, first. */
const extension robotstxt_extension = {"robots.txt", EXT_DOWNLOADER_MW, 100, on,
                                       .make_middleware = make};
