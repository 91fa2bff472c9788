/* test_warc.c — the pieces of the WARC writer (stage3_queue/pipelines/warc.c) that need no crawl:
 * the digest form (SHA-1, base32) and the SURT keys of the CDXJ index; the rotated
 * names; warcscan (--resume's reader) on archives cut at every byte; and a --warc
 * path that cannot be opened (one line, exit 1, no report). The archives themselves
 * are checked by the scenario test_warc, with a strict reader and warcio.js. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include "jsonl.h"
#include "settings.h"
#include "warc.h"
#include "warcscan.h"

static void test_sha1_base32(void **state)
{
    (void)state;
    char d[38];
    warc_sha1_base32("", 0, d);
    assert_string_equal(d, "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    warc_sha1_base32("abc", 3, d);
    assert_string_equal(d, "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
    warc_sha1_base32("hello", 5, d);
    assert_string_equal(d, "sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N");
}

static void expect_surt(const char *url, const char *want)
{
    char *s = warc_surt(url);
    assert_string_equal(s, want);
    free(s);
}

static void test_surt(void **state)
{
    (void)state;
    expect_surt("http://www.Example.com:8080/a?B#frag", "com,example:8080)/a?b");
    expect_surt("https://example.org", "org,example)/");
    expect_surt("http://sub.example.co.uk/x/y.html", "uk,co,example,sub)/x/y.html");
    expect_surt("http://127.0.0.1:8000/p/1", "1,0,0,127:8000)/p/1");
}

static void test_file_names(void **state)
{
    (void)state;
    const char *const cases[][2] = {{"a.warc.gz", "a-00003.warc.gz"},
                                    {"d/x.warc", "d/x-00003.warc"},
                                    {"y.gz", "y-00003.gz"},
                                    {"plain", "plain-00003"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *n = warc_file_name(cases[i][0], 3);
        assert_string_equal(n, cases[i][1]);
        free(n);
    }
}

/* Three records: a warcinfo, a response (status 200, text/html), a revisit. */
static const char *const records[] = {
    "WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <urn:uuid:1>\r\n"
    "Content-Length: 6\r\n\r\nabc: d\r\n\r\n",
    "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://h/a\r\n"
    "WARC-Date: 2026-01-02T03:04:05Z\r\nWARC-Payload-Digest: sha1:AAAA\r\n"
    "Content-Type: application/http;msgtype=response\r\nContent-Length: 49\r\n\r\n"
    "HTTP/1.1 200 OK\r\nContent-Type: Text/HTML; q\r\n\r\nhi\r\n\r\n",
    "WARC/1.1\r\nWARC-Type: revisit\r\nWARC-Target-URI: http://h/b\r\n"
    "Content-Type: application/http;msgtype=response\r\nContent-Length: 19\r\n\r\n"
    "HTTP/1.1 304 Nope\r\n\r\n\r\n",
};

typedef struct seen {
    int n;
    char types[3][16];
    int status[3];
    char mime[3][32];
    uint64_t offset[3], length[3];
} seen;

static void count(void *ctx, const warcscan_rec *r)
{
    seen *s = ctx;
    assert_true(s->n < 3);
    snprintf(s->types[s->n], 16, "%s", r->type);
    snprintf(s->mime[s->n], 32, "%s", r->mime);
    s->status[s->n] = r->status;
    s->offset[s->n] = r->offset;
    s->length[s->n++] = r->length;
}

/* The three records written to a file (each a gzip member when gz); where each ends. */
static int write_archive(bool gz, uint64_t ends[3])
{
    char path[] = "/tmp/test_warc_scan.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    uint64_t at = 0;
    for (int i = 0; i < 3; i++) {
        const char *rec = records[i];
        unsigned char out[1024];
        size_t n = strlen(rec);
        const void *bytes = rec;
        if (gz) {
            z_stream z;
            memset(&z, 0, sizeof z);
            assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
            z.next_in = (Bytef *)rec;
            z.avail_in = (uInt)n;
            z.next_out = out;
            z.avail_out = sizeof out;
            assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
            n = z.total_out;
            deflateEnd(&z);
            bytes = out;
        }
        assert_int_equal(write(fd, bytes, n), (ssize_t)n);
        ends[i] = at += n;
    }
    return fd;
}

/* Cut at every byte: warcscan finds the whole records before the cut, and says where
 * they end; trailing garbage is no record. */
static void test_scan_cut_everywhere(void **state)
{
    (void)state;
    for (int gz = 0; gz < 2; gz++) {
        uint64_t ends[3];
        int fd = write_archive(gz, ends);
        seen s = {0};
        char err[200];
        assert_int_equal(warcscan(fd, gz, count, &s, err, sizeof err), (long long)ends[2]);
        assert_int_equal(s.n, 3);
        assert_string_equal(s.types[1], "response");
        assert_int_equal(s.status[1], 200);
        assert_string_equal(s.mime[1], "text/html");
        assert_int_equal(s.offset[1], ends[0]);
        assert_int_equal(s.length[1], ends[1] - ends[0]);
        assert_string_equal(s.types[2], "revisit");
        assert_int_equal(s.status[2], 304);
        for (uint64_t cut = ends[2]; cut-- > 0;) {
            assert_int_equal(ftruncate(fd, (off_t)cut), 0);
            int whole = cut >= ends[1] ? 2 : cut >= ends[0] ? 1 : 0;
            memset(&s, 0, sizeof s);
            long long got = warcscan(fd, gz, count, &s, err, sizeof err);
            assert_int_equal(s.n, whole);
            assert_int_equal(got, whole ? (long long)ends[whole - 1] : 0);
        }
        close(fd);
    }
    /* garbage after the records: not a record */
    uint64_t ends[3];
    int fd = write_archive(false, ends);
    assert_int_equal(write(fd, "WARC/1.1\r\nbroken", 16), 16);
    seen s = {0};
    char err[200];
    assert_int_equal(warcscan(fd, false, count, &s, err, sizeof err), (long long)ends[2]);
    assert_int_equal(s.n, 3);
    close(fd);
}

/* The HTTP head of a response block is read by the head parser both transports use
 * (http_head.h): an interim 100 Continue is skipped, the final status and its
 * Content-Type count; a head that breaks its rules gives no status. */
static void test_scan_reads_heads_as_fetched(void **state)
{
    (void)state;
    static const char *const blocks[] = {
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nBad Line\r\nContent-Type: text/html\r\n\r\n",
    };
    static const int status[] = {404, 0};
    static const char *const mime[] = {"text/plain", ""};
    for (int i = 0; i < 2; i++) {
        char path[] = "/tmp/test_warc_head.XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        unlink(path);
        char rec[512];
        int n = snprintf(rec, sizeof rec,
                         "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://h/a\r\n"
                         "Content-Type: application/http;msgtype=response\r\n"
                         "Content-Length: %zu\r\n\r\n%s\r\n\r\n",
                         strlen(blocks[i]), blocks[i]);
        assert_int_equal(write(fd, rec, (size_t)n), n);
        seen s = {0};
        char err[200];
        assert_int_equal(warcscan(fd, false, count, &s, err, sizeof err), n);
        assert_int_equal(s.n, 1);
        assert_int_equal(s.status[0], status[i]);
        assert_string_equal(s.mime[0], mime[i]);
        close(fd);
    }
}

/* --warc into a directory that does not exist: one line naming it, exit 1, and no
 * report (the crawl never began). */
static void test_unwritable(void **state)
{
    (void)state;
    char *argv[] = {
        BIN_DIR "/crawl-queue", "--format", "jsonl", "--warc", "/nonexistent-dir/x.warc",
        "http://127.0.0.1:1/",  NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 30), 0);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err,
                           "cannot open --warc '/nonexistent-dir/x.warc': No such "
                           "file or directory"));
    int lines = 0;
    for (size_t i = 0; i < r.err_len; i++)
        lines += r.err[i] == '\n';
    assert_int_equal(lines, 1);
    assert_int_equal(r.out_len, 0);
    crawl_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha1_base32),
        cmocka_unit_test(test_surt),
        cmocka_unit_test(test_file_names),
        cmocka_unit_test(test_scan_cut_everywhere),
        cmocka_unit_test(test_scan_reads_heads_as_fetched),
        cmocka_unit_test(test_unwritable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
