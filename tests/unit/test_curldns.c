/* test_curldns.c — the libcurl transport's one DNS cache (curlglue.c's CURLSH), seen by
 * counting name lookups, with no hosts file and no DNS server:
 *
 * This test defines getaddrinfo itself. libcurl, a shared library, calls getaddrinfo
 * through the dynamic linker, which finds the executable's definition first (symbol
 * interposition). Ours counts the calls for names under crawlstages.test and answers
 * them with 127.0.0.1 (the real getaddrinfo on the numeric address, so libcurl frees
 * the result as usual); any other name goes to the real one. libcurl's threaded
 * resolver calls it from its own thread, so the counter is atomic.
 *
 * The fetches go to a testsite on 127.0.0.1 by the name site.crawlstages.test:
 * one lookup for the first transfer, none for ten more, and none for a second glue
 * (its own multi handle: without the shared cache it would look the name up again).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <dlfcn.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "curlglue.h"
#include "selector.h"

#include "loopguard.h"
#include "testsite_helper.h"

#define TEST_DOMAIN ".crawlstages.test"

static atomic_int lookups;

typedef int (*getaddrinfo_fn)(const char *, const char *, const struct addrinfo *,
                              struct addrinfo **);

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    static getaddrinfo_fn real;
    if (!real)
        real = (getaddrinfo_fn)dlsym(RTLD_NEXT, "getaddrinfo");
    size_t n = node ? strlen(node) : 0, d = strlen(TEST_DOMAIN);
    if (n > d && strcmp(node + n - d, TEST_DOMAIN) == 0) {
        atomic_fetch_add(&lookups, 1);
        struct addrinfo h = hints ? *hints : (struct addrinfo){0};
        h.ai_flags |= AI_NUMERICHOST;
        h.ai_family = AF_INET;
        return real("127.0.0.1", service, &h, res);
    }
    return real(node, service, hints, res);
}

/* ---- fetching ---- */

static selector *loop;
static testsite site;
static int done_count, ok_count;
static char last_error[256];

static int want_count; /* stop the loop when this many are done */

static void fetched(void *ctx, const char *error)
{
    (void)ctx;
    done_count++;
    if (!error)
        ok_count++;
    else
        snprintf(last_error, sizeof last_error, "%s", error);
    if (done_count == want_count)
        selector_stop(loop);
}

static void fetch_all(curl_glue *g, int n)
{
    int port = testsite_port(&site);
    want_count = done_count + n;
    for (int i = 0; i < n; i++) {
        char url[128];
        snprintf(url, sizeof url, "http://site" TEST_DOMAIN ":%d/p/%d", port, i);
        assert_non_null(curl_glue_get(g, url, NULL, 10000, 0, NULL, fetched, NULL));
    }
    selector_run(loop);
    if (guarded_loop_hit())
        fail_msg("%d of %d fetches done, %zu in flight", done_count, want_count,
                 curl_glue_in_flight(g));
    if (ok_count != done_count)
        fail_msg("a fetch failed: %s", last_error);
}

static curl_glue *glue_a, *glue_b;

static int teardown(void **state)
{
    (void)state;
    curl_glue_free(glue_a);
    curl_glue_free(glue_b);
    glue_a = glue_b = NULL;
    guarded_loop_free(loop);
    loop = NULL;
    testsite_stop(&site); /* also when the test failed half-way */
    return 0;
}

static void test_one_dns_cache_for_every_glue(void **state)
{
    (void)state;
    const char *const args[] = {"--generate", "pages=20,links=2", NULL};
    assert_int_equal(testsite_start(&site, args), 0);
    loop = guarded_loop_new(30000);
    char err[256] = "";
    glue_a = curl_glue_new(loop, 8, NULL, err, sizeof err);
    glue_b = curl_glue_new(loop, 8, NULL, err, sizeof err);
    assert_non_null(glue_a);
    assert_non_null(glue_b);

    fetch_all(glue_a, 1);
    assert_int_equal(atomic_load(&lookups), 1); /* the name was looked up, by us */
    fetch_all(glue_a, 10);                      /* the same multi handle */
    assert_int_equal(atomic_load(&lookups), 1);
    fetch_all(glue_b, 5); /* another glue, another multi */
    assert_int_equal(atomic_load(&lookups), 1);
}

/* What -v says agrees with what libcurl was built with. */
static void test_resolver_kind(void **state)
{
    (void)state;
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    const char *kind = curl_glue_resolver();
    if (!(v->features & CURL_VERSION_ASYNCHDNS))
        assert_true(strncmp(kind, "synchronous", 11) == 0);
    else if (v->ares)
        assert_true(strncmp(kind, "c-ares", 6) == 0);
    else
        assert_true(strncmp(kind, "threaded", 8) == 0);
    print_message("    libcurl %s: resolver %s\n", v->version, kind);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_one_dns_cache_for_every_glue, teardown),
        cmocka_unit_test(test_resolver_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
