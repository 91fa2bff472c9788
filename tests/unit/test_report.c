/* test_report.c — the FetchStatistic list and its text and jsonl reports, JSON string
 * escaping, and sorting a large report.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "report.h"

/* ---- helpers ---------------------------------------------------------------- */

typedef struct lines {
    char *buf;   /* the whole output, newlines replaced by NULs */
    size_t size; /* bytes written */
    char **line;
    size_t n;
} lines;

/* Split buf (size bytes, owned) into lines; every line must end in '\n'. */
static lines split_lines(char *buf, size_t size)
{
    lines l = {buf, size, NULL, 0};
    size_t cap = 0;
    for (size_t i = 0; i < size; i++)
        cap += buf[i] == '\n';
    assert_true(size == 0 || buf[size - 1] == '\n');
    l.line = calloc(cap + 1, sizeof *l.line);
    assert_non_null(l.line);
    char *start = buf;
    for (size_t i = 0; i < size; i++)
        if (buf[i] == '\n') {
            buf[i] = '\0';
            l.line[l.n++] = start;
            start = buf + i + 1;
        }
    return l;
}

static void lines_free(lines *l)
{
    free(l->buf);
    free(l->line);
}

enum { TEXT, JSONL };

static lines write_report(report *r, const report_summary *sum, int format)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    if (format == TEXT)
        report_write_text(r, sum, f);
    else
        report_write_jsonl(r, sum, f);
    assert_int_equal(fclose(f), 0);
    return split_lines(buf, size);
}

/* write(f, s) into a malloc'd string (json_write_string, text_write_string). */
static char *written(void (*write)(FILE *, const char *), const char *s)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    write(f, s);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static char *json_of(const char *s)
{
    return written(json_write_string, s);
}

static void assert_json(const char *in, const char *want)
{
    char *got = json_of(in);
    assert_string_equal(got, want);
    free(got);
}

static fetch_stat page(const char *url, int status, const char *type, const char *enc,
                       long long size, int num, int num_new)
{
    fetch_stat st = {0};
    st.url = (char *)url;
    st.status = status;
    st.content_type = (char *)type;
    st.encoding = (char *)enc;
    st.size = size;
    st.num_urls = num;
    st.num_new_urls = num_new;
    return st;
}

static fetch_stat redirect(const char *url, int status, const char *next)
{
    fetch_stat st = {0};
    st.url = (char *)url;
    st.status = status;
    st.next_url = (char *)next;
    return st;
}

static fetch_stat failure(const char *url, int status, const char *exception)
{
    fetch_stat st = {0};
    st.url = (char *)url;
    st.status = status;
    st.exception = (char *)exception;
    return st;
}

/* One of each kind of line, added out of order. */
static report *sample_report(void)
{
    report *r = report_new();
    assert_non_null(r);
    fetch_stat recs[] = {
        page("http://a/c", 200, "text/html", "utf-8", 100, 5, 3),
        failure("http://a/f", 200, "body truncated at 5 bytes (--max-size)"),
        redirect("http://a/a", 301, "http://a/b"),
        page("http://a/g", 500, NULL, NULL, 0, 0, 0),
        failure("http://a/b", -1, "connection refused"),
        page("http://a/e", 404, "text/plain", "utf-8", 10, 0, 0),
        page("http://a/d", 200, "image/png", NULL, 50, 0, 0),
    };
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++)
        report_add(r, &recs[i]);
    return r;
}

static const report_summary sample_summary = {
    .seconds = 2.0,
    .max_tasks = 4,
    .todo = 3,
    .stage = "queue",
    .transport = "curl",
    .selector = "epoll",
    .peak_in_flight = 4,
    .interrupted = 0,
};

/* ---- the record list --------------------------------------------------------- */

static void test_add_copies_strings(void **state)
{
    (void)state;
    report *r = report_new();
    char url[] = "http://x/";
    char exc[] = "timed out";
    fetch_stat st = failure(url, -1, exc);
    report_add(r, &st);
    url[7] = 'y';
    exc[0] = 'T';
    assert_int_equal(report_count(r), 1);
    const fetch_stat *got = report_get(r, 0);
    assert_non_null(got);
    assert_string_equal(got->url, "http://x/");
    assert_string_equal(got->exception, "timed out");
    assert_ptr_not_equal(got->url, url);
    assert_null(got->next_url);
    assert_null(got->content_type);
    assert_int_equal(got->status, -1);
    assert_null(report_get(r, 1));
    report_free(r);
}

static void test_null_arguments(void **state)
{
    (void)state;
    fetch_stat st = page("http://x/", 200, "text/html", "utf-8", 1, 0, 0);
    report_add(NULL, &st);
    report *r = report_new();
    report_add(r, NULL);
    assert_int_equal(report_count(r), 0);
    assert_int_equal(report_count(NULL), 0);
    assert_null(report_get(NULL, 0));
    /* A record without a url is kept and printed as Python's None / JSON null. */
    fetch_stat nourl = page(NULL, 200, "text/html", "utf-8", 1, 0, 0);
    report_add(r, &nourl);
    lines t = write_report(r, NULL, TEXT);
    assert_string_equal(t.line[1], "None 200 text/html utf-8 1 0/0");
    lines_free(&t);
    lines j = write_report(r, NULL, JSONL);
    assert_int_equal(j.n, 2);
    assert_true(strncmp(j.line[0], "{\"url\": null, ", 14) == 0);
    lines_free(&j);
    report_free(r);
    report_free(NULL);
}

/* ---- text ------------------------------------------------------------------- */

static void test_text_report(void **state)
{
    (void)state;
    report *r = sample_report();
    lines l = write_report(r, &sample_summary, TEXT);
    const char *want[] = {
        "*** Report ***",
        "http://a/a 301 redirect http://a/b",
        "http://a/b error connection refused",
        "http://a/c 200 text/html utf-8 100 3/5",
        "http://a/d 200 image/png None 50 0/0",
        "http://a/e 404 text/plain utf-8 10 0/0",
        "http://a/f error body truncated at 5 bytes (--max-size)",
        "http://a/g 500 None None 0 0/0",
        "Finished 7 urls in 2.000 secs (max_tasks=4) (0.875 urls/sec/task)",
        "         2 error",
        "        10 error_bytes",
        "         2 fail",
        "         1 html",
        "       100 html_bytes",
        "         1 other",
        "        50 other_bytes",
        "         1 redirect",
        "         1 status_404",
        "         1 status_500",
        "Todo: 3",
        "Done: 7",
    };
    size_t nwant = sizeof want / sizeof want[0];
    assert_int_equal(l.n, nwant + 1);
    for (size_t i = 0; i < nwant; i++)
        assert_string_equal(l.line[i], want[i]);
    /* "Date: Wed Jun 30 21:49:08 1993 local time": ctime's 24 characters. */
    const char *date = l.line[nwant];
    assert_int_equal(strlen(date), strlen("Date: ") + 24 + strlen(" local time"));
    assert_true(strncmp(date, "Date: ", 6) == 0);
    assert_string_equal(date + 6 + 24, " local time");
    lines_free(&l);

    /* Writing does not reorder the records themselves. */
    assert_string_equal(report_get(r, 0)->url, "http://a/c");
    report_free(r);
}

static void test_text_interrupted_and_zero_time(void **state)
{
    (void)state;
    report *r = report_new();
    fetch_stat st = page("http://a/", 200, "text/html", "utf-8", 7, 2, 2);
    report_add(r, &st);
    report_summary sum = sample_summary;
    sum.interrupted = 1;
    sum.seconds = 0;
    sum.todo = 12;
    lines l = write_report(r, &sum, TEXT);
    assert_string_equal(l.line[1], "http://a/ 200 text/html utf-8 7 2/2");
    assert_string_equal(l.line[2], "Interrupted");
    assert_string_equal(l.line[3],
                        "Finished 1 urls in 0.000 secs (max_tasks=4) (0.000 urls/sec/task)");
    assert_string_equal(l.line[4], "         1 html");
    assert_string_equal(l.line[5], "         7 html_bytes");
    assert_string_equal(l.line[6], "Todo: 12");
    assert_string_equal(l.line[7], "Done: 1");
    lines_free(&l);
    report_free(r);
}

static void test_text_empty(void **state)
{
    (void)state;
    report *r = report_new();
    report_summary sum = {.seconds = 1.5, .max_tasks = 0};
    lines l = write_report(r, &sum, TEXT);
    assert_int_equal(l.n, 5);
    assert_string_equal(l.line[0], "*** Report ***");
    assert_string_equal(l.line[1],
                        "Finished 0 urls in 1.500 secs (max_tasks=0) (0.000 urls/sec/task)");
    assert_string_equal(l.line[2], "Todo: 0");
    assert_string_equal(l.line[3], "Done: 0");
    lines_free(&l);
    report_free(r);
}

/* ---- jsonl ------------------------------------------------------------------ */

static void test_jsonl_report(void **state)
{
    (void)state;
    report *r = sample_report();
    lines l = write_report(r, &sample_summary, JSONL);
    assert_int_equal(l.n, 8);
    assert_string_equal(
        l.line[0],
        "{\"url\": \"http://a/a\", \"next_url\": \"http://a/b\", \"status\": 301, "
        "\"exception\": null, \"size\": 0, \"content_type\": null, \"encoding\": null, "
        "\"num_urls\": 0, \"num_new_urls\": 0}");
    assert_string_equal(
        l.line[1],
        "{\"url\": \"http://a/b\", \"next_url\": null, \"status\": null, "
        "\"exception\": \"connection refused\", \"size\": 0, \"content_type\": null, "
        "\"encoding\": null, \"num_urls\": 0, \"num_new_urls\": 0}");
    assert_string_equal(l.line[2],
                        "{\"url\": \"http://a/c\", \"next_url\": null, \"status\": 200, "
                        "\"exception\": null, \"size\": 100, \"content_type\": \"text/html\", "
                        "\"encoding\": \"utf-8\", \"num_urls\": 5, \"num_new_urls\": 3}");
    assert_string_equal(
        l.line[5],
        "{\"url\": \"http://a/f\", \"next_url\": null, \"status\": 200, "
        "\"exception\": \"body truncated at 5 bytes (--max-size)\", \"size\": 0, "
        "\"content_type\": null, \"encoding\": null, \"num_urls\": 0, \"num_new_urls\": 0}");
    for (size_t i = 0; i + 2 < l.n; i++)
        assert_true(strcmp(l.line[i], l.line[i + 1]) < 0);
    assert_string_equal(
        l.line[7],
        "{\"summary\": {\"done\": 7, \"seconds\": 2.000, \"max_tasks\": 4, "
        "\"urls_per_sec\": 3.500, \"todo\": 3, \"stage\": \"queue\", \"transport\": \"curl\", "
        "\"selector\": \"epoll\", \"peak_in_flight\": 4, \"interrupted\": false}}");
    lines_free(&l);
    report_free(r);
}

/* crawl-queue's records say when (RFC 3339, UTC, milliseconds) and how long (null: no
 * response came); the chapter's have no such keys. */
static void test_jsonl_times(void **state)
{
    (void)state;
    fetch_stat st = {.url = "https://a/", .status = 200, .size = 1, .with_times = true};
    st.at = (struct timespec){1796297400, 123456789}; /* 2026-12-03T11:30:00.123Z */
    report_utc_time(&st.at, st.fetched_at, sizeof st.fetched_at);
    assert_string_equal(st.fetched_at, "2026-12-03T11:30:00.123Z");
    const double elapsed[] = {0.25, -1};
    const char *want[] = {
        "{\"url\": \"https://a/\", \"next_url\": null, \"status\": 200, \"exception\": null, "
        "\"size\": 1, \"content_type\": null, \"encoding\": null, \"num_urls\": 0, "
        "\"num_new_urls\": 0, \"fetched_at\": \"2026-12-03T11:30:00.123Z\", \"elapsed\": "
        "0.250000}\n",
        "{\"url\": \"https://a/\", \"next_url\": null, \"status\": 200, \"exception\": null, "
        "\"size\": 1, \"content_type\": null, \"encoding\": null, \"num_urls\": 0, "
        "\"num_new_urls\": 0, \"fetched_at\": \"2026-12-03T11:30:00.123Z\", \"elapsed\": "
        "null}\n"};
    for (int i = 0; i < 2; i++) {
        st.elapsed = elapsed[i];
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        assert_non_null(f);
        report_write_jsonl_record(&st, f);
        assert_int_equal(fclose(f), 0);
        assert_string_equal(buf, want[i]);
        free(buf);
    }
}

/* crawl-queue's records end with "http_version" (null when no response came); the
 * chapter's have no such key. */
static void test_jsonl_http_version(void **state)
{
    (void)state;
    fetch_stat st = {.url = "https://a/", .status = 200, .size = 1};
    const char *want[] = {
        "{\"url\": \"https://a/\", \"next_url\": null, \"status\": 200, \"exception\": null, "
        "\"size\": 1, \"content_type\": null, \"encoding\": null, \"num_urls\": 0, "
        "\"num_new_urls\": 0}\n",
        "{\"url\": \"https://a/\", \"next_url\": null, \"status\": 200, \"exception\": null, "
        "\"size\": 1, \"content_type\": null, \"encoding\": null, \"num_urls\": 0, "
        "\"num_new_urls\": 0, \"http_version\": \"HTTP/2\"}\n",
        "{\"url\": \"https://a/\", \"next_url\": null, \"status\": 200, \"exception\": null, "
        "\"size\": 1, \"content_type\": null, \"encoding\": null, \"num_urls\": 0, "
        "\"num_new_urls\": 0, \"http_version\": null}\n"};
    for (int i = 0; i < 3; i++) {
        st.with_http_version = i > 0;
        snprintf(st.http_version, sizeof st.http_version, "%s", i == 1 ? "HTTP/2" : "");
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        assert_non_null(f);
        report_write_jsonl_record(&st, f);
        assert_int_equal(fclose(f), 0);
        assert_string_equal(buf, want[i]);
        free(buf);
    }
}

static void test_jsonl_summary_edge_cases(void **state)
{
    (void)state;
    report *r = report_new();
    report_summary sum = {.seconds = 0, .max_tasks = 10, .interrupted = 1};
    lines l = write_report(r, &sum, JSONL);
    assert_int_equal(l.n, 1);
    assert_string_equal(
        l.line[0],
        "{\"summary\": {\"done\": 0, \"seconds\": 0.000, \"max_tasks\": 10, "
        "\"urls_per_sec\": 0.000, \"todo\": 0, \"stage\": null, \"transport\": null, "
        "\"selector\": null, \"peak_in_flight\": 0, \"interrupted\": true}}");
    lines_free(&l);
    report_free(r);
}

/* A crawler's own fields (written only when asked, after the nine) and its counters
 * (after the summary's own keys; in the text report, a line each after Done). */
static void test_extra_fields_and_counters(void **state)
{
    (void)state;
    report *r = report_new();
    fetch_stat a = {.url = "http://x/a",
                    .status = 200,
                    .referrer = "http://x/",
                    .depth = 2,
                    .requisite = 1,
                    .extra = FETCH_STAT_DEPTH | FETCH_STAT_REFERRER | FETCH_STAT_REQUISITE};
    fetch_stat b = {.url = "http://x/b",
                    .status = 200,
                    .depth = 0,
                    .extra = FETCH_STAT_DEPTH | FETCH_STAT_REFERRER};
    fetch_stat c = {.url = "http://x/c", .status = 200, .depth = 5, .referrer = "http://x/"};
    report_add(r, &a);
    report_add(r, &b);
    report_add(r, &c);
    report_counter counts[] = {{"dropped_depth", 7}, {"other", 0}};
    report_summary sum = {.max_tasks = 1, .counts = counts, .ncounts = 2};
    lines l = write_report(r, &sum, JSONL);
    assert_int_equal(l.n, 4);
    assert_non_null(strstr(l.line[0],
                           "\"num_new_urls\": 0, \"depth\": 2, "
                           "\"referrer\": \"http://x/\", \"requisite\": true}"));
    assert_non_null(strstr(l.line[1],
                           "\"num_new_urls\": 0, \"depth\": 0, "
                           "\"referrer\": null}"));
    assert_non_null(strstr(l.line[2], "\"num_new_urls\": 0}"));
    assert_non_null(strstr(l.line[3],
                           "\"interrupted\": false, \"dropped_depth\": 7, "
                           "\"other\": 0}}"));
    lines_free(&l);
    l = write_report(r, &sum, TEXT);
    int seen = 0;
    for (size_t i = 0; i + 1 < l.n; i++)
        if (strcmp(l.line[i], "dropped_depth: 7") == 0 && strcmp(l.line[i + 1], "other: 0") == 0)
            seen = 1;
    assert_true(seen);
    lines_free(&l);
    report_free(r);
}

/* ---- JSON strings ----------------------------------------------------------- */

static void test_json_plain_and_null(void **state)
{
    (void)state;
    assert_json("", "\"\"");
    assert_json("http://a/b?c=d&e", "\"http://a/b?c=d&e\"");
    assert_json(NULL, "null");
    json_write_string(NULL, "x"); /* no stream: nothing happens */
}

static void test_json_escapes(void **state)
{
    (void)state;
    assert_json("say \"hi\"", "\"say \\\"hi\\\"\"");
    assert_json("a\\b", "\"a\\\\b\"");
    assert_json("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
    assert_json("\x01\x1f"
                "x\x7f",
                "\"\\u0001\\u001fx\\u007f\"");
    assert_json("/", "\"/\"");
}

static void test_json_valid_utf8_passes(void **state)
{
    (void)state;
    /* é (2 bytes), € (3), U+D7FF (last before surrogates), U+1F600 (4), U+10FFFF. */
    assert_json("caf\xc3\xa9", "\"caf\xc3\xa9\"");
    assert_json("\xe2\x82\xac", "\"\xe2\x82\xac\"");
    assert_json("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");
    assert_json("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
    assert_json("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");
}

static void test_json_invalid_utf8_escaped(void **state)
{
    (void)state;
    /* Stray continuation byte, and a lone 0xff. */
    assert_json("a\x80z", "\"a\\u0080z\"");
    assert_json("\xff", "\"\\u00ff\"");
    /* Overlong '/' (C0 AF) and overlong 3-byte (E0 80 AF). */
    assert_json("\xc0\xaf", "\"\\u00c0\\u00af\"");
    assert_json("\xe0\x80\xaf", "\"\\u00e0\\u0080\\u00af\"");
    /* A surrogate (U+D800) and a code point above U+10FFFF. */
    assert_json("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");
    assert_json("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"");
    /* Truncated sequences: at the end of the string, and before an ASCII byte. */
    assert_json("\xe2\x82", "\"\\u00e2\\u0082\"");
    assert_json("\xf0\x9f\x98", "\"\\u00f0\\u009f\\u0098\"");
    assert_json("\xc3"
                "A",
                "\"\\u00c3A\"");
    /* A bad lead byte followed by a valid sequence: only the bad byte is escaped. */
    assert_json("\xf8\xc3\xa9", "\"\\u00f8\xc3\xa9\"");
}

/* in: the 255 non-NUL bytes in order, as one string. */
static void every_byte(char in[256])
{
    for (int i = 1; i < 256; i++)
        in[i - 1] = (char)i;
    in[255] = '\0';
}

static void test_json_every_byte_gives_json(void **state)
{
    (void)state;
    /* All 255 non-NUL bytes in one string: the output must be printable ASCII
     * apart from valid UTF-8, i.e. no raw control characters. */
    char in[256];
    every_byte(in);
    char *out = json_of(in);
    size_t len = strlen(out);
    assert_true(len > 255);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)out[i];
        assert_true(c >= 0x20 && c < 0x7f); /* every byte >= 0x80 here is invalid */
    }
    assert_non_null(strstr(out, "\\u0080\\u0081"));
    free(out);
}

/* json_line_url reads back what json_write_string wrote, whatever the bytes: the
 * 255 non-NUL bytes, valid UTF-8 and not; and refuses what it never writes. */
static void test_json_line_url_reads_back(void **state)
{
    (void)state;
    char in[256];
    every_byte(in);
    const char *urls[] = {in, "http://a/b?c=d", "caf\xc3\xa9 \"q\" \\ \n", "\xf8\xc3\xa9"};
    for (size_t u = 0; u < sizeof urls / sizeof *urls; u++) {
        char *lit = json_of(urls[u]);
        char *line = xasprintf("{\"url\": %s, \"status\": 200}", lit);
        size_t len = strlen(line), after = 0;
        char *out = malloc(len);
        assert_non_null(out);
        assert_int_equal(json_line_url(line, len, out, &after), (long)strlen(urls[u]));
        assert_string_equal(out, urls[u]);
        assert_int_equal(after, strlen("{\"url\": ") + strlen(lit));
        assert_int_equal(line[after], ',');
        free(out);
        free(line);
        free(lit);
    }
    static const char *bad[] = {
        "{\"summary\": {}}",        /* no record */
        "{\"url\": \"http://a/",    /* no closing quote */
        "{\"url\": \"a\\u0000b\"}", /* NUL: never written */
        "{\"url\": \"a\\/b\"}",     /* \/: never written */
        "{\"url\": \"a\\u01ffb\"}", /* only \u00XX */
        "{\"url\": \"a\\u00g0b\"}", /* not hex */
        "{\"url\": \"a\\",          /* an escape cut */
        "{\"url\": \"a\\u00f",      /* \u00XX cut */
    };
    char out[64];
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++)
        assert_int_equal(json_line_url(bad[b], strlen(bad[b]), out, NULL), -1);
}

/* ---- text: nothing a terminal would obey ------------------------------------- */

static char *text_of(const char *s)
{
    return written(text_write_string, s);
}

static void assert_text(const char *in, const char *want)
{
    char *got = text_of(in);
    assert_string_equal(got, want);
    free(got);
}

static void test_text_escapes(void **state)
{
    (void)state;
    assert_text("http://a/b?c=d&e", "http://a/b?c=d&e");
    assert_text("\x1b[2J\x1b]0;owned\x07", "\\x1b[2J\\x1b]0;owned\\x07");
    assert_text("a\rb\nc\td\x7f", "a\\x0db\\x0ac\\x09d\\x7f");
    assert_text("back\\slash", "back\\\\slash");
    assert_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    /* invalid UTF-8: each bad byte */
    assert_text("a\x80z\xff\xc3", "a\\x80z\\xff\\xc3");
    assert_text("\xed\xa0\x80", "\\xed\\xa0\\x80");
    /* C1 controls (CSI is U+009B) and bidi overrides, valid UTF-8 but not safe */
    assert_text("\xc2\x9b"
                "2J",
                "\\u009b2J");
    assert_text("\xc2\x85\xc2\xa0", "\\u0085\xc2\xa0");
    assert_text("a\xe2\x80\xae"
                "b\xe2\x81\xa6"
                "c\xe2\x80\xa9",
                "a\\u202eb\\u2066c\xe2\x80\xa9");
    text_write_string(NULL, "x"); /* no stream: nothing happens */
}

/* Every byte from 1 to 255 in one string: no control byte and no bad UTF-8 comes out. */
static void test_text_every_byte(void **state)
{
    (void)state;
    char in[256];
    every_byte(in);
    char *out = text_of(in);
    for (const unsigned char *p = (const unsigned char *)out; *p; p++)
        assert_true(*p >= 0x20 && *p < 0x7f); /* alone, every byte >= 0x80 is bad */
    free(out);
}

/* The text report escapes every field that came from a server. */
static void test_text_report_escapes_fields(void **state)
{
    (void)state;
    report *r = report_new();
    fetch_stat recs[] = {
        page("http://a/1", 200, "text/\x1b[2Jhtml", "utf-8\x1b]0;x\x07", 5, 0, 0),
        redirect("http://a/2", 302, "http://a/\x1b[31m"),
        failure("http://a/3", 301, "redirect to unparseable Location '\x1b[2J\xff'"),
        page("http://a/4\x9b", 200, "text/plain", "utf-8", 1, 0, 0),
    };
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++)
        report_add(r, &recs[i]);
    lines l = write_report(r, &sample_summary, TEXT);
    assert_string_equal(l.line[1], "http://a/1 200 text/\\x1b[2Jhtml utf-8\\x1b]0;x\\x07 5 0/0");
    assert_string_equal(l.line[2], "http://a/2 302 redirect http://a/\\x1b[31m");
    assert_string_equal(l.line[3],
                        "http://a/3 error redirect to unparseable Location "
                        "'\\x1b[2J\\xff'");
    assert_string_equal(l.line[4], "http://a/4\\x9b 200 text/plain utf-8 1 0/0");
    for (size_t i = 0; i < l.size; i++)
        assert_true(l.buf[i] == '\0' || (unsigned char)l.buf[i] >= 0x20);
    lines_free(&l);
    report_free(r);
}

/* ---- size ------------------------------------------------------------------- */

enum { MANY = 100000 };

static void test_many_records_sorted(void **state)
{
    (void)state;
    report *r = report_new();
    /* A permutation of 0..MANY-1: 7919 is prime and does not divide MANY. */
    char url[64];
    for (unsigned i = 0; i < MANY; i++) {
        unsigned k = (unsigned)(((unsigned long long)i * 7919) % MANY);
        snprintf(url, sizeof url, "http://h/%06u", k);
        fetch_stat st = page(url, 200, "text/html", "utf-8", k, 0, 0);
        report_add(r, &st);
    }
    assert_int_equal(report_count(r), MANY);

    lines t = write_report(r, &sample_summary, TEXT);
    assert_int_equal(t.n, 1 + MANY + 1 + 2 + 3);
    char want[96];
    for (unsigned i = 0; i < MANY; i++) {
        snprintf(want, sizeof want, "http://h/%06u 200 text/html utf-8 %u 0/0", i, i);
        if (strcmp(t.line[1 + i], want) != 0)
            assert_string_equal(t.line[1 + i], want);
    }
    assert_string_equal(t.line[MANY + 2], "    100000 html");
    assert_string_equal(t.line[MANY + 3], "4999950000 html_bytes");
    lines_free(&t);

    lines j = write_report(r, &sample_summary, JSONL);
    assert_int_equal(j.n, MANY + 1);
    for (unsigned i = 0; i + 1 < MANY; i++)
        if (strcmp(j.line[i], j.line[i + 1]) >= 0)
            fail_msg("line %u out of order", i);
    assert_true(strncmp(j.line[MANY], "{\"summary\": {\"done\": 100000, ", 29) == 0);
    lines_free(&j);
    report_free(r);
}

static void test_duplicate_urls_keep_insertion_order(void **state)
{
    (void)state;
    report *r = report_new();
    fetch_stat a = failure("http://d/", -1, "first");
    fetch_stat b = failure("http://d/", -1, "second");
    fetch_stat c = failure("http://c/", -1, "third");
    report_add(r, &a);
    report_add(r, &b);
    report_add(r, &c);
    lines l = write_report(r, NULL, TEXT);
    assert_string_equal(l.line[1], "http://c/ error third");
    assert_string_equal(l.line[2], "http://d/ error first");
    assert_string_equal(l.line[3], "http://d/ error second");
    lines_free(&l);
    report_free(r);
}

/* ---- the tally: records by status class --------------------------------------- */

static void test_tally_classes(void **state)
{
    (void)state;
    assert_int_equal(tally_class_of(200, NULL), TALLY_2XX);
    assert_int_equal(tally_class_of(204, NULL), TALLY_2XX);
    assert_int_equal(tally_class_of(200, "body truncated at 5 bytes (--max-size)"), TALLY_2XX);
    assert_int_equal(tally_class_of(301, NULL), TALLY_3XX);
    assert_int_equal(tally_class_of(304, NULL), TALLY_3XX);
    assert_int_equal(tally_class_of(302, "redirect without Location"), TALLY_3XX);
    assert_int_equal(tally_class_of(404, NULL), TALLY_4XX);
    assert_int_equal(tally_class_of(499, NULL), TALLY_4XX);
    assert_int_equal(tally_class_of(500, NULL), TALLY_5XX);
    assert_int_equal(tally_class_of(599, NULL), TALLY_5XX);
    assert_int_equal(tally_class_of(-1, "connection refused"), TALLY_FAILED);
    assert_int_equal(tally_class_of(-1, NULL), TALLY_FAILED);
    assert_int_equal(tally_class_of(-1, "IgnoreRequest: forbidden by robots.txt"), TALLY_IGNORED);
    assert_int_equal(tally_class_of(-1, "not IgnoreRequest: x"), TALLY_FAILED);
    assert_int_equal(tally_class_of(199, NULL), TALLY_OTHER);
    assert_int_equal(tally_class_of(600, NULL), TALLY_OTHER);
    assert_int_equal(tally_class_of(999, NULL), TALLY_OTHER);
    assert_string_equal(tally_class_name(TALLY_2XX), "2xx");
    assert_string_equal(tally_class_name(TALLY_IGNORED), "ignored");
    assert_string_equal(tally_class_name(TALLY_NCLASSES), "?");
}

static char *tally_text(const tally *t, bool json)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    if (json)
        tally_write_json(t, f);
    else
        tally_write_text(t, f);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void test_tally_counts_and_writes(void **state)
{
    (void)state;
    tally t = {0};
    char *s = tally_text(&t, true);
    assert_string_equal(s,
                        ", \"by_status\": {\"2xx\": 0, \"3xx\": 0, \"4xx\": 0, "
                        "\"5xx\": 0, \"failed\": 0, \"ignored\": 0}, "
                        "\"bytes_received\": 0");
    free(s);
    tally_add(&t, 200, NULL, 1000);
    tally_add(&t, 200, NULL, 24);
    tally_add(&t, 301, NULL, 0);
    tally_add(&t, 404, NULL, 100);
    tally_add(&t, 503, NULL, 7);
    tally_add(&t, -1, "timed out", 0);
    tally_add(&t, -1, "IgnoreRequest: forbidden by robots.txt", 0);
    tally_add(&t, 700, NULL, 3);
    assert_int_equal(tally_total(&t), 8);
    assert_int_equal(t.bytes, 1134);
    s = tally_text(&t, true);
    assert_string_equal(s,
                        ", \"by_status\": {\"2xx\": 2, \"3xx\": 1, \"4xx\": 1, "
                        "\"5xx\": 1, \"failed\": 1, \"ignored\": 1, \"other\": 1}, "
                        "\"bytes_received\": 1134");
    free(s);
    s = tally_text(&t, false);
    assert_string_equal(s, "2xx 2, 3xx 1, 4xx 1, 5xx 1, failed 1, ignored 1, other 1");
    free(s);
}

/* The summary line carries the tally after the selector; without one, none. */
static void test_jsonl_summary_tally(void **state)
{
    (void)state;
    report *r = report_new();
    tally t = {0};
    tally_add(&t, 200, NULL, 10);
    tally_add(&t, -1, "refused", 0);
    report_summary sum = {.seconds = 1, .max_tasks = 2, .tally = &t};
    lines l = write_report(r, &sum, JSONL);
    assert_int_equal(l.n, 1);
    assert_string_equal(
        l.line[0],
        "{\"summary\": {\"done\": 0, \"seconds\": 1.000, \"max_tasks\": 2, "
        "\"urls_per_sec\": 0.000, \"todo\": 0, \"stage\": null, \"transport\": null, "
        "\"selector\": null, \"by_status\": {\"2xx\": 1, \"3xx\": 0, \"4xx\": 0, "
        "\"5xx\": 0, \"failed\": 1, \"ignored\": 0}, \"bytes_received\": 10, "
        "\"peak_in_flight\": 0, \"interrupted\": false}}");
    lines_free(&l);
    report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_copies_strings),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_text_report),
        cmocka_unit_test(test_text_interrupted_and_zero_time),
        cmocka_unit_test(test_text_empty),
        cmocka_unit_test(test_text_escapes),
        cmocka_unit_test(test_text_every_byte),
        cmocka_unit_test(test_text_report_escapes_fields),
        cmocka_unit_test(test_jsonl_report),
        cmocka_unit_test(test_jsonl_summary_edge_cases),
        cmocka_unit_test(test_extra_fields_and_counters),
        cmocka_unit_test(test_jsonl_http_version),
        cmocka_unit_test(test_jsonl_times),
        cmocka_unit_test(test_json_plain_and_null),
        cmocka_unit_test(test_json_escapes),
        cmocka_unit_test(test_json_valid_utf8_passes),
        cmocka_unit_test(test_json_invalid_utf8_escaped),
        cmocka_unit_test(test_json_every_byte_gives_json),
        cmocka_unit_test(test_json_line_url_reads_back),
        cmocka_unit_test(test_many_records_sorted),
        cmocka_unit_test(test_duplicate_urls_keep_insertion_order),
        cmocka_unit_test(test_tally_classes),
        cmocka_unit_test(test_tally_counts_and_writes),
        cmocka_unit_test(test_jsonl_summary_tally),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
