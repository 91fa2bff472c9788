/* test_spider.c — the Spider and the spider-middleware manager of stage 3's engine
 * (engine/spider.h), in process against testsite, on both transports: the order of the
 * methods (process_spider_input in order; process_spider_exception and
 * process_spider_output in reverse; process_start_requests in reverse, over the start
 * requests), a callback that fails at once or in its coroutine, a middleware that
 * recovers, a callback that waits on a Future, the spider's items through the pipeline
 * with the records, and the registry's assembly of spider rows (a row whose maker
 * fails — the scope middleware given a pattern that does not compile — fails it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "alloc.h"
#include "crawler.h"
#include "engine.h"
#include "registry.h"
#include "scope.h"
#include "scratch.h"
#include "settings.h"
#include "sockio.h"
#include "testsite_helper.h"

static testsite site;

/* Each page of the crawl is one case, named by its path. */
static const char site_text[] = "page /\n  link /ignored-by-the-spider\n"
                                "page /ok\npage /boom\npage /fail\npage /bad-input\n"
                                "page /waits\npage /after-wait\npage /from-start\n"
                                "page /ignored-by-the-spider\n";

static bool is(const char *url, const char *path)
{
    return strcmp(testsite_path_of(url), path) == 0;
}

/* The calls made for each path, in order: "PATH: in:A in:B parse ..." per line. */
static char trace[8192];

static void note(const char *url, const char *what)
{
    const char *path = testsite_path_of(url);
    size_t plen = strlen(path), n = strlen(trace);
    /* the path's line, or a new one at the end */
    char *line = trace;
    while (*line) {
        if (strncmp(line, path, plen) == 0 && line[plen] == ':')
            break;
        line = strchr(line, '\n') + 1;
    }
    if (!*line) {
        snprintf(trace + n, sizeof trace - n, "%s:\n", path);
        n = strlen(trace);
    }
    char *end = strchr(line, '\n');
    size_t add = strlen(what) + 1;
    assert_true(n + add < sizeof trace);
    memmove(end + add, end, (size_t)(trace + n + 1 - end));
    end[0] = ' ';
    memcpy(end + 1, what, add - 1);
}

static const char *line_of(const char *path, char *buf, size_t len)
{
    size_t plen = strlen(path);
    for (const char *l = trace; *l; l = strchr(l, '\n') + 1)
        if (strncmp(l, path, plen) == 0 && l[plen] == ':') {
            snprintf(buf, len, "%.*s", (int)(strchr(l, '\n') - l - (int)plen - 2), l + plen + 2);
            return buf;
        }
    return "(no call)";
}

static void expect_calls(const char *path, const char *want)
{
    char buf[1024];
    const char *got = line_of(path, buf, sizeof buf);
    if (strcmp(got, want) != 0)
        fail_msg("%s:\n got  %s\n want %s", path, got, want);
}

/* ---- a coroutine that waits 5 ms on a Future, then does its part ---- */

typedef enum { LATER_RAISE, LATER_FOLLOW } later_kind;

typedef struct {
    coro co;
    later_kind kind;
    const spider_response *resp;
    spider_outputs *out;
} later_frame;

static int later_body(coro *co)
{
    later_frame *f = (later_frame *)co;
    CORO_BEGIN(co);
    AWAIT(co, sock_sleep(5));
    if (f->kind == LATER_RAISE)
        CORO_RAISE(co, CORO_ERROR, 0, "spider error: boom at %s",
                   testsite_path_of(f->resp->request->url));
    note(f->resp->request->url, "waited");
    spider_follow(f->out, f->resp, "/after-wait", "parse");
    CORO_END(co);
}

static const coro_def later_def = {"later", __FILE__, later_body, NULL, sizeof(later_frame)};

static coro *later(later_kind kind, const spider_response *resp, spider_outputs *out)
{
    later_frame *f = (later_frame *)coro_new(&later_def);
    f->kind = kind;
    f->resp = resp;
    f->out = out;
    return &f->co;
}

/* ---- the test spider: follows its own list from /, not the page's links ---- */

static coro *test_parse(void *self, const spider_response *resp, spider_outputs *out)
{
    (void)self;
    const char *url = resp->request->url;
    note(url, "parse");
    if (is(url, "/")) {
        const char *next[] = {"/ok", "/boom", "/fail", "/bad-input", "/waits"};
        for (size_t i = 0; i < sizeof next / sizeof next[0]; i++)
            assert_true(spider_follow(out, resp, next[i], "detail"));
        spider_emit_item(out, "{\"page\": \"/\"}");
        return NULL;
    }
    if (is(url, "/from-start")) { /* a start request: a root's depth, no callback */
        assert_null(resp->request->callback);
        assert_int_equal(resp->request->depth, 0);
        return NULL;
    }
    assert_non_null(resp->request->callback);
    assert_string_equal(resp->request->callback, is(url, "/after-wait") ? "parse" : "detail");
    if (is(url, "/fail"))
        spider_fail(out, "spider error: /fail refused");
    else if (is(url, "/boom"))
        return later(LATER_RAISE, resp, out);
    else if (is(url, "/waits"))
        return later(LATER_FOLLOW, resp, out);
    return NULL;
}

/* ---- three spider middlewares that note their calls ---- */

typedef struct {
    const char *name;
} tmw;

static tmw mw_a = {"A"}, mw_b = {"B"}, mw_c = {"C"};

static void note_mw(const spider_response *resp, const char *method, const tmw *m)
{
    char what[32];
    snprintf(what, sizeof what, "%s:%s", method, m->name);
    note(resp->request->url, what);
}

static coro *tmw_input(void *self, const spider_response *resp, spider_outputs *out)
{
    note_mw(resp, "in", self);
    if (is(resp->request->url, "/bad-input") && self == &mw_b)
        spider_fail(out, "spider error: B refuses the input");
    return NULL;
}

static coro *tmw_output(void *self, const spider_response *resp, spider_outputs *out)
{
    note_mw(resp, "out", self);
    (void)out;
    return NULL;
}

/* B recovers /boom's error, with an item of its own; nobody recovers /fail's. */
static coro *tmw_exception(void *self, const spider_response *resp, spider_outputs *out)
{
    note_mw(resp, "exc", self);
    if (self == &mw_b && is(resp->request->url, "/boom")) {
        spider_recover(out);
        spider_emit_item(out, "{\"recovered\": true}");
    }
    return NULL;
}

/* C adds /from-start to the roots; A sees it (reverse order: C first). */
static coro *tmw_start(void *self, spider_outputs *out)
{
    const tmw *m = self;
    char what[32];
    snprintf(what, sizeof what, "start:%s:%zu", m->name, out->n);
    note(out->v[0].request->url, what);
    if (m == &mw_c) {
        char url[256];
        snprintf(url, sizeof url, "%sfrom-start", site.url);
        spider_emit_request(out, request_new(url, 10, 0));
    }
    return NULL;
}

static spider_middleware make_tmw(tmw *m)
{
    return (spider_middleware){.name = m->name,
                               .self = m,
                               .process_spider_input = tmw_input,
                               .process_spider_output = tmw_output,
                               .process_spider_exception = tmw_exception,
                               .process_start_requests = tmw_start};
}

static int make_a(engine *e, const settings *s_, spider_middleware *out, char *err, size_t errlen)
{
    (void)s_;
    (void)e, (void)err, (void)errlen;
    *out = make_tmw(&mw_a);
    return 0;
}
static int make_b(engine *e, const settings *s_, spider_middleware *out, char *err, size_t errlen)
{
    (void)s_;
    (void)e, (void)err, (void)errlen;
    *out = make_tmw(&mw_b);
    return 0;
}
static int make_c(engine *e, const settings *s_, spider_middleware *out, char *err, size_t errlen)
{
    (void)s_;
    (void)e, (void)err, (void)errlen;
    *out = make_tmw(&mw_c);
    return 0;
}

static int make_spider(engine *e, const settings *s_, spider *out, char *err, size_t errlen)
{
    (void)s_;
    (void)e, (void)err, (void)errlen;
    *out = (spider){.name = "test", .parse = test_parse};
    return 0;
}

/* ---- a pipeline stage that notes records and items ---- */

/* The spider's items as the pipeline got them, and how many records it got (whether a
 * response's items go before or after its record is the pipeline's business, not the
 * spider middleware's). */
static char items_seen[1024];
static size_t records_seen;

static coro *tp_item(void *self, item *it, bool *drop)
{
    (void)self, (void)drop, (void)it;
    records_seen++;
    return NULL;
}

static coro *tp_spider_item(void *self, spider_item *it, bool *drop)
{
    (void)self, (void)drop;
    size_t n = strlen(items_seen);
    snprintf(items_seen + n, sizeof items_seen - n, "%s %s\n", testsite_path_of(it->request->url),
             it->json);
    return NULL;
}

static int make_pipe(engine *e, const settings *s_, item_pipeline *out, char *err, size_t errlen)
{
    (void)s_;
    (void)e, (void)err, (void)errlen;
    *out = (item_pipeline){
        .name = "notes", .process_item = tp_item, .process_spider_item = tp_spider_item};
    return 0;
}

static int make_queue(app *a, const settings *s_, frontier *out, char *err, size_t errlen)
{
    (void)s_;
    (void)err, (void)errlen;
    *out = queue_frontier(a->loop);
    return 0;
}

/* Out of order in the table: the order numbers decide (A 100, B 200, C 300). */
static const extension rows[] = {
    {"C", EXT_SPIDER_MW, 300, NULL, .make_spider_middleware = make_c},
    {"queue", EXT_FRONTIER, 1000, NULL, .make_frontier = make_queue},
    {"A", EXT_SPIDER_MW, 100, NULL, .make_spider_middleware = make_a},
    {"spider", EXT_SPIDER, 100, NULL, .make_spider = make_spider},
    {"notes", EXT_PIPELINE, 100, NULL, .make_pipeline = make_pipe},
    {"B", EXT_SPIDER_MW, 200, NULL, .make_spider_middleware = make_b},
};
static const extension *const list[] = {&rows[0], &rows[1], &rows[2], &rows[3], &rows[4], &rows[5]};

static app the_app;
static settings the_settings;

static int setup(void **state)
{
    if (scratch_setup(state) < 0)
        return -1;
    return testsite_start_text(&site, scratch_dir, "spider", site_text, NULL);
}

static int teardown(void **state)
{
    testsite_stop(&site);
    return scratch_teardown(state);
}

static const fetch_stat *need(const report *r, const char *path)
{
    for (size_t i = 0; i < report_count(r); i++)
        if (is(report_get(r, i)->url, path))
            return report_get(r, i);
    fail_msg("no record for %s", path);
    return NULL;
}

static void test_spider_middleware_order(void **state)
{
    (void)state;
    static const char *const transports[] = {"raw", "curl"};
    for (size_t t = 0; t < 2; t++) {
        trace[0] = items_seen[0] = '\0';
        records_seen = 0;
        char *argv[] = {"test_spider", "--transport", (char *)transports[t],
                        "--max-tasks", "1",           "--max-tries",
                        "1",           "-q",          site.url,
                        NULL};
        app_stage stage = settings_stage("test_spider", &the_settings);
        assert_int_equal(app_open(&the_app, 9, argv, &stage), 0);
        assert_int_equal(crawler_run(&the_app, list, sizeof list / sizeof list[0]), 0);
        const report *r = crawl_report(the_app.crawl);

        /* start requests: C then B then A, C added one */
        expect_calls("/", "start:C:1 start:B:2 start:A:2 in:A in:B in:C parse out:C out:B out:A");
        expect_calls("/ok", "in:A in:B in:C parse out:C out:B out:A");
        /* /boom raised in its coroutine: C, then B recovers (A never sees it) */
        expect_calls("/boom", "in:A in:B in:C parse exc:C exc:B out:C out:B out:A");
        assert_null(need(r, "/boom")->exception);
        /* /fail: nobody recovers; its record says why */
        expect_calls("/fail", "in:A in:B in:C parse exc:C exc:B exc:A out:C out:B out:A");
        assert_string_equal(need(r, "/fail")->exception, "spider error: /fail refused");
        assert_int_equal(need(r, "/fail")->status, 200);
        /* /bad-input: B's input fails, C's input and the callback are skipped */
        expect_calls("/bad-input", "in:A in:B exc:C exc:B exc:A out:C out:B out:A");
        assert_string_equal(need(r, "/bad-input")->exception, "spider error: B refuses the input");
        /* /waits: the callback waits on a Future, then follows /after-wait */
        expect_calls("/waits", "in:A in:B in:C parse waited out:C out:B out:A");
        assert_int_equal(need(r, "/after-wait")->status, 200);
        expect_calls("/from-start", "in:A in:B in:C parse out:C out:B out:A");
        /* only the spider's requests were followed, not the page's link */
        assert_int_equal(report_count(r), 8);
        assert_int_equal(records_seen, 8);
        assert_int_equal(need(r, "/")->num_urls, 1); /* the record still counts it */
        assert_string_equal(items_seen, "/ {\"page\": \"/\"}\n/boom {\"recovered\": true}\n");
        app_close(&the_app);
    }
}

/* The registry: spider middlewares by order, the spider from its row. */
static void test_registry_spider_rows(void **state)
{
    (void)state;
    char *argv[] = {"test_spider", "-q", "http://127.0.0.1:1/", NULL};
    app_stage stage = settings_stage("test_spider", &the_settings);
    assert_int_equal(app_open(&the_app, 3, argv, &stage), 0);
    frontier fr;
    engine *e;
    char err[256];
    assert_int_equal(
        registry_assemble(&the_app, list, sizeof list / sizeof list[0], &fr, &e, err, sizeof err),
        0);
    assert_string_equal(engine_spider_middleware_name(e, 0), "A");
    assert_string_equal(engine_spider_middleware_name(e, 1), "B");
    assert_string_equal(engine_spider_middleware_name(e, 2), "C");
    assert_null(engine_spider_middleware_name(e, 3));
    assert_string_equal(engine_spider_name(e), "test");
    assert_true(engine_has_start_requests(e));
    assert_false(engine_plain(e));
    engine_free(e);
    frontier_free(&fr);
    /* crawl-queue's own rows: depth and referrer without flags (as Scrapy's defaults), in
     * output's reverse order, and the default spider */
    assert_int_equal(registry_assemble(&the_app, registry, registry_size, &fr, &e, err, sizeof err),
                     0);
    assert_string_equal(engine_spider_middleware_name(e, 0), "referrer");
    assert_string_equal(engine_spider_middleware_name(e, 1), "depth");
    assert_null(engine_spider_middleware_name(e, 2));
    assert_string_equal(engine_spider_name(e), "follow links");
    assert_false(engine_has_start_requests(e));
    engine_free(e);
    frontier_free(&fr);
    app_close(&the_app);
}

/* The scope middleware skips no pattern: one that does not compile (the command line
 * checks them first; this is the maker's own check) fails the assembly with one line,
 * where it used to be skipped — and with every pattern skipped, every link followed. */
static int make_bad_scope(engine *e, const settings *s_, spider_middleware *out, char *err,
                          size_t errlen)
{
    (void)s_;
    (void)e;
    const char *const include[] = {"/docs/", "("};
    return scope_middleware(include, 2, out, err, errlen);
}

static const extension bad_rows[] = {
    {"queue", EXT_FRONTIER, 1000, NULL, .make_frontier = make_queue},
    {"scope", EXT_SPIDER_MW, 500, NULL, .make_spider_middleware = make_bad_scope},
};
static const extension *const bad_list[] = {&bad_rows[0], &bad_rows[1]};

static void test_scope_bad_pattern(void **state)
{
    (void)state;
    char err[256] = "";
    spider_middleware m;
    const char *const good[] = {"/docs/", "(?i)\\.PDF$"};
    assert_int_equal(scope_middleware(good, 2, &m, err, sizeof err), 0);
    assert_string_equal(m.name, "scope");
    m.free(m.self);
    const char *const backref[] = {"(a)\\1"};
    assert_int_equal(scope_middleware(backref, 1, &m, err, sizeof err), -1);
    assert_string_equal(err,
                        "--include: bad regex '(a)\\1': back-references are refused at offset 3");

    char *argv[] = {"test_spider", "-q", "http://127.0.0.1:1/", NULL};
    app_stage stage = settings_stage("test_spider", &the_settings);
    assert_int_equal(app_open(&the_app, 3, argv, &stage), 0);
    frontier fr;
    engine *e;
    assert_int_equal(registry_assemble(&the_app, bad_list, sizeof bad_list / sizeof bad_list[0],
                                       &fr, &e, err, sizeof err),
                     -1);
    assert_null(e);
    assert_string_equal(err, "--include: bad regex '(': missing closing parenthesis at offset 1");
    app_close(&the_app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spider_middleware_order),
        cmocka_unit_test(test_registry_spider_rows),
        cmocka_unit_test(test_scope_bad_pattern),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
