/* curlglue.h — libcurl's multi *socket* interface driven by our selector, in the manner
 * of curl's docs/examples/ephiperfifo.c: CURLMOPT_SOCKETFUNCTION registers, modifies and
 * unregisters descriptors with the selector; CURLMOPT_TIMERFUNCTION sets one selector
 * timer; events go to curl_multi_socket_action; finished transfers are read with
 * curl_multi_info_read and reported through the request's done callback.
 *
 * Every request: GET, no automatic redirects, gzip/deflate accepted, connections
 * reused, total connections capped at max_conns, a per-request timeout, TLS verified
 * (cacert adds a CA file to trust; curl_glue_set_insecure: not), HTTP/1.1 (or HTTP/2
 * over https: curl_glue_set_http2). The response goes to an http_sink as it arrives.
 */
#ifndef CRAWL_CURLGLUE_H
#define CRAWL_CURLGLUE_H

#include <stdbool.h>
#include <stddef.h>

#include "http.h"
#include "selector.h"

typedef struct curl_glue curl_glue;
typedef struct curl_req curl_req;

/* error is NULL when the response was received whole (whatever its status), else one
 * line ("Couldn't connect to server: ...", "Timeout was reached: ..."). The request is
 * freed after the callback returns. */
typedef void (*curl_done_fn)(void *ctx, const char *error);

/* The error a done callback gets when the body passed max_size: the sink got exactly
 * max_size bytes and the transfer was stopped. Compare by pointer
 * (error == curl_glue_truncated) to tell it from a network failure. */
extern const char curl_glue_truncated[];

/* max_conns (> 0) caps the transfers handed to libcurl at once, and the connections
 * open at once, in total and per host (up to that many idle ones are kept for reuse) —
 * never more than the open-file limit allows (net_fd_budget): the other requests wait
 * in the glue's queue, in order, and go to libcurl as transfers end, at most 256 per
 * turn of the loop. cacert: a CA bundle file to trust, or NULL. On failure returns NULL
 * with a one-line message in err. */
curl_glue *curl_glue_new(selector *s, int max_conns, const char *cacert, char *err, size_t errlen);
/* The User-Agent of the requests started from now on (copied); NULL: the default,
 * http_default_user_agent. */
void curl_glue_set_user_agent(curl_glue *g, const char *user_agent);
/* From now on, over https: HTTP/2 when the server offers it (ALPN), the requests to
 * one host multiplexed on one connection (libcurl's CURLPIPE_MULTIPLEX; a new
 * request waits for the connection being made, CURLOPT_PIPEWAIT); the head's version
 * is then "HTTP/2". false (the default): HTTP/1.1 only. http stays HTTP/1.1. */
void curl_glue_set_http2(curl_glue *g, bool http2);
/* From now on, true: certificates and host names are not checked (curl -k). */
void curl_glue_set_insecure(curl_glue *g, bool insecure);
/* Cancels every request still in flight (no done callbacks), closes the connections,
 * unregisters every descriptor and timer it had in the selector, and frees the glue.
 * Not to be called from inside a sink or done callback of this glue. */
void curl_glue_free(curl_glue *g);

/* Start a GET (http and https URLs only), with extra header fields (http.h: "Name:
 * value" each, NULL-terminated; copied) or NULL. The sink gets on_connect (when set)
 * once the connection, new or reused, is ready (libcurl >= 7.80); on_head once, for the
 * final response (1xx interim heads are skipped), before any body; then on_body per
 * chunk of decoded body; then done(ctx, error) is called, from the selector loop, never
 * from inside this call. The head's strings live until on_head returns.
 * timeout_ms 0 means none. max_size > 0 ends the transfer with curl_glue_truncated once
 * the body passes that many bytes. A request that waits in the queue, or whose transfer
 * found no free descriptor for its socket (EMFILE/ENFILE) and waits to start again
 * (first in line, as many times as needed), is not in flight: its sink's on_wait_fd
 * hears of it. Returns NULL only if the request could not be made (a URL libcurl
 * refuses, a field that fails http_field_check; done is then never called). May be
 * called from any callback, sink or done. */
curl_req *curl_glue_get(curl_glue *g, const char *url, const char *const *fields, long timeout_ms,
                        long long max_size, const http_sink *sink, curl_done_fn done, void *ctx);
/* Lanes. The requests of curl_glue_get go in the pages' lane, whose budget is
 * max_conns; curl_glue_set_side_lane(g, n) opens a side lane of n transfers at once
 * (and as many more connections), with a queue of its own, for requests the crawl makes
 * for itself before its pages (robots.txt): they never take a connection from the
 * pages, nor wait behind them — a hundred robots.txt files dripping a byte a second
 * leave every page connection free. curl_glue_get_lane(g, CURL_LANE_SIDE, ...) starts
 * one there (in the pages' lane while g has no side lane). The side lane gets what the
 * open-file limit leaves beside the pages' (net_fd_budget; none: no side lane); out of
 * descriptors anyway, each lane waits for its own transfers to end. */
enum { CURL_LANE_PAGES = 0, CURL_LANE_SIDE = 1, CURL_LANES = 2 };
void curl_glue_set_side_lane(curl_glue *g, int max_side);
curl_req *curl_glue_get_lane(curl_glue *g, int lane, const char *url, const char *const *fields,
                             long timeout_ms, long long max_size, const http_sink *sink,
                             curl_done_fn done, void *ctx);
/* A POST of body[0..body_len) (copied; its Content-Type is one of fields), otherwise as
 * curl_glue_get_lane; body NULL: a GET. */
curl_req *curl_glue_post_lane(curl_glue *g, int lane, const char *url, const char *const *fields,
                              const char *body, size_t body_len, long timeout_ms,
                              long long max_size, const http_sink *sink, curl_done_fn done,
                              void *ctx);
/* Abandon a request: no more sink calls and no done callback. Safe from inside the
 * request's own sink callbacks, from any other request's callbacks, and from outside;
 * r must not have finished (its done callback returned) already. */
void curl_glue_cancel(curl_glue *g, curl_req *r);
/* Requests started and not yet done. */
size_t curl_glue_in_flight(const curl_glue *g);
/* How this libcurl resolves names: "threaded (...)", "c-ares (...)" or "synchronous
 * (...)" (curl_version_info's CURL_VERSION_ASYNCHDNS). Every glue shares one DNS
 * cache (a CURLSH). */
const char *curl_glue_resolver(void);

/* Proxies: every request of g goes through proxy (CURLOPT_PROXY, copied);
 * NULL: libcurl's choice — the variables http_proxy, https_proxy, all_proxy (ALL_PROXY,
 * HTTPS_PROXY) and no_proxy (NO_PROXY), read by libcurl for each request. An https
 * proxy is checked with the CA file of curl_glue_new too. curl_glue_proxy_check: NULL
 * when url names a proxy libcurl can use (SCHEME://[USER:PASSWORD@]HOST[:PORT], scheme
 * http, https, socks4, socks4a, socks5 or socks5h), else why not in a few words (never
 * quoting url, which may hold a password). */
const char *curl_glue_proxy_check(const char *url);
void curl_glue_set_proxy(curl_glue *g, const char *proxy);

/* Authentication (curlauth.h): every request started from now on to
 * the origin of one of roots[0..n) (host and port) carries userpwd ("USER:PASSWORD",
 * copied) as HTTP basic or digest auth (whichever its 401 asks for), or with netrc the
 * ~/.netrc entry of its host; a request to any other origin carries none, a redirect's
 * target included. */
void curl_glue_set_auth(curl_glue *g, const char *userpwd, bool netrc, const char *const *roots,
                        size_t n);

/* Cookies: curl_glue_use_cookies turns libcurl's cookie engine on
 * for every request started from now on, with one cookie store for all of them (a
 * CURLSH sharing CURL_LOCK_DATA_COOKIE): a cookie a server sets on one response goes
 * with the next request to its domain and path, whichever handle makes it, and to no
 * other host (RFC 6265's rules, libcurl's). The same share caches names, for the whole
 * crawl, at libcurl's usual 60 s (not the DNS share above, which is replaced as it
 * goes). curl_glue_add_cookie adds one cookie: a line of a Netscape cookie file
 * (cookiejar.h), or "Set-Cookie: ..." with a domain; 0 or -1. curl_glue_cookies calls
 * each with every cookie the store holds, one Netscape line each, and returns how many.
 */
void curl_glue_use_cookies(curl_glue *g);
int curl_glue_add_cookie(curl_glue *g, const char *line);
size_t curl_glue_cookies(curl_glue *g, void (*each)(void *ctx, const char *line), void *ctx);

#endif
