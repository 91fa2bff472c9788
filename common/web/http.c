/* http.c — raw HTTP/1.0 for the raw transport: the GET request builder and the
 * incremental response parser (see http.h).
 *
 * The parser is a state machine fed arbitrary slices of the byte stream. The head goes
 * to the head parser both transports share (http_head.c: its rules, limits and words);
 * this file frames the body: Content-Length, chunked or until the connection closes.
 * The body is never copied: on_body gets slices of the fed buffer — unless the server
 * compressed it (Content-Encoding gzip or deflate), when it goes through zlib first
 * (http_inflate.c), as libcurl's decoder does on the other transport — and no further
 * than the sink wants (is_full), as libcurl's glue stops at the size limit.
 *
 * Split independence: every check looks at bytes in stream order and the first
 * offending byte decides the error, so however the input is cut up, the callbacks and
 * the result are the same.
 *
 * Choices worth knowing (the head's are in http_head.h):
 * - Transfer-Encoding (which HTTP/1.0 requests should never get) overrides
 *   Content-Length; chunked bodies are decoded, any other coding is read until EOF.
 * - Chunk extensions are skipped whatever their length (they cost no memory; the
 *   timeout bounds the time), as libcurl skips them. The trailer section is skipped,
 *   up to 4096 bytes.
 * - 204 and 304 responses have no body, whatever their headers say.
 * - The sink's callbacks may be NULL. They must not free the parser.
 */
#include "http.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "http_inflate.h"
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

/* ---- extra request header fields -------------------------------------------- */

/* RFC 9110, 5.6.2: tchar. */
static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The fields the transport writes itself, from the URL and the message it sends: a
 * caller's would contradict them. */
static const char *const own_fields[] = {"Host", "Connection", "Content-Length",
                                         "Transfer-Encoding", NULL};

size_t http_field_name_len(const char *field)
{
    size_t n = 0;
    while (is_tchar((unsigned char)field[n]))
        n++;
    return field[n] == ':' ? n : 0;
}

const char *http_field_check(const char *field)
{
    if (!field || !strchr(field, ':'))
        return "not a header field: give \"Name: value\"";
    size_t n = http_field_name_len(field);
    if (n == 0)
        return field[0] == ':' ? "the name is empty"
                               : "the name is not an RFC 9110 token "
                                 "(letters, digits, !#$%&'*+-.^_`|~)";
    for (const unsigned char *v = (const unsigned char *)field + n + 1; *v; v++)
        if ((*v < 0x20 && *v != '\t') || *v == 0x7f)
            return "a control character (CR, LF, ...) in the value";
    for (size_t i = 0; own_fields[i]; i++)
        if (strlen(own_fields[i]) == n && strncasecmp(field, own_fields[i], n) == 0)
            return "the transport writes this field itself";
    return NULL;
}

/* Whether one of fields has the name name (case-insensitive). */
static bool fields_have(const char *const *fields, const char *name)
{
    size_t n = strlen(name);
    for (; fields && *fields; fields++)
        if (http_field_name_len(*fields) == n && strncasecmp(*fields, name, n) == 0)
            return true;
    return false;
}

/* ---- the GET request ----------------------------------------------------------- */

static void put(char **buf, size_t *len, size_t *cap, const char *s)
{
    xappend(buf, len, cap, s, strlen(s));
}

/* A field the builder writes unless the caller gives one of that name. */
static void put_default(char **buf, size_t *len, size_t *cap, const char *const *fields,
                        const char *name, const char *value)
{
    if (fields_have(fields, name))
        return;
    put(buf, len, cap, name);
    put(buf, len, cap, ": ");
    put(buf, len, cap, value);
    put(buf, len, cap, "\r\n");
}

char *http_build_get(const char *url, const char *user_agent, const char *const *fields,
                     size_t *len)
{
    const char *ua = user_agent ? user_agent : http_default_user_agent;
    char *scheme = NULL, *host = NULL, *path = NULL, *req = NULL;
    int port = 0;

    if (!url || !user_agent_is_sane(ua) || url_split(url, &scheme, &host, &port, &path) != 0)
        goto out;
    if (strcmp(scheme, "http") != 0 || !host_is_sane(host) || port <= 0 || port > 65535)
        goto out;
    for (const char *const *fl = fields; fl && *fl; fl++)
        if (http_field_check(*fl))
            goto out;

    bool v6 = strchr(host, ':') != NULL;
    char hostport[300];
    char portbuf[8] = "";
    if (port != 80)
        snprintf(portbuf, sizeof portbuf, ":%d", port);
    int hl = snprintf(hostport, sizeof hostport, "%s%s%s%s", v6 ? "[" : "", host, v6 ? "]" : "",
                      portbuf);
    if (hl < 0 || (size_t)hl >= sizeof hostport)
        goto out;

    const char *pq = *path ? path : "/";
    char *target = xmalloc(put_path(NULL, pq) + 1);
    target[put_path(target, pq)] = '\0';
    size_t n = 0, cap = 0;
    put(&req, &n, &cap, "GET ");
    put(&req, &n, &cap, target);
    free(target);
    put(&req, &n, &cap, " HTTP/1.0\r\nHost: ");
    put(&req, &n, &cap, hostport);
    put(&req, &n, &cap, "\r\n");
    put_default(&req, &n, &cap, fields, "User-Agent", ua);
    put_default(&req, &n, &cap, fields, "Accept", "*/*");
    put_default(&req, &n, &cap, fields, "Accept-Encoding", "identity");
    for (const char *const *fl = fields; fl && *fl; fl++) {
        put(&req, &n, &cap, *fl);
        put(&req, &n, &cap, "\r\n");
    }
    put(&req, &n, &cap, "Connection: close\r\n\r\n");
    xappend(&req, &n, &cap, "", 1); /* the NUL, not counted */
    if (len)
        *len = n - 1;
out:
    free(scheme);
    free(host);
    free(path);
    return req;
}

/* ---- response parser ------------------------------------------------------------ */

enum state {
    ST_HEAD,       /* the head parser has it */
    ST_BODY_LEN,   /* body delimited by Content-Length */
    ST_BODY_EOF,   /* body delimited by the end of the connection */
    ST_CHUNK_SIZE, /* hex digits of a chunk size */
    ST_CHUNK_WS,   /* whitespace after the size */
    ST_CHUNK_EXT,  /* ";ext..." up to the end of the size line */
    ST_CHUNK_LF,   /* CR seen at the end of the size line */
    ST_CHUNK_DATA, /* chunk bytes */
    ST_CHUNK_END,  /* CRLF after the chunk data */
    ST_CHUNK_END_LF,
    ST_TRAILER, /* trailer lines after the last chunk, up to an empty line */
    ST_DONE,
    ST_ERROR,
};

#define CHUNK_LINE_MAX 4096 /* a chunk size line without its extensions; the trailers */

struct http_parser {
    http_sink sink;
    enum state state;
    char error[96];

    http_head_parser *head;
    bool has_head;
    http_inflate *inflate; /* Content-Encoding gzip or deflate, else NULL */
    bool sink_full;        /* the sink wants no more: the rest is not inflated */
    bool framed_only;      /* http_parser_new_framed: no inflating */
    bool h2;               /* http_parser_expect_h2 */
    long long wire_size;   /* body bytes as framed (compressed, if it is) */
    long long body_size;   /* body bytes delivered to on_body */
    long long remaining;   /* Content-Length or chunk bytes still to come */
    int chunk_digits;
    size_t chunk_line; /* bytes of the current size line / trailer section */
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

http_parser *http_parser_new(const http_sink *sink)
{
    http_parser *p = xcalloc(1, sizeof *p);
    if (sink)
        p->sink = *sink;
    p->state = ST_HEAD; /* p->head comes with the first byte: a fetch that
                                  waits for its server holds no head buffers */
    return p;
}

http_parser *http_parser_new_framed(const http_sink *sink)
{
    http_parser *p = http_parser_new(sink);
    p->framed_only = true;
    return p;
}

void http_parser_expect_h2(http_parser *p)
{
    p->h2 = true;
}

void http_parser_free(http_parser *p)
{
    if (!p)
        return;
    http_head_parser_free(p->head);
    http_inflate_free(p->inflate);
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

/* The final head is complete: choose how the body ends, then report the head. */
static void end_of_head(http_parser *p)
{
    const http_head *h = http_head_parser_head(p->head);
    p->has_head = true;
    switch (http_head_parser_body(p->head)) {
    case HTTP_BODY_NONE: p->state = ST_DONE; break;
    case HTTP_BODY_LENGTH:
        p->state = ST_BODY_LEN;
        p->remaining = h->content_length;
        break;
    case HTTP_BODY_CHUNKED: p->state = ST_CHUNK_SIZE, p->chunk_digits = 0, p->chunk_line = 0; break;
    case HTTP_BODY_UNTIL_CLOSE: p->state = ST_BODY_EOF; break;
    }
    if (http_head_parser_coding(p->head) != HTTP_CODING_IDENTITY && !p->framed_only)
        p->inflate = http_inflate_new(http_head_parser_coding(p->head));
    http_head_parser_deliver(p->head, &p->sink);
}

static size_t head_bytes(http_parser *p, const char *data, size_t len)
{
    size_t used;
    if (!p->head) {
        p->head = http_head_parser_new();
        if (p->sink.on_wire)
            http_head_parser_keep_wire(p->head);
        if (p->h2)
            http_head_parser_expect_h2(p->head);
    }
    int r = http_head_parser_feed(p->head, data, len, &used);
    if (r < 0)
        fail(p, http_head_parser_error(p->head));
    else if (r > 0)
        end_of_head(p);
    return used;
}

/* --- body --- */

static bool inflated(void *ctx, const char *data, size_t n)
{
    http_parser *p = ctx;
    p->body_size += (long long)n;
    if (p->sink.on_body)
        p->sink.on_body(p->sink.ctx, data, n);
    return !(p->sink.is_full && p->sink.is_full(p->sink.ctx));
}

/* Body bytes as framed: to the sink, through zlib when the server compressed them
 * (until the sink is full: what a gzip bomb would give past that is never made).
 * Returns false when they do not decode. */
static bool deliver(http_parser *p, const char *data, size_t n)
{
    if (n == 0)
        return true;
    p->wire_size += (long long)n;
    if (p->inflate) {
        if (p->sink_full)
            return true;
        int r = http_inflate_feed(p->inflate, data, n, inflated, p);
        p->sink_full = r == 1;
        if (r >= 0)
            return true;
        fail(p, http_coding_corrupt(http_head_parser_coding(p->head)));
        return false;
    }
    p->body_size += (long long)n;
    if (p->sink.on_body)
        p->sink.on_body(p->sink.ctx, data, n);
    return true;
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
    fail(p, http_err_chunked);
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

/* Chunk extensions are skipped up to the line end, however long. */
static size_t chunk_ext(http_parser *p, const char *data, size_t len)
{
    const char *nl = memchr(data, '\n', len);
    if (!nl)
        return len;
    chunk_size_done(p);
    return (size_t)(nl - data) + 1;
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
    if (!deliver(p, data, n))
        return n;
    p->remaining -= (long long)n;
    if (p->remaining == 0)
        p->state = p->state == ST_BODY_LEN ? ST_DONE : ST_CHUNK_END;
    return n;
}

/* Consumes some bytes in the current state; returns how many. */
static size_t step(http_parser *p, const char *data, size_t len)
{
    switch (p->state) {
    case ST_HEAD: return head_bytes(p, data, len);
    case ST_BODY_EOF: deliver(p, data, len); return len;
    case ST_BODY_LEN:
    case ST_CHUNK_DATA: return body_bytes(p, data, len);
    case ST_CHUNK_SIZE:
    case ST_CHUNK_WS:
    case ST_CHUNK_LF: return chunk_size_byte(p, data[0]);
    case ST_CHUNK_EXT: return chunk_ext(p, data, len);
    case ST_CHUNK_END:
    case ST_CHUNK_END_LF: return chunk_end_byte(p, data[0]);
    case ST_TRAILER: return trailer(p, data, len);
    case ST_DONE:
    case ST_ERROR: break;
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
    while (len > 0 && p->state != ST_DONE && p->state != ST_ERROR) {
        bool body = p->state != ST_HEAD;
        size_t n = step(p, data, len);
        if (body) /* as received: chunk framing and compression kept */
            http_sink_wire(&p->sink, HTTP_WIRE_BODY, data, n);
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
    case ST_ERROR: return -1;
    case ST_DONE:
    case ST_BODY_EOF: p->state = ST_DONE; return 1;
    case ST_HEAD: return fail(p, http_err_head_cut); /* no byte at all, or part of a head */
    case ST_BODY_LEN: {
        char msg[96];
        snprintf(msg, sizeof msg, "body shorter than Content-Length (got %lld of %lld bytes)",
                 p->wire_size, p->wire_size + p->remaining);
        return fail(p, msg);
    }
    default: return fail(p, "connection closed inside a chunked body");
    }
}
