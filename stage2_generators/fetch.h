/* fetch.h — the chapter's `fetch` as a coroutine, and the HTTP GET under it.
 *
 * http_get(a, response, fields): one attempt at crawl_fetch_url(response), into the
 * crawl core's sink, with extra request header fields (http.h; NULL: none — the
 * chapter's crawler sends none, stage 3's engine may). On the raw transport it is the
 * chapter's connect → send → read_all chain (sockio.h), read_all stopping once the
 * body passes --max-size (crawl_fetch_full); on the curl transport it waits for a
 * Future that the shared libcurl glue resolves. Returns {NULL, 1} when the body was
 * cut at --max-size, else {NULL, 0}. Raises on failure.
 *
 * fetch(a, request, add_url, ctx): crawling.py's fetch — up to --max-tries
 * attempts, then the response handed to the shared crawl core, which records it and
 * calls add_url for each new link or the redirect target. Never raises, except
 * CancelledError. Stage 3's workers await this same coroutine.
 */
#ifndef CRAWL_FETCH_H
#define CRAWL_FETCH_H

#include <stdbool.h>

#include "app.h"
#include "coro.h"

coro *http_get(app *a, crawl_fetch *response, const char *const *fields);
coro *fetch(app *a, const crawl_request *r, crawl_add_fn add_url, void *ctx);

/* fetch_response(a, request, fields, keep): fetch's retry loop alone — up to
 * --max-tries attempts; returns {response, truncated} where response is the crawl
 * core's crawl_fetch, not yet recorded (the caller calls crawl_fetch_done or
 * crawl_fetch_truncated, or discards it), truncated 1 when cut at --max-size. After
 * the last failed attempt it raises that attempt's error (an https URL on the raw
 * transport raises at once). keep: FETCH_KEEP_BODY, the response keeps its body
 * (crawl_fetch_take_body); FETCH_KEEP_WIRE, its bytes as they went over the wire
 * (crawl_fetch_take_wire, --warc); FETCH_ONE_TRY, one attempt whatever --max-tries
 * says (stage 3's politeness retries later, through its Queue). Stage 3's engine
 * awaits it between its middlewares. */
enum { FETCH_KEEP_BODY = 1, FETCH_KEEP_WIRE = 2, FETCH_ONE_TRY = 4 };
/* FETCH_SIDE_LANE: on the curl transport, in the glue's side lane (curlglue.h), not
 * counted among the pages' connections (stage 3's robots.txt downloads). */
enum { FETCH_SIDE_LANE = 1 << 8 };
coro *fetch_response(app *a, const crawl_request *r, const char *const *fields, unsigned keep);
/* The same as a POST of body[0..body_len) (copied; its Content-Type among fields): each
 * try sends it (the curl transport; the raw one raises). body NULL: fetch_response. */
coro *fetch_response_post(app *a, const crawl_request *r, const char *const *fields,
                          const char *body, size_t body_len, unsigned keep);

/* The exception text a failed attempt is recorded with (malloc'd): the error's
 * message, or for a timeout "timeout: no complete response within N s". */
char *fetch_error_text(const app *a, const coro_error *e);

/* http_get_into(a, url, fields, sink, full, full_ctx): one attempt into any sink;
 * full(ctx) true means the body passed the size limit (the raw transport stops
 * reading). fields must outlive the coroutine (those of http_get and fetch_response
 * too). Returns {NULL, 1} when cut there, else {NULL, 0}; raises on failure. */
typedef bool (*http_full_fn)(const void *ctx);
coro *http_get_into(app *a, const char *url, const char *const *fields, const http_sink *sink,
                    http_full_fn full, const void *full_ctx);

#endif
