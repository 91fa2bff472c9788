/* test_crawl.c — the shared crawl core (common/core/crawl.c) without any network: responses
 * are played into a crawl_fetch's sink by hand, add_url calls are collected, and the
 * FetchStatistic records are read back from the report. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include "alloc.h"
#include "crawl.h"
#include "fnvflood.h"
#include "hash.h"
#include "recstream.h"

#define ROOT     "http://example.com/"
#define MAX_ADDS 64

/* What the core asked the "stage" to schedule, in order. */
typedef struct added {
    int n;
    char *url[MAX_ADDS];
    int max_redirect[MAX_ADDS];
    int depth[MAX_ADDS];
    char *referrer[MAX_ADDS]; /* NULL when none */
    char *callback[MAX_ADDS];
} added;

static void collect(void *ctx, const crawl_request *r)
{
    added *a = ctx;
    assert_true(a->n < MAX_ADDS);
    a->url[a->n] = strdup(r->url);
    a->max_redirect[a->n] = r->max_redirect;
    a->depth[a->n] = r->depth;
    a->referrer[a->n] = r->referrer ? strdup(r->referrer) : NULL;
    a->callback[a->n++] = r->callback ? strdup(r->callback) : NULL;
}

static void added_clear(added *a)
{
    for (int i = 0; i < a->n; i++) {
        free(a->url[i]);
        free(a->referrer[i]);
        free(a->callback[i]);
    }
    a->n = 0;
}

/* An attempt at url as a root's would be: depth 0, no referrer, no callback. */
static crawl_fetch *new_fetch(crawl *c, const char *url, int max_redirect)
{
    crawl_request r = {url, max_redirect, 0, NULL, NULL};
    return crawl_fetch_new(c, &r);
}

typedef struct fixture {
    crawl_options o;
    char *roots[4];
    crawl *c;
    added adds;
} fixture;

static void default_options(fixture *fx)
{
    memset(&fx->o, 0, sizeof fx->o);
    fx->roots[0] = "example.com";
    fx->o.roots = fx->roots;
    fx->o.nroots = 1;
    fx->o.max_tasks = 10;
    fx->o.max_redirect = 10;
    fx->o.max_tries = 4;
    fx->o.strict = 1;
    fx->o.format = "text";
    fx->o.timeout = 30;
    fx->o.max_size = 16 << 20;
}

/* Create the file named by the mkstemp template path. */
static void make_temp_file(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

static void start(fixture *fx)
{
    char err[256] = "";
    fx->c = crawl_new(&fx->o, "queue", err, sizeof err);
    assert_non_null(fx->c);
    crawl_add_roots(fx->c, collect, &fx->adds);
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    default_options(fx);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    crawl_free(fx->c);
    added_clear(&fx->adds);
    free(fx);
    return 0;
}

/* Play a response into f's sink: the head, then the body in small chunks. */
static void respond(crawl_fetch *f, int status, const char *content_type, const char *location,
                    const char *body)
{
    const http_sink *s = crawl_fetch_sink(f);
    size_t len = body ? strlen(body) : 0;
    http_head h = {status, content_type, location, body ? (long long)len : -1, NULL};
    s->on_head(s->ctx, &h);
    for (size_t off = 0; off < len; off += 7)
        s->on_body(s->ctx, body + off, len - off < 7 ? len - off : 7);
}

/* One whole fetch of url, as a stage does it. */
static void fetch(fixture *fx, const char *url, int max_redirect, int status,
                  const char *content_type, const char *location, const char *body)
{
    crawl_fetch *f = new_fetch(fx->c, url, max_redirect);
    assert_non_null(f);
    respond(f, status, content_type, location, body);
    crawl_fetch_done(f, collect, &fx->adds);
}

static const fetch_stat *stat_of(const crawl *c, const char *url)
{
    const report *r = crawl_report(c);
    for (size_t i = 0; i < report_count(r); i++)
        if (strcmp(report_get(r, i)->url, url) == 0)
            return report_get(r, i);
    fail_msg("no record for %s", url);
    return NULL;
}

static void assert_str_or_null(const char *got, const char *want)
{
    if (want)
        assert_string_equal(got, want);
    else
        assert_null(got);
}

/* ---- roots ------------------------------------------------------------------------- */

static void test_roots_added_once(void **state)
{
    fixture *fx = *state;
    fx->roots[1] = "http://EXAMPLE.com";
    fx->roots[2] = "http://example.com/";
    fx->roots[3] = "https://other.org/start";
    fx->o.nroots = 4;
    fx->o.max_redirect = 7;
    start(fx);
    assert_int_equal(fx->adds.n, 2);
    assert_string_equal(fx->adds.url[0], ROOT);
    assert_int_equal(fx->adds.max_redirect[0], 7);
    assert_string_equal(fx->adds.url[1], "https://other.org/start");
    assert_int_equal(crawl_seen_count(fx->c), 2);
    assert_int_equal(crawl_done_count(fx->c), 0);
}

/* ---- what travels with a URL -------------------------------------------------------- */

/* A root: depth 0, no referrer. A page's links: one deeper, the page as referrer, no
 * callback. A redirect target: as deep as the URL that redirected, which is its
 * referrer, with that URL's callback and one redirect less. */
static void test_request_depth_and_referrer(void **state)
{
    fixture *fx = *state;
    start(fx);
    assert_int_equal(fx->adds.n, 1);
    assert_int_equal(fx->adds.depth[0], 0);
    assert_null(fx->adds.referrer[0]);
    assert_null(fx->adds.callback[0]);

    crawl_request page = {ROOT, 10, 2, "http://example.com/up", "parse_page"};
    crawl_fetch *f = crawl_fetch_new(fx->c, &page);
    respond(f, 200, "text/html", NULL, "<a href=\"/a\">a</a>");
    crawl_fetch_done(f, collect, &fx->adds);
    assert_int_equal(fx->adds.n, 2);
    assert_string_equal(fx->adds.url[1], "http://example.com/a");
    assert_int_equal(fx->adds.depth[1], 3);
    assert_string_equal(fx->adds.referrer[1], ROOT);
    assert_null(fx->adds.callback[1]);

    crawl_request moved = {"http://example.com/a", 4, 3, ROOT, "parse_page"};
    f = crawl_fetch_new(fx->c, &moved);
    respond(f, 301, "text/html", "/b", NULL);
    crawl_fetch_done(f, collect, &fx->adds);
    assert_int_equal(fx->adds.n, 3);
    assert_string_equal(fx->adds.url[2], "http://example.com/b");
    assert_int_equal(fx->adds.max_redirect[2], 3);
    assert_int_equal(fx->adds.depth[2], 3);
    assert_string_equal(fx->adds.referrer[2], "http://example.com/a");
    assert_string_equal(fx->adds.callback[2], "parse_page");
}

/* ---- pages ------------------------------------------------------------------------- */

static const char page_root[] =
    "<html><body>\n"
    "<a href=\"/a\">a</a> <a href=\"b.html\">b</a> <a href=\"http://other.org/x\">off</a>\n"
    "<a href=\"mailto:me@example.com\">mail</a> <a href=\"/a#frag\">a again</a>\n"
    "<a href=\"/a\">dup</a> <a href=\"/\">home</a> <a href=\"#top\">top</a>\n"
    "<a href=\"http://www.example.com/d\">www</a>\n"
    "</body></html>\n";

static void test_page_links(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, ROOT, 10, 200, "text/html", NULL, page_root);

    const fetch_stat *st = stat_of(fx->c, ROOT);
    assert_int_equal(st->status, 200);
    assert_null(st->next_url);
    assert_null(st->exception);
    assert_int_equal(st->size, (long long)strlen(page_root));
    assert_string_equal(st->content_type, "text/html");
    assert_string_equal(st->encoding, "utf-8");
    /* /a, /b.html, / and www.example.com/d; / is the root, already seen */
    assert_int_equal(st->num_urls, 4);
    assert_int_equal(st->num_new_urls, 3);

    assert_int_equal(fx->adds.n, 4); /* the root, then the new links in order */
    assert_string_equal(fx->adds.url[1], "http://example.com/a");
    assert_string_equal(fx->adds.url[2], "http://example.com/b.html");
    assert_string_equal(fx->adds.url[3], "http://www.example.com/d");
    for (int i = 1; i < 4; i++)
        assert_int_equal(fx->adds.max_redirect[i], 10);
    assert_int_equal(crawl_done_count(fx->c), 1);
}

static void test_second_page_counts_only_unseen(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, ROOT, 10, 200, "text/html", NULL, page_root);
    fetch(fx, "http://example.com/a", 10, 200, "text/html; charset=utf-8", NULL,
          "<a href=/a>self</a><a href=/b.html>b</a><a href=/e>e</a><A HREF=f>f</A>"
          "<a href=/e>e again</a>");

    const fetch_stat *st = stat_of(fx->c, "http://example.com/a");
    assert_int_equal(st->num_urls, 4);
    assert_int_equal(st->num_new_urls, 2);
    assert_int_equal(fx->adds.n, 6);
    assert_string_equal(fx->adds.url[4], "http://example.com/e");
    assert_string_equal(fx->adds.url[5], "http://example.com/f");
}

static void test_404_recorded_without_links(void **state)
{
    fixture *fx = *state;
    start(fx);
    const char *body = "<html><a href=/missing-link>x</a></html>";
    fetch(fx, ROOT, 10, 404, "text/html; charset=ISO-8859-1", NULL, body);

    const fetch_stat *st = stat_of(fx->c, ROOT);
    assert_int_equal(st->status, 404);
    assert_null(st->exception);
    assert_int_equal(st->size, (long long)strlen(body));
    assert_string_equal(st->content_type, "text/html");
    assert_string_equal(st->encoding, "iso-8859-1");
    assert_int_equal(st->num_urls, 0);
    assert_int_equal(st->num_new_urls, 0);
    assert_int_equal(fx->adds.n, 1);
}

static void test_non_html_not_parsed(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, ROOT, 10, 200, "image/png", NULL, "\x89PNG <a href=\"/not-a-link\">");

    const fetch_stat *st = stat_of(fx->c, ROOT);
    assert_string_equal(st->content_type, "image/png");
    assert_string_equal(st->encoding, "utf-8");
    assert_int_equal(st->num_urls, 0);
    assert_int_equal(fx->adds.n, 1);
}

static void test_no_content_type(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, ROOT, 10, 200, NULL, NULL, "<a href=/x>x</a>");

    const fetch_stat *st = stat_of(fx->c, ROOT);
    assert_int_equal(st->status, 200);
    assert_null(st->content_type);
    assert_null(st->encoding);
    assert_int_equal(st->num_urls, 0);
    assert_int_equal(fx->adds.n, 1);
}

/* Content-Type parameters: quotes, case, whitespace, other parameters, junk. */
static void test_content_type_parsing(void **state)
{
    static const struct {
        const char *header, *type, *encoding;
    } cases[] = {
        {"Text/HTML; Charset=\"UTF-8\"", "text/html", "utf-8"},
        {"text/html;charset=Windows-1252  ", "text/html", "windows-1252"},
        {"  text/html ; foo=\"a;charset=x\" ; CHARSET = \"ISO-8859-1\" ", "text/html",
         "iso-8859-1"},
        {"text/plain; format=flowed", "text/plain", "utf-8"},
        {"text/html; charset=", "text/html", "utf-8"},
        {"text/html; charset=\"unterminated", "text/html", "unterminated"},
        {"text/html; charset=\"a\\\"b\"", "text/html", "a\"b"},
        {"text/html;;; novalue; charset=koi8-r", "text/html", "koi8-r"},
        {"", NULL, NULL},
        {"   ", NULL, NULL},
        {"; charset=utf-8", NULL, NULL},
    };
    fixture *fx = *state;
    start(fx);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char url[64];
        snprintf(url, sizeof url, "http://example.com/ct%zu", i);
        fetch(fx, url, 10, 200, cases[i].header, NULL, "");
        const fetch_stat *st = stat_of(fx->c, url);
        assert_str_or_null(st->content_type, cases[i].type);
        assert_str_or_null(st->encoding, cases[i].encoding);
    }
}

static void test_xml_links(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, ROOT, 10, 200, "application/xml", NULL,
          "<?xml version=\"1.0\"?>\n<feed><link href=\"/x1\"/>"
          "<entry><link href=\"http://example.com/x2\"/></entry>"
          "<link href=\"http://elsewhere.net/\"/></feed>\n");

    const fetch_stat *st = stat_of(fx->c, ROOT);
    assert_string_equal(st->content_type, "application/xml");
    assert_int_equal(st->num_urls, 2);
    assert_int_equal(fx->adds.n, 3);
    assert_string_equal(fx->adds.url[1], "http://example.com/x1");
    assert_string_equal(fx->adds.url[2], "http://example.com/x2");
}

static void test_exclude(void **state)
{
    fixture *fx = *state;
    fx->o.exclude = "\\.pdf$";
    start(fx);
    fetch(fx, ROOT, 10, 200, "text/html", NULL,
          "<a href=/doc.pdf>pdf</a><a href=/doc.html>html</a>");
    assert_int_equal(stat_of(fx->c, ROOT)->num_urls, 1);
    assert_int_equal(fx->adds.n, 2);
    assert_string_equal(fx->adds.url[1], "http://example.com/doc.html");
}

/* ---- redirects --------------------------------------------------------------------- */

static void test_redirect_followed(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, "http://example.com/old", 5, 301, "text/html", "http://example.com/new",
          "<a href=/ignored>moved</a>");

    const fetch_stat *st = stat_of(fx->c, "http://example.com/old");
    assert_int_equal(st->status, 301);
    assert_string_equal(st->next_url, "http://example.com/new");
    assert_null(st->exception);
    assert_int_equal(st->size, 0);
    assert_null(st->content_type);
    assert_null(st->encoding);
    assert_int_equal(st->num_urls, 0);
    assert_int_equal(fx->adds.n, 2);
    assert_string_equal(fx->adds.url[1], "http://example.com/new");
    assert_int_equal(fx->adds.max_redirect[1], 4);
}

/* foo -> baz and bar -> baz: baz is scheduled once (the chapter's redirect join). */
static void test_redirect_join(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, "http://example.com/foo", 10, 302, NULL, "/baz", NULL);
    fetch(fx, "http://example.com/bar", 10, 307, NULL, "/baz", NULL);
    fetch(fx, "http://example.com/home", 10, 308, NULL, "/", NULL);

    assert_int_equal(fx->adds.n, 2);
    assert_string_equal(fx->adds.url[1], "http://example.com/baz");
    assert_string_equal(stat_of(fx->c, "http://example.com/bar")->next_url,
                        "http://example.com/baz");
    assert_int_equal(stat_of(fx->c, "http://example.com/home")->status, 308);
    assert_int_equal(crawl_done_count(fx->c), 3);
}

static void test_redirect_limit(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, "http://example.com/loop", 0, 303, NULL, "/next", NULL);

    const fetch_stat *st = stat_of(fx->c, "http://example.com/loop");
    assert_string_equal(st->next_url, "http://example.com/next");
    assert_null(st->exception);
    assert_int_equal(fx->adds.n, 1);
}

static void test_redirect_relative_location(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, "http://example.com/a/b", 3, 302, NULL, "../x/./y?q=1#frag", NULL);
    assert_string_equal(stat_of(fx->c, "http://example.com/a/b")->next_url,
                        "http://example.com/x/y?q=1");
    assert_int_equal(fx->adds.n, 2);
    assert_string_equal(fx->adds.url[1], "http://example.com/x/y?q=1");
    assert_int_equal(fx->adds.max_redirect[1], 2);
}

static void test_redirect_without_location(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, "http://example.com/nowhere", 10, 302, NULL, NULL, NULL);
    fetch(fx, "http://example.com/mail", 10, 301, NULL, "mailto:a@b.c", NULL);

    const fetch_stat *st = stat_of(fx->c, "http://example.com/nowhere");
    assert_int_equal(st->status, 302);
    assert_null(st->next_url);
    assert_string_equal(st->exception, "redirect without Location");
    st = stat_of(fx->c, "http://example.com/mail");
    assert_int_equal(st->status, 301);
    assert_null(st->next_url);
    assert_string_equal(st->exception, "redirect to unparseable Location 'mailto:a@b.c'");
    assert_int_equal(fx->adds.n, 1);
}

static void test_redirect_off_site_not_followed(void **state)
{
    fixture *fx = *state;
    start(fx);
    fetch(fx, "http://example.com/out", 10, 301, NULL, "https://evil.org/", NULL);

    const fetch_stat *st = stat_of(fx->c, "http://example.com/out");
    assert_string_equal(st->next_url, "https://evil.org/");
    assert_null(st->exception);
    assert_int_equal(fx->adds.n, 1);
}

/* ---- limits, failures, counters ----------------------------------------------------- */

static void test_max_pages(void **state)
{
    fixture *fx = *state;
    fx->o.max_pages = 3;
    start(fx);
    fetch(fx, ROOT, 10, 200, "text/html", NULL,
          "<a href=/1>1</a><a href=/2>2</a><a href=/3>3</a><a href=/4>4</a>");
    assert_int_equal(fx->adds.n, 3);
    assert_string_equal(fx->adds.url[1], "http://example.com/1");
    assert_string_equal(fx->adds.url[2], "http://example.com/2");
    const fetch_stat *st = stat_of(fx->c, ROOT);
    assert_int_equal(st->num_urls, 4);
    assert_int_equal(st->num_new_urls, 4);

    fetch(fx, "http://example.com/1", 10, 301, NULL, "/elsewhere", NULL);
    fetch(fx, "http://example.com/2", 10, 200, "text/html", NULL, "<a href=/3>3</a>");
    assert_int_equal(fx->adds.n, 3);
    assert_int_equal(crawl_seen_count(fx->c), 3);
    assert_int_equal(stat_of(fx->c, "http://example.com/2")->num_new_urls, 1);
}

static void test_failure_record(void **state)
{
    fixture *fx = *state;
    start(fx);
    crawl_record_failure(fx->c, ROOT, "Couldn't connect to server");

    const fetch_stat *st = stat_of(fx->c, ROOT);
    assert_int_equal(st->status, -1);
    assert_string_equal(st->exception, "Couldn't connect to server");
    assert_null(st->next_url);
    assert_null(st->content_type);
    assert_null(st->encoding);
    assert_int_equal(st->size, 0);
    assert_int_equal(st->num_urls, 0);
}

static void test_truncated_record(void **state)
{
    fixture *fx = *state;
    start(fx);
    const char *body = "<a href=/kept>kept</a><a href=/also>also</a><p>and then";
    crawl_fetch *f = new_fetch(fx->c, ROOT, 10);
    respond(f, 200, "text/html", NULL, body);
    assert_int_equal(crawl_fetch_size(f), (long long)strlen(body));
    crawl_fetch_truncated(f, collect, &fx->adds);

    const fetch_stat *st = stat_of(fx->c, ROOT);
    char want[80];
    snprintf(want, sizeof want, "body truncated at %zu bytes (--max-size)", strlen(body));
    assert_int_equal(st->status, 200);
    assert_string_equal(st->exception, want);
    assert_int_equal(st->size, (long long)strlen(body));
    assert_int_equal(st->num_urls, 2);
    assert_int_equal(fx->adds.n, 3);
    assert_int_equal(crawl_in_flight(fx->c), 0);
}

/* The core keeps and parses at most --max-size bytes, whatever the transport feeds it:
 * crawl_fetch_full says when more arrived (the raw transport then stops reading). A
 * body of exactly max_size is not full. */
static void test_max_size_cap(void **state)
{
    fixture *fx = *state;
    const char *body = "<a href=/kept>kept</a><a href=/cut>cut</a>";
    fx->o.max_size = 22; /* exactly the first tag and its text */
    start(fx);
    crawl_fetch *f = new_fetch(fx->c, ROOT, 10);
    respond(f, 200, "text/html", NULL, "<a href=/kept>kept</a>");
    assert_int_equal(crawl_fetch_size(f), 22);
    assert_false(crawl_fetch_full(f)); /* exactly max_size: whole */
    const http_sink *s = crawl_fetch_sink(f);
    s->on_body(s->ctx, body + 22, strlen(body) - 22);
    assert_int_equal(crawl_fetch_size(f), 22);
    assert_true(crawl_fetch_full(f));
    crawl_fetch_truncated(f, collect, &fx->adds);

    const fetch_stat *st = stat_of(fx->c, ROOT);
    assert_string_equal(st->exception, "body truncated at 22 bytes (--max-size)");
    assert_int_equal(st->size, 22);
    assert_int_equal(st->num_urls, 1); /* /cut lay past the cap */
}

/* Every header field the transport hands over is kept, in order, repeats too:
 * crawl_fetch_headers (stage 3's engine makes a Response of them). */
static void test_headers_kept(void **state)
{
    fixture *fx = *state;
    start(fx);
    crawl_fetch *f = new_fetch(fx->c, ROOT, 10);
    size_t n = 99;
    assert_null(crawl_fetch_headers(f, &n));
    assert_int_equal(n, 0);
    const http_sink *s = crawl_fetch_sink(f);
    s->on_header(s->ctx, "Content-Type", 12, "text/html; charset=x", 20);
    s->on_header(s->ctx, "X-Empty", 7, "", 0);
    s->on_header(s->ctx, "Set-Cookie", 10, "a=1", 3);
    s->on_header(s->ctx, "Set-Cookie", 10, "b=2", 3);
    respond(f, 200, "text/html; charset=x", NULL, "hello");
    const char *h = crawl_fetch_headers(f, &n);
    static const char want[] = "Content-Type\0text/html; charset=x\0X-Empty\0\0"
                               "Set-Cookie\0a=1\0Set-Cookie\0b=2\0";
    assert_int_equal(n, 4);
    assert_memory_equal(h, want, sizeof want - 1);
    crawl_fetch_done(f, collect, &fx->adds);
}

static void test_in_flight_and_discard(void **state)
{
    fixture *fx = *state;
    start(fx);
    crawl_fetch *a = new_fetch(fx->c, ROOT, 10);
    crawl_fetch *b = new_fetch(fx->c, "http://example.com/b", 10);
    crawl_fetch *cf = new_fetch(fx->c, "http://example.com/c", 10);
    assert_int_equal(crawl_in_flight(fx->c), 3);
    assert_string_equal(crawl_fetch_url(b), "http://example.com/b");

    respond(b, 200, "text/html", NULL, "<a href=/never>x</a>");
    crawl_fetch_discard(b); /* a failed try: nothing recorded, nothing added */
    respond(a, 200, "text/html", NULL, "");
    crawl_fetch_done(a, collect, &fx->adds);
    assert_int_equal(crawl_in_flight(fx->c), 1);
    crawl_fetch *d = new_fetch(fx->c, "http://example.com/d", 10);
    assert_int_equal(crawl_in_flight(fx->c), 2);
    crawl_fetch_discard(cf);
    crawl_fetch_discard(d);

    assert_int_equal(crawl_in_flight(fx->c), 0);
    assert_int_equal(crawl_peak_in_flight(fx->c), 3);
    assert_int_equal(crawl_done_count(fx->c), 1);
    assert_int_equal(fx->adds.n, 1);
}

/* An attempt whose transport waits for a descriptor is not in flight, but it is still
 * under way: crawl_attempts counts it (the URLs left to do when interrupted). */
static void test_waiting_attempts(void **state)
{
    fixture *fx = *state;
    start(fx);
    crawl_fetch *a = new_fetch(fx->c, ROOT, 10);
    crawl_fetch *b = new_fetch(fx->c, "http://example.com/b", 10);
    const http_sink *sb = crawl_fetch_sink(b);
    sb->on_wait_fd(sb->ctx, 1);
    assert_int_equal(crawl_in_flight(fx->c), 1);
    assert_int_equal(crawl_attempts(fx->c), 2);
    sb->on_wait_fd(sb->ctx, 0);
    assert_int_equal(crawl_in_flight(fx->c), 2);
    assert_int_equal(crawl_attempts(fx->c), 2);
    sb->on_wait_fd(sb->ctx, 1);
    crawl_fetch_discard(b); /* abandoned while waiting */
    assert_int_equal(crawl_attempts(fx->c), 1);
    crawl_fetch_discard(a);
    assert_int_equal(crawl_in_flight(fx->c), 0);
    assert_int_equal(crawl_attempts(fx->c), 0);
}

/* A fetch that ends without a head (a transport bug) is recorded as a failure. */
static void test_done_without_head(void **state)
{
    fixture *fx = *state;
    start(fx);
    crawl_fetch *f = new_fetch(fx->c, ROOT, 10);
    crawl_fetch_done(f, collect, &fx->adds);
    const fetch_stat *st = stat_of(fx->c, ROOT);
    assert_int_equal(st->status, -1);
    assert_non_null(st->exception);
}

/* ---- the report ----------------------------------------------------------------------- */

/* Remove spaces and the newline from line, so the checks do not depend on JSON spacing. */
static void squeeze(char *line)
{
    char *d = line;
    for (char *s = line; *s; s++)
        if (*s != ' ' && *s != '\n')
            *d++ = *s;
    *d = '\0';
}

static void test_jsonl_report_to_file(void **state)
{
    fixture *fx = *state;
    char path[] = "/tmp/test_crawl_XXXXXX";
    make_temp_file(path);
    fx->o.output = path;
    fx->o.format = "jsonl";
    fx->o.max_tasks = 17;
    start(fx);
    fetch(fx, ROOT, 10, 200, "text/html", NULL, "<a href=/one>1</a><a href=/two>2</a>");
    crawl_record_failure(fx->c, "http://example.com/one", "Timeout was reached");
    char werr[256];
    assert_int_equal(crawl_write_report(fx->c, 1, "curl", "epoll", false, werr, sizeof werr), 0);
    crawl_free(fx->c);
    fx->c = NULL;

    FILE *in = fopen(path, "r");
    assert_non_null(in);
    char line[1024];
    int nlines = 0, root_seen = 0, failure_seen = 0, summary_seen = 0;
    while (nlines < 10 && fgets(line, sizeof line, in)) {
        nlines++;
        squeeze(line);
        if (strstr(line, "\"url\":\"http://example.com/\"")) {
            root_seen = 1;
            assert_non_null(strstr(line, "\"status\":200"));
            assert_non_null(strstr(line, "\"content_type\":\"text/html\""));
            assert_non_null(strstr(line, "\"num_urls\":2,\"num_new_urls\":2"));
        } else if (strstr(line, "\"url\":\"http://example.com/one\"")) {
            failure_seen = 1;
            assert_non_null(strstr(line, "\"status\":null"));
            assert_non_null(strstr(line, "\"exception\":\"Timeoutwasreached\""));
        } else if (strncmp(line, "{\"summary\":", 11) == 0) {
            summary_seen = 1;
            assert_non_null(strstr(line, "\"done\":2"));
            assert_non_null(strstr(line, "\"max_tasks\":17"));
            assert_non_null(strstr(line, "\"todo\":1"));
            assert_non_null(strstr(line, "\"stage\":\"queue\""));
            assert_non_null(strstr(line, "\"transport\":\"curl\""));
            assert_non_null(strstr(line, "\"interrupted\":false"));
        }
    }
    fclose(in);
    unlink(path);
    assert_int_equal(nlines, 3);
    assert_true(root_seen && failure_seen && summary_seen);
}

/* The whole file at path (malloc'd, NUL-terminated). */
static char *slurp(const char *path)
{
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, in)) > 0) {
        len += got;
        if (cap - len < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    fclose(in);
    return buf;
}

static int count_char(const char *s, char ch)
{
    int n = 0;
    for (; *s; s++)
        n += *s == ch;
    return n;
}

/* --format jsonl: each record is in the file as soon as it is made, in the order the
 * URLs finished (not sorted), before any report is written, and not kept in memory;
 * the summary comes last. */
static void test_jsonl_records_as_they_finish(void **state)
{
    fixture *fx = *state;
    char path[] = "/tmp/test_crawl_XXXXXX";
    make_temp_file(path);
    fx->o.output = path;
    fx->o.format = "jsonl";
    start(fx);
    char *text = slurp(path);
    assert_string_equal(text, "");
    free(text);

    fetch(fx, ROOT, 10, 200, "text/html", NULL, "<a href=/b>b</a><a href=/a>a</a>");
    text = slurp(path);
    assert_int_equal(count_char(text, '\n'), 1);
    const char *first = "{\"url\": \"http://example.com/\", ";
    assert_true(strncmp(text, first, strlen(first)) == 0);
    free(text);

    fetch(fx, "http://example.com/b", 10, 302, NULL, "/a", NULL);
    crawl_record_failure(fx->c, "http://example.com/a", "Connection refused");
    text = slurp(path);
    assert_int_equal(count_char(text, '\n'), 3);
    const char *b = strstr(text, "\"url\": \"http://example.com/b\"");
    const char *a = strstr(text, "\"url\": \"http://example.com/a\"");
    assert_true(b && a && b < a); /* as they finished */
    free(text);

    /* Written, so not kept: nothing per finished URL stays in memory. */
    assert_int_equal(report_count(crawl_report(fx->c)), 0);
    assert_int_equal(crawl_done_count(fx->c), 3);

    char werr[256];
    assert_int_equal(crawl_write_report(fx->c, 0, "raw", "poll", false, werr, sizeof werr), 0);
    text = slurp(path);
    assert_int_equal(count_char(text, '\n'), 4);
    const char *last = strstr(text, "{\"summary\": {\"done\": 3,");
    assert_non_null(last);
    assert_string_equal(strchr(last, '\n'), "\n"); /* the last line */
    free(text);
    unlink(path);
}

typedef struct pipe_reader {
    int fd;
    char *buf;
    size_t len;
} pipe_reader;

static void *read_pipe(void *arg)
{
    pipe_reader *pr = arg;
    size_t cap = 1 << 16;
    pr->buf = malloc(cap);
    ssize_t got;
    while ((got = read(pr->fd, pr->buf + pr->len, cap - pr->len)) > 0) {
        pr->len += (size_t)got;
        if (pr->len == cap)
            pr->buf = realloc(pr->buf, cap *= 2);
    }
    return NULL;
}

/* A record far larger than a pipe's buffer (a 1 MB URL): written whole, however many
 * write(2) calls the pipe takes, and nothing else comes between its bytes. */
static void test_jsonl_long_record_through_a_pipe(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pipe_reader pr = {.fd = p[0]};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_pipe, &pr), 0);
    recstream *rs = recstream_new(p[1], "--output", "pipe");
    size_t n = 1 << 20;
    char *url = malloc(n + 1);
    memcpy(url, "http://example.com/", 19);
    memset(url + 19, 'x', n - 19);
    url[n] = '\0';
    fetch_stat st = {.url = url, .status = 200, .size = 5};
    recstream_record(rs, &st);
    st.url = "http://example.com/short";
    recstream_record(rs, &st);
    char err[256] = "";
    assert_int_equal(recstream_summary(rs, 2, NULL, err, sizeof err), 0);
    assert_int_equal(recstream_count(rs), 2);
    recstream_free(rs);
    close(p[1]);
    pthread_join(th, NULL);
    close(p[0]);
    pr.buf = realloc(pr.buf, pr.len + 1);
    pr.buf[pr.len] = '\0';
    assert_int_equal(count_char(pr.buf, '\n'), 3);
    char *nl = strchr(pr.buf, '\n');
    assert_int_equal((size_t)(nl - pr.buf),
                     strlen("{\"url\": \"") + n
                         + strlen("\", \"next_url\": null, \"status\": 200, \"exception\": null, "
                                  "\"size\": 5, \"content_type\": null, \"encoding\": null, "
                                  "\"num_urls\": 0, \"num_new_urls\": 0}"));
    const char *second = "{\"url\": \"http://example.com/short\", ";
    assert_true(strncmp(nl + 1, second, strlen(second)) == 0);
    free(url);
    free(pr.buf);
}

/* A write that fails (the reader went away: EPIPE) stops the stream: no later line is
 * written after a line that may be torn, and the summary says which write failed. */
static void test_jsonl_write_error_stops_the_stream(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    recstream *rs = recstream_new(p[1], "--output", "pipe");
    fetch_stat st = {.url = "http://example.com/", .status = 200};
    recstream_record(rs, &st);
    assert_int_equal(recstream_count(rs), 1);
    char line[512];
    ssize_t got = read(p[0], line, sizeof line);
    assert_true(got > 0 && line[got - 1] == '\n');
    close(p[0]);
    recstream_record(rs, &st);
    recstream_record(rs, &st);
    assert_int_equal(recstream_count(rs), 1);
    char err[256] = "";
    assert_int_equal(recstream_summary(rs, 3, NULL, err, sizeof err), -1);
    assert_string_equal(err, "writing --output 'pipe' failed: Broken pipe");
    recstream_free(rs);
    close(p[1]);
    signal(SIGPIPE, old);
}

/* The same through the crawl core, --format jsonl to /dev/full. */
static void test_jsonl_write_error_reported(void **state)
{
    fixture *fx = *state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    fx->o.output = "/dev/full";
    fx->o.format = "jsonl";
    start(fx);
    crawl_record_failure(fx->c, ROOT, "refused");
    char werr[256] = "";
    assert_int_equal(crawl_write_report(fx->c, 0, "raw", "poll", true, werr, sizeof werr), -1);
    assert_string_equal(werr, "writing --output '/dev/full' failed: No space left on device");
}

static void test_write_error_reported(void **state)
{
    fixture *fx = *state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    fx->o.output = "/dev/full";
    start(fx);
    crawl_record_failure(fx->c, ROOT, "refused");
    char werr[256] = "";
    assert_int_equal(crawl_write_report(fx->c, 0, "raw", "poll", true, werr, sizeof werr), -1);
    assert_string_equal(werr, "writing --output '/dev/full' failed: No space left on device");
}

/* --trace-events to a file that takes no bytes: the message names the trace and says
 * why, and a report written well is not blamed. */
static void test_trace_write_error_reported(void **state)
{
    fixture *fx = *state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    char path[] = "/tmp/test_crawl_XXXXXX";
    make_temp_file(path);
    fx->o.output = path;
    fx->o.trace_events = "/dev/full";
    start(fx);
    crawl_record_failure(fx->c, ROOT, "refused");
    char werr[256] = "";
    assert_int_equal(crawl_write_report(fx->c, 0, "raw", "poll", false, werr, sizeof werr), -1);
    unlink(path);
    assert_string_equal(werr, "writing --trace-events '/dev/full' failed: No space left on device");
    /* both at once: both named, the report first */
    crawl_free(fx->c);
    fx->c = NULL;
    fx->o.output = "/dev/full";
    start(fx);
    assert_int_equal(crawl_write_report(fx->c, 0, "raw", "poll", false, werr, sizeof werr), -1);
    assert_string_equal(werr,
                        "writing --output '/dev/full' failed: No space left on device; "
                        "writing --trace-events '/dev/full' failed: No space left on "
                        "device");
}

/* --output or --trace-events naming a FIFO that nobody reads: an error at once, no
 * wait for a reader that may never come. */
static void test_output_fifo_without_reader(void **state)
{
    fixture *fx = *state;
    char dir[] = "/tmp/test_crawl_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *which[] = {"--output", "--trace-events"};
    for (int i = 0; i < 2; i++) {
        fx->o.output = i == 0 ? fifo : NULL;
        fx->o.trace_events = i == 1 ? fifo : NULL;
        char err[512] = "";
        crawl *c = crawl_new(&fx->o, "queue", err, sizeof err);
        assert_null(c);
        char want[256];
        snprintf(want, sizeof want,
                 "cannot open %s '%s': a FIFO with no reader (start its "
                 "reader first)",
                 which[i], fifo);
        assert_string_equal(err, want);
    }
    /* with a reader it opens, and the report goes through */
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    fx->o.output = fifo;
    fx->o.trace_events = NULL;
    fx->o.format = "jsonl";
    start(fx);
    char werr[256];
    assert_int_equal(crawl_write_report(fx->c, 0, "raw", "poll", false, werr, sizeof werr), 0);
    char buf[512];
    ssize_t n = read(rd, buf, sizeof buf - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "{\"summary\": {\"done\": 0"));
    close(rd);
    unlink(fifo);
    rmdir(dir);
}

static void test_bad_options(void **state)
{
    fixture *fx = *state;
    char err[256] = "";
    fx->o.exclude = "(";
    assert_null(crawl_new(&fx->o, "callbacks", err, sizeof err));
    assert_non_null(strstr(err, "bad exclude regex"));

    fx->o.exclude = NULL;
    fx->o.output = "/nonexistent-dir/report.txt";
    err[0] = '\0';
    assert_null(crawl_new(&fx->o, "callbacks", err, sizeof err));
    assert_non_null(strstr(err, "cannot open --output '/nonexistent-dir/report.txt': "));
}

/* ---- hash flooding ------------------------------------------------------------------ */

static void count_add(void *ctx, const crawl_request *r)
{
    (void)r;
    ++*(size_t *)ctx;
}

/* ---- listeners --------------------------------------------------------------------- */

/* Each listener writes "<its name>:<what it heard> " into one shared log, so that the
 * log shows who was called, with what, in which order. */
typedef struct heard {
    char log[512];
} heard;

typedef struct listener_ctx {
    const char *name;
    heard *h;
} listener_ctx;

static void heard_say(heard *h, const char *name, const char *what)
{
    size_t used = strlen(h->log);
    snprintf(h->log + used, sizeof h->log - used, "%s:%s ", name, what);
}

static void on_record_listener(void *ctx, const fetch_stat *st, const crawl_fetch *f)
{
    (void)f;
    listener_ctx *l = ctx;
    heard_say(l->h, l->name, st->url + strlen(ROOT) - 1);
}

static void on_add_listener(void *ctx, const crawl_request *r)
{
    listener_ctx *l = ctx;
    heard_say(l->h, l->name, r->url + strlen(ROOT) - 1);
}

/* Two listeners of each kind are both called, in the order they were added (one no
 * longer replaces the other); removing one keeps the rest and their order. */
static void test_listeners_in_order(void **state)
{
    fixture *fx = *state;
    start(fx);
    heard h = {""};
    listener_ctx a = {"A", &h}, b = {"B", &h}, c = {"C", &h};
    crawl_add_record_listener(fx->c, on_record_listener, &a);
    crawl_add_add_listener(fx->c, on_add_listener, &b);
    crawl_add_record_listener(fx->c, on_record_listener, &b);
    crawl_add_add_listener(fx->c, on_add_listener, &a);
    crawl_add_record_listener(fx->c, on_record_listener, &c);

    fetch(fx, ROOT, 10, 200, "text/html", NULL, "<a href=\"/x\">x</a>");
    assert_string_equal(h.log, "A:/ B:/ C:/ B:/x A:/x "); /* the record, then its links */

    h.log[0] = '\0';
    crawl_remove_listeners(fx->c, &b);
    fetch(fx, ROOT "x", 10, 200, "text/html", NULL, "<a href=\"/y\">y</a>");
    assert_string_equal(h.log, "A:/x C:/x A:/y ");

    h.log[0] = '\0';
    crawl_remove_listeners(fx->c, NULL); /* names no owner: nothing */
    fetch(fx, ROOT "y", 10, 200, "text/html", NULL, "");
    assert_string_equal(h.log, "A:/y C:/y ");

    h.log[0] = '\0';
    crawl_remove_listeners(fx->c, &a);
    crawl_remove_listeners(fx->c, &c);
    crawl_record_failure(fx->c, ROOT "z", "refused");
    assert_string_equal(h.log, "");
}

/* A page whose 4096 links share one FNV-1a hash, as a hostile server can build them:
 * the whole 32-bit hash, or the low 32 bits of the 64-bit one (which pick the slot in
 * any table under 2^32 slots). Both the page's link set and seen_urls take them; with
 * the keyed hash no lookup in either looks at more than a few slots, where FNV-1a
 * would put all 4096 in one run. Every link is still scheduled once. */
enum { FLOOD_ROUNDS = 12, FLOOD_MAX_PROBE = 64 };

static void test_fnv_flooded_page(void **state)
{
    fixture *fx = *state;
    start(fx);
    static const fnv_kind kinds[] = {FNV1A_32, FNV1A_64_LOW32};
    size_t scheduled = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char **v = fnvflood(ROOT, kinds[k], FLOOD_ROUNDS);
        assert_non_null(v);
        size_t n = 0, len = 0;
        for (; v[n]; n++)
            len += strlen(v[n]) + 16;
        char *body = xmalloc(len + 1), *w = body;
        for (size_t i = 0; i < n; i++)
            w += sprintf(w, "<a href=\"%s\">\n", v[i]);
        char page[64];
        snprintf(page, sizeof page, ROOT "page%zu", k);
        crawl_fetch *f = new_fetch(fx->c, page, 10);
        respond(f, 200, "text/html", NULL, body);
        size_t before = scheduled;
        crawl_fetch_done(f, count_add, &scheduled);
        assert_int_equal(scheduled - before, n);
        assert_int_equal(stat_of(fx->c, page)->num_urls, (int)n);
        size_t probe = crawl_longest_probe(fx->c);
        printf("# FNV-1a %s flooded page: %zu links, longest probe %zu\n",
               kinds[k] == FNV1A_32 ? "32" : "64 (low 32 bits)", n, probe);
        assert_true(probe >= 1 && probe <= FLOOD_MAX_PROBE);
        free(body);
        fnvflood_free(v);
    }
}

int main(void)
{
    /* A fixed key, so that the probe lengths are the same on every run. */
    static const uint8_t key[16] = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    hash_set_seed(key);
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_roots_added_once),
        T(test_request_depth_and_referrer),
        T(test_page_links),
        T(test_second_page_counts_only_unseen),
        T(test_404_recorded_without_links),
        T(test_non_html_not_parsed),
        T(test_no_content_type),
        T(test_content_type_parsing),
        T(test_xml_links),
        T(test_exclude),
        T(test_redirect_followed),
        T(test_redirect_join),
        T(test_redirect_limit),
        T(test_redirect_relative_location),
        T(test_redirect_without_location),
        T(test_redirect_off_site_not_followed),
        T(test_max_pages),
        T(test_failure_record),
        T(test_truncated_record),
        T(test_max_size_cap),
        T(test_in_flight_and_discard),
        T(test_headers_kept),
        T(test_waiting_attempts),
        T(test_done_without_head),
        T(test_jsonl_report_to_file),
        T(test_jsonl_records_as_they_finish),
        T(test_jsonl_long_record_through_a_pipe),
        T(test_jsonl_write_error_stops_the_stream),
        T(test_jsonl_write_error_reported),
        T(test_write_error_reported),
        T(test_trace_write_error_reported),
        T(test_output_fifo_without_reader),
        T(test_bad_options),
        T(test_fnv_flooded_page),
        T(test_listeners_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
