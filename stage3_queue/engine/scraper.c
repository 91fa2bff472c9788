/* scraper.c — the scraper, after Scrapy's scrapy/core/scraper.py and the spider
 * middleware manager of spidermw.py: a response goes through process_spider_input in
 * order, then to the spider's callback, and what the callback made comes back through
 * process_spider_output in reverse order — or, when the callback or an input step
 * raised, through process_spider_exception in reverse order (spider.h has the rules,
 * engine_private.h the managers). The start requests take the same way out, through
 * process_start_requests. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "engine_private.h"
#include "log.h"
#include "url.h"

/* ---- a response through the spider ---- */

typedef struct {
    coro co;
    url_life *u; /* engine_handle's: it owns (and frees) what the spider makes */
    size_t step; /* the step being run (spider_step) */
    coro *call;  /* its coroutine, when it gave one */
} scrape_frame;

/* What the spider is given, for the response about to be recorded. */
static void spider_setup(url_life *u)
{
    size_t n;
    const crawl_link *links = crawl_fetch_links(u->fetch, &n);
    u->sr = (spider_response){.request = u->req,
                              .response = u->resp,
                              .content_type = crawl_fetch_content_type(u->fetch),
                              .encoding = crawl_fetch_encoding(u->fetch),
                              .links = links,
                              .nlinks = n,
                              .max_redirect = u->e->a->opt.max_redirect,
                              .crawl = u->e->a->crawl};
}

static bool is_requisite(const request *r)
{
    return r->callback && strcmp(r->callback, SPIDER_CB_REQUISITE) == 0;
}

/* The spider's step k, of 3 * n + 1 for n spider middlewares: process_spider_input in
 * order (while there is no error), the callback (unless there is one, or the response
 * is a requisite's), process_spider_exception in reverse order (while there is an
 * error: one that recovers ends the chain), process_spider_output in reverse order.
 * Returns the call's coroutine, or NULL (done, or skipped). */
static coro *spider_step(url_life *u, size_t k)
{
    typedef coro *(*method)(void *, const spider_response *, spider_outputs *);
    engine *e = u->e;
    size_t n = e->nsmw;
    spider_middleware *m;
    method fn;
    if (k < n) {
        m = &e->smw[k];
        fn = u->out.error ? NULL : m->process_spider_input;
    } else if (k == n) {
        bool skip = u->out.error || is_requisite(u->req);
        return skip ? NULL : e->sp.parse(e->sp.self, &u->sr, &u->out);
    } else if (k <= 2 * n) {
        m = &e->smw[2 * n - k];
        fn = u->out.error ? m->process_spider_exception : NULL;
    } else {
        m = &e->smw[3 * n - k];
        fn = m->process_spider_output;
    }
    return fn ? fn(m->self, &u->sr, &u->out) : NULL;
}

/* The spider's steps in turn, each a call that may wait; one that raises (or fails)
 * sets the error, which the steps after it see. */
static int scrape_body(coro *co)
{
    scrape_frame *f = (scrape_frame *)co;
    url_life *u = f->u;
    CORO_BEGIN(co);
    spider_setup(u);
    for (f->step = 0; f->step < 3 * u->e->nsmw + 1; f->step++) {
        if ((f->call = spider_step(u, f->step)))
            AWAIT_CATCH(co, f->call);
        if (co->err && co->err->kind == CORO_CANCELLED)
            CORO_RAISE_ERR(co);
        if (co->err) { /* its message is the error */
            spider_fail(&u->out, "%s", co->err->msg);
            coro_error_free(co->err);
            co->err = NULL;
        }
    }
    CORO_END(co);
}

static const coro_def scrape_def = {"scraper", __FILE__, scrape_body, NULL, sizeof(scrape_frame)};

coro *scraper_scrape(url_life *u)
{
    scrape_frame *f = (scrape_frame *)coro_new(&scrape_def);
    f->u = u;
    return &f->co;
}

/* ---- the start requests ---- */

typedef struct {
    coro co;
    engine *e;
    size_t i;
    spider_outputs out;
} start_frame;

/* The roots, as crawl_add_roots makes them: depth 0, no referrer. */
static void root_requests(engine *e, spider_outputs *out)
{
    const crawl_options *o = &e->a->opt;
    for (int i = 0; i < o->nroots; i++) {
        char why[256];
        char *root = url_fix(o->roots[i], why, sizeof why);
        if (!root) {
            log_warn("skipping root: %s", why);
            continue;
        }
        spider_emit_request(out, request_new(root, o->max_redirect, REQ_ROOT));
        free(root);
    }
}

static int start_body(coro *co)
{
    start_frame *f = (start_frame *)co;
    engine *e = f->e;
    CORO_BEGIN(co);
    if (e->sp.start_requests) {
        coro *call = e->sp.start_requests(e->sp.self, &f->out);
        if (call)
            AWAIT(co, call);
        for (size_t k = 0; k < f->out.n; k++)
            if (f->out.v[k].kind == SPIDER_REQUEST)
                f->out.v[k].request->flags |= REQ_ROOT;
    } else {
        root_requests(e, &f->out);
    }
    for (f->i = e->nsmw; f->i-- > 0;) {
        spider_middleware *m = &e->smw[f->i];
        coro *call = m->process_start_requests ? m->process_start_requests(m->self, &f->out) : NULL;
        if (call)
            AWAIT(co, call);
    }
    for (size_t k = 0; k < f->out.n; k++) {
        spider_output *o = &f->out.v[k];
        if (o->kind == SPIDER_REQUEST) {
            engine_crawl(e, o->request);
            o->request = NULL;
        } else {
            log_warn("a start request that is an item is dropped: %s", o->item);
        }
    }
    CORO_END(co);
}

static void start_finally(coro *co)
{
    spider_outputs_clear(&((start_frame *)co)->out);
}

static const coro_def start_def = {"start_requests", __FILE__, start_body, start_finally,
                                   sizeof(start_frame)};

coro *scraper_start_requests(engine *e)
{
    start_frame *f = (start_frame *)coro_new(&start_def);
    f->e = e;
    return &f->co;
}
