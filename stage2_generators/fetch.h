/* fetch.h — the chapter's `fetch` as a coroutine, and the HTTP GET under it.
 *
 * http_get(a, url, sink): one attempt. On the raw transport it is the chapter's
 * connect → send → read_all chain (sockio.h); on the curl transport it waits for a
 * Future that the shared libcurl glue resolves. Raises on failure.
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

coro *http_get(app *a, const char *url, const http_sink *sink);
coro *fetch(app *a, const char *url, int max_redirect, crawl_add_fn add_url, void *ctx);

#endif
