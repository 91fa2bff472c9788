/* test_summary.c — what crawl-queue tells a person on stderr (stage3_queue/engine/
 * progress.c) and the counts of the JSONL summary line (common/core/tally.c), checked
 * on crawls of tests/sites/summary.site, whose records fall in every status class, with
 * a second root on a port nobody listens on.
 *
 *   - the summary line's "by_status" and "bytes_received" agree with the records, and
 *     the three lines on stderr (four when URLs were skipped) with the summary line;
 *     stages 1 and 2 count alike and print no summary on stderr (the chapter's crawler);
 *   - the report on stdout, text or jsonl, is named so on stderr; -q prints nothing; a
 *     crawl that fails prints its one line, no summary;
 *   - not on a terminal: one progress line every --progress-interval SECS, kept,
 *     counted against the crawl's own time; none at the default 60 s on a short crawl;
 *   - on a terminal (a tmux pane): the line refreshed in place, cut to the width, and
 *     erased at the end, where the summary follows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "jsonl.h"
#include "scratch.h"
#include "testsite_helper.h"

#define QUEUE      BIN_DIR "/crawl-queue"
#define GENERATORS BIN_DIR "/crawl-generators"

enum { C2XX, C3XX, C4XX, C5XX, CFAILED, CIGNORED, NCLASSES };
static const char *const class_names[NCLASSES] = {"2xx", "3xx", "4xx", "5xx", "failed", "ignored"};

/* ---- helpers ---------------------------------------------------------------------- */

static testsite ts; /* each case's server, stopped by its teardown even on failure */

static void start_site(const char *delay_ms)
{
    const char *const plain[] = {SITES_DIR "/summary.site", NULL};
    const char *const slow[] = {"--delay", delay_ms, SITES_DIR "/summary.site", NULL};
    assert_int_equal(testsite_start(&ts, delay_ms ? slow : plain), 0);
}

static int stop_site(void **state)
{
    (void)state;
    testsite_stop(&ts);
    return 0;
}

/* A refused root: a port on 127.0.0.1 nobody listens on. */
static void refused_root(char *buf, size_t n)
{
    int port = testsite_free_port();
    assert_true(port > 0);
    snprintf(buf, n, "http://127.0.0.1:%d/", port);
}

static void run(crawl_run *r, char **argv)
{
    assert_int_equal(run_crawler(r, argv, 90), 0);
    if (r->timed_out || r->term_signal)
        fail_msg("%s", crawl_run_describe(r));
}

/* The records of a --format jsonl file, parsed as a crawl's stdout is. */
static void read_output(crawl_run *into, const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *text = NULL;
    size_t cap = 0, len = 0;
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        text = realloc(text, cap = len + got + 1);
        assert_non_null(text);
        memcpy(text + len, chunk, got);
        len += got;
    }
    fclose(f);
    assert_non_null(text);
    text[len] = '\0';
    /* records and summary: the same parser as run_crawler's, over the file's lines */
    into->nrecords = 0;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        char err[128];
        jobj *o = jobj_parse(line, (size_t)(nl - line), err, sizeof err);
        if (!o)
            fail_msg("%s: %s", path, err);
        if (jobj_obj(o, "summary")) {
            into->summary = o;
        } else {
            into->records = realloc(into->records, (into->nrecords + 1) * sizeof(jobj *));
            assert_non_null(into->records);
            into->records[into->nrecords++] = o;
        }
        line = nl + 1;
    }
    free(text);
}

/* The class of a record, as a person would sort it by hand. */
static int class_of(const jobj *rec)
{
    long long status = jobj_int(rec, "status", -1);
    const char *exc = jobj_str(rec, "exception");
    if (status < 0)
        return exc && strncmp(exc, "IgnoreRequest: ", 15) == 0 ? CIGNORED : CFAILED;
    return (int)(status / 100 - 2);
}

/* The summary line's counts are the records' and want's; its bytes, the records'. */
static void expect_counts(const crawl_run *r, const size_t want[NCLASSES])
{
    size_t got[NCLASSES] = {0};
    long long bytes = 0;
    for (size_t i = 0; i < r->nrecords; i++) {
        int k = class_of(r->records[i]);
        assert_true(k >= 0 && k < NCLASSES);
        got[k]++;
        bytes += jobj_int(r->records[i], "size", 0);
    }
    assert_non_null(r->summary);
    const jobj *sum =
        jobj_obj(r->summary, "summary") ? jobj_obj(r->summary, "summary") : r->summary;
    const jobj *by = jobj_obj(sum, "by_status");
    if (!by)
        fail_msg("no \"by_status\" in the summary line");
    assert_int_equal(by->n, NCLASSES); /* no "other" */
    for (int k = 0; k < NCLASSES; k++) {
        if (got[k] != want[k] || jobj_int(by, class_names[k], -1) != (long long)want[k])
            fail_msg("%s: %zu records, the summary says %lld, want %zu", class_names[k], got[k],
                     jobj_int(by, class_names[k], -1), want[k]);
    }
    assert_int_equal(jobj_int(sum, "bytes_received", -1), bytes);
    assert_true(bytes >= 5000); /* /big.html */
    assert_int_equal(jobj_int(sum, "done", -1), (long long)r->nrecords);
}

/* The line of stderr that starts with prefix, or NULL. */
static const char *line_of(const char *err, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = err; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, n) == 0)
            return p;
    return NULL;
}

/* stderr's summary: the three lines, saying what the summary line says. */
static void expect_stderr_summary(const char *err, const jobj *sum, const char *report)
{
    const char *l1 = line_of(err, "crawl-queue: ");
    size_t pages;
    double secs, rate;
    long long bytes;
    const char *first = NULL;
    for (const char *p = err; (p = line_of(p, "crawl-queue: ")); p++)
        if (sscanf(p, "crawl-queue: %zu pages in %lf s (%lf pages/s), %lld bytes received", &pages,
                   &secs, &rate, &bytes)
            == 4) {
            first = p;
            break;
        }
    if (!l1 || !first)
        fail_msg("no summary on stderr:\n%s", err);
    assert_int_equal(pages, jobj_int(sum, "done", -1));
    assert_int_equal(bytes, jobj_int(sum, "bytes_received", -1));
    /* the same time, to the millisecond: both are crawl_seconds once the report is out */
    char a[32], b[32];
    snprintf(a, sizeof a, "%.3f", secs);
    snprintf(b, sizeof b, "%.3f", jobj_num(sum, "seconds", -1));
    assert_string_equal(a, b);

    const jobj *by = jobj_obj(sum, "by_status");
    char want[256];
    snprintf(want, sizeof want,
             "crawl-queue: by status: 2xx %lld, 3xx %lld, 4xx %lld, 5xx %lld, failed %lld, "
             "ignored %lld\n",
             jobj_int(by, "2xx", -1), jobj_int(by, "3xx", -1), jobj_int(by, "4xx", -1),
             jobj_int(by, "5xx", -1), jobj_int(by, "failed", -1), jobj_int(by, "ignored", -1));
    const char *l2 = strchr(first, '\n') + 1;
    if (strncmp(l2, want, strlen(want)) != 0)
        fail_msg("want \"%s\" after the first line:\n%s", want, err);
    const char *l3 = strchr(l2, '\n') + 1;
    /* then, when some host's robots.txt got no answer, that the host could not be
     * reached (the summary's "unreachable_hosts") */
    long long dead = jobj_int(sum, "unreachable_hosts", 0);
    if (dead > 0) {
        char line[300];
        snprintf(line, sizeof line, "crawl-queue: %lld host%s could not be reached (", dead,
                 dead == 1 ? "" : "s");
        if (strncmp(l3, line, strlen(line)) != 0)
            fail_msg("want \"%s...\" as the third line:\n%s", line, err);
        l3 = strchr(l3, '\n') + 1;
    }
    /* then, when some URL was skipped, the summary's "skipped" in words */
    const jobj *sk = jobj_obj(sum, "skipped");
    if (!sk)
        fail_msg("no \"skipped\" in the summary line");
    if (jobj_int(sk, "total", -1) > 0) {
        char line[300];
        int n = snprintf(line, sizeof line, "crawl-queue: skipped %lld URL%s",
                         jobj_int(sk, "total", -1), jobj_int(sk, "total", -1) == 1 ? "" : "s");
        const char *sep = ": ";
        for (size_t i = 0; i < sk->n; i++)
            if (strcmp(sk->fields[i].key, "total") != 0 && sk->fields[i].v.num > 0) {
                n += snprintf(line + n, sizeof line - (size_t)n, "%s%s %.0f", sep,
                              sk->fields[i].key, sk->fields[i].v.num);
                sep = ", ";
            }
        if (strncmp(l3, line, strlen(line)) != 0)
            fail_msg("want \"%s\" as the third line:\n%s", line, err);
        l3 = strchr(l3, '\n') + 1;
    }
    if (strncmp(l3, report, strlen(report)) != 0 || l3[strlen(report)] != '\n')
        fail_msg("want \"%s\" after the counts:\n%s", report, err);
    if (l3[strlen(report) + 1] != '\0')
        fail_msg("the summary is not the end of stderr:\n%s", err);
}

/* ---- the summary ------------------------------------------------------------------ */

/* robots.txt obeyed (the default) and ignored; and crawl-generators, which never asks
 * for it, counting the same records alike. */
static void test_summary_by_class(void **state)
{
    (void)state;
    start_site(NULL);
    char refused[64], out[300], report[400];
    refused_root(refused, sizeof refused);
    snprintf(out, sizeof out, "%s/by_class.jsonl", scratch_dir);
    snprintf(report, sizeof report, "crawl-queue: report (jsonl): %s", out);

    /* obeyed: /private/x.html and the refused root (host could not be reached) ignored */
    char *argv[] = {QUEUE, "--format", "jsonl", "--max-tries", "2", "--output",
                    out,   ts.url,     refused, NULL,          NULL};
    crawl_run r, file = {0};
    run(&r, argv);
    assert_int_equal(r.exit_code, 0);
    read_output(&file, out);
    expect_counts(&file, (const size_t[NCLASSES]){3, 1, 2, 1, 1, 2});
    /* the refused root's host could not be reached: its record and the summary say so */
    assert_int_equal(jobj_int(jobj_obj(file.summary, "summary"), "unreachable_hosts", -1), 1);
    assert_non_null(strstr(r.err,
                           "crawl-queue: 1 host could not be reached (its robots.txt "
                           "could not be fetched): nothing fetched from it"));
    expect_stderr_summary(r.err, jobj_obj(file.summary, "summary"), report);
    crawl_run_free(&file);
    crawl_run_free(&r);

    /* ignored: the refused root failed, /private/x.html fetched */
    char *argv2[] = {QUEUE,      "--format", "jsonl", "--max-tries", "2", "--ignore-robots",
                     "--output", out,        ts.url,  refused,       NULL};
    run(&r, argv2);
    assert_int_equal(r.exit_code, 0);
    read_output(&file, out);
    expect_counts(&file, (const size_t[NCLASSES]){4, 1, 2, 1, 2, 0});
    expect_stderr_summary(r.err, jobj_obj(file.summary, "summary"), report);
    crawl_run_free(&file);
    crawl_run_free(&r);

    /* stage 2: the same counts in its summary line, and nothing of this on stderr */
    char *argv3[] = {GENERATORS, "--format", "jsonl", "--max-tries", "2", ts.url, refused, NULL};
    run(&r, argv3);
    assert_int_equal(r.exit_code, 0);
    expect_counts(&r, (const size_t[NCLASSES]){4, 1, 2, 1, 2, 0});
    if (strstr(r.err, " pages in ") || strstr(r.err, "by status"))
        fail_msg("stage 2 printed a summary on stderr:\n%s", r.err);
    crawl_run_free(&r);
}

/* The report on stdout: named so, in its format; the text report is the chapter's. */
static void test_summary_report_on_stdout(void **state)
{
    (void)state;
    start_site(NULL);
    char *argv[] = {QUEUE, "--max-tries", "1", ts.url, NULL};
    crawl_run r;
    run(&r, argv);
    assert_int_equal(r.exit_code, 0);
    assert_true(strncmp(r.out, "*** Report ***\n", 15) == 0);
    assert_null(strstr(r.out, "by status"));
    if (!strstr(r.err,
                "crawl-queue: by status: 2xx 3, 3xx 1, 4xx 2, 5xx 1, failed 1, "
                "ignored 1\ncrawl-queue: skipped 1 URL: robots 1\n"
                "crawl-queue: report (text): stdout\n"))
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);

    char *argv2[] = {QUEUE, "--format", "jsonl", "--max-tries", "1", ts.url, NULL};
    run(&r, argv2);
    assert_int_equal(r.exit_code, 0);
    expect_stderr_summary(r.err, r.summary, "crawl-queue: report (jsonl): stdout");
    crawl_run_free(&r);
}

/* -q: nothing on stderr; a crawl that fails: its one line, and no summary after it. */
static void test_summary_quiet_and_failed(void **state)
{
    (void)state;
    start_site(NULL);
    char out[300];
    snprintf(out, sizeof out, "%s/quiet.jsonl", scratch_dir);
    char *argv[] = {QUEUE, "-q",       "--format", "jsonl", "--max-tries",
                    "1",   "--output", out,        ts.url,  NULL};
    crawl_run r;
    run(&r, argv);
    assert_int_equal(r.exit_code, 0);
    if (r.err_len != 0)
        fail_msg("-q, yet stderr says:\n%s", r.err);
    crawl_run_free(&r);

    if (access("/dev/full", W_OK) == 0) {
        char *argv2[] = {QUEUE, "--max-tries", "1", "--output", "/dev/full", ts.url, NULL};
        run(&r, argv2);
        if (!crawl_run_one_line(&r, 1, "No space left on device"))
            fail_msg("want one line and exit 1: %s", crawl_run_describe(&r));
        crawl_run_free(&r);
    }
}

/* ---- progress, not on a terminal -------------------------------------------------- */

typedef struct progress_line {
    double secs;
    long done, failed, in_flight, queued, pct;
    char bytes[32];
} progress_line;

/* "crawl-queue: T s: N done (F failed), BYTES UNIT, N in flight, N queued, R pages/s,
 * P% of --max-pages M" */
static bool parse_progress(const char *line, progress_line *p, long max_pages)
{
    char num[16], unit[8];
    double rate;
    long max = -1;
    int n = sscanf(line,
                   "crawl-queue: %lf s: %ld done (%ld failed), %15s %7[^,], %ld in flight, "
                   "%ld queued, %lf pages/s, %ld%% of --max-pages %ld",
                   &p->secs, &p->done, &p->failed, num, unit, &p->in_flight, &p->queued, &rate,
                   &p->pct, &max);
    snprintf(p->bytes, sizeof p->bytes, "%s %s", num, unit);
    return n == 10 && max == max_pages;
}

/* A slow crawl (every response 150 ms late, one at a time): a line every 0.2 s, kept,
 * each saying more than the one before. The refused root goes first, so that the lines
 * after it count a failure. */
static void test_progress_lines(void **state)
{
    (void)state;
    start_site("150");
    char refused[64];
    refused_root(refused, sizeof refused);
    char *argv[] = {QUEUE,
                    "--format",
                    "jsonl",
                    "--max-tasks",
                    "1",
                    "--max-tries",
                    "1",
                    "--ignore-robots",
                    "--max-pages",
                    "100",
                    "--progress-interval",
                    "0.2",
                    refused,
                    ts.url,
                    NULL};
    crawl_run r;
    run(&r, argv);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(r.summary);
    double crawl_secs = jobj_num(r.summary, "seconds", 0);
    long done = (long)jobj_int(r.summary, "done", 0);
    if (memchr(r.err, '\r', r.err_len) || memchr(r.err, '\033', r.err_len))
        fail_msg("a terminal's control bytes on a pipe:\n%s", r.err);

    progress_line prev = {.secs = -1}, p;
    int lines = 0, with_failure = 0, with_bytes = 0;
    const char *after_last = r.err;
    for (const char *l = r.err; (l = line_of(l, "crawl-queue: ")); l++) {
        if (!strstr(l, " in flight, "))
            continue;
        if (!parse_progress(l, &p, 100))
            fail_msg("not a progress line: %.*s", (int)strcspn(l, "\n"), l);
        /* printed to 0.1 s: two lines 0.2 s apart or more differ by 0.1 at least */
        assert_true(p.secs >= prev.secs + 0.1 - 1e-9);
        assert_true(p.done >= prev.done && p.failed >= prev.failed);
        assert_int_equal(p.pct, p.done); /* of --max-pages 100 */
        with_failure += p.failed >= 1;
        with_bytes += strcmp(p.bytes, "0 B") != 0;
        prev = p;
        lines++;
        after_last = strchr(l, '\n') + 1;
    }
    /* 9 pages and a failure, 150 ms each or more, one at a time: at least 1.35 s, so 6
     * lines at least were due; 3 is the floor a loaded machine's late timers may leave.
     * The crawl's own clock caps them: one per 0.2 s of it. */
    if (lines < 3 || lines > (int)(crawl_secs / 0.2) + 1)
        fail_msg("%d progress lines in a crawl of %.3f s:\n%s", lines, crawl_secs, r.err);
    assert_true(prev.secs <= crawl_secs + 0.05);
    assert_true(prev.done <= done);
    assert_true(with_failure >= 1 && with_bytes >= 1);
    /* kept: the summary follows the last progress line */
    assert_non_null(strstr(after_last, " pages in "));
    crawl_run_free(&r);

    /* --progress-interval 0, and the default 60 s on this crawl of a few seconds: none */
    char *argv2[] = {
        QUEUE, "--format", "jsonl", "--max-tries", "1", "--ignore-robots", "--progress-interval",
        "0",   ts.url,     NULL};
    run(&r, argv2);
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.err, " in flight, "));
    crawl_run_free(&r);
    char *argv3[] = {QUEUE, "--format", "jsonl", "--max-tries", "1", ts.url, NULL};
    run(&r, argv3);
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.err, " in flight, "));
    crawl_run_free(&r);

    /* bad values: one line, exit 2 */
    char *argv4[] = {QUEUE, "--progress-interval", "-1", ts.url, NULL};
    run(&r, argv4);
    assert_true(crawl_run_one_line(&r, 2, "--progress-interval"));
    crawl_run_free(&r);
    char *argv5[] = {QUEUE, "--progress-interval", "soon", ts.url, NULL};
    run(&r, argv5);
    assert_true(crawl_run_one_line(&r, 2, "--progress-interval"));
    crawl_run_free(&r);
}

/* ---- progress on a terminal: a tmux pane ------------------------------------------ */

#ifdef TMUX_BIN

static char tmux_socket[300];

/* tmux -S SOCKET ARGS...; its stdout (the caller frees), NULL when it failed. */
static char *tmux(const char *first, ...)
{
    char *argv[16] = {TMUX_BIN, "-S", tmux_socket, (char *)first};
    int n = 4;
    va_list ap;
    va_start(ap, first);
    while (n < 15 && (argv[n] = va_arg(ap, char *)))
        n++;
    va_end(ap);
    argv[n] = NULL;
    crawl_run r;
    if (run_crawler(&r, argv, 10) < 0)
        return NULL;
    if (r.exit_code != 0 && strcmp(first, "kill-server") != 0)
        print_message("tmux %s: %s\n", first, crawl_run_describe(&r));
    char *out = r.exit_code == 0 ? r.out : NULL;
    if (out)
        r.out = NULL;
    crawl_run_free(&r);
    return out;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Capture the pane every 50 ms (20 s at most) until it shows `until`; returns that
 * capture (freed by the caller), or NULL. Each capture seen is handed to look. */
static char *watch_pane(const char *until, void (*look)(const char *pane, void *ctx), void *ctx)
{
    for (int i = 0; i < 400; i++) {
        char *pane = tmux("capture-pane", "-p", "-t", "crawl", NULL);
        if (pane && look)
            look(pane, ctx);
        if (pane && strstr(pane, until))
            return pane;
        free(pane);
        sleep_ms(50);
    }
    return NULL;
}

typedef struct seen_progress {
    int width;
    int captures; /* captures with a progress line */
    bool bad;     /* a progress line as wide as the pane: wrapped, or about to */
    char sample[256];
} seen_progress;

static void look_for_progress(const char *pane, void *ctx)
{
    seen_progress *s = ctx;
    for (const char *l = pane; *l;) {
        size_t len = strcspn(l, "\n");
        if (memmem(l, len, " done (", 7)) {
            s->captures++;
            snprintf(s->sample, sizeof s->sample, "%.*s", (int)len, l);
            s->bad |= (int)len >= s->width; /* cut to the width less one column */
        }
        l += len + (l[len] == '\n');
    }
}

/* Run a slow crawl in a pane `width` columns wide; return the final capture. */
static char *crawl_in_pane(int width, const char *url, seen_progress *seen)
{
    char cmd[1024], w[16];
    snprintf(cmd, sizeof cmd,
             "%s --max-tasks 1 --max-tries 1 --ignore-robots --max-pages 50 --format jsonl "
             "--output %s/tty-%d.jsonl %s; echo \"exit $?\"; sleep 60",
             QUEUE, scratch_dir, width, url);
    snprintf(w, sizeof w, "%d", width);
    /* a server that has just been killed may still hold the socket: three tries */
    char *ok = NULL;
    for (int i = 0; i < 3 && !ok; i++) {
        if (i)
            sleep_ms(200);
        ok = tmux("new-session", "-d", "-s", "crawl", "-x", w, "-y", "20", cmd, NULL);
    }
    assert_non_null(ok);
    free(ok);
    seen->width = width;
    char *pane = watch_pane("exit ", look_for_progress, seen);
    if (!pane || !strstr(pane, "exit 0"))
        fail_msg("the crawl in a tmux pane %d wide did not end with exit 0:\n%s", width,
                 pane ? pane : "(no capture shows its end in 20 s)");
    free(tmux("kill-server", NULL));
    return pane;
}

static int kill_tmux(void **state)
{
    free(tmux("kill-server", NULL));
    return stop_site(state);
}

static void test_progress_terminal(void **state)
{
    (void)state;
    snprintf(tmux_socket, sizeof tmux_socket, "%s/tmux.sock", scratch_dir);
    start_site("200");

    /* wide: the whole line, with the share of --max-pages; then erased, the summary */
    seen_progress seen = {0};
    char *pane = crawl_in_pane(200, ts.url, &seen);
    if (seen.captures == 0 || seen.bad)
        fail_msg("progress lines seen in %d captures (last: \"%s\")%s", seen.captures, seen.sample,
                 seen.bad ? ", one wrapped" : "");
    if (!strstr(seen.sample, " in flight, ") || !strstr(seen.sample, "% of --max-pages 50"))
        fail_msg("not the whole progress line: \"%s\"", seen.sample);
    if (strstr(pane, " done (")
        || !strstr(pane,
                   "crawl-queue: by status: 2xx 4, 3xx 1, "
                   "4xx 2, 5xx 1, failed 1, ignored 0"))
        fail_msg("want the progress line erased and the summary:\n%s", pane);
    free(pane);

    /* narrow: cut to 39 columns, never wrapped */
    seen = (seen_progress){0};
    pane = crawl_in_pane(40, ts.url, &seen);
    if (seen.captures == 0 || seen.bad)
        fail_msg("in 40 columns: %d captures with a progress line (last: \"%s\")%s", seen.captures,
                 seen.sample, seen.bad ? ", one too wide or wrapped" : "");
    free(pane);
}

#else

static int kill_tmux(void **state)
{
    return stop_site(state);
}

static void test_progress_terminal(void **state)
{
    (void)state;
    skip(); /* no tmux (scripts/install-deps.sh installs it) */
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_summary_by_class, stop_site),
        cmocka_unit_test_teardown(test_summary_report_on_stdout, stop_site),
        cmocka_unit_test_teardown(test_summary_quiet_and_failed, stop_site),
        cmocka_unit_test_teardown(test_progress_lines, stop_site),
        cmocka_unit_test_teardown(test_progress_terminal, kill_tmux),
    };
    const char *only = getenv("CRAWL_TEST_FILTER"); /* a cmocka glob: some cases */
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
