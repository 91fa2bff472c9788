/* http.h — raw HTTP/1.0 for the raw transport: a GET request builder and an incremental
 * response parser.
 *
 * The parser is fed whatever bytes the socket gave (any split gives the same result)
 * and calls back once with the head (through the head parser both transports share,
 * http_head.h: on_header for each field, then on_head), then with body chunks as they
 * arrive, decoded when the server compressed them. The body ends at Content-Length, at
 * the last chunk, or at EOF (http_parser_eof).
 */
#ifndef CRAWL_HTTP_H
#define CRAWL_HTTP_H

#include <stddef.h>

#include "http_head.h"

/* The User-Agent both transports send unless told otherwise: "crawlstages/VERSION". */
extern const char http_default_user_agent[];

/* Extra request header fields, for both transports: each "Name: value" (the value
 * with or without spaces around it), in a NULL-terminated list. A field is sent as
 * given, after the transport's own; one whose name is a field the transport would send
 * by default (User-Agent, Accept, Accept-Encoding) replaces that default, as libcurl
 * does for CURLOPT_HTTPHEADER. Fields the transport writes itself from the URL and the
 * message (Host, Connection, Content-Length, Transfer-Encoding) are refused.
 *
 * http_field_check: NULL when field may be sent, else why not, in a few words ("the
 * name is empty", "a control character (CR, LF, ...) in the value", ...). The name
 * must be an RFC 9110 token; the value holds no control character but tab.
 * http_field_name_len: the length of field's name (up to its ':'), 0 if not a token. */
const char *http_field_check(const char *field);
size_t http_field_name_len(const char *field);

/* Build "GET path HTTP/1.0\r\nHost: host[:port]\r\nUser-Agent: ...\r\n..." for an
 * absolute http URL; user_agent NULL means http_default_user_agent; fields: extra
 * header fields (above), or NULL. Returns a malloc'd request (length in *len), or NULL
 * if the URL is not an absolute http URL, the user agent holds a control character or
 * a field fails http_field_check. */
char *http_build_get(const char *url, const char *user_agent, const char *const *fields,
                     size_t *len);

typedef struct http_parser http_parser;

http_parser *http_parser_new(const http_sink *sink);
/* The same, but the body goes to on_body as the message carried it, framing undone
 * (Content-Length, chunked) and any Content-Encoding kept: an archive's payload, whose
 * digest a WARC reader checks. */
http_parser *http_parser_new_framed(const http_sink *sink);
void http_parser_free(http_parser *p);
/* The response comes over HTTP/2, as libcurl gives it (http_head_parser_expect_h2):
 * "HTTP/2 CODE" status line, no chunked framing. Before the first byte. */
void http_parser_expect_h2(http_parser *p);
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
/* Body bytes delivered to on_body so far (decoded, when the server compressed them). */
long long http_parser_body_size(const http_parser *p);

#endif
