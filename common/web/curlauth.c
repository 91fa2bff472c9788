/* curlauth.c — a crawl's HTTP credentials (a user's, or ~/.netrc's), for the roots'
 * origins only
 * (curlauth.h). */
#include "curlauth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"

struct curl_auth {
    char *userpwd;  /* NULL: ~/.netrc's */
    char **origins; /* "host:port", the host lower-cased */
    bool *basic;    /* origins[i] offered only basic auth: sent with the request */
    size_t n;
};

/* url's "host:port" (lower-cased host, default port filled in), or NULL. */
static char *origin_of(const char *url)
{
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *out = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK
        && curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK
        && curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
        for (char *c = host; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        out = xasprintf("%s:%s", host, port);
    }
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return out;
}

curl_auth *curl_auth_new(const char *userpwd, bool netrc, const char *const *roots, size_t n)
{
    if (!userpwd && !netrc)
        return NULL;
    curl_auth *a = xcalloc(1, sizeof *a);
    a->userpwd = userpwd ? xstrdup(userpwd) : NULL;
    a->origins = xcalloc(n + 1, sizeof *a->origins);
    a->basic = xcalloc(n + 1, sizeof *a->basic);
    for (size_t i = 0; i < n; i++) {
        char *o = origin_of(roots[i]);
        size_t j = 0;
        while (o && j < a->n && strcmp(a->origins[j], o) != 0)
            j++;
        if (o && j == a->n)
            a->origins[a->n++] = o;
        else
            free(o);
    }
    if (a->n == 0) {
        curl_auth_free(a);
        return NULL;
    }
    return a;
}

void curl_auth_free(curl_auth *a)
{
    if (!a)
        return;
    if (a->userpwd) /* not left in freed memory */
        memset(a->userpwd, 0, strlen(a->userpwd));
    free(a->userpwd);
    for (size_t i = 0; i < a->n; i++)
        free(a->origins[i]);
    free(a->origins);
    free(a->basic);
    free(a);
}

/* The index of url's origin among a's, or -1. */
static long origin_index(const curl_auth *a, const char *url)
{
    char *o = origin_of(url);
    long at = -1;
    for (size_t i = 0; o && i < a->n && at < 0; i++)
        if (strcmp(a->origins[i], o) == 0)
            at = (long)i;
    free(o);
    return at;
}

bool curl_auth_apply(const curl_auth *a, CURL *easy, const char *url)
{
    if (!a)
        return false;
    long at = origin_index(a, url);
    bool ours = at >= 0;
    /* Basic or digest, whichever the server's 401 asks for: libcurl sends the request
     * without credentials, and answers a challenge in the same transfer (curlglue.c
     * takes the last response). Once an origin has offered basic alone, basic goes with
     * the request at once (one round trip, as a browser does after its first 401).
     * Never on to another host: libcurl's CURLOPT_UNRESTRICTED_AUTH stays off, and the
     * glue follows no redirect itself. */
    curl_easy_setopt(easy, CURLOPT_HTTPAUTH,
                     ours && a->basic[at] ? (long)CURLAUTH_BASIC
                                          : (long)(CURLAUTH_BASIC | CURLAUTH_DIGEST));
    curl_easy_setopt(easy, CURLOPT_UNRESTRICTED_AUTH, 0L);
    curl_easy_setopt(easy, CURLOPT_USERPWD, ours && a->userpwd ? a->userpwd : NULL);
    curl_easy_setopt(easy, CURLOPT_NETRC,
                     ours && !a->userpwd ? (long)CURL_NETRC_REQUIRED : (long)CURL_NETRC_IGNORED);
    return ours;
}

void curl_auth_learn(curl_auth *a, CURL *easy, const char *url)
{
    long avail = 0, at = a ? origin_index(a, url) : -1;
    if (at >= 0 && curl_easy_getinfo(easy, CURLINFO_HTTPAUTH_AVAIL, &avail) == CURLE_OK
        && avail == (long)CURLAUTH_BASIC)
        a->basic[at] = true;
}

/* Whether the line data[at..end) is an Authorization field. */
static bool is_auth(const char *data, size_t at, size_t end)
{
    static const char field[] = "authorization:";
    return end - at > sizeof field - 1 && strncasecmp(data + at, field, sizeof field - 1) == 0;
}

char *curl_auth_redact(const char *data, size_t len, size_t *out_len)
{
    bool any = false;
    for (size_t at = 0, end; at < len && !any; at = end) {
        const char *nl = memchr(data + at, '\n', len - at);
        end = nl ? (size_t)(nl - data) + 1 : len;
        any = is_auth(data, at, end);
    }
    if (!any)
        return NULL;
    char *out = xmalloc(len + 16 * 8 + 1);
    size_t n = 0, cap = len + 16 * 8 + 1;
    for (size_t at = 0, end; at < len; at = end) {
        const char *nl = memchr(data + at, '\n', len - at);
        end = nl ? (size_t)(nl - data) + 1 : len;
        const char *piece = data + at;
        size_t k = end - at;
        char line[64];
        if (is_auth(data, at, end)) {
            bool crlf = end - at >= 2 && data[end - 2] == '\r';
            k = (size_t)snprintf(line, sizeof line, "Authorization: [redacted]%s",
                                 crlf     ? "\r\n"
                                     : nl ? "\n"
                                          : "");
            piece = line;
        }
        if (n + k + 1 > cap)
            out = xrealloc(out, cap = 2 * (n + k + 1));
        memcpy(out + n, piece, k);
        n += k;
    }
    out[n] = '\0';
    *out_len = n;
    return out;
}
