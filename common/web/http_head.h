/* http_head.h — the one HTTP/1.x response head parser, used by both transports: the raw
 * parser (http.c) feeds it the bytes of the socket, the libcurl glue (curlglue.c) the
 * lines of its header callback. One set of rules, limits and words, so that a response
 * gives the same record whichever transport fetched it.
 *
 * It is fed bytes in any pieces (a line per call, as libcurl gives them, is one way);
 * the head ends at the empty line of the final response. The rules, after RFC 9110 and
 * RFC 9112 as a careful client reads them:
 *
 *  - Status line: "HTTP/1.D CODE[ reason]" with CODE 100..599; anything else (another
 *    version, 600, 999, "2x0") is "malformed status line". Over a connection that
 *    speaks HTTP/2 (http_head_parser_expect_h2: the libcurl glue, once ALPN chose h2),
 *    the head has no status line of its own; libcurl writes one, "HTTP/2 CODE ", and
 *    that is then the only form taken.
 *  - 1xx responses other than 101 are interim: skipped, with their fields; the final
 *    response follows on the same connection. 101 Switching Protocols is an error: we
 *    never ask to upgrade, and after a 101 the bytes are no longer HTTP.
 *  - A head is at most HTTP_MAX_HEAD bytes (status line and line ends counted; each
 *    interim head on its own); a NUL byte anywhere in it is an error.
 *  - A field line is "name:value"; the name is a token (RFC 9110 5.1). A line without a
 *    colon, with an empty name or a character a token cannot hold is "malformed header
 *    line"; whitespace between the name and the colon ("Location : /x") is its own
 *    error (RFC 9112 5.1: it was used for request smuggling). Lines end in LF or CRLF;
 *    the value loses the spaces and tabs around it.
 *  - obs-fold: a line that starts with a space or a tab continues the field before it;
 *    it is joined to its value with one space (RFC 9112 5.2). A continuation line with
 *    no field before it is "malformed header line".
 *  - Content-Length: each field is a list of equal decimal numbers; any other value
 *    ("+5", "0x5", "") or two different numbers are "bad Content-Length". Equal
 *    repeats are one value. Transfer-Encoding wins over it (RFC 9112 6.3).
 *  - Location: the first one counts; a second with another value is "conflicting
 *    Location headers" (the target would be a guess; browsers refuse it too). An equal
 *    repeat is harmless.
 *  - Content-Type: the first one counts; later ones are kept as fields but ignored.
 *  - Content-Encoding: identity, gzip (x-gzip) or deflate, at most one compression;
 *    anything else ("br", "gzip, gzip") is "unsupported Content-Encoding 'VALUE'". Both
 *    transports decode gzip and deflate whether they asked for it or not (the raw one
 *    with zlib, http_inflate.h): a server that compresses unasked still meant the page,
 *    and links inside it are links. A body that does not decode is "corrupt gzip body"
 *    (or deflate); bytes after the end of the compressed stream count as corrupt, a
 *    stream that stops early keeps what it gave.
 *
 * Every field of the final head, unfolded, goes to the sink's on_header in order, then
 * on_head once — only once the whole head has passed these rules, so a sink never sees
 * part of a head that is then refused.
 */
#ifndef CRAWL_HTTP_HEAD_H
#define CRAWL_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>

#define HTTP_MAX_HEAD 65536 /* a header section larger than this is an error */

/* The words of the errors that both transports can meet (the libcurl glue says what
 * libcurl refuses on its own in these words too). */
extern const char http_err_status_line[]; /* "malformed status line" */
extern const char http_err_nul[];         /* "NUL byte in response head" */
extern const char http_err_head_size[];   /* "header section over 65536 bytes" */
extern const char http_err_header_line[]; /* "malformed header line" */
extern const char http_err_head_cut[];    /* "connection closed before the response head" */
extern const char http_err_chunked[];     /* "bad chunked encoding" */

/* What a response head says that the crawler uses. Strings are NUL-terminated and
 * owned by whoever filled the struct; NULL when the header was absent. */
typedef struct http_head {
    int status;
    const char *content_type; /* raw Content-Type value */
    const char *location;     /* raw Location value */
    long long content_length; /* -1 when absent (or overridden by Transfer-Encoding) */
    const char *version;      /* the status line's: "HTTP/1.1", "HTTP/1.0", "HTTP/2" */
} http_head;

/* Where a response goes, whichever transport fetched it (raw parser or libcurl glue).
 * Any callback may be NULL. on_header: each field of the final head (name, value after
 * unfolding; not NUL-terminated, valid during the call), in order, before on_head.
 * on_connect (for --trace-events) is called by the transport, not the parser, once the
 * TCP (or TLS) connection is ready, before the request is sent; a reused connection is
 * ready at once. on_wait_fd, also the transport's: 1 when it found no free descriptor
 * (EMFILE) and waits to try again, 0 when it has one again (the fetch is not in flight
 * meanwhile). is_full: true once the sink wants no more body (it keeps --max-size
 * bytes): the raw parser then stops inflating a compressed body, whose every further
 * byte would be dropped — a gzip bomb costs what the sink keeps, not what it holds. */
typedef struct http_sink {
    void (*on_head)(void *ctx, const http_head *head);
    void (*on_body)(void *ctx, const char *data, size_t len);
    void *ctx;
    void (*on_connect)(void *ctx);
    void (*on_wait_fd)(void *ctx, int waiting);
    void (*on_header)(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen);
    bool (*is_full)(void *ctx);
    /* Set only by a sink that archives (WARC): what went over the wire, as it went —
     * HTTP_WIRE_PEER: the server's address, as text (once the connection is made);
     * HTTP_WIRE_REQUEST: the request head as sent; HTTP_WIRE_HEAD: the final response
     * head, status line to the empty line (interim heads left out), once, before
     * on_header; HTTP_WIRE_BODY: the body as received, in pieces, before they are
     * decoded (chunk framing and compression kept). With it set, libcurl's glue turns
     * off libcurl's decoding and decodes itself, as the raw transport does. */
    void (*on_wire)(void *ctx, int part, const char *data, size_t len);
} http_sink;

enum { HTTP_WIRE_PEER, HTTP_WIRE_REQUEST, HTTP_WIRE_HEAD, HTTP_WIRE_BODY };

/* The transport's way to say what went over the wire: NULL-safe. */
static inline void http_sink_wire(const http_sink *s, int part, const char *data, size_t len)
{
    if (s && s->on_wire)
        s->on_wire(s->ctx, part, data, len);
}

/* The transport's way to say "connected": NULL-safe. */
static inline void http_sink_connected(const http_sink *s)
{
    if (s && s->on_connect)
        s->on_connect(s->ctx);
}

/* The transport's way to say "waiting for a descriptor" (1) or "no longer" (0). */
static inline void http_sink_waiting_fd(const http_sink *s, int waiting)
{
    if (s && s->on_wait_fd)
        s->on_wait_fd(s->ctx, waiting);
}

/* How the body of a response is delimited (RFC 9112 6.3), for the raw parser. */
typedef enum {
    HTTP_BODY_NONE,        /* 204, 304, or Content-Length: 0 */
    HTTP_BODY_LENGTH,      /* Content-Length bytes */
    HTTP_BODY_CHUNKED,     /* Transfer-Encoding ending in chunked */
    HTTP_BODY_UNTIL_CLOSE, /* neither, or another transfer coding */
} http_body_kind;

/* The Content-Encoding of the body. */
typedef enum { HTTP_CODING_IDENTITY, HTTP_CODING_GZIP, HTTP_CODING_DEFLATE } http_coding;

/* "corrupt gzip body" / "corrupt deflate body" (NULL for identity). */
const char *http_coding_corrupt(http_coding c);

typedef struct http_head_parser http_head_parser;

http_head_parser *http_head_parser_new(void);
void http_head_parser_free(http_head_parser *hp);
/* Ready for another response (keeps small buffers for reuse); HTTP/1.x again. */
void http_head_parser_reset(http_head_parser *hp);
/* The response comes over HTTP/2: its status line is "HTTP/2 CODE[ reason]" (the form
 * libcurl gives an HTTP/2 head), never HTTP/1.x. Before the first byte. */
void http_head_parser_expect_h2(http_head_parser *hp);

/* Feed bytes; *used says how many were taken (never past the final head's empty line).
 * Returns 0 to go on, 1 when the final head is complete, -1 on an error
 * (http_head_parser_error says which). Once done or failed it takes nothing more. */
int http_head_parser_feed(http_head_parser *hp, const char *data, size_t len, size_t *used);
const char *http_head_parser_error(const http_head_parser *hp);
/* Whether the final head is complete. */
bool http_head_parser_done(const http_head_parser *hp);

/* After completion: the head, the body's framing and coding. */
const http_head *http_head_parser_head(const http_head_parser *hp);
http_body_kind http_head_parser_body(const http_head_parser *hp);
http_coding http_head_parser_coding(const http_head_parser *hp);
/* Keep the bytes of the head being parsed (interim heads dropped), for
 * http_head_parser_deliver to give to the sink's on_wire. Until reset. */
void http_head_parser_keep_wire(http_head_parser *hp);
/* Hand the complete head to a sink: its bytes to on_wire (when kept), on_header for
 * each field, then on_head. */
void http_head_parser_deliver(const http_head_parser *hp, const http_sink *sink);

#endif
