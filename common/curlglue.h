/* curlglue.h — libcurl's multi *socket* interface driven by our selector, in the manner
 * of curl's docs/examples/ephiperfifo.c: CURLMOPT_SOCKETFUNCTION registers, modifies and
 * unregisters descriptors with the selector; CURLMOPT_TIMERFUNCTION sets one selector
 * timer; events go to curl_multi_socket_action; finished transfers are read with
 * curl_multi_info_read and reported through the request's done callback.
 *
 * Every request: GET, no automatic redirects, gzip/deflate accepted, connections
 * reused, total connections capped at max_conns, a per-request timeout, TLS verified
 * (cacert adds a CA file to trust). The response goes to an http_sink as it arrives.
 */
#ifndef CRAWL_CURLGLUE_H
#define CRAWL_CURLGLUE_H

#include <stddef.h>

#include "http.h"
#include "selector.h"

typedef struct curl_glue curl_glue;
typedef struct curl_req curl_req;

/* error is NULL when the response was received whole (whatever its status), else one
 * line ("Couldn't connect to server: ...", "Timeout was reached: ..."). The request is
 * freed after the callback returns. */
typedef void (*curl_done_fn)(void *ctx, const char *error);

curl_glue *curl_glue_new(selector *s, int max_conns, const char *cacert, char *err,
                         size_t errlen);
/* Cancels every request still in flight (no done callbacks) and frees the glue. */
void curl_glue_free(curl_glue *g);

/* Start a GET. The sink gets on_head once (before any body) and on_body per chunk;
 * then done(ctx, error) is called, from the selector loop, never from inside this call.
 * timeout_ms 0 means none. max_size > 0 ends the transfer with an error once the body
 * passes that many bytes. Returns NULL only if the request could not be started. */
curl_req *curl_glue_get(curl_glue *g, const char *url, long timeout_ms, long long max_size,
                        const http_sink *sink, curl_done_fn done, void *ctx);
/* Abandon a request: no more sink calls and no done callback. */
void curl_glue_cancel(curl_glue *g, curl_req *r);
/* Requests started and not yet done. */
size_t curl_glue_in_flight(const curl_glue *g);

#endif
