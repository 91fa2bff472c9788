/* test_exit_status.c — crawl-queue --fail-on-broken (stage3_queue/pipelines/broken.h):
 * the exit status is wget's, 0 when every URL succeeded, 8 when a page answered 4xx or
 * 5xx, 4 when a fetch failed on the network (a refused connection, a host whose
 * robots.txt could not be fetched) — 4 winning over 8 — with the failures and the pages
 * that link to them on stderr; without the flag, 0 as before; stages 1 and 2 refuse
 * the flag. On tests/sites/exit-status.site and a port nobody listens on.
 */
#include <setjmp.h>
#include <stdarg.h>
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

static int start_site(void **state)
{
    (void)state;
    const char *const args[] = {SITES_DIR "/exit-status.site", NULL};
    return testsite_start(&ts, args) == 0 ? 0 : -1;
}

static int stop_site(void **state)
{
    (void)state;
    testsite_stop(&ts);
    return 0;
}

/* Run PROG with flags and roots (NULL-terminated, after -q --max-tries 1); the
 * records go to stdout, which is kept. */
static void crawl(crawl_run *r, const char *prog, ...)
{
    char *argv[32] = {(char *)prog, "-q", "--max-tries", "1"};
    int n = 4;
    va_list ap;
    va_start(ap, prog);
    for (const char *a; (a = va_arg(ap, const char *)) && n < 31;)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    assert_int_equal(run_crawler(r, argv, 60), 0);
    if (r->timed_out || r->term_signal)
        fail_msg("%s", crawl_run_describe(r));
}

static char *url(const char *path)
{
    static char bufs[4][256];
    static int k;
    char *b = bufs[k++ % 4];
    snprintf(b, sizeof bufs[0], "%s%s", ts.url, path[0] == '/' ? path + 1 : path);
    return b;
}

/* A port on 127.0.0.1 nobody listens on. */
static char *refused(void)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "http://127.0.0.1:%d/", testsite_free_port());
    return buf;
}

static void assert_has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("'%s' not in:\n%s", want, text);
}

static void test_clean_is_0(void **state)
{
    (void)state;
    crawl_run r;
    crawl(&r, QUEUE, "--fail-on-broken", url("/clean"), NULL);
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.err, "--fail-on-broken"));
    crawl_run_free(&r);
}

static void test_broken_is_8(void **state)
{
    (void)state;
    crawl_run r;
    crawl(&r, QUEUE, "--fail-on-broken", url("/bad"), NULL);
    assert_int_equal(r.exit_code, 8);
    char line[512];
    assert_has(r.err, "--fail-on-broken: 2 page(s) answered 4xx or 5xx, 0 fetch(es) failed");
    snprintf(line, sizeof line, "\n  404    %s  <- %s\n", url("/missing"), url("/bad"));
    assert_has(r.err, line);
    snprintf(line, sizeof line, "\n  500    %s  <- %s\n", url("/oops"), url("/bad"));
    assert_has(r.err, line);
    assert_null(strstr(r.err, "/private/x.html")); /* forbidden is not broken */
    crawl_run_free(&r);

    crawl(&r, QUEUE, url("/bad"), NULL); /* without the flag: as before */
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.err, "");
    crawl_run_free(&r);
}

static void test_unreachable_is_4(void **state)
{
    (void)state;
    crawl_run r;
    /* robots.txt obeyed: the host's robots.txt cannot be fetched */
    crawl(&r, QUEUE, "--fail-on-broken", refused(), NULL);
    assert_int_equal(r.exit_code, 4);
    assert_has(r.err, "0 page(s) answered 4xx or 5xx, 1 fetch(es) failed on the network");
    assert_has(r.err, ": IgnoreRequest: host could not be reached: ");
    assert_has(r.err, "/robots.txt; RFC 9309: nothing fetched without its robots.txt)");
    crawl_run_free(&r);
    crawl(&r, QUEUE, "--fail-on-broken", "--ignore-robots", refused(), NULL);
    assert_int_equal(r.exit_code, 4);
    assert_has(r.err, "  failed http://127.0.0.1:");
    crawl_run_free(&r);
    /* a 404 and a dead host: 4, the lower number, as wget */
    crawl(&r, QUEUE, "--fail-on-broken", url("/bad"), refused(), NULL);
    assert_int_equal(r.exit_code, 4);
    assert_has(r.err, "2 page(s) answered 4xx or 5xx, 1 fetch(es) failed on the network");
    crawl_run_free(&r);
}

static void test_many_shown_then_counted(void **state)
{
    (void)state;
    crawl_run r;
    crawl(&r, QUEUE, "--fail-on-broken", url("/many"), NULL);
    assert_int_equal(r.exit_code, 8);
    int shown = 0;
    for (const char *p = r.err; (p = strstr(p, "\n  404    ")); p++)
        shown++;
    assert_int_equal(shown, 20);
    assert_has(r.err, "\n  ... and 5 more (the report has every one)\n");
    crawl_run_free(&r);
}

static void test_stages_1_2_refuse(void **state)
{
    (void)state;
    crawl_run r;
    crawl(&r, CALLBACKS, "--fail-on-broken", url("/bad"), NULL);
    assert_int_equal(r.exit_code, 2);
    assert_has(r.err, "unknown option '--fail-on-broken'");
    crawl_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_is_0),        cmocka_unit_test(test_broken_is_8),
        cmocka_unit_test(test_unreachable_is_4),  cmocka_unit_test(test_many_shown_then_counted),
        cmocka_unit_test(test_stages_1_2_refuse),
    };
    return cmocka_run_group_tests(tests, start_site, stop_site);
}
