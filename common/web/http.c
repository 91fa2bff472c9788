/* http.c — raw HTTP/1.0 for stages 1 and 2: the GET request builder and the
 * incremental response parser (see http.h).
 *
 * The parser is a state machine fed arbitrary slices of the byte stream. The head
 * (status line and headers) is copied into one buffer, a line at a time (memchr finds
 * the line ends); the body is never copied: on_body gets slices of the fed buffer.
 *
 * Split independence: every check looks at bytes in stream order and the first
 * offending byte decides the error, so however the input is cut up, the callbacks and
 * the result are the same.
 *
 * Choices worth knowing:
 * - A NUL byte in the head is an error ("NUL byte in response head"): C strings could
 *   not carry the header values faithfully, and no sane server sends one.
 * - 1xx interim responses are skipped; on_head is called for the final response only.
 * - Transfer-Encoding (which HTTP/1.0 requests should never get) overrides
 *   Content-Length; chunked bodies are decoded, any other coding is read until EOF.
 * - 204 and 304 responses have no body, whatever their headers say.
 * - Header lines without a colon are ignored; obs-fold continuation lines are appended
 *   (with one space) to Content-Type and Location and ignored elsewhere. When a header
 *   appears twice the first Content-Type / Location wins.
 * - The sink's callbacks may be NULL. They must not free the parser.
 */
#include "http.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "url.h"

#ifndef CRAWL_VERSION
#define CRAWL_VERSION "0"
#endif

/* ---- request builder ---------------------------------------------------------- */

/* Bytes that cannot appear raw in a request line: percent-encode them. */
static bool needs_escape(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f;
}

static bool host_is_sane(const char *host)
{
    if (!*host)
        return false;
    for (const unsigned char *s = (const unsigned char *)host; *s; s++)
        if (*s <= 0x20 || *s == 0x7f || *s == '/' || *s == '@')
            return false;
    return true;
}

/* Writes path_query with unsafe bytes percent-encoded; returns the length written.
 * With out == NULL only counts. */
static size_t put_path(char *out, const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
        if (needs_escape(*s)) {
            if (out) {
                out[n] = '%';
                out[n + 1] = hex[*s >> 4];
                out[n + 2] = hex[*s & 15];
            }
            n += 3;
        } else {
            if (out)
                out[n] = (char)*s;
            n++;
        }
    }
    return n;
}

const char http_default_user_agent[] = "crawlstages/" CRAWL_VERSION;

static bool user_agent_is_sane(const char *ua)
{
    for (const unsigned char *s = (const unsigned char *)ua; *s; s++)
        if (*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

char *http_build_get(const char *url, const char *user_agent, size_t *len)
{
    static const char tail[] = "\r\nAccept: */*\r\n"
                               "Accept-Encoding: identity\r\n"
                               "Connection: close\r\n\r\n";
    const char *ua = user_agent ? user_agent : http_default_user_agent;
    char *scheme = NULL, *host = NULL, *path = NULL, *req = NULL;
    int port = 0;

    if (!url || !user_agent_is_sane(ua) || url_split(url, &scheme, &host, &port, &path) != 0)
        goto out;
    if (strcmp(scheme, "http") != 0 || !host_is_sane(host) || port <= 0 || port > 65535)
        goto out;

    bool v6 = strchr(host, ':') != NULL;
    char hostport[300];
    char portbuf[8] = "";
    if (port != 80)
        snprintf(portbuf, sizeof portbuf, ":%d", port);
    int hl = snprintf(hostport, sizeof hostport, "%s%s%s%s", v6 ? "[" : "", host,
                      v6 ? "]" : "", portbuf);
    if (hl < 0 || (size_t)hl >= sizeof hostport)
        goto out;

    const char *pq = *path ? path : "/";
    size_t plen = put_path(NULL, pq);
    size_t ualen = strlen(ua);
    size_t total = 4 + plen + 11 + 6 + (size_t)hl + 2 + 12 + ualen + sizeof tail - 1;
    req = xmalloc(total + 1);
    char *w = req;
    memcpy(w, "GET ", 4), w += 4;
    w += put_path(w, pq);
    memcpy(w, " HTTP/1.0\r\n", 11), w += 11;
    memcpy(w, "Host: ", 6), w += 6;
    memcpy(w, hostport, (size_t)hl), w += hl;
    memcpy(w, "\r\n", 2), w += 2;
    memcpy(w, "User-Agent: ", 12), w += 12;
    memcpy(w, ua, ualen), w += ualen;
    memcpy(w, tail, sizeof tail - 1), w += sizeof tail - 1;
    *w = '\0';
    if (len)
        *len = total;
out:
    free(scheme);
    free(host);
    free(path);
    return req;
}

/* ---- response parser ------------------------------------------------------------ */

enum state {
    ST_STATUS,      /* reading the status line */
    ST_HEADERS,     /* reading header lines */
    ST_BODY_LEN,    /* body delimited by Content-Length */
    ST_BODY_EOF,    /* body delimited by the end of the connection */
    ST_CHUNK_SIZE,  /* hex digits of a chunk size */
    ST_CHUNK_WS,    /* whitespace after the size */
    ST_CHUNK_EXT,   /* ";ext..." up to the end of the size line */
    ST_CHUNK_LF,    /* CR seen at the end of the size line */
    ST_CHUNK_DATA,  /* chunk bytes */
    ST_CHUNK_END,   /* CRLF after the chunk data */
    ST_CHUNK_END_LF,
    ST_TRAILER,     /* trailer lines after the last chunk, up to an empty line */
    ST_DONE,
    ST_ERROR,
};

enum kept { KEPT_NONE, KEPT_TYPE, KEPT_LOCATION, KEPT_OTHER };

#define CHUNK_LINE_MAX 4096 /* size line with extensions, and the trailer section */
#define MAX_LENGTH 1000000000000000000LL

struct span {
    size_t off, len;
    bool set;
};

struct http_parser {
    http_sink sink;
    enum state state;
    char error[96];

    char *head;       /* the current head section, as received */
    size_t head_len, head_cap;
    size_t line_start; /* offset of the line being read */

    int status;
    struct span ctype, location;
    enum kept last;    /* header the previous line belonged to (for obs-fold) */
    long long content_length;
    bool te_present, te_chunked;

    bool has_head;
    bool received_any;
    long long body_size;
    long long remaining; /* Content-Length or chunk bytes still to come */
    int chunk_digits;
    size_t chunk_line;   /* bytes of the current size line / trailer section */
    bool trailer_line_empty;
};

static int fail(http_parser *p, const char *msg)
{
    snprintf(p->error, sizeof p->error, "%s", msg);
    p->state = ST_ERROR;
    return -1;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t';
}

static void trim(const char **s, const char **e)
{
    while (*s < *e && is_ws(**s))
        (*s)++;
    while (*e > *s && (is_ws((*e)[-1]) || (*e)[-1] == '\r'))
        (*e)--;
}

static bool name_is(const char *s, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(s, name, n) == 0;
}

static void reset_head(http_parser *p)
{
    p->head_len = p->line_start = 0;
    p->status = 0;
    p->ctype = p->location = (struct span){0, 0, false};
    p->last = KEPT_NONE;
    p->content_length = -1;
    p->te_present = p->te_chunked = false;
}

http_parser *http_parser_new(const http_sink *sink)
{
    http_parser *p = xcalloc(1, sizeof *p);
    if (sink)
        p->sink = *sink;
    p->state = ST_STATUS;
    reset_head(p);
    return p;
}

void http_parser_free(http_parser *p)
{
    if (!p)
        return;
    free(p->head);
    free(p);
}

const char *http_parser_error(const http_parser *p)
{
    return p && p->state == ST_ERROR ? p->error : NULL;
}

int http_parser_has_head(const http_parser *p)
{
    return p && p->has_head;
}

long long http_parser_body_size(const http_parser *p)
{
    return p ? p->body_size : 0;
}

/* --- head --- */

/* "HTTP/1.x SSS[ reason]" with the line end already cut off. */
static int parse_status(http_parser *p, const char *s, const char *e)
{
    if (e > s && e[-1] == '\r')
        e--;
    if (e - s < 12 || memcmp(s, "HTTP/1.", 7) != 0 || s[7] < '0' || s[7] > '9' ||
        s[8] != ' ')
        return fail(p, "malformed status line");
    s += 9;
    while (s < e && *s == ' ')
        s++;
    if (e - s < 3 || s[0] < '1' || s[0] > '5' || s[1] < '0' || s[1] > '9' || s[2] < '0' ||
        s[2] > '9' || (e - s > 3 && !is_ws(s[3])))
        return fail(p, "malformed status line");
    p->status = (s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0');
    p->state = ST_HEADERS;
    return 0;
}

/* One Content-Length value: a comma-separated list of equal decimal numbers. */
static int parse_content_length(http_parser *p, const char *s, const char *e)
{
    for (;;) {
        const char *comma = memchr(s, ',', (size_t)(e - s));
        const char *is = s, *ie = comma ? comma : e;
        trim(&is, &ie);
        if (is == ie)
            return fail(p, "bad Content-Length");
        long long v = 0;
        for (const char *d = is; d < ie; d++) {
            if (*d < '0' || *d > '9' || v > MAX_LENGTH / 10)
                return fail(p, "bad Content-Length");
            v = v * 10 + (*d - '0');
        }
        if (p->content_length >= 0 && p->content_length != v)
            return fail(p, "bad Content-Length");
        p->content_length = v;
        if (!comma)
            return 0;
        s = comma + 1;
    }
}

/* Whether the last coding of a Transfer-Encoding value is "chunked". */
static bool last_coding_chunked(const char *s, const char *e)
{
    for (const char *c = e; c > s; c--)
        if (c[-1] == ',') {
            s = c;
            break;
        }
    trim(&s, &e);
    return name_is(s, (size_t)(e - s), "chunked");
}

/* An obs-fold line: append its text to the header it continues, if we keep it. */
static void fold_line(http_parser *p, const char *s, const char *e)
{
    struct span *v = p->last == KEPT_TYPE ? &p->ctype
                     : p->last == KEPT_LOCATION ? &p->location : NULL;
    trim(&s, &e);
    if (!v || s == e)
        return;
    /* The text lies after the value's own line end, so moving it left is safe. */
    size_t dst = v->off + v->len;
    if (v->len > 0)
        p->head[dst++] = ' ';
    memmove(p->head + dst, s, (size_t)(e - s));
    v->len = dst + (size_t)(e - s) - v->off;
}

static int parse_header(http_parser *p, const char *s, const char *e)
{
    if (is_ws(*s)) {
        fold_line(p, s, e);
        return 0;
    }
    const char *colon = memchr(s, ':', (size_t)(e - s));
    if (!colon) {
        p->last = KEPT_NONE;
        return 0;
    }
    const char *ns = s, *ne = colon, *vs = colon + 1, *ve = e;
    trim(&ns, &ne);
    trim(&vs, &ve);
    size_t nl = (size_t)(ne - ns);
    struct span v = {(size_t)(vs - p->head), (size_t)(ve - vs), true};
    p->last = KEPT_OTHER;
    if (name_is(ns, nl, "content-type")) {
        if (!p->ctype.set)
            p->ctype = v, p->last = KEPT_TYPE;
    } else if (name_is(ns, nl, "location")) {
        if (!p->location.set)
            p->location = v, p->last = KEPT_LOCATION;
    } else if (name_is(ns, nl, "content-length")) {
        return parse_content_length(p, vs, ve);
    } else if (name_is(ns, nl, "transfer-encoding")) {
        p->te_present = true;
        p->te_chunked = last_coding_chunked(vs, ve);
    }
    return 0;
}

static const char *span_str(http_parser *p, struct span *v)
{
    if (!v->set)
        return NULL;
    p->head[v->off + v->len] = '\0';
    return p->head + v->off;
}

/* The blank line after the headers: report the head and choose how the body ends. */
static int end_of_head(http_parser *p)
{
    if (p->status < 200) { /* interim response: the real one follows */
        reset_head(p);
        p->state = ST_STATUS;
        return 0;
    }
    http_head h = {
        .status = p->status,
        .content_type = span_str(p, &p->ctype),
        .location = span_str(p, &p->location),
        .content_length = p->te_present ? -1 : p->content_length,
    };
    p->has_head = true;
    if (p->status == 204 || p->status == 304)
        p->state = ST_DONE;
    else if (p->te_chunked)
        p->state = ST_CHUNK_SIZE, p->chunk_digits = 0, p->chunk_line = 0;
    else if (p->te_present || h.content_length < 0)
        p->state = ST_BODY_EOF;
    else
        p->state = h.content_length == 0 ? ST_DONE : ST_BODY_LEN;
    p->remaining = p->state == ST_BODY_LEN ? h.content_length : 0;
    if (p->sink.on_head)
        p->sink.on_head(p->sink.ctx, &h);
    return 0;
}

/* A complete line [line_start, head_len) ending in '\n'. */
static int head_line(http_parser *p)
{
    const char *s = p->head + p->line_start;
    const char *e = p->head + p->head_len - 1; /* the '\n' */
    p->line_start = p->head_len;
    if (p->state == ST_STATUS)
        return parse_status(p, s, e);
    if (e == s || (e - s == 1 && s[0] == '\r'))
        return end_of_head(p);
    return parse_header(p, s, e);
}

/* Early rejection of a status line that cannot start with "HTTP/1.", so that a
 * non-HTTP peer fails at once rather than at the head limit. */
static int check_status_prefix(http_parser *p)
{
    static const char want[] = "HTTP/1.";
    size_t n = p->head_len - p->line_start;
    const char *s = p->head + p->line_start;
    for (size_t i = 0; i < n && i < sizeof want - 1; i++)
        if (s[i] != want[i])
            return fail(p, s[i] ? "malformed status line" : "NUL byte in response head");
    return 0;
}

static void grow_head(http_parser *p, size_t need)
{
    if (need <= p->head_cap)
        return;
    size_t cap = p->head_cap ? p->head_cap : 1024;
    while (cap < need)
        cap *= 2;
    if (cap > HTTP_MAX_HEAD + 1)
        cap = HTTP_MAX_HEAD + 1; /* +1 leaves room for a NUL after the last value */
    p->head = xrealloc(p->head, cap);
    p->head_cap = cap;
}

/* Takes bytes up to and including one line end (or all of them). */
static size_t feed_head(http_parser *p, const char *data, size_t len)
{
    size_t room = HTTP_MAX_HEAD - p->head_len;
    if (room == 0) {
        fail(p, "header section over 65536 bytes");
        return 0;
    }
    size_t take = len < room ? len : room;
    const char *nl = memchr(data, '\n', take);
    size_t n = nl ? (size_t)(nl - data) + 1 : take;
    grow_head(p, p->head_len + n + 1);
    size_t before = p->head_len - p->line_start;
    memcpy(p->head + p->head_len, data, n);
    p->head_len += n;
    if (p->state == ST_STATUS && before < 7 && check_status_prefix(p) < 0)
        return n;
    if (memchr(data, '\0', n)) {
        fail(p, "NUL byte in response head");
        return n;
    }
    if (nl)
        head_line(p);
    return n;
}

/* --- body --- */

static void deliver(http_parser *p, const char *data, size_t n)
{
    if (n == 0)
        return;
    p->body_size += (long long)n;
    if (p->sink.on_body)
        p->sink.on_body(p->sink.ctx, data, n);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The size line is complete: on to the data, or to the trailer after the last chunk. */
static void chunk_size_done(http_parser *p)
{
    p->chunk_line = 0;
    if (p->remaining == 0) {
        p->state = ST_TRAILER;
        p->trailer_line_empty = true;
    } else {
        p->state = ST_CHUNK_DATA;
    }
}

static size_t bad_chunk(http_parser *p)
{
    fail(p, "bad chunked encoding");
    return 0;
}

/* One byte of the chunk-size line (these lines are a few bytes long). */
static size_t chunk_size_byte(http_parser *p, char c)
{
    if (++p->chunk_line > CHUNK_LINE_MAX)
        return bad_chunk(p);
    int h = p->state == ST_CHUNK_SIZE ? hexval(c) : -1;
    if (h >= 0) {
        if (++p->chunk_digits > 15)
            return bad_chunk(p);
        p->remaining = p->remaining * 16 + h;
        return 1;
    }
    if (p->chunk_digits == 0)
        return bad_chunk(p);
    if (p->state == ST_CHUNK_LF && c != '\n')
        return bad_chunk(p);
    if (c == '\n')
        chunk_size_done(p);
    else if (c == '\r')
        p->state = ST_CHUNK_LF;
    else if (c == ';')
        p->state = ST_CHUNK_EXT;
    else if (is_ws(c))
        p->state = ST_CHUNK_WS;
    else
        return bad_chunk(p);
    return 1;
}

/* Chunk extensions are ignored up to the line end. */
static size_t chunk_ext(http_parser *p, const char *data, size_t len)
{
    const char *nl = memchr(data, '\n', len);
    size_t n = nl ? (size_t)(nl - data) + 1 : len;
    p->chunk_line += n;
    if (p->chunk_line > CHUNK_LINE_MAX)
        return bad_chunk(p);
    if (nl)
        chunk_size_done(p);
    return n;
}

static size_t chunk_end_byte(http_parser *p, char c)
{
    if (c == '\n') {
        p->state = ST_CHUNK_SIZE;
        p->chunk_digits = 0;
        p->remaining = 0;
        p->chunk_line = 0;
    } else if (c == '\r' && p->state == ST_CHUNK_END) {
        p->state = ST_CHUNK_END_LF;
    } else {
        return bad_chunk(p);
    }
    return 1;
}

/* Trailer fields are skipped; an empty line ends the message. */
static size_t trailer(http_parser *p, const char *data, size_t len)
{
    size_t i = 0;
    for (; i < len; i++) {
        if (++p->chunk_line > CHUNK_LINE_MAX)
            return bad_chunk(p);
        if (data[i] == '\n') {
            if (p->trailer_line_empty) {
                p->state = ST_DONE;
                return i + 1;
            }
            p->trailer_line_empty = true;
        } else if (data[i] != '\r') {
            p->trailer_line_empty = false;
        }
    }
    return i;
}

static size_t body_bytes(http_parser *p, const char *data, size_t len)
{
    size_t n = len;
    if ((long long)n > p->remaining)
        n = (size_t)p->remaining;
    deliver(p, data, n);
    p->remaining -= (long long)n;
    if (p->remaining == 0)
        p->state = p->state == ST_BODY_LEN ? ST_DONE : ST_CHUNK_END;
    return n;
}

/* Consumes some bytes in the current state; returns how many. */
static size_t step(http_parser *p, const char *data, size_t len)
{
    switch (p->state) {
    case ST_STATUS:
    case ST_HEADERS:
        return feed_head(p, data, len);
    case ST_BODY_EOF:
        deliver(p, data, len);
        return len;
    case ST_BODY_LEN:
    case ST_CHUNK_DATA:
        return body_bytes(p, data, len);
    case ST_CHUNK_SIZE:
    case ST_CHUNK_WS:
    case ST_CHUNK_LF:
        return chunk_size_byte(p, data[0]);
    case ST_CHUNK_EXT:
        return chunk_ext(p, data, len);
    case ST_CHUNK_END:
    case ST_CHUNK_END_LF:
        return chunk_end_byte(p, data[0]);
    case ST_TRAILER:
        return trailer(p, data, len);
    case ST_DONE:
    case ST_ERROR:
        break;
    }
    return 0;
}

static int result(const http_parser *p)
{
    return p->state == ST_ERROR ? -1 : p->state == ST_DONE ? 1 : 0;
}

int http_parser_feed(http_parser *p, const char *data, size_t len)
{
    if (!p)
        return -1;
    if (p->state == ST_ERROR || p->state == ST_DONE)
        return result(p);
    if (len > 0 && !data)
        return fail(p, "no data");
    if (len > 0)
        p->received_any = true;
    while (len > 0 && p->state != ST_DONE && p->state != ST_ERROR) {
        size_t n = step(p, data, len);
        data += n;
        len -= n;
    }
    return result(p);
}

int http_parser_eof(http_parser *p)
{
    if (!p)
        return -1;
    switch (p->state) {
    case ST_ERROR:
        return -1;
    case ST_DONE:
    case ST_BODY_EOF:
        p->state = ST_DONE;
        return 1;
    case ST_STATUS:
    case ST_HEADERS:
        return fail(p, p->received_any ? "connection closed before the response head"
                                       : "empty response");
    case ST_BODY_LEN: {
        char msg[96];
        snprintf(msg, sizeof msg, "body shorter than Content-Length (got %lld of %lld bytes)",
                 p->body_size, p->body_size + p->remaining);
        return fail(p, msg);
    }
    default:
        return fail(p, "connection closed inside a chunked body");
    }
}
