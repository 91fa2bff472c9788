/* test_normalize.c — one URL, many spellings: crawl-queue's seen set compares URLs in
 * RFC 3986 section 6.2.2's normal form (url_normalize), so that tests/sites/
 * normalize.site's /%7Euser, /~user, /%7euser, /x/../%7Euser and /%7E%75ser are fetched
 * once, as the first link writes it, its record adding "url_normalized"; likewise
 * /p%61ge and /page and /%70%61%67%65, /a%2fb and /a%2Fb (hex case). A record whose URL
 * is in normal form has no such key. Stage 1, the chapter's crawler, still fetches
 * every spelling (its seen set is the chapter's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jsonl.h"
#include "testsite_helper.h"

#define QUEUE     BIN_DIR "/crawl-queue"
#define CALLBACKS BIN_DIR "/crawl-callbacks"

static testsite ts;

static int start(void **state)
{
    (void)state;
    const char *const args[] = {SITES_DIR "/normalize.site", NULL};
    return testsite_start(&ts, args) == 0 ? 0 : -1;
}

static int stop(void **state)
{
    (void)state;
    testsite_stop(&ts);
    return 0;
}

/* The record of ts.url + path, which must be there. */
static const jobj *record_of(const crawl_run *r, const char *path)
{
    char url[300];
    snprintf(url, sizeof url, "%s%s", ts.url, path[0] == '/' ? path + 1 : path);
    const jobj *o = crawl_run_find(r, url);
    if (!o)
        fail_msg("no record of %s\n%s", url, crawl_run_describe(r));
    return o;
}

static void expect_normalized(const crawl_run *r, const char *path, const char *normal)
{
    const jobj *o = record_of(r, path);
    if (!normal) {
        assert_null(jobj_get(o, "url_normalized"));
        return;
    }
    char want[300];
    snprintf(want, sizeof want, "%s%s", ts.url, normal + 1);
    const char *got = jobj_str(o, "url_normalized");
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s: url_normalized %s, want %s", path, got ? got : "(none)", want);
}

static void test_once_each(void **state)
{
    (void)state;
    char *argv[] = {QUEUE, "--format", "jsonl", "-q", ts.url, NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0 || r.nrecords != 4)
        fail_msg("want 4 records (/, /%%7Euser, /p%%61ge, /a%%2fb)\n%s", crawl_run_describe(&r));
    expect_normalized(&r, "/", NULL);
    expect_normalized(&r, "/%7Euser", "/~user");
    expect_normalized(&r, "/p%61ge", "/page");
    expect_normalized(&r, "/a%2fb", "/a%2Fb");
    assert_int_equal(jobj_int(record_of(&r, "/%7Euser"), "status", -1), 200);
    crawl_run_free(&r);
}

/* The chapter's crawler keeps the chapter's seen set: every spelling once. */
static void test_chapter_stage(void **state)
{
    (void)state;
    char *argv[] = {CALLBACKS, "--format", "jsonl", "-q", ts.url, NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0 || r.nrecords != 10)
        fail_msg("want 10 records\n%s", crawl_run_describe(&r));
    assert_null(jobj_get(record_of(&r, "/%7Euser"), "url_normalized"));
    crawl_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_once_each, start, stop),
        cmocka_unit_test_setup_teardown(test_chapter_stage, start, stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
