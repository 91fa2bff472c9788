/* test_redisglue.c — hiredis's async API on our selector (common/redis/redisglue.c),
 * against a redis-server each test starts for itself (redis_helper.h): commands round
 * trip on every selector backend, a refused connection and a server killed mid-run
 * give the error callback (once, one line) and NULL to every waiting command, the
 * answer timer fires, and the glue may be freed from inside any of its callbacks.
 * Every loop runs under a deadline timer that stops the selector and fails the test.
 * Links crawl_redis only: the loop and hiredis, no HTTP.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis_helper.h"
#include "redisglue.h"
#include "redisurl.h"
#include "selector.h"

#define DEADLINE_MS 20000
#define N_COMMANDS  2000

typedef struct {
    selector *s;
    sel_timer *deadline;
    int deadline_hit;
    redis_server rs;
    redis_glue *g;
    /* what the callbacks saw */
    int replies, nulls, errors_seen, bad;
    long long last_incr;
    char error[200];
    int stop_after;       /* stop the loop after this many callbacks (replies+nulls) */
    int free_in_callback; /* free the glue in the first reply's callback */
} fx;

static void deadline_cb(selector *s, void *arg)
{
    fx *f = arg;
    f->deadline = NULL;
    f->deadline_hit = 1;
    selector_stop(s);
}

static void run(fx *f, const char *backend)
{
    char err[256];
    if (!f->s) {
        f->s = selector_new(backend, err, sizeof err);
        assert_non_null(f->s);
    }
    f->deadline = selector_call_later(f->s, DEADLINE_MS, deadline_cb, f);
    selector_run(f->s);
    if (f->deadline)
        selector_cancel(f->s, f->deadline);
    f->deadline = NULL;
    assert_false(f->deadline_hit);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    *state = f;
    return redis_server_start(&f->rs, NULL);
}

static int teardown(void **state)
{
    fx *f = *state;
    redis_glue_free(f->g);
    if (f->s)
        selector_free(f->s);
    redis_server_stop(&f->rs);
    free(f);
    return 0;
}

static void maybe_stop(fx *f)
{
    if (f->stop_after && f->replies + f->nulls >= f->stop_after)
        selector_stop(f->s);
}

static void on_error(redis_glue *g, const char *msg, void *data)
{
    fx *f = data;
    (void)g;
    f->errors_seen++;
    snprintf(f->error, sizeof f->error, "%s", msg);
    selector_stop(f->s);
}

/* INCR's answers must come back in order: 1, 2, 3, ... */
static void got_incr(redis_glue *g, redisReply *r, void *data)
{
    fx *f = data;
    (void)g;
    if (!r) {
        f->nulls++;
    } else {
        f->replies++;
        if (r->type != REDIS_REPLY_INTEGER || r->integer != f->last_incr + 1)
            f->bad++;
        else
            f->last_incr = r->integer;
    }
    maybe_stop(f);
}

/* GET of the binary value SET with argv. */
static const char BIN[] = {'a', '\0', 'b', '\r', '\n', 'c'};

static void got_bin(redis_glue *g, redisReply *r, void *data)
{
    fx *f = data;
    (void)g;
    if (!r || r->type != REDIS_REPLY_STRING || r->len != sizeof BIN
        || memcmp(r->str, BIN, sizeof BIN) != 0)
        f->bad++;
    f->replies++;
    maybe_stop(f);
}

static void got_any(redis_glue *g, redisReply *r, void *data)
{
    fx *f = data;
    (void)g;
    if (r)
        f->replies++;
    else
        f->nulls++;
    if (r && r->type == REDIS_REPLY_ERROR)
        f->bad++;
    maybe_stop(f);
}

static void connect_fx(fx *f, const char *backend, int timeout_ms)
{
    char err[256];
    if (!f->s) {
        f->s = selector_new(backend, err, sizeof err);
        assert_non_null(f->s);
    }
    f->g = redis_glue_connect(f->s, "127.0.0.1", f->rs.port, timeout_ms, err, sizeof err);
    if (!f->g)
        fail_msg("%s", err);
    redis_glue_on_error(f->g, on_error, f);
}

/* N_COMMANDS pipelined INCRs, a binary SET/GET through argv, on each backend. */
static void test_round_trip_every_backend(void **state)
{
    fx *f = *state;
    for (size_t b = 0; selector_backends[b]; b++) {
        f->replies = f->nulls = f->bad = 0;
        f->last_incr = 0;
        connect_fx(f, selector_backends[b], 5000);
        char key[32];
        snprintf(key, sizeof key, "counter-%zu", b);
        for (int i = 0; i < N_COMMANDS; i++)
            assert_int_equal(redis_glue_command(f->g, got_incr, f, "INCR %s", key), 0);
        const char *argv[] = {"SET", "bin", BIN};
        size_t lens[] = {3, 3, sizeof BIN};
        assert_int_equal(redis_glue_argv(f->g, got_any, f, 3, argv, lens), 0);
        assert_int_equal(redis_glue_command(f->g, got_bin, f, "GET %s", "bin"), 0);
        assert_int_equal(redis_glue_pending(f->g), N_COMMANDS + 2);
        f->stop_after = N_COMMANDS + 2;
        run(f, NULL);
        assert_int_equal(f->replies, N_COMMANDS + 2);
        assert_int_equal(f->nulls, 0);
        assert_int_equal(f->bad, 0);
        assert_int_equal(f->last_incr, N_COMMANDS);
        assert_int_equal(redis_glue_pending(f->g), 0);
        assert_true(redis_glue_connected(f->g));
        assert_null(redis_glue_error(f->g));
        assert_int_equal(f->errors_seen, 0);
        redis_glue_free(f->g);
        f->g = NULL;
        assert_int_equal(selector_count(f->s), 0); /* the descriptor is forgotten */
        selector_free(f->s);
        f->s = NULL;
    }
}

/* A server error reply is a reply, not a failure of the connection. */
static void test_error_reply(void **state)
{
    fx *f = *state;
    connect_fx(f, NULL, 5000);
    assert_int_equal(redis_glue_command(f->g, got_any, f, "SET k v"), 0);
    assert_int_equal(redis_glue_command(f->g, got_any, f, "INCR k"), 0); /* not an integer */
    f->stop_after = 2;
    run(f, NULL);
    assert_int_equal(f->replies, 2);
    assert_int_equal(f->bad, 1);
    assert_null(redis_glue_error(f->g));
}

/* Nothing listens: one line, through the error callback (or at once). */
static void test_refused(void **state)
{
    fx *f = *state;
    int port = f->rs.port;
    redis_server_stop(&f->rs);
    char err[256];
    f->s = selector_new(NULL, err, sizeof err);
    f->g = redis_glue_connect(f->s, "127.0.0.1", port, 5000, err, sizeof err);
    if (f->g) {
        redis_glue_on_error(f->g, on_error, f);
        assert_int_equal(redis_glue_command(f->g, got_any, f, "PING"), 0);
        run(f, NULL);
        assert_int_equal(f->errors_seen, 1);
        assert_int_equal(f->nulls, 1);
        assert_int_equal(f->replies, 0);
        snprintf(err, sizeof err, "%s", f->error);
        assert_string_equal(redis_glue_error(f->g), f->error);
        assert_int_equal(redis_glue_command(f->g, got_any, f, "PING"), -1);
    }
    char want[64];
    snprintf(want, sizeof want, "redis 127.0.0.1:%d: ", port);
    err[sizeof err - 1] = '\0';
    assert_memory_equal(err, want, strlen(want));
    assert_non_null(strstr(err, "refused"));
    assert_null(strchr(err, '\n'));
}

/* The server dies mid-run: every waiting command gets NULL, on_error runs once. */
static void test_server_killed(void **state)
{
    fx *f = *state;
    connect_fx(f, NULL, 5000);
    assert_int_equal(redis_glue_command(f->g, got_incr, f, "INCR c"), 0);
    f->stop_after = 1;
    run(f, NULL);
    assert_int_equal(f->replies, 1);
    redis_server_kill(&f->rs);
    /* BLPOP never answers on its own: it is waiting when the server goes. */
    assert_int_equal(redis_glue_command(f->g, got_any, f, "BLPOP nothing 0"), 0);
    assert_int_equal(redis_glue_command(f->g, got_any, f, "PING"), 0);
    f->stop_after = 0;
    run(f, NULL); /* stopped by on_error */
    assert_int_equal(f->errors_seen, 1);
    assert_int_equal(f->nulls, 2);
    assert_int_equal(f->replies, 1);
    assert_non_null(redis_glue_error(f->g));
    char want[64];
    snprintf(want, sizeof want, "redis 127.0.0.1:%d: ", f->rs.port);
    assert_memory_equal(f->error, want, strlen(want));
    /* Nothing more to come: no descriptor, no timer of the glue's. */
    assert_int_equal(selector_count(f->s), 0);
    assert_int_equal(selector_timer_count(f->s), 0);
}

/* A blocking command past the timeout: "no answer in N ms", and NULL to the waiter. */
static void test_timeout_fires(void **state)
{
    fx *f = *state;
    connect_fx(f, NULL, 300);
    assert_int_equal(redis_glue_command(f->g, got_any, f, "PING"), 0);
    f->stop_after = 1;
    run(f, NULL);
    assert_int_equal(f->replies, 1);
    f->stop_after = 0;
    uint64_t t0 = selector_now_ms(f->s);
    assert_int_equal(redis_glue_command(f->g, got_any, f, "BLPOP nothing 0"), 0);
    run(f, NULL);
    uint64_t took = selector_now_ms(f->s) - t0;
    assert_int_equal(f->errors_seen, 1);
    assert_int_equal(f->nulls, 1);
    assert_non_null(strstr(f->error, "no answer in 300 ms"));
    assert_true(took >= 290);
    assert_true(took < 5000);
}

/* The same while idle: no command waits, so no timeout however long the loop runs. */
static void stop_cb(selector *s, void *arg)
{
    (void)arg;
    selector_stop(s);
}

static void test_idle_is_no_timeout(void **state)
{
    fx *f = *state;
    connect_fx(f, NULL, 100);
    assert_int_equal(redis_glue_command(f->g, got_any, f, "PING"), 0);
    selector_call_later(f->s, 400, stop_cb, NULL);
    run(f, NULL);
    assert_int_equal(f->replies, 1);
    assert_int_equal(f->errors_seen, 0);
    assert_null(redis_glue_error(f->g));
}

/* A server that accepts and never answers (a listening socket nobody reads). */
static void test_timeout_silent_server(void **state)
{
    fx *f = *state;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(lfd, 4), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &l), 0);
    char err[256];
    f->s = selector_new("poll", err, sizeof err);
    f->g = redis_glue_connect(f->s, "127.0.0.1", ntohs(a.sin_port), 200, err, sizeof err);
    assert_non_null(f->g);
    redis_glue_on_error(f->g, on_error, f);
    assert_int_equal(redis_glue_command(f->g, got_any, f, "PING"), 0);
    run(f, NULL);
    close(lfd);
    assert_int_equal(f->errors_seen, 1);
    assert_int_equal(f->nulls, 1);
    assert_non_null(strstr(f->error, "no answer in 200 ms"));
}

/* ---- a server that is no Redis: replies without end (issue #27 M5) ---- */

#define STREAM_CAP ((size_t)256 << 20) /* the fake server gives up after this */

/* Fork a server on 127.0.0.1 that reads the first command, answers head, then streams
 * `unit` over and over until the client closes (exit 0) or STREAM_CAP bytes went out
 * (exit 1: the client never stopped it) — 30 s at most. Returns its port; *pid. */
static int endless_server(const char *head, const char *unit, pid_t *pid)
{
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(lfd, 4), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &l), 0);
    fflush(NULL);
    *pid = fork();
    assert_true(*pid >= 0);
    if (*pid == 0) {
        alarm(30);
        int c = accept(lfd, NULL, NULL);
        char req[512];
        if (c < 0 || recv(c, req, sizeof req, 0) <= 0)
            _exit(2);
        char chunk[65536];
        size_t ul = strlen(unit), n = 0;
        while (n + ul <= sizeof chunk) {
            memcpy(chunk + n, unit, ul);
            n += ul;
        }
        if (send(c, head, strlen(head), MSG_NOSIGNAL) < 0)
            _exit(2);
        for (size_t sent = 0; sent < STREAM_CAP; sent += n)
            if (send(c, chunk, n, MSG_NOSIGNAL) < 0)
                _exit(0); /* the client closed: it stopped the reply */
        _exit(1);
    }
    close(lfd);
    return ntohs(a.sin_port);
}

static void expect_bounded(fx *f, const char *head, const char *unit, const char *why)
{
    pid_t pid;
    int port = endless_server(head, unit, &pid);
    char err[256];
    f->s = selector_new("epoll", err, sizeof err);
    f->g = redis_glue_connect(f->s, "127.0.0.1", port, 10000, err, sizeof err);
    assert_non_null(f->g);
    redis_glue_set_max_reply(f->g, 1 << 20);
    redis_glue_on_error(f->g, on_error, f);
    assert_int_equal(redis_glue_command(f->g, got_any, f, "GET k"), 0);
    run(f, NULL);
    redis_glue_free(f->g);
    f->g = NULL;
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("'%.20s': the server streamed %zu bytes and was never stopped", head, STREAM_CAP);
    assert_int_equal(f->errors_seen, 1);
    assert_int_equal(f->nulls, 1); /* the command's callback: NULL */
    assert_int_equal(f->replies, 0);
    if (!strstr(f->error, why))
        fail_msg("%.20s: %s", head, f->error);
    assert_null(strchr(f->error, '\n'));
    selector_free(f->s);
    f->s = NULL;
    f->errors_seen = f->nulls = f->replies = f->bad = 0;
}

static void test_reply_size_bounded(void **state)
{
    fx *f = *state;
    const char *ours = "a reply of more than 1048576 bytes";
    expect_bounded(f, "$999999999999\r\n", "x", ours);    /* one bulk string, endless */
    expect_bounded(f, "*2000000000\r\n", ":1\r\n", ours); /* 16 GB of element slots */
    expect_bounded(f, "*50000\r\n", ":1\r\n", ours);      /* small array, its objects */
    expect_bounded(f, "*3\r\n$5\r\nabcde\r\n*1\r\n$999999999\r\n", "y", ours); /* nested */
    /* past INT_MAX: hiredis 0.14 refuses the count itself */
    expect_bounded(f, "*999999999999\r\n", ":1\r\n", "Multi-bulk length out of range");
}

/* Freed from inside a reply's callback with more commands waiting: the others are
 * dropped (no callback), nothing leaks (ASan/valgrind), the loop ends. */
static void free_me(redis_glue *g, redisReply *r, void *data)
{
    fx *f = data;
    (void)r;
    f->replies++;
    redis_glue_free(g);
    f->g = NULL;
    selector_stop(f->s);
}

static void test_free_in_callback(void **state)
{
    fx *f = *state;
    connect_fx(f, NULL, 5000);
    assert_int_equal(redis_glue_command(f->g, free_me, f, "PING"), 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(redis_glue_command(f->g, got_any, f, "INCR x"), 0);
    run(f, NULL);
    assert_int_equal(f->replies, 1);
    assert_int_equal(f->nulls, 0);
    assert_null(f->g);
    assert_int_equal(selector_count(f->s), 0);
    assert_int_equal(selector_timer_count(f->s), 0);
}

/* Freed from the error callback, and from a NULL reply's callback. */
static void free_on_error(redis_glue *g, const char *msg, void *data)
{
    fx *f = data;
    (void)msg;
    f->errors_seen++;
    redis_glue_free(g);
    f->g = NULL;
    selector_stop(f->s);
}

static void free_on_null(redis_glue *g, redisReply *r, void *data)
{
    fx *f = data;
    if (!r) {
        f->nulls++;
        redis_glue_free(g);
        f->g = NULL;
        selector_stop(f->s);
    }
}

static void test_free_in_error_paths(void **state)
{
    fx *f = *state;
    connect_fx(f, NULL, 5000);
    redis_glue_on_error(f->g, free_on_error, f);
    redis_server_kill(&f->rs);
    assert_int_equal(redis_glue_command(f->g, got_any, f, "PING"), 0);
    run(f, NULL);
    assert_int_equal(f->errors_seen, 1);
    assert_null(f->g);

    assert_int_equal(redis_server_restart(&f->rs), 0);
    f->nulls = f->errors_seen = 0;
    connect_fx(f, NULL, 5000);
    redis_server_kill(&f->rs);
    assert_int_equal(redis_glue_command(f->g, free_on_null, f, "PING"), 0);
    assert_int_equal(redis_glue_command(f->g, got_any, f, "PING"), 0);
    run(f, NULL);
    assert_int_equal(f->nulls, 1); /* the second one is dropped with the glue */
    assert_int_equal(f->errors_seen, 0);
    assert_null(f->g);
}

static void test_parse_url(void **state)
{
    (void)state;
    char err[700];
    redis_url u;
    assert_int_equal(redis_url_parse("redis://127.0.0.1:7000/crawl-1", &u, err, sizeof err), 0);
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 7000);
    assert_string_equal(u.name, "crawl-1");
    assert_false(u.auth);
    assert_int_equal(redis_url_parse("redis://localhost/x", &u, err, sizeof err), 0);
    assert_string_equal(u.host, "localhost");
    assert_int_equal(u.port, 6379);
    assert_int_equal(redis_url_parse("redis://[::1]:1/a.b", &u, err, sizeof err), 0);
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 1);
    const char *bad[] = {
        "http://x/y",   "redis://x:0/y", "redis://x:70000/y", "redis://x:1",     "redis://x:1/",
        "redis://:1/y", "redis://x/a b", "redis://[::1/y",    "redis://x:12a/y", NULL};
    for (int i = 0; bad[i]; i++) {
        err[0] = '\0';
        assert_int_equal(redis_url_parse(bad[i], &u, err, sizeof err), -1);
        assert_non_null(strstr(err, bad[i]));
    }
}

/* redis://[USER:]PASSWORD@HOST:PORT/NAME, as redis-cli reads it; the password never in
 * a message (issue #27 L7). */
static void test_parse_url_password(void **state)
{
    (void)state;
    char err[700], shown[700];
    redis_url u;
    assert_int_equal(redis_url_parse("redis://:pw@127.0.0.1:7000/c", &u, err, sizeof err), 0);
    assert_true(u.auth);
    assert_string_equal(u.user, "");
    assert_string_equal(u.password, "pw");
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 7000);
    assert_string_equal(u.name, "c");
    assert_int_equal(redis_url_parse("redis://pw@h/c", &u, err, sizeof err), 0);
    assert_string_equal(u.user, "");
    assert_string_equal(u.password, "pw");
    assert_int_equal(redis_url_parse("redis://crawler:s%40cr%3At/x@[::1]:2/c", &u, err, sizeof err),
                     0);
    assert_string_equal(u.user, "crawler");
    assert_string_equal(u.password, "s@cr:t/x");
    assert_string_equal(u.host, "::1");
    redis_url_forget(&u);
    assert_string_equal(u.password, "");

    redis_url_shown("redis://user:secret@h:1/c", shown, sizeof shown);
    assert_string_equal(shown, "redis://user:***@h:1/c");
    redis_url_shown("redis://secret@h/c", shown, sizeof shown);
    assert_string_equal(shown, "redis://***@h/c");
    redis_url_shown("redis://h/c", shown, sizeof shown);
    assert_string_equal(shown, "redis://h/c");
    /* every malformed URL with a secret: the error masks it */
    const char *bad[] = {
        "redis://user:secret@h:0/c", "redis://user:secret@h",      "redis://:secret@/c",
        "redis://user:secret@h/a b", "http://user:secret@h/c",     "redis://user:secret%zz@h/c",
        "redis://user:@h/c",         "redis://user:secret@[::1/c", NULL};
    for (int i = 0; bad[i]; i++) {
        err[0] = '\0';
        assert_int_equal(redis_url_parse(bad[i], &u, err, sizeof err), -1);
        assert_true(err[0] != '\0');
        if (strstr(err, "secret"))
            fail_msg("%s: the secret is in the error: %s", bad[i], err);
        assert_null(strchr(err, '\n'));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip_every_backend, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_killed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_fires, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_is_no_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_silent_server, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_in_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_in_error_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reply_size_bounded, setup, teardown),
        cmocka_unit_test(test_parse_url),
        cmocka_unit_test(test_parse_url_password),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
