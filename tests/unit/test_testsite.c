/* test_testsite.c — the test server itself: generated sites, the .site scenarios,
 * statistics, errors in site files, and many concurrent connections. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testsite_helper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

static void start_or_fail(testsite *ts, const char *const args[])
{
    assert_int_equal(testsite_start(ts, args), 0);
    assert_true(strncmp(ts->url, "http://127.0.0.1:", 17) == 0);
    assert_true(testsite_port(ts) > 0);
}

/* A raw request: "GET path HTTP/1.0" with Connection: close. */
static char *get_raw(const testsite *ts, const char *path, size_t *len)
{
    char req[512];
    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nConnection: close\r\n\r\n", path);
    char *r = testsite_request(ts, req, len, 5000);
    assert_non_null(r);
    return r;
}

/* ---- resolving hrefs, crudely, for the reachability test (test code only) ---- */

static void remove_dots(const char *in, char *out, size_t outlen)
{
    char segs[64][64];
    int n = 0;
    const char *p = in + 1; /* after the leading '/' */
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        bool last = !slash;
        if (len == 1 && p[0] == '.') {
            if (last && n < 64)
                segs[n++][0] = '\0';
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            if (n > 0)
                n--;
            if (last && n < 64)
                segs[n++][0] = '\0';
        } else if (n < 64 && len < 64) {
            memcpy(segs[n], p, len);
            segs[n++][len] = '\0';
        }
        if (last)
            break;
        p = slash + 1;
    }
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(out + o, outlen - o, "/%s", segs[i]);
    if (n == 0)
        snprintf(out, outlen, "/");
}

/* Resolve href (absolute, root-relative or relative) against page URL; no fragment. */
static void resolve(const char *page, const char *href, char *out, size_t outlen)
{
    char h[512];
    snprintf(h, sizeof h, "%s", href);
    char *hash = strchr(h, '#');
    if (hash)
        *hash = '\0';
    const char *path_start = strchr(page + 7, '/');
    size_t origin = (size_t)(path_start - page);
    char path[1024];
    if (strncmp(h, "http://", 7) == 0) {
        snprintf(out, outlen, "%s", h);
        return;
    } else if (h[0] == '/') {
        snprintf(path, sizeof path, "%s", h);
    } else {
        const char *dir_end = strrchr(path_start, '/');
        snprintf(path, sizeof path, "%.*s/%s", (int)(dir_end - path_start), path_start, h);
    }
    char clean[1024];
    remove_dots(path, clean, sizeof clean);
    snprintf(out, outlen, "%.*s%s", (int)origin, page, clean);
}

/* Call fn for every href value in html (a, case-insensitive, quoted or not). */
static int scan_hrefs(const char *html, void (*fn)(const char *href, void *ctx), void *ctx)
{
    int count = 0;
    for (const char *p = html; (p = strcasestr(p, "href"));) {
        p += 4;
        while (*p == ' ')
            p++;
        if (*p != '=')
            continue;
        p++;
        while (*p == ' ')
            p++;
        char q = (*p == '"' || *p == '\'') ? *p++ : 0;
        const char *e = p;
        while (*e && (q ? *e != q : (*e != ' ' && *e != '>')))
            e++;
        char href[512];
        snprintf(href, sizeof href, "%.*s", (int)(e - p), p);
        fn(href, ctx);
        count++;
        p = e;
    }
    return count;
}

/* ---- generated sites ---- */

static void test_generated_pages(void **state)
{
    testsite *ts = *state;
    const char *const args[] = {"--generate", "pages=50,links=10,size=3000,seed=7", NULL};
    start_or_fail(ts, args);

    size_t len = 0;
    char *raw = get_raw(ts, "/", &len);
    assert_true(strncmp(raw, "HTTP/1.1 200 ", 13) == 0);
    char v[128];
    assert_int_equal(testsite_header(raw, "Content-Type", v, sizeof v), 0);
    assert_string_equal(v, "text/html; charset=utf-8");
    assert_int_equal(testsite_header(raw, "Content-Length", v, sizeof v), 0);
    const char *body = strstr(raw, "\r\n\r\n") + 4;
    assert_int_equal(strtoul(v, NULL, 10), len - (size_t)(body - raw));
    assert_true(len > 2500 && len < 4000); /* padded to about size=3000 */
    assert_non_null(strstr(body, "Page 0"));
    assert_true(strcasestr(body, "href") != NULL);

    /* the same page twice: the same bytes */
    int status;
    size_t l1, l2;
    char *a = testsite_fetch(ts, "/p/3", &status, &l1);
    assert_int_equal(status, 200);
    char *b = testsite_fetch(ts, "/p/3", &status, &l2);
    assert_int_equal(status, 200);
    assert_int_equal(l1, l2);
    assert_memory_equal(a, b, l1);
    assert_non_null(strstr(a, "Page 3"));
    free(a);
    free(b);

    static const char *const ok[] = {"/p/1", "/p/49", "/p/1?x=1"};
    for (size_t i = 0; i < 3; i++) {
        char *p = testsite_fetch(ts, ok[i], &status, &len);
        assert_int_equal(status, 200);
        free(p);
    }
    static const char *const missing[] = {"/p/50", "/p/0", "/p/01", "/p/x", "/q/1", "/p/"};
    for (size_t i = 0; i < 6; i++) {
        char *p = testsite_fetch(ts, missing[i], &status, &len);
        assert_int_equal(status, 404);
        free(p);
    }
    free(raw);
    testsite_stop(ts);
}

/* csschain=1: / links /css/0.css; /css/K.css is text/css and imports /css/K+1.css, for
 * any K; without csschain, /css/0.css is a 404. */
static void test_generated_css_chain(void **state)
{
    testsite *ts = *state;
    const char *const args[] = {"--generate", "pages=1,links=0,csschain=1", NULL};
    start_or_fail(ts, args);
    int status;
    size_t len;
    char *root = testsite_fetch(ts, "/", &status, &len);
    assert_int_equal(status, 200);
    assert_non_null(strstr(root, "<link rel=\"stylesheet\" href=\"/css/0.css\">"));
    free(root);
    static const char *const css[] = {"/css/0.css", "/css/41.css", "/css/123456789012.css"};
    static const char *const next[] = {"/css/1.css", "/css/42.css", "/css/123456789013.css"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = 0;
        char *raw = get_raw(ts, css[i], &n);
        assert_true(strncmp(raw, "HTTP/1.1 200 ", 13) == 0);
        char v[128];
        assert_int_equal(testsite_header(raw, "Content-Type", v, sizeof v), 0);
        assert_string_equal(v, "text/css; charset=utf-8");
        char want[80];
        snprintf(want, sizeof want, "@import url(\"%s\");", next[i]);
        assert_non_null(strstr(raw, want));
        free(raw);
    }
    static const char *const missing[] = {"/css/01.css", "/css/x.css", "/css/1.cs", "/css/.css"};
    for (size_t i = 0; i < 4; i++) {
        char *p = testsite_fetch(ts, missing[i], &status, &len);
        assert_int_equal(status, 404);
        free(p);
    }
    testsite_stop(ts);
    const char *const plain[] = {"--generate", "pages=1,links=0", NULL};
    start_or_fail(ts, plain);
    char *p = testsite_fetch(ts, "/css/0.css", &status, &len);
    assert_int_equal(status, 404);
    free(p);
    testsite_stop(ts);
}

typedef struct crawl_state {
    char base[128];       /* "http://127.0.0.1:P" */
    const char *page;     /* URL of the page being scanned */
    char queue[200][128]; /* pages found, in the order found */
    int nqueue;
    bool seen[200];
    int forms[5]; /* absolute, root-relative, relative, dot, fragment */
    int upper;    /* pages with <A HREF */
} crawl_state;

static void on_href(const char *href, void *ctx)
{
    crawl_state *cs = ctx;
    cs->forms[0] += strncmp(href, "http://", 7) == 0;
    cs->forms[1] += href[0] == '/';
    cs->forms[2] += href[0] != '/' && strncmp(href, "http://", 7) != 0;
    cs->forms[3] += href[0] == '.';
    cs->forms[4] += strchr(href, '#') != NULL;
    char url[1024];
    resolve(cs->page, href, url, sizeof url);
    size_t bl = strlen(cs->base);
    if (strncmp(url, cs->base, bl) != 0) /* every link stays on the site */
        fail_msg("%s on %s leaves the site", href, cs->page);
    const char *path = url + bl;
    long i = strcmp(path, "/") == 0 ? 0 : strncmp(path, "/p/", 3) == 0 ? atol(path + 3) : -1;
    if (i < 0 || i >= 200)
        fail_msg("%s on %s is not a page of the site", href, cs->page);
    if (!cs->seen[i]) {
        cs->seen[i] = true;
        snprintf(cs->queue[cs->nqueue++], sizeof cs->queue[0], "%.127s", url);
    }
}

/* Start a 200-page generated site and follow its links from "/" (each page once). */
static void crawl_generated(testsite *ts, const char *spec, crawl_state *cs)
{
    const char *const args[] = {"--generate", spec, NULL};
    start_or_fail(ts, args);
    memset(cs, 0, sizeof *cs);
    snprintf(cs->base, sizeof cs->base, "%.*s", (int)strlen(ts->url) - 1, ts->url);
    cs->seen[0] = true;
    snprintf(cs->queue[cs->nqueue++], sizeof cs->queue[0], "%s", ts->url);
    for (int q = 0; q < cs->nqueue; q++) { /* at most 200 pages */
        int status;
        size_t len;
        char *body = testsite_fetch(ts, cs->queue[q] + strlen(cs->base), &status, &len);
        assert_int_equal(status, 200);
        cs->page = cs->queue[q];
        scan_hrefs(body, on_href, cs);
        cs->upper += strstr(body, "<A HREF") != NULL;
        free(body);
    }
    testsite_stop(ts);
}

static void test_generated_site_reachable(void **state)
{
    testsite *ts = *state;
    crawl_state cs;
    crawl_generated(ts, "pages=200,links=6,size=500", &cs);
    assert_int_equal(cs.nqueue, 200);
    for (int f = 0; f < 5; f++) /* every form of href shows up somewhere */
        if (cs.forms[f] == 0)
            fail_msg("no href of form %d", f);
    assert_true(cs.upper > 0);
    /* links=0 still gives the tree links: everything stays reachable */
    crawl_generated(ts, "pages=200,links=0,size=0,seed=3", &cs);
    assert_int_equal(cs.nqueue, 200);
}

static void test_generate_20000_pages(void **state)
{
    testsite *ts = *state;
    const char *const args[] = {"--generate", "pages=20000", NULL};
    start_or_fail(ts, args);
    int status;
    size_t len;
    char *body = testsite_fetch(ts, "/p/19999", &status, &len);
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, "Page 19999"));
    assert_true(len > 1500 && len < 3000); /* size=2000 by default */
    free(body);
    body = testsite_fetch(ts, "/p/20000", &status, &len);
    assert_int_equal(status, 404);
    free(body);
    testsite_stop(ts);
}

static void test_selector_backends(void **state)
{
    testsite *ts = *state;
    static const char *const names[] = {"epoll", "poll", "select"};
    for (size_t i = 0; i < 3; i++) {
        const char *const args[] = {"--selector", names[i], "--generate", "pages=5", NULL};
        start_or_fail(ts, args);
        int status;
        size_t len;
        char *body = testsite_fetch(ts, "/p/4", &status, &len);
        assert_int_equal(status, 200);
        free(body);
        testsite_stop(ts);
    }
}

/* ---- the scenario file ---- */

static void start_basic(testsite *ts, const char *extra)
{
    const char *const args[] = {SITES_DIR "/basic.site", extra, NULL};
    start_or_fail(ts, args);
}

static void expect_head(const testsite *ts, const char *path, int status, const char *name,
                        const char *value)
{
    size_t len;
    char *r = get_raw(ts, path, &len);
    char want[32];
    snprintf(want, sizeof want, "HTTP/1.1 %d ", status);
    if (strncmp(r, want, strlen(want)) != 0)
        fail_msg("%s: expected %s, got %.40s", path, want, r);
    char v[256];
    if (value) {
        assert_int_equal(testsite_header(r, name, v, sizeof v), 0);
        assert_string_equal(v, value);
    } else if (name) {
        assert_int_equal(testsite_header(r, name, v, sizeof v), -1);
    }
    free(r);
}

static void test_scenario_statuses(void **state)
{
    testsite *ts = *state;
    start_basic(ts, NULL);
    char loc[256];
    snprintf(loc, sizeof loc, "%sb.html", ts->url);

    expect_head(ts, "/", 200, "Content-Type", "text/html; charset=utf-8");
    expect_head(ts, "/missing", 404, NULL, NULL);
    expect_head(ts, "/gone", 410, NULL, NULL);
    expect_head(ts, "/error", 500, NULL, NULL);
    expect_head(ts, "/no/such/page", 404, "Content-Type", "text/html; charset=utf-8");
    expect_head(ts, "/r/moved", 301, "Location", "/a.html");
    expect_head(ts, "/r/abs", 302, "Location", loc); /* {base} expanded */
    expect_head(ts, "/r/rel", 307, "Location", "../c.html");
    expect_head(ts, "/r/none", 302, "Location", NULL);
    expect_head(ts, "/r/loop", 302, "Location", "/r/loop");
    expect_head(ts, "/notype", 200, "Content-Type", NULL);
    expect_head(ts, "/text", 200, "Content-Type", "text/plain");
    expect_head(ts, "/c.html", 200, "Content-Type", "text/html; charset=iso-8859-1");
    expect_head(ts, "/odd", 200, "X-Site", "basic");
    expect_head(ts, "/odd", 200, "X-Repeat", "azzzzzb"); /* {5*z} */

    int status;
    size_t len;
    char *body = testsite_fetch(ts, "/", &status, &len);
    assert_non_null(strstr(body, "href=\"/a.html\""));
    assert_non_null(strstr(body, "href=\"b.html#intro\""));
    assert_non_null(strstr(body, "href=\"http://elsewhere.example/\""));
    char abs[256];
    snprintf(abs, sizeof abs, "href=\"%sc.html\"", ts->url);
    assert_non_null(strstr(body, abs));
    free(body);

    body = testsite_fetch(ts, "/data.bin", &status, &len); /* body=@file, bytes as is */
    assert_int_equal(status, 200);
    assert_int_equal(len, 1024);
    for (size_t i = 0; i < len; i++)
        assert_int_equal((unsigned char)body[i], i % 256);
    free(body);

    body = testsite_fetch(ts, "/odd", &status, &len); /* inline block */
    assert_non_null(strstr(body, "<A HREF=x.html>x</A>"));
    assert_true(strncmp(body, "  <HTML>", 8) == 0); /* block indentation removed */
    free(body);

    body = testsite_fetch(ts, "/many", &status, &len);
    assert_non_null(strstr(body, "href=\"/l/1000\""));
    assert_null(strstr(body, "href=\"/l/1001\""));
    free(body);
    body = testsite_fetch(ts, "/deep", &status, &len);
    assert_int_equal(status, 200);
    size_t divs = 0;
    for (const char *p = body; (p = strstr(p, "<div>")); p++)
        divs++;
    assert_int_equal(divs, 1000);
    free(body);
    body = testsite_fetch(ts, "/big", &status, &len);
    assert_int_equal(len, 1000000);
    free(body);
    testsite_stop(ts);
}

static void test_scenario_drop(void **state)
{
    testsite *ts = *state;
    start_basic(ts, NULL);
    for (int i = 0; i < 2; i++) { /* the first two: closed without a byte */
        size_t len = 99;
        char *r = get_raw(ts, "/flaky", &len);
        assert_int_equal(len, 0);
        free(r);
    }
    int status;
    size_t len;
    char *body = testsite_fetch(ts, "/flaky", &status, &len);
    assert_int_equal(status, 200);
    free(body);
    struct testsite_stats st;
    assert_int_equal(testsite_stats(ts, &st), 0);
    assert_int_equal(st.dropped, 2);
    assert_int_equal(st.served, 1);
    testsite_stop(ts);
}

static void test_scenario_delay_and_drip(void **state)
{
    testsite *ts = *state;
    start_basic(ts, NULL);
    int status;
    size_t len;
    long long t0 = now_ms();
    char *body = testsite_fetch(ts, "/slow", &status, &len); /* delay=200 */
    assert_true(now_ms() - t0 >= 190);
    assert_int_equal(status, 200);
    free(body);

    t0 = now_ms();
    body = testsite_fetch(ts, "/drip", &status, &len); /* 1000 bytes, 100 every 10 ms */
    assert_true(now_ms() - t0 >= 85);
    assert_int_equal(status, 200);
    assert_int_equal(len, 1000);
    free(body);

    /* --delay applies to pages without their own delay= */
    testsite_stop(ts);
    const char *const args[] = {"--delay", "300", SITES_DIR "/basic.site", NULL};
    start_or_fail(ts, args);
    t0 = now_ms();
    body = testsite_fetch(ts, "/a.html", &status, &len);
    assert_true(now_ms() - t0 >= 290);
    assert_int_equal(status, 200);
    free(body);
    testsite_stop(ts);
}

/* --log FILE: a line per request as it ends — begin and end (monotonic ms), the Host
 * header, the path, how it ended — so a test sees at the server what a crawler did. */
static void test_request_log(void **state)
{
    testsite *ts = *state;
    char path[] = "/tmp/test_testsite_log.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *const args[] = {"--log", path, SITES_DIR "/basic.site", NULL};
    start_or_fail(ts, args);
    size_t len;
    free(get_raw(ts, "/a.html", &len)); /* no Host header */
    char req[512];
    snprintf(req, sizeof req, "GET /slow HTTP/1.0\r\nHost: site.test:%d\r\n\r\n",
             testsite_port(ts));
    free(testsite_request(ts, req, &len, 5000)); /* delay=200 */
    testsite_stop(ts);

    FILE *f = fopen(path, "r");
    assert_non_null(f);
    double b[2], e[2];
    char host[2][128], target[2][128], how[2][16];
    for (int i = 0; i < 2; i++)
        assert_int_equal(
            fscanf(f, "%lf %lf %127s %127s %15s", &b[i], &e[i], host[i], target[i], how[i]), 5);
    char extra[8];
    assert_int_equal(fscanf(f, "%7s", extra), EOF); /* two requests, two lines */
    fclose(f);
    unlink(path);
    assert_string_equal(host[0], "-");
    assert_string_equal(target[0], "/a.html");
    assert_string_equal(how[0], "served");
    char want[64];
    snprintf(want, sizeof want, "site.test:%d", testsite_port(ts));
    assert_string_equal(host[1], want);
    assert_string_equal(target[1], "/slow");
    assert_true(e[0] >= b[0] && b[1] >= b[0]);
    assert_true(e[1] - b[1] >= 190); /* the page's 200 ms */
}

/* --log-header NAME: the request's NAME fields after the rest of the line — "-" for
 * none, else "=" and the values (several fields joined with ", ", spaces around each
 * trimmed), percent-encoded so that the line still splits at its spaces. */
static void test_request_log_headers(void **state)
{
    testsite *ts = *state;
    char path[] = "/tmp/test_testsite_log.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *const args[] = {
        "--log",        path,  "--log-header",          "X-A", "--log-header", "x-b",
        "--log-header", "X-C", SITES_DIR "/basic.site", NULL};
    start_or_fail(ts, args);
    size_t len;
    free(testsite_request(ts,
                          "GET /a.html HTTP/1.0\r\nx-a:  one two \r\nX-B:\r\n"
                          "X-A:100%\r\nX-Ab: no\r\n\r\n",
                          &len, 5000));
    testsite_stop(ts);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    assert_non_null(fgets(line, sizeof line, f));
    assert_null(fgets(line + strlen(line), (int)(sizeof line - strlen(line)), f));
    fclose(f);
    unlink(path);
    assert_non_null(strstr(line, " /a.html served =one%20two,%20100%25 = -\n"));
}

static void test_scenario_raw_and_reset(void **state)
{
    testsite *ts = *state;
    start_basic(ts, NULL);
    /* raw=@file: exactly the file's bytes, NULs included, then the server closes */
    FILE *f = fopen(SITES_DIR "/files/garbage.http", "rb");
    assert_non_null(f);
    char want[4096];
    size_t wlen = fread(want, 1, sizeof want, f);
    fclose(f);
    size_t len;
    char *r = get_raw(ts, "/raw", &len);
    assert_int_equal(len, wlen);
    assert_memory_equal(r, want, wlen);
    free(r);

    /* raw block: lines end in CRLF; the body is shorter than its Content-Length */
    r = get_raw(ts, "/short", &len);
    assert_true(strncmp(r, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n", 42) == 0);
    assert_true(len < 200);
    free(r);

    /* reset=1000: 1000 bytes of the response, then RST */
    r = get_raw(ts, "/reset", &len);
    assert_true(strncmp(r, "HTTP/1.1 200 OK", 15) == 0);
    assert_true(len > 0 && len <= 1000);
    free(r);
    struct testsite_stats st;
    assert_int_equal(testsite_stats(ts, &st), 0);
    assert_int_equal(st.dropped, 1);
    testsite_stop(ts);
}

static void test_keep_alive(void **state)
{
    testsite *ts = *state;
    start_basic(ts, NULL);
    size_t len;
    /* HTTP/1.1: two pipelined requests on one connection, the third closes it */
    char *r = testsite_request(ts,
                               "GET /a.html HTTP/1.1\r\nHost: x\r\n\r\n"
                               "GET /b.html HTTP/1.1\r\nHost: x\r\n\r\n"
                               "GET /c.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                               &len, 5000);
    assert_non_null(r);
    int n = 0;
    for (const char *p = r; (p = strstr(p, "HTTP/1.1 200 OK")); p++)
        n++;
    assert_int_equal(n, 3);
    assert_non_null(strstr(r, "<h1>/c.html</h1>"));
    free(r);
    /* HTTP/1.0 closes after one response unless asked to keep alive */
    r = testsite_request(ts, "GET /a.html HTTP/1.0\r\n\r\nGET /b.html HTTP/1.0\r\n\r\n", &len,
                         5000);
    assert_non_null(strstr(r, "/a.html"));
    assert_null(strstr(r, "<h1>/b.html</h1>"));
    free(r);
    r = testsite_request(ts,
                         "GET /a.html HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                         "GET /b.html HTTP/1.0\r\n\r\n",
                         &len, 5000);
    assert_non_null(strstr(r, "Connection: keep-alive"));
    assert_non_null(strstr(r, "<h1>/b.html</h1>"));
    free(r);
    /* protocol errors are answered, not crashed on */
    r = testsite_request(ts, "NONSENSE\r\n\r\n", &len, 5000);
    assert_true(strncmp(r, "HTTP/1.1 400 ", 13) == 0);
    free(r);
    testsite_stop(ts);
}

/* ---- statistics ---- */

static bool wait_stats(const testsite *ts, struct testsite_stats *st, long *field, long want,
                       int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    do {
        if (testsite_stats(ts, st) == 0 && *field >= want)
            return true;
        nap_ms(20);
    } while (now_ms() < deadline);
    return false;
}

static void test_stats_counts(void **state)
{
    testsite *ts = *state;
    const char *const args[] = {"--delay", "1000", "--generate", "pages=10", NULL};
    start_or_fail(ts, args);
    int fds[5];
    for (int i = 0; i < 5; i++) {
        fds[i] = testsite_connect(ts);
        assert_true(fds[i] >= 0);
        const char req[] = "GET /p/1 HTTP/1.0\r\n\r\n";
        assert_int_equal(send(fds[i], req, sizeof req - 1, MSG_NOSIGNAL), sizeof req - 1);
    }
    struct testsite_stats st;
    assert_true(wait_stats(ts, &st, &st.in_progress, 5, 10000));
    assert_int_equal(st.in_progress, 5); /* the stats request is not counted */
    assert_int_equal(st.peak_in_progress, 5);
    assert_int_equal(st.served, 0);
    assert_true(st.connections >= 5);
    for (int i = 0; i < 5; i++) { /* every response arrives, then EOF */
        char buf[8192];
        size_t got = 0;
        struct pollfd p = {.fd = fds[i], .events = POLLIN};
        for (int k = 0; k < 100; k++) {
            if (poll(&p, 1, 5000) <= 0)
                break;
            ssize_t n = recv(fds[i], buf + got, sizeof buf - got - 1, 0);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        buf[got] = '\0';
        assert_true(strncmp(buf, "HTTP/1.1 200 OK", 15) == 0);
        close(fds[i]);
    }
    assert_true(wait_stats(ts, &st, &st.served, 5, 10000));
    assert_int_equal(st.served, 5);
    assert_int_equal(st.in_progress, 0);
    assert_int_equal(st.peak_in_progress, 5);
    assert_int_equal(st.dropped, 0);
    assert_true(st.peak_connections >= 5);
    testsite_stop(ts);
}

/* /__stats counts requests for /robots.txt (answered or not, any query) and shows the
 * last request's User-Agent, escaped. */
static void test_stats_robots_and_user_agent(void **state)
{
    testsite *ts = *state;
    const char *const args[] = {"--generate", "pages=3", NULL};
    start_or_fail(ts, args);
    struct testsite_stats st;
    assert_int_equal(testsite_stats(ts, &st), 0);
    assert_int_equal(st.robots_txt, 0);
    assert_string_equal(st.user_agent, "");

    static const char *const reqs[] = {
        "GET /robots.txt HTTP/1.0\r\nUser-Agent: a/1\r\n\r\n",
        "GET /robots.txt?x=1 HTTP/1.0\r\nUser-Agent: b\r\n\r\n",
        "GET /robots.txt.bak HTTP/1.0\r\n\r\n",
        "GET /p/1 HTTP/1.0\r\nuser-agent:  say \"hi\" \\o/  \r\n\r\n",
    };
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        size_t len;
        char *r = testsite_request(ts, reqs[i], &len, 5000);
        assert_non_null(r);
        assert_true(strncmp(r, i < 3 ? "HTTP/1.1 404" : "HTTP/1.1 200", 12) == 0);
        free(r);
        assert_int_equal(testsite_stats(ts, &st), 0);
        assert_int_equal(st.robots_txt, i == 0 ? 1 : 2);
        assert_string_equal(st.user_agent,
                            i == 0       ? "a/1"
                                : i == 1 ? "b"
                                : i == 2 ? ""
                                         : "say \"hi\" \\o/");
    }
    assert_int_equal(st.served, 4);
    testsite_stop(ts);
}

static void test_concurrent_2000(void **state)
{
    testsite *ts = *state;
    enum { N = 2000 };
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < N + 200) {
        print_message("RLIMIT_NOFILE hard limit %lu is too low: skipped\n",
                      (unsigned long)rl.rlim_max);
        skip();
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < N + 200) {
        rl.rlim_cur = rl.rlim_max;
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    }
    /* The delay only has to outlast the time it takes to send 2000 requests and for
     * the server to read them: 3 s is generous even under valgrind. */
    const char *const args[] = {"--delay", "3000", "--generate", "pages=10", NULL};
    start_or_fail(ts, args);
    int *fds = malloc(N * sizeof *fds);
    assert_non_null(fds);
    for (int i = 0; i < N; i++) {
        fds[i] = testsite_connect(ts);
        assert_true(fds[i] >= 0);
    }
    for (int i = 0; i < N; i++) {
        const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_int_equal(send(fds[i], req, sizeof req - 1, MSG_NOSIGNAL), sizeof req - 1);
    }
    struct testsite_stats st;
    bool reached = wait_stats(ts, &st, &st.peak_in_progress, N, 20000);
    assert_true(reached);
    assert_int_equal(st.peak_in_progress, N);
    assert_true(st.peak_connections >= N);
    for (int i = 0; i < N; i++)
        close(fds[i]);
    free(fds);
    /* the closed connections are noticed when their responses are due */
    assert_true(wait_stats(ts, &st, &st.peak_in_progress, N, 1000));
    long long deadline = now_ms() + 20000;
    while (testsite_stats(ts, &st) == 0 && (st.in_progress > 0 || st.connections > 1)
           && now_ms() < deadline)
        nap_ms(50);
    assert_int_equal(st.in_progress, 0);
    testsite_stop(ts);
}

static void test_sigterm_exits_cleanly(void **state)
{
    testsite *ts = *state;
    start_basic(ts, NULL);
    int fd = testsite_connect(ts); /* an open connection does not hold it up */
    assert_true(fd >= 0);
    int status = testsite_stop_status(ts);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    close(fd);
    assert_int_equal(testsite_stop_status(ts), -1); /* idempotent */
    testsite_stop(ts);
}

/* ---- bad input: exit status 2 and one line on stderr ---- */

/* Run testsite with args; its stderr goes to err. Returns the exit status, or -1. */
static int run_capture(const char *const args[], char *err, size_t errlen)
{
    const char *argv[16] = {TESTSITE_BIN};
    for (int i = 0; args[i] && i < 14; i++)
        argv[i + 1] = args[i];
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(fds[1], 2);
        execv(TESTSITE_BIN, (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    long long deadline = now_ms() + 5000;
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    while (n + 1 < errlen && now_ms() < deadline && poll(&p, 1, 1000) >= 0) {
        if (!p.revents)
            continue;
        ssize_t r = read(fds[0], err + n, errlen - n - 1);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    err[n] = '\0';
    close(fds[0]);
    int status = 0;
    pid_t w;
    while ((w = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < deadline)
        nap_ms(10);
    if (w == 0) { /* still running: a failure, and never leave it behind */
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_bad_site_files(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int line;
        const char *words;
    } cases[] = {
        {"page /\n  colour=red\n", 2, "unknown key"},
        {"# c\npage /a status=2000\n", 2, "status"},
        {"page /a\npage /b\npage /a\n", 3, "already defined"},
        {"page nope\n", 1, "must start with '/'"},
        {"link /a\n", 1, "outside a page"},
        {"page /a\n  body <<END\n  text\n", 2, "END"},
        {"page /a body=@no/such/file.html\n", 1, "cannot read"},
        {"page /a drip=10\n", 1, "drip"},
        {"page /a raw=@x body=y\n", 1, "cannot read"},
        {"page /a\n  link /x\n  bytes=10\n", 3, "does not go with"},
        {"page /a type=\"text/html\n", 1, "quote"},
        {"page /a delay=-5\n", 1, "delay"},
    };
    char dir[] = "/tmp/testsite-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], err[2048];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(path, sizeof path, "%s/bad%zu.site", dir, i);
        write_file(path, cases[i].text);
        const char *const args[] = {path, NULL};
        int rc = run_capture(args, err, sizeof err);
        char where[300];
        snprintf(where, sizeof where, "%s:%d: ", path, cases[i].line);
        if (rc != 2 || !strstr(err, where) || !strstr(err, cases[i].words))
            fail_msg("case %zu: exit %d, stderr: %s", i, rc, err);
        assert_non_null(strchr(err, '\n'));
        assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1); /* one line */
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/empty.site", dir);
    write_file(path, "# nothing here\n");
    const char *const empty[] = {path, NULL};
    assert_int_equal(run_capture(empty, err, sizeof err), 2);
    assert_non_null(strstr(err, "no pages"));
    unlink(path);
    rmdir(dir);

    const char *const missing[] = {"/nonexistent/x.site", NULL};
    assert_int_equal(run_capture(missing, err, sizeof err), 2);
    assert_non_null(strstr(err, "/nonexistent/x.site"));
}

static void test_bad_arguments(void **state)
{
    (void)state;
    char err[1024];
    const char *const none[] = {NULL};
    const char *const port[] = {"--port", "http", "--generate", "pages=5", NULL};
    const char *const gen[] = {"--generate", "pages=0", NULL};
    const char *const key[] = {"--generate", "colour=5", NULL};
    const char *const opt[] = {"--frobnicate", NULL};
    const char *const sel[] = {"--selector", "kqueue", "--generate", "pages=5", NULL};
    const char *const bind[] = {"--bind", "not-an-address", "--generate", "pages=5", NULL};
    const char *const loghdr[] = {"--log-header", "X-A", "--generate", "pages=5", NULL};
    const char *const *all[] = {none, port, gen, key, opt, sel, bind, loghdr};
    const char *const words[] = {"SITEFILE",     "--port", "pages=0",        "colour",
                                 "--frobnicate", "kqueue", "not-an-address", "give --log"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        int rc = run_capture(all[i], err, sizeof err);
        if (rc != 2 || !strstr(err, words[i]))
            fail_msg("case %zu: exit %d, stderr: %s", i, rc, err);
    }
}

/* Every test gets a testsite slot; the teardown stops whatever runs in it, so a
 * failed assertion never leaves a server behind. */
static int setup_ts(void **state)
{
    testsite *ts = calloc(1, sizeof *ts);
    if (!ts)
        return -1;
    ts->out_fd = -1;
    *state = ts;
    return 0;
}

static int teardown_ts(void **state)
{
    testsite_stop(*state);
    free(*state);
    return 0;
}

#define TS_TEST(f) cmocka_unit_test_setup_teardown(f, setup_ts, teardown_ts)

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        TS_TEST(test_generated_pages),
        TS_TEST(test_generated_css_chain),
        TS_TEST(test_generated_site_reachable),
        TS_TEST(test_generate_20000_pages),
        TS_TEST(test_selector_backends),
        TS_TEST(test_scenario_statuses),
        TS_TEST(test_scenario_drop),
        TS_TEST(test_scenario_delay_and_drip),
        TS_TEST(test_request_log),
        TS_TEST(test_request_log_headers),
        TS_TEST(test_scenario_raw_and_reset),
        TS_TEST(test_keep_alive),
        TS_TEST(test_stats_counts),
        TS_TEST(test_stats_robots_and_user_agent),
        TS_TEST(test_concurrent_2000),
        TS_TEST(test_sigterm_exits_cleanly),
        TS_TEST(test_bad_site_files),
        TS_TEST(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
