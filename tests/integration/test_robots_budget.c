/* test_robots_budget.c — slow robots.txt downloads never starve the pages (issue #27
 * M6, its last part; robotstxt.h, curlglue.h's lanes), checked at the servers: each
 * host is a testsite on 127.0.0.K with a request log; crawl-queue runs as a process.
 *
 * Ten hosts drip their robots.txt (a byte each 200 ms: 8 s for the file, past the
 * crawl's --timeout of 6 s), given first among the roots, at --max-tasks 10; an
 * eleventh, good host has 200 pages. Before, the ten downloads took every place in
 * robots.txt's line and every libcurl connection, and the good host's robots.txt and
 * pages waited for their timeout: its last page ended 6 s or more after the start.
 * Now a download running past ROBOTSTXT_SLOW_MS (1 s) leaves its place in line and
 * robots.txt downloads have connections of their own: the good host's last page must
 * end within 3.5 s of the start (alone it takes well under 0.5 s after that second;
 * the rest is slack for a loaded machine, and still well under the 6 s timeout).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "jsonl.h"
#include "scratch.h"
#include "testsite_helper.h"

enum { SLOW = 10, GOOD = SLOW + 2 }; /* slow hosts 127.0.0.2 .. 11, the good one .12 */

static char *const dir = scratch_dir;
static testsite hosts[GOOD + 1];

static void serve(int k, const char *site, const char *gen)
{
    char bind[32], log[300], file[300], name[16];
    snprintf(bind, sizeof bind, "127.0.0.%d", k);
    snprintf(log, sizeof log, "%s/log.%d", dir, k);
    snprintf(name, sizeof name, "site.%d", k);
    unlink(log);
    const char *args[] = {"--bind", bind, "--log", log, "--generate", gen, NULL};
    if (site) { /* a site file instead of --generate */
        args[4] = scratch_write(file, sizeof file, name, site);
        assert_non_null(args[4]);
        args[5] = NULL;
    }
    assert_int_equal(testsite_start(&hosts[k], args), 0);
}

static int stop_hosts(void **state)
{
    (void)state;
    for (int k = 0; k <= GOOD; k++)
        testsite_stop(&hosts[k]);
    return 0;
}

/* The monotonic clock, as the servers' logs give it (ms). */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* When host k's last request ended (its log), and how many it served. */
static double last_end(int k, size_t *n)
{
    char log[300], line[600];
    snprintf(log, sizeof log, "%s/log.%d", dir, k);
    FILE *f = fopen(log, "r");
    double last = 0;
    *n = 0;
    while (f && fgets(line, sizeof line, f)) {
        double b, e;
        if (sscanf(line, "%lf %lf", &b, &e) == 2) {
            last = e > last ? e : last;
            (*n)++;
        }
    }
    if (f)
        fclose(f);
    return last;
}

static void test_slow_robots_leave_pages_alone(void **state)
{
    (void)state;
    static const char dripping[] = "page /robots.txt type=text/plain drip=1/200\n"
                                   "  body=\"User-agent: *\\nDisallow: /private/for/robots\\n\"\n"
                                   "page /\n";
    char *argv[64];
    int n = 0;
    argv[n++] = BIN_DIR "/crawl-queue";
    const char *const flags[] = {"--format",  "jsonl", "--max-tasks", "10",
                                 "--timeout", "6",     "--max-tries", "1"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        argv[n++] = (char *)flags[i];
    for (int k = 2; k < GOOD; k++) {
        serve(k, dripping, NULL);
        argv[n++] = hosts[k].url;
    }
    serve(GOOD, NULL, "pages=200,links=5,size=500,seed=7");
    argv[n++] = hosts[GOOD].url;
    argv[n] = NULL;

    crawl_run r;
    double t0 = now_ms();
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    size_t served;
    double good = last_end(GOOD, &served) - t0;
    printf("the good host's %zu requests ended %.0f ms after the start; the crawl took "
           "%.1f s\n",
           served, good, r.seconds);
    assert_int_equal(served, 201); /* robots.txt (none: a 404) and its 200 pages */
    if (good > 3500)
        fail_msg("the good host's last request ended %.0f ms after the start: it waited "
                 "for the dripping robots.txt files",
                 good);
    /* Every URL has its record: the good host's pages, and each slow root forbidden
     * for its robots.txt's timeout, which the drips did reach. */
    assert_int_equal(r.nrecords, 200 + SLOW);
    int unreachable = 0;
    for (size_t i = 0; i < r.nrecords; i++) {
        const char *ex = jobj_str(r.records[i], "exception");
        unreachable += ex && strstr(ex, "host could not be reached") != NULL;
    }
    assert_int_equal(unreachable, SLOW);
    assert_true(r.seconds > 5.5);
    crawl_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_slow_robots_leave_pages_alone, stop_hosts),
    };
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
