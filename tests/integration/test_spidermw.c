/* test_spidermw.c — crawl-queue's built-in spider middlewares (stage3_queue/spidermw/),
 * run as processes against testsites on 127.0.0.0/8, checked in the records and at the
 * servers (their request logs):
 *
 *   depth       by default / --max-depth N: "depth" in every record (a redirect
 *               keeps it), the deeper links never requested, "dropped_depth" in the
 *               summary; none with --chapter
 *   referrer    by default: "referrer" in every record (null for the root), the
 *               Referer each request carried, --store's links table; none with
 *               --chapter
 *   scope       --include REGEX (repeatable) with --exclude REGEX (repeatable); the
 *               patterns refused (exit 2, one line, at once), and a match stopped by
 *               a limit: not followed for --include, excluded for --exclude
 *   requisites  --requisites: a page with each kind of requisite (CSS url() in a
 *               stylesheet, a <style> and a style attribute, srcset, an offsite image)
 *               — each requested once, "requisite": true
 *
 * Without these flags no record has those fields (the cross-stage scenarios compare
 * the records of the three stages byte for byte).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "jsonl.h"
#include "scratch.h"
#include "testsite_helper.h"

static char *const dir = scratch_dir;
static testsite sites[2];
static int nsites;

static void stop_sites(void)
{
    for (int i = 0; i < nsites; i++)
        testsite_stop(&sites[i]);
    nsites = 0;
}

static int teardown(void **state)
{
    stop_sites();
    return scratch_teardown(state);
}

/* A testsite on addr (and port, 0: any) serving text, logging to DIR/NAME.log with
 * the Referer field. */
static testsite *start(const char *name, const char *addr, int port, const char *text)
{
    assert_true(nsites < 2);
    char log[300], portarg[16];
    snprintf(log, sizeof log, "%s/%s.log", dir, name);
    snprintf(portarg, sizeof portarg, "%d", port);
    const char *const args[] = {
        "--bind", addr, "--log", log, "--log-header", "Referer", port > 0 ? "--port" : NULL,
        portarg,  NULL};
    assert_int_equal(testsite_start_text(&sites[nsites], dir, name, text, args), 0);
    return &sites[nsites++];
}

/* How many requests the server NAME saw for path; its Referer field in referer. */
static int requests(const char *name, const char *path, char *referer, size_t len)
{
    char log[300], line[1024];
    snprintf(log, sizeof log, "%s/%s.log", dir, name);
    FILE *f = fopen(log, "r");
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char p[512], field[512];
        if (sscanf(line, "%*s %*s %*s %511s %*s %511s", p, field) == 2 && strcmp(p, path) == 0) {
            n++;
            if (referer)
                snprintf(referer, len, "%s", field);
        }
    }
    if (f)
        fclose(f);
    return n;
}

static char *bin(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", BIN_DIR, name);
    return path;
}

/* crawl-queue with these flags (a NULL-terminated list) and root; exit 0. */
static void crawl(crawl_run *r, const char *root, ...)
{
    char *argv[32];
    int n = 0;
    argv[n++] = bin("crawl-queue");
    argv[n++] = "--format";
    argv[n++] = "jsonl";
    argv[n++] = "--max-tasks";
    argv[n++] = "1";
    va_list ap;
    va_start(ap, root);
    for (char *a; (a = va_arg(ap, char *)) != NULL && n < 30;)
        argv[n++] = a;
    va_end(ap);
    argv[n++] = (char *)root;
    argv[n] = NULL;
    assert_int_equal(run_crawler(r, argv, 60), 0);
    if (r->exit_code != 0)
        fail_msg("%s", crawl_run_describe(r));
}

static const jobj *record(const crawl_run *r, const char *base, const char *path)
{
    char url[512];
    snprintf(url, sizeof url, "%s%s", base, path[0] == '/' ? path + 1 : path);
    for (size_t i = 0; i < r->nrecords; i++)
        if (strcmp(jobj_str(r->records[i], "url"), url) == 0)
            return r->records[i];
    fail_msg("no record for %s", url);
    return NULL;
}

/* ---- depth ---- */

static const char depth_site[] = "page /\n  link /a /b /r\n"
                                 "page /a\n  link /c\n"
                                 "page /b\n  link /c /missing\n"
                                 "page /c\n  link /d\n"
                                 "page /d\n  link /e\n"
                                 "page /e\n"
                                 "page /r status=301 location=/target\n"
                                 "page /target\n"
                                 "page /missing status=404\n";

static void test_depth(void **state)
{
    (void)state;
    stop_sites(); /* an earlier test's, had it failed */
    testsite *ts = start("depth", "127.0.0.1", 0, depth_site);
    crawl_run r;
    crawl(&r, ts->url, "--max-depth", "2", NULL);
    assert_int_equal(r.nrecords, 7); /* not /d, /e */
    const char *want[][2] = {{"/", "0"},       {"/a", "1"}, {"/b", "1"},      {"/r", "1"},
                             {"/target", "1"}, {"/c", "2"}, {"/missing", "2"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(jobj_int(record(&r, ts->url, want[i][0]), "depth", -1), atoi(want[i][1]));
    assert_int_equal(requests("depth", "/d", NULL, 0), 0);
    assert_int_equal(jobj_int(r.summary, "dropped_depth", -1), 1);
    crawl_run_free(&r);

    /* by default: no limit, no count */
    crawl(&r, ts->url, NULL);
    assert_int_equal(r.nrecords, 9);
    assert_int_equal(jobj_int(record(&r, ts->url, "/e"), "depth", -1), 4);
    assert_null(jobj_get(r.summary, "dropped_depth"));
    crawl_run_free(&r);

    /* --max-depth 0: the root only */
    crawl(&r, ts->url, "--max-depth", "0", NULL);
    assert_int_equal(r.nrecords, 1);
    assert_int_equal(jobj_int(r.summary, "dropped_depth", -1), 3);
    crawl_run_free(&r);

    /* --chapter: no such field (the chapter's records), and its requests (the last
     * this server saw) carry no Referer */
    crawl(&r, ts->url, "--chapter", NULL);
    assert_int_equal(r.nrecords, 9);
    for (size_t i = 0; i < r.nrecords; i++) {
        assert_null(jobj_get(r.records[i], "depth"));
        assert_null(jobj_get(r.records[i], "referrer"));
        assert_null(jobj_get(r.records[i], "requisite"));
    }
    char got[600];
    assert_true(requests("depth", "/a", got, sizeof got) > 0);
    assert_string_equal(got, "-");
    crawl_run_free(&r);
    stop_sites();
}

/* ---- referrer ---- */

static void test_referrer(void **state)
{
    (void)state;
    stop_sites(); /* an earlier test's, had it failed */
    testsite *ts = start("referrer", "127.0.0.1", 0, depth_site);
    char db[300], base[256];
    snprintf(db, sizeof db, "%s/referrer.db", dir);
    snprintf(base, sizeof base, "%s", ts->url);
    base[strlen(base) - 1] = '\0'; /* no final '/' */
    crawl_run r;
    crawl(&r, ts->url, "--store", db, NULL);
    assert_int_equal(r.nrecords, 9);
    assert_true(jobj_is_null(record(&r, ts->url, "/"), "referrer"));
    const char *want[][2] = {
        {"/a", "/"}, {"/c", "/a"}, {"/missing", "/b"}, {"/target", "/r"}, {"/e", "/d"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char from[512], field[600], got[600];
        snprintf(from, sizeof from, "%s%s", base, want[i][1]);
        assert_string_equal(jobj_str(record(&r, ts->url, want[i][0]), "referrer"), from);
        /* the server saw it: "=" and the value, ':' and '/' as they are */
        snprintf(field, sizeof field, "=%s", from);
        assert_int_equal(requests("referrer", want[i][0], got, sizeof got), 1);
        assert_string_equal(got, field);
    }
    assert_int_equal(requests("referrer", "/", NULL, 0), 1);
    char got[600];
    requests("referrer", "/", got, sizeof got);
    assert_string_equal(got, "-"); /* the root: no Referer */
    crawl_run_free(&r);

    /* which pages link to /c: one query */
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(h,
                                        "SELECT from_url FROM links WHERE to_url = ?1 "
                                        "ORDER BY from_url",
                                        -1, &st, NULL),
                     SQLITE_OK);
    char c[512];
    snprintf(c, sizeof c, "%s/c", base);
    sqlite3_bind_text(st, 1, c, -1, SQLITE_STATIC);
    const char *froms[] = {"/a", "/b"};
    for (size_t i = 0; i < 2; i++) {
        char want_from[512];
        snprintf(want_from, sizeof want_from, "%s%s", base, froms[i]);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), want_from);
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(h);
    stop_sites();
}

/* ---- scope ---- */

static void test_include_exclude(void **state)
{
    (void)state;
    stop_sites(); /* an earlier test's, had it failed */
    testsite *ts = start("scope", "127.0.0.1", 0,
                         "page /\n  link /docs/1 /docs/2 /blog/1 /shop/1 /docs/private/x\n"
                         "  link /docs/x.pdf /blog/2.pdf\n"
                         "page /docs/1\npage /docs/2\n  link /docs/3\npage /docs/3\n"
                         "page /blog/1\npage /shop/1\npage /docs/private/x\n"
                         "page /docs/x.pdf\npage /blog/2.pdf\n");
    crawl_run r;
    crawl(&r, ts->url, "--include", "/docs/", "--include", "/blog/", "--exclude", "private",
          "--exclude", "\\.pdf$", NULL);
    const char *fetched[] = {"/", "/docs/1", "/docs/2", "/docs/3", "/blog/1"};
    const char *not_fetched[] = {"/shop/1", "/docs/private/x", "/docs/x.pdf", "/blog/2.pdf"};
    for (size_t i = 0; i < sizeof fetched / sizeof fetched[0]; i++)
        assert_int_equal(requests("scope", fetched[i], NULL, 0), 1);
    for (size_t i = 0; i < sizeof not_fetched / sizeof not_fetched[0]; i++)
        assert_int_equal(requests("scope", not_fetched[i], NULL, 0), 0);
    assert_int_equal(r.nrecords, 5);
    crawl_run_free(&r);

    /* a root is fetched whatever --include says */
    char root[512];
    snprintf(root, sizeof root, "%sshop/1", ts->url);
    crawl(&r, root, "--include", "/nothing/", NULL);
    assert_int_equal(r.nrecords, 1);
    assert_int_equal(requests("scope", "/shop/1", NULL, 0), 1);
    crawl_run_free(&r);
    stop_sites();
}

/* A match that a limit stops (pattern.h) is taken on the safe side: for --include the
 * link is not followed, for --exclude it is excluded; a warning says so, once. */
static void test_pattern_limits(void **state)
{
    (void)state;
    stop_sites(); /* an earlier test's, had it failed */
    char longpath[80] = "/";
    memset(longpath + 1, 'a', 64);
    longpath[65] = '\0';
    char text[512];
    snprintf(text, sizeof text, "page /\n  link /b /x %s\npage /b\npage /x\npage %s\n", longpath,
             longpath);
    testsite *ts = start("limits", "127.0.0.1", 0, text);
    /* exponential backtracking on 64 'a's: the step budget stops it; "/b" matches at
     * once, "/x" fails at once (nothing in the site's URLs but these holds a, b or c) */
    const char *hostile = "(a*)*[bc]";
    crawl_run r;
    crawl(&r, ts->url, "--include", hostile, NULL);
    assert_int_equal(requests("limits", "/b", NULL, 0), 1);
    assert_int_equal(requests("limits", "/x", NULL, 0), 0);
    assert_int_equal(requests("limits", longpath, NULL, 0), 0);
    assert_non_null(strstr(r.err, "reached a match limit"));
    assert_int_equal(r.nrecords, 2);
    crawl_run_free(&r);

    crawl(&r, ts->url, "--exclude", hostile, NULL);
    assert_int_equal(requests("limits", "/b", NULL, 0), 1); /* not again */
    assert_int_equal(requests("limits", "/x", NULL, 0), 1);
    assert_int_equal(requests("limits", longpath, NULL, 0), 0);
    assert_non_null(strstr(r.err, "reached a match limit"));
    assert_int_equal(r.nrecords, 2);
    crawl_run_free(&r);
    stop_sites();
}

/* A pattern that cannot be bounded is bad usage: exit 2 and one line, at once and in
 * little memory, for --exclude (the crawl core's) and --include (the scope's). With
 * glibc's regcomp the first took 15 GB; the second hung regexec on a long URL. */
static void test_bad_patterns(void **state)
{
    (void)state;
    static const struct {
        const char *src, *why;
    } bad[] = {
        {"((a{1,200}){1,200}){1,200}", "a repeat count above 100 is refused"},
        {"(.*)(.*)(.*)(.*)(.*)\\5\\4\\3\\2\\1Z", "back-references are refused"},
        {"(?=.*X)", "lookarounds"},
        {"(", "missing closing parenthesis"},
    };
    const char *const flags[] = {"--exclude", "--include"};
    for (size_t f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char *argv[] = {bin("crawl-queue"), (char *)flags[f], (char *)bad[i].src,
                            "http://127.0.0.1:9/", NULL};
            crawl_run r;
            assert_int_equal(run_crawler(&r, argv, 30), 0);
            char want[160];
            snprintf(want, sizeof want, "%s: bad regex '%s': %s", flags[f], bad[i].src, bad[i].why);
            if (!crawl_run_one_line(&r, 2, want))
                fail_msg("%s '%s': want exit 2 and one line with '%s': %s", flags[f], bad[i].src,
                         want, crawl_run_describe(&r));
            /* ~20 ms and ~12 MB measured; the bounds leave room for a loaded machine */
            if (r.seconds > 2.0 || r.maxrss_kb > 64 * 1024)
                fail_msg("%s '%s': %.2f s, %ld KB", flags[f], bad[i].src, r.seconds, r.maxrss_kb);
            crawl_run_free(&r);
        }
}

/* ---- requisites ---- */

static void test_requisites(void **state)
{
    (void)state;
    stop_sites(); /* an earlier test's, had it failed */
    int port = testsite_free_port();
    assert_true(port > 0);
    testsite *off = start("offsite", "127.0.0.2", port,
                          "page /off.png type=image/png\n"
                          "page /off.css type=text/css\n"
                          "  body=\"p{background:url(p.png)}\"\n"
                          "page /p.png type=image/png\n");
    (void)off;
    char text[4096];
    snprintf(text, sizeof text,
             "page /\n"
             "  body <<END\n"
             "  <html><head><link rel=stylesheet href=/s.css>\n"
             "  <link rel=\"shortcut icon\" href=/fav.ico>\n"
             "  <link rel=stylesheet href=http://127.0.0.2:%d/off.css>\n"
             "  <style>body{background:url( '/bg.png' )}</style>\n"
             "  <script src=/app.js></script></head>\n"
             "  <body style=\"background-image:url(/body.png)\">\n"
             "  <img src=/i.png srcset='/i2.png 2x, /i3.png 3x'>\n"
             "  <img src=http://127.0.0.2:%d/off.png>\n"
             "  <picture><source srcset=/p1.webp></picture>\n"
             "  <video poster=/poster.jpg src=/v.mp4></video><audio src=/a.mp3></audio>\n"
             "  <a href=/page2>a link</a> <a href=/s.css>the stylesheet, linked</a>\n"
             "  <img src=/i.png><img src=/a-page.html></body></html>\n"
             "  END\n"
             "page /page2\n  body=\"<img src=/i.png><img src=/only-page2.png>\"\n"
             "page /a-page.html\n  body=\"<img src=/not-needed.png>\"\n"
             "page /s.css type=text/css\n"
             "  body <<END\n"
             "  @import 'more.css'; .x{background:url(img/x.png)} /* url(/no.png) */\n"
             "  END\n"
             "page /more.css type=text/css\n  body=\"h1{background:url(/h1.png)}\"\n",
             port, port);
    testsite *ts = start("requisites", "127.0.0.1", 0, text);
    crawl_run r;
    crawl(&r, ts->url, "--requisites", NULL);
    const char *reqs[] = {"/s.css",  "/a-page.html", "/fav.ico",    "/bg.png",
                          "/app.js", "/body.png",    "/i.png",      "/i2.png",
                          "/i3.png", "/p1.webp",     "/poster.jpg", "/v.mp4",
                          "/a.mp3",  "/more.css",    "/img/x.png",  "/h1.png"};
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        const jobj *rec = record(&r, ts->url, reqs[i]);
        const jv *flag = jobj_get(rec, "requisite");
        if (!flag || flag->type != JV_BOOL || !flag->b)
            fail_msg("%s: not a requisite", reqs[i]);
        /* the page's own as deep as the page; what s.css names one deeper, what
         * more.css (which s.css imports) names one deeper again */
        bool of_css = i >= 13, of_more = i == 15;
        assert_int_equal(jobj_int(rec, "depth", -1), of_more ? 2 : of_css ? 1 : 0);
        assert_int_equal(requests("requisites", reqs[i], NULL, 0), 1); /* once */
    }
    const char *offs[] = {"/off.png", "/off.css", "/p.png"};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(requests("offsite", offs[i], NULL, 0), 1);
    /* the other host's robots.txt was asked first, as for any URL */
    assert_int_equal(requests("offsite", "/robots.txt", NULL, 0), 1);
    /* /page2 is a link (depth 1, its own requisites at depth 1), no requisite */
    const jobj *p2 = record(&r, ts->url, "/page2");
    assert_null(jobj_get(p2, "requisite"));
    assert_int_equal(jobj_int(record(&r, ts->url, "/only-page2.png"), "depth", -1), 1);
    assert_int_equal(requests("requisites", "/no.png", NULL, 0), 0);
    /* a requisite that is a page: its own requisites are not the root's */
    assert_int_equal(requests("requisites", "/not-needed.png", NULL, 0), 0);
    /* the root, 16 of its own, 3 offsite, /page2 and its one new image */
    assert_int_equal(r.nrecords, 1 + 16 + 3 + 2);
    crawl_run_free(&r);

    /* --max-depth 0: the root's requisites (as deep as the root) but not its links,
     * nor what its stylesheets name (depth 1) */
    crawl(&r, ts->url, "--requisites", "--max-depth", "0", NULL);
    assert_int_equal(r.nrecords, 1 + 13 + 2);
    /* /page2, /more.css, /img/x.png and off.css's p.png: the links that are
     * requisites too were fetched as requisites */
    assert_int_equal(jobj_int(r.summary, "dropped_depth", -1), 4);
    crawl_run_free(&r);
    stop_sites();
}

/* #34: a stylesheet that @imports a new stylesheet, without end (testsite's generated
 * csschain): each hop is one deeper, so --max-depth 1 ends the crawl by itself with
 * the root, its stylesheet and the one that imports (the next is dropped); before,
 * every hop had the root's depth and the crawl never ended. Each run has 20 s. */
static void test_requisites_css_chain(void **state)
{
    (void)state;
    stop_sites();
    const char *const args[] = {"--generate", "pages=1,links=0,csschain=1", NULL};
    assert_int_equal(testsite_start(&sites[nsites], args), 0);
    testsite *ts = &sites[nsites++];
    for (int max = 0; max <= 2; max++) {
        char depth[8];
        snprintf(depth, sizeof depth, "%d", max);
        char *argv[] = {bin("crawl-queue"), "--format", "jsonl", "--requisites",
                        "--max-depth",      depth,      ts->url, NULL};
        crawl_run r;
        assert_int_equal(run_crawler(&r, argv, 20), 0);
        if (r.exit_code != 0 || r.nrecords != (size_t)max + 2)
            fail_msg("--max-depth %d: want %d records: %s", max, max + 2, crawl_run_describe(&r));
        for (int k = 0; k <= max; k++) {
            char path[32];
            snprintf(path, sizeof path, "/css/%d.css", k);
            const jobj *rec = record(&r, ts->url, path);
            assert_int_equal(jobj_int(rec, "depth", -1), k);
            assert_int_equal(jobj_int(rec, "status", -1), 200);
        }
        assert_int_equal(jobj_int(r.summary, "dropped_depth", -1), 1);
        crawl_run_free(&r);
    }
    stop_sites();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_referrer),
        cmocka_unit_test(test_include_exclude),
        cmocka_unit_test(test_bad_patterns),
        cmocka_unit_test(test_pattern_limits),
        cmocka_unit_test(test_requisites),
        cmocka_unit_test(test_requisites_css_chain),
    };
    return cmocka_run_group_tests(tests, scratch_setup, teardown);
}
