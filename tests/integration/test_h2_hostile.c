/* test_h2_hostile.c — crawl-queue against a hostile HTTP/2 server (#34): the server is
 * tests/harness/h2hostile.py (python3-h2 under /usr/bin/python3, over TLS with a
 * certificate made here by openssl), one per case: a header list that never ends, DATA
 * that never ends, every stream reset and a thousand RST_STREAMs after, a thousand
 * PUSH_PROMISEs to a client that refused push, SETTINGS with
 * an initial window of 0 and heads without bodies, GOAWAY after each request. Each
 * crawl must end by itself (exit 0) with a record for every URL — the hostile ones
 * an exception or a truncated body — and a peak RSS under 200 MB. Without
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

static void server_start(h2server *s, const char *mode)
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
        execl(PYTHON, PYTHON, SOURCE_DIR "/tests/harness/h2hostile.py", cert, key, mode,
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
    server_start(&s, mode);
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
    };
    return cmocka_run_group_tests(tests, setup, scratch_teardown);
}
