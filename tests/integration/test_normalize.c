/* test_normalize.c — one URL, many spellings: crawl-queue's seen set compares URLs in
 * RFC 3986 section 6.2.2's normal form (url_normalize), so that tests/sites/
 * normalize.site's /%7Euser, /~user, /%7euser, /x/../%7Euser and /%7E%75ser are fetched
 * once, as the first link writes it, its record adding "url_normalized"; likewise
 * /p%61ge and /page and /%70%61%67%65, /a%2fb and /a%2Fb (hex case). A record whose URL
 * is in normal form has no such key. The root's num_urls and num_new_urls count its
 * links in normal form (3, not the 9 spellings); --store's url_normalized column holds
 * what the record says (NULL where url is in normal form); the Redis frontier's shared
 * seen set keys the normal form too (a seen set holding /~user's fingerprint, put "by
 * another process", keeps this one from fetching /%7Euser). Stage 1, the chapter's
 * crawler, still fetches every spelling (its seen set is the chapter's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "hash.h"
#include "jsonl.h"
#include "redis_helper.h"
#include "scratch.h"
#include "testsite_helper.h"
#include "url.h"

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
    /* the root's links: /%7Euser, /p%61ge, /a%2fb in normal form, each new */
    assert_int_equal(jobj_int(record_of(&r, "/"), "num_urls", -1), 3);
    assert_int_equal(jobj_int(record_of(&r, "/"), "num_new_urls", -1), 3);
    crawl_run_free(&r);
}

/* The text of one column of --store's row of ts.url + path ("(null)" for NULL). */
static void store_value(sqlite3 *db, const char *column, const char *path, char *out, size_t len)
{
    char sql[400];
    snprintf(sql, sizeof sql, "SELECT %s FROM pages WHERE url = '%s%s'", column, ts.url, path + 1);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    if (sqlite3_step(st) != SQLITE_ROW)
        fail_msg("no row: %s", sql);
    const unsigned char *v = sqlite3_column_text(st, 0);
    snprintf(out, len, "%s", v ? (const char *)v : "(null)");
    sqlite3_finalize(st);
}

/* --store: url_normalized as the record says it, NULL where url is in normal form; one
 * row per URL in normal form. */
static void test_store_column(void **state)
{
    (void)state;
    char db_path[400];
    snprintf(db_path, sizeof db_path, "%s/normalize.db", scratch_dir);
    char *argv[] = {QUEUE, "--format", "jsonl", "-q", "--store", db_path, ts.url, NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0 || r.nrecords != 4)
        fail_msg("want 4 records\n%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    char got[400], want[400];
    store_value(db, "url_normalized", "/", got, sizeof got);
    assert_string_equal(got, "(null)");
    store_value(db, "url_normalized", "/%7Euser", got, sizeof got);
    snprintf(want, sizeof want, "%s~user", ts.url);
    assert_string_equal(got, want);
    store_value(db, "url_normalized", "/a%2fb", got, sizeof got);
    snprintf(want, sizeof want, "%sa%%2Fb", ts.url);
    assert_string_equal(got, want);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT count(*), count(DISTINCT coalesce(url_normalized,"
                                        " url)) FROM pages",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 4);
    assert_int_equal(sqlite3_column_int(st, 1), 4);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The Redis frontier: the crawl's seen set already holds the fingerprint of /~user
 * (what another process putting any spelling of it leaves), under a SipHash key set
 * here: this process, finding /%7Euser on /, puts it and is told it is seen. */
static void test_redis_seen_set(void **state)
{
    (void)state;
    redis_server rs;
    if (redis_server_start(&rs, NULL) != 0)
        fail_msg("no redis-server");
    static const char key[17] = "0123456789abcdef";
    char normal_url[300], cmd[600], reply[128];
    snprintf(normal_url, sizeof normal_url, "%s~user", ts.url);
    uint64_t fp = hash_siphash24(normal_url, strlen(normal_url), (const uint8_t *)key);
    snprintf(cmd, sizeof cmd, "SET crawl:norm:fpkey %s", key);
    assert_int_equal(redis_server_cmd(&rs, cmd, reply, sizeof reply), 0);
    int n = snprintf(cmd, sizeof cmd, "SADD crawl:norm:seen \"");
    for (int i = 0; i < 8; i++) /* put_nowait's bytes: the low byte first */
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, "\\x%02x", (unsigned)(fp >> (8 * i)) & 0xff);
    snprintf(cmd + n, sizeof cmd - (size_t)n, "\"");
    assert_int_equal(redis_server_cmd(&rs, cmd, reply, sizeof reply), 0);
    assert_string_equal(reply, ":1");

    char url[128];
    redis_server_url(&rs, "norm", url, sizeof url);
    char *argv[] = {QUEUE, "--format", "jsonl", "-q", "--frontier", url, ts.url, NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0 || r.nrecords != 3 || crawl_run_find(&r, normal_url))
        fail_msg("want 3 records (/, /p%%61ge, /a%%2fb): /%%7Euser is seen\n%s",
                 crawl_run_describe(&r));
    char spelled[300];
    snprintf(spelled, sizeof spelled, "%s%%7Euser", ts.url);
    assert_null(crawl_run_find(&r, spelled));
    crawl_run_free(&r);
    /* the seen set: the three URLs put, and the one planted */
    assert_int_equal(redis_server_cmd(&rs, "SCARD crawl:norm:seen", reply, sizeof reply), 0);
    assert_string_equal(reply, ":4");
    redis_server_stop(&rs);
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
        cmocka_unit_test_setup_teardown(test_store_column, start, stop),
        cmocka_unit_test_setup_teardown(test_redis_seen_set, start, stop),
        cmocka_unit_test_setup_teardown(test_chapter_stage, start, stop),
    };
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
