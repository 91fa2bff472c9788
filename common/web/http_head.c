/* http_head.c — the response head parser both transports share; the rules are in
 * http_head.h.
 *
 * Bytes come in any pieces. The line being read is copied into `line` (memchr finds
 * its end); each complete line is one step: the status line, a field line, a
 * continuation line or the empty line. A field is kept in `fields` as "name\0value\0"
 * and is judged (Content-Length, Location, ...) once it is complete: when the next line
 * is not a continuation of it.
 *
 * Split independence: the checks on bytes as they arrive (the status line's first
 * seven bytes, NUL, the size limit) look at them in stream order and the first
 * offending byte decides; the rest is decided a line at a time. So however the input
 * is cut up, the result and the error are the same.
 */
#include "http_head.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"

#define STR(x)  #x
#define XSTR(x) STR(x)

const char http_err_status_line[] = "malformed status line";
const char http_err_nul[] = "NUL byte in response head";
const char http_err_head_size[] = "header section over " XSTR(HTTP_MAX_HEAD) " bytes";
const char http_err_header_line[] = "malformed header line";
const char http_err_head_cut[] = "connection closed before the response head";
const char http_err_chunked[] = "bad chunked encoding";

#define NONE        SIZE_MAX              /* an offset meaning "absent" */
#define MAX_LENGTH  1000000000000000000LL /* a Content-Length above this is bad */
#define KEEP_BUFFER 4096                  /* reset frees buffers larger than this */

enum state { HS_STATUS, HS_FIELDS, HS_DONE, HS_ERROR };

struct http_head_parser {
    enum state state;
    char error[96];
    size_t head_bytes; /* of the head being read, status line included */
    char *line;        /* the line being read */
    size_t line_len, line_cap;
    char *fields; /* "name\0value\0" per field of this head, in order */
    size_t fields_len, fields_cap;
    size_t pending; /* offset of the last field, not judged yet, or NONE */
    /* what the head says */
    int status;
    size_t ctype, location; /* offsets of the first values in fields, or NONE */
    long long content_length;
    bool te_present, te_chunked;
    http_coding coding;
    bool h2;          /* http_head_parser_expect_h2 */
    char version[16]; /* the status line's "HTTP/..." */
    http_head head;   /* filled when the head is complete */
    bool keep_wire;   /* http_head_parser_keep_wire */
    char *wire;       /* the bytes of this head, as they came */
    size_t wire_len, wire_cap;
};

static int fail(http_head_parser *hp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(http_head_parser *hp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(hp->error, sizeof hp->error, fmt, ap);
    va_end(ap);
    hp->state = HS_ERROR;
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
    while (*e > *s && is_ws((*e)[-1]))
        (*e)--;
}

static bool name_is(const char *s, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(s, name, n) == 0;
}

/* RFC 9110 5.6.2: the characters of a token. */
static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A new head starts (the first, or the one after an interim response). */
static void start_head(http_head_parser *hp)
{
    hp->wire_len = 0;
    hp->state = HS_STATUS;
    hp->head_bytes = hp->line_len = hp->fields_len = 0;
    hp->pending = hp->ctype = hp->location = NONE;
    hp->status = 0;
    hp->content_length = -1;
    hp->te_present = hp->te_chunked = false;
    hp->coding = HTTP_CODING_IDENTITY;
}

http_head_parser *http_head_parser_new(void)
{
    http_head_parser *hp = xcalloc(1, sizeof *hp);
    start_head(hp);
    return hp;
}

void http_head_parser_free(http_head_parser *hp)
{
    if (!hp)
        return;
    free(hp->line);
    free(hp->fields);
    free(hp->wire);
    free(hp);
}

void http_head_parser_reset(http_head_parser *hp)
{
    if (hp->line_cap > KEEP_BUFFER) {
        free(hp->line);
        hp->line = NULL;
        hp->line_cap = 0;
    }
    if (hp->fields_cap > KEEP_BUFFER) {
        free(hp->fields);
        hp->fields = NULL;
        hp->fields_cap = 0;
    }
    if (hp->wire_cap > KEEP_BUFFER) {
        free(hp->wire);
        hp->wire = NULL;
        hp->wire_cap = 0;
    }
    hp->keep_wire = false;
    hp->h2 = false;
    start_head(hp);
}

void http_head_parser_expect_h2(http_head_parser *hp)
{
    hp->h2 = true;
}

const char *http_head_parser_error(const http_head_parser *hp)
{
    return hp->state == HS_ERROR ? hp->error : NULL;
}

bool http_head_parser_done(const http_head_parser *hp)
{
    return hp->state == HS_DONE;
}

const char *http_coding_corrupt(http_coding c)
{
    return c == HTTP_CODING_GZIP   ? "corrupt gzip body"
        : c == HTTP_CODING_DEFLATE ? "corrupt deflate body"
                                   : NULL;
}

/* ---- the status line ----------------------------------------------------------- */

/* The version a status line starts with: "HTTP/1.D " (or "HTTP/2 " over HTTP/2). */
static const char *status_prefix(const http_head_parser *hp)
{
    return hp->h2 ? "HTTP/2 " : "HTTP/1.";
}

/* "HTTP/1.D CODE[ reason]" (or "HTTP/2 CODE[ reason]"), CODE 100..599. */
static int parse_status(http_head_parser *hp, const char *s, const char *e)
{
    size_t vlen = hp->h2 ? 6 : 8; /* "HTTP/2", "HTTP/1.D" */
    if (e - s < (ptrdiff_t)vlen + 4 || memcmp(s, status_prefix(hp), 7) != 0
        || (!hp->h2 && (s[7] < '0' || s[7] > '9')) || s[vlen] != ' ')
        return fail(hp, "%s", http_err_status_line);
    memcpy(hp->version, s, vlen);
    hp->version[vlen] = '\0';
    s += vlen + 1;
    while (s < e && *s == ' ')
        s++;
    if (e - s < 3 || s[0] < '1' || s[0] > '5' || s[1] < '0' || s[1] > '9' || s[2] < '0'
        || s[2] > '9' || (e - s > 3 && !is_ws(s[3])))
        return fail(hp, "%s", http_err_status_line);
    hp->status = (s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0');
    hp->state = HS_FIELDS;
    return 0;
}

/* The first bytes of a status line, checked as they arrive, so that a peer that does
 * not speak HTTP fails at once rather than at the size limit. */
static int check_status_prefix(http_head_parser *hp, const char *data, size_t n)
{
    const char *want = status_prefix(hp);
    for (size_t i = 0; i < n && hp->line_len + i < 7; i++)
        if (data[i] != want[hp->line_len + i])
            return fail(hp, "%s", data[i] ? http_err_status_line : http_err_nul);
    return 0;
}

/* ---- fields ---------------------------------------------------------------------- */

static void keep(http_head_parser *hp, const char *s, size_t n)
{
    xappend(&hp->fields, &hp->fields_len, &hp->fields_cap, s, n);
}

/* The name and value of the field at off. */
static const char *value_at(const http_head_parser *hp, size_t off)
{
    return hp->fields + off + strlen(hp->fields + off) + 1;
}

/* One Content-Length value: a comma-separated list of equal decimal numbers, equal to
 * any earlier one. */
static int judge_content_length(http_head_parser *hp, const char *s)
{
    const char *e = s + strlen(s);
    for (;;) {
        const char *comma = memchr(s, ',', (size_t)(e - s));
        const char *is = s, *ie = comma ? comma : e;
        trim(&is, &ie);
        if (is == ie)
            return fail(hp, "bad Content-Length");
        long long v = 0;
        for (const char *d = is; d < ie; d++) {
            if (*d < '0' || *d > '9' || v > MAX_LENGTH / 10)
                return fail(hp, "bad Content-Length");
            v = v * 10 + (*d - '0');
        }
        if (hp->content_length >= 0 && hp->content_length != v)
            return fail(hp, "bad Content-Length");
        hp->content_length = v;
        if (!comma)
            return 0;
        s = comma + 1;
    }
}

/* Content-Encoding: identity, gzip or deflate, one compression at most. */
static int judge_content_encoding(http_head_parser *hp, const char *value)
{
    const char *s = value, *end = s + strlen(s);
    while (s < end) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *cs = s, *ce = comma ? comma : end;
        trim(&cs, &ce);
        size_t n = (size_t)(ce - cs);
        http_coding c = name_is(cs, n, "gzip") || name_is(cs, n, "x-gzip") ? HTTP_CODING_GZIP
            : name_is(cs, n, "deflate")                                    ? HTTP_CODING_DEFLATE
                                                                           : HTTP_CODING_IDENTITY;
        bool known = n == 0 || name_is(cs, n, "identity") || c != HTTP_CODING_IDENTITY;
        if (!known || (c != HTTP_CODING_IDENTITY && hp->coding != HTTP_CODING_IDENTITY))
            return fail(hp, "unsupported Content-Encoding '%.40s'", value);
        if (c != HTTP_CODING_IDENTITY)
            hp->coding = c;
        s = comma ? comma + 1 : end;
    }
    return 0;
}

/* Whether the last coding of a Transfer-Encoding value is "chunked". */
static bool last_coding_chunked(const char *s)
{
    const char *e = s + strlen(s), *c = strrchr(s, ',');
    if (c)
        s = c + 1;
    trim(&s, &e);
    return name_is(s, (size_t)(e - s), "chunked");
}

/* The pending field is complete (the next line is not its continuation): what it says. */
static int judge_field(http_head_parser *hp)
{
    size_t off = hp->pending;
    if (off == NONE)
        return 0;
    hp->pending = NONE;
    const char *name = hp->fields + off, *value = value_at(hp, off);
    size_t n = strlen(name);
    if (name_is(name, n, "content-type")) {
        if (hp->ctype == NONE)
            hp->ctype = off;
    } else if (name_is(name, n, "location")) {
        if (hp->location == NONE)
            hp->location = off;
        else if (strcmp(value_at(hp, hp->location), value) != 0)
            return fail(hp, "conflicting Location headers");
    } else if (name_is(name, n, "content-length")) {
        return judge_content_length(hp, value);
    } else if (name_is(name, n, "transfer-encoding")) {
        hp->te_present = true;
        hp->te_chunked = last_coding_chunked(value);
    } else if (name_is(name, n, "content-encoding")) {
        return judge_content_encoding(hp, value);
    }
    return 0;
}

/* A line that starts with a space or a tab: more of the pending field's value. */
static int fold_line(http_head_parser *hp, const char *s, const char *e)
{
    if (hp->pending == NONE)
        return fail(hp, "%s", http_err_header_line);
    trim(&s, &e);
    if (s == e)
        return 0;
    /* the value is the last string in fields: extend it in place */
    hp->fields_len--; /* its NUL */
    if (*value_at(hp, hp->pending))
        keep(hp, " ", 1);
    keep(hp, s, (size_t)(e - s));
    keep(hp, "", 1);
    return 0;
}

static int field_line(http_head_parser *hp, const char *s, const char *e)
{
    if (judge_field(hp) < 0)
        return -1;
    const char *colon = memchr(s, ':', (size_t)(e - s));
    if (!colon || colon == s)
        return fail(hp, "%s", http_err_header_line);
    if (is_ws(colon[-1]))
        return fail(hp, "whitespace between a header name and its colon");
    for (const char *c = s; c < colon; c++)
        if (!is_tchar((unsigned char)*c))
            return fail(hp, "%s", http_err_header_line);
    const char *vs = colon + 1, *ve = e;
    trim(&vs, &ve);
    hp->pending = hp->fields_len;
    keep(hp, s, (size_t)(colon - s));
    keep(hp, "", 1);
    keep(hp, vs, (size_t)(ve - vs));
    keep(hp, "", 1);
    return 0;
}

/* ---- the end of a head ------------------------------------------------------------ */

static int end_of_head(http_head_parser *hp)
{
    if (judge_field(hp) < 0)
        return -1;
    if (hp->status == 101)
        return fail(hp, "unrequested 101 Switching Protocols");
    if (hp->status < 200) { /* interim: the real response follows */
        start_head(hp);
        return 0;
    }
    hp->head = (http_head){
        .status = hp->status,
        .content_type = hp->ctype == NONE ? NULL : value_at(hp, hp->ctype),
        .location = hp->location == NONE ? NULL : value_at(hp, hp->location),
        .content_length = hp->te_present ? -1 : hp->content_length,
        .version = hp->version,
    };
    hp->state = HS_DONE;
    return 1;
}

/* A complete line in hp->line (its '\n' included): one step. */
static int end_of_line(http_head_parser *hp)
{
    const char *s = hp->line, *e = hp->line + hp->line_len - 1; /* at the '\n' */
    hp->line_len = 0;
    if (e > s && e[-1] == '\r')
        e--;
    if (hp->state == HS_STATUS)
        return parse_status(hp, s, e);
    if (s == e)
        return end_of_head(hp);
    if (is_ws(*s))
        return fold_line(hp, s, e);
    return field_line(hp, s, e);
}

int http_head_parser_feed(http_head_parser *hp, const char *data, size_t len, size_t *used)
{
    *used = 0;
    while (len > 0 && (hp->state == HS_STATUS || hp->state == HS_FIELDS)) {
        size_t room = HTTP_MAX_HEAD - hp->head_bytes;
        if (room == 0)
            return fail(hp, "%s", http_err_head_size);
        size_t take = len < room ? len : room;
        const char *nl = memchr(data, '\n', take);
        size_t n = nl ? (size_t)(nl - data) + 1 : take;
        *used += n;
        if (hp->state == HS_STATUS && check_status_prefix(hp, data, n) < 0)
            return -1;
        if (memchr(data, '\0', n))
            return fail(hp, "%s", http_err_nul);
        xappend(&hp->line, &hp->line_len, &hp->line_cap, data, n);
        if (hp->keep_wire)
            xappend(&hp->wire, &hp->wire_len, &hp->wire_cap, data, n);
        hp->head_bytes += n;
        data += n;
        len -= n;
        if (nl && end_of_line(hp) != 0)
            break;
    }
    return hp->state == HS_ERROR ? -1 : hp->state == HS_DONE ? 1 : 0;
}

/* ---- after the head ------------------------------------------------------------ */

const http_head *http_head_parser_head(const http_head_parser *hp)
{
    return &hp->head;
}

http_body_kind http_head_parser_body(const http_head_parser *hp)
{
    if (hp->status == 204 || hp->status == 304)
        return HTTP_BODY_NONE;
    if (hp->te_chunked)
        return HTTP_BODY_CHUNKED;
    if (hp->te_present || hp->content_length < 0)
        return HTTP_BODY_UNTIL_CLOSE;
    return hp->content_length == 0 ? HTTP_BODY_NONE : HTTP_BODY_LENGTH;
}

http_coding http_head_parser_coding(const http_head_parser *hp)
{
    return hp->coding;
}

void http_head_parser_keep_wire(http_head_parser *hp)
{
    hp->keep_wire = true;
}

void http_head_parser_deliver(const http_head_parser *hp, const http_sink *sink)
{
    if (!sink)
        return;
    if (hp->keep_wire)
        http_sink_wire(sink, HTTP_WIRE_HEAD, hp->wire, hp->wire_len);
    if (sink->on_header) {
        for (size_t off = 0; off < hp->fields_len;) {
            const char *name = hp->fields + off, *value = value_at(hp, off);
            size_t nlen = strlen(name), vlen = strlen(value);
            sink->on_header(sink->ctx, name, nlen, value, vlen);
            off = (size_t)(value - hp->fields) + vlen + 1;
        }
    }
    if (sink->on_head)
        sink->on_head(sink->ctx, &hp->head);
}
