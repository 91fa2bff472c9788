/* http_inflate.h — the gzip and deflate Content-Encodings for the raw transport, with
 * zlib (libcurl decodes its own). The rule both transports follow is in http_head.h:
 * decode what the server says it compressed, asked or not; data that does not decode,
 * or comes after the end of the compressed stream, is corrupt; a stream that stops
 * early keeps what it gave.
 *
 * gzip also takes a zlib stream (as libcurl does: zlib tells them apart by their
 * header); deflate takes a zlib stream or a bare deflate one, which some servers send,
 * told apart by the first two bytes. Memory: zlib's state and window (about 40 KB) and
 * a 16 KB output buffer, whatever the body inflates to — the output goes out in pieces.
 */
#ifndef CRAWL_HTTP_INFLATE_H
#define CRAWL_HTTP_INFLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "http_head.h"

typedef struct http_inflate http_inflate;
/* Takes a piece of what the body inflates to; false: stop, no more is wanted. */
typedef bool (*http_inflate_out)(void *ctx, const char *data, size_t len);

/* coding: HTTP_CODING_GZIP or HTTP_CODING_DEFLATE. */
http_inflate *http_inflate_new(http_coding coding);
void http_inflate_free(http_inflate *z);
/* Decode len more bytes of the body; what they inflate to goes to out(ctx, ...), in
 * pieces. Returns 0, 1 when out said stop (the rest of these bytes is not decoded, and
 * z must not be fed again), or -1 when the body is corrupt (http_coding_corrupt says
 * so). */
int http_inflate_feed(http_inflate *z, const char *data, size_t len, http_inflate_out out,
                      void *ctx);

#endif
