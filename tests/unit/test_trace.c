/* test_trace.c — the --trace-events writer (common/core/trace.c) and what the crawl core
 * writes with it (common/core/crawl.c): the file is one valid JSON object in the Chrome
 * trace-event format, strings are escaped, slots are handed out lowest first, and each
 * fetch attempt is a span on its slot's track with its phases nested inside. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crawl.h"
#include "jsonl.h"
#include "trace.h"

typedef struct fixture {
    char path[64];
    jobj *doc;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    snprintf(fx->path, sizeof fx->path, "/tmp/test_trace.XXXXXX");
    int fd = mkstemp(fx->path);
    assert_true(fd >= 0);
    close(fd);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    unlink(fx->path);
    jobj_free(fx->doc);
    free(fx);
    return 0;
}

/* Parse the whole file as one JSON object; check the envelope; return the events. */
static const jv *load(fixture *fx, size_t *n)
{
    FILE *f = fopen(fx->path, "r");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(len < sizeof buf);
    char err[200];
    fx->doc = jobj_parse(buf, len, err, sizeof err);
    if (!fx->doc)
        fail_msg("not valid JSON: %s\n%s", err, buf);
    assert_string_equal(jobj_str(fx->doc, "displayTimeUnit"), "ms");
    const jv *events = jobj_arr(fx->doc, "traceEvents");
    assert_non_null(events);
    /* one event per line: the file has a line per event plus three */
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    assert_int_equal(lines, events->nitems + 3);
    for (size_t i = 0; i < events->nitems; i++)
        assert_int_equal(events->items[i].type, JV_OBJ);
    *n = events->nitems;
    return events->items;
}

/* The i-th event with this ph (and name, when not NULL). */
static const jobj *find(const jv *ev, size_t n, const char *ph, const char *name, int nth)
{
    for (size_t i = 0; i < n; i++) {
        const jobj *e = ev[i].obj;
        if (strcmp(jobj_str(e, "ph"), ph) == 0 && (!name || strcmp(jobj_str(e, "name"), name) == 0)
            && nth-- == 0)
            return e;
    }
    return NULL;
}

static size_t count(const jv *ev, size_t n, const char *ph, const char *name)
{
    size_t k = 0;
    while (find(ev, n, ph, name, (int)k))
        k++;
    return k;
}

static void test_shape_and_escaping(void **state)
{
    fixture *fx = *state;
    char err[256];
    trace *t = trace_open(fx->path, 3, "stage \"3\"", err, sizeof err);
    assert_non_null(t);
    int slot = trace_slot_acquire(t);
    assert_int_equal(slot, 0);
    const char *nasty = "/a\"b\\c\nd\te\x01"
                        "f\xff";
    trace_arg args[] = {{"url", nasty, 0}, {"status", NULL, 200}, {"size", NULL, -1}};
    trace_complete(t, trace_slot_tid(slot), nasty, "fetch", 10, 25, args, 3);
    trace_instant(t, trace_slot_tid(slot), "error", NULL, 35, args, 1);
    trace_instant(t, -1, "crawl finished", "crawl", 40, NULL, 0);
    assert_true(trace_now(t) < 10 * 1000 * 1000);
    assert_int_equal(trace_close(t, err, sizeof err), 0);

    size_t n;
    const jv *ev = load(fx, &n);
    assert_int_equal(n, 6); /* process_name, thread_name, thread_sort_index, X, i, i */
    const jobj *p = ev[0].obj;
    assert_string_equal(jobj_str(p, "name"), "process_name");
    assert_string_equal(jobj_str(p, "ph"), "M");
    assert_int_equal(jobj_int(p, "pid", 0), 3);
    assert_string_equal(jobj_str(jobj_obj(p, "args"), "name"), "stage \"3\"");
    const jobj *th = find(ev, n, "M", "thread_name", 0);
    assert_non_null(th);
    assert_int_equal(jobj_int(th, "tid", 0), 1);
    assert_string_equal(jobj_str(jobj_obj(th, "args"), "name"), "slot 0");

    const jobj *x = find(ev, n, "X", NULL, 0);
    assert_non_null(x);
    /* json_write_string: the invalid byte 0xff is written as \u00ff */
    const char *decoded = "/a\"b\\c\nd\te\x01"
                          "f\xc3\xbf";
    assert_string_equal(jobj_str(x, "name"), decoded);
    assert_string_equal(jobj_str(x, "cat"), "fetch");
    assert_int_equal(jobj_int(x, "ts", -1), 10);
    assert_int_equal(jobj_int(x, "dur", -1), 25);
    assert_int_equal(jobj_int(x, "pid", 0), 3);
    assert_int_equal(jobj_int(x, "tid", 0), 1);
    const jobj *a = jobj_obj(x, "args");
    assert_string_equal(jobj_str(a, "url"), decoded);
    assert_int_equal(jobj_int(a, "status", 0), 200);
    assert_int_equal(jobj_int(a, "size", 0), -1);

    const jobj *i1 = find(ev, n, "i", "error", 0);
    assert_non_null(i1);
    assert_string_equal(jobj_str(i1, "s"), "t");
    assert_null(jobj_get(i1, "cat"));
    assert_int_equal(jobj_int(i1, "tid", 0), 1);
    const jobj *i2 = find(ev, n, "i", "crawl finished", 0);
    assert_non_null(i2);
    assert_string_equal(jobj_str(i2, "s"), "g");
    assert_int_equal(jobj_int(i2, "ts", -1), 40);
    assert_null(jobj_get(i2, "args"));
}

static void test_empty_trace_is_valid(void **state)
{
    fixture *fx = *state;
    char err[256];
    trace *t = trace_open(fx->path, 1, "", err, sizeof err);
    assert_non_null(t);
    assert_int_equal(trace_close(t, err, sizeof err), 0);
    size_t n;
    load(fx, &n);
    assert_int_equal(n, 1);
    assert_int_equal(trace_close(NULL, err, sizeof err), 0);
}

static void test_slots_lowest_free_first(void **state)
{
    fixture *fx = *state;
    char err[256];
    trace *t = trace_open(fx->path, 1, "slots", err, sizeof err);
    assert_non_null(t);
    for (int i = 0; i < 4; i++)
        assert_int_equal(trace_slot_acquire(t), i);
    trace_slot_release(t, 2);
    trace_slot_release(t, 0);
    trace_slot_release(t, 3);
    assert_int_equal(trace_slot_acquire(t), 0);
    assert_int_equal(trace_slot_acquire(t), 2);
    trace_slot_release(t, 1);
    assert_int_equal(trace_slot_acquire(t), 1);
    assert_int_equal(trace_slot_acquire(t), 3);
    assert_int_equal(trace_slot_acquire(t), 4); /* all busy: a new one */
    /* many, released in a scrambled order, come back sorted */
    for (int i = 5; i < 200; i++)
        assert_int_equal(trace_slot_acquire(t), i);
    for (int i = 0; i < 200; i++)
        trace_slot_release(t, (i * 37) % 200);
    for (int i = 0; i < 200; i++)
        assert_int_equal(trace_slot_acquire(t), i);
    trace_slot_release(t, -1); /* ignored */
    trace_slot_release(t, 1000);
    assert_int_equal(trace_close(t, err, sizeof err), 0);

    size_t n;
    const jv *ev = load(fx, &n);
    assert_int_equal(count(ev, n, "M", "thread_name"), 200); /* each track named once */
    assert_string_equal(jobj_str(jobj_obj(find(ev, n, "M", "thread_name", 199), "args"), "name"),
                        "slot 199");
}

static void test_bad_path(void **state)
{
    (void)state;
    char err[256] = "";
    assert_null(trace_open("/nonexistent-dir/t.json", 1, "x", err, sizeof err));
    assert_non_null(strstr(err, "--trace-events '/nonexistent-dir/t.json'"));
    assert_null(strchr(err, '\n'));

    crawl_options o = {.max_tasks = 1, .trace_events = "/nonexistent-dir/t.json"};
    assert_null(crawl_new(&o, "queue", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent-dir/t.json"));
}

/* ---- what the crawl core writes ---------------------------------------------------- */

static void noadd(void *ctx, const crawl_request *r)
{
    (void)ctx, (void)r;
}

/* An attempt at url (depth 0, no referrer). */
static crawl_fetch *new_fetch(crawl *c, const char *url, int max_redirect)
{
    crawl_request r = {url, max_redirect, 0, NULL, NULL};
    return crawl_fetch_new(c, &r);
}

static void test_crawl_core_spans(void **state)
{
    fixture *fx = *state;
    char *roots[] = {"http://example.com/"};
    crawl_options o = {
        .roots = roots,
        .nroots = 1,
        .max_tasks = 3,
        .max_redirect = 10,
        .max_tries = 4,
        .strict = 1,
        .format = "jsonl",
        .output = "/dev/null",
        .timeout = 30,
        .max_size = 1 << 20,
        .transport = "curl",
        .trace_events = fx->path,
        .trace_pid = 3, /* the caller's stage number names the process */
    };
    char err[256] = "";
    crawl *c = crawl_new(&o, "queue", err, sizeof err);
    assert_non_null(c);

    crawl_fetch *f1 = new_fetch(c, "http://example.com/a?x=1", 10);
    crawl_fetch *f2 = new_fetch(c, "http://example.com/b", 10);
    const http_sink *s = crawl_fetch_sink(f1);
    assert_non_null(s->on_connect);
    http_sink_connected(s);
    usleep(2000);
    http_head h = {200, "text/plain", NULL, 5, NULL};
    s->on_head(s->ctx, &h);
    s->on_body(s->ctx, "hello", 5);
    crawl_fetch_done(f1, noadd, NULL);                          /* slot 0 free again */
    crawl_fetch *f3 = new_fetch(c, "http://example.com/c", 10); /* slot 0 */
    crawl_fetch_fail(f2, "connect: Connection refused");        /* slot 1, no head */
    crawl_fetch_discard(f3);                                    /* abandoned */
    char werr[256];
    assert_int_equal(crawl_write_report(c, 0, "curl", "epoll", false, werr, sizeof werr), 0);
    crawl_free(c);

    size_t n;
    const jv *ev = load(fx, &n);
    assert_non_null(strstr(jobj_str(jobj_obj(ev[0].obj, "args"), "name"), "stage 3"));
    assert_int_equal(count(ev, n, "M", "thread_name"), 2);

    const jobj *a = find(ev, n, "X", "/a?x=1", 0);
    const jobj *b = find(ev, n, "X", "/b", 0);
    const jobj *cc = find(ev, n, "X", "/c", 0);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(cc);
    assert_int_equal(jobj_int(a, "tid", 0), 1);
    assert_int_equal(jobj_int(b, "tid", 0), 2);
    assert_int_equal(jobj_int(cc, "tid", 0), 1);
    assert_string_equal(jobj_str(a, "cat"), "fetch");
    const jobj *aa = jobj_obj(a, "args");
    assert_string_equal(jobj_str(aa, "url"), "http://example.com/a?x=1");
    assert_int_equal(jobj_int(aa, "status", 0), 200);
    assert_int_equal(jobj_int(aa, "size", 0), 5);
    assert_null(jobj_get(aa, "error"));
    assert_string_equal(jobj_str(jobj_obj(b, "args"), "error"), "connect: Connection refused");
    assert_null(jobj_get(jobj_obj(b, "args"), "status"));
    assert_string_equal(jobj_str(jobj_obj(cc, "args"), "error"), "abandoned");

    /* a's phases: connect, waiting, body, back to back inside a */
    long long ts = jobj_int(a, "ts", -1), end = ts + jobj_int(a, "dur", -1);
    assert_true(ts >= 0 && end >= ts + 2000);
    const char *phases[] = {"connect", "waiting", "body"};
    long long at = ts;
    for (int i = 0; i < 3; i++) {
        const jobj *p = find(ev, n, "X", phases[i], 0); /* a's are the first ones */
        assert_non_null(p);
        assert_string_equal(jobj_str(p, "cat"), "phase");
        assert_int_equal(jobj_int(p, "tid", 0), 1);
        assert_int_equal(jobj_int(p, "ts", -1), at);
        at += jobj_int(p, "dur", -1);
    }
    assert_int_equal(at, end);
    /* b never connected: one connect phase over the whole attempt, and an error instant */
    const jobj *bc = find(ev, n, "X", "connect", 1);
    assert_int_equal(jobj_int(bc, "tid", 0), 2);
    assert_int_equal(jobj_int(bc, "dur", -1), jobj_int(b, "dur", -2));
    assert_int_equal(count(ev, n, "X", "waiting"), 1);
    assert_int_equal(count(ev, n, "i", "error"), 2);
    const jobj *fin = find(ev, n, "i", "crawl finished", 0);
    assert_non_null(fin);
    assert_int_equal(jobj_int(jobj_obj(fin, "args"), "urls", -1), 1);
    assert_int_equal(jobj_int(jobj_obj(fin, "args"), "max_tasks", -1), 3);
}

static void test_off_by_default(void **state)
{
    (void)state;
    char *roots[] = {"http://example.com/"};
    crawl_options o = {.roots = roots, .nroots = 1, .max_tasks = 3, .strict = 1};
    char err[256] = "";
    crawl *c = crawl_new(&o, "queue", err, sizeof err);
    assert_non_null(c);
    crawl_fetch *f = new_fetch(c, "http://example.com/", 10);
    assert_null(crawl_fetch_sink(f)->on_connect); /* transports skip it entirely */
    http_sink_connected(crawl_fetch_sink(f));
    http_sink_connected(NULL);
    crawl_fetch_discard(f);
    crawl_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shape_and_escaping, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_trace_is_valid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slots_lowest_free_first, setup, teardown),
        cmocka_unit_test(test_bad_path),
        cmocka_unit_test_setup_teardown(test_crawl_core_spans, setup, teardown),
        cmocka_unit_test(test_off_by_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
