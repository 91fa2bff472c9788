/* test_http_head.c — the response head parser both transports share (http_head.h):
 * every rule of its header comment, each fed whole, cut in two at every byte, one byte
 * at a time and one line at a time (as libcurl's header callback feeds it): every way
 * must give the same head, fields, error and bytes taken.
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

#include "http_head.h"

/* ---- one parse, and what came of it ----------------------------------------------- */

typedef struct outcome {
    int rc;
    size_t used; /* bytes taken, in all (up to the error, after one) */
    char error[128];
    int heads; /* on_head calls */
    int status;
    char *ctype, *location; /* copies; NULL when absent */
    long long clen;
    http_body_kind body;
    http_coding coding;
    char *fields; /* "name: value\n" per on_header call */
    size_t fields_len;
} outcome;

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void rec_header(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen)
{
    outcome *o = ctx;
    assert_int_equal(o->heads, 0); /* every field before on_head */
    o->fields = realloc(o->fields, o->fields_len + nlen + vlen + 4);
    assert_non_null(o->fields);
    o->fields_len += (size_t)sprintf(o->fields + o->fields_len, "%.*s: %.*s\n", (int)nlen, name,
                                     (int)vlen, value);
}

static void rec_head(void *ctx, const http_head *h)
{
    outcome *o = ctx;
    o->heads++;
    o->status = h->status;
    o->ctype = dup_or_null(h->content_type);
    o->location = dup_or_null(h->location);
    o->clen = h->content_length;
}

static void outcome_free(outcome *o)
{
    free(o->ctype);
    free(o->location);
    free(o->fields);
    memset(o, 0, sizeof *o);
}

/* Feed resp in pieces ending at the given offsets (ascending; the last piece runs to
 * the end), stopping once the parser is done or failed. */
static void parse_cuts(http_head_parser *hp, const char *resp, size_t len, const size_t *cuts,
                       size_t ncuts, outcome *o)
{
    memset(o, 0, sizeof *o);
    size_t at = 0;
    int rc = 0;
    for (size_t i = 0; i <= ncuts && rc == 0 && at < len; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        if (end <= at)
            continue;
        size_t used = 0;
        rc = http_head_parser_feed(hp, resp + at, end - at, &used);
        assert_true(used <= end - at);
        if (rc == 0)
            assert_int_equal(used, end - at); /* going on: every byte taken */
        o->used = at + used;
        at = end;
    }
    o->rc = rc;
    const char *err = http_head_parser_error(hp);
    snprintf(o->error, sizeof o->error, "%s", err ? err : "");
    assert_int_equal(rc == -1, err != NULL);
    assert_int_equal(rc == 1, http_head_parser_done(hp));
    if (rc == 1) {
        http_sink sink = {.on_head = rec_head, .ctx = o, .on_header = rec_header};
        http_head_parser_deliver(hp, &sink);
        assert_int_equal(o->heads, 1);
        o->body = http_head_parser_body(hp);
        o->coding = http_head_parser_coding(hp);
        /* done or failed: it takes nothing more */
        size_t used = 99;
        assert_int_equal(http_head_parser_feed(hp, "x\r\n", 3, &used), 1);
        assert_int_equal(used, 0);
    } else if (rc == -1) {
        size_t used = 99;
        assert_int_equal(http_head_parser_feed(hp, "x\r\n", 3, &used), -1);
        assert_int_equal(used, 0);
    }
}

static void parse_fresh(const char *resp, size_t len, const size_t *cuts, size_t ncuts, outcome *o)
{
    http_head_parser *hp = http_head_parser_new();
    parse_cuts(hp, resp, len, cuts, ncuts, o);
    http_head_parser_free(hp);
}

#define OR_NULL(s) ((s) ? (s) : "(absent)")

static void assert_same(const outcome *a, const outcome *b)
{
    assert_int_equal(a->rc, b->rc);
    assert_string_equal(a->error, b->error);
    if (a->rc != -1)
        assert_int_equal(a->used, b->used); /* after an error it means nothing */
    assert_int_equal(a->heads, b->heads);
    assert_int_equal(a->status, b->status);
    assert_string_equal(OR_NULL(a->ctype), OR_NULL(b->ctype));
    assert_string_equal(OR_NULL(a->location), OR_NULL(b->location));
    assert_int_equal(a->clen, b->clen);
    assert_int_equal(a->body, b->body);
    assert_int_equal(a->coding, b->coding);
    assert_int_equal(a->fields_len, b->fields_len);
    if (a->fields_len)
        assert_memory_equal(a->fields, b->fields, a->fields_len);
}

/* Whole, in two at every offset (short inputs), a byte at a time, a line at a time,
 * and once more whole on a parser reset after another response: every way agrees.
 * The whole-feed outcome is left in *ref. */
static void parse_all_ways(const char *resp, size_t len, outcome *ref)
{
    parse_fresh(resp, len, NULL, 0, ref);
    outcome o;
    if (len <= 4096) {
        for (size_t i = 0; i <= len; i++) {
            parse_fresh(resp, len, &i, 1, &o);
            assert_same(ref, &o);
            outcome_free(&o);
        }
    }
    size_t *cuts = malloc((len ? len : 1) * sizeof *cuts);
    assert_non_null(cuts);
    for (size_t i = 0; i < len; i++)
        cuts[i] = i + 1;
    parse_fresh(resp, len, cuts, len, &o);
    assert_same(ref, &o);
    outcome_free(&o);
    size_t nlines = 0;
    for (size_t i = 0; i < len; i++)
        if (resp[i] == '\n')
            cuts[nlines++] = i + 1;
    parse_fresh(resp, len, cuts, nlines, &o);
    assert_same(ref, &o);
    outcome_free(&o);
    free(cuts);

    http_head_parser *hp = http_head_parser_new();
    static const char other[] = "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\n"
                                "Content-Encoding: gzip\r\nContent-Length: 9\r\n\r\n";
    parse_cuts(hp, other, sizeof other - 1, NULL, 0, &o);
    assert_int_equal(o.rc, 1);
    outcome_free(&o);
    http_head_parser_reset(hp);
    parse_cuts(hp, resp, len, NULL, 0, &o);
    assert_same(ref, &o);
    outcome_free(&o);
    http_head_parser_free(hp);
}

#define S(lit) lit, sizeof(lit) - 1

static void expect_error(const char *resp, size_t len, const char *msg)
{
    outcome o;
    parse_all_ways(resp, len, &o);
    assert_int_equal(o.rc, -1);
    assert_string_equal(o.error, msg);
    assert_int_equal(o.heads, 0);
    outcome_free(&o);
}

/* ---- a plain head ------------------------------------------------------------------ */

static void test_plain_head(void **state)
{
    (void)state;
    static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                               "Content-Length: 5\r\nX-Empty:\r\n\r\nhello";
    outcome o;
    parse_all_ways(S(resp), &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.used, sizeof resp - 1 - 5); /* not the body */
    assert_int_equal(o.status, 200);
    assert_string_equal(o.ctype, "text/html");
    assert_null(o.location);
    assert_int_equal(o.clen, 5);
    assert_int_equal(o.body, HTTP_BODY_LENGTH);
    assert_int_equal(o.coding, HTTP_CODING_IDENTITY);
    assert_string_equal(o.fields, "Content-Type: text/html\nContent-Length: 5\nX-Empty: \n");
    outcome_free(&o);
}

static void test_lf_only_and_trimmed(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.0 301 Moved\nLocation: \t /x \t\nServer:nginx\n\n"), &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.status, 301);
    assert_string_equal(o.location, "/x");
    assert_int_equal(o.clen, -1);
    assert_int_equal(o.body, HTTP_BODY_UNTIL_CLOSE);
    assert_string_equal(o.fields, "Location: /x\nServer: nginx\n");
    outcome_free(&o);
}

/* ---- the status line ------------------------------------------------------------------ */

static void test_status_line(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 404\r\n\r\n"), &o); /* no reason phrase */
    assert_int_equal(o.status, 404);
    outcome_free(&o);
    parse_all_ways(S("HTTP/1.1  599 Odd\r\n\r\n"), &o);
    assert_int_equal(o.status, 599);
    outcome_free(&o);
    const char *bad[] = {
        "HTTP/1.1 600 High\r\n\r\n", "HTTP/1.1 999 Weird\r\n\r\n",  "HTTP/1.1 099 Low\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n",  "HTTP/1.1 2x0 OK\r\n\r\n",     "HTTP/2 200 OK\r\n\r\n",
        "HTTP/1.1\r\n\r\n",          "\r\nHTTP/1.1 200 OK\r\n\r\n", "HTTP/1.x 200 OK\r\n\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_error(bad[i], strlen(bad[i]), "malformed status line");
}

/* Feed resp to a parser in HTTP/2 mode whole, then a byte at a time: the same result.
 * Returns the parser's result; *status and version (16 bytes) as parsed. */
static int parse_h2(const char *resp, size_t len, int *status, char *version)
{
    int rc = 0;
    for (int bytewise = 0; bytewise < 2; bytewise++) {
        http_head_parser *hp = http_head_parser_new();
        http_head_parser_expect_h2(hp);
        int r = 0;
        size_t used;
        for (size_t off = 0; off < len && r == 0; off += used)
            r = http_head_parser_feed(hp, resp + off, bytewise ? 1 : len - off, &used);
        if (bytewise)
            assert_int_equal(r, rc);
        rc = r;
        *status = r == 1 ? http_head_parser_head(hp)->status : 0;
        snprintf(version, 16, "%s", r == 1 ? http_head_parser_head(hp)->version : "");
        http_head_parser_free(hp);
    }
    return rc;
}

/* Over HTTP/2 the head is libcurl's "HTTP/2 CODE " and lower-case names; an HTTP/1.x
 * status line is not taken there, nor "HTTP/2" on an HTTP/1.x connection; a reset
 * parser is HTTP/1.x again. The head says its version. */
static void test_h2_status_line(void **state)
{
    (void)state;
    int status;
    char version[16];
    assert_int_equal(parse_h2(S("HTTP/2 200 \r\ncontent-type: text/html\r\n"
                                "content-length: 5\r\n\r\n"),
                              &status, version),
                     1);
    assert_int_equal(status, 200);
    assert_string_equal(version, "HTTP/2");
    assert_int_equal(parse_h2(S("HTTP/2 100 \r\n\r\nHTTP/2 404 \r\n\r\n"), &status, version), 1);
    assert_int_equal(status, 404);
    const char *bad[] = {"HTTP/1.1 200 OK\r\n\r\n", "HTTP/2 20 \r\n\r\n", "HTTP/2.0 200\r\n\r\n",
                         "HTTP/2 600 \r\n\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(parse_h2(bad[i], strlen(bad[i]), &status, version), -1);

    outcome o;
    parse_all_ways(S("HTTP/1.0 200 OK\r\n\r\n"), &o);
    assert_int_equal(o.rc, 1);
    outcome_free(&o);
    http_head_parser *hp = http_head_parser_new();
    size_t used;
    assert_int_equal(http_head_parser_feed(hp, S("HTTP/1.0 204 No\r\n\r\n"), &used), 1);
    assert_string_equal(http_head_parser_head(hp)->version, "HTTP/1.0");
    http_head_parser_reset(hp);
    http_head_parser_expect_h2(hp);
    assert_int_equal(http_head_parser_feed(hp, S("HTTP/2 204 \r\n\r\n"), &used), 1);
    http_head_parser_reset(hp); /* HTTP/1.x again */
    assert_int_equal(http_head_parser_feed(hp, S("HTTP/2 204 \r\n\r\n"), &used), -1);
    http_head_parser_free(hp);
}

/* A peer that does not speak HTTP fails at its first wrong byte, not at a line end. */
static void test_not_http_fails_at_once(void **state)
{
    (void)state;
    expect_error(S("SSH-2.0-OpenSSH_9.2"), "malformed status line");
    expect_error(S("HTTX"), "malformed status line");
    outcome o;
    parse_fresh(S("HTTP/1."), NULL, 0, &o);
    assert_int_equal(o.rc, 0); /* so far so good */
    outcome_free(&o);
}

/* ---- interim responses --------------------------------------------------------------- */

static void test_interim_skipped(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 100 Continue\r\n\r\n"
                     "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\nLocation: /bogus\r\n\r\n"
                     "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.status, 200);
    assert_null(o.location); /* that was the 103's */
    assert_string_equal(o.fields, "Content-Length: 2\n");
    outcome_free(&o);
}

static void test_101_refused(void **state)
{
    (void)state;
    expect_error(S("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"
                   "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
                 "unrequested 101 Switching Protocols");
}

/* ---- field lines ------------------------------------------------------------------------ */

static void test_bad_field_lines(void **state)
{
    (void)state;
    const char *malformed[] = {
        "HTTP/1.1 200 OK\r\nthis line has no colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\n: no name\r\n\r\n",
        "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nBad(name): x\r\n\r\n",
        "HTTP/1.1 200 OK\r\n\xc3\xa9t\xc3\xa9: x\r\n\r\n",
        "HTTP/1.1 200 OK\r\n folded: first\r\nX: y\r\n\r\n", /* nothing to continue */
        "HTTP/1.1 200 OK\r\n\tfolded first\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++)
        expect_error(malformed[i], strlen(malformed[i]), "malformed header line");
    expect_error(S("HTTP/1.1 302 Found\r\nLocation : /x\r\n\r\n"),
                 "whitespace between a header name and its colon");
    expect_error(S("HTTP/1.1 302 Found\r\nLocation\t: /x\r\n\r\n"),
                 "whitespace between a header name and its colon");
}

static void test_token_names(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200 OK\r\nX-a.b_c!#$%&'*+^`|~9: v:w\r\n\r\n"), &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.fields, "X-a.b_c!#$%&'*+^`|~9: v:w\n");
    outcome_free(&o);
}

/* obs-fold: a continuation line joins the field before it, with one space. */
static void test_obs_fold(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 302 Found\r\nLocation: /a\r\n  b\r\n\tc \r\n \r\n"
                     "X-Other: 1\r\n more\r\nContent-Type:\r\n text/html\r\n"
                     "Content-Length: 0\r\n\r\n"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.location, "/a b c");
    assert_string_equal(o.ctype, "text/html");
    assert_string_equal(o.fields,
                        "Location: /a b c\nX-Other: 1 more\n"
                        "Content-Type: text/html\nContent-Length: 0\n");
    outcome_free(&o);
    /* a folded Content-Length is judged once whole */
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n 6\r\n\r\n"), "bad Content-Length");
}

/* ---- fields that say something ----------------------------------------------------------- */

static void test_duplicate_content_type(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                     "content-type: text/html\r\n\r\n"),
                   &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.ctype, "text/plain"); /* the first */
    assert_string_equal(o.fields, "Content-Type: text/plain\ncontent-type: text/html\n");
    outcome_free(&o);
}

static void test_duplicate_location(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 302 Found\r\nLocation: /a\r\nLOCATION: /a\r\n\r\n"), &o);
    assert_int_equal(o.rc, 1);
    assert_string_equal(o.location, "/a"); /* the same twice: harmless */
    outcome_free(&o);
    expect_error(S("HTTP/1.1 302 Found\r\nLocation: /a\r\nLocation: /b\r\n\r\n"),
                 "conflicting Location headers");
    expect_error(S("HTTP/1.1 302 Found\r\nLocation: /a\r\nLocation: /a\r\n b\r\n\r\n"),
                 "conflicting Location headers");
}

static void test_content_length(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\ncontent-length:3\r\n\r\n"), &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.clen, 3);
    assert_int_equal(o.body, HTTP_BODY_LENGTH);
    outcome_free(&o);
    parse_all_ways(S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), &o);
    assert_int_equal(o.body, HTTP_BODY_NONE);
    outcome_free(&o);
    const char *bad[] = {"+5", "0x5", "-1", "", "5, 6", "5,", "1e3", "5 5", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char resp[128];
        int n =
            snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Length: %s\r\n\r\n", bad[i]);
        expect_error(resp, (size_t)n, "bad Content-Length");
    }
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n"),
                 "bad Content-Length");
}

static void test_framing(void **state)
{
    (void)state;
    outcome o;
    parse_all_ways(S("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n"
                     "Transfer-Encoding: gzip, Chunked\r\n\r\n"),
                   &o);
    assert_int_equal(o.body, HTTP_BODY_CHUNKED);
    assert_int_equal(o.clen, -1); /* Transfer-Encoding wins */
    outcome_free(&o);
    parse_all_ways(S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"), &o);
    assert_int_equal(o.body, HTTP_BODY_UNTIL_CLOSE);
    outcome_free(&o);
    parse_all_ways(S("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"), &o);
    assert_int_equal(o.body, HTTP_BODY_NONE);
    outcome_free(&o);
    parse_all_ways(S("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"), &o);
    assert_int_equal(o.body, HTTP_BODY_NONE);
    outcome_free(&o);
}

static void test_content_encoding(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        http_coding coding;
    } ok[] = {{"gzip", HTTP_CODING_GZIP},           {"x-gzip", HTTP_CODING_GZIP},
              {"GZip", HTTP_CODING_GZIP},           {"deflate", HTTP_CODING_DEFLATE},
              {"identity", HTTP_CODING_IDENTITY},   {"", HTTP_CODING_IDENTITY},
              {"identity, gzip", HTTP_CODING_GZIP}, {" deflate ,identity", HTTP_CODING_DEFLATE}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        char resp[128];
        int n = snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\n\r\n",
                         ok[i].value);
        outcome o;
        parse_all_ways(resp, (size_t)n, &o);
        assert_int_equal(o.rc, 1);
        assert_int_equal(o.coding, ok[i].coding);
        outcome_free(&o);
    }
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n"),
                 "unsupported Content-Encoding 'br'");
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Encoding: gzip, gzip\r\n\r\n"),
                 "unsupported Content-Encoding 'gzip, gzip'");
    expect_error(S("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
                   "Content-Encoding: deflate\r\n\r\n"),
                 "unsupported Content-Encoding 'deflate'");
    assert_string_equal(http_coding_corrupt(HTTP_CODING_GZIP), "corrupt gzip body");
    assert_string_equal(http_coding_corrupt(HTTP_CODING_DEFLATE), "corrupt deflate body");
    assert_null(http_coding_corrupt(HTTP_CODING_IDENTITY));
}

/* ---- limits -------------------------------------------------------------------------------- */

static void test_nul(void **state)
{
    (void)state;
    expect_error(S("HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n"), "NUL byte in response head");
    expect_error(S("HT\0TP/1.1 200 OK\r\n\r\n"), "NUL byte in response head");
    expect_error(S("HTTP/1.1 200 OK\0\r\n\r\n"), "NUL byte in response head");
}

/* A head made of a status line, filler fields and the empty line, exactly n bytes. */
static char *head_of_size(size_t n)
{
    static const char status[] = "HTTP/1.1 200 OK\r\n";
    char *h = malloc(n + 1);
    assert_non_null(h);
    size_t at = sizeof status - 1;
    memcpy(h, status, at);
    while (n - at > 2) {
        size_t rem = n - at - 2, line = rem > 1000 ? (rem - 1000 < 6 ? 500 : 1000) : rem;
        memset(h + at, 'v', line);
        memcpy(h + at, "X: ", 3);
        memcpy(h + at + line - 2, "\r\n", 2);
        at += line;
    }
    memcpy(h + at, "\r\n", 2);
    h[n] = '\0';
    return h;
}

static void test_head_size(void **state)
{
    (void)state;
    char *ok = head_of_size(HTTP_MAX_HEAD);
    outcome o;
    parse_all_ways(ok, HTTP_MAX_HEAD, &o);
    assert_int_equal(o.rc, 1);
    outcome_free(&o);
    free(ok);
    char *big = head_of_size(HTTP_MAX_HEAD + 1);
    expect_error(big, HTTP_MAX_HEAD + 1, "header section over 65536 bytes");
    free(big);
    /* each interim head has the limit to itself */
    char *two = head_of_size(HTTP_MAX_HEAD);
    memcpy(two + 9, "100", 3);
    size_t len = 2 * (size_t)HTTP_MAX_HEAD;
    char *both = malloc(len);
    assert_non_null(both);
    memcpy(both, two, HTTP_MAX_HEAD);
    memcpy(two + 9, "200", 3);
    memcpy(both + HTTP_MAX_HEAD, two, HTTP_MAX_HEAD);
    parse_fresh(both, len, NULL, 0, &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.status, 200);
    outcome_free(&o);
    free(both);
    free(two);
}

/* A 1 MB Location (one endless line): refused once the limit is passed, at once. */
static void test_huge_location(void **state)
{
    (void)state;
    size_t len = 1 << 20;
    char *resp = malloc(len);
    assert_non_null(resp);
    memset(resp, 'a', len);
    static const char start[] = "HTTP/1.1 302 Found\r\nLocation: /";
    memcpy(resp, start, sizeof start - 1);
    expect_error(resp, len, "header section over 65536 bytes");
    outcome o;
    parse_fresh(resp, len, NULL, 0, &o);
    assert_int_equal(o.used, HTTP_MAX_HEAD); /* not a byte more */
    outcome_free(&o);
    free(resp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_head),
        cmocka_unit_test(test_lf_only_and_trimmed),
        cmocka_unit_test(test_status_line),
        cmocka_unit_test(test_h2_status_line),
        cmocka_unit_test(test_not_http_fails_at_once),
        cmocka_unit_test(test_interim_skipped),
        cmocka_unit_test(test_101_refused),
        cmocka_unit_test(test_bad_field_lines),
        cmocka_unit_test(test_token_names),
        cmocka_unit_test(test_obs_fold),
        cmocka_unit_test(test_duplicate_content_type),
        cmocka_unit_test(test_duplicate_location),
        cmocka_unit_test(test_content_length),
        cmocka_unit_test(test_framing),
        cmocka_unit_test(test_content_encoding),
        cmocka_unit_test(test_nul),
        cmocka_unit_test(test_head_size),
        cmocka_unit_test(test_huge_location),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
