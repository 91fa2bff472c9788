/* test_seeds_sitemaps.c — crawl-queue --sitemaps (stage3_queue/seeds/sitemaps.h) against a testsite
 * whose pages are only reachable through its sitemaps: robots.txt's Sitemap line names
 * an index, the index a plain and a gzip-compressed sitemap (a .xml.gz file, inflated
 * by the parser), and /sitemap.xml one more page; an offsite URL in a sitemap is left
 * to the host policy. Without --sitemaps the orphans stay unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "jsonl.h"
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
    gzprintf(g, "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/"
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
    char *argv[] = {bin, "-v", "--format", "jsonl", site.url, sitemaps ? "--sitemaps" : NULL,
                    NULL};
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
    assert_true(has(&r, "/orphan2?a=1&b=2"));  /* &amp; decoded */
    assert_true(has(&r, "/orphan3"));          /* from the .xml.gz */
    assert_true(has(&r, "/deep"));             /* from /sitemap.xml */
    assert_null(crawl_run_find(&r, "http://elsewhere.example/x"));
    assert_int_equal(r.nrecords, 6);           /* sitemaps are read, not recorded */
    assert_int_equal(asked("/maps/index.xml"), 1);
    assert_int_equal(asked("/maps/one.xml"), 1);
    assert_int_equal(asked("/maps/two.xml.gz"), 1);
    assert_int_equal(asked("/sitemap.xml"), 1);
    assert_non_null(strstr(r.err, "/maps/one.xml: 4 URL(s), "));  /* /a: maybe seen */
    crawl_run_free(&r);
}

static void test_not_without_the_flag(void **state)
{
    (void)state;
    crawl_run r;
    run(&r, false);
    assert_int_equal(r.nrecords, 2);           /* / and /a */
    assert_false(has(&r, "/orphan1"));
    crawl_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeded_from_sitemaps),
        cmocka_unit_test(test_not_without_the_flag),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
