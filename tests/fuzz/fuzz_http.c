/* fuzz_http.c — libFuzzer target for the incremental HTTP response parser
 * (common/web/http.h).
 *
 * Input: a chunk spec (fuzz_common.h), then the bytes the server sends. The bytes are
 * fed in chunks of those sizes, stopping when the parser says done or error, then EOF;
 * and again whole. Both runs must give the same callbacks (header fields, head, body
 * bytes) and the same result and error message: the parser claims split independence.
 * Also checked: body size bookkeeping, on_head at most once and only with has_head,
 * every field before on_head, and a complete Content-Length body being exactly that
 * long (when it is not compressed). Bytes that start "HTTP/2 " are parsed as libcurl
 * gives an HTTP/2 response (http_parser_expect_h2), the rest as HTTP/1.x.
 */
#include "fuzz_common.h"

#include "http.h"

#include <stdbool.h>
#include <stdio.h>
#include <strings.h>

typedef struct run {
    record events; /* head fields, then body bytes, as they were reported */
    int heads;
    long long body_len;
    long long content_length;
    int status;
    bool encoded; /* a Content-Encoding field: the body is decoded */
    int rc;       /* the final return value */
    char error[128];
} run;

static void on_header(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen)
{
    run *r = ctx;
    FUZZ_CHECK(r->heads == 0);
    if (nlen == 16 && strncasecmp(name, "content-encoding", 16) == 0 && vlen > 0)
        r->encoded = true;
    record_add(&r->events, "FIELD ", 6);
    record_add(&r->events, name, nlen);
    record_add(&r->events, ": ", 2);
    record_add(&r->events, value, vlen);
    record_add(&r->events, "\n", 1);
}

static void on_head(void *ctx, const http_head *h)
{
    run *r = ctx;
    char line[64];
    r->heads++;
    r->status = h->status;
    r->content_length = h->content_length;
    FUZZ_CHECK(h->version != NULL);
    snprintf(line, sizeof line, "HEAD %s %d %lld\n", h->version, h->status, h->content_length);
    record_adds(&r->events, line);
    record_adds(&r->events, h->content_type ? h->content_type : "(no type)");
    record_add(&r->events, "\n", 1);
    record_adds(&r->events, h->location ? h->location : "(no location)");
    record_add(&r->events, "\nBODY\n", 6);
}

static void on_body(void *ctx, const char *data, size_t len)
{
    run *r = ctx;
    FUZZ_CHECK(r->heads == 1 && len > 0);
    r->body_len += (long long)len;
    record_add(&r->events, data, len);
}

static void parse(run *r, const uint8_t *data, size_t size, chunker *ch)
{
    memset(r, 0, sizeof *r);
    http_sink sink = {.on_head = on_head, .on_body = on_body, .ctx = r, .on_header = on_header};
    http_parser *p = http_parser_new(&sink);
    FUZZ_CHECK(p != NULL);
    if (size >= 7 && memcmp(data, "HTTP/2 ", 7) == 0)
        http_parser_expect_h2(p);
    int rc = 0;
    size_t off = 0;
    do {
        size_t n = ch ? chunker_next(ch, size - off) : size - off;
        rc = http_parser_feed(p, (const char *)data + off, n);
        off += n;
        FUZZ_CHECK(http_parser_body_size(p) == r->body_len);
        FUZZ_CHECK(http_parser_has_head(p) == (r->heads > 0));
    } while (rc == 0 && off < size);
    if (rc == 0)
        rc = http_parser_eof(p);
    FUZZ_CHECK(rc == 1 || rc == -1);
    /* After the end, nothing changes: more bytes and EOF give the same answer. */
    FUZZ_CHECK(http_parser_feed(p, "x", 1) == rc);
    FUZZ_CHECK(http_parser_eof(p) == rc);
    r->rc = rc;
    const char *err = http_parser_error(p);
    FUZZ_CHECK((rc == -1) == (err != NULL));
    snprintf(r->error, sizeof r->error, "%s", err ? err : "");
    FUZZ_CHECK(http_parser_body_size(p) == r->body_len);
    FUZZ_CHECK(r->heads <= 1);
    if (rc == 1) {
        FUZZ_CHECK(r->heads == 1);
        /* A complete Content-Length body is that long (204/304 have none). */
        if (r->content_length >= 0 && r->status != 204 && r->status != 304 && !r->encoded)
            FUZZ_CHECK(r->body_len == r->content_length);
    }
    http_parser_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    chunker ch = chunker_take(&data, &size);
    run split, whole;
    parse(&split, data, size, &ch);
    parse(&whole, data, size, NULL);
    FUZZ_CHECK(split.rc == whole.rc);
    FUZZ_CHECK(strcmp(split.error, whole.error) == 0);
    FUZZ_CHECK(split.heads == whole.heads);
    FUZZ_CHECK(record_equal(&split.events, &whole.events));
    record_free(&split.events);
    record_free(&whole.events);
    return 0;
}
