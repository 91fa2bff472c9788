/* test_robotstxt.c — the robots.txt middleware's memory (stage3_queue/robotstxt.h), in
 * process: crawls against testsites whose robots.txt is 500 KiB of rules, with the
 * middleware's limits and its stats (issue 27 H5: rules lived for the whole crawl, about
 * 2.7 MB per origin, 400 origins 1,085 MB).
 *
 *   - each origin keeps only our group, each rule once (robots_bytes);
 *   - past max_bytes the least recently used origins go, and come back (fetched again)
 *     when a URL needs them: every URL still gets the right answer;
 *   - rules older than max_age are fetched again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "crawler.h"
#include "engine.h"
#include "robots_parser.h"
#include "robotstxt.h"
#include "settings.h"
#include "registry.h"
#include "scratch.h"
#include "testsite_helper.h"

enum { NSITES = 8 };

static char *const dir = scratch_dir;
static testsite sites[NSITES];
static app the_app;
static settings the_settings; /* crawl-queue's flags, which the_app reads */
static robotstxt_limits limits;
static robotstxt_stats stats;

/* The test's extensions, as registry rows (registry.h): the chapter's Queue and the
 * robots.txt middleware with the test's limits. */
static int make_queue(app *a, const settings *s, frontier *out, char *err, size_t errlen)
{
    (void)s, (void)err, (void)errlen;
    *out = queue_frontier(a->loop);
    return 0;
}

static int make_robots(engine *e, const settings *s, downloader_middleware *out, char *err,
                       size_t errlen)
{
    (void)s, (void)err, (void)errlen;
    *out = robotstxt_middleware_limits(e, "testbot", &limits);
    return 0;
}

static const extension queue_row = {"queue", EXT_FRONTIER, 1000, NULL, .make_frontier = make_queue};
static const extension robots_row = {"robots.txt", EXT_DOWNLOADER_MW, 100, NULL,
                                     .make_middleware = make_robots};
static const extension *const rows[] = {&queue_row, &robots_row};

/* 500 KiB of robots.txt: "User-agent: *", "Disallow: /secret", then distinct rules
 * that forbid none of the site's pages, up to the size. */
static size_t write_big_robots(const char *path, char **text_out)
{
    size_t cap = ROBOTS_MAX_BYTES;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t n = (size_t)snprintf(text, cap, "User-agent: *\nDisallow: /secret\n");
    for (unsigned i = 0;; i++) {
        char line[48];
        int k = snprintf(line, sizeof line, "Disallow: /zz%u/*q\n", i);
        if (n + (size_t)k > cap)
            break;
        memcpy(text + n, line, (size_t)k);
        n += (size_t)k;
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
    *text_out = text;
    return n;
}

/* Site k: the big robots.txt; / links /a and /secret; /a links /b after `delay_ms`. */
static void start_sites(int n, long delay_ms)
{
    char robots_path[300], site_path[300];
    snprintf(robots_path, sizeof robots_path, "%s/robots.txt", dir);
    snprintf(site_path, sizeof site_path, "%s/site", dir);
    char *text;
    write_big_robots(robots_path, &text);
    free(text);
    FILE *f = fopen(site_path, "w");
    assert_non_null(f);
    fprintf(f,
            "page /robots.txt type=text/plain body=@robots.txt\n"
            "page /\n link /a /secret\npage /a delay=%ld\n link /b\npage /b\npage /secret\n",
            delay_ms);
    fclose(f);
    for (int k = 0; k < n; k++) {
        const char *args[] = {site_path, NULL};
        assert_int_equal(testsite_start(&sites[k], args), 0);
    }
}

static int stop_sites(void **state)
{
    (void)state;
    for (int k = 0; k < NSITES; k++)
        testsite_stop(&sites[k]);
    return 0;
}

/* crawl-queue, in process, on the first n sites. */
static void crawl_sites(int n)
{
    char *argv[8 + NSITES] = {"test_robotstxt", "--max-tries", "1", "--timeout", "10", "-q"};
    int argc = 6;
    for (int k = 0; k < n; k++)
        argv[argc++] = sites[k].url;
    argv[argc] = NULL;
    app_stage stage = settings_stage("test_robotstxt", &the_settings);
    assert_int_equal(app_open(&the_app, argc, argv, &stage), 0);
    assert_int_equal(crawler_run(&the_app, rows, sizeof rows / sizeof rows[0]), 0);
}

/* Every site's /, /a, /b fetched and /secret forbidden. */
static void check_records(int n)
{
    const report *r = crawl_report(the_app.crawl);
    assert_int_equal(report_count(r), (size_t)(4 * n));
    int forbidden = 0, fetched = 0;
    for (size_t i = 0; i < report_count(r); i++) {
        const fetch_stat *st = report_get(r, i);
        bool secret = strstr(st->url, "/secret") != NULL;
        if (secret) {
            assert_non_null(st->exception);
            assert_non_null(strstr(st->exception, "forbidden by robots.txt"));
            forbidden++;
        } else {
            assert_int_equal(st->status, 200);
            fetched++;
        }
    }
    assert_int_equal(forbidden, n);
    assert_int_equal(fetched, 3 * n);
}

/* What one origin's rules cost now: the same file parsed (the entry adds its key and
 * a few words). */
static size_t one_origin_bytes(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/robots.txt", dir);
    char *text;
    size_t n = write_big_robots(path, &text);
    robots *r = robots_parse(text, n, "testbot");
    size_t b = robots_bytes(r);
    printf("a 500 KiB robots.txt of %zu distinct rules for us: %zu octets kept "
           "(%.2f MB for 200 such origins, before any bound)\n",
           robots_rule_count(r), b, 200.0 * (double)b / 1e6);
    robots_free(r);
    free(text);
    return b;
}

/* Past max_bytes the least recently used origins go: with room for about two
 * origins' rules, 8 origins are crawled, every answer right, and the rules held never
 * pass the bound by more than the origins still in use. */
static void test_rules_bounded(void **state)
{
    (void)state;
    size_t b1 = one_origin_bytes();
    start_sites(NSITES, 0);
    limits = (robotstxt_limits){.max_bytes = 2 * b1 + b1 / 2, .stats = &stats};
    crawl_sites(NSITES);
    check_records(NSITES);
    printf("%d origins, max_bytes %zu: peak %zu octets of rules, %zu fetches, %zu evictions\n",
           NSITES, limits.max_bytes, stats.peak_bytes, stats.fetches, stats.evictions);
    assert_true(stats.evictions >= NSITES - 3);
    assert_true(stats.fetches >= NSITES);
    assert_true(stats.bytes <= limits.max_bytes);
    /* Each origin's entry is its rules and a few hundred octets: not 2.7 MB. */
    assert_true(b1 < 1200 * 1000);
    app_close(&the_app);

    /* Unbounded (the default 64 MiB is more than 8 origins), for comparison: nothing
     * dropped, one fetch per origin. */
    limits = (robotstxt_limits){.stats = &stats};
    crawl_sites(NSITES);
    check_records(NSITES);
    printf("%d origins, default max_bytes: peak %zu octets, %zu fetches, %zu evictions\n", NSITES,
           stats.peak_bytes, stats.fetches, stats.evictions);
    assert_int_equal(stats.evictions, 0);
    assert_int_equal(stats.fetches, NSITES);
    assert_true(stats.peak_bytes < NSITES * (b1 + 1024));
    app_close(&the_app);
}

/* Rules older than max_age are fetched again: /a takes 600 ms, so the request for /b
 * finds rules older than 300 ms. */
static void test_rules_expire(void **state)
{
    (void)state;
    start_sites(1, 600);
    limits = (robotstxt_limits){.max_age_ms = 300, .stats = &stats};
    crawl_sites(1);
    check_records(1);
    struct testsite_stats st;
    assert_int_equal(testsite_stats(&sites[0], &st), 0);
    printf("max_age 300 ms: %zu fetches, %zu expiries; the site saw %ld robots.txt "
           "requests\n",
           stats.fetches, stats.expiries, st.robots_txt);
    assert_true(stats.expiries >= 1);
    assert_int_equal(st.robots_txt, (long)stats.fetches);
    assert_true(st.robots_txt >= 2);
    app_close(&the_app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_rules_bounded, stop_sites),
        cmocka_unit_test_teardown(test_rules_expire, stop_sites),
    };
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
