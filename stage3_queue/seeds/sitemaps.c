/* sitemaps.c — --sitemaps (sitemaps.h): for each root origin, robots.txt's Sitemap
 * lines and /sitemap.xml, read through the streaming parser; their URLs scheduled
 * with engine_crawl, their indexes followed. One coroutine, one download at a time;
 * each download where a page could be fetched (the host policy, --exclude, the
 * robots.txt of its origin, the host's politeness), each file one try. */
#include "sitemaps.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "frontier.h"
#include "log.h"
#include "robots_parser.h"
#include "robotstxt.h"
#include "sitemap_parser.h"
#include "sockio.h"
#include "url.h"
#include "extension.h"

#define FEED_CHUNK      4096 /* what the parser is given at a time */
#define BACKLOG_POLL_MS 20   /* a paused seeder looks at the Queue this often */

/* A sitemap to read, and how deep it sits. */
typedef struct todo {
    char *url;
    int depth;
} todo;

/* An origin's robots.txt, as far as the seeder needs it. */
typedef struct origin_rules {
    char *origin; /* "http://host:8080/" (origin_of) */
    robots *rules;
} origin_rules;

typedef struct {
    coro co;
    engine *e;
    bool ignore_robots; /* --ignore-robots: every sitemap URL allowed */
    int root;           /* the root whose origin is being read */
    char *origin;       /* its "scheme://host:port/" robots.txt base */
    char **done;        /* the origins read already (two roots, one host) */
    int ndone;
    todo *list; /* this origin's sitemaps: read [next, n) */
    size_t n, cap, next;
    size_t found, scheduled; /* this file's URLs, and those new to the crawl */
    origin_rules *rules;     /* the robots.txt files read */
    size_t nrules;
    char *robots_url; /* the robots.txt being downloaded */
    int failures;     /* this origin's downloads that got no answer */
    bool stop;        /* --max-pages reached: no more reading */
    response *resp;   /* the sitemap being parsed */
    sitemap_parser *parser;
    size_t off; /* how much of resp->body the parser was given */
} seed_frame;

/* ---- where a sitemap may be fetched from ---- */

/* url's origin as libcurl writes its root, "http://host:8080/", and its path and query
 * in *path_query (the caller frees both); NULL for a URL that is no http(s) URL. */
static char *origin_of(const char *url, char **path_query)
{
    if (url_split(url, NULL, NULL, NULL, path_query) != 0)
        return NULL;
    char *root = url_resolve(url, "/");
    if (!root && path_query) {
        free(*path_query);
        *path_query = NULL;
    }
    return root;
}

static bool same_origin(const char *a, const char *b)
{
    char *oa = origin_of(a, NULL), *ob = origin_of(b, NULL);
    bool same = oa && ob && strcmp(oa, ob) == 0;
    free(oa);
    free(ob);
    return same;
}

static origin_rules *rules_find(seed_frame *f, const char *origin)
{
    for (size_t i = 0; i < f->nrules; i++)
        if (strcmp(f->rules[i].origin, origin) == 0)
            return &f->rules[i];
    return NULL;
}

/* The rules robots.txt's answer gives (RFC 9309, 2.3.1), kept for its origin: 2xx,
 * the file's; 4xx, or redirects past ROBOTSTXT_MAX_REDIRECTS, everything allowed (as
 * the robots.txt middleware decides); a 5xx or no answer, nothing read from there. */
static robots *rules_learn(seed_frame *f, const char *robots_url, const response *r)
{
    const char *agent = engine_app(f->e)->opt.user_agent;
    robots *rb;
    if (r && r->status >= 200 && r->status < 300)
        rb = robots_parse(r->body ? r->body : "", r->body ? r->body_len : 0,
                          agent ? agent : "crawlstages");
    else if (r && r->status >= 300 && r->status < 500)
        rb = robots_allow_all();
    else
        rb = robots_disallow_all();
    f->rules = xreallocarray(f->rules, f->nrules + 1, sizeof *f->rules);
    f->rules[f->nrules++] = (origin_rules){origin_of(robots_url, NULL), rb};
    return rb;
}

/* Whether a page at url could be fetched as far as the host policy and --exclude go
 * (a -v line when not). */
static bool policy_allows(seed_frame *f, const char *url)
{
    if (crawl_allowed(engine_app(f->e)->crawl, url))
        return true;
    log_info("sitemap %s: not allowed by the host policy or --exclude, left out", url);
    return false;
}

/* ---- the list of sitemaps ---- */

static void add_todo(seed_frame *f, const char *url, int depth)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->list[i].url, url) == 0)
            return; /* listed twice: read once */
    if (f->n >= SITEMAPS_MAX_FILES) {
        log_info("sitemaps of %s: more than %d files, %s left out", f->origin, SITEMAPS_MAX_FILES,
                 url);
        return;
    }
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 8;
        f->list = xreallocarray(f->list, f->cap, sizeof *f->list);
    }
    f->list[f->n++] = (todo){xstrdup(url), depth};
}

static void clear_todo(seed_frame *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->list[i].url);
    f->n = f->next = 0;
}

/* The parser's callback: a URL to crawl, or another sitemap to read — on the index's
 * own origin only (sitemaps.org: an index lists the sitemaps of its site). */
static void on_loc(void *ctx, sitemap_kind kind, const char *loc)
{
    seed_frame *f = ctx;
    app *a = engine_app(f->e);
    if (kind == SITEMAP_INDEX_ENTRY) {
        const todo *index = &f->list[f->next - 1];
        if (!same_origin(loc, index->url))
            log_info("sitemap %s: listed by the index %s on another host, left out", loc,
                     index->url);
        else if (index->depth + 1 >= SITEMAPS_MAX_NESTING)
            log_info("sitemap %s: nested deeper than %d, left out", loc, SITEMAPS_MAX_NESTING);
        else
            add_todo(f, loc, index->depth + 1);
        return;
    }
    f->found++;
    /* A seed: depth 0, found in this sitemap (its referrer). */
    crawl_request r = {loc, a->opt.max_redirect, 0, f->list[f->next - 1].url, NULL};
    if (engine_crawl(f->e, request_from(&r, 0)))
        f->scheduled++;
}

/* Whether --max-pages is reached: what the sitemaps list after that would not be
 * scheduled, so they are read no further. */
static bool max_pages_reached(seed_frame *f)
{
    app *a = engine_app(f->e);
    if (f->stop || a->opt.max_pages <= 0 || crawl_seen_count(a->crawl) < (size_t)a->opt.max_pages)
        return f->stop;
    log_info("sitemaps: --max-pages %ld reached, the rest is left unread", a->opt.max_pages);
    f->stop = true;
    return true;
}

/* The parser's end of a sitemap. */
static void parsed(seed_frame *f)
{
    const char *url = f->list[f->next - 1].url;
    if (sitemap_parser_finish(f->parser) < 0)
        log_info("sitemap %s: %s", url, sitemap_parser_error(f->parser));
    log_info("sitemap %s: %zu URL(s), %zu scheduled", url, f->found, f->scheduled);
    sitemap_parser_free(f->parser);
    f->parser = NULL;
    response_free(f->resp);
    f->resp = NULL;
}

/* Whether the origin was read for an earlier root (then true); else it is noted. */
static bool origin_done(seed_frame *f)
{
    for (int i = 0; i < f->ndone; i++)
        if (strcmp(f->done[i], f->origin) == 0)
            return true;
    f->done = xreallocarray(f->done, (size_t)f->ndone + 1, sizeof *f->done);
    f->done[f->ndone++] = xstrdup(f->origin);
    return false;
}

/* The root's robots.txt (its rules learned): its Sitemap lines (a 2xx answer) — on
 * another host only where the host policy lets a page be — then /sitemap.xml. */
static void read_robots(seed_frame *f, const response *r, const robots *rb)
{
    if (r && r->status >= 200 && r->status < 300) {
        for (size_t i = 0; i < robots_sitemap_count(rb); i++) {
            char *u = url_resolve(f->origin, robots_sitemap(rb, i));
            if (u && policy_allows(f, u))
                add_todo(f, u, 0);
            free(u);
        }
    }
    char *u = url_resolve(f->origin, "/sitemap.xml");
    if (u)
        add_todo(f, u, 0);
    free(u);
}

/* The rules for url, when its origin's robots.txt was read (or the crawl ignores
 * robots.txt: then allowed); NULL when it has yet to be downloaded. *allowed says. */
static bool rules_known(seed_frame *f, const char *url, bool *allowed)
{
    *allowed = true;
    if (f->ignore_robots)
        return true;
    char *pq = NULL;
    char *origin = origin_of(url, &pq);
    origin_rules *o = origin ? rules_find(f, origin) : NULL;
    if (o)
        *allowed = robots_allowed(o->rules, pq);
    else if (!origin)
        *allowed = false; /* no http(s) URL: nothing to fetch */
    free(origin);
    free(pq);
    return o || *allowed == false;
}

/* ---- one download: where the host's politeness says, one try, no record ---- */

typedef struct {
    coro co;
    engine *e;
    char *url;
    int hops;            /* redirects still followed (robots.txt's) */
    bool claimed;        /* holds a start on the polite Queue's host */
    host_feedback hosts; /* the polite Queue's (empty when it is not polite) */
} download_frame;

static int download_body(coro *co)
{
    download_frame *f = (download_frame *)co;
    CORO_BEGIN(co);
    frontier_hosts(engine_frontier(f->e), &f->hosts);
    for (;;) {
        if (f->hosts.ops) {
            AWAIT(co, hosts_claim(&f->hosts, f->url));
            f->claimed = true;
        }
        AWAIT_CATCH(co,
                    engine_fetch(f->e, request_new(f->url, 0, REQ_DONT_OBEY_ROBOTS | REQ_ONE_TRY)));
        if (f->claimed) {
            hosts_release(&f->hosts, f->url);
            f->claimed = false;
        }
        if (co->err)
            CORO_RAISE_ERR(co);
        {
            response *r = co->value.p;
            const char *loc = response_header(r, "Location");
            char *next = f->hops > 0 && r->status >= 300 && r->status < 400 && loc
                ? url_resolve(r->url, loc)
                : NULL;
            if (!next)
                CORO_RETURN(co, r, 0);
            response_free(r);
            free(f->url);
            f->url = next;
            f->hops--;
        }
    }
    CORO_END(co);
}

static void download_finally(coro *co)
{
    download_frame *f = (download_frame *)co;
    if (f->claimed)
        hosts_release(&f->hosts, f->url);
    free(f->url);
}

static const coro_def download_def = {"sitemap download", __FILE__, download_body, download_finally,
                                      sizeof(download_frame)};

/* url's download; hops: the redirects followed (ROBOTSTXT_MAX_REDIRECTS for
 * robots.txt, as RFC 9309 asks; none for a sitemap, whose redirect could lead anywhere). */
static coro *download(seed_frame *f, const char *url, int hops)
{
    download_frame *d = (download_frame *)coro_new(&download_def);
    d->e = f->e;
    d->url = xstrdup(url);
    d->hops = hops;
    return &d->co;
}

/* After an AWAIT_CATCH of download: the response, or NULL after a -v line saying why
 * the download of url failed (a failure of the origin's budget). A cancellation
 * stays in co->err, for the caller to raise. */
static response *fetched(seed_frame *f, const char *url)
{
    coro *co = &f->co;
    if (!co->err)
        return co->value.p;
    if (co->err->kind != CORO_CANCELLED) {
        f->failures++;
        log_info("sitemaps: %s: %s", url, co->err->msg);
        coro_error_free(co->err);
        co->err = NULL;
    }
    return NULL;
}

/* After the AWAIT_CATCH of a robots.txt download (not the root's): its rules learned.
 * -1 when cancelled (co->err, for the caller to raise). */
static int robots_fetched(seed_frame *f)
{
    response *r = fetched(f, f->robots_url);
    if (f->co.err)
        return -1;
    rules_learn(f, f->robots_url, r);
    response_free(r);
    return 0;
}

/* The robots.txt URL of url's origin (a C local would not survive the await). */
static void set_robots_url(seed_frame *f, const char *url)
{
    free(f->robots_url);
    f->robots_url = url_resolve(url, "/robots.txt");
}

/* ---- the seeding ---- */

static int seed_body(coro *co)
{
    seed_frame *f = (seed_frame *)co;
    app *a = engine_app(f->e);
    CORO_BEGIN(co);
    for (f->root = 0; f->root < a->opt.nroots && !max_pages_reached(f); f->root++) {
        {
            char why[256];
            char *root = url_fix(a->opt.roots[f->root], why, sizeof why);
            free(f->origin);
            f->origin = root ? url_resolve(root, "/") : NULL;
            free(root);
        }
        if (!f->origin || origin_done(f))
            continue;
        f->failures = 0;
        set_robots_url(f, f->origin);
        if (!f->robots_url)
            continue;
        AWAIT_CATCH(co, download(f, f->robots_url, ROBOTSTXT_MAX_REDIRECTS));
        {
            response *r = fetched(f, f->robots_url);
            if (co->err)
                CORO_RAISE_ERR(co);
            read_robots(f, r, rules_learn(f, f->robots_url, r));
            response_free(r);
        }
        while (f->next < f->n && !max_pages_reached(f)) {
            if (f->failures >= SITEMAPS_MAX_FAILURES) {
                log_info("sitemaps of %s: %d downloads got no answer, %zu file(s) left "
                         "unread",
                         f->origin, f->failures, f->n - f->next);
                break;
            }
            f->next++;
            if (!policy_allows(f, f->list[f->next - 1].url))
                continue;
            {
                bool allowed;
                if (!rules_known(f, f->list[f->next - 1].url, &allowed)) {
                    /* a Sitemap line on another allowed host: its own robots.txt */
                    set_robots_url(f, f->list[f->next - 1].url);
                    if (!f->robots_url)
                        continue;
                    AWAIT_CATCH(co, download(f, f->robots_url, ROBOTSTXT_MAX_REDIRECTS));
                    if (robots_fetched(f) < 0)
                        CORO_RAISE_ERR(co);
                    rules_known(f, f->list[f->next - 1].url, &allowed);
                }
                if (!allowed) {
                    log_info("sitemap %s: forbidden by robots.txt, left out",
                             f->list[f->next - 1].url);
                    continue;
                }
            }
            AWAIT_CATCH(co, download(f, f->list[f->next - 1].url, 0));
            f->resp = fetched(f, f->list[f->next - 1].url);
            if (co->err)
                CORO_RAISE_ERR(co);
            if (!f->resp)
                continue;
            if (f->resp->status != 200) {
                log_info("sitemap %s: status %d, skipped", f->list[f->next - 1].url,
                         f->resp->status);
                response_free(f->resp);
                f->resp = NULL;
                continue;
            }
            /* The body through the parser, FEED_CHUNK bytes at a time; while the Queue
             * holds more than SITEMAPS_BACKLOG URLs, the seeder waits for the crawl. */
            f->found = f->scheduled = 0;
            f->parser = sitemap_parser_new(NULL, on_loc, f);
            for (f->off = 0; f->off < f->resp->body_len && !max_pages_reached(f);) {
                {
                    size_t left = f->resp->body_len - f->off;
                    size_t n = left < FEED_CHUNK ? left : FEED_CHUNK;
                    int rc = sitemap_parser_feed(f->parser, f->resp->body + f->off, n);
                    f->off += n;
                    if (rc < 0)
                        break;
                }
                while (engine_backlog(f->e) > SITEMAPS_BACKLOG)
                    AWAIT(co, sock_sleep(BACKLOG_POLL_MS));
            }
            parsed(f);
        }
        clear_todo(f);
    }
    CORO_END(co);
}

static void seed_finally(coro *co)
{
    seed_frame *f = (seed_frame *)co;
    clear_todo(f);
    for (int i = 0; i < f->ndone; i++)
        free(f->done[i]);
    free(f->done);
    free(f->list);
    free(f->origin);
    for (size_t i = 0; i < f->nrules; i++) {
        free(f->rules[i].origin);
        robots_free(f->rules[i].rules);
    }
    free(f->rules);
    free(f->robots_url);
    sitemap_parser_free(f->parser);
    response_free(f->resp);
}

static const coro_def seed_def = {"sitemaps", __FILE__, seed_body, seed_finally,
                                  sizeof(seed_frame)};

coro *sitemaps_seed(engine *e, bool ignore_robots)
{
    seed_frame *f = (seed_frame *)coro_new(&seed_def);
    f->e = e;
    f->ignore_robots = ignore_robots;
    return &f->co;
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->sitemaps;
}

static coro *seed(engine *e)
{
    return sitemaps_seed(e, settings_of(engine_app(e))->ignore_robots);
}

/* The descriptor (extension.h): --sitemaps, order 100. */
const extension sitemaps_extension = {"sitemaps", EXT_SEEDS, 100, on, .seed = seed};
