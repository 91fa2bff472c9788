/* session.h — crawl-queue's session on the curl transport: the proxy every request
 * goes through (--proxy; without it libcurl reads http_proxy, https_proxy, no_proxy,
 * ...), the logins for the roots' hosts (--user, --netrc), and the cookies (--cookies
 * FILE read before the crawl and written back after it, --cookie NAME=VALUE for the
 * roots' hosts) in one cookie store for every request (curlglue.h). docs/cookies.md.
 * The raw transport refuses these flags (settings.c). */
#ifndef CRAWL_SESSION_H
#define CRAWL_SESSION_H

#include "app.h"

/* Before the first request: the glue's proxy, and its cookie store with the file's
 * cookies and the --cookie ones. 0, or -1 after one line on stderr. */
int session_open(app *a);

/* After the crawl (finished, interrupted or failed): the cookie store back into
 * --cookies' file, replaced whole (cookiejar.h). 0 (also without --cookies), or -1
 * after one line on stderr. */
int session_close(app *a);

#endif
