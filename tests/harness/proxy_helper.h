/* proxy_helper.h — a small forward HTTP proxy for tests: a thread of the test's own on
 * 127.0.0.1, which takes requests in absolute form ("GET http://127.0.0.2:P/a
 * HTTP/1.1"), passes each to its server on 127.0.0.0/8 (any other host gets a 502) in
 * origin form with "Connection: close", relays the answer, and closes. One connection
 * at a time, each bounded by 5 s without a byte. It logs a line per request it passed,
 * "GET http://127.0.0.2:P/a" (the method and the absolute target), so that a test sees
 * what went through the proxy.
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
