/* test_net.c — the caching resolver, non-blocking connect and the open-files limit.
 * Only 127.0.0.1 sockets the test creates itself; no network needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "net.h"

static void test_resolve_numeric(void **state)
{
    (void)state;
    resolver *r = resolver_new();
    assert_non_null(r);
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char err[256] = "";
    assert_int_equal(resolver_lookup(r, "127.0.0.1", 8080, &ss, &len, err, sizeof err), 0);
    assert_int_equal(ss.ss_family, AF_INET);
    assert_int_equal(len, sizeof(struct sockaddr_in));
    const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
    assert_int_equal(ntohs(in->sin_port), 8080);
    assert_int_equal(ntohl(in->sin_addr.s_addr), INADDR_LOOPBACK);

    assert_int_equal(resolver_lookup(r, "::1", 81, &ss, &len, err, sizeof err), 0);
    assert_int_equal(ss.ss_family, AF_INET6);
    assert_int_equal(len, sizeof(struct sockaddr_in6));
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
    assert_int_equal(ntohs(in6->sin6_port), 81);
    assert_true(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));

    assert_int_equal(resolver_lookups(r), 0); /* numeric hosts need no getaddrinfo */
    resolver_free(r);
}

static void test_resolve_localhost_cached(void **state)
{
    (void)state;
    resolver *r = resolver_new();
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char err[256] = "";
    assert_int_equal(resolver_lookup(r, "localhost", 80, &ss, &len, err, sizeof err), 0);
    assert_true(ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
    assert_int_equal(resolver_lookups(r), 1);
    if (ss.ss_family == AF_INET)
        assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 80);

    /* Again, and on another port: answered from the cache. */
    assert_int_equal(resolver_lookup(r, "localhost", 8080, &ss, &len, err, sizeof err), 0);
    assert_int_equal(resolver_lookups(r), 1);
    if (ss.ss_family == AF_INET)
        assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 8080);
    resolver_free(r);
}

static void test_resolve_failure_cached(void **state)
{
    (void)state;
    resolver *r = resolver_new();
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char err[256] = "";
    assert_int_equal(resolver_lookup(r, "no-such-host.invalid", 80, &ss, &len, err, sizeof err),
                     -1);
    const char *prefix = "cannot resolve host 'no-such-host.invalid': ";
    assert_memory_equal(err, prefix, strlen(prefix));
    assert_true(strlen(err) > strlen(prefix));
    size_t n = resolver_lookups(r);
    assert_int_equal(n, 1);

    char err2[256] = "";
    assert_int_equal(resolver_lookup(r, "no-such-host.invalid", 80, &ss, &len, err2, sizeof err2),
                     -1);
    assert_string_equal(err2, err);
    assert_int_equal(resolver_lookups(r), 1);

    /* A short error buffer is truncated, not overrun. */
    char small[8];
    assert_int_equal(resolver_lookup(r, "no-such-host.invalid", 80, &ss, &len, small, sizeof small),
                     -1);
    assert_string_equal(small, "cannot ");
    resolver_free(r);
}

static void test_resolve_bad_arguments(void **state)
{
    (void)state;
    resolver *r = resolver_new();
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char err[256];
    assert_int_equal(resolver_lookup(r, "", 80, &ss, &len, err, sizeof err), -1);
    assert_string_equal(err, "cannot resolve host '': empty host name");
    assert_int_equal(resolver_lookup(r, "127.0.0.1", 70000, &ss, &len, err, sizeof err), -1);
    assert_int_equal(resolver_lookup(r, NULL, 80, &ss, &len, err, sizeof err), -1);
    assert_int_equal(resolver_lookup(NULL, "x", 80, &ss, &len, NULL, 0), -1);
    assert_int_equal(resolver_lookups(r), 0);
    resolver_free(r);
    resolver_free(NULL);
}

/* Many distinct hosts: the table grows and every entry is still found. */
static void test_resolver_many_hosts(void **state)
{
    (void)state;
    resolver *r = resolver_new();
    struct sockaddr_storage ss;
    socklen_t len;
    char host[32], err[128];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 500; i++) {
            snprintf(host, sizeof host, "10.0.%d.%d", i / 256, i % 256);
            assert_int_equal(resolver_lookup(r, host, 80, &ss, &len, err, sizeof err), 0);
            const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
            assert_int_equal(ntohl(in->sin_addr.s_addr), (10u << 24) | (unsigned)i);
        }
    resolver_free(r);
}

/* A TCP socket bound to 127.0.0.1 on a free port; listening if asked. */
static int local_socket(bool listening, struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)addr, sizeof *addr), 0);
    socklen_t len = sizeof *addr;
    assert_int_equal(getsockname(fd, (struct sockaddr *)addr, &len), 0);
    if (listening)
        assert_int_equal(listen(fd, 4), 0);
    return fd;
}

/* Waits (5 s at most) for the connect to finish; returns its net_connect_result. */
static int finish_connect(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    int n;
    do
        n = poll(&pfd, 1, 5000);
    while (n < 0 && errno == EINTR);
    assert_int_equal(n, 1);
    return net_connect_result(fd);
}

static void test_connect_ok(void **state)
{
    (void)state;
    struct sockaddr_in addr;
    int lfd = local_socket(true, &addr);
    bool now = false;
    int fd = net_connect_start((struct sockaddr *)&addr, sizeof addr, &now);
    assert_true(fd >= 0);
    assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    assert_int_equal(finish_connect(fd), 0);

    int cfd = accept(lfd, NULL, NULL);
    assert_true(cfd >= 0);
    assert_int_equal(write(fd, "ping", 4), 4);
    char buf[8];
    assert_int_equal(read(cfd, buf, sizeof buf), 4);
    assert_memory_equal(buf, "ping", 4);
    close(cfd);
    close(fd);
    close(lfd);
}

/* A port bound but not listening refuses connections, and nobody can take it meanwhile. */
static void test_connect_refused(void **state)
{
    (void)state;
    struct sockaddr_in addr;
    int bfd = local_socket(false, &addr);
    errno = 0;
    bool now = true;
    int fd = net_connect_start((struct sockaddr *)&addr, sizeof addr, &now);
    if (fd < 0) {
        assert_int_equal(errno, ECONNREFUSED);
    } else {
        assert_false(now); /* refused is never "connected" */
        assert_int_equal(finish_connect(fd), ECONNREFUSED);
        close(fd);
    }
    close(bfd);
}

static void test_connect_bad_address(void **state)
{
    (void)state;
    errno = 0;
    assert_int_equal(net_connect_start(NULL, 0, NULL), -1);
    assert_int_equal(errno, EINVAL);

    struct sockaddr bogus = {.sa_family = 12345};
    errno = 0;
    assert_int_equal(net_connect_start(&bogus, sizeof bogus, NULL), -1);
    assert_int_not_equal(errno, 0);
}

/* Connected at once (loopback): sending needs no wait for writability. */
static void test_connect_at_once(void **state)
{
    (void)state;
    struct sockaddr_in addr;
    int lfd = local_socket(true, &addr);
    bool now = false;
    int fd = net_connect_start((struct sockaddr *)&addr, sizeof addr, &now);
    assert_true(fd >= 0);
    if (now) {
        assert_int_equal(net_connect_result(fd), 0);
        assert_int_equal(send(fd, "ping", 4, MSG_NOSIGNAL), 4);
    } else {
        assert_int_equal(finish_connect(fd), 0); /* still in progress: allowed */
    }
    close(fd);
    close(lfd);
}

/* Out of descriptors: net_socket fails with EMFILE, which net_out_of_fds recognises;
 * the waits go 10, 20, ... up to 1000 ms and start again at 10 after a reset. */
static void test_out_of_fds(void **state)
{
    (void)state;
    struct rlimit old, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    int probe = dup(0); /* the lowest free descriptor */
    assert_true(probe >= 0);
    close(probe);
    low = old;
    low.rlim_cur = (rlim_t)probe; /* no new descriptor fits */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    errno = 0;
    int fd = net_socket(AF_INET);
    int e = errno;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_int_equal(fd, -1);
    assert_int_equal(e, EMFILE);
    assert_true(net_out_of_fds(EMFILE) && net_out_of_fds(ENFILE));
    assert_false(net_out_of_fds(ECONNREFUSED));

    unsigned ms = 0;
    static const unsigned want[] = {10, 20, 40, 80, 160, 320, 640, 1000, 1000};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(net_fd_backoff(&ms), want[i]);
    ms = 0;
    assert_int_equal(net_fd_backoff(&ms), 10);
}

static void test_raise_nofile(void **state)
{
    (void)state;
    long soft = net_raise_nofile();
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_true(soft > 0);
    assert_int_equal((rlim_t)soft, rl.rlim_cur);
    if (rl.rlim_max != RLIM_INFINITY)
        assert_int_equal(rl.rlim_cur, rl.rlim_max);
    assert_int_equal(net_raise_nofile(), soft); /* idempotent */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve_numeric),
        cmocka_unit_test(test_resolve_localhost_cached),
        cmocka_unit_test(test_resolve_failure_cached),
        cmocka_unit_test(test_resolve_bad_arguments),
        cmocka_unit_test(test_resolver_many_hosts),
        cmocka_unit_test(test_connect_ok),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_connect_bad_address),
        cmocka_unit_test(test_connect_at_once),
        cmocka_unit_test(test_out_of_fds),
        cmocka_unit_test(test_raise_nofile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
