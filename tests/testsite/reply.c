/* reply.c — routing a request to its response (see reply.h). */
#include "reply.h"

#include "alloc.h"
#include "digest.h"
#include "sbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static bool has_body(int status)
{
    return !(status < 200 || status == 204 || status == 304);
}

/* Status line and headers. content_length < 0: no Content-Length header. */
static void make_head(reply *r, int status, const char *type, const char *charset,
                      const char *location, char *const *extra, size_t nextra,
                      long long content_length, bool keep_alive_header)
{
    sbuf b = {0};
    r->status = status;
    sbuf_printf(&b, "HTTP/1.1 %d %s\r\nServer: testsite\r\n", status, site_reason(status));
    if (type)
        sbuf_printf(&b, charset ? "Content-Type: %s; charset=%s\r\n" : "Content-Type: %s\r\n", type,
                    charset);
    if (location)
        sbuf_printf(&b, "Location: %s\r\n", location);
    for (size_t i = 0; i < nextra; i++)
        sbuf_printf(&b, "%s\r\n", extra[i]);
    if (content_length >= 0)
        sbuf_printf(&b, "Content-Length: %lld\r\n", content_length);
    if (r->close)
        sbuf_adds(&b, "Connection: close\r\n");
    else if (keep_alive_header)
        sbuf_adds(&b, "Connection: keep-alive\r\n");
    sbuf_adds(&b, "\r\n");
    r->head = sbuf_take(&b, &r->head_len);
}

static void add_escaped(sbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': sbuf_adds(b, "&lt;"); break;
        case '>': sbuf_adds(b, "&gt;"); break;
        case '&': sbuf_adds(b, "&amp;"); break;
        case '"': sbuf_adds(b, "&quot;"); break;
        default: sbuf_add(b, s, 1);
        }
    }
}

/* A small HTML page for 404 / 405 / protocol errors. */
static void simple_page(reply *r, int status, const char *path, bool head_only,
                        bool keep_alive_header, char *const *extra, size_t nextra)
{
    sbuf b = {0};
    sbuf_printf(&b,
                "<!DOCTYPE html>\n<html><head><title>%d %s</title></head>\n"
                "<body><h1>%d %s</h1>",
                status, site_reason(status), status, site_reason(status));
    if (path) {
        sbuf_adds(&b, "<p>");
        add_escaped(&b, path);
        sbuf_adds(&b, "</p>");
    }
    sbuf_adds(&b, "</body></html>\n");
    size_t len = 0;
    r->body = r->body_owned = sbuf_take(&b, &len);
    r->body_len = head_only ? 0 : len;
    make_head(r, status, "text/html", "utf-8", NULL, extra, nextra, (long long)len,
              keep_alive_header);
}

/* s as a JSON string (or null), its control characters, quotes and backslashes
 * escaped. */
static void add_json_string(sbuf *b, const char *s)
{
    if (!s) {
        sbuf_adds(b, "null");
        return;
    }
    sbuf_adds(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sbuf_printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            sbuf_printf(b, "\\u%04x", c);
        else
            sbuf_add(b, s, 1);
    }
    sbuf_adds(b, "\"");
}

static void stats_reply(server *srv, reply *r, bool head_only, bool ka)
{
    const server_stats *st = &srv->stats;
    sbuf b = {0};
    sbuf_printf(&b,
                "{\"served\": %ld, \"dropped\": %ld, \"in_progress\": %ld, "
                "\"peak_in_progress\": %ld, \"connections\": %ld, "
                "\"peak_connections\": %ld, \"robots_txt\": %ld, \"user_agent\": ",
                st->served, st->dropped, st->in_progress, st->peak_in_progress, st->connections,
                st->peak_connections, st->robots_txt);
    add_json_string(&b, srv->user_agent);
    sbuf_adds(&b, "}\n");
    size_t len = 0;
    r->body = r->body_owned = sbuf_take(&b, &len);
    r->body_len = head_only ? 0 : len;
    make_head(r, 200, "application/json", NULL, NULL, NULL, 0, (long long)len, ka);
}

/* Whether the request's Cookie fields hold the pair NAME=VALUE (cookie=). */
static bool has_cookie(const char *cookies, const char *pair)
{
    size_t n = strlen(pair);
    for (const char *c = cookies; c && *c;) {
        c += strspn(c, " ;");
        size_t len = strcspn(c, ";");
        while (len && c[len - 1] == ' ')
            len--;
        if (len == n && strncmp(c, pair, n) == 0)
            return true;
        c += strcspn(c, ";");
    }
    return false;
}

/* Whether body (urlencoded, or NULL) has each NAME=VALUE pair of want ("&" between),
 * compared as written. */
static bool has_form(const char *body, const char *want)
{
    for (const char *w = want; body && *w;) {
        size_t n = strcspn(w, "&");
        bool found = false;
        for (const char *b = body; *b && !found;) {
            size_t len = strcspn(b, "&");
            found = len == n && strncmp(b, w, n) == 0;
            b += len + (b[len] == '&');
        }
        if (!found)
            return false;
        w += n + (w[n] == '&');
    }
    return body != NULL;
}

/* The login form of a page with form=: an input for each field name ("password" a
 * password input), posted to path; after a POST that did not match, "wrong" too. */
static void form_page(reply *r, const site_page *pg, bool failed, bool head_only, bool ka)
{
    sbuf b = {0};
    sbuf_adds(&b, "<!DOCTYPE html>\n<html><head><title>Log in</title></head>\n<body>");
    if (failed)
        sbuf_adds(&b, "<p class=\"error\">wrong login</p>");
    sbuf_adds(&b, "<form method=\"post\" action=\"");
    add_escaped(&b, pg->path);
    sbuf_adds(&b, "\">");
    for (const char *w = pg->need_form; *w;) {
        size_t n = strcspn(w, "&="), all = strcspn(w, "&");
        char *name = xstrndup(w, n);
        sbuf_adds(&b, "<input name=\"");
        add_escaped(&b, name);
        sbuf_adds(&b, strcmp(name, "password") == 0 ? "\" type=\"password\">" : "\">");
        free(name);
        w += all + (w[all] == '&');
    }
    sbuf_adds(&b, "<button>Log in</button></form></body></html>\n");
    size_t len = 0;
    r->body = r->body_owned = sbuf_take(&b, &len);
    r->body_len = head_only ? 0 : len;
    make_head(r, 200, "text/html", "utf-8", NULL, NULL, 0, (long long)len, ka);
}

/* ---- conditional requests (RFC 9110, 13.1): a page with an ETag or a Last-Modified
 * header gets a 304 when the client has it already ---- */

/* The value of the first "Name: value" of h[0..n) named name, or NULL. */
static const char *extra_value(char *const *h, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (strncasecmp(h[i], name, len) == 0 && h[i][len] == ':')
            return h[i] + len + 1 + strspn(h[i] + len + 1, " \t");
    return NULL;
}

/* An entity tag without its weakness ("W/"), for the weak comparison (13.1.2). */
static const char *opaque(const char *tag, size_t *len)
{
    if (*len >= 2 && tag[0] == 'W' && tag[1] == '/') {
        tag += 2;
        *len -= 2;
    }
    return tag;
}

static bool etag_listed(const char *list, const char *etag)
{
    size_t elen = strlen(etag);
    const char *e = opaque(etag, &elen);
    for (const char *p = list; *p;) {
        p += strspn(p, " \t,");
        size_t n = strcspn(p, ",");
        size_t k = n;
        while (k > 0 && (p[k - 1] == ' ' || p[k - 1] == '\t'))
            k--;
        const char *t = opaque(p, &k);
        if ((k == 1 && *t == '*') || (k == elen && k > 0 && memcmp(t, e, k) == 0))
            return true;
        p += n;
    }
    return false;
}

/* An HTTP-date (IMF-fixdate), or -1. */
static long long http_date(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = s ? strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm) : NULL;
    return end && *end == '\0' ? (long long)timegm(&tm) : -1;
}

/* Whether a request with these conditions has the representation: If-None-Match
 * decides when present; else If-Modified-Since against Last-Modified (13.2.2). */
static bool not_modified(const request *req, const char *etag, const char *last_modified)
{
    if (req->if_none_match)
        return etag && etag_listed(req->if_none_match, etag);
    long long since = http_date(req->if_modified_since);
    long long lm = http_date(last_modified);
    return since >= 0 && lm >= 0 && lm <= since;
}

/* A 304: no body, the page's own fields (its validators among them). */
static void not_modified_reply(reply *r, char *const *extra, size_t nextra, bool ka)
{
    make_head(r, 304, NULL, NULL, NULL, extra, nextra, -1, ka);
}

static void page_reply(server *srv, const request *req, site_page *pg, reply *r, bool head_only,
                       bool ka)
{
    pg->requests++;
    r->delay_ms = pg->delay_ms >= 0 ? (uint64_t)pg->delay_ms : srv->delay_ms;
    if (pg->need_auth && (!req->authorization || strcmp(req->authorization, pg->need_auth) != 0)) {
        char *challenge = "WWW-Authenticate: Basic realm=\"testsite\"";
        simple_page(r, 401, NULL, head_only, ka, &challenge, 1);
        return;
    }
    if (pg->need_digest
        && !digest_check(req->authorization, pg->need_digest, req->method, req->path)) {
        char *challenge = digest_challenge();
        simple_page(r, 401, NULL, head_only, ka, &challenge, 1);
        free(challenge);
        return;
    }
    if (pg->need_cookie && !has_cookie(req->cookie, pg->need_cookie)) {
        if (pg->login) { /* a session's page: to the login page */
            make_head(r, 302, NULL, NULL, pg->login, NULL, 0, 0, ka);
            return;
        }
        simple_page(r, 403, NULL, head_only, ka, NULL, 0);
        return;
    }
    if (pg->need_form
        && (strcmp(req->method, "POST") != 0 || !has_form(req->body, pg->need_form))) {
        form_page(r, pg, strcmp(req->method, "POST") == 0, head_only, ka);
        return;
    }
    if (pg->requests <= pg->drop) {
        r->drop = true;
        return;
    }
    if (pg->requests <= pg->drop + pg->busy) {
        char *ra = pg->retry_after ? xasprintf("Retry-After: %s", pg->retry_after) : NULL;
        simple_page(r, pg->busy_status, NULL, head_only, ka, ra ? &ra : NULL, ra ? 1 : 0);
        free(ra);
        return;
    }
    r->drip_bytes = pg->drip_bytes;
    r->drip_ms = pg->drip_ms;
    r->reset_after = pg->reset_after;
    if (pg->kind == BODY_RAW) {
        r->close = true;
        r->body = pg->body;
        r->body_len = pg->body_len;
        return;
    }
    if (pg->status == 200
        && not_modified(req, extra_value(pg->headers, pg->nheaders, "ETag"),
                        extra_value(pg->headers, pg->nheaders, "Last-Modified"))) {
        not_modified_reply(r, pg->headers, pg->nheaders, ka);
        return;
    }
    uint64_t len = pg->kind == BODY_BYTES ? (uint64_t)pg->bytes : pg->body_len;
    r->filler = pg->kind == BODY_BYTES;
    r->fill = pg->fill;
    r->body = pg->body;
    bool body = has_body(pg->status);
    r->body_len = body && !head_only ? len : 0;
    make_head(r, pg->status, pg->type, pg->charset, pg->location, pg->headers, pg->nheaders,
              body ? (long long)len : -1, ka);
}

void reply_build(server *srv, const request *req, reply *r)
{
    memset(r, 0, sizeof *r);
    r->reset_after = -1;
    r->close = !req->keep_alive;
    bool ka = req->keep_alive && req->minor == 0; /* say so to HTTP/1.0 clients */
    bool head_only = strcmp(req->method, "HEAD") == 0;
    char *path = xstrdup(req->path);
    char *q = strchr(path, '?');
    if (strcmp(path, "/__stats") == 0 || strncmp(path, "/__stats?", 9) == 0) {
        stats_reply(srv, r, head_only, ka);
        free(path);
        return;
    }
    r->counted = true;
    r->delay_ms = srv->delay_ms;
    if (strncmp(path, "/robots.txt", 11) == 0 && (path[11] == '\0' || path[11] == '?'))
        srv->stats.robots_txt++;
    free(srv->user_agent);
    srv->user_agent = req->user_agent ? xstrdup(req->user_agent) : NULL;
    site_page *form = srv->site ? site_find(srv->site, path) : NULL; /* a POST's */
    if (!head_only && strcmp(req->method, "GET") != 0
        && !(strcmp(req->method, "POST") == 0 && form && form->need_form)) {
        static char *const allow[] = {"Allow: GET, HEAD"};
        simple_page(r, 405, NULL, false, ka, allow, 1);
    } else if (srv->gen) {
        if (q)
            *q = '\0';
        long i = gen_page_index(srv->gen, path), css = gen_css_index(srv->gen, path);
        char *v[2] = {NULL, NULL};
        if (i >= 0 && srv->gen->validators) {
            /* the same pages for ever: an ETag of its number, one date for all */
            v[0] = xasprintf("ETag: \"g%llu-%ld\"", srv->gen->seed, i);
            v[1] = xasprintf("Last-Modified: Thu, 01 Jan 2026 00:00:00 GMT");
        }
        if (css >= 0) {
            size_t len = 0;
            r->body = r->body_owned = gen_render_css(css, &len);
            r->body_len = head_only ? 0 : len;
            make_head(r, 200, "text/css", "utf-8", NULL, NULL, 0, (long long)len, ka);
        } else if (i < 0) {
            simple_page(r, 404, req->path, head_only, ka, NULL, 0);
        } else if (v[0] && not_modified(req, v[0] + 6, v[1] + 15)) {
            not_modified_reply(r, v, 2, ka);
        } else {
            size_t len = 0;
            r->body = r->body_owned = gen_render(srv->gen, srv->base, i, &len);
            r->body_len = head_only ? 0 : len;
            make_head(r, 200, "text/html", "utf-8", NULL, v, v[0] ? 2 : 0, (long long)len, ka);
        }
        free(v[0]);
        free(v[1]);
    } else {
        site_page *pg = site_find(srv->site, path);
        if (!pg && q) {
            *q = '\0';
            pg = site_find(srv->site, path);
        }
        if (pg)
            page_reply(srv, req, pg, r, head_only, ka);
        else
            simple_page(r, 404, req->path, head_only, ka, NULL, 0);
    }
    free(path);
}

void reply_error(int status, reply *r)
{
    memset(r, 0, sizeof *r);
    r->reset_after = -1;
    r->close = true;
    simple_page(r, status, NULL, false, false, NULL, 0);
}

void reply_clear(reply *r)
{
    free(r->head);
    free(r->body_owned);
    memset(r, 0, sizeof *r);
    r->reset_after = -1;
}

uint64_t reply_total(const reply *r)
{
    return r->head_len + r->body_len;
}

const char *reply_bytes(const reply *r, uint64_t off, size_t *avail)
{
    if (off < r->head_len) {
        *avail = r->head_len - (size_t)off;
        return r->head + off;
    }
    off -= r->head_len;
    uint64_t left = r->body_len - off;
    if (r->filler) {
        const char *p = gen_fill(r->fill, off, avail);
        if (*avail > left)
            *avail = (size_t)left;
        return p;
    }
    *avail = left > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)left;
    return r->body + off;
}
