/* sitemaps.c — --sitemaps (sitemaps.h): for each root origin, robots.txt's Sitemap
 * lines and /sitemap.xml, read through the streaming parser; their URLs scheduled
 * with engine_crawl, their indexes followed. One coroutine, one download at a time. */
#include "sitemaps.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "log.h"
#include "robots.h"
#include "sitemap_parser.h"
#include "url.h"

#define FEED_CHUNK (64 * 1024)      /* what the parser is given at a time */

/* A sitemap to read, and how deep it sits. */
typedef struct todo {
    char *url;
    int depth;
} todo;

typedef struct {
    coro co;
    engine *e;
    int root;                   /* the root whose origin is being read */
    char *origin;               /* its "scheme://host:port/" robots.txt base */
    char **done;                /* the origins read already (two roots, one host) */
    int ndone;
    todo *list;                 /* this origin's sitemaps: read [next, n) */
    size_t n, cap, next;
    size_t found, scheduled;    /* this file's URLs, and those new to the crawl */
} seed_frame;

static void add_todo(seed_frame *f, const char *url, int depth)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->list[i].url, url) == 0)
            return;                                 /* listed twice: read once */
    if (f->n >= SITEMAPS_MAX_FILES) {
        log_info("sitemaps of %s: more than %d files, %s left out", f->origin,
                 SITEMAPS_MAX_FILES, url);
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

/* The parser's callback: a URL to crawl, or another sitemap to read. */
static void on_loc(void *ctx, sitemap_kind kind, const char *loc)
{
    seed_frame *f = ctx;
    app *a = engine_app(f->e);
    if (kind == SITEMAP_INDEX_ENTRY) {
        int depth = f->list[f->next - 1].depth + 1;
        if (depth < SITEMAPS_MAX_NESTING)
            add_todo(f, loc, depth);
        else
            log_info("sitemap %s: nested deeper than %d, left out", loc, SITEMAPS_MAX_NESTING);
        return;
    }
    f->found++;
    /* A seed: depth 0, found in this sitemap (its referrer). */
    crawl_request r = {loc, a->opt.max_redirect, 0, f->list[f->next - 1].url, NULL};
    if (engine_crawl(f->e, request_from(&r, 0)))
        f->scheduled++;
}

/* A downloaded sitemap through the parser, FEED_CHUNK bytes at a time. */
static void read_sitemap(seed_frame *f, const response *r)
{
    const char *url = f->list[f->next - 1].url;
    if (r->status != 200) {
        log_info("sitemap %s: status %d, skipped", url, r->status);
        return;
    }
    f->found = f->scheduled = 0;
    sitemap_parser *p = sitemap_parser_new(NULL, on_loc, f);
    for (size_t off = 0; off < r->body_len; off += FEED_CHUNK) {
        size_t n = r->body_len - off < FEED_CHUNK ? r->body_len - off : FEED_CHUNK;
        if (sitemap_parser_feed(p, r->body + off, n) < 0)
            break;
    }
    if (sitemap_parser_finish(p) < 0)
        log_info("sitemap %s: %s", url, sitemap_parser_error(p));
    log_info("sitemap %s: %zu URL(s), %zu scheduled", url, f->found, f->scheduled);
    sitemap_parser_free(p);
}

/* Whether f->origin was read for an earlier root (then true); else it is noted. */
static bool origin_done(seed_frame *f)
{
    for (int i = 0; i < f->ndone; i++)
        if (strcmp(f->done[i], f->origin) == 0)
            return true;
    f->done = xreallocarray(f->done, (size_t)f->ndone + 1, sizeof *f->done);
    f->done[f->ndone++] = xstrdup(f->origin);
    return false;
}

/* robots.txt's Sitemap lines (a 2xx answer), then /sitemap.xml. */
static void read_robots(seed_frame *f, const response *r)
{
    if (r && r->status >= 200 && r->status < 300) {
        robots *rb = robots_parse(r->body ? r->body : "", r->body ? r->body_len : 0,
                                  engine_app(f->e)->opt.user_agent
                                      ? engine_app(f->e)->opt.user_agent
                                      : "crawlstages");
        for (size_t i = 0; i < robots_sitemap_count(rb); i++) {
            char *u = url_resolve(f->origin, robots_sitemap(rb, i));
            if (u)
                add_todo(f, u, 0);
            free(u);
        }
        robots_free(rb);
    }
    char *u = url_resolve(f->origin, "/sitemap.xml");
    if (u)
        add_todo(f, u, 0);
    free(u);
}

/* ---- one download at a time: engine_fetch (no record; --header's fields) ---- */

static coro *fetch_file(engine *e, const char *url)
{
    return engine_fetch(e, request_new(url, 5, REQ_DONT_OBEY_ROBOTS));
}

/* fetch_file of the origin's robots.txt (a C local would not survive the await:
 * the URL is made and freed here). */
static coro *fetch_robots(seed_frame *f)
{
    char *url = url_resolve(f->origin, "/robots.txt");
    coro *c = fetch_file(f->e, url ? url : f->origin);
    free(url);
    return c;
}

/* After an AWAIT_CATCH of fetch_file: the response, or NULL after a -v line saying why
 * the download of base+rest failed. A cancellation stays in co->err, for the caller
 * to raise. */
static response *fetched(coro *co, const char *base, const char *rest)
{
    if (!co->err)
        return co->value.p;
    if (co->err->kind != CORO_CANCELLED) {
        log_info("sitemaps: %s%s: %s", base, rest, co->err->msg);
        coro_error_free(co->err);
        co->err = NULL;
    }
    return NULL;
}

static int seed_body(coro *co)
{
    seed_frame *f = (seed_frame *)co;
    app *a = engine_app(f->e);
    CORO_BEGIN(co);
    for (f->root = 0; f->root < a->opt.nroots; f->root++) {
        {
            char why[256];
            char *root = url_fix(a->opt.roots[f->root], why, sizeof why);
            free(f->origin);
            f->origin = root ? url_resolve(root, "/") : NULL;
            free(root);
        }
        if (!f->origin || origin_done(f))
            continue;
        AWAIT_CATCH(co, fetch_robots(f));
        {
            response *r = fetched(co, f->origin, "robots.txt");
            if (co->err)
                CORO_RAISE_ERR(co);
            read_robots(f, r);
            response_free(r);
        }
        while (f->next < f->n) {
            f->next++;
            AWAIT_CATCH(co, fetch_file(f->e, f->list[f->next - 1].url));
            {
                response *r = fetched(co, f->list[f->next - 1].url, "");
                if (co->err)
                    CORO_RAISE_ERR(co);
                if (r)
                    read_sitemap(f, r);
                response_free(r);
            }
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
}

static const coro_def seed_def = {"sitemaps", __FILE__, seed_body, seed_finally,
                                  sizeof(seed_frame)};

coro *sitemaps_seed(engine *e)
{
    seed_frame *f = (seed_frame *)coro_new(&seed_def);
    f->e = e;
    return &f->co;
}
