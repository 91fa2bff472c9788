/* test_h2_hostile.c — crawl-queue against a hostile HTTP/2 server (#34): the server is
 * tests/harness/h2hostile.py (python3-h2 under /usr/bin/python3, over TLS with a
 * certificate made here by openssl), one per case: a header list that never ends, DATA
 * that never ends, every stream reset and a thousand RST_STREAMs after, a thousand
 * PUSH_PROMISEs to a client that refused push, SETTINGS with
 * an initial window of 0 and heads without bodies, GOAWAY after each request. Each
 * crawl must end by itself (exit 0) with a record for every URL — the hostile ones
 * an exception or a truncated body — and a peak RSS under 200 MB. And one that is not
 * hostile: digest auth over HTTP/2 (--user, --netrc; #37). Without
 * /usr/bin/python3's h2 or openssl the test says so in one line and is skipped (77). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <poll.h>
#include <sys/wait.h>

#include "jsonl.h"
#include "scratch.h"

#define PYTHON "/usr/bin/python3"
/* 200 MB; under AddressSanitizer (-DCRAWL_SANITIZE=ON) its quarantine of freed memory
 * counts too (the endless-DATA case peaks near 180 MB there, 17 MB without): 400. */
#if defined(__SANITIZE_ADDRESS__)
enum { RSS_MAX_KB = 400 * 1024, LINKS = 10 };
#else
enum { RSS_MAX_KB = 200 * 1024, LINKS = 10 };
#endif

static char cert[300], key[300];

/* The server of one case: its process, its stdin (closed: it ends), its root URL. */
typedef struct h2server {
    pid_t pid;
    int in_fd;
    char url[128];
} h2server;

/* login: USER:PASSWORD for the digest case, else NULL. */
static void server_start(h2server *s, const char *mode, const char *login)
{
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(PYTHON, PYTHON, SOURCE_DIR "/tests/harness/h2hostile.py", cert, key, mode, login,
              (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    s->in_fd = in[1];
    size_t n = 0;
    struct pollfd p = {.fd = out[0], .events = POLLIN};
    while (n + 1 < sizeof s->url && poll(&p, 1, 10000) == 1) { /* 10 s at most */
        ssize_t got = read(out[0], s->url + n, 1);
        if (got <= 0 || s->url[n] == '\n')
            break;
        n++;
    }
    s->url[n] = '\0';
    close(out[0]);
    if (strncmp(s->url, "https://127.0.0.1:", 18) != 0)
        fail_msg("h2hostile.py %s did not start (said '%s')", mode, s->url);
}

static void server_stop(h2server *s)
{
    close(s->in_fd);
    kill(s->pid, SIGTERM);
    waitpid(s->pid, NULL, 0);
}

/* crawl-queue against the case's server, and the checks every case shares: the crawl
 * ends (exit 0, well within the limit), under RSS_MAX_KB, each record a status or an
 * exception; strict: the root a 200 and a record for each of its links. */
static void crawl_case(const char *mode, const char *tries, bool strict, crawl_run *r)
{
    h2server s;
    server_start(&s, mode, NULL);
    char *argv[] = {BIN_DIR "/crawl-queue",
                    "--insecure",
                    "-q",
                    "--timeout",
                    "2",
                    "--max-tries",
                    (char *)tries,
                    "--max-size",
                    "1000000",
                    "--format",
                    "jsonl",
                    s.url,
                    NULL};
    int rc = run_crawler(r, argv, 60);
    server_stop(&s);
    assert_int_equal(rc, 0);
    if (r->exit_code != 0 || r->timed_out)
        fail_msg("%s: %s", mode, crawl_run_describe(r));
    print_message("%s: %zu records in %.2f s, peak RSS %ld KB\n", mode, r->nrecords, r->seconds,
                  r->maxrss_kb);
    if (r->maxrss_kb > RSS_MAX_KB)
        fail_msg("%s: peak RSS %ld KB", mode, r->maxrss_kb);
    for (size_t i = 0; i < r->nrecords; i++)
        if (jobj_int(r->records[i], "status", -1) < 0 && !jobj_str(r->records[i], "exception"))
            fail_msg("%s: a record with neither status nor exception\n%s", mode,
                     crawl_run_describe(r));
    assert_true(r->nrecords >= 1 && r->nrecords <= LINKS + 1);
    if (!strict)
        return;
    const jobj *root = crawl_run_find(r, s.url);
    assert_non_null(root);
    assert_int_equal(jobj_int(root, "status", -1), 200);
    assert_int_equal(r->nrecords, LINKS + 1);
}

/* Every link's record: an exception (what the server did), none a whole 200. */
static void assert_links_failed(const crawl_run *r, const char *mode, const char *word)
{
    size_t failed = 0;
    for (size_t i = 0; i < r->nrecords; i++) {
        const char *url = jobj_str(r->records[i], "url");
        if (!url || !strstr(url, "/a/"))
            continue;
        const char *ex = jobj_str(r->records[i], "exception");
        if (!ex)
            fail_msg("%s: %s has no exception\n%s", mode, url, crawl_run_describe(r));
        if (word && strstr(ex, word))
            failed++;
    }
    if (word && failed == 0)
        fail_msg("%s: no exception says '%s'\n%s", mode, word, crawl_run_describe(r));
}

static void test_endless_header_list(void **state)
{
    (void)state;
    crawl_run r;
    crawl_case("headers", "1", true, &r);
    assert_links_failed(&r, "headers", NULL);
    crawl_run_free(&r);
}

static void test_endless_data(void **state)
{
    (void)state;
    crawl_run r;
    crawl_case("data", "1", true, &r);
    assert_links_failed(&r, "data", "truncated at 1000000 bytes");
    crawl_run_free(&r);
}

static void test_rst_stream_flood(void **state)
{
    (void)state;
    crawl_run r;
    crawl_case("rst", "1", true, &r);
    assert_links_failed(&r, "rst", NULL);
    crawl_run_free(&r);
}

/* Server push refused (SETTINGS_ENABLE_PUSH 0), and a thousand PUSH_PROMISEs anyway. */
static void test_push_flood(void **state)
{
    (void)state;
    crawl_run r;
    crawl_case("push", "1", true, &r);
    assert_links_failed(&r, "push", NULL); /* nghttp2 ends the connection: a protocol error */
    crawl_run_free(&r);
}

static void test_window_zero(void **state)
{
    (void)state;
    crawl_run r;
    crawl_case("window0", "1", true, &r);
    assert_links_failed(&r, "window0", "Timeout");
    crawl_run_free(&r);
}

/* GOAWAY after each answer, the connection closed: the requests in flight on it fail
 * (or are tried again, on a new one); the crawl ends with a record for each URL it
 * reached. */
static void test_goaway_mid_crawl(void **state)
{
    (void)state;
    crawl_run r;
    crawl_case("goaway", "4", false, &r);
    crawl_run_free(&r);
}

#define PASSWORD "s3cr3t-pw"

/* crawl-queue --insecure -vv against the digest server, with flag and its value (NULL:
 * none) for the login: exit 0. */
static void crawl_login(crawl_run *r, const h2server *s, const char *flag, const char *value)
{
    char *argv[] = {BIN_DIR "/crawl-queue", "--insecure", "-v",          "-v", "--format", "jsonl",
                    (char *)s->url,         (char *)flag, (char *)value, NULL};
    assert_int_equal(run_crawler(r, argv, 60), 0);
    if (r->exit_code != 0 || r->timed_out)
        fail_msg("digest, %s: %s", flag ? flag : "no login", crawl_run_describe(r));
}

/* The digest case's records: the root (status root) and, when it is a 200, its links,
 * each a 200 over HTTP/2 (the server speaks nothing else: ALPN h2 only). */
static void assert_logged_in(const crawl_run *r, const h2server *s, int root, const char *how)
{
    const jobj *rec = crawl_run_find(r, s->url);
    if (!rec || jobj_int(rec, "status", -1) != root)
        fail_msg("digest, %s: the root not a %d\n%s", how, root, crawl_run_describe(r));
    size_t want = root == 200 ? LINKS + 1 : 1;
    if (r->nrecords != want)
        fail_msg("digest, %s: %zu records (%zu expected)\n%s", how, r->nrecords, want,
                 crawl_run_describe(r));
    for (size_t i = 0; i < r->nrecords; i++) {
        const char *v = jobj_str(r->records[i], "http_version");
        if (jobj_int(r->records[i], "status", -1) != root || !v || strcmp(v, "HTTP/2") != 0)
            fail_msg("digest, %s: record %zu not a %d over HTTP/2\n%s", how, i, root,
                     crawl_run_describe(r));
    }
    if (strstr(r->out, PASSWORD) || strstr(r->err, PASSWORD))
        fail_msg("digest, %s: the password in the output or on stderr", how);
}

/* HTTP digest auth over HTTP/2 (issue #37): h2hostile.py's digest mode, every page
 * behind a digest challenge it checks (RFC 7616, MD5, qop=auth). With --user, and with
 * --netrc (a .netrc of the test's own as $HOME's), libcurl answers each 401 on a new
 * stream and the pages are 200s, their links followed; without a login, or with a wrong
 * password, the root is a 401 and nothing more. */
static void test_digest_auth(void **state)
{
    (void)state;
    h2server s;
    server_start(&s, "digest", "alice:" PASSWORD);
    crawl_run r;
    crawl_login(&r, &s, "--user", "alice:" PASSWORD);
    assert_logged_in(&r, &s, 200, "--user");
    crawl_run_free(&r);
    crawl_login(&r, &s, "--user", "alice:wrong-pw");
    assert_logged_in(&r, &s, 401, "a wrong password");
    crawl_run_free(&r);
    crawl_login(&r, &s, NULL, NULL);
    assert_logged_in(&r, &s, 401, "no login");
    crawl_run_free(&r);

    char *was = scratch_netrc_home("machine 127.0.0.1 login alice password " PASSWORD "\n");
    crawl_login(&r, &s, "--netrc", NULL);
    scratch_home_restore(was);
    assert_logged_in(&r, &s, 200, "--netrc");
    crawl_run_free(&r);
    server_stop(&s);
}

/* Whether cmd (a shell command) exits 0. */
static int works(const char *cmd)
{
    return system(cmd) == 0;
}

static int setup(void **state)
{
    if (scratch_setup(state) < 0)
        return -1;
    snprintf(cert, sizeof cert, "%s/cert.pem", scratch_dir);
    snprintf(key, sizeof key, "%s/key.pem", scratch_dir);
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
             " -keyout '%s' -out '%s' -days 2 -subj /CN=127.0.0.1"
             " -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
             key, cert);
    return works(cmd) ? 0 : -1;
}

int main(void)
{
    if (!works(PYTHON " -c 'import h2' >/dev/null 2>&1")
        || !works("openssl version >/dev/null 2>&1")) {
        printf("test_h2_hostile: no h2 for " PYTHON " (python3-h2) or no openssl: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endless_header_list), cmocka_unit_test(test_endless_data),
        cmocka_unit_test(test_rst_stream_flood),    cmocka_unit_test(test_push_flood),
        cmocka_unit_test(test_window_zero),         cmocka_unit_test(test_goaway_mid_crawl),
        cmocka_unit_test(test_digest_auth),
    };
    const char *only = getenv("CRAWL_TEST_FILTER"); /* a cmocka glob: some cases */
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, setup, scratch_teardown);
}
