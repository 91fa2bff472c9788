/* fuzz_url.c — libFuzzer target for the URL functions (common/web/url.h), and the GET
 * request builder on what they give (common/web/http.h).
 *
 * Input: "BASE\0HREF"; without a NUL the whole input is the href, against a fixed
 * base. url_fix on both, url_resolve(base, href), url_split on every output, and the
 * host policy (strict and lenient, on a couple of roots) on every output.
 *
 * Invariants (url.h: "feeding an output back in gives the same string"):
 *   - an output of url_resolve, resolved against itself, is itself, and so is an
 *     empty href or a lone "#frag" against it (an output of another scheme than
 *     http(s) may also not resolve at all, see check_output);
 *   - an http(s) output: url_fix gives it back, url_split accepts it (scheme http or
 *     https, a non-empty host, a port 0..65535, a path starting with '/');
 *   - the policy allows nothing that url_split refuses;
 *   - a url_fix output, added as a root, is allowed (strict and lenient);
 *   - url_resolve and url_resolve_libcurl (no fast path) give the same answer.
 */
#include "fuzz_common.h"

#include "http.h"
#include "url.h"

#include <curl/curl.h>
#include <stdbool.h>

#define DEFAULT_BASE "http://example.com/dir/page.html?x=1"

static url_policy *policies[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    static const char *const roots[] = {"http://example.com/", "https://www.example.org:8443/",
                                        "http://127.0.0.1:8080/", "http://[::1]/",
                                        "http://a.b.co.uk/"};
    char err[256];
    for (int i = 0; i < 2; i++) {
        policies[i] = url_policy_new(i == 0, "\\.(pdf|zip)$", err, sizeof err);
        FUZZ_CHECK(policies[i] != NULL);
        for (size_t r = 0; r < sizeof roots / sizeof roots[0]; r++)
            FUZZ_CHECK(url_policy_add_root(policies[i], roots[r]) == 0);
    }
    return 0;
}

static bool is_http_url(const char *u)
{
    return !strncmp(u, "http://", 7) || !strncmp(u, "https://", 8);
}

/* Everything that must hold for one normalized output. */
static void check_output(const char *out)
{
    /* Another scheme's output may fail to parse again: libcurl 7.88 resolves the href
     * "file:abc0:" to "file://abc0:", which it then refuses (regressions/url/
     * file-scheme-unparsable). Harmless: the policy only lets http(s) through. */
    bool http = is_http_url(out);
    char *again = url_resolve(out, out);
    FUZZ_CHECK(again ? strcmp(again, out) == 0 : !http);
    free(again);
    again = url_resolve(out, "");
    FUZZ_CHECK(again ? strcmp(again, out) == 0 : !http);
    free(again);
    again = url_resolve(out, "#frag");
    FUZZ_CHECK(again ? strcmp(again, out) == 0 : !http);
    free(again);

    char *scheme = NULL, *host = NULL, *pq = NULL;
    int port = -1;
    int rc = url_split(out, &scheme, &host, &port, &pq);
    if (rc == 0) {
        FUZZ_CHECK(scheme && host && pq);
        FUZZ_CHECK(!strcmp(scheme, "http") || !strcmp(scheme, "https"));
        /* Port 0 passes ("http://h:0/", as libcurl and Python take it): both
         * transports then fail with "connection refused". */
        FUZZ_CHECK(host[0] && port >= 0 && port <= 65535 && pq[0] == '/');
    } else {
        FUZZ_CHECK(!scheme && !host && !pq && port == 0);
    }
    if (is_http_url(out)) {
        char err[512];
        char *fixed = url_fix(out, err, sizeof err);
        FUZZ_CHECK(fixed && strcmp(fixed, out) == 0);
        free(fixed);
    }
    for (int i = 0; i < 2; i++)
        if (url_policy_allowed(policies[i], out))
            FUZZ_CHECK(rc == 0);
    size_t len = 0;
    char *req = http_build_get(out, NULL, NULL, &len);
    if (req) {
        FUZZ_CHECK(rc == 0 && !strcmp(scheme, "http") && strlen(req) == len);
        free(req);
    }
    free(scheme);
    free(host);
    free(pq);
}

static void fix(const char *root)
{
    char err[512];
    err[0] = 'x';
    char *out = url_fix(root, err, sizeof err);
    if (out) {
        FUZZ_CHECK(err[0] == '\0' && is_http_url(out));
        check_output(out);
        /* A root is allowed by a policy made with it, strict or lenient. */
        for (int strict = 0; strict <= 1; strict++) {
            url_policy *p = url_policy_new(strict, NULL, err, sizeof err);
            FUZZ_CHECK(p != NULL);
            FUZZ_CHECK(url_policy_add_root(p, out) == 0);
            FUZZ_CHECK(url_policy_allowed(p, out));
            url_policy_free(p);
        }
        free(out);
    } else {
        FUZZ_CHECK(err[0] != '\0');
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    FUZZ_CHECK(buf != NULL);
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *base = DEFAULT_BASE, *href = buf;
    bool has_base = strlen(buf) < size;
    if (has_base) { /* a NUL: base before it, href after */
        base = buf;
        href = buf + strlen(buf) + 1;
    }

    fix(href);
    if (has_base)
        fix(base);

    char *out = url_resolve(base, href);
    /* the fast path for plain relative paths answers as libcurl does */
    char *slow = url_resolve_libcurl(base, href);
    FUZZ_CHECK(!out == !slow && (!out || strcmp(out, slow) == 0));
    free(slow);
    if (out) {
        FUZZ_CHECK(!strchr(out, '#'));
        check_output(out);
        free(out);
    }
    for (int i = 0; i < 2; i++)
        url_policy_allowed(policies[i], href);
    free(buf);
    return 0;
}
