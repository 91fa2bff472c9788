/* cookiesnap.h — a refused response stores no cookie (curlglue.c).
 *
 * libcurl's cookie engine stores each Set-Cookie field as the head arrives, line by
 * line, before the head parser (http_head.h) has seen the whole head: a head refused
 * later (a header section over HTTP_MAX_HEAD bytes, a malformed line) would still have
 * put its cookies in the crawl's jar. So, when a crawl has a jar, each head begins with
 * a snapshot of the jar's cookies for the request's host (its lines, Netscape format,
 * of every domain the host may set a cookie for), the names of the head's Set-Cookie
 * fields are noted, and a refused head puts them back as they were: a cookie the head
 * added or changed is expired (libcurl drops it), one it replaced is added again.
 *
 * Cost: one listing of the jar (CURLINFO_COOKIELIST) per response head, when the crawl
 * has a jar (curl_glue_use_cookies); nothing without one.
 */
#ifndef CRAWL_COOKIESNAP_H
#define CRAWL_COOKIESNAP_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

typedef struct cookie_snap {
    char *host;   /* the request's host, or NULL: no snapshot taken */
    char **lines; /* the jar's lines for host before the head */
    size_t n;
    char **names; /* the names the head's Set-Cookie fields gave */
    size_t nnames;
} cookie_snap;

/* Before a head: the jar's lines (through jar, a handle on the share that holds it) of
 * the domains the host of url domain-matches. Forgets an earlier snapshot. */
void cookie_snap_take(cookie_snap *s, CURL *jar, const char *url);
/* A line of the head (as header_cb gets it): a Set-Cookie field's name is noted. */
void cookie_snap_saw(cookie_snap *s, const char *line, size_t len);
/* The head was refused: the jar's cookies of those names for the host, back to the
 * snapshot. */
void cookie_snap_undo(cookie_snap *s, CURL *jar);
void cookie_snap_clear(cookie_snap *s);

/* Whether a jar line's expiry (not 0: a session cookie) is before now. */
bool cookie_snap_expired(const char *line, time_t now);

/* Whether jar line (Netscape format, "#HttpOnly_" allowed) is of a domain host may
 * hold cookies of (host is it, or a subdomain of it). Its name in *name (len *nlen). */
int cookie_snap_line_matches(const char *line, const char *host, const char **name, size_t *nlen);

#endif
