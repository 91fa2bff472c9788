/* test_store.c — crawl-queue --store FILE.db against testsite: every JSONL record is
 * one row of `pages` with the same nine fields, pages carry their headers and bodies
 * (the bytes testsite served); on both transports and every selector. An interrupted
 * crawl (SIGINT) leaves a database holding exactly the records its report lists; a
 * store that cannot be opened is one line and exit 1; stages 1 and 2 refuse --store. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "jsonl.h"
#include "signal_at.h"
#include "testsite_helper.h"

static testsite site, slow, validating; /* validating: ETags, for --recrawl */
static char dir[] = "/tmp/test_store.XXXXXX";
static char slow_log[300]; /* a line per request the slow site served */

static int setup(void **state)
{
    (void)state;
    const char *const args[] = {SITES_DIR "/basic.site", NULL};
    const char *const slow_args[] = {"--delay", "40",         "--log",
                                     slow_log,  "--generate", "pages=400,links=5,size=2000,seed=3",
                                     NULL};
    if (!mkdtemp(dir))
        return -1;
    snprintf(slow_log, sizeof slow_log, "%s/slow.log", dir);
    const char *const validating_args[] = {"--generate", "pages=40,links=5,size=2000,validators=1",
                                           NULL};
    if (testsite_start(&site, args) < 0 || testsite_start(&validating, validating_args) < 0)
        return -1;
    return testsite_start(&slow, slow_args);
}

static int teardown(void **state)
{
    (void)state;
    testsite_stop(&site);
    testsite_stop(&slow);
    testsite_stop(&validating);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int str_eq(const char *a, const unsigned char *b)
{
    if (!a || !b)
        return !a && !b;
    return strcmp(a, (const char *)b) == 0;
}

/* Every record of the run is a row with the same fields, and there are no others.
 * Returns the number of rows with a body. */
static int compare(const crawl_run *r, const char *db_path)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(
        sqlite3_prepare_v2(
            db,
            "SELECT url, next_url, status, exception, size, content_type, encoding, num_urls,"
            " num_new_urls, final_url, length(body), headers, fetched_at, elapsed FROM pages",
            -1, &st, NULL),
        SQLITE_OK);
    size_t rows = 0;
    int bodies = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        rows++;
        const char *url = (const char *)sqlite3_column_text(st, 0);
        const jobj *rec = crawl_run_find(r, url);
        if (!rec)
            fail_msg("row %s has no record", url);
        assert_true(str_eq(jobj_str(rec, "next_url"), sqlite3_column_text(st, 1)));
        if (jobj_is_null(rec, "status"))
            assert_int_equal(sqlite3_column_type(st, 2), SQLITE_NULL);
        else
            assert_int_equal(jobj_int(rec, "status", -2), sqlite3_column_int(st, 2));
        assert_true(str_eq(jobj_str(rec, "exception"), sqlite3_column_text(st, 3)));
        assert_int_equal(jobj_int(rec, "size", -1), sqlite3_column_int64(st, 4));
        assert_true(str_eq(jobj_str(rec, "content_type"), sqlite3_column_text(st, 5)));
        assert_true(str_eq(jobj_str(rec, "encoding"), sqlite3_column_text(st, 6)));
        assert_int_equal(jobj_int(rec, "num_urls", -1), sqlite3_column_int(st, 7));
        assert_int_equal(jobj_int(rec, "num_new_urls", -1), sqlite3_column_int(st, 8));
        if (!jobj_is_null(rec, "status")) {
            assert_true(str_eq(url, sqlite3_column_text(st, 9))); /* final_url */
            /* the body is what was received: size bytes (a redirect's record says 0;
             * its body, if any, is kept all the same) */
            if (sqlite3_column_type(st, 10) != SQLITE_NULL
                && jobj_int(rec, "status", -1) / 100 != 3) {
                assert_int_equal(sqlite3_column_int64(st, 10), jobj_int(rec, "size", -1));
                bodies++;
            }
        }
        /* the record's times: fetched_at, elapsed (null: no response) */
        assert_non_null(sqlite3_column_text(st, 12));
        assert_true(str_eq(jobj_str(rec, "fetched_at"), sqlite3_column_text(st, 12)));
        if (jobj_is_null(rec, "elapsed"))
            assert_int_equal(sqlite3_column_type(st, 13), SQLITE_NULL);
        else
            assert_true(fabs(jobj_num(rec, "elapsed", -9) - sqlite3_column_double(st, 13)) < 1e-9);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_int_equal(rows, r->nrecords);
    return bodies;
}

static char *crawler(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", BIN_DIR, name);
    return path;
}

static void test_rows_equal_records(void **state)
{
    (void)state;
    static const char *const transports[] = {"raw", "curl"};
    static const char *const selectors[] = {"epoll", "poll", "select"};
    for (int t = 0; t < 2; t++) {
        for (int s = 0; s < 3; s++) {
            char db[300];
            snprintf(db, sizeof db, "%s/basic-%s-%s.db", dir, transports[t], selectors[s]);
            char *argv[] = {crawler("crawl-queue"),
                            "--format",
                            "jsonl",
                            "--store",
                            db,
                            "--transport",
                            (char *)transports[t],
                            "--selector",
                            (char *)selectors[s],
                            "--max-tries",
                            "1",
                            "--timeout",
                            "5",
                            site.url,
                            NULL};
            crawl_run r;
            assert_int_equal(run_crawler(&r, argv, 60), 0);
            if (r.exit_code != 0 || r.nrecords < 5)
                fail_msg("%s", crawl_run_describe(&r));
            assert_true(compare(&r, db) > 0);
            crawl_run_free(&r);
        }
    }
}

/* "2026-12-03T11:30:00.123Z" as seconds since the epoch; -1 when it is not RFC 3339 in
 * UTC with milliseconds, exactly that form. */
static double rfc3339_ms(const char *s)
{
    struct tm tm = {0};
    int ms = -1;
    char z = 0;
    if (!s || strlen(s) != 24
        || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &z)
            != 8
        || z != 'Z' || ms < 0)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm) + ms / 1000.0;
}

/* Every record says when its request started (fetched_at, RFC 3339, UTC, milliseconds,
 * within the run) and how long it took to its last byte (elapsed: /slow's 200 ms delay
 * at least; null for no response); the store's rows say the same (compare). */
static void test_times(void **state)
{
    (void)state;
    char db[300];
    snprintf(db, sizeof db, "%s/times.db", dir);
    char root[300];
    snprintf(root, sizeof root, "%sslow", site.url);
    char *argv[] = {crawler("crawl-queue"), "--format", "jsonl",     "--store", db,  site.url, root,
                    "--max-tries",          "1",        "--timeout", "5",       NULL};
    struct timespec t0, t1;
    clock_gettime(CLOCK_REALTIME, &t0);
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    clock_gettime(CLOCK_REALTIME, &t1);
    if (r.exit_code != 0 || r.nrecords < 5)
        fail_msg("%s", crawl_run_describe(&r));
    double from = (double)t0.tv_sec - 0.001, to = (double)t1.tv_sec + 1;
    for (size_t i = 0; i < r.nrecords; i++) {
        const jobj *rec = r.records[i];
        double at = rfc3339_ms(jobj_str(rec, "fetched_at"));
        if (at < from || at > to)
            fail_msg("%s: fetched_at %s, not in the run", jobj_str(rec, "url"),
                     jobj_str(rec, "fetched_at"));
        const jv *el = jobj_get(rec, "elapsed");
        assert_non_null(el);
        if (jobj_is_null(rec, "status"))
            assert_int_equal(el->type, JV_NULL);
        else if (el->type != JV_NUM || el->num < 0 || el->num > 30)
            fail_msg("%s: elapsed not a number of seconds", jobj_str(rec, "url"));
    }
    const jobj *slow_rec = crawl_run_find(&r, root);
    assert_non_null(slow_rec);
    if (jobj_num(slow_rec, "elapsed", -1) < 0.19)
        fail_msg("/slow (200 ms delay): elapsed %f", jobj_num(slow_rec, "elapsed", -1));
    compare(&r, db);
    crawl_run_free(&r);
}

/* One page's body and headers are the bytes testsite served. */
static void test_body_and_headers(void **state)
{
    (void)state;
    char db_path[300];
    snprintf(db_path, sizeof db_path, "%s/one.db", dir);
    char *argv[] = {crawler("crawl-queue"), "--format", "jsonl",  "--store", db_path,
                    "--max-pages",          "1",        site.url, NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 30), 0);
    assert_int_equal(r.exit_code, 0);
    int status;
    size_t len;
    char *want = testsite_fetch(&site, "/", &status, &len);
    assert_non_null(want);
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT body, headers FROM pages", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal((size_t)sqlite3_column_bytes(st, 0), len);
    assert_memory_equal(sqlite3_column_blob(st, 0), want, len);
    const char *headers = (const char *)sqlite3_column_text(st, 1);
    assert_non_null(headers);
    assert_non_null(strstr(headers, "Content-Type: text/html"));
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(want);
    crawl_run_free(&r);
}

/* --store-headers-only (the store's own flag, on its descriptor): every row without its
 * body, the rest as without it; refused without --store; and a --recrawl of such a
 * database asks for no page with a condition (no body a 304 could stand for). */
static void test_headers_only(void **state)
{
    (void)state;
    char db_path[300], re_path[300];
    snprintf(db_path, sizeof db_path, "%s/headers.db", dir);
    snprintf(re_path, sizeof re_path, "%s/headers-re.db", dir);
    char *argv[] = {crawler("crawl-queue"), "--format",     "jsonl", "--store", db_path,
                    "--store-headers-only", validating.url, NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 30), 0);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(compare(&r, db_path), 0); /* the rows are the records */
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT count(*), count(body), count(headers),"
                                        " sum(size) FROM pages",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), (int)r.nrecords);
    assert_int_equal((int)r.nrecords, 40);
    assert_int_equal(sqlite3_column_int(st, 1), 0);  /* no body */
    assert_true(sqlite3_column_int(st, 2) > 0);      /* the headers stay */
    assert_true(sqlite3_column_int64(st, 3) > 1000); /* and the sizes received */
    sqlite3_finalize(st);
    sqlite3_close(db);
    crawl_run_free(&r);

    /* the site answers a condition with 304 (its pages have ETags): with a store that
     * kept its bodies, every page comes back not_modified */
    char *re[] = {
        crawler("crawl-queue"), "--format", "jsonl", "--recrawl", db_path, "--store", re_path,
        validating.url,         NULL};
    assert_int_equal(run_crawler(&r, re, 30), 0);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal((int)r.nrecords, 40);
    assert_null(strstr(r.out, "not_modified")); /* fetched whole, every one */
    crawl_run_free(&r);
    char *again[] = {crawler("crawl-queue"), "--format", "jsonl", "--recrawl", re_path,
                     validating.url,         NULL};
    assert_int_equal(run_crawler(&r, again, 30), 0); /* re_path kept the bodies */
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "\"not_modified\": true"));
    crawl_run_free(&r);

    char *alone[] = {crawler("crawl-queue"), "--store-headers-only", site.url, NULL};
    assert_int_equal(run_crawler(&r, alone, 30), 0);
    assert_int_equal(r.exit_code, 2);
    assert_non_null(strstr(r.err,
                           "--store-headers-only keeps --store's pages without their "
                           "bodies: give --store too"));
    crawl_run_free(&r);
}

/* SIGINT mid-crawl, once the site has served 40 of its 400 pages to the run (its --log;
 * the records go to a pipe, not a file to watch): exit 0, the report lists what
 * finished, and so does the store. */
static void test_interrupted(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        char db[300];
        snprintf(db, sizeof db, "%s/slow-%d.db", dir, t);
        char *argv[] = {
            crawler("crawl-queue"), "--format",    "jsonl", "--store", db,  "--transport",
            t ? "curl" : "raw",     "--max-tasks", "10",    slow.url,  NULL};
        crawl_run r;
        signal_at at = {.path = slow_log, .lines = signal_at_lines(slow_log) + 40, .sig = SIGINT};
        assert_int_equal(run_crawler_signal_at(&r, argv, 60, &at), 0);
        if (r.exit_code != 0 || !r.summary || !at.sent || at.late)
            fail_msg("%s: %s", signal_at_describe(&at), crawl_run_describe(&r));
        print_message("%s: %zu records\n", signal_at_describe(&at), r.nrecords);
        const jv *intr = jobj_get(r.summary, "interrupted");
        assert_true(intr && intr->b);
        assert_true(r.nrecords > 10);  /* it ran a while */
        assert_true(r.nrecords < 400); /* and was stopped */
        compare(&r, db);
        crawl_run_free(&r);
    }
}

static void test_bad_store(void **state)
{
    (void)state;
    char *argv[] = {crawler("crawl-queue"), "--store", "/nonexistent-dir/x.db", site.url, NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 30), 0);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err, "/nonexistent-dir/x.db"));
    int lines = 0;
    for (size_t i = 0; i < r.err_len; i++)
        lines += r.err[i] == '\n';
    assert_int_equal(lines, 1);     /* one line */
    assert_int_equal(r.out_len, 0); /* and no report of a crawl never begun */
    crawl_run_free(&r);

    char *argv2[] = {crawler("crawl-generators"), "--store", "x.db", site.url, NULL};
    assert_int_equal(run_crawler(&r, argv2, 30), 0);
    assert_int_equal(r.exit_code, 2);
    assert_non_null(strstr(r.err, "unknown option '--store'"));
    assert_non_null(strstr(r.err, "the chapter's stage 2: the engine's flags"));
    crawl_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_equal_records), cmocka_unit_test(test_body_and_headers),
        cmocka_unit_test(test_headers_only),       cmocka_unit_test(test_interrupted),
        cmocka_unit_test(test_bad_store),          cmocka_unit_test(test_times),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
