/* http.h — raw HTTP/1.0 for stages 1 and 2: a GET request builder and an incremental
 * response parser.
 *
 * The parser is fed whatever bytes the socket gave (any split gives the same result)
 * and calls back once with the head (status line and headers), then with body chunks
 * as they arrive. The body ends at Content-Length, or at EOF (http_parser_eof).
 */
#ifndef CRAWL_HTTP_H
#define CRAWL_HTTP_H

#include <stddef.h>

#define HTTP_MAX_HEAD 65536  /* a header section larger than this is an error */

/* What a response head says that the crawler uses. Strings are NUL-terminated and
 * owned by whoever filled the struct; NULL when the header was absent. */
typedef struct http_head {
    int status;
    const char *content_type;   /* raw Content-Type value */
    const char *location;       /* raw Location value */
    long long content_length;   /* -1 when absent */
} http_head;

/* Where a response goes, whichever transport fetched it (raw parser or libcurl glue).
 * Any callback may be NULL. on_connect (for --trace-events) is called by the transport,
 * not the parser, once the TCP (or TLS) connection is ready, before the request is
 * sent; a reused connection is ready at once. on_wait_fd, also the transport's: 1 when
 * it found no free descriptor (EMFILE) and waits to try again, 0 when it has one again
 * (the fetch is not in flight meanwhile). */
typedef struct http_sink {
    void (*on_head)(void *ctx, const http_head *head);
    void (*on_body)(void *ctx, const char *data, size_t len);
    void *ctx;
    void (*on_connect)(void *ctx);
    void (*on_wait_fd)(void *ctx, int waiting);
} http_sink;

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

/* The User-Agent both transports send unless told otherwise: "crawlstages/VERSION". */
extern const char http_default_user_agent[];

/* Build "GET path HTTP/1.0\r\nHost: host[:port]\r\nUser-Agent: ...\r\n..." for an
 * absolute http URL; user_agent NULL means http_default_user_agent. Returns a malloc'd
 * request (length in *len), or NULL if the URL is not an absolute http URL or the
 * user agent holds a control character. */
char *http_build_get(const char *url, const char *user_agent, size_t *len);

typedef struct http_parser http_parser;

http_parser *http_parser_new(const http_sink *sink);
void http_parser_free(http_parser *p);
/* Feed bytes. Returns 0 to go on, 1 when the body is complete (Content-Length reached;
 * extra bytes are ignored), -1 on a protocol error (http_parser_error() says which:
 * "malformed status line", "header section over 65536 bytes", ...). */
int http_parser_feed(http_parser *p, const char *data, size_t len);
/* The peer closed the connection. Returns 1 if the response is complete, -1 if not
 * ("connection closed before the response head", "body shorter than Content-Length"). */
int http_parser_eof(http_parser *p);
const char *http_parser_error(const http_parser *p);
/* Whether the head has been parsed (and on_head called). */
int http_parser_has_head(const http_parser *p);
/* Body bytes delivered to on_body so far. */
long long http_parser_body_size(const http_parser *p);

#endif
