/* url.h — URL policy: the chapter's fix_url, urljoin + urldefrag (done by libcurl's URL
 * API, never by hand), and crawling.py's host policy (strict / lenient) and --exclude.
 *
 * Every URL the crawler handles is in the normal form libcurl's URL API gives
 * (scheme and host lower case, dot segments removed, empty path as "/"), without a
 * fragment and without user info ("user:password@" is dropped: no password a page or a
 * redirect gives out reaches a report, a log or a trace), so the same page always has
 * the same string. url_normalize goes further, to RFC 3986's normal form (percent-encodings
 * too): the key of a seen set that takes two spellings of a URL as one.
 */
#ifndef CRAWL_URL_H
#define CRAWL_URL_H

#include <stdbool.h>
#include <stddef.h>

/* The chapter's fix_url: a root without "scheme://" gets "http://". Returns the
 * normalized URL without fragment (malloc'd), or NULL with a one-line reason in err
 * ("unsupported scheme 'ftp' in ftp://x/", "not a URL: ..."). Only http and https. */
char *url_fix(const char *root, char *err, size_t errlen);

/* Whether url (as a root is given) names a user or a password, which url_fix drops. */
bool url_has_userinfo(const char *url);

/* Resolve href against base (both may contain anything). Returns the absolute,
 * normalized URL without fragment (malloc'd), or NULL when it cannot be resolved.
 * Any scheme may come out (mailto:, javascript:, ftp:): callers filter with
 * url_policy_allowed. */
char *url_resolve(const char *base, const char *href);
/* url_resolve without its fast path for plain relative paths (url.c): every href through
 * libcurl's URL API. The same answers; for the differential tests. */
char *url_resolve_libcurl(const char *base, const char *href);

/* RFC 3986 section 6.2.2's normal form of url (any URL url_resolve or url_fix gives, or
 * another absolute one), malloc'd, or NULL when it does not parse: what url_resolve
 * does (scheme and host in lower case, the default port dropped, dot segments removed,
 * an empty path as "/"), and then the percent-encodings — of an unreserved character
 * (ALPHA, DIGIT, "-", ".", "_", "~") decoded, any other's hex digits in upper case
 * ("/%7euser%2f" -> "/~user%2F") — and the dot segments that decoding makes ("/%2E%2E/")
 * removed once more. Two spellings of one URL give one string; feeding it back in
 * gives it again. */
char *url_normalize(const char *url);

/* Split an absolute http(s) URL. Returns 0, or -1 if it is not one. Outputs are
 * malloc'd: scheme ("http"/"https"), host (lower case, IPv6 without brackets),
 * port (the default for the scheme when absent), path_query ("/p?q", never empty).
 * Any output may be NULL: that part is not wanted. */
int url_split(const char *url, char **scheme, char **host, int *port, char **path_query);

typedef struct url_policy url_policy;

/* strict: crawling.py's default (a root host, or the same with/without "www.";
 * IP literals match only themselves). lenient: the last two labels of the host.
 * exclude: a regex (pattern.h: PCRE2 with limits), or NULL. Returns NULL with a message
 * in err when the regex does not compile or is refused ("bad exclude regex '(': ..."). */
url_policy *url_policy_new(bool strict, const char *exclude, char *err, size_t errlen);
/* One more exclude pattern (--exclude is repeatable: a URL matching any is excluded).
 * 0, or -1 with the message in err (the policy is unchanged). */
int url_policy_exclude(url_policy *p, const char *exclude, char *err, size_t errlen);
/* Whether url matches an exclude pattern (whatever its host). A match stopped by a
 * limit (pattern.h) counts as a match: the URL is excluded, and a warning says so once
 * per pattern. */
bool url_policy_excluded(const url_policy *p, const char *url);
void url_policy_free(url_policy *p);
/* Allow this root URL's host (as crawling.py's root_domains). Returns 0 or -1. */
int url_policy_add_root(url_policy *p, const char *root_url);
/* crawling.py's url_allowed: not excluded, http or https, host okay. */
bool url_policy_allowed(const url_policy *p, const char *url);

#endif
