/* request.c — HTTP/1.x request head parser (see request.h). Lenient where clients
 * differ (bare LF, any header case, absolute-form targets), strict where a mistake
 * would desynchronise the connection (request bodies need a Content-Length). */
#include "request.h"

#include "alloc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The end of the head: offset just past the empty line, or 0. */
static size_t head_end(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (i + 1 < len && buf[i + 1] == '\n')
            return i + 2;
        if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* Whether a comma-separated header value contains token (case-insensitive). */
static bool has_token(const char *v, size_t n, const char *token)
{
    size_t tl = strlen(token), i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < n && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e - s == tl && strncasecmp(v + s, token, tl) == 0)
            return true;
    }
    return false;
}

static int parse_request_line(const char *l, size_t n, request *req)
{
    const char *sp1 = memchr(l, ' ', n);
    if (!sp1 || sp1 == l || (size_t)(sp1 - l) >= sizeof req->method)
        return REQ_BAD;
    const char *t = sp1 + 1, *end = l + n;
    const char *sp2 = memchr(t, ' ', (size_t)(end - t));
    if (!sp2 || sp2 == t)
        return REQ_BAD;
    const char *ver = sp2 + 1;
    size_t vlen = (size_t)(end - ver);
    if (vlen < 8 || strncmp(ver, "HTTP/", 5) != 0)
        return REQ_BAD;
    if (vlen != 8 || ver[5] != '1' || ver[6] != '.' || ver[7] < '0' || ver[7] > '9')
        return REQ_VERSION;
    memcpy(req->method, l, (size_t)(sp1 - l));
    req->method[sp1 - l] = '\0';
    req->minor = ver[7] - '0';
    /* absolute-form "http://host:port/path": keep the path */
    if ((size_t)(sp2 - t) > 7 && strncasecmp(t, "http://", 7) == 0) {
        const char *slash = memchr(t + 7, '/', (size_t)(sp2 - t - 7));
        t = slash ? slash : sp2;
    }
    size_t plen = (size_t)(sp2 - t);
    req->path = plen ? xstrndup(t, plen) : xstrdup("/");
    for (const char *c = req->path; *c; c++)
        if ((unsigned char)*c < 0x21 || *c == 0x7f)
            return REQ_BAD;
    return 0;
}

long request_parse(const char *buf, size_t len, request *req)
{
    memset(req, 0, sizeof *req);
    size_t end = head_end(buf, len);
    if (!end)
        return len > REQUEST_MAX_HEAD ? REQ_TOO_BIG : REQ_MORE;
    if (end > REQUEST_MAX_HEAD)
        return REQ_TOO_BIG;
    size_t pos = 0;
    /* a few empty lines before a request are allowed (RFC 9112, 2.2) */
    while (pos < end && (buf[pos] == '\r' || buf[pos] == '\n'))
        pos++;
    if (pos == end)
        return (long)end; /* only empty lines: the caller skips them */
    const char *nl = memchr(buf + pos, '\n', end - pos);
    size_t n = (size_t)(nl - (buf + pos));
    if (n && buf[pos + n - 1] == '\r')
        n--;
    if (memchr(buf + pos, '\0', n))
        return REQ_BAD;
    int rc = parse_request_line(buf + pos, n, req);
    if (rc < 0)
        return rc;
    bool conn_close = false, conn_keep = false, chunked = false;
    pos = (size_t)(nl - buf) + 1;
    while (pos < end) {
        nl = memchr(buf + pos, '\n', end - pos);
        const char *l = buf + pos;
        n = (size_t)(nl - l);
        pos += n + 1;
        if (n && l[n - 1] == '\r')
            n--;
        if (n == 0)
            break;
        const char *colon = memchr(l, ':', n);
        if (!colon || colon == l)
            return REQ_BAD;
        size_t klen = (size_t)(colon - l);
        const char *v = colon + 1;
        size_t vlen = n - klen - 1;
        while (vlen && (*v == ' ' || *v == '\t'))
            v++, vlen--;
        if (klen == 10 && strncasecmp(l, "connection", 10) == 0) {
            conn_close |= has_token(v, vlen, "close");
            conn_keep |= has_token(v, vlen, "keep-alive");
        } else if (klen == 14 && strncasecmp(l, "content-length", 14) == 0) {
            long long cl = 0;
            if (vlen == 0 || vlen > 15)
                return REQ_BAD;
            for (size_t i = 0; i < vlen; i++) {
                if (v[i] < '0' || v[i] > '9')
                    return REQ_BAD;
                cl = cl * 10 + (v[i] - '0');
            }
            req->body_len = cl;
        } else if (klen == 17 && strncasecmp(l, "transfer-encoding", 17) == 0) {
            chunked = true;
        } else if (klen == 10 && strncasecmp(l, "user-agent", 10) == 0) {
            free(req->user_agent);
            while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
                vlen--;
            req->user_agent = xstrndup(v, vlen);
        } else if (klen == 4 && strncasecmp(l, "host", 4) == 0) {
            free(req->host);
            while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
                vlen--;
            req->host = xstrndup(v, vlen);
        } else if (klen == 6 && strncasecmp(l, "cookie", 6) == 0) {
            while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
                vlen--;
            char *c =
                req->cookie ? xasprintf("%s; %.*s", req->cookie, (int)vlen, v) : xstrndup(v, vlen);
            free(req->cookie);
            req->cookie = c;
        }
    }
    if (chunked)
        return REQ_BAD; /* request bodies must come with a Content-Length */
    req->keep_alive = req->minor >= 1 ? !conn_close : (conn_keep && !conn_close);
    req->if_none_match = request_field_values(buf, end, "If-None-Match");
    req->authorization = request_field_values(buf, end, "Authorization");
    req->if_modified_since = request_field_values(buf, end, "If-Modified-Since");
    return (long)end;
}

char *request_field_values(const char *buf, size_t len, const char *name)
{
    size_t nlen = strlen(name), pos = 0, total = 0;
    char *out = NULL;
    while (pos < len && (buf[pos] == '\r' || buf[pos] == '\n'))
        pos++; /* empty lines before the request */
    const char *nl = memchr(buf + pos, '\n', len - pos);
    pos = nl ? (size_t)(nl - buf) + 1 : len; /* past the request line */
    while (pos < len) {
        const char *l = buf + pos;
        nl = memchr(l, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - l) : len - pos;
        pos += n + 1;
        if (n && l[n - 1] == '\r')
            n--;
        if (n == 0)
            break; /* the end of the head */
        if (n <= nlen || l[nlen] != ':' || strncasecmp(l, name, nlen) != 0)
            continue;
        const char *v = l + nlen + 1;
        size_t vlen = n - nlen - 1;
        while (vlen && (*v == ' ' || *v == '\t'))
            v++, vlen--;
        while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
            vlen--;
        bool more = out != NULL; /* a field of that name came before */
        out = xrealloc(out, total + vlen + 3);
        if (more) {
            memcpy(out + total, ", ", 2);
            total += 2;
        }
        memcpy(out + total, v, vlen);
        total += vlen;
        out[total] = '\0';
    }
    return out;
}

void request_clear(request *req)
{
    free(req->path);
    req->path = NULL;
    free(req->user_agent);
    req->user_agent = NULL;
    free(req->host);
    req->host = NULL;
    free(req->cookie);
    req->cookie = NULL;
    free(req->if_none_match);
    req->if_none_match = NULL;
    free(req->authorization);
    req->authorization = NULL;
    free(req->if_modified_since);
    req->if_modified_since = NULL;
    free(req->body);
    req->body = NULL;
}
