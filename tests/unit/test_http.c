/* test_http.c — the GET request builder and the incremental response parser.
 *
 * Most parser tests feed a response whole, then split in two at every byte, then one
 * byte at a time, and check that every way of cutting it gives the same callbacks and
 * the same result.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "http.h"

/* ---- request builder ------------------------------------------------------------ */

#define REQ_TAIL                                                                                   \
    "User-Agent: crawlstages/" CRAWL_VERSION "\r\n"                                                \
    "Accept: */*\r\n"                                                                              \
    "Accept-Encoding: identity\r\n"                                                                \
    "Connection: close\r\n\r\n"

static void expect_request(const char *url, const char *want)
{
    size_t len = 0;
    char *req = http_build_get(url, NULL, NULL, &len);
    assert_non_null(req);
    assert_string_equal(req, want);
    assert_int_equal(len, strlen(want));
    free(req);
}

static void test_build_plain(void **state)
{
    (void)state;
    expect_request("http://example.com/", "GET / HTTP/1.0\r\nHost: example.com\r\n" REQ_TAIL);
    expect_request("http://example.com", "GET / HTTP/1.0\r\nHost: example.com\r\n" REQ_TAIL);
    expect_request("http://example.com:80/a", "GET /a HTTP/1.0\r\nHost: example.com\r\n" REQ_TAIL);
}

static void test_build_port(void **state)
{
    (void)state;
    expect_request("http://example.com:8080/a/b.html",
                   "GET /a/b.html HTTP/1.0\r\nHost: example.com:8080\r\n" REQ_TAIL);
}

static void test_build_query(void **state)
{
    (void)state;
    expect_request("http://example.com/s?q=1&r=2",
                   "GET /s?q=1&r=2 HTTP/1.0\r\nHost: example.com\r\n" REQ_TAIL);
    expect_request("http://127.0.0.1:81/?x", "GET /?x HTTP/1.0\r\nHost: 127.0.0.1:81\r\n" REQ_TAIL);
}

static void test_build_ipv6(void **state)
{
    (void)state;
    expect_request("http://[::1]:8080/p", "GET /p HTTP/1.0\r\nHost: [::1]:8080\r\n" REQ_TAIL);
    expect_request("http://[::1]/", "GET / HTTP/1.0\r\nHost: [::1]\r\n" REQ_TAIL);
}

static void test_build_rejects(void **state)
{
    (void)state;
    size_t len = 12345;
    assert_null(http_build_get("https://example.com/", NULL, NULL, &len));
    assert_null(http_build_get("ftp://example.com/", NULL, NULL, &len));
    assert_null(http_build_get("/relative/path", NULL, NULL, &len));
    assert_null(http_build_get("", NULL, NULL, &len));
    assert_null(http_build_get(NULL, NULL, NULL, &len));
    /* A user agent that would end the header early (or smuggle one in). */
    assert_null(http_build_get("http://example.com/", "bot\r\nX-Evil: 1", NULL, &len));
    assert_null(http_build_get("http://example.com/", "bot\n", NULL, &len));
    assert_null(http_build_get("http://example.com/", "b\x7fot", NULL, &len));
}

/* --user-agent: the header says what it is given; NULL is the default. */
static void test_build_user_agent(void **state)
{
    (void)state;
    assert_string_equal(http_default_user_agent, "crawlstages/" CRAWL_VERSION);
    size_t len = 0;
    char *req = http_build_get("http://example.com/", "MyBot/2.0 (+http://x/)", NULL, &len);
    assert_non_null(req);
    assert_string_equal(req,
                        "GET / HTTP/1.0\r\nHost: example.com\r\n"
                        "User-Agent: MyBot/2.0 (+http://x/)\r\n"
                        "Accept: */*\r\nAccept-Encoding: identity\r\n"
                        "Connection: close\r\n\r\n");
    assert_int_equal(len, strlen(req));
    free(req);
}

/* Extra header fields (--header): sent after the builder's own, in order; one named
 * like a default (Accept here, any case) replaces it; a bad one makes no request. */
static void test_build_fields(void **state)
{
    (void)state;
    const char *const fields[] = {"X-One: 1", "accept: text/html", "X-Two:two  ", NULL};
    size_t len = 0;
    char *req = http_build_get("http://example.com/", NULL, fields, &len);
    assert_non_null(req);
    assert_string_equal(req,
                        "GET / HTTP/1.0\r\nHost: example.com\r\n"
                        "User-Agent: crawlstages/" CRAWL_VERSION "\r\n"
                        "Accept-Encoding: identity\r\n"
                        "X-One: 1\r\naccept: text/html\r\nX-Two:two  \r\n"
                        "Connection: close\r\n\r\n");
    assert_int_equal(len, strlen(req));
    free(req);
    const char *const ua[] = {"User-Agent: Other/1", NULL};
    req = http_build_get("http://example.com/", "Mine/2", ua, &len);
    assert_non_null(req);
    assert_null(strstr(req, "Mine/2"));
    assert_non_null(strstr(req, "\r\nUser-Agent: Other/1\r\n"));
    free(req);
    const char *const evil[] = {"X-A: 1", "X-B: 2\r\nX-Evil: 1", NULL};
    assert_null(http_build_get("http://example.com/", NULL, evil, &len));
    const char *const host[] = {"Host: other.org", NULL};
    assert_null(http_build_get("http://example.com/", NULL, host, &len));
}

static void test_field_check(void **state)
{
    (void)state;
    assert_null(http_field_check("X-A: b"));
    assert_null(http_field_check("X-A:"));
    assert_null(http_field_check("x!#$%&'*+-.^_`|~9: v\tw \x80"));
    assert_int_equal(http_field_name_len("X-A: b"), 3);
    assert_int_equal(http_field_name_len("X A: b"), 0);
    assert_string_equal(http_field_check("X-A"), "not a header field: give \"Name: value\"");
    assert_string_equal(http_field_check(": b"), "the name is empty");
    assert_non_null(strstr(http_field_check("X A: b"), "not an RFC 9110 token"));
    assert_non_null(strstr(http_field_check("X-A : b"), "not an RFC 9110 token"));
    assert_non_null(strstr(http_field_check("X(A): b"), "not an RFC 9110 token"));
    assert_non_null(strstr(http_field_check("X-A: b\r\nX-B: c"), "control character"));
    assert_non_null(strstr(http_field_check("X-A: b\n"), "control character"));
    assert_non_null(strstr(http_field_check("X-A: \x7f"), "control character"));
    static const char *const own[] = {"Host: a", "host:a", "Connection: keep-alive",
                                      "Content-Length: 5", "TRANSFER-ENCODING: chunked"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        assert_string_equal(http_field_check(own[i]), "the transport writes this field itself");
}

/* ---- a sink that records everything ------------------------------------------------ */

typedef struct record {
    int heads;
    int status;
    char *ctype, *location; /* copies; NULL when absent */
    long long content_length;
    char *body;
    size_t body_len;
    int body_calls;
    bool body_before_head;
    const char *fed_lo, *fed_hi; /* the buffer being fed, to check for no copies */
    bool body_outside_feed;
    char *fields; /* "name: value\n" per on_header call */
    size_t fields_len;
    bool field_after_head;
} record;

/* A compressed body comes out of zlib's buffer, not the fed one: set for those tests. */
static bool g_decoded;

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void rec_head(void *ctx, const http_head *h)
{
    record *r = ctx;
    r->heads++;
    free(r->ctype);
    free(r->location);
    r->status = h->status;
    r->ctype = dup_or_null(h->content_type);
    r->location = dup_or_null(h->location);
    r->content_length = h->content_length;
}

static void rec_body(void *ctx, const char *data, size_t len)
{
    record *r = ctx;
    if (r->heads == 0)
        r->body_before_head = true;
    if (!g_decoded && (data < r->fed_lo || data + len > r->fed_hi))
        r->body_outside_feed = true;
    r->body = realloc(r->body, r->body_len + len + 1);
    assert_non_null(r->body);
    memcpy(r->body + r->body_len, data, len);
    r->body_len += len;
    r->body[r->body_len] = '\0';
    r->body_calls++;
}

static void rec_header(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen)
{
    record *r = ctx;
    if (r->heads)
        r->field_after_head = true;
    r->fields = realloc(r->fields, r->fields_len + nlen + vlen + 4);
    assert_non_null(r->fields);
    r->fields_len += (size_t)sprintf(r->fields + r->fields_len, "%.*s: %.*s\n", (int)nlen, name,
                                     (int)vlen, value);
}

static void rec_free(record *r)
{
    free(r->fields);
    free(r->ctype);
    free(r->location);
    free(r->body);
    memset(r, 0, sizeof *r);
}

/* The outcome of one parse: the record plus the final result and error. */
typedef struct outcome {
    record rec;
    int rc;
    char error[128];
    long long body_size;
} outcome;

/* Feeds resp cut at the given offsets (ascending), stopping at the first non-zero
 * result, and signals EOF if the parser still wants more. */
static void parse_cuts(const char *resp, size_t len, const size_t *cuts, size_t ncuts, outcome *o)
{
    memset(o, 0, sizeof *o);
    http_sink sink = {
        .on_head = rec_head, .on_body = rec_body, .ctx = &o->rec, .on_header = rec_header};
    http_parser *p = http_parser_new(&sink);
    assert_non_null(p);
    size_t at = 0;
    int rc = 0;
    for (size_t i = 0; i <= ncuts && rc == 0; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        o->rec.fed_lo = resp + at;
        o->rec.fed_hi = resp + end;
        rc = http_parser_feed(p, resp + at, end - at);
        at = end;
    }
    if (rc == 0)
        rc = http_parser_eof(p);
    o->rc = rc;
    const char *err = http_parser_error(p);
    snprintf(o->error, sizeof o->error, "%s", err ? err : "");
    o->body_size = http_parser_body_size(p);
    assert_int_equal(http_parser_has_head(p), o->rec.heads);
    http_parser_free(p);
}

static void parse_whole(const char *resp, size_t len, outcome *o)
{
    parse_cuts(resp, len, NULL, 0, o);
}

static void assert_str_or_null(const char *a, const char *b)
{
    if (!a || !b)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

static void assert_same(const outcome *a, const outcome *b)
{
    assert_int_equal(a->rc, b->rc);
    assert_string_equal(a->error, b->error);
    assert_int_equal(a->rec.heads, b->rec.heads);
    assert_int_equal(a->rec.status, b->rec.status);
    assert_str_or_null(a->rec.ctype, b->rec.ctype);
    assert_str_or_null(a->rec.location, b->rec.location);
    assert_int_equal(a->rec.content_length, b->rec.content_length);
    assert_int_equal(a->rec.body_len, b->rec.body_len);
    if (a->rec.body_len)
        assert_memory_equal(a->rec.body, b->rec.body, a->rec.body_len);
    assert_int_equal(a->body_size, b->body_size);
    assert_int_equal(a->rec.fields_len, b->rec.fields_len);
    if (a->rec.fields_len)
        assert_memory_equal(a->rec.fields, b->rec.fields, a->rec.fields_len);
    assert_false(b->rec.field_after_head);
    assert_false(b->rec.body_before_head);
    assert_false(b->rec.body_outside_feed);
}

/* Parses resp whole, cut in two at every offset, and one byte at a time; every way
 * must agree. The whole-feed outcome is left in *ref for the caller to check. */
static void parse_all_ways(const char *resp, size_t len, outcome *ref)
{
    parse_whole(resp, len, ref);
    assert_false(ref->rec.body_before_head);
    assert_false(ref->rec.body_outside_feed);
    for (size_t i = 0; i <= len; i++) {
        outcome o;
        parse_cuts(resp, len, &i, 1, &o);
        assert_same(ref, &o);
        rec_free(&o.rec);
    }
    size_t *cuts = malloc((len ? len : 1) * sizeof *cuts);
    assert_non_null(cuts);
    for (size_t i = 0; i < len; i++)
        cuts[i] = i + 1;
    outcome o;
    parse_cuts(resp, len, cuts, len, &o);
    assert_same(ref, &o);
    rec_free(&o.rec);
    free(cuts);
}

#define S(lit) lit, sizeof(lit) - 1

/* ---- parser tests ----------------------------------------------------------------- */

static void test_simple_content_length(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/html\r\n"
                     "\r\nhello"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.heads, 1);
    assert_int_equal(o.rec.status, 200);
    assert_string_equal(o.rec.ctype, "text/html");
    assert_null(o.rec.location);
    assert_int_equal(o.rec.content_length, 5);
    assert_string_equal(o.rec.body, "hello");
    assert_int_equal(o.body_size, 5);
    rec_free(&o.rec);
}

/* The body goes out as slices of what was fed: one feed, one on_body call. */
static void test_body_not_copied(void **state)
{
    (void)state;
    static const char resp[] = "HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\n0123456789";
    record r = {0};
    http_sink sink = {.on_head = rec_head, .on_body = rec_body, .ctx = &r};
    http_parser *p = http_parser_new(&sink);
    r.fed_lo = resp;
    r.fed_hi = resp + sizeof resp - 1;
    assert_int_equal(http_parser_feed(p, resp, sizeof resp - 1), 1);
    assert_int_equal(r.body_calls, 1);
    assert_false(r.body_outside_feed);
    http_parser_free(p);
    rec_free(&r);
}

static void test_body_until_eof(void **state)
{
    (void)state;
    static const char resp[] = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it\n";
    record r = {0};
    http_sink sink = {.on_head = rec_head, .on_body = rec_body, .ctx = &r};
    http_parser *p = http_parser_new(&sink);
    r.fed_lo = resp;
    r.fed_hi = resp + sizeof resp - 1;
    assert_int_equal(http_parser_feed(p, resp, sizeof resp - 1), 0);
    assert_int_equal(r.content_length, -1);
    assert_int_equal(http_parser_eof(p), 1);
    assert_null(http_parser_error(p));
    assert_string_equal(r.body, "all of it\n");
    http_parser_free(p);
    rec_free(&r);

    outcome o;
    parse_all_ways(S(resp), &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.rec.body, "all of it\n");
    rec_free(&o.rec);
}

static void test_every_split_headers_and_body(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 301 Moved Permanently\r\n"
                     "Server: test\r\n"
                     "Location: http://example.com/new/place\r\n"
                     "Content-Type: text/html; charset=utf-8\r\n"
                     "Content-Length: 26\r\n"
                     "X-Empty:\r\n"
                     "\r\n"
                     "abcdefghijklmnopqrstuvwxyz"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.status, 301);
    assert_string_equal(o.rec.location, "http://example.com/new/place");
    assert_string_equal(o.rec.ctype, "text/html; charset=utf-8");
    assert_int_equal(o.rec.content_length, 26);
    assert_string_equal(o.rec.body, "abcdefghijklmnopqrstuvwxyz");
    rec_free(&o.rec);
}

static void test_lf_only(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.0 404 Not Found\nContent-Type: text/plain\nContent-Length: 4\n\n"
                     "gone"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.status, 404);
    assert_string_equal(o.rec.ctype, "text/plain");
    assert_string_equal(o.rec.body, "gone");
    rec_free(&o.rec);
}

static void test_no_reason_phrase(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok"), &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.status, 200);
    assert_string_equal(o.rec.body, "ok");
    rec_free(&o.rec);
}

static void test_case_insensitive_names(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 302 Found\r\ncontent-TYPE: text/html\r\nLOCATION: /x\r\n"
                     "CONTENT-length: 0\r\n\r\n"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.rec.ctype, "text/html");
    assert_string_equal(o.rec.location, "/x");
    assert_int_equal(o.rec.content_length, 0);
    assert_int_equal(o.rec.body_len, 0);
    rec_free(&o.rec);
}

static void test_whitespace_trimmed(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200 OK\r\nContent-Type: \t text/html; charset=utf-8 \t\r\n"
                     "Location:/no/space\r\nContent-Length:   3  \r\n\r\nabc"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.rec.ctype, "text/html; charset=utf-8");
    assert_string_equal(o.rec.location, "/no/space");
    assert_int_equal(o.rec.content_length, 3);
    rec_free(&o.rec);
}

static void test_obs_fold(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 302 Found\r\nLocation: /a\r\n  b\r\n\tc \r\n"
                     "X-Other: 1\r\n more\r\nContent-Length: 0\r\n\r\n"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.rec.location, "/a b c");
    assert_null(o.rec.ctype);
    rec_free(&o.rec);
}

static void expect_error(const char *resp, size_t len, const char *msg)
{
    outcome o;
    parse_all_ways(resp, len, &o);
    assert_int_equal(o.rc, -1);
    assert_string_equal(o.error, msg);
    rec_free(&o.rec);
}

static void test_garbage_status_line(void **state)
{
    (void)state;
    expect_error(S("SSH-2.0-OpenSSH_9.2\r\n"), "malformed status line");
    expect_error(S("<html>hello</html>"), "malformed status line");
    expect_error(S("HTTP/1.1 2000 OK\r\n\r\n"), "malformed status line");
    expect_error(S("HTTP/1.1 099 Low\r\n\r\n"), "malformed status line");
    expect_error(S("HTTP/1.1 600 High\r\n\r\n"), "malformed status line");
    expect_error(S("HTTP/1.1 20x OK\r\n\r\n"), "malformed status line");
    expect_error(S("HTTP/2 200 OK\r\n\r\n"), "malformed status line");
    expect_error(S("HTTP/1.1\r\n\r\n"), "malformed status line");
    expect_error(S("\r\nHTTP/1.1 200 OK\r\n\r\n"), "malformed status line");
}

/* One endless header line: the error comes as soon as the limit is passed, not at EOF.
 * (The head parser's own tests, test_http_head.c, try every rule and limit.) */
static void test_head_limit_without_newline(void **state)
{
    (void)state;
    http_sink sink = {.on_head = rec_head, .on_body = rec_body};
    record r = {0};
    sink.ctx = &r;
    http_parser *p = http_parser_new(&sink);
    assert_int_equal(http_parser_feed(p, S("HTTP/1.1 200 OK\r\nX: ")), 0);
    char chunk[4096];
    memset(chunk, 'a', sizeof chunk);
    int rc = 0;
    int feeds = 0;
    while (rc == 0 && feeds < 100) {
        rc = http_parser_feed(p, chunk, sizeof chunk);
        feeds++;
    }
    assert_int_equal(rc, -1);
    assert_int_equal(feeds, 16); /* 20 + 16 * 4096 passes 65536 with the 16th feed */
    assert_string_equal(http_parser_error(p), "header section over 65536 bytes");
    assert_int_equal(r.heads, 0);
    http_parser_free(p);
    rec_free(&r);
}

static void test_content_length_longer_than_body(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), &o);
    assert_int_equal(o.rc, -1);
    assert_string_equal(o.error, "body shorter than Content-Length (got 3 of 10 bytes)");
    assert_int_equal(o.rec.heads, 1);
    assert_string_equal(o.rec.body, "abc");
    rec_free(&o.rec);
}

static void test_extra_bytes_ignored(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef"), &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.body_len, 3);
    assert_string_equal(o.rec.body, "abc");
    assert_int_equal(o.body_size, 3);
    rec_free(&o.rec);

    /* Once complete, further feeds change nothing. */
    record r = {0};
    http_sink sink = {.on_head = rec_head, .on_body = rec_body, .ctx = &r};
    http_parser *p = http_parser_new(&sink);
    assert_int_equal(http_parser_feed(p, S("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")), 1);
    assert_int_equal(http_parser_feed(p, S("more")), 1);
    assert_int_equal(http_parser_eof(p), 1);
    assert_int_equal(r.body_len, 1);
    assert_int_equal(r.heads, 1);
    http_parser_free(p);
    rec_free(&r);
}

static void test_bad_content_length(void **state)
{
    (void)state;
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n"), "bad Content-Length");
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"), "bad Content-Length");
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n"), "bad Content-Length");
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"),
                 "bad Content-Length");
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"),
                 "bad Content-Length");
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n"), "bad Content-Length");

    outcome o; /* the same value repeated is fine */
    parse_all_ways(S("HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2, 2\r\n\r\nhi"), &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.content_length, 2);
    rec_free(&o.rec);
}

static void test_chunked(void **state)
{
    (void)state;
    static const char resp[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                               "Content-Length: 999\r\n\r\n"
                               "5\r\nhello\r\n"
                               "7;name=value\r\n, world\r\n"
                               "A \r\n" /* size, whitespace */
                               "\r\n\r\n\r\n\r\n\r\n"
                               "\r\n" /* 10 bytes of data, CRLF */
                               "0\r\nX-Trailer: yes\r\n\r\n"
                               "ignored";
    outcome o;
    parse_all_ways(S(resp), &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.content_length, -1);
    assert_string_equal(o.rec.body, "hello, world\r\n\r\n\r\n\r\n\r\n");
    assert_int_equal(o.body_size, 22);
    rec_free(&o.rec);

    /* Three pieces, cut everywhere. */
    size_t len = sizeof resp - 1;
    for (size_t i = 0; i <= len; i += 3)
        for (size_t j = i; j <= len; j += 2) {
            size_t cuts[2] = {i, j};
            outcome t;
            parse_cuts(resp, len, cuts, 2, &t);
            assert_int_equal(t.rc, 1);
            assert_string_equal(t.rec.body, "hello, world\r\n\r\n\r\n\r\n\r\n");
            rec_free(&t.rec);
        }
}

static void test_chunked_lf_only(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200 OK\ntransfer-encoding: gzip, Chunked\n\n"
                     "3\nabc\nf\n0123456789abcde\n0\n\n"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.rec.body, "abc0123456789abcde");
    rec_free(&o.rec);
}

static void test_chunked_errors(void **state)
{
    (void)state;
    const char *te = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    const char *bodies[] = {
        "zz\r\n",  "\r\n", "5\r\nhelloX\r\n0\r\n\r\n", "5 x\r\nhello", "1234567890abcdef0\r\n",
        "5\rhello"};
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        char resp[256];
        int n = snprintf(resp, sizeof resp, "%s%s", te, bodies[i]);
        expect_error(resp, (size_t)n, "bad chunked encoding");
    }
    expect_error(S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"),
                 "connection closed inside a chunked body");
}

/* Chunk extensions are skipped whatever their length, as libcurl skips them. */
static void test_long_chunk_extension(void **state)
{
    (void)state;
    static const char head[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;";
    size_t ext = 10240, len = sizeof head - 1 + ext + 64;
    char *resp = malloc(len);
    assert_non_null(resp);
    memcpy(resp, head, sizeof head - 1);
    memset(resp + sizeof head - 1, 'x', ext);
    int tail = snprintf(resp + sizeof head - 1 + ext, 64, "\r\nhello\r\n0\r\n\r\n");
    len = sizeof head - 1 + ext + (size_t)tail;
    outcome o;
    size_t cuts[] = {60, 5000, 10300};
    parse_cuts(resp, len, cuts, 3, &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.rec.body, "hello");
    rec_free(&o.rec);
    parse_whole(resp, len, &o);
    assert_int_equal(o.rc, 1);
    rec_free(&o.rec);
    free(resp);
}

/* A coding other than chunked last: the body runs to EOF, bytes as they are. */
static void test_other_transfer_coding(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n"
                     "Content-Length: 1\r\n\r\n5\r\nhello"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.content_length, -1);
    assert_string_equal(o.rec.body, "5\r\nhello");
    rec_free(&o.rec);
}

static void test_continue_skipped(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 100 Continue\r\n\r\n"
                     "HTTP/1.1 102 Processing\r\nContent-Type: bogus\r\n\r\n"
                     "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.heads, 1);
    assert_int_equal(o.rec.status, 200);
    assert_null(o.rec.ctype);
    assert_string_equal(o.rec.body, "ok");
    rec_free(&o.rec);

    expect_error(S("HTTP/1.1 100 Continue\r\n\r\n"), "connection closed before the response head");
}

/* on_header: every field of the final head, obs-fold unfolded, in order and before
 * on_head, repeats too; an interim head's fields never, nor a refused head's. */
static void test_every_header_field(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
                     "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Long: a\r\n b\r\n"
                     "Content-Type: text/html\r\nContent-Length: 2\r\n\r\nhi"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.rec.fields,
                        "Content-Type: text/plain\nX-Long: a b\n"
                        "Content-Type: text/html\nContent-Length: 2\n");
    assert_string_equal(o.rec.ctype, "text/plain");
    rec_free(&o.rec);
    parse_all_ways(S("HTTP/1.1 302 Found\r\nX-A: 1\r\nLocation: /a\r\nLocation: /b\r\n\r\n"), &o);
    assert_string_equal(o.error, "conflicting Location headers");
    assert_int_equal(o.rec.fields_len, 0);
    rec_free(&o.rec);
}

/* ---- Content-Encoding: the raw transport decodes gzip and deflate, asked or not ---- */

/* plain compressed by zlib: wbits 31 is gzip, 15 zlib, -15 bare deflate. */
static size_t squeeze(const char *plain, size_t n, int wbits, char *out, size_t cap)
{
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)plain;
    z.avail_in = (uInt)n;
    z.next_out = (unsigned char *)out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t len = z.total_out;
    deflateEnd(&z);
    return len;
}

/* A response with that Content-Encoding and body; returns its length. */
static size_t encoded_response(char *buf, size_t cap, const char *coding, const char *body,
                               size_t n)
{
    int h = snprintf(buf, cap,
                     "HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     coding, n);
    assert_true(h > 0 && (size_t)h + n <= cap);
    memcpy(buf + h, body, n);
    return (size_t)h + n;
}

/* Text that inflates past zlib's output buffer several times. */
static char *plain_text(size_t n)
{
    char *t = malloc(n + 1);
    assert_non_null(t);
    for (size_t i = 0; i < n; i++)
        t[i] = "<a href=\"/x\">x</a> "[i % 19];
    t[n] = '\0';
    return t;
}

static void expect_decoded(const char *coding, int wbits)
{
    size_t n = 70000;
    char *plain = plain_text(n), zbuf[4096], resp[4096];
    size_t zlen = squeeze(plain, n, wbits, zbuf, sizeof zbuf);
    size_t len = encoded_response(resp, sizeof resp, coding, zbuf, zlen);
    outcome o;
    g_decoded = true;
    parse_all_ways(resp, len, &o);
    g_decoded = false;
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.content_length, (long long)zlen); /* as sent */
    assert_int_equal(o.rec.body_len, n);
    assert_int_equal(o.body_size, (long long)n);
    assert_memory_equal(o.rec.body, plain, n);
    rec_free(&o.rec);
    free(plain);
}

static void test_compressed_bodies(void **state)
{
    (void)state;
    expect_decoded("gzip", 31);
    expect_decoded("x-gzip", 31);
    expect_decoded("gzip", 15); /* a zlib stream called gzip: zlib tells */
    expect_decoded("deflate", 15);
    expect_decoded("deflate", -15); /* bare deflate, as some servers send it */

    /* chunked and compressed */
    char zbuf[256], resp[512];
    size_t zlen = squeeze("hello, world", 12, 31, zbuf, sizeof zbuf);
    int h = snprintf(resp, sizeof resp,
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                     "Content-Encoding: gzip\r\n\r\n%zx\r\n",
                     zlen);
    memcpy(resp + h, zbuf, zlen);
    size_t len = (size_t)h + zlen;
    len += (size_t)sprintf(resp + len, "\r\n0\r\n\r\n");
    outcome o;
    g_decoded = true;
    parse_all_ways(resp, len, &o);
    g_decoded = false;
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.rec.body, "hello, world");
    rec_free(&o.rec);
}

/* A sink that is full stops the inflating: a bomb costs what the sink keeps. */
static bool full_at_20000(void *ctx)
{
    return ((record *)ctx)->body_len >= 20000;
}

static void test_inflate_stops_when_full(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *plain = calloc(1, n), zbuf[4096], resp[4096];
    assert_non_null(plain);
    size_t zlen = squeeze(plain, n, 31, zbuf, sizeof zbuf);
    size_t len = encoded_response(resp, sizeof resp, "gzip", zbuf, zlen);
    record r = {0};
    http_sink sink = {
        .on_head = rec_head, .on_body = rec_body, .ctx = &r, .is_full = full_at_20000};
    r.fed_lo = resp;
    r.fed_hi = resp + len;
    g_decoded = true;
    http_parser *p = http_parser_new(&sink);
    assert_int_equal(http_parser_feed(p, resp, len), 1); /* framing goes on */
    assert_true(r.body_len >= 20000 && r.body_len < 20000 + 16384);
    assert_int_equal(http_parser_body_size(p), (long long)r.body_len);
    http_parser_free(p);
    g_decoded = false;
    rec_free(&r);
    free(plain);
}

/* Not the coding it says, bytes after the end of the stream (a second gzip member
 * too): corrupt. A stream that stops early keeps what it gave, as libcurl does. */
static void test_corrupt_compressed_bodies(void **state)
{
    (void)state;
    char zbuf[512], body[1024], resp[2048];
    g_decoded = true;
    size_t len = encoded_response(resp, sizeof resp, "gzip", "hello", 5);
    expect_error(resp, len, "corrupt gzip body");
    len = encoded_response(resp, sizeof resp, "deflate", "hello", 5);
    expect_error(resp, len, "corrupt deflate body");

    size_t zlen = squeeze("hello, world", 12, 31, zbuf, sizeof zbuf);
    memcpy(body, zbuf, zlen);
    memcpy(body + zlen, "GARBAGE", 7);
    len = encoded_response(resp, sizeof resp, "gzip", body, zlen + 7);
    expect_error(resp, len, "corrupt gzip body");
    memcpy(body + zlen, zbuf, zlen);
    len = encoded_response(resp, sizeof resp, "gzip", body, 2 * zlen);
    expect_error(resp, len, "corrupt gzip body");

    outcome o;
    len = encoded_response(resp, sizeof resp, "gzip", zbuf, zlen - 8); /* no CRC, size */
    parse_all_ways(resp, len, &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.rec.body, "hello, world");
    rec_free(&o.rec);
    g_decoded = false;
}

static void test_no_body_statuses(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n"), &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.status, 204);
    assert_int_equal(o.rec.body_len, 0);
    rec_free(&o.rec);
}

static void test_empty_and_truncated(void **state)
{
    (void)state;
    outcome o;
    parse_whole("", 0, &o);
    assert_int_equal(o.rc, -1);
    assert_string_equal(o.error, "connection closed before the response head");
    assert_int_equal(o.rec.heads, 0);
    rec_free(&o.rec);

    expect_error(S("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"),
                 "connection closed before the response head");
    expect_error(S("HTT"), "connection closed before the response head");
}

static void test_nul_in_head(void **state)
{
    (void)state;
    expect_error(S("HTTP/1.1 200 OK\r\nX-A: a\0b\r\n\r\nbody"), "NUL byte in response head");
    expect_error(S("HTTP/1.1 200\0OK\r\n\r\n"), "NUL byte in response head");
    expect_error(S("HT\0P/1.1 200 OK\r\n\r\n"), "NUL byte in response head");

    outcome o; /* NUL in the body is just data */
    parse_all_ways(S("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\na\0b"), &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.rec.body_len, 3);
    assert_memory_equal(o.rec.body, "a\0b", 3);
    rec_free(&o.rec);
}

static int calls;
static void count_head(void *ctx, const http_head *h)
{
    (void)ctx, (void)h;
    calls++;
}
static void count_body(void *ctx, const char *d, size_t n)
{
    (void)ctx, (void)d, (void)n;
    calls++;
}

static void test_after_error_nothing_happens(void **state)
{
    (void)state;
    http_sink sink = {.on_head = count_head, .on_body = count_body};
    http_parser *p = http_parser_new(&sink);
    calls = 0;
    assert_int_equal(http_parser_feed(p, S("FTP 200\r\n")), -1);
    assert_int_equal(http_parser_feed(p, S("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")), -1);
    assert_int_equal(http_parser_eof(p), -1);
    assert_int_equal(calls, 0);
    assert_string_equal(http_parser_error(p), "malformed status line");
    assert_false(http_parser_has_head(p));
    http_parser_free(p);
}

static void test_null_callbacks_and_args(void **state)
{
    (void)state;
    http_parser *p = http_parser_new(NULL);
    assert_non_null(p);
    assert_null(http_parser_error(p));
    assert_int_equal(http_parser_feed(p, S("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")), 1);
    assert_int_equal(http_parser_body_size(p), 2);
    http_parser_free(p);
    http_parser_free(NULL);
    assert_int_equal(http_parser_feed(NULL, "x", 1), -1);
    assert_int_equal(http_parser_eof(NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_plain),
        cmocka_unit_test(test_build_port),
        cmocka_unit_test(test_build_query),
        cmocka_unit_test(test_build_ipv6),
        cmocka_unit_test(test_build_rejects),
        cmocka_unit_test(test_build_user_agent),
        cmocka_unit_test(test_build_fields),
        cmocka_unit_test(test_field_check),
        cmocka_unit_test(test_simple_content_length),
        cmocka_unit_test(test_body_not_copied),
        cmocka_unit_test(test_body_until_eof),
        cmocka_unit_test(test_every_split_headers_and_body),
        cmocka_unit_test(test_lf_only),
        cmocka_unit_test(test_no_reason_phrase),
        cmocka_unit_test(test_case_insensitive_names),
        cmocka_unit_test(test_whitespace_trimmed),
        cmocka_unit_test(test_obs_fold),
        cmocka_unit_test(test_every_header_field),
        cmocka_unit_test(test_compressed_bodies),
        cmocka_unit_test(test_corrupt_compressed_bodies),
        cmocka_unit_test(test_inflate_stops_when_full),
        cmocka_unit_test(test_long_chunk_extension),
        cmocka_unit_test(test_garbage_status_line),
        cmocka_unit_test(test_head_limit_without_newline),
        cmocka_unit_test(test_content_length_longer_than_body),
        cmocka_unit_test(test_extra_bytes_ignored),
        cmocka_unit_test(test_bad_content_length),
        cmocka_unit_test(test_chunked),
        cmocka_unit_test(test_chunked_lf_only),
        cmocka_unit_test(test_chunked_errors),
        cmocka_unit_test(test_other_transfer_coding),
        cmocka_unit_test(test_continue_skipped),
        cmocka_unit_test(test_no_body_statuses),
        cmocka_unit_test(test_empty_and_truncated),
        cmocka_unit_test(test_nul_in_head),
        cmocka_unit_test(test_after_error_nothing_happens),
        cmocka_unit_test(test_null_callbacks_and_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
