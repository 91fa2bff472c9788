/* test_cookies.c — crawl-queue's cookies and proxies (#25 items 3 and 4; docs/cookies.md),
 * checked at the servers: each host is a testsite on 127.0.0.K logging every request's
 * Cookie fields (--log-header Cookie), and the proxy is a thread of this test
 * (proxy_helper.h) logging what it passed. crawl-queue runs as a process.
 *
 * - a page behind a session cookie: 403 without cookies, 200 with --cookies;
 * - a response whose head is refused (over 64 KiB) stores none of its cookies;
 * - the cookie file: read first (a cookie of its own reaches the server), written back
 *   with what the server set (used by the next crawl from its first request), after
 *   SIGINT too; a file that is not a cookie file is refused and left as it was;
 * - cookies stay on their host: two hosts linking to each other, each setting its own;
 *   --cookie goes to the roots' hosts only;
 * - --proxy, and the http_proxy variable: every request through the proxy; a socks5h
 *   proxy resolves the names itself;
 * - the raw transport refuses what it cannot honour (exit 2, one line, no file made).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "jsonl.h"
#include "proxy_helper.h"
#include "scratch.h"
#include "testsite_helper.h"

static char *const dir = scratch_dir;
static testsite hosts[4]; /* hosts[k]: 127.0.0.k, k = 2, 3 */

/* Host k: a testsite on 127.0.0.k serving text, its log (Cookie fields) in dir/log.k. */
static void serve(int k, const char *text)
{
    char bind[32], log[300], file[300], name[16];
    snprintf(bind, sizeof bind, "127.0.0.%d", k);
    snprintf(log, sizeof log, "%s/log.%d", dir, k);
    snprintf(name, sizeof name, "site.%d", k);
    unlink(log);
    assert_non_null(scratch_write(file, sizeof file, name, text));
    const char *const args[] = {"--bind", bind, "--log", log, "--log-header", "Cookie", file, NULL};
    assert_int_equal(testsite_start(&hosts[k], args), 0);
}

static int stop_hosts(void **state)
{
    (void)state;
    for (int k = 0; k < 4; k++)
        testsite_stop(&hosts[k]);
    unsetenv("http_proxy");
    return 0;
}

/* "PATH COOKIES" for each request host k logged (COOKIES: "-", or "=" and the Cookie
 * value, percent-encoded), in order; how many (at most cap). */
static size_t logged(int k, char lines[][512], size_t cap)
{
    char log[300], line[700];
    snprintf(log, sizeof log, "%s/log.%d", dir, k);
    FILE *f = fopen(log, "r");
    size_t n = 0;
    while (f && n < cap && fgets(line, sizeof line, f)) {
        char path[100], how[32], cookie[400];
        if (sscanf(line, "%*s %*s %*s %99s %31s %399s", path, how, cookie) == 3)
            snprintf(lines[n++], sizeof lines[0], "%s %s", path, cookie);
    }
    if (f)
        fclose(f);
    return n;
}

/* The Cookie host k logged for the first request of path ("-": none), or NULL. */
static const char *cookie_of(int k, const char *path, char *out, size_t outlen)
{
    char lines[64][512];
    size_t n = logged(k, lines, 64), len = strlen(path);
    for (size_t i = 0; i < n; i++)
        if (strncmp(lines[i], path, len) == 0 && lines[i][len] == ' ') {
            snprintf(out, outlen, "%s", lines[i] + len + 1);
            return out;
        }
    return NULL;
}

/* Run crawl-queue with args (NULL-terminated, after the program and --format jsonl). */
static void crawl(crawl_run *r, const char *first, ...)
{
    char *argv[32];
    int n = 0;
    argv[n++] = BIN_DIR "/crawl-queue";
    argv[n++] = "--format";
    argv[n++] = "jsonl";
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    assert_int_equal(run_crawler(r, argv, 60), 0);
}

static int status_of(const crawl_run *r, const char *base, const char *path)
{
    char url[300];
    snprintf(url, sizeof url, "%.200s%s", base, path[0] == '/' ? path + 1 : path);
    const jobj *rec = crawl_run_find(r, url);
    return rec ? (int)jobj_int(rec, "status", -1) : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* / sets the session cookie; /private and /deep need it. */
static const char session_site[] = "page /robots.txt type=text/plain body=\"User-agent: *\\n\"\n"
                                   "page /\n header Set-Cookie: sid=s3cr3t; Path=/\n"
                                   " link /private /other\n"
                                   "page /private cookie=sid=s3cr3t\n link /deep\n"
                                   "page /deep cookie=sid=s3cr3t\n"
                                   "page /other\n";

static void test_session_cookie(void **state)
{
    (void)state;
    serve(2, session_site);
    const char *base = hosts[2].url;
    crawl_run r;
    crawl(&r, base, NULL); /* no cookies: the private page is refused */
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(status_of(&r, base, "/private"), 403);
    assert_int_equal(r.nrecords, 3);
    crawl_run_free(&r);

    char jar[300], got[512];
    snprintf(jar, sizeof jar, "%s/session.jar", dir);
    unlink(jar);
    crawl(&r, "--cookies", jar, base, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(status_of(&r, base, "/private"), 200);
    assert_int_equal(status_of(&r, base, "/deep"), 200);
    assert_int_equal(r.nrecords, 4);
    crawl_run_free(&r);
    assert_non_null(cookie_of(2, "/deep", got, sizeof got));
    assert_string_equal(got, "=sid=s3cr3t");
    const char *text = slurp(jar);
    assert_non_null(text);
    assert_non_null(strstr(text, "127.0.0.2\tFALSE\t/\tFALSE\t0\tsid\ts3cr3t\n"));
}

/* #34: a response whose head is refused (a header section over 64 KiB) after its
 * Set-Cookie fields stores nothing: neither the new cookie nor the new value of an old
 * one reaches the next request or the jar. */
static const char refused_site[] = "page /robots.txt type=text/plain body=\"User-agent: *\\n\"\n"
                                   "page /\n header Set-Cookie: keep=1; Path=/\n"
                                   " link /huge /after\n"
                                   "page /huge\n header Set-Cookie: keep=2; Path=/\n"
                                   " header Set-Cookie: bad=1; Path=/\n"
                                   " header X-Pad: {70000*x}\n"
                                   "page /after\n";

static void test_refused_head_stores_no_cookie(void **state)
{
    (void)state;
    serve(2, refused_site);
    const char *base = hosts[2].url;
    char jar[300], got[512], url[300];
    snprintf(jar, sizeof jar, "%s/refused.jar", dir);
    unlink(jar);
    crawl_run r;
    /* one at a time: /huge is done before /after is asked for */
    crawl(&r, "--max-tasks", "1", "--cookies", jar, base, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    snprintf(url, sizeof url, "%shuge", base);
    const jobj *huge = crawl_run_find(&r, url);
    assert_non_null(huge);
    const char *why = jobj_str(huge, "exception");
    if (!why || !strstr(why, "header section over"))
        fail_msg("/huge: %s", crawl_run_describe(&r));
    assert_int_equal(status_of(&r, base, "/after"), 200);
    crawl_run_free(&r);
    assert_non_null(cookie_of(2, "/after", got, sizeof got));
    assert_string_equal(got, "=keep=1");
    const char *text = slurp(jar);
    assert_non_null(text);
    assert_non_null(strstr(text, "\tkeep\t1\n"));
    assert_null(strstr(text, "\tbad\t"));
}

/* The file's own cookie goes from the first request on; the server's is added and the
 * expired one dropped; the next crawl sends the server's from its first request. */
static void test_cookie_file_round_trip(void **state)
{
    (void)state;
    serve(2, session_site);
    char jar[300], got[512];
    static const char cookies[] = "# Netscape HTTP Cookie File\n\n"
                                  "127.0.0.2\tFALSE\t/\tFALSE\t0\tpre\t1\n"
                                  "#HttpOnly_127.0.0.2\tFALSE\t/\tFALSE\t0\thonly\tx\n"
                                  "127.0.0.2\tFALSE\t/\tFALSE\t1000\told\tgone\n";
    assert_non_null(scratch_write(jar, sizeof jar, "round.jar", cookies));
    crawl_run r;
    crawl(&r, "--cookies", jar, hosts[2].url, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    assert_non_null(cookie_of(2, "/robots.txt", got, sizeof got));
    assert_non_null(strstr(got, "pre=1"));
    assert_non_null(strstr(got, "honly=x"));
    assert_null(strstr(got, "old=gone")); /* expired in 1970 */
    const char *text = slurp(jar);
    assert_non_null(strstr(text, "\tpre\t1\n"));
    assert_non_null(strstr(text, "#HttpOnly_127.0.0.2\tFALSE\t/\tFALSE\t0\thonly\tx\n"));
    assert_non_null(strstr(text, "\tsid\ts3cr3t\n"));
    assert_null(strstr(text, "old"));

    testsite_stop(&hosts[2]);
    serve(2, session_site); /* a new log */
    crawl(&r, "--cookies", jar, hosts[2].url, NULL);
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);
    assert_non_null(cookie_of(2, "/robots.txt", got, sizeof got));
    assert_non_null(strstr(got, "sid=s3cr3t"));
}

/* A file that is not a cookie file: refused before the crawl (exit 2, one line), left
 * byte for byte; so is a cookie file when the crawl is refused for another reason. */
static void test_not_a_cookie_file(void **state)
{
    (void)state;
    serve(2, session_site);
    static const char notes[] = "my notes\nnot cookies at all\n";
    char path[300];
    assert_non_null(scratch_write(path, sizeof path, "notes.txt", notes));
    crawl_run r;
    crawl(&r, "--cookies", path, hosts[2].url, NULL);
    if (!crawl_run_one_line(&r, 2, "is not a Netscape cookie file (line 1"))
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(r.nrecords, 0);
    crawl_run_free(&r);
    assert_string_equal(slurp(path), notes);
}

/* Two hosts, each setting its own cookie, both roots (--cookie: both get it): host 3
 * never sees host 2's cookie, nor host 2 host 3's; host 3's own goes back to it (/b,
 * linked from its / only). Then host 2 alone the root: host 2's robots.txt, redirected
 * to host 3, reaches host 3 without host 2's --cookie. */
static void test_cookies_stay_on_their_host(void **state)
{
    (void)state;
    char site2[600];
    serve(3,
          "page /robots.txt type=text/plain body=\"User-agent: *\\n\"\n"
          "page /rules.txt type=text/plain body=\"User-agent: *\\n\"\n"
          "page /\n header Set-Cookie: three=3; Path=/\n link /b\npage /a\npage /b\n");
    snprintf(site2, sizeof site2,
             "page /robots.txt status=301 location=%srules.txt\n"
             "page /\n header Set-Cookie: two=2; Path=/\n link /a\npage /a\n",
             hosts[3].url);
    serve(2, site2);
    crawl_run r;
    crawl(&r, "--cookie", "given=yes", "--cookie", "more=1", hosts[2].url, hosts[3].url, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(r.nrecords, 4);
    crawl_run_free(&r);
    char lines[64][512];
    size_t n2 = logged(2, lines, 64);
    assert_true(n2 >= 3);
    for (size_t i = 0; i < n2; i++) {
        assert_null(strstr(lines[i], "three="));
        assert_non_null(strstr(lines[i], "given=yes")); /* a root's host */
    }
    size_t n3 = logged(3, lines, 64);
    assert_true(n3 >= 3);
    for (size_t i = 0; i < n3; i++)
        if (strstr(lines[i], "two="))
            fail_msg("host 3 got host 2's cookie: %s", lines[i]);
    char got[512];
    assert_non_null(cookie_of(3, "/b", got, sizeof got));
    assert_non_null(strstr(got, "three=3"));

    crawl(&r, "--cookie", "only=two", hosts[2].url, NULL);
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);
    size_t m3 = logged(3, lines, 64);
    assert_true(m3 > n3); /* rules.txt, once more */
    for (size_t i = n3; i < m3; i++)
        if (strstr(lines[i], "only="))
            fail_msg("host 3 got a --cookie for the root's host: %s", lines[i]);
    n2 = logged(2, lines, 64);
    assert_non_null(strstr(lines[n2 - 1], "only=two"));
}

/* A cookie the server set is in the file after SIGINT: / is answered at once, /slow
 * takes 20 s; the crawl is interrupted while /slow is in flight. */
static void interrupt_after_root(pid_t pid, void *ctx)
{
    (void)ctx;
    char got[512];
    for (int i = 0; i < 200 && !cookie_of(2, "/", got, sizeof got); i++)
        usleep(50 * 1000); /* / is logged once answered */
    usleep(500 * 1000);    /* the crawler has read it (a few ms; slack for a loaded box) */
    kill(pid, SIGINT);
}

static void test_cookies_written_after_sigint(void **state)
{
    (void)state;
    serve(2,
          "page /robots.txt type=text/plain body=\"User-agent: *\\n\"\n"
          "page /\n header Set-Cookie: sid=kept; Path=/\n link /slow\n"
          "page /slow delay=20000\n");
    char jar[300];
    snprintf(jar, sizeof jar, "%s/sigint.jar", dir);
    unlink(jar);
    char *argv[] = {BIN_DIR "/crawl-queue", "--format", "jsonl", "--cookies", jar,
                    hosts[2].url,           NULL};
    crawl_run r;
    assert_int_equal(run_crawler_at(&r, argv, 30, 0.2, interrupt_after_root, NULL), 0);
    if (r.exit_code != 0 || !r.summary || !jobj_get(r.summary, "interrupted")
        || !jobj_get(r.summary, "interrupted")->b)
        fail_msg("%s", crawl_run_describe(&r));
    assert_true(r.seconds < 15);
    crawl_run_free(&r);
    const char *text = slurp(jar);
    assert_non_null(text);
    assert_non_null(strstr(text, "\tsid\tkept\n"));
}

/* --proxy, then http_proxy: every request (robots.txt included) went through the
 * proxy, and each got its answer. */
static void test_through_proxy(void **state)
{
    (void)state;
    serve(2, session_site);
    test_proxy p;
    assert_int_equal(test_proxy_start(&p), 0);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%.50s", hosts[2].url);
    for (int how = 0; how < 2; how++) {
        size_t before = test_proxy_count(&p, prefix);
        crawl_run r;
        if (how == 0) {
            crawl(&r, "--proxy", p.url, hosts[2].url, NULL);
        } else {
            setenv("http_proxy", p.url, 1);
            crawl(&r, hosts[2].url, NULL);
            unsetenv("http_proxy");
        }
        if (r.exit_code != 0)
            fail_msg("%s", crawl_run_describe(&r));
        assert_int_equal(r.nrecords, 3);
        assert_int_equal(status_of(&r, hosts[2].url, "/other"), 200);
        crawl_run_free(&r);
        size_t through = test_proxy_count(&p, prefix) - before;
        if (through != 4) /* robots.txt, /, /private, /other */
            fail_msg("%s: %zu request(s) through the proxy, want 4", how ? "http_proxy" : "--proxy",
                     through);
    }
    test_proxy_stop(&p);
}

/* --proxy socks5h://: names are resolved by the proxy. host2.test exists only there
 * (the proxy maps it to 127.0.0.2): the crawl gets its pages, and the proxy saw the
 * name, not an address. */
static void test_socks5h(void **state)
{
    (void)state;
    serve(2, session_site);
    test_proxy p;
    assert_int_equal(test_proxy_start(&p), 0);
    char root[128], socks[128], where[64];
    snprintf(root, sizeof root, "http://host2.test:%d/", testsite_port(&hosts[2]));
    snprintf(socks, sizeof socks, "socks5h://%.*s", (int)sizeof p.url, p.url + strlen("http://"));
    snprintf(where, sizeof where, "host2.test:%d", testsite_port(&hosts[2]));
    crawl_run r;
    crawl(&r, "--proxy", socks, root, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(r.nrecords, 3);
    assert_int_equal(status_of(&r, root, "/other"), 200);
    crawl_run_free(&r);
    size_t tunnels = test_proxy_count(&p, where);
    if (tunnels < 1 || tunnels != test_proxy_count(&p, NULL))
        fail_msg("%zu tunnel(s) to %s of %zu", tunnels, where, test_proxy_count(&p, NULL));
    test_proxy_stop(&p);
}

/* What the raw transport cannot honour: one line, exit 2, no file made; proxy
 * variables in every stage on the raw transport, not on curl's. */
static void test_raw_refusals(void **state)
{
    (void)state;
    serve(2, session_site);
    char jar[300];
    snprintf(jar, sizeof jar, "%s/raw.jar", dir);
    unlink(jar);
    const char *const cases[][3] = {
        {"--cookies", jar,
         "crawl-queue: --cookies: the raw transport has no cookies and no proxy: use "
         "--transport curl (the default)"},
        {"--cookie", "a=b", "--cookie: the raw transport"},
        {"--proxy", "http://127.0.0.1:9", "--proxy: the raw transport"}};
    crawl_run r;
    for (size_t i = 0; i < 3; i++) {
        crawl(&r, "--transport", "raw", cases[i][0], cases[i][1], hosts[2].url, NULL);
        if (!crawl_run_one_line(&r, 2, cases[i][2]))
            fail_msg("%s", crawl_run_describe(&r));
        crawl_run_free(&r);
    }
    assert_int_equal(access(jar, F_OK), -1);
    static const char *const stages[] = {"crawl-queue", "crawl-callbacks", "crawl-generators"};
    setenv("http_proxy", "http://127.0.0.1:9", 1);
    for (size_t i = 0; i < 3; i++) {
        char bin[300];
        snprintf(bin, sizeof bin, "%s/%s", BIN_DIR, stages[i]);
        char *argv[] = {bin, "--format", "jsonl", "--transport", "raw", hosts[2].url, NULL};
        assert_int_equal(run_crawler(&r, argv, 30), 0);
        if (!crawl_run_one_line(&r, 2, "http_proxy is set, and the raw transport cannot"))
            fail_msg("%s: %s", stages[i], crawl_run_describe(&r));
        crawl_run_free(&r);
    }
    setenv("no_proxy", "*", 1); /* every host exempt: nothing to refuse */
    char *argv[] = {BIN_DIR "/crawl-callbacks", "--format", "jsonl", hosts[2].url, NULL};
    assert_int_equal(run_crawler(&r, argv, 30), 0);
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);
    unsetenv("no_proxy");
    unsetenv("http_proxy");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_session_cookie, stop_hosts),
        cmocka_unit_test_teardown(test_cookie_file_round_trip, stop_hosts),
        cmocka_unit_test_teardown(test_refused_head_stores_no_cookie, stop_hosts),
        cmocka_unit_test_teardown(test_not_a_cookie_file, stop_hosts),
        cmocka_unit_test_teardown(test_cookies_stay_on_their_host, stop_hosts),
        cmocka_unit_test_teardown(test_cookies_written_after_sigint, stop_hosts),
        cmocka_unit_test_teardown(test_through_proxy, stop_hosts),
        cmocka_unit_test_teardown(test_socks5h, stop_hosts),
        cmocka_unit_test_teardown(test_raw_refusals, stop_hosts),
    };
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
