/* test_seeds_sitemaps.c — crawl-queue --sitemaps (stage3_queue/seeds/sitemaps.h) against a testsite
 * whose pages are only reachable through its sitemaps: robots.txt's Sitemap line names
 * an index, the index a plain and a gzip-compressed sitemap (a .xml.gz file, inflated
 * by the parser), and /sitemap.xml one more page; an offsite URL in a sitemap is left
 * to the host policy. Without --sitemaps the orphans stay unknown.
 *
 * Then issue #27's three: sitemaps stay in scope (M3: an index or a robots.txt
 * Sitemap line naming another host, a robots-disallowed or --exclude'd sitemap, the
 * host's --delay), the seeding is bounded in time (L1: sitemaps that time out) and in
 * memory (L2: the Queue's back-pressure). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "jsonl.h"
#include "signal_at.h"
#include "sitemaps.h"
#include "testsite_helper.h"

static char dir[] = "/tmp/test_seeds_sitemaps.XXXXXX";
static testsite site;
static char log_path[300];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    int port = testsite_free_port();
    if (port < 0)
        return -1;
    char path[400], gz[400], portarg[16];
    snprintf(gz, sizeof gz, "%s/two.xml.gz", dir);
    gzFile g = gzopen(gz, "wb");
    if (!g)
        return -1;
    gzprintf(g,
             "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/"
             "sitemap/0.9\"><url><loc>http://127.0.0.1:%d/orphan3</loc></url></urlset>\n",
             port);
    gzclose(g);
    snprintf(path, sizeof path, "%s/site", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("page /robots.txt type=text/plain "
          "body=\"User-agent: *\\nSitemap: {base}/maps/index.xml\\n\"\n"
          "page /\n  link /a\n"
          "page /a\npage /orphan1\npage /orphan2\npage /orphan3\npage /deep\n"
          "page /maps/index.xml type=application/xml\n"
          "  body <<END\n"
          "  <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
          "    <sitemap><loc>{base}/maps/one.xml</loc></sitemap>\n"
          "    <sitemap><loc> {base}/maps/two.xml.gz </loc></sitemap>\n"
          "  </sitemapindex>\n"
          "  END\n"
          "page /maps/one.xml type=application/xml\n"
          "  body <<END\n"
          "  <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
          "    <url><loc>{base}/orphan1</loc></url>\n"
          "    <url><loc>{base}/orphan2?a=1&amp;b=2</loc></url>\n"
          "    <url><loc>http://elsewhere.example/x</loc></url>\n"
          "    <url><loc>{base}/a</loc></url>\n"
          "  </urlset>\n"
          "  END\n"
          "page /maps/two.xml.gz type=application/gzip body=@two.xml.gz\n"
          "page /sitemap.xml type=application/xml\n"
          "  body <<END\n"
          "  <urlset><url><loc>{base}/deep</loc></url></urlset>\n"
          "  END\n",
          f);
    fclose(f);
    snprintf(log_path, sizeof log_path, "%s/log", dir);
    snprintf(portarg, sizeof portarg, "%d", port);
    const char *const args[] = {"--port", portarg, "--log", log_path, path, NULL};
    return testsite_start(&site, args);
}

static int teardown(void **state)
{
    (void)state;
    testsite_stop(&site);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void run(crawl_run *r, bool sitemaps)
{
    char bin[512];
    snprintf(bin, sizeof bin, "%s/crawl-queue", BIN_DIR);
    char *argv[] = {bin, "-v", "--format", "jsonl", site.url, sitemaps ? "--sitemaps" : NULL, NULL};
    assert_int_equal(run_crawler(r, argv, 60), 0);
    if (r->exit_code != 0)
        fail_msg("%s", crawl_run_describe(r));
}

static bool has(const crawl_run *r, const char *path)
{
    char url[300];
    snprintf(url, sizeof url, "%s%s", site.url, path + 1);
    const jobj *o = crawl_run_find(r, url);
    return o && jobj_int(o, "status", 0) == 200;
}

/* How many times the server was asked for path. */
static int asked(const char *path)
{
    FILE *f = fopen(log_path, "r");
    char line[600], p[300];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%*s %*s %*s %299s", p) == 1 && strcmp(p, path) == 0)
            n++;
    if (f)
        fclose(f);
    return n;
}

static void test_seeded_from_sitemaps(void **state)
{
    (void)state;
    crawl_run r;
    run(&r, true);
    assert_true(has(&r, "/"));
    assert_true(has(&r, "/a"));
    assert_true(has(&r, "/orphan1"));
    assert_true(has(&r, "/orphan2?a=1&b=2")); /* &amp; decoded */
    assert_true(has(&r, "/orphan3"));         /* from the .xml.gz */
    assert_true(has(&r, "/deep"));            /* from /sitemap.xml */
    assert_null(crawl_run_find(&r, "http://elsewhere.example/x"));
    assert_int_equal(r.nrecords, 6); /* sitemaps are read, not recorded */
    assert_int_equal(asked("/maps/index.xml"), 1);
    assert_int_equal(asked("/maps/one.xml"), 1);
    assert_int_equal(asked("/maps/two.xml.gz"), 1);
    assert_int_equal(asked("/sitemap.xml"), 1);
    assert_non_null(strstr(r.err, "/maps/one.xml: 4 URL(s), ")); /* /a: maybe seen */
    crawl_run_free(&r);
}

static void test_not_without_the_flag(void **state)
{
    (void)state;
    crawl_run r;
    run(&r, false);
    assert_int_equal(r.nrecords, 2); /* / and /a */
    assert_false(has(&r, "/orphan1"));
    crawl_run_free(&r);
}

/* ---- issue #27: each test starts its own servers, stopped after it ---- */

static testsite a, b;

static int stop_own(void **state)
{
    (void)state;
    testsite_stop(&a);
    testsite_stop(&b);
    return 0;
}

/* A testsite on addr serving the site text (written to dir/name), logging to
 * dir/name.log. */
static void start_named(testsite *ts, const char *addr, const char *name, const char *text)
{
    char path[400], logp[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(logp, sizeof logp, "%s/%s.log", dir, name);
    unlink(logp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    const char *const args[] = {"--bind", addr, "--log", logp, path, NULL};
    assert_int_equal(testsite_start(ts, args), 0);
}

/* The requests dir/name.log has: how many have a path starting with prefix, and the
 * smallest gap between two begins (ms; 1e18 when fewer than two). */
static int requests_of(const char *name, const char *prefix, double *min_gap)
{
    char logp[400], line[600], host[200], path[400];
    snprintf(logp, sizeof logp, "%s/%s.log", dir, name);
    FILE *f = fopen(logp, "r");
    double begins[256];
    int n = 0, all = 0;
    while (f && fgets(line, sizeof line, f)) {
        double begin, end;
        if (sscanf(line, "%lf %lf %199s %399s", &begin, &end, host, path) != 4)
            continue;
        if (all < 256)
            begins[all++] = begin;
        n += strncmp(path, prefix, strlen(prefix)) == 0;
    }
    if (f)
        fclose(f);
    if (min_gap) {
        *min_gap = 1e18;
        for (int i = 0; i < all; i++)
            for (int j = 0; j < all; j++)
                if (i != j && begins[j] >= begins[i] && begins[j] - begins[i] < *min_gap)
                    *min_gap = begins[j] - begins[i];
    }
    return n;
}

static void crawl_args(crawl_run *r, double limit, const char *const *args)
{
    char bin[512];
    snprintf(bin, sizeof bin, "%s/crawl-queue", BIN_DIR);
    char *argv[32] = {bin, "-v", "--format", "jsonl", "--sitemaps"};
    int n = 5;
    for (; *args && n < 31; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    assert_int_equal(run_crawler(r, argv, limit), 0);
    if (r->exit_code != 0)
        fail_msg("%s", crawl_run_describe(r));
}

/* M3: a sitemap is fetched only where a page could be. Host A's robots.txt names
 * sitemaps on host B (a page B would delete itself on), in A's disallowed /private/,
 * one --exclude'd; its index names one on B and one in /private/. Crawling A alone,
 * B hears nothing; A and B both roots, B's robots.txt keeps /admin/ out, and the
 * Sitemap line naming B's own sitemap is read. With --delay, the sitemaps keep A's
 * delay as its pages do. */
static void test_sitemaps_stay_in_scope(void **state)
{
    (void)state;
    start_named(&b, "127.0.0.2", "b",
                "page /robots.txt type=text/plain body=\"User-agent: *\\nDisallow: /admin/\\n\"\n"
                "page /\n"
                "page /admin/delete-everything type=application/xml body=\"<urlset/>\"\n"
                "page /fine\n"
                "page /b-map.xml type=application/xml\n"
                "  body <<END\n"
                "  <urlset><url><loc>{base}/fine</loc></url></urlset>\n"
                "  END\n");
    char text[4096];
    snprintf(text, sizeof text,
             "page /robots.txt type=text/plain body=\"User-agent: *\\nDisallow: /private/\\n"
             "Sitemap: %sadmin/delete-everything?via=robots\\nSitemap: %sb-map.xml\\n"
             "Sitemap: {base}/index.xml\\nSitemap: {base}/private/map.xml\\n"
             "Sitemap: {base}/secret-map.xml\\n\"\n"
             "page /\npage /page1\npage /hidden\npage /secret-page\n"
             "page /index.xml type=application/xml\n"
             "  body <<END\n"
             "  <sitemapindex>\n"
             "    <sitemap><loc>%sadmin/delete-everything?via=index-entry</loc></sitemap>\n"
             "    <sitemap><loc>{base}/private/inner.xml</loc></sitemap>\n"
             "    <sitemap><loc>{base}/good.xml</loc></sitemap>\n"
             "  </sitemapindex>\n"
             "  END\n"
             "page /good.xml type=application/xml\n"
             "  body <<END\n"
             "  <urlset><url><loc>{base}/page1</loc></url></urlset>\n"
             "  END\n"
             "page /private/map.xml type=application/xml\n"
             "  body <<END\n"
             "  <urlset><url><loc>{base}/hidden</loc></url></urlset>\n"
             "  END\n"
             "page /private/inner.xml type=application/xml\n"
             "  body <<END\n"
             "  <urlset><url><loc>{base}/hidden</loc></url></urlset>\n"
             "  END\n"
             "page /secret-map.xml type=application/xml\n"
             "  body <<END\n"
             "  <urlset><url><loc>{base}/secret-page</loc></url></urlset>\n"
             "  END\n",
             b.url, b.url, b.url);
    start_named(&a, "127.0.0.1", "a", text);

    /* A alone: B is outside the host policy. */
    crawl_run r;
    const char *const alone[] = {"--exclude", "secret", a.url, NULL};
    crawl_args(&r, 60, alone);
    assert_int_equal(requests_of("b", "/", NULL), 0);
    assert_int_equal(requests_of("a", "/private/", NULL), 0);
    assert_int_equal(requests_of("a", "/secret-map.xml", NULL), 0);
    assert_int_equal(requests_of("a", "/good.xml", NULL), 1);
    char u[300];
    snprintf(u, sizeof u, "%spage1", a.url);
    assert_non_null(crawl_run_find(&r, u));
    snprintf(u, sizeof u, "%shidden", a.url);
    assert_null(crawl_run_find(&r, u));
    assert_non_null(strstr(r.err, "on another host, left out"));
    assert_non_null(strstr(r.err, "forbidden by robots.txt, left out"));
    crawl_run_free(&r);

    /* A and B: B's robots.txt keeps /admin/ out; its b-map.xml is read. */
    const char *const both[] = {a.url, b.url, NULL};
    crawl_args(&r, 60, both);
    assert_int_equal(requests_of("b", "/admin/", NULL), 0);
    assert_int_equal(requests_of("b", "/b-map.xml", NULL), 1);
    snprintf(u, sizeof u, "%sfine", b.url);
    assert_non_null(crawl_run_find(&r, u));
    crawl_run_free(&r);

    /* --delay 0.3: every request to A, sitemaps included, 0.3 s apart as the crawler
     * starts them; the server sees them after a trip that varies, by more than a few
     * ms on a machine busy with other tests (this test does not run alone): 100 ms of
     * slack — without the fix the sitemaps went 0 ms apart. */
    testsite_stop(&a);
    start_named(&a, "127.0.0.1", "a", text);
    const char *const polite[] = {"--delay", "0.3", a.url, NULL};
    crawl_args(&r, 60, polite);
    double gap;
    int n = requests_of("a", "/", &gap);
    print_message("%d requests to A, at least %.0f ms apart\n", n, gap);
    assert_true(n >= 5); /* robots.txt twice, index, good.xml, pages */
    assert_true(gap >= 300 - 100);
    crawl_run_free(&r);
    testsite_stop(&a);
    testsite_stop(&b);
}

/* L1: ten sitemaps that never answer in time (--timeout 2, --max-tries 3). Before,
 * each was tried 3 times (files x tries x timeout; with the defaults, 20 min per
 * origin); now each gets one try, and the origin's sitemaps stop after
 * SITEMAPS_MAX_FAILURES downloads without an answer. Counted at the server. (2 s: the
 * robots.txt and the root must answer in time on a busy machine.) */
static void test_seeding_bounded(void **state)
{
    (void)state;
    char text[2048];
    size_t n = (size_t)snprintf(text, sizeof text, "page /robots.txt type=text/plain body=\"");
    for (int i = 1; i <= 10; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "Sitemap: {base}/slow%d.xml\\n", i);
    n += (size_t)snprintf(text + n, sizeof text - n, "\"\npage /\n");
    for (int i = 1; i <= 10; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "page /slow%d.xml type=application/xml delay=10000 "
                              "body=\"<urlset/>\"\n",
                              i);
    assert_true(n < sizeof text);
    start_named(&a, "127.0.0.1", "slow", text);
    crawl_run r;
    const char *const args[] = {"--timeout", "2", "--max-tries", "3", a.url, NULL};
    crawl_args(&r, 90, args);
    testsite_stop(&a); /* every request logged, the aborted ones too */
    int slow = requests_of("slow", "/slow", NULL);
    print_message("%d requests for the sitemaps that time out, %.1f s\n", slow, r.seconds);
    assert_true(slow <= SITEMAPS_MAX_FAILURES);
    assert_non_null(strstr(r.err, "downloads got no answer"));
    assert_int_equal(r.nrecords, 1);
    crawl_run_free(&r);
}

/* L2: four gzip sitemaps of 50,000 URLs each. The seeder waits while the Queue holds
 * more than SITEMAPS_BACKLOG URLs: interrupted once the site has served a backlog's
 * worth of them (its --log; not at a moment, which under load may come before the
 * sitemaps are read), the crawl had at most that many (and a parser chunk's worth) to
 * do — before, all 200,000 were queued at once, and a seeder that queued even one
 * file whole would leave 40,000 to do by then. */
enum { BIG_FILES = 4, BIG_URLS = 50000 };

static void test_back_pressure(void **state)
{
    (void)state;
    int port = testsite_free_port();
    assert_true(port > 0);
    char text[2048];
    size_t n = (size_t)snprintf(text, sizeof text, "page /robots.txt type=text/plain body=\"");
    for (int i = 1; i <= BIG_FILES; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "Sitemap: {base}/big%d.xml.gz\\n", i);
    n += (size_t)snprintf(text + n, sizeof text - n, "\"\npage /\n");
    for (int i = 1; i <= BIG_FILES; i++) {
        char gz[400];
        snprintf(gz, sizeof gz, "%s/big%d.xml.gz", dir, i);
        gzFile g = gzopen(gz, "wb");
        assert_non_null(g);
        gzprintf(g, "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
        for (int j = 0; j < BIG_URLS; j++)
            gzprintf(g, "<url><loc>http://127.0.0.1:%d/u/%d/%d</loc></url>\n", port, i, j);
        gzprintf(g, "</urlset>\n");
        gzclose(g);
        n +=
            (size_t)snprintf(text + n, sizeof text - n,
                             "page /big%d.xml.gz type=application/gzip body=@big%d.xml.gz\n", i, i);
    }
    assert_true(n < sizeof text);
    char path[400], portarg[16];
    snprintf(path, sizeof path, "%s/big", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    snprintf(portarg, sizeof portarg, "%d", port);
    char log[400];
    snprintf(log, sizeof log, "%s/big.log", dir);
    const char *const sargs[] = {"--port", portarg, "--log", log, path, NULL};
    assert_int_equal(testsite_start(&a, sargs), 0);

    char bin[512];
    snprintf(bin, sizeof bin, "%s/crawl-queue", BIN_DIR);
    char *argv[] = {bin, "-q", "--format", "jsonl", "--sitemaps", a.url, NULL};
    crawl_run r;
    signal_at at = {.path = log, .lines = SITEMAPS_BACKLOG, .sig = SIGINT};
    assert_int_equal(run_crawler_signal_at(&r, argv, 60, &at), 0);
    if (!r.summary || !at.sent || at.late)
        fail_msg("%s: %s", signal_at_describe(&at), crawl_run_describe(&r));
    long long todo = jobj_int(r.summary, "todo", -1);
    print_message("%s: %zu records, %lld URLs to do, peak RSS %ld MB\n", signal_at_describe(&at),
                  r.nrecords, todo, r.maxrss_kb / 1024);
    assert_true(r.nrecords < BIG_FILES * BIG_URLS); /* mid-way */
    assert_true(todo >= 0);
    assert_true(todo <= 2 * SITEMAPS_BACKLOG);
    crawl_run_free(&r);
    testsite_stop(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeded_from_sitemaps),
        cmocka_unit_test(test_not_without_the_flag),
        cmocka_unit_test_teardown(test_sitemaps_stay_in_scope, stop_own),
        cmocka_unit_test_teardown(test_seeding_bounded, stop_own),
        cmocka_unit_test_teardown(test_back_pressure, stop_own),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
