/* test_warc.c — the pieces of the WARC writer (stage3_queue/pipelines/warc.c) that need no crawl:
 * the digest form (SHA-1, base32) and the SURT keys of the CDXJ index; and a --warc
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

#include "jsonl.h"
#include "warc.h"

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

/* --warc into a directory that does not exist: one line naming it, exit 1, and no
 * report (the crawl never began). */
static void test_unwritable(void **state)
{
    (void)state;
    char *argv[] = {BIN_DIR "/crawl-queue", "--format", "jsonl", "--warc",
                    "/nonexistent-dir/x.warc", "http://127.0.0.1:1/", NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 30), 0);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err, "cannot open --warc '/nonexistent-dir/x.warc': No such "
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
        cmocka_unit_test(test_unwritable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
