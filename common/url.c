/* url.c — URL policy on top of libcurl's URL API: fix_url for roots, urljoin +
 * urldefrag for links, and crawling.py's host_okay / url_allowed.
 *
 * Every URL that comes out goes through normalize(): parsed by libcurl (dot segments
 * removed, empty path as "/", spaces and non-ASCII bytes percent-encoded), host made
 * lower case, default port and fragment dropped. Feeding an output back in gives the
 * same string, so one page has one string in the seen set. */
#include "url.h"
#include "seen.h"

#include <curl/curl.h>
#include <regex.h>
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
 * control bytes, so percent-encode those. Returns a malloc'd string or NULL. */
static char *clean_ref(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && is_c0_or_space((unsigned char)s[n - 1]))
        n--;
    while (n > 0 && is_c0_or_space((unsigned char)*s)) {
        s++;
        n--;
    }
    char *out = malloc(3 * n + 1);
    if (!out)
        return NULL;
    char *o = out;
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

/* Set h's URL (absolute, or relative to what h already holds) from raw text. */
static bool set_url(CURLU *h, const char *text)
{
    char *clean = clean_ref(text);
    if (!clean)
        return false;
    CURLUcode rc = curl_url_set(h, CURLUPART_URL, clean, PARSE_FLAGS);
    free(clean);
    return rc == CURLUE_OK;
}

/* Make h's host lower case. Setting the host forgets an IPv6 zone id ("%25eth0"),
 * so that is put back. */
static bool lower_host(CURLU *h)
{
    char *host = NULL, *zone = NULL;
    if (curl_url_get(h, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        return true; /* no host (file:///...): nothing to do */
    char *lower = strdup(host);
    bool ok = lower != NULL;
    if (ok) {
        ascii_lower(lower);
        if (strcmp(lower, host) != 0) {
            curl_url_get(h, CURLUPART_ZONEID, &zone, 0);
            ok = curl_url_set(h, CURLUPART_HOST, lower, 0) == CURLUE_OK &&
                 (!zone || curl_url_set(h, CURLUPART_ZONEID, zone, 0) == CURLUE_OK);
        }
    }
    free(lower);
    curl_free(host);
    curl_free(zone);
    return ok;
}

/* The normal form of what h holds, malloc'd (callers free() it), or NULL. */
static char *normalize(CURLU *h)
{
    if (!lower_host(h))
        return NULL;
    if (curl_url_set(h, CURLUPART_FRAGMENT, NULL, 0) != CURLUE_OK)
        return NULL;
    char *u = NULL;
    if (curl_url_get(h, CURLUPART_URL, &u, CURLU_NO_DEFAULT_PORT) != CURLUE_OK)
        return NULL;
    char *out = strdup(u);
    curl_free(u);
    return out;
}

/* Parse one absolute URL; NULL if libcurl cannot. */
static CURLU *parse(const char *url)
{
    if (!url)
        return NULL;
    CURLU *h = curl_url();
    if (h && !set_url(h, url)) {
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
    char *out = strdup(v);
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

char *url_fix(const char *root, char *err, size_t errlen)
{
    if (errlen > 0)
        err[0] = '\0';
    if (!root)
        root = "";
    char *clean = clean_ref(root);
    char *text = NULL;
    if (clean && !strstr(clean, "://")) {
        if (asprintf(&text, "http://%s", clean) < 0)
            text = NULL;
    } else {
        text = clean;
        clean = NULL;
    }
    free(clean);
    CURLU *h = parse(text);
    free(text);
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

/* An href that is empty or only a fragment names the base document itself. libcurl
 * treats these as relative paths, so they are recognized here. */
static bool names_base_itself(const char *href)
{
    char *clean = clean_ref(href);
    bool same = clean && (clean[0] == '\0' || clean[0] == '#');
    free(clean);
    return same;
}

char *url_resolve(const char *base, const char *href)
{
    if (!href)
        return NULL;
    CURLU *h = parse(base);
    if (!h)
        return NULL;
    char *out = NULL;
    if (names_base_itself(href) || set_url(h, href))
        out = normalize(h);
    curl_url_cleanup(h);
    return out;
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
    if (ok && asprintf(&pq, "%s%s%s", pa[0] ? pa : "/", q ? "?" : "", q ? q : "") < 0) {
        pq = NULL;
        ok = false;
    }
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
    bool has_exclude;
    regex_t exclude;
    seen_set *root_domains; /* crawling.py's root_domains */
};

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
    url_policy *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->strict = strict;
    p->root_domains = seen_new();
    if (!p->root_domains) {
        free(p);
        return NULL;
    }
    /* As in crawling.py, an empty pattern means no pattern. */
    if (exclude && exclude[0]) {
        int rc = regcomp(&p->exclude, exclude, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[256];
            regerror(rc, &p->exclude, msg, sizeof(msg));
            snprintf(err, errlen, "bad --exclude regex '%s': %s", exclude, msg);
            seen_free(p->root_domains);
            free(p);
            return NULL;
        }
        p->has_exclude = true;
    }
    return p;
}

void url_policy_free(url_policy *p)
{
    if (!p)
        return;
    if (p->has_exclude)
        regfree(&p->exclude);
    seen_free(p->root_domains);
    free(p);
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
    }
    free(host);
    return rc;
}

/* crawling.py's _host_okay_strictish: the same host with "www." toggled. */
static bool host_okay_strictish(const url_policy *p, const char *host)
{
    if (strncmp(host, "www.", 4) == 0)
        return seen_has(p->root_domains, host + 4);
    char *www = NULL;
    if (asprintf(&www, "www.%s", host) < 0)
        return false;
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

bool url_policy_allowed(const url_policy *p, const char *url)
{
    if (!p || !url)
        return false;
    if (p->has_exclude && regexec(&p->exclude, url, 0, NULL, 0) == 0)
        return false;
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
