/* fetch.h — the chapter's `fetch` as a coroutine, and the HTTP GET under it.
 *
 * http_get(a, response): one attempt at crawl_fetch_url(response), into the crawl
 * core's sink. On the raw transport it is the chapter's connect → send → read_all
 * chain (sockio.h), read_all stopping once the body passes --max-size
 * (crawl_fetch_full); on the curl transport it waits for a Future that the shared
 * libcurl glue resolves. Returns {NULL, 1} when the body was cut at --max-size, else
 * {NULL, 0}. Raises on failure.
 *
 * fetch(a, url, max_redirect, add_url, ctx): crawling.py's fetch — up to --max-tries
 * attempts, then the response handed to the shared crawl core, which records it and
 * calls add_url for each new link or the redirect target. Never raises, except
 * CancelledError. Stage 3's workers await this same coroutine.
 */
#ifndef CRAWL_FETCH_H
#define CRAWL_FETCH_H

#include "app.h"
#include "coro.h"

coro *http_get(app *a, crawl_fetch *response);
coro *fetch(app *a, const char *url, int max_redirect, crawl_add_fn add_url, void *ctx);

#endif
