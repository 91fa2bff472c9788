/* robotstxt.c — the robots.txt downloader middleware (robotstxt.h), after the second
 * source's reading of Scrapy's RobotsTxtMiddleware: robot_parser keeps one Deferred per
 * netloc, made by the first request and fired by the download of robots.txt; every
 * request meanwhile waits on it.
 *
 * Here the netloc is an origin (scheme://host:port) in a hash table of `origin`
 * entries; the Deferred is the entry's Future, `ready`; the download is a Task of our
 * own (fetch_rules) that awaits engine_download once per hop; and process_request
 * answers at once when the rules are known, or else returns a coroutine (wait_rules)
 * that awaits `ready` — the engine awaits it, as Scrapy's inlineCallbacks chain waits
 * for the Deferred that robot_parser returns.
 */
#include "robotstxt.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "http.h"
#include "log.h"
#include "robots.h"
#include "strmap.h"
#include "url.h"

/* One origin's rules, and the Future everyone waits on until they are known. */
typedef struct origin {
    char *key;                  /* "http://example.com:80" */
    strmap_node node;           /* in the middleware's table, by key */
    future ready;               /* resolved once rules is set */
    robots *rules;              /* NULL while robots.txt is being fetched */
    char *why;                  /* why everything is forbidden, or NULL */
    task *fetcher;              /* fetch_rules, while it runs */
} origin;

typedef struct robotstxt {
    engine *e;
    const char *agent;          /* the User-Agent: its product token picks the group */
    strmap origins;             /* origin by key */
    bool polite;                /* the Queue is polite (frontier_hosts) */
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
    future_init(&o->ready);
    strmap_add(&mw->origins, &o->node, o->key);
    return o;
}

/* ---- fetching robots.txt: one Task per origin ---- */

typedef struct {
    coro co;
    robotstxt *mw;
    origin *o;
    char *url;                  /* the robots.txt URL of this hop */
    int redirects;
    task *dl;                   /* engine_download's Task, while it runs */
} fetch_frame;

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
                 "(--max-crawl-delay)", f->o->key, d, hosts_max_crawl_delay(&hosts));
    else
        log_info("robots.txt of %s: Crawl-delay %g s", f->o->key, d);
}

/* The rules an answer gives (RFC 9309, 2.3.1); a redirect is followed before this. */
static void settle_rules(fetch_frame *f, const response *r)
{
    origin *o = f->o;
    if (r->status >= 200 && r->status < 300) {
        o->rules = robots_parse(r->body ? r->body : "", r->body ? r->body_len : 0,
                                f->mw->agent);
        log_info("robots.txt of %s: %d, %zu rule(s) for us", o->key, r->status,
                 robots_rule_count(o->rules));
        obey_crawl_delay(f);
    } else if (r->status >= 300 && r->status < 500) {
        o->rules = robots_allow_all(); /* 4xx, or no file within the redirects */
        log_info("robots.txt of %s: %d, everything allowed", o->key, r->status);
    } else {
        o->rules = robots_disallow_all();
        o->why = xasprintf("%s answered %d", f->url, r->status);
        log_info("robots.txt of %s: %d, everything forbidden", o->key, r->status);
    }
}

static int fetch_body(coro *co)
{
    fetch_frame *f = (fetch_frame *)co;
    CORO_BEGIN(co);
    for (;;) {
        f->dl = engine_download(f->mw->e, request_new(f->url, 0, REQ_DONT_OBEY_ROBOTS));
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
            f->o->why = xasprintf("%s unreachable: %s", f->url, co->err->msg);
            log_info("robots.txt of %s unreachable (%s): everything forbidden", f->o->key,
                     co->err->msg);
            coro_error_free(co->err);
            co->err = NULL;
            break;
        }
        {
            response *r = co->value.p;
            task_free(f->dl);
            f->dl = NULL;
            const char *loc = response_header(r, "Location");
            char *next = r->status >= 300 && r->status < 400 && loc &&
                                 f->redirects < ROBOTSTXT_MAX_REDIRECTS
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
}

static const coro_def fetch_def = {"robots.txt", __FILE__, fetch_body, fetch_finally,
                                   sizeof(fetch_frame)};

/* Start the Task that fetches o's robots.txt (url: any URL of the origin) and
 * resolves o->ready when the rules are known. */
static void fetch_start(robotstxt *mw, origin *o, const char *url)
{
    fetch_frame *f = (fetch_frame *)coro_new(&fetch_def);
    f->mw = mw;
    f->o = o;
    f->url = url_resolve(url, "/robots.txt");
    o->fetcher = task_new(engine_app(mw->e)->loop, &f->co, "robots.txt");
    task_detach(o->fetcher); /* it frees itself when done */
}

/* ---- the answer for one request ---- */

/* Allowed: the chain goes on; forbidden: IgnoreRequest. */
static void decide(const origin *o, const char *path_query, mw_result *out)
{
    if (robots_allowed(o->rules, path_query))
        mw_continue(out);
    else if (o->why)
        mw_ignore(out, "forbidden by robots.txt (%s)", o->why);
    else
        mw_ignore(out, "forbidden by robots.txt");
}

typedef struct {
    coro co;
    origin *o;
    char *path_query;
    mw_result *out;
    const request *trigger;     /* politeness: the request whose turn the download took */
} wait_frame;

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

/* process_request's coroutine while the rules are being fetched: wait for them (with
 * every other request to the origin), then answer. */
static int wait_body(coro *co)
{
    wait_frame *f = (wait_frame *)co;
    CORO_BEGIN(co);
    AWAIT_FUTURE(co, &f->o->ready);
    decide(f->o, f->path_query, f->out);
    if (f->trigger && f->out->kind == MW_CONTINUE) {
        /* Politeness: robots.txt was this request's start on the host; the page
         * waits its turn in the Queue like any other request. */
        mw_reschedule(f->out, request_copy(f->trigger));
    }
    CORO_END(co);
}
/* EXERCISE stage3-robots: END */

static void wait_finally(coro *co)
{
    free(((wait_frame *)co)->path_query);
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

static coro *process_request(void *self, request *req, mw_result *out)
{
    robotstxt *mw = self;
    char *pq = NULL;
    char *key = req->flags & REQ_DONT_OBEY_ROBOTS ? NULL : origin_of(req->url, &pq);
    if (!key) {
        mw_continue(out); /* not an http(s) URL (or told so): not ours to judge */
        return NULL;
    }
    bool first = !origin_find(mw, key);
    origin *o = origin_rules(mw, key, req->url);
    free(key);
    coro *wait = NULL;
    if (!o) {
        mw_ignore(out, "robots.txt: no entry for this origin (origin_rules)");
    } else if (o->rules) {
        decide(o, pq, out); /* known: at once, no coroutine */
    } else {
        wait_frame *f = (wait_frame *)coro_new(&wait_def);
        f->o = o;
        f->path_query = pq;
        f->out = out;
        f->trigger = first && mw->polite ? req : NULL;
        pq = NULL;
        wait = &f->co;
    }
    free(pq);
    return wait;
}

/* ---- the middleware ---- */

static void origin_free(strmap_node *n)
{
    origin *o = strmap_entry(n, origin, node);
    task_free(o->fetcher); /* still running (its finally clears o->fetcher) */
    future_clear(&o->ready);
    robots_free(o->rules);
    free(o->why);
    free(o->key);
    free(o);
}

static void robotstxt_free(void *self)
{
    robotstxt *mw = self;
    strmap_clear(&mw->origins, origin_free);
    strmap_free(&mw->origins);
    free(mw);
}

downloader_middleware robotstxt_middleware(engine *e, const char *user_agent)
{
    robotstxt *mw = xcalloc(1, sizeof *mw);
    host_feedback hosts;
    mw->e = e;
    mw->polite = frontier_hosts(engine_frontier(e), &hosts);
    mw->agent = user_agent ? user_agent : http_default_user_agent;
    strmap_init(&mw->origins);
    return (downloader_middleware){.name = "robots.txt",
                                   .self = mw,
                                   .process_request = process_request,
                                   .free = robotstxt_free};
}
