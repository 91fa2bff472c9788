/* spider.h — the Spider and the spider middleware: the part of Scrapy's engine that the
 * second source of this course (Scrapy's asynchronous extension points, its "Spider
 * Middleware" section) puts between the engine and the user's parse code.
 *
 * A Spider turns a response into OUTPUTS: requests to crawl (Scrapy's engine.crawl,
 * here engine_crawl through the Queue) and items (a JSON object, as text). Its parse
 * method follows the engine's rule (engine.h): it returns NULL when its outputs are
 * written, or a coroutine that the engine awaits — a spider that waits for a download
 * of its own (engine_fetch) is such a coroutine, and other workers go on meanwhile.
 *
 * Where the spider runs, in engine_handle (engine.h has the whole life of a URL):
 *
 *   ... download, process_response (downloader middlewares) ...
 *   process_spider_input      spider middlewares in order; an error skips the callback
 *   the callback              spider->parse(response, callback name), outputs in out
 *   process_spider_exception  in reverse order, when input or the callback failed; one
 *                             that clears the error (spider_recover) ends the chain
 *   process_spider_output     in reverse order, over the outputs (drop, change, add)
 *   record                    the URL's record (a spider error that stayed is its
 *                             "exception"; the record's num_urls count the page's
 *                             links as always)
 *   outputs                   each request through engine_crawl (the seen set, host
 *                             policy, --exclude, --max-pages, then robots.txt and
 *                             politeness when it is fetched); each item through the
 *                             item pipeline's process_spider_item
 *   process_item              the record through the item pipeline, as before
 *
 * The spider sees every response the engine records, whatever its status (a redirect
 * too, though the crawl core follows it: the target keeps the request's depth and
 * callback); a callback that wants only 2xx checks the status. Failed downloads reach
 * no spider. A page requisite's response (callback SPIDER_CB_REQUISITE) reaches the
 * spider middlewares but no callback. Until the record, the fetch stays open in the
 * crawl core: a callback that waits keeps it in flight (peak_in_flight, the span in
 * --trace-events). The page's links are followed only when the spider emits them:
 * the default spider (spider_default, below) emits every allowed link in page order,
 * which is the chapter's crawler.
 *
 * Spider middleware (EXT_SPIDER_MW rows in registry.c, code in stage3_queue/spidermw/):
 * every method may be NULL, and each follows the same NULL-or-coroutine rule.
 * process_start_requests runs (in reverse order, as Scrapy's) over the start requests
 * when some middleware has one or the spider has start_requests; otherwise the roots
 * go to the Queue as in the chapter.
 */
#ifndef CRAWL_SPIDER_H
#define CRAWL_SPIDER_H

#include <stdbool.h>
#include <stddef.h>

#include "coro.h"
#include "request.h"

/* The callback name of a page requisite (--requisites): a name no spider can define, so
 * that the Queue, --state and --frontier keep it with the URL as any callback. */
#define SPIDER_CB_REQUISITE "@requisite"

/* One link the crawl core's link parser found on the page (crawl.h's crawl_link):
 * url — absolute, without fragment, each once per page, in page order — and allowed
 * (by the host policy and --exclude). */
typedef crawl_link spider_link;

/* What a callback is given. Everything is valid until the callback (its coroutine,
 * when it returned one) is over. */
typedef struct spider_response {
    const request *request;   /* url, depth, referrer, callback (NULL: parse) */
    const response *response; /* url, status, headers (as they came), and the body
                                 * (at most --max-size bytes) when the spider or a
                                 * spider middleware wants_body, else NULL */
    const char *content_type; /* media type, lower case, or NULL */
    const char *encoding;     /* charset, lower case, or NULL */
    const spider_link *links; /* the link parser's (n of them; none unless the page
                                 * was a 200 of a type it reads) */
    size_t nlinks;
    int max_redirect; /* --max-redirect, for a new request */
    crawl *crawl;     /* where a link not followed is counted (crawl_skip), or NULL */
} spider_response;

/* One output: a request (owned) or an item (a JSON object's text, owned). */
typedef enum { SPIDER_REQUEST, SPIDER_ITEM } spider_output_kind;

typedef struct spider_output {
    spider_output_kind kind;
    request *request; /* SPIDER_REQUEST */
    char *item;       /* SPIDER_ITEM: e.g. {"title": "..."} */
} spider_output;

/* What a callback (and the middlewares around it) write: the outputs, in order, and
 * the error, if any ("spider error: FILE:LINE: message" is the Lua spider's). */
typedef struct spider_outputs {
    spider_output *v;
    size_t n, cap;
    char *error; /* NULL: no error */
} spider_outputs;

/* The default spider's parse, the chapter's crawler: every allowed link of the page, in
 * page order, one deeper, the page as referrer, no callback. */
void spider_follow_links(spider_outputs *out, const spider_response *resp);

/* Append a request (takes req) or an item (copies json; one JSON object). */
void spider_emit_request(spider_outputs *out, request *req);
void spider_emit_item(spider_outputs *out, const char *json);
/* Scrapy's response.follow: url resolved against the response's URL (fragment
 * dropped), one deeper, the response's URL as referrer, callback (NULL: parse).
 * Returns false (and emits nothing) when url does not resolve to http(s). */
bool spider_follow(spider_outputs *out, const spider_response *resp, const char *url,
                   const char *callback);
/* Set the error (one line; replaces an earlier one), or clear it. */
void spider_fail(spider_outputs *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void spider_recover(spider_outputs *out);
/* Remove output i (freeing it), keeping the others' order. */
void spider_drop(spider_outputs *out, size_t i);
/* Move front's outputs (not its error) before out's, in their order; front is left
 * without outputs. */
void spider_prepend(spider_outputs *out, spider_outputs *front);
/* Free every output and the error; out is empty again. */
void spider_outputs_clear(spider_outputs *out);

typedef struct spider {
    const char *name;
    void *self;
    bool wants_body; /* the body in spider_response.response */
    /* Scrapy's start_requests: the crawl's first requests into out (the roots are in
     * engine_app(e)->opt.roots). NULL: the roots, each at depth 0. */
    coro *(*start_requests)(void *self, spider_outputs *out);
    /* The callback: resp->request->callback names it (NULL: Scrapy's parse). Writes
     * out; an error is spider_fail, or the coroutine raising (its message becomes
     * the error). NULL return: done; else a coroutine to await. */
    coro *(*parse)(void *self, const spider_response *resp, spider_outputs *out);
    void (*free)(void *self);
} spider;

/* The default spider (the engine has it until engine_set_spider). */
spider spider_default(void);
bool spider_is_default(const spider *s);

typedef struct spider_middleware {
    const char *name;
    void *self;
    bool wants_body;
    /* Each may be NULL (skipped); NULL return: done at once, else a coroutine to await.
     * process_spider_input: before the callback; spider_fail(out, ...) stops it (the
     * callback is not called; process_spider_exception runs).
     * process_spider_output: out holds the outputs so far; drop, change or add.
     * process_spider_exception: out->error is set; spider_recover (and outputs of
     * its own) ends the chain.
     * process_start_requests: out holds the start requests. */
    coro *(*process_spider_input)(void *self, const spider_response *resp, spider_outputs *out);
    coro *(*process_spider_output)(void *self, const spider_response *resp, spider_outputs *out);
    coro *(*process_spider_exception)(void *self, const spider_response *resp, spider_outputs *out);
    coro *(*process_start_requests)(void *self, spider_outputs *out);
    void (*free)(void *self);
} spider_middleware;

#endif
