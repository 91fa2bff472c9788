/* curlauth.h — HTTP authentication for the curl glue (a user and password, or
 * ~/.netrc's; basic or digest, as the server asks): the credentials go with a request
 * only to the origins of the roots, never elsewhere (the crawler follows redirects
 * itself, so each hop is a request of its own, judged by its own URL), and they are
 * never shown: a request's Authorization header is redacted in what the glue hands on
 * as the wire's bytes (a WARC archive's). */
#ifndef CRAWL_CURLAUTH_H
#define CRAWL_CURLAUTH_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

typedef struct curl_auth curl_auth;

/* userpwd: "USER:PASSWORD" for HTTP basic or digest auth (copied), or NULL; netrc: else the
 * ~/.netrc entry of the request's host (libcurl's CURLOPT_NETRC). roots: the URLs
 * whose origins (host and port, the scheme's default port when none is written) may
 * get them. NULL when neither is asked for, or no root is a URL. */
curl_auth *curl_auth_new(const char *userpwd, bool netrc, const char *const *roots, size_t n);
void curl_auth_free(curl_auth *a);

/* Set easy's authentication for a request to url: the credentials when url's origin is
 * a root's (basic or digest, whichever a 401 asks for; basic at once when the origin
 * asked for it alone before, curl_auth_learn), else none (the options are reset, as a
 * handle is reused). Returns whether they were set. a may be NULL (none). */
bool curl_auth_apply(const curl_auth *a, CURL *easy, const char *url);

/* After a transfer to url that carried them (curl_auth_apply said so): when the server
 * offered basic auth alone, the next requests to url's origin send it with the request
 * (no 401 first). */
void curl_auth_learn(curl_auth *a, CURL *easy, const char *url);

/* The request head data[0..len) with the value of each Authorization field replaced by
 * "[redacted]": malloc'd, its length in *out_len; NULL when it has none. */
char *curl_auth_redact(const char *data, size_t len, size_t *out_len);

#endif
