/* transport_opts.h — what the curl transport is told besides each request: the proxy
 * (--proxy, or libcurl's variables), the cookies (--cookies FILE read before the crawl
 * and written back after it, --cookie NAME=VALUE for the roots' hosts); and the raw
 * transport's refusal of a proxy variable it cannot honour. docs/cookies.md. */
#ifndef CRAWL_TRANSPORT_OPTS_H
#define CRAWL_TRANSPORT_OPTS_H

#include "app.h"

/* The raw transport (any stage) cannot go through a proxy: with http_proxy, all_proxy
 * or ALL_PROXY set (not empty; no_proxy "*" exempts every host), one line on stderr and
 * -1 — never a crawl that silently goes round the proxy. 0 otherwise. */
int transport_refuse_proxy_vars(const app *a);

/* a->curl made: its proxy, and its cookie store with the file's cookies and the
 * --cookie ones. 0, or -1 after one line on stderr (the file is not a cookie file, or
 * cannot be read). */
int transport_configure(app *a);

/* After the crawl (finished, interrupted or failed): the cookie store back into
 * --cookies' file, replaced whole (cookiejar.h). 0 (also without --cookies), or -1 after
 * one line on stderr. */
int transport_save_cookies(app *a);

#endif
