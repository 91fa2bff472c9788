/* requisites.c — the page-requisites spider middleware (requisites.h). The page's body
 * is read again by the link parser in its requisites mode (libxml2's push parser, with
 * its bounds on memory and work), a stylesheet's by the CSS tokenizer. It answers at
 * once. */
#include "requisites.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "css_urls.h"
#include "links.h"
#include "mirror.h"
#include "seen.h"
#include "url.h"
#include "extension.h"

/* The requisites of one response, in document order, each once, each at depth. */
typedef struct found {
    const spider_response *resp;
    int depth;
    seen_set *urls;
    spider_outputs reqs;
} found;

static bool is_web(const char *url)
{
    return strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
}

/* An absolute URL (the parser resolved it, or on_css did): kept once, when http(s). */
static void on_url(void *ctx, const char *url)
{
    found *f = ctx;
    bool added;
    if (!is_web(url))
        return; /* data:, javascript:, ... */
    seen_intern(f->urls, url, &added);
    if (!added)
        return;
    const request *page = f->resp->request;
    crawl_request cr = {url, f->resp->max_redirect, f->depth, page->url, SPIDER_CB_REQUISITE};
    spider_emit_request(&f->reqs, request_from(&cr, REQ_ANY_HOST));
}

/* A stylesheet's url(), as written: resolved against the stylesheet's URL. */
static void on_css(void *ctx, const char *href)
{
    found *f = ctx;
    char *url = url_resolve(f->resp->request->url, href);
    if (url)
        on_url(f, url);
    free(url);
}

static bool is_type(const spider_response *resp, const char *type)
{
    return resp->content_type && strcmp(resp->content_type, type) == 0;
}

/* A page's requisites; a stylesheet's (a requisite's too: what it imports is needed as
 * much); not those of a requisite that turns out to be a page (an <img src> naming
 * HTML): requisites are one page deep, as wget -p's. A page's requisites have its
 * depth; a requisite's requisites (a stylesheet's @import and url()) one more than it,
 * so that --max-depth ends a chain of stylesheets that import one another. */
static void find_requisites(found *f)
{
    const spider_response *resp = f->resp;
    const response *r = resp->response;
    if (!r || r->status != 200 || !r->body)
        return;
    const char *cb = resp->request->callback;
    bool requisite = cb && strcmp(cb, SPIDER_CB_REQUISITE) == 0;
    f->depth = resp->request->depth + (requisite ? 1 : 0);
    if (!requisite && (is_type(resp, "text/html") || is_type(resp, "application/xhtml+xml"))) {
        links_parser *lp = links_new_requisites(resp->request->url, resp->encoding, on_url, f);
        links_feed(lp, r->body, r->body_len);
        links_finish(lp);
        links_free(lp);
    } else if (is_type(resp, "text/css")) {
        css_urls(r->body, r->body_len, on_css, f);
    }
}

static coro *process_spider_output(void *self, const spider_response *resp, spider_outputs *out)
{
    (void)self;
    found f = {.resp = resp, .urls = seen_new()};
    find_requisites(&f);
    if (f.reqs.n > 0) {
        /* the spider's requests for the same URLs go: the requisite is the one kept */
        for (size_t i = out->n; i-- > 0;)
            if (out->v[i].kind == SPIDER_REQUEST && seen_has(f.urls, out->v[i].request->url))
                spider_drop(out, i);
        spider_prepend(out, &f.reqs); /* the requisites first */
    }
    spider_outputs_clear(&f.reqs);
    seen_free(f.urls);
    return NULL;
}

spider_middleware requisites_middleware(engine *e)
{
    engine_record_fields(e, FETCH_STAT_REQUISITE);
    return (spider_middleware){
        .name = "requisites", .wants_body = true, .process_spider_output = process_spider_output};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->requisites || mirror_requested(); /* --mirror needs them */
}

static int make(engine *e, const settings *s, spider_middleware *out, char *err, size_t errlen)
{
    (void)s, (void)err, (void)errlen;
    *out = requisites_middleware(e);
    return 0;
}

/* The descriptor (extension.h): --requisites, order 950: its
 * process_spider_output runs first, adding the requisites and taking the links that
 * are requisites too out of the links. */
const extension requisites_extension = {"requisites", EXT_SPIDER_MW, 950, on,
                                        .make_spider_middleware = make};
