/* url.c — URL policy on top of libcurl's URL API: fix_url for roots, urljoin +
 * urldefrag for links, and crawling.py's host_okay / url_allowed.
 *
 * Every URL that comes out goes through normalize(): parsed by libcurl (dot segments
 * removed, empty path as "/", spaces and non-ASCII bytes percent-encoded), host made
 * lower case, default port, fragment and user info ("user:password@") dropped. Feeding an
 * output back in gives the same string, so one page has one string in the seen set. */
#include "url.h"

#include "alloc.h"
#include "libmem.h"
#include "log.h"
#include "pattern.h"
#include "seen.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every string we parse may hold spaces or raw UTF-8: let libcurl encode them rather
 * than refuse them, and accept any scheme (the policy filters them later). */
#define PARSE_FLAGS (CURLU_NON_SUPPORT_SCHEME | CURLU_URLENCODE | CURLU_ALLOW_SPACE)

/* ---- small string helpers ---- */

static bool is_c0_or_space(unsigned char c)
{
    return c <= 0x20;
}

static void ascii_lower(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
}

/* What a browser does to an href before parsing it: drop leading and trailing C0
 * controls and spaces, remove tabs and newlines inside; libcurl refuses the other
 * control bytes, so percent-encode those. Returns a malloc'd string. */
static char *clean_ref(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && is_c0_or_space((unsigned char)s[n - 1]))
        n--;
    while (n > 0 && is_c0_or_space((unsigned char)*s)) {
        s++;
        n--;
    }
    char *out = xmalloc(3 * n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c < 0x20 || c == 0x7f)
            o += sprintf(o, "%%%02x", c);
        else
            *o++ = (char)c;
    }
    *o = '\0';
    return out;
}

/* Whether clean_ref would give s back unchanged: the usual case, which then costs no
 * copy (an href or URL without spaces and control bytes). */
static bool is_clean(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p == 0x7f)
            return false;
    return true;
}

/* clean_ref(s), or s itself when it is clean already; *owned is what to free. */
static const char *cleaned(const char *s, char **owned)
{
    *owned = NULL;
    if (is_clean(s))
        return s;
    return *owned = clean_ref(s);
}

/* Set h's URL (absolute, or relative to what h already holds) from raw text. */
static bool set_url(CURLU *h, const char *text)
{
    char *owned;
    const char *clean = cleaned(text, &owned);
    CURLUcode rc = curl_url_set(h, CURLUPART_URL, clean, PARSE_FLAGS);
    free(owned);
    return rc == CURLUE_OK;
}

/* Make h's host lower case. Setting the host forgets an IPv6 zone id ("%25eth0"),
 * so that is put back. */
static bool lower_host(CURLU *h)
{
    char *host = NULL, *zone = NULL;
    if (curl_url_get(h, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        return true; /* no host (file:///...): nothing to do */
    char *lower = xstrdup(host);
    bool ok = true;
    ascii_lower(lower);
    if (strcmp(lower, host) != 0) {
        curl_url_get(h, CURLUPART_ZONEID, &zone, 0);
        ok = curl_url_set(h, CURLUPART_HOST, lower, 0) == CURLUE_OK
            && (!zone || curl_url_set(h, CURLUPART_ZONEID, zone, 0) == CURLUE_OK);
    }
    free(lower);
    curl_free(host);
    curl_free(zone);
    return ok;
}

/* libcurl writes a numeric IPv4 host in its usual form ("0x7f.1" -> "127.0.0.1"),
 * but not when the host was percent-encoded ("%30x7f.1" gives "0x7f.1"), so that
 * output would change when fed back in. Such a host (only hex digits, 'x' and dots,
 * not already a.b.c.d in decimal) is parsed once more. Returns false on failure. */
static bool numeric_host_again(CURLU *h)
{
    char *host = NULL, *u = NULL;
    if (curl_url_get(h, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        return true;
    bool maybe = host[0] != '\0' && host[strspn(host, "0123456789abcdefABCDEFxX.")] == '\0';
    if (maybe) {
        unsigned a, b, c, d;
        char canon[16], extra;
        if (sscanf(host, "%3u.%3u.%3u.%3u%c", &a, &b, &c, &d, &extra) == 4 && a < 256 && b < 256
            && c < 256 && d < 256) {
            snprintf(canon, sizeof canon, "%u.%u.%u.%u", a, b, c, d);
            maybe = strcmp(canon, host) != 0;
        }
    }
    curl_free(host);
    if (!maybe)
        return true;
    bool ok = curl_url_get(h, CURLUPART_URL, &u, 0) == CURLUE_OK
        && curl_url_set(h, CURLUPART_URL, u, PARSE_FLAGS) == CURLUE_OK;
    curl_free(u);
    return ok;
}

/* An IPv6 zone id ("[fe80::1%25eth0]") of unreserved characters only (RFC 6874 also
 * allows percent-encoding): libcurl 7.88 takes "[::%2511%5e@0]" and writes it back
 * as a URL it then refuses — the '@' reads as the end of a user name (fuzz_url found
 * it; regressions/url/zone-with-at). Returns false for such a zone. */
static bool zone_ok(CURLU *h)
{
    char *zone = NULL;
    if (curl_url_get(h, CURLUPART_ZONEID, &zone, 0) != CURLUE_OK)
        return true;
    bool ok = zone[0] != '\0'
        && zone[strspn(zone,
                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                       "0123456789-._~")]
            == '\0';
    curl_free(zone);
    return ok;
}

/* The whole URL h holds, without a default port, malloc'd (callers free() it). */
static char *url_string(CURLU *h)
{
    char *u = NULL;
    if (curl_url_get(h, CURLUPART_URL, &u, CURLU_NO_DEFAULT_PORT) != CURLUE_OK)
        return NULL;
    char *out = xstrdup(u);
    curl_free(u);
    return out;
}

/* Forget "user:password@" (and ";options"): a password a page or a redirect hands
 * out must not reach the report, the logs or the trace, and the crawler logs in
 * nowhere. One page then also has one string, whoever's name is in its links. */
static bool drop_userinfo(CURLU *h)
{
    return curl_url_set(h, CURLUPART_USER, NULL, 0) == CURLUE_OK
        && curl_url_set(h, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK
        && curl_url_set(h, CURLUPART_OPTIONS, NULL, 0) == CURLUE_OK;
}

/* The normal form of what h holds, malloc'd (callers free() it), or NULL. */
static char *normalize(CURLU *h)
{
    if (!lower_host(h) || !numeric_host_again(h) || !zone_ok(h) || !drop_userinfo(h))
        return NULL;
    if (curl_url_set(h, CURLUPART_FRAGMENT, NULL, 0) != CURLUE_OK)
        return NULL;
    return url_string(h);
}

/* Parse one absolute URL; NULL if libcurl cannot. */
static CURLU *parse(const char *url)
{
    if (!url)
        return NULL;
    libmem_init();
    CURLU *h = curl_url();
    if (!h)
        alloc_oom(0); /* all it can lack is memory */
    if (!set_url(h, url)) {
        curl_url_cleanup(h);
        h = NULL;
    }
    return h;
}

static char *get_part(CURLU *h, CURLUPart what, unsigned flags)
{
    char *v = NULL;
    if (curl_url_get(h, what, &v, flags) != CURLUE_OK)
        return NULL;
    char *out = xstrdup(v);
    curl_free(v);
    return out;
}

static bool is_http(const char *scheme)
{
    return scheme && (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0);
}

/* The host, lower case, IPv6 literals without brackets; NULL when there is none. */
static char *get_host(CURLU *h)
{
    char *host = get_part(h, CURLUPART_HOST, 0);
    if (!host)
        return NULL;
    size_t n = strlen(host);
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
        memmove(host, host + 1, n - 2);
        host[n - 2] = '\0';
    }
    ascii_lower(host);
    return host;
}

/* ---- fix_url, urljoin ---- */

/* A root as given: cleaned as an href is, "http://" added when it has no scheme. */
static CURLU *parse_root(const char *root)
{
    char *text = clean_ref(root);
    if (!strstr(text, "://")) {
        char *with_scheme = xasprintf("http://%s", text);
        free(text);
        text = with_scheme;
    }
    CURLU *h = parse(text);
    free(text);
    return h;
}

char *url_fix(const char *root, char *err, size_t errlen)
{
    if (errlen > 0)
        err[0] = '\0';
    if (!root)
        root = "";
    CURLU *h = parse_root(root);
    if (!h) {
        snprintf(err, errlen, "not a URL: '%s'", root);
        return NULL;
    }
    char *out = NULL;
    char *scheme = get_part(h, CURLUPART_SCHEME, 0);
    if (!is_http(scheme))
        snprintf(err, errlen, "unsupported scheme '%s' in '%s' (only http and https)",
                 scheme ? scheme : "", root);
    else if (!(out = normalize(h)))
        snprintf(err, errlen, "not a URL: '%s'", root);
    free(scheme);
    curl_url_cleanup(h);
    return out;
}

bool url_has_userinfo(const char *url)
{
    CURLU *h = parse_root(url ? url : "");
    char *user = NULL, *password = NULL;
    bool has = h
        && (curl_url_get(h, CURLUPART_USER, &user, 0) == CURLUE_OK
            || curl_url_get(h, CURLUPART_PASSWORD, &password, 0) == CURLUE_OK);
    curl_free(user);
    curl_free(password);
    curl_url_cleanup(h);
    return has;
}

/* ---- url_resolve: one page's links all have the same base ----
 *
 * Parsing the base is a good part of resolving a link, and a page's links are all
 * resolved against the same base: each thread keeps its last base parsed, and a link
 * starts from a copy of it (curl_url_dup) instead of parsing the base again. Two
 * facts about that base are kept with it, so that most links skip a step of
 * normalize(): whether its host has an upper-case letter, and whether it has a
 * fragment. The answer is the same string either way; only the work differs. */

typedef struct base_cache {
    char *base;      /* the text given as base, exactly */
    CURLU *h;        /* parse(base) */
    bool host_lower; /* its host has no A-Z (or it has no host) */
    bool has_fragment;
    char *zone; /* its IPv6 zone id ("eth0"), which curl_url_dup drops */
    char *dir;  /* plain_join's prefix: the base's normal form up to the last '/' of its
                 * path, or NULL (not http(s), a zone id, a fragment, "//" in the path) */
    size_t dir_len;
} base_cache;

static pthread_key_t base_key;
static pthread_once_t base_once = PTHREAD_ONCE_INIT;
static _Thread_local base_cache *tls_base;

static void base_cache_free(void *p)
{
    base_cache *c = p;
    if (!c)
        return;
    curl_url_cleanup(c->h);
    free(c->base);
    free(c->zone);
    free(c->dir);
    free(c);
}

/* Frees a thread's cache when the thread ends (the main thread's is reachable). */
static void base_key_init(void)
{
    pthread_key_create(&base_key, base_cache_free);
}

static bool has_upper(const char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            return true;
    return false;
}

/* The fast path's prefix of the cache's base (c->dir): its normal form cut after the
 * last '/' of its path, for an http(s) base without a zone id. */
static void base_dir(base_cache *c)
{
    /* libcurl 7.88 joins to the base's text, fragment included: "x" against
     * "http://i/#t/" gives "http://i/t/x" (fuzz_url found it). A base with a fragment
     * (a crawled page never has one) is left to libcurl, as is one with a zone id. */
    if (c->zone || c->has_fragment)
        return;
    CURLU *d = curl_url_dup(c->h);
    if (!d)
        alloc_oom(0);
    char *norm = normalize(d);
    curl_url_cleanup(d);
    size_t skip = norm && strncmp(norm, "http://", 7) == 0 ? 7
        : norm && strncmp(norm, "https://", 8) == 0        ? 8
                                                           : 0;
    const char *path = skip ? strchr(norm + skip, '/') : NULL;
    const char *last = path;
    /* libcurl 7.88 joins "x" to "http://h//" as "http://h/x", where RFC 3986 says
     * "http://h//x": a path with an empty segment is left to libcurl, whose answer
     * the crawl has always had (fuzz_url found it). */
    for (const char *p = path; last && *p && *p != '?'; p++)
        if (*p == '/')
            last = p[1] == '/' ? NULL : p;
    if (last) {
        c->dir_len = (size_t)(last + 1 - norm);
        norm[c->dir_len] = '\0';
        c->dir = norm;
    } else {
        free(norm);
    }
}

/* The thread's cache of base (parsed now when it is not the last base), or NULL when
 * base does not parse. */
static const base_cache *base_lookup(const char *base)
{
    base_cache *c = tls_base;
    if (!c || strcmp(c->base, base) != 0) {
        CURLU *h = parse(base);
        if (h && (!numeric_host_again(h) || !zone_ok(h) || !drop_userinfo(h))) {
            curl_url_cleanup(h);
            h = NULL;
        }
        if (!h)
            return NULL;
        base_cache *n = xcalloc(1, sizeof *n);
        n->base = xstrdup(base);
        n->h = h;
        char *v = NULL;
        n->host_lower = true;
        if (curl_url_get(h, CURLUPART_HOST, &v, 0) == CURLUE_OK)
            n->host_lower = !has_upper(v);
        curl_free(v);
        v = NULL;
        n->has_fragment = curl_url_get(h, CURLUPART_FRAGMENT, &v, 0) == CURLUE_OK;
        curl_free(v);
        v = NULL;
        if (curl_url_get(h, CURLUPART_ZONEID, &v, 0) == CURLUE_OK && v)
            n->zone = xstrdup(v);
        curl_free(v);
        base_dir(n);
        pthread_once(&base_once, base_key_init);
        base_cache_free(c);
        tls_base = c = n;
        pthread_setspecific(base_key, c);
    }
    return c;
}

/* A fresh handle holding the cached base, or NULL. */
static CURLU *base_copy(const base_cache *c)
{
    CURLU *h = curl_url_dup(c->h);
    if (!h)
        alloc_oom(0);
    /* libcurl 7.88's curl_url_dup forgets the zone id: "http://[fe80::1%25eth0]/"
     * would resolve links to "http://[fe80::1]/...". */
    if (c->zone && curl_url_set(h, CURLUPART_ZONEID, c->zone, 0) != CURLUE_OK) {
        curl_url_cleanup(h);
        h = NULL;
    }
    return h;
}

/* ---- url_resolve's fast path: a plain relative path ----
 *
 * Most links of a page are relative paths of letters, digits, '.', '-', '_', '~' and
 * '/' ("p12.html", "lib/os.html"). For those RFC 3986's resolution (5.2.2) merges the
 * base's path up to its last '/' with the href (5.2.3) and removes dot segments
 * (5.2.4), which finds none when the href has no "." or ".." segment (the base's
 * normal form has none), and normalizing (6.2.2) changes nothing in the href: the
 * answer is the base's prefix followed by the href. libcurl gets the same string by
 * parsing, joining and printing a whole URL twice; test_url's differential case and
 * fuzz_url hold the two equal. */

static bool is_unreserved(int c);

/* Whether href is such a path: not empty, no leading '/', only unreserved characters
 * and '/', no segment "." or "..". (No ':' either: no scheme.) */
static bool is_plain_relative(const char *href)
{
    if (!*href || *href == '/')
        return false;
    const char *seg = href;
    for (const char *p = href;; p++) {
        if (*p == '/' || *p == '\0') {
            size_t len = (size_t)(p - seg);
            if (seg[0] == '.' && (len == 1 || (len == 2 && seg[1] == '.')))
                return false;
            if (*p == '\0')
                return true;
            seg = p + 1;
        } else if (!is_unreserved((unsigned char)*p)) {
            return false;
        }
    }
}

static char *plain_join(const base_cache *c, const char *href)
{
    size_t n = strlen(href);
    char *out = xmalloc(c->dir_len + n + 1);
    memcpy(out, c->dir, c->dir_len);
    memcpy(out + c->dir_len, href, n + 1);
    return out;
}

/* normalize() for a handle that is a copy of the cached base with a clean href set in
 * it: lower_host only when an upper-case letter (or a %XX that might decode to one)
 * can have come in, the fragment cleared only when there can be one. */
static char *normalize_resolved(CURLU *h, const base_cache *info, const char *href)
{
    if (!info)
        return normalize(h);
    if ((!info->host_lower || strpbrk(href, "ABCDEFGHIJKLMNOPQRSTUVWXYZ%")) && !lower_host(h))
        return NULL;
    if (strchr(href, '%') && !numeric_host_again(h)) /* the base's host is done already */
        return NULL;
    if (strchr(href, '[') && !zone_ok(h)) /* a new IPv6 host; the base's is ok */
        return NULL;
    if (strchr(href, '@') && !drop_userinfo(h)) /* the base has none */
        return NULL;
    if ((info->has_fragment || strchr(href, '#'))
        && curl_url_set(h, CURLUPART_FRAGMENT, NULL, 0) != CURLUE_OK)
        return NULL;
    return url_string(h);
}

static char *resolve(const char *base, const char *href, bool fast)
{
    if (!href || !base)
        return NULL;
    char *owned;
    const char *clean = cleaned(href, &owned);
    const base_cache *info = base_lookup(base);
    if (fast && info && info->dir && is_plain_relative(clean)) {
        char *out = plain_join(info, clean);
        free(owned);
        return out;
    }
    CURLU *h = info ? base_copy(info) : NULL;
    char *out = NULL;
    if (h) {
        /* An href that is empty or only a fragment names the base document itself.
         * libcurl treats these as relative paths, so they are recognized here. */
        if (clean[0] == '\0' || clean[0] == '#')
            out = normalize(h);
        else if (curl_url_set(h, CURLUPART_URL, clean, PARSE_FLAGS) == CURLUE_OK)
            out = normalize_resolved(h, info, clean);
        curl_url_cleanup(h);
    }
    free(owned);
    return out;
}

char *url_resolve(const char *base, const char *href)
{
    return resolve(base, href, true);
}

char *url_resolve_libcurl(const char *base, const char *href)
{
    return resolve(base, href, false);
}

/* ---- url_normalize: RFC 3986 section 6.2.2 ---- */

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool is_unreserved(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
        || c == '.' || c == '_' || c == '~';
}

/* In place from s on: each %XX of an unreserved character decoded (6.2.2.2), every
 * other's hex digits upper-cased (6.2.2.1). Returns whether a character was decoded. */
static bool percent_normalize(char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    bool decoded = false;
    char *o = s;
    for (const char *p = s; *p;) {
        int hi = p[0] == '%' ? hex_value(p[1]) : -1, lo = hi >= 0 ? hex_value(p[2]) : -1;
        if (lo < 0) {
            *o++ = *p++;
            continue;
        }
        int c = hi * 16 + lo;
        if (is_unreserved(c)) {
            *o++ = (char)c;
            decoded = true;
        } else {
            *o++ = '%';
            *o++ = hex[hi];
            *o++ = hex[lo];
        }
        p += 3;
    }
    *o = '\0';
    return decoded;
}

/* libcurl's normal form of url (url_resolve's), or NULL. */
static char *curl_normal(const char *url)
{
    CURLU *h = parse(url);
    if (!h)
        return NULL;
    char *out = normalize(h);
    curl_url_cleanup(h);
    return out;
}

char *url_normalize(const char *url)
{
    char *out = curl_normal(url);
    if (!out)
        return NULL;
    /* after the authority: the path and the query (the host is libcurl's already) */
    char *rest = strstr(out, "://");
    rest = rest ? rest + 3 + strcspn(rest + 3, "/?") : out;
    if (!strchr(rest, '%') || !percent_normalize(rest))
        return out;
    /* a decoded '.' may make a dot segment: libcurl removes them again */
    char *again = curl_normal(out);
    free(out);
    return again;
}

/* Hand *v over to *dst (when the caller asked for it), or free it. */
static void hand_out(char **dst, char *v)
{
    if (dst)
        *dst = v;
    else
        free(v);
}

int url_split(const char *url, char **scheme, char **host, int *port, char **path_query)
{
    char *s = NULL, *ho = NULL, *po = NULL, *pa = NULL, *q = NULL, *pq = NULL;
    CURLU *h = parse(url);
    if (h) {
        s = get_part(h, CURLUPART_SCHEME, 0);
        ho = get_host(h);
        po = get_part(h, CURLUPART_PORT, CURLU_DEFAULT_PORT);
        pa = get_part(h, CURLUPART_PATH, 0);
        q = get_part(h, CURLUPART_QUERY, 0);
        curl_url_cleanup(h);
    }
    bool ok = is_http(s) && ho && ho[0] && po && pa;
    if (ok)
        pq = xasprintf("%s%s%s", pa[0] ? pa : "/", q ? "?" : "", q ? q : "");
    if (port)
        *port = ok ? atoi(po) : 0;
    if (!ok) {
        free(s);
        free(ho);
        free(pq);
        s = ho = pq = NULL;
    }
    hand_out(scheme, s);
    hand_out(host, ho);
    hand_out(path_query, pq);
    free(po);
    free(pa);
    free(q);
    return ok ? 0 : -1;
}

/* ---- crawling.py's host policy ---- */

struct url_policy {
    bool strict;
    size_t nexclude; /* the --exclude patterns: a URL matching one is excluded */
    pattern **exclude;
    seen_set *root_domains; /* crawling.py's root_domains */
    uint64_t version;       /* changes with every root added; see allowed_cached */
};

/* Policy versions are unique across all policies, so that a cached answer is never
 * taken for a policy freed and another allocated at the same address. */
static atomic_uint_fast64_t policy_versions;

static uint64_t next_version(void)
{
    return (uint64_t)atomic_fetch_add(&policy_versions, 1) + 1;
}

/* crawling.py's r'\A[\d\.]*\Z', plus IPv6 literals (the only hosts with ':'). */
static bool is_ip_literal(const char *host)
{
    if (strchr(host, ':'))
        return true;
    return host[strspn(host, "0123456789.")] == '\0';
}

/* crawling.py's lenient_host: the last two labels ("a.b.example.com" -> "example.com").
 * crawling.py glues them without the dot; keeping it changes nothing but readability. */
static const char *lenient_host(const char *host)
{
    const char *last = strrchr(host, '.');
    if (!last)
        return host;
    const char *p = last;
    while (p > host && p[-1] != '.')
        p--;
    return p;
}

url_policy *url_policy_new(bool strict, const char *exclude, char *err, size_t errlen)
{
    if (errlen > 0)
        err[0] = '\0';
    url_policy *p = xcalloc(1, sizeof(*p));
    p->strict = strict;
    p->version = next_version();
    p->root_domains = seen_new();
    if (url_policy_exclude(p, exclude, err, errlen) < 0) {
        url_policy_free(p);
        return NULL;
    }
    return p;
}

int url_policy_exclude(url_policy *p, const char *exclude, char *err, size_t errlen)
{
    /* As in crawling.py, an empty pattern means no pattern. */
    if (!exclude || !exclude[0])
        return 0;
    char why[256];
    pattern *re = pattern_compile(exclude, why, sizeof why);
    if (!re) {
        snprintf(err, errlen, "bad exclude regex '%s': %s", exclude, why);
        return -1;
    }
    p->exclude = xreallocarray(p->exclude, p->nexclude + 1, sizeof *p->exclude);
    p->exclude[p->nexclude++] = re;
    return 0;
}

void url_policy_free(url_policy *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nexclude; i++)
        pattern_free(p->exclude[i]);
    free(p->exclude);
    seen_free(p->root_domains);
    free(p);
}

bool url_policy_excluded(const url_policy *p, const char *url)
{
    for (size_t i = 0; p && i < p->nexclude; i++) {
        int rc = pattern_match(p->exclude[i], url);
        if (rc == PATTERN_LIMIT && pattern_first_limit(p->exclude[i]))
            log_warn("exclude pattern %zu reached a match limit on a %zu-byte URL: such URLs"
                     " are excluded (warned once)",
                     i + 1, strlen(url));
        if (rc != PATTERN_NO_MATCH) /* a limit reached: excluded, the safe side */
            return true;
    }
    return false;
}

int url_policy_add_root(url_policy *p, const char *root_url)
{
    if (!p)
        return -1;
    CURLU *h = parse(root_url);
    char *host = h ? get_host(h) : NULL;
    curl_url_cleanup(h);
    int rc = -1;
    if (host && host[0]) {
        const char *domain = host;
        if (!is_ip_literal(host) && !p->strict)
            domain = lenient_host(host);
        seen_add(p->root_domains, domain);
        rc = seen_has(p->root_domains, domain) ? 0 : -1;
        p->version = next_version();
    }
    free(host);
    return rc;
}

/* crawling.py's _host_okay_strictish: the same host with "www." toggled. */
static bool host_okay_strictish(const url_policy *p, const char *host)
{
    if (strncmp(host, "www.", 4) == 0)
        return seen_has(p->root_domains, host + 4);
    char *www = xasprintf("www.%s", host);
    bool ok = seen_has(p->root_domains, www);
    free(www);
    return ok;
}

/* crawling.py's host_okay; host is already lower case. */
static bool host_okay(const url_policy *p, const char *host)
{
    if (seen_has(p->root_domains, host))
        return true;
    if (is_ip_literal(host))
        return false;
    if (p->strict)
        return host_okay_strictish(p, host);
    return seen_has(p->root_domains, lenient_host(host));
}

/* The answer from the scheme and host alone, parsed by libcurl (the regex aside). */
static bool allowed_parsed(const url_policy *p, const char *url)
{
    CURLU *h = parse(url);
    if (!h)
        return false;
    char *scheme = get_part(h, CURLUPART_SCHEME, 0);
    char *host = is_http(scheme) ? get_host(h) : NULL;
    curl_url_cleanup(h);
    bool ok = host && host[0] && host_okay(p, host);
    free(scheme);
    free(host);
    return ok;
}

/* ---- a memo of the host decision ----
 *
 * A page's links mostly share their scheme and host, and so the decision. For a URL
 * of the form the crawler handles ("http://" or "https://", an authority of only
 * [a-z0-9.:-], then '/', '?', '#' or the end — what url_resolve gives for an ordinary
 * site), everything that decides the answer lies in that prefix: libcurl ends the
 * authority at the first of "/?#", the prefix has no user info, brackets, escapes or
 * spaces that could be read two ways, and what follows it cannot make a parse fail
 * once clean_ref has run (URLENCODE and ALLOW_SPACE take any path, query and
 * fragment). So the answer libcurl gave for one such URL is the answer for every URL
 * with the same prefix, under the same policy version: each thread remembers a few. */

#define MEMO_PREFIX  128 /* longer authorities are simply not memoized */
#define MEMO_SLOTS   4
#define MEMO_MAX_URL 1000000 /* far below libcurl's 8 MB input limit */

typedef struct memo_slot {
    uint64_t version; /* 0: empty */
    size_t len;
    char prefix[MEMO_PREFIX];
    bool allowed;
} memo_slot;

static _Thread_local memo_slot memo[MEMO_SLOTS];
static _Thread_local unsigned memo_next;

/* Length of the memoizable prefix of url, or 0 when url is not of that form. */
static size_t memo_prefix(const char *url)
{
    size_t i;
    if (strncmp(url, "http://", 7) == 0)
        i = 7;
    else if (strncmp(url, "https://", 8) == 0)
        i = 8;
    else
        return 0;
    size_t start = i;
    for (;; i++) {
        char c = url[i];
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':')
            continue;
        if (c != '/' && c != '?' && c != '#' && c != '\0')
            return 0;
        break;
    }
    if (i == start || i >= MEMO_PREFIX)
        return 0;
    return i;
}

static bool allowed_memo(const url_policy *p, const char *url)
{
    size_t n = memo_prefix(url);
    if (n == 0 || strnlen(url, MEMO_MAX_URL) >= MEMO_MAX_URL)
        return allowed_parsed(p, url);
    for (int i = 0; i < MEMO_SLOTS; i++) {
        memo_slot *m = &memo[i];
        if (m->version == p->version && m->len == n && memcmp(m->prefix, url, n) == 0)
            return m->allowed;
    }
    bool ok = allowed_parsed(p, url);
    memo_slot *m = &memo[memo_next++ % MEMO_SLOTS];
    m->version = p->version;
    m->len = n;
    memcpy(m->prefix, url, n);
    m->allowed = ok;
    return ok;
}

bool url_policy_allowed(const url_policy *p, const char *url)
{
    if (!p || !url)
        return false;
    if (url_policy_excluded(p, url))
        return false;
    return allowed_memo(p, url);
}
