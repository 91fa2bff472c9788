/* test_dns.c — stage 3's threaded resolver (common/web/dns.h) with a resolve function
 * of our own that counts its calls: concurrent lookups of one host share one call; the
 * cache answers at once, forgets after the TTL and keeps at most its size; failures
 * are cached; a slow lookup times out with a clear message for every waiter, and its
 * late answer is dropped; cancelled waiters are not called; numeric hosts need no
 * thread; callbacks may cancel, look up and evict while the waiters are called.
 * One test goes through the real getaddrinfo, for "localhost".
 *
 * Every loop runs with a guard timer that stops it and fails the test rather than let
 * it hang. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dns.h"
#include "selector.h"
#include "threadpool.h"

#include "loopguard.h"

static selector *loop;
static threadpool *pool;
static dns_resolver *dns;

/* ---- the resolve function: on pool threads, so no cmocka asserts in it ---- */

static atomic_int calls;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* "*.test" names: 10.0.0.N where N is the name's length; "bad.test" fails;
 * "slow.test" takes 400 ms, the others 30 ms. */
static int fake_resolve(const char *host, struct sockaddr_storage *addr, socklen_t *len, char *err,
                        size_t errlen)
{
    atomic_fetch_add(&calls, 1);
    sleep_ms(strcmp(host, "slow.test") == 0 ? 400 : 30);
    if (strcmp(host, "bad.test") == 0) {
        snprintf(err, errlen, "cannot resolve host '%s': Name or service not known", host);
        return -1;
    }
    struct sockaddr_in *in = (struct sockaddr_in *)addr;
    memset(addr, 0, sizeof *addr);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(0x0a000000u + (uint32_t)strlen(host));
    *len = sizeof *in;
    return 0;
}

static void start(size_t cache_size, uint64_t ttl_ms, uint64_t timeout_ms, dns_resolve_fn resolve)
{
    loop = guarded_loop_new(20000);
    char err[256] = "";
    pool = threadpool_new(loop, 4, 16, err, sizeof err);
    if (!pool)
        fail_msg("threadpool_new: %s", err);
    dns_config cfg = {cache_size, ttl_ms, timeout_ms, resolve};
    dns = dns_new(loop, pool, &cfg);
    atomic_store(&calls, 0);
}

static int teardown(void **state)
{
    (void)state;
    dns_free(dns);
    threadpool_free(pool); /* lets a lookup still running end */
    guarded_loop_free(loop);
    return 0;
}

/* ---- what the waiters got ---- */

#define MAXW 256

typedef struct {
    dns_waiter w;
    int called;
    char addr[64]; /* "10.0.0.6:81", or the error */
    bool failed;
    uint64_t at; /* when, on the loop's clock */
} waiter;

static int answered;
static int want;

static void got(dns_waiter *w, const struct sockaddr_storage *addr, socklen_t len,
                const char *error)
{
    waiter *x = w->data;
    (void)len;
    x->called++;
    x->at = selector_now_ms(loop);
    if (++answered == want)
        selector_stop(loop);
    if (error) {
        x->failed = true;
        snprintf(x->addr, sizeof x->addr, "%s", error);
        return;
    }
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (addr->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
        port = ntohs(in->sin_port);
    } else if (addr->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
        port = ntohs(in6->sin6_port);
    }
    snprintf(x->addr, sizeof x->addr, "%s:%d", ip, port);
}

static void lookup(waiter *x, const char *host, int port)
{
    memset(x, 0, sizeof *x);
    dns_lookup(dns, &x->w, host, port, got, x);
}

/* `answered` counts every call, cache hits (answered inside dns_lookup) too; the call
 * that reaches `want` stops the loop. */

static void run_until_answered(int n)
{
    want = n;
    if (answered < want)
        selector_run(loop);
    assert_false(guarded_loop_hit());
    assert_true(answered >= want);
}

static void run_until_called(const waiter *x)
{
    if (!x->called)
        run_until_answered(answered + 1);
    assert_int_equal(x->called, 1);
}

/* Let every lookup still in the pool end (the late answer of a timed-out one). */
static void run_until_pool_idle(void)
{
    while (threadpool_pending(pool) > 0 && !guarded_loop_hit())
        selector_run_once(loop, 10);
    assert_false(guarded_loop_hit());
}

/* ---- the tests ---- */

/* 100 lookups of one new host while its lookup runs: one resolve call, 100 answers,
 * each with its own port. Then a cache hit, answered inside dns_lookup. */
static void test_concurrent_lookups_share_one(void **state)
{
    (void)state;
    start(DNS_CACHE_SIZE, DNS_TTL_MS, 10000, fake_resolve);
    static waiter w[100];
    answered = 0;
    for (int i = 0; i < 100; i++)
        lookup(&w[i], "shared.test", 1000 + i);
    assert_int_equal(answered, 0); /* nothing waits on the loop thread */
    run_until_answered(100);
    assert_int_equal(atomic_load(&calls), 1);
    assert_int_equal(dns_lookups(dns), 1);
    for (int i = 0; i < 100; i++) {
        char addr[64];
        snprintf(addr, sizeof addr, "10.0.0.11:%d", 1000 + i);
        assert_int_equal(w[i].called, 1);
        assert_string_equal(w[i].addr, addr);
    }
    waiter hit;
    lookup(&hit, "shared.test", 80);
    assert_int_equal(hit.called, 1); /* at once: cached */
    assert_string_equal(hit.addr, "10.0.0.11:80");
    assert_int_equal(atomic_load(&calls), 1);
}

/* After the TTL the name is looked up again. */
static void test_ttl_expires(void **state)
{
    (void)state;
    start(DNS_CACHE_SIZE, 100, 10000, fake_resolve);
    waiter a, b, c;
    answered = 0;
    lookup(&a, "ttl.test", 80);
    run_until_answered(1);
    lookup(&b, "ttl.test", 80); /* fresh: cached */
    assert_int_equal(b.called, 1);
    assert_int_equal(atomic_load(&calls), 1);
    sleep_ms(150);
    selector_run_once(loop, 0); /* the loop's clock moves on */
    lookup(&c, "ttl.test", 80);
    assert_int_equal(c.called, 0); /* stale: a new lookup */
    run_until_answered(3);
    assert_int_equal(c.called, 1);
    assert_int_equal(atomic_load(&calls), 2);
}

/* A cache of two names: the third pushes out the oldest. */
static void test_cache_size(void **state)
{
    (void)state;
    start(2, DNS_TTL_MS, 10000, fake_resolve);
    const char *hosts[] = {"a.test", "bb.test", "ccc.test"};
    waiter w[3], again;
    answered = 0;
    for (int i = 0; i < 3; i++) {
        lookup(&w[i], hosts[i], 80);
        run_until_answered(i + 1);
    }
    assert_int_equal(atomic_load(&calls), 3);
    lookup(&again, "ccc.test", 80); /* the newest two are kept */
    assert_int_equal(again.called, 1);
    lookup(&again, "bb.test", 80);
    assert_int_equal(again.called, 1);
    assert_int_equal(atomic_load(&calls), 3);
    lookup(&again, "a.test", 80); /* the oldest went */
    assert_int_equal(again.called, 0);
    run_until_called(&again);
    assert_string_equal(again.addr, "10.0.0.6:80");
    assert_int_equal(atomic_load(&calls), 4);
}

/* A failure reaches every waiter, and is cached too. */
static void test_failure_cached(void **state)
{
    (void)state;
    start(DNS_CACHE_SIZE, DNS_TTL_MS, 10000, fake_resolve);
    waiter a, b, c;
    answered = 0;
    lookup(&a, "bad.test", 80);
    lookup(&b, "bad.test", 81);
    run_until_answered(2);
    assert_true(a.failed && b.failed);
    assert_string_equal(a.addr, "cannot resolve host 'bad.test': Name or service not known");
    lookup(&c, "bad.test", 80);
    assert_int_equal(c.called, 1);
    assert_true(c.failed);
    assert_int_equal(atomic_load(&calls), 1);
}

/* A lookup slower than the timeout fails for all three waiters with one clear line,
 * long before the lookup itself ends; the failure is cached, the late answer dropped. */
static void test_timeout(void **state)
{
    (void)state;
    start(DNS_CACHE_SIZE, DNS_TTL_MS, 100, fake_resolve);
    waiter w[3], later;
    answered = 0;
    for (int i = 0; i < 3; i++)
        lookup(&w[i], "slow.test", 80);
    uint64_t t0 = selector_now_ms(loop);
    run_until_answered(3);
    uint64_t took = w[2].at - t0;
    for (int i = 0; i < 3; i++) {
        assert_true(w[i].failed);
        assert_string_equal(w[i].addr, "DNS lookup of slow.test timed out after 0.1 s");
    }
    if (took >= 400)
        fail_msg("the timeout came after %llu ms, not before the 400 ms lookup ended",
                 (unsigned long long)took);
    run_until_pool_idle(); /* the late answer arrives, dropped */
    lookup(&later, "slow.test", 80);
    assert_int_equal(later.called, 1);
    assert_true(later.failed);
    assert_int_equal(atomic_load(&calls), 1);
}

/* A cancelled waiter is not called; the lookup goes on for the other. */
static void test_cancel(void **state)
{
    (void)state;
    start(DNS_CACHE_SIZE, DNS_TTL_MS, 10000, fake_resolve);
    waiter a, b;
    answered = 0;
    lookup(&a, "cancel.test", 80);
    lookup(&b, "cancel.test", 80);
    dns_cancel(&a.w);
    dns_cancel(&a.w); /* twice: a no-op */
    run_until_answered(1);
    assert_int_equal(a.called, 0);
    assert_int_equal(b.called, 1);
}

/* Numeric addresses and bad arguments: answered inside dns_lookup, no lookup. */
static void test_numeric_and_bad(void **state)
{
    (void)state;
    start(DNS_CACHE_SIZE, DNS_TTL_MS, 10000, fake_resolve);
    waiter a;
    answered = 0;
    lookup(&a, "127.0.0.1", 8080);
    assert_string_equal(a.addr, "127.0.0.1:8080");
    lookup(&a, "::1", 443);
    assert_string_equal(a.addr, "::1:443");
    lookup(&a, "", 80);
    assert_true(a.failed);
    assert_non_null(strstr(a.addr, "empty host name"));
    lookup(&a, "x.test", 70000);
    assert_true(a.failed);
    assert_int_equal(dns_lookups(dns), 0);
    assert_int_equal(atomic_load(&calls), 0);
}

/* Callbacks that cancel the next waiter, and look up a new name that evicts the entry
 * being answered (a cache of one): the others still get the right answer. */
static waiter chain[4], evictor;

static void got_and_meddle(dns_waiter *w, const struct sockaddr_storage *addr, socklen_t len,
                           const char *error)
{
    got(w, addr, len, error);
    if (w == &chain[0].w) {
        dns_cancel(&chain[1].w);
        dns_lookup(dns, &evictor.w, "evict.test", 80, got, &evictor);
    }
}

static void test_callbacks_may_meddle(void **state)
{
    (void)state;
    start(1, DNS_TTL_MS, 10000, fake_resolve);
    answered = 0;
    memset(chain, 0, sizeof chain);
    memset(&evictor, 0, sizeof evictor);
    for (int i = 0; i < 4; i++)
        dns_lookup(dns, &chain[i].w, "first.test", 80 + i, got_and_meddle, &chain[i]);
    run_until_answered(3); /* chain 0, 2, 3 */
    assert_int_equal(chain[1].called, 0);
    assert_string_equal(chain[2].addr, "10.0.0.10:82");
    assert_string_equal(chain[3].addr, "10.0.0.10:83");
    run_until_answered(4); /* the evictor */
    assert_string_equal(evictor.addr, "10.0.0.10:80");
    assert_int_equal(atomic_load(&calls), 2);
}

/* The real getaddrinfo, in the pool. */
static void test_localhost_for_real(void **state)
{
    (void)state;
    start(DNS_CACHE_SIZE, DNS_TTL_MS, 10000, NULL);
    waiter a;
    answered = 0;
    lookup(&a, "localhost", 8080);
    run_until_answered(1);
    if (a.failed)
        fail_msg("localhost: %s", a.addr);
    assert_true(strcmp(a.addr, "127.0.0.1:8080") == 0 || strcmp(a.addr, "::1:8080") == 0);
    assert_int_equal(dns_lookups(dns), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_concurrent_lookups_share_one, teardown),
        cmocka_unit_test_teardown(test_ttl_expires, teardown),
        cmocka_unit_test_teardown(test_cache_size, teardown),
        cmocka_unit_test_teardown(test_failure_cached, teardown),
        cmocka_unit_test_teardown(test_timeout, teardown),
        cmocka_unit_test_teardown(test_cancel, teardown),
        cmocka_unit_test_teardown(test_numeric_and_bad, teardown),
        cmocka_unit_test_teardown(test_callbacks_may_meddle, teardown),
        cmocka_unit_test_teardown(test_localhost_for_real, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
