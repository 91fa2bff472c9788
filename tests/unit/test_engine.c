/* test_engine.c — stage 3's engine against testsite, on both transports and every
 * selector: each downloader-middleware result (continue, Response, Request,
 * IgnoreRequest) given at once and through a coroutine that waits on a Future; a
 * failed download recovered by process_exception; the item pipeline (drop, a
 * process_item that waits, close awaited before the crawl ends); engine_download. */
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
#include "settings.h"
#include "future.h"
#include "registry.h"
#include "sockio.h"
#include "testsite_helper.h"

/* ---- helpers ---- */

static bool is(const char *url, const char *path)
{
    return strcmp(testsite_path_of(url), path) == 0;
}

static bool ends(const char *url, const char *suffix)
{
    size_t n = strlen(url), m = strlen(suffix);
    return n >= m && strcmp(url + n - m, suffix) == 0;
}

/* A coroutine that sleeps 5 ms then copies a prepared result into *out: a method that
 * answers "later", through a Future (sock_sleep resolves one on a timer). */
typedef struct {
    coro co;
    mw_result *out;
    mw_result give;
    bool *drop;
    bool give_drop;
    int *counter;
} later_frame;

static int later_body(coro *co)
{
    later_frame *f = (later_frame *)co;
    CORO_BEGIN(co);
    AWAIT(co, sock_sleep(5));
    if (f->out)
        *f->out = f->give;
    if (f->drop)
        *f->drop = f->give_drop;
    if (f->counter)
        (*f->counter)++;
    CORO_END(co);
}

static const coro_def later_def = {"later", __FILE__, later_body, NULL, sizeof(later_frame)};

static coro *later(mw_result *out, const mw_result *give)
{
    later_frame *f = (later_frame *)coro_new(&later_def);
    f->out = out;
    f->give = *give;
    return &f->co;
}

/* A canned page: 200 text/html linking to /from-canned. */
static response *canned(const char *url)
{
    response *r = response_new(url, 200);
    response_add_header(r, "Content-Type", "text/html");
    const char *html = "<html><body><a href=\"/from-canned\">x</a></body></html>";
    response_set_body(r, xstrdup(html), strlen(html));
    return r;
}

/* ---- the test middleware: decides by path ---- */

typedef struct {
    char base[128];
    int requests, responses, exceptions;
} test_mw;

static coro *answer(mw_result *out, bool now, const mw_result *res)
{
    if (now) {
        *out = *res;
        return NULL;
    }
    return later(out, res);
}

static coro *tmw_request(void *self, request *req, mw_result *out)
{
    test_mw *m = self;
    m->requests++;
    mw_result r;
    mw_continue(&r);
    bool now = ends(req->url, "-now");
    if (is(req->url, "/ignore-now") || is(req->url, "/ignore-later"))
        mw_ignore(&r, "test middleware ignores %s", testsite_path_of(req->url));
    else if (is(req->url, "/canned-now") || is(req->url, "/canned-later"))
        mw_respond(&r, canned(req->url));
    else if (is(req->url, "/resched-now") || is(req->url, "/resched-later")) {
        char url[256];
        snprintf(url, sizeof url, "%sresched-target", m->base);
        mw_reschedule(&r, request_new(url, 10, 0));
    }
    return answer(out, now || r.kind == MW_CONTINUE, &r);
}

static coro *tmw_response(void *self, request *req, const response *resp, mw_result *out)
{
    test_mw *m = self;
    m->responses++;
    mw_result r;
    mw_continue(&r);
    bool now = ends(req->url, "-now");
    if (is(req->url, "/replace-now") || is(req->url, "/replace-later")) {
        response *x = response_new(resp->url, 203);
        response_add_header(x, "Content-Type", "text/plain");
        mw_respond(&r, x);
    } else if (is(req->url, "/drop-response")) {
        mw_ignore(&r, "test middleware drops the response of %s", testsite_path_of(req->url));
    }
    return answer(out, now || r.kind == MW_CONTINUE, &r);
}

/* A download that failed (a port nobody listens on) is recovered with a Response. */
static coro *tmw_exception(void *self, request *req, const char *error, mw_result *out)
{
    (void)error;
    test_mw *m = self;
    m->exceptions++;
    mw_result r;
    mw_respond(&r, response_new(req->url, 299));
    return later(out, &r);
}

/* ---- the test pipeline: stage 1 drops /dropme, stage 2 counts (later), close waits ---- */

typedef struct {
    int opened, items, closed;
    int later_items;
    bool saw_dropme;
} test_pipe;

static coro *tp_open(void *self, engine *e)
{
    (void)e;
    ((test_pipe *)self)->opened++;
    return NULL;
}

static coro *tp1_item(void *self, item *it, bool *drop)
{
    test_pipe *p = self;
    p->items++;
    *drop = is(it->record.url, "/dropme");
    return NULL;
}

static coro *tp2_item(void *self, item *it, bool *drop)
{
    test_pipe *p = self;
    p->items++;
    if (is(it->record.url, "/dropme"))
        p->saw_dropme = true;
    if (it->response)
        assert_int_equal(it->response->status, it->record.status);
    else
        assert_int_equal(it->record.status, -1);
    later_frame *f = (later_frame *)coro_new(&later_def);
    f->drop = drop;
    f->give_drop = false;
    f->counter = &p->later_items;
    return &f->co;
}

static coro *tp_close(void *self)
{
    test_pipe *p = self;
    later_frame *f = (later_frame *)coro_new(&later_def);
    f->counter = &p->closed;
    return &f->co;
}

/* ---- running a crawl ---- */

static test_mw the_mw;
static test_pipe pipe_a, pipe_b;
static bool with_mw, with_pipe;

/* The test's extensions, as registry rows (registry.h): the chapter's Queue, the test
 * middleware, two pipeline stages — listed out of order: the order numbers decide. */
static bool on_mw(const settings *s)
{
    (void)s;
    return with_mw;
}
static bool on_pipe(const settings *s)
{
    (void)s;
    return with_pipe;
}

static int make_queue(app *a, const settings *s, frontier *out, char *err, size_t errlen)
{
    (void)s, (void)err, (void)errlen;
    *out = queue_frontier(a->loop);
    return 0;
}

static int make_test_mw(engine *e, const settings *s, downloader_middleware *out, char *err,
                        size_t errlen)
{
    (void)e, (void)s, (void)err, (void)errlen;
    *out = (downloader_middleware){.name = "test",
                                   .self = &the_mw,
                                   .process_request = tmw_request,
                                   .process_response = tmw_response,
                                   .process_exception = tmw_exception};
    return 0;
}

static int make_stage1(engine *e, const settings *s, item_pipeline *out, char *err, size_t errlen)
{
    (void)e, (void)s, (void)err, (void)errlen;
    *out = (item_pipeline){.name = "stage1",
                           .self = &pipe_a,
                           .open = tp_open,
                           .process_item = tp1_item,
                           .close = tp_close};
    return 0;
}

static int make_stage2(engine *e, const settings *s, item_pipeline *out, char *err, size_t errlen)
{
    (void)e, (void)s, (void)err, (void)errlen;
    *out = (item_pipeline){.name = "stage2",
                           .self = &pipe_b,
                           .open = tp_open,
                           .process_item = tp2_item,
                           .close = tp_close,
                           .wants_body = true};
    return 0;
}

static const extension test_rows[] = {
    {"stage2", EXT_PIPELINE, 200, on_pipe, .make_pipeline = make_stage2},
    {"queue", EXT_FRONTIER, 1000, NULL, .make_frontier = make_queue},
    {"test", EXT_DOWNLOADER_MW, 500, on_mw, .make_middleware = make_test_mw},
    {"stage1", EXT_PIPELINE, 100, on_pipe, .make_pipeline = make_stage1},
};
static const extension *const test_list[] = {&test_rows[0], &test_rows[1], &test_rows[2],
                                             &test_rows[3]};

static const fetch_stat *find(const report *r, const char *path)
{
    for (size_t i = 0; i < report_count(r); i++)
        if (is(report_get(r, i)->url, path))
            return report_get(r, i);
    return NULL;
}

static const fetch_stat *need(const report *r, const char *path, const char *ctx)
{
    const fetch_stat *st = find(r, path);
    if (!st)
        fail_msg("%s: no record for %s", ctx, path);
    return st;
}

static app the_app;
static settings the_settings; /* crawl-queue's flags, which the_app reads */
static testsite site;         /* engine.site, for the whole group: a failed test leaves no server */

static int start_site(void **state)
{
    (void)state;
    const char *const args[] = {SITES_DIR "/engine.site", NULL};
    return testsite_start(&site, args);
}

static int stop_site(void **state)
{
    (void)state;
    testsite_stop(&site);
    return 0;
}

static void crawl_site(const char *root, const char *transport, const char *sel)
{
    char *argv[] = {"test_engine", "--transport", (char *)transport, "--selector", (char *)sel,
                    "--max-tries", "1",           "--timeout",       "5",          "-q",
                    (char *)root,  NULL};
    app_stage stage = settings_stage("test_engine", &the_settings);
    assert_int_equal(app_open(&the_app, 11, argv, &stage), 0);
    assert_int_equal(crawler_run(&the_app, test_list, sizeof test_list / sizeof test_list[0]), 0);
}

static const char *const transports[] = {"raw", "curl"};
static const char *const selectors[] = {"epoll", "poll", "select"};

static void check_records(const report *r, const char *t, const char *s)
{
    const fetch_stat *st = NULL;
    char ctx[64];
    snprintf(ctx, sizeof ctx, "%s/%s", t, s);
#define REC(path) (st = need(r, path, ctx))
    assert_int_equal(REC("/plain")->status, 200);
    assert_int_equal(REC("/ignore-now")->status, -1);
    assert_non_null(strstr(REC("/ignore-now")->exception, "IgnoreRequest: test middleware"));
    assert_non_null(strstr(REC("/ignore-later")->exception, "IgnoreRequest:"));
    assert_int_equal(REC("/canned-now")->status, 200);
    assert_int_equal(REC("/canned-later")->num_urls, 1);
    assert_int_equal(REC("/from-canned")->status, 200); /* the canned page's link */
    assert_non_null(strstr(REC("/resched-now")->exception, "rescheduled as"));
    assert_int_equal(REC("/resched-target")->status, 200);
    assert_int_equal(REC("/replace-now")->status, 203);
    assert_int_equal(REC("/replace-later")->status, 203);
    assert_non_null(strstr(REC("/drop-response")->exception, "IgnoreRequest:"));
    assert_int_equal(REC("/r/moved")->status, 301);
    assert_int_equal(REC("/missing")->status, 404);
#undef REC
}

static void test_middleware_results(void **state)
{
    (void)state;
    testsite ts = site;
    for (size_t t = 0; t < 2; t++) {
        for (size_t s = 0; s < 3; s++) {
            memset(&the_mw, 0, sizeof the_mw);
            snprintf(the_mw.base, sizeof the_mw.base, "%s", ts.url);
            with_mw = true;
            with_pipe = false;
            crawl_site(ts.url, transports[t], selectors[s]);
            check_records(crawl_report(the_app.crawl), transports[t], selectors[s]);
            /* canned and ignored-at-request URLs never reached process_response */
            assert_true(the_mw.requests > the_mw.responses);
            assert_int_equal(the_mw.exceptions, 1); /* /refused, recovered */
            assert_int_equal(find(crawl_report(the_app.crawl), "/refused")->status, 299);
            app_close(&the_app);
        }
    }
}

/* The item pipeline, on both transports and every selector: every recorded response is
 * an item; stage 1 drops /dropme so stage 2 never sees it; stage 2 waits on each; close
 * is awaited (counted). */
static void test_pipeline(void **state)
{
    (void)state;
    testsite ts = site;
    for (size_t i = 0; i < 2 * 3; i++) {
        size_t t = i / 3, s = i % 3;
        memset(&pipe_a, 0, sizeof pipe_a);
        memset(&pipe_b, 0, sizeof pipe_b);
        with_mw = false;
        with_pipe = true;
        crawl_site(ts.url, transports[t], selectors[s]);
        size_t records = report_count(crawl_report(the_app.crawl));
        assert_int_equal(pipe_a.opened, 1);
        assert_int_equal(pipe_b.opened, 1);
        assert_int_equal((size_t)pipe_a.items, records); /* every record is an item */
        assert_int_equal(find(crawl_report(the_app.crawl), "/refused")->status, -1);
        assert_int_equal(pipe_b.items, pipe_a.items - 1);
        assert_false(pipe_b.saw_dropme);
        assert_int_equal(pipe_b.later_items, pipe_b.items);
        assert_int_equal(pipe_a.closed, 1);
        assert_int_equal(pipe_b.closed, 1);
        app_close(&the_app);
    }
}

/* process_exception: the download of an unreachable URL fails and the middleware's
 * Response (status 299) is recorded instead of the failure. */
static void test_exception_recovered(void **state)
{
    (void)state;
    for (size_t t = 0; t < 2; t++) {
        memset(&the_mw, 0, sizeof the_mw);
        with_mw = true;
        with_pipe = false;
        crawl_site("http://127.0.0.1:9/unreachable", transports[t], "epoll");
        const report *r = crawl_report(the_app.crawl);
        assert_int_equal(report_count(r), 1);
        assert_int_equal(report_get(r, 0)->status, 299);
        assert_int_equal(the_mw.exceptions, 1);
        app_close(&the_app);
    }
}

/* engine_download: a Future of the response; no record, no queue. */
typedef struct {
    coro co;
    engine *e;
    task *dl;
    response *got;
    char url[256];
} dl_frame;

static int dl_body(coro *co)
{
    dl_frame *f = (dl_frame *)co;
    CORO_BEGIN(co);
    f->dl = engine_download(f->e, request_new(f->url, 0, 0));
    AWAIT_FUTURE(co, task_future(f->dl));
    f->got = co->value.p;
    task_free(f->dl);
    f->dl = NULL;
    CORO_RETURN(co, f->got, 0); /* the frame is freed when the task resolves */
    CORO_END(co);
}

static const coro_def dl_def = {"dl", __FILE__, dl_body, NULL, sizeof(dl_frame)};

static void test_download(void **state)
{
    (void)state;
    testsite ts = site;
    for (size_t t = 0; t < 2; t++) {
        char *argv[] = {"test_engine", "--transport", (char *)transports[t], "-q", ts.url, NULL};
        app_stage stage = settings_stage("test_engine", &the_settings);
        assert_int_equal(app_open(&the_app, 5, argv, &stage), 0);
        engine *e = engine_new(&the_app, NULL);
        dl_frame *f = (dl_frame *)coro_new(&dl_def);
        f->e = e;
        snprintf(f->url, sizeof f->url, "%sr/moved", ts.url);
        task *tk = task_new(the_app.loop, &f->co, "dl");
        assert_int_equal(run_until_complete(the_app.loop, tk), 0);
        response *got = task_future(tk)->result.p;
        task_free(tk);
        assert_non_null(got);
        assert_int_equal(got->status, 301); /* not followed */
        assert_string_equal(response_header(got, "Location"), "/plain");
        /* every header as it came: the whole Content-Type, both X-Twice in order */
        assert_string_equal(response_header(got, "Content-Type"), "text/html; charset=utf-8");
        size_t twice[2], n = 0;
        for (size_t i = 0; i < got->nheaders; i++)
            if (strcmp(got->headers[i].name, "X-Twice") == 0 && n < 2)
                twice[n++] = i;
        assert_int_equal(n, 2);
        assert_string_equal(got->headers[twice[0]].value, "1");
        assert_string_equal(got->headers[twice[1]].value, "2");
        response_free(got);
        assert_int_equal(report_count(crawl_report(the_app.crawl)), 0);
        engine_free(e);
        app_close(&the_app);
    }
}

/* ---- the registry ---- */

static int named_mw(const char *name, downloader_middleware *out)
{
    *out = (downloader_middleware){.name = name};
    return 0;
}
static int mw_a(engine *e, const settings *s, downloader_middleware *out, char *err, size_t n)
{
    (void)e, (void)s, (void)err, (void)n;
    return named_mw("a", out);
}
static int mw_b(engine *e, const settings *s, downloader_middleware *out, char *err, size_t n)
{
    (void)e, (void)s, (void)err, (void)n;
    return named_mw("b", out);
}
static int mw_c(engine *e, const settings *s, downloader_middleware *out, char *err, size_t n)
{
    (void)e, (void)s, (void)err, (void)n;
    return named_mw("c", out);
}
static bool never(const settings *s)
{
    (void)s;
    return false;
}

static int fail_queue(app *a, const settings *s, frontier *out, char *err, size_t errlen)
{
    (void)a, (void)s, (void)out;
    snprintf(err, errlen, "no Queue today");
    return -1;
}

/* Rows are assembled by kind and order number whatever their place in the table (equal
 * numbers: table order); a row not enabled is left out; of the Queues, the enabled one
 * with the lowest number is the crawl's; a maker's failure is the assembly's. The
 * project's table: robots.txt before politeness (whose process_response so runs
 * first), state before store before warc. */
static void test_registry_order(void **state)
{
    (void)state;
    char *argv[] = {"test_engine", "-q", "http://127.0.0.1:1/", NULL};
    app_stage stage = settings_stage("test_engine", &the_settings);
    assert_int_equal(app_open(&the_app, 3, argv, &stage), 0);
    const extension rows[] = {
        {"c", EXT_DOWNLOADER_MW, 900, NULL, .make_middleware = mw_c},
        {"off", EXT_DOWNLOADER_MW, 1, never, .make_middleware = mw_c},
        {"late", EXT_FRONTIER, 2000, NULL, .make_frontier = fail_queue},
        {"a", EXT_DOWNLOADER_MW, 100, NULL, .make_middleware = mw_a},
        {"queue", EXT_FRONTIER, 1000, NULL, .make_frontier = make_queue},
        {"b", EXT_DOWNLOADER_MW, 100, NULL, .make_middleware = mw_b},
    };
    const extension *const list[] = {&rows[0], &rows[1], &rows[2], &rows[3], &rows[4], &rows[5]};
    frontier fr;
    engine *e;
    char err[256];
    assert_int_equal(registry_assemble(&the_app, list, 6, &fr, &e, err, sizeof err), 0);
    assert_string_equal(fr.ops->name, "queue");
    assert_string_equal(engine_middleware_name(e, 0), "a");
    assert_string_equal(engine_middleware_name(e, 1), "b");
    assert_string_equal(engine_middleware_name(e, 2), "c");
    assert_null(engine_middleware_name(e, 3));
    assert_false(engine_has_seeds(e));
    engine_free(e);
    frontier_free(&fr);

    assert_int_equal(registry_assemble(&the_app, list + 2, 1, &fr, &e, err, sizeof err), -1);
    assert_string_equal(err, "no Queue today");
    assert_null(e);
    assert_null(fr.ops);

    const char *want_mw[] = {"robots.txt", "politeness"};
    const char *want_pipe[] = {"state", "store", "warc"};
    const extension *mw[2] = {NULL, NULL}, *pipe[3] = {NULL, NULL, NULL};
    for (size_t i = 0; i < registry_size; i++)
        for (size_t j = 0; j < 3; j++) {
            if (j < 2 && strcmp(registry[i]->name, want_mw[j]) == 0)
                mw[j] = registry[i];
            if (strcmp(registry[i]->name, want_pipe[j]) == 0)
                pipe[j] = registry[i];
        }
    assert_true(mw[0] && mw[1] && mw[0]->order < mw[1]->order);
    assert_true(pipe[0] && pipe[1] && pipe[2]);
    assert_true(pipe[0]->order < pipe[1]->order && pipe[1]->order < pipe[2]->order);
    app_close(&the_app);
}

/* crawl-queue's own rows: one order number per extension of a kind (equal numbers
 * would leave the order to the table's layout), and one name per row. */
static void test_registry_unique(void **state)
{
    (void)state;
    assert_true(registry_size > 10);
    for (size_t i = 0; i < registry_size; i++)
        for (size_t j = i + 1; j < registry_size; j++) {
            if (registry[i]->kind == registry[j]->kind && registry[i]->order == registry[j]->order)
                fail_msg("%s and %s share order %d", registry[i]->name, registry[j]->name,
                         registry[i]->order);
            if (strcmp(registry[i]->name, registry[j]->name) == 0)
                fail_msg("two rows are named %s", registry[i]->name);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_middleware_results),  cmocka_unit_test(test_pipeline),
        cmocka_unit_test(test_exception_recovered), cmocka_unit_test(test_download),
        cmocka_unit_test(test_registry_order),      cmocka_unit_test(test_registry_unique),
    };
    return cmocka_run_group_tests(tests, start_site, stop_site);
}
