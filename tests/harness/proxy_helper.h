/* proxy_helper.h — a small forward proxy for tests: a thread of the test's own on
 * 127.0.0.1, which speaks two protocols on one port.
 *
 * HTTP: requests in absolute form ("GET http://127.0.0.2:P/a HTTP/1.1"), each passed to
 * its server in origin form with "Connection: close", the answer relayed, then closed.
 * It logs "GET http://127.0.0.2:P/a" (the method and the absolute target).
 * SOCKS5 (RFC 1928, no authentication, CONNECT): a connection starting with byte 5;
 * the bytes relayed both ways until either side closes. It logs "SOCKS5 HOST:PORT", the
 * host as the client gave it: a name (socks5h: the proxy resolves it) or an address.
 *
 * Hosts: addresses on 127.0.0.0/8, and the names "hostK.test", which the proxy alone
 * resolves, to 127.0.0.K (no DNS: a client that resolved them itself would fail); any
 * other host gets a 502 or a SOCKS refusal. A thread per connection, each bounded by
 * 5 s without a byte. The log lets a test see what went through the proxy.
 *
 *   test_proxy p;
 *   assert_int_equal(test_proxy_start(&p), 0);      // p.url: "http://127.0.0.1:P"
 *   ... crawl-queue --proxy p.url ...
 *   size_t n = test_proxy_count(&p, "http://127.0.0.2");  // requests proxied there
 *   test_proxy_stop(&p);
 */
#ifndef CRAWL_PROXY_HELPER_H
#define CRAWL_PROXY_HELPER_H

#include <pthread.h>
#include <stddef.h>

enum { TEST_PROXY_MAX_LOG = 1024 };

typedef struct test_proxy {
    int listen_fd;
    char url[64]; /* "http://127.0.0.1:PORT" */
    pthread_t thread;
    pthread_mutex_t lock;
    volatile int stop;
    int threads;                   /* connections being served (under lock) */
    char *log[TEST_PROXY_MAX_LOG]; /* "GET http://...", in order */
    size_t nlog;
} test_proxy;

/* Listen on 127.0.0.1 (a free port) and start the thread. 0, or -1. */
int test_proxy_start(test_proxy *p);
/* Stop the thread (within about 5 s), close, free the log. */
void test_proxy_stop(test_proxy *p);
/* The requests proxied whose target starts with prefix (NULL: all). */
size_t test_proxy_count(test_proxy *p, const char *prefix);

#endif
