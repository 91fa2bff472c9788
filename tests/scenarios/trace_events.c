/* trace_events.c — the --trace-events scenario (ctest scenario.trace_events):
 *
 *   trace_events --stage BIN [--stage BIN ...]
 *
 * Each stage crawls a small generated site (with its default transport, and the
 * other one too) with --max-tasks 4 --trace-events FILE, and the file must be one
 * valid JSON object in the Chrome trace-event format with:
 *  - one complete ("X", cat "fetch") event per fetched URL, whose args.url and
 *    args.status match the report's record — and, from crawl-queue, one more: its
 *    download of /robots.txt, which is no record;
 *  - every span with ts >= 0 and dur >= 0; every fetch on a slot track (crawl-queue
 *    --chapter: the chapter's crawler; the polite Queue's tracks are per host): tid - 1 in
 *    [0, max_tasks), the track named "slot N", and no two fetches of a slot
 *    overlapping;
 *  - the phases connect, waiting and body of each fetch inside it, back to back, on
 *    its track (so every transport calls the sink's on_connect);
 *  - a process_name naming the stage.
 * And a --trace-events path that cannot be created is one line on stderr, exit 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <signal.h>
#include <unistd.h>

#include "jsonl.h"
#include "testsite_helper.h"

#define MAX_TASKS  4
#define MAX_STAGES 8

static const char *g_stages[MAX_STAGES];
static int g_nstages;

typedef struct ctx {
    testsite ts;
    char path[64];
    crawl_run run;
    jobj *doc;
    char *text;
} ctx;

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    const char *const args[] = {"--generate", "pages=30,links=5,size=3000,seed=7", "--delay", "5",
                                NULL};
    if (!c || testsite_start(&c->ts, args) < 0) {
        free(c);
        return -1;
    }
    snprintf(c->path, sizeof c->path, "/tmp/trace_events.XXXXXX");
    int fd = mkstemp(c->path);
    if (fd < 0)
        return -1;
    close(fd);
    *state = c;
    return 0;
}

static void reset(ctx *c)
{
    crawl_run_free(&c->run);
    memset(&c->run, 0, sizeof c->run);
    jobj_free(c->doc);
    c->doc = NULL;
    free(c->text);
    c->text = NULL;
}

static int teardown(void **state)
{
    ctx *c = *state;
    reset(c);
    testsite_stop(&c->ts);
    unlink(c->path);
    free(c);
    return 0;
}

static const char *base_name(const char *bin)
{
    const char *b = strrchr(bin, '/');
    return b ? b + 1 : bin;
}

static const jv *load_events(ctx *c, const char *what, size_t *n)
{
    FILE *f = fopen(c->path, "r");
    if (!f)
        fail_msg("%s: no trace file", what);
    size_t cap = 1 << 16, len = 0;
    c->text = malloc(cap);
    size_t k;
    while ((k = fread(c->text + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap)
            c->text = realloc(c->text, cap *= 2);
    }
    fclose(f);
    char err[200];
    c->doc = jobj_parse(c->text, len, err, sizeof err);
    if (!c->doc)
        fail_msg("%s: the trace is not one JSON object: %s", what, err);
    const char *unit = jobj_str(c->doc, "displayTimeUnit");
    if (!unit || strcmp(unit, "ms") != 0)
        fail_msg("%s: no \"displayTimeUnit\": \"ms\"", what);
    const jv *ev = jobj_arr(c->doc, "traceEvents");
    if (!ev)
        fail_msg("%s: no traceEvents array", what);
    for (size_t i = 0; i < ev->nitems; i++)
        if (ev->items[i].type != JV_OBJ)
            fail_msg("%s: traceEvents[%zu] is not an object", what, i);
    *n = ev->nitems;
    return ev->items;
}

static const char *str_or(const jobj *o, const char *key)
{
    const char *s = jobj_str(o, key);
    return s ? s : "";
}

/* Crawl the site with bin and transport, then check the trace against the records. */
static void check_stage(ctx *c, const char *bin, const char *transport)
{
    char what[160];
    snprintf(what, sizeof what, "%s --transport %s", base_name(bin), transport);
    reset(c);
    char tasks[16];
    snprintf(tasks, sizeof tasks, "%d", MAX_TASKS);
    /* crawl-queue as the chapter's crawler (its shared slots; the polite Queue's lanes
     * per host are test_polite's) */
    bool queue = strcmp(base_name(bin), "crawl-queue") == 0;
    char *argv[] = {
        (char *)bin,   "-q",  "--format",       "jsonl", "--transport", (char *)transport,
        "--max-tasks", tasks, "--trace-events", c->path, c->ts.url,     queue ? "--chapter" : NULL,
        NULL};
    if (run_crawler(&c->run, argv, 60) < 0 || c->run.exit_code != 0 || c->run.parse_error)
        fail_msg("%s: the crawl failed\n%s", what, crawl_run_describe(&c->run));
    if (c->run.nrecords < 30)
        fail_msg("%s: %zu records, want 30", what, c->run.nrecords);

    size_t n;
    const jv *ev = load_events(c, what, &n);
    const char *stage = base_name(bin) + strlen("crawl-");
    bool named = false;
    bool slot_named[MAX_TASKS] = {false};
    size_t nfetch = 0, nphase = 0, nconnect = 0, nrobots = 0;
    for (size_t i = 0; i < n; i++) {
        const jobj *e = ev[i].obj;
        const char *ph = str_or(e, "ph"), *name = str_or(e, "name");
        long long tid = jobj_int(e, "tid", -1);
        if (!strcmp(ph, "M") && !strcmp(name, "process_name"))
            named = strstr(str_or(jobj_obj(e, "args"), "name"), stage) != NULL;
        if (!strcmp(ph, "M") && !strcmp(name, "thread_name")) {
            char want[32];
            snprintf(want, sizeof want, "slot %lld", tid - 1);
            if (tid < 1 || tid > MAX_TASKS || strcmp(str_or(jobj_obj(e, "args"), "name"), want))
                fail_msg("%s: track %lld named '%s'", what, tid,
                         str_or(jobj_obj(e, "args"), "name"));
            slot_named[tid - 1] = true;
        }
        if (strcmp(ph, "X") != 0)
            continue;
        long long ts = jobj_int(e, "ts", -1), dur = jobj_int(e, "dur", -1);
        if (!jobj_get(e, "ts") || !jobj_get(e, "dur") || ts < 0 || dur < 0)
            fail_msg("%s: span '%s' with ts %lld dur %lld", what, name, ts, dur);
        if (tid < 1 || tid > MAX_TASKS)
            fail_msg("%s: span '%s' on track %lld: slot not below --max-tasks %d", what, name, tid,
                     MAX_TASKS);
        const char *url = str_or(jobj_obj(e, "args"), "url");
        size_t ulen = strlen(url);
        if (!strcmp(str_or(e, "cat"), "fetch") && ulen >= 11
            && !strcmp(url + ulen - 11, "/robots.txt"))
            nrobots++;
        else if (!strcmp(str_or(e, "cat"), "fetch"))
            nfetch++;
        else
            nphase++;
        nconnect += !strcmp(name, "connect");
    }
    if (!named)
        fail_msg("%s: no process_name naming '%s'", what, stage);

    /* one fetch span per record, with its url and status; robots.txt once from
     * crawl-queue (the site has none: a 404), never from stages 1 and 2 */
    if (nrobots != (strcmp(stage, "queue") == 0 ? 1u : 0u))
        fail_msg("%s: %zu fetch span(s) for /robots.txt", what, nrobots);
    if (nfetch != c->run.nrecords)
        fail_msg("%s: %zu fetch spans for %zu records", what, nfetch, c->run.nrecords);
    for (size_t r = 0; r < c->run.nrecords; r++) {
        const char *url = jobj_str(c->run.records[r], "url");
        long long status = jobj_int(c->run.records[r], "status", -1);
        const jobj *span = NULL;
        for (size_t i = 0; i < n; i++) {
            const jobj *e = ev[i].obj;
            if (!strcmp(str_or(e, "ph"), "X") && !strcmp(str_or(e, "cat"), "fetch")
                && !strcmp(str_or(jobj_obj(e, "args"), "url"), url)) {
                if (span)
                    fail_msg("%s: two fetch spans for %s", what, url);
                span = e;
            }
        }
        if (!span)
            fail_msg("%s: no fetch span for %s", what, url);
        if (jobj_int(jobj_obj(span, "args"), "status", -2) != status)
            fail_msg("%s: %s: span status %lld, record %lld", what, url,
                     jobj_int(jobj_obj(span, "args"), "status", -2), status);
        if (!slot_named[jobj_int(span, "tid", 1) - 1])
            fail_msg("%s: the track of %s has no thread_name", what, url);
    }

    /* per fetch: the three phases, back to back, filling it; no overlap on a slot */
    if (nconnect != nfetch + nrobots || nphase != 3 * (nfetch + nrobots))
        fail_msg("%s: %zu fetches, %zu phases of which %zu connect (want 3 per fetch, "
                 "one connect each)",
                 what, nfetch + nrobots, nphase, nconnect);
    for (size_t i = 0; i < n; i++) {
        const jobj *e = ev[i].obj;
        if (strcmp(str_or(e, "ph"), "X") || strcmp(str_or(e, "cat"), "fetch"))
            continue;
        long long tid = jobj_int(e, "tid", -1), ts = jobj_int(e, "ts", -1);
        long long end = ts + jobj_int(e, "dur", -1), at = ts;
        static const char *const order[] = {"connect", "waiting", "body"};
        int next = 0;
        for (size_t j = 0; j < n; j++) {
            const jobj *p = ev[j].obj;
            if (j == i || strcmp(str_or(p, "ph"), "X") || jobj_int(p, "tid", -1) != tid)
                continue;
            long long pts = jobj_int(p, "ts", -1), pend = pts + jobj_int(p, "dur", -1);
            bool phase = !strcmp(str_or(p, "cat"), "phase");
            if (!phase && pts < end && ts < pend && pend > pts && end > ts)
                fail_msg("%s: fetches '%s' and '%s' overlap on track %lld", what, str_or(e, "name"),
                         str_or(p, "name"), tid);
            if (phase && pts >= ts && pend <= end && next < 3 && pts == at
                && !strcmp(str_or(p, "name"), order[next])) {
                at = pend;
                next++;
            }
        }
        if (next != 3 || at != end)
            fail_msg("%s: the phases of '%s' do not fill it (%d of 3, to %lld of %lld)", what,
                     str_or(e, "name"), next, at, end);
    }
    if (!strstr(c->text, "\"crawl finished\""))
        fail_msg("%s: no \"crawl finished\" instant", what);
}

static void test_trace_events(void **state)
{
    ctx *c = *state;
    for (int s = 0; s < g_nstages; s++) {
        check_stage(c, g_stages[s], "raw");
        check_stage(c, g_stages[s], "curl");
    }
}

static void test_bad_path(void **state)
{
    ctx *c = *state;
    for (int s = 0; s < g_nstages; s++) {
        reset(c);
        char *argv[] = {(char *)g_stages[s], "--trace-events", "/nonexistent-dir/t.json", c->ts.url,
                        NULL};
        if (run_crawler(&c->run, argv, 30) < 0 || c->run.exit_code != 1)
            fail_msg("%s: want exit 1\n%s", g_stages[s], crawl_run_describe(&c->run));
        const char *nl = strchr(c->run.err, '\n');
        if (!strstr(c->run.err, "/nonexistent-dir/t.json") || !nl || nl[1])
            fail_msg("%s: want one line naming the file, got:\n%s", g_stages[s], c->run.err);
    }
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    for (int i = 1; i + 1 < argc && g_nstages < MAX_STAGES; i += 2) {
        if (strcmp(argv[i], "--stage") != 0)
            break;
        g_stages[g_nstages++] = argv[i + 1];
    }
    if (g_nstages == 0) {
        fprintf(stderr, "usage: trace_events --stage BIN [--stage BIN ...]\n");
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_trace_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_path, setup, teardown),
    };
    return cmocka_run_group_tests_name("trace_events", tests, NULL, NULL);
}
