/* test_links.c — the link parser: which attributes count, how values are read and
 * resolved, <base>, charsets, XML, chunk-split invariance, hostile input, and that
 * libxml2 never writes to stderr.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/xmlmemory.h>

#include "alloc.h"
#include "links.h"
#include "links_skip.h"
#include "memcount.h"
#include "url.h"

#define PAGE "http://example.com/dir/page.html"

/* ---- helpers ---------------------------------------------------------------- */

/* The links found, in order, each followed by '\n'. */
typedef struct found {
    char *text;
    size_t len, cap;
    size_t n;
    bool oom;
} found;

/* A links_fn. Asserts nothing: it runs while stderr is captured. */
static void collect(void *ctx, const char *url)
{
    found *f = ctx;
    size_t n = strlen(url);
    if (f->len + n + 2 > f->cap) {
        char *grown = realloc(f->text, (f->len + n + 2) * 2);
        if (!grown) {
            f->oom = true;
            return;
        }
        f->text = grown;
        f->cap = (f->len + n + 2) * 2;
    }
    memcpy(f->text + f->len, url, n);
    f->len += n;
    f->text[f->len++] = '\n';
    f->text[f->len] = '\0';
    f->n++;
}

static void found_free(found *f)
{
    free(f->text);
}

static const char *text_of(const found *f)
{
    return f->text ? f->text : "";
}

/* fd 2 goes to a temporary file from stderr_begin to stderr_end, which asserts that
 * nothing was written. Nothing may be asserted in between: cmocka reports failures
 * on stderr. Should a test crash meanwhile, the teardown puts fd 2 back. */
static struct {
    bool active;
    int saved;
    FILE *tmp;
} capture;

static void stderr_begin(void)
{
    fflush(stderr);
    capture.tmp = tmpfile();
    assert_non_null(capture.tmp);
    capture.saved = dup(2);
    assert_true(capture.saved >= 0);
    assert_true(dup2(fileno(capture.tmp), 2) >= 0);
    capture.active = true;
}

/* Puts fd 2 back; returns how many bytes were written to it meanwhile. */
static size_t stderr_restore(char *buf, size_t size)
{
    fflush(stderr);
    dup2(capture.saved, 2);
    close(capture.saved);
    rewind(capture.tmp);
    size_t n = fread(buf, 1, size - 1, capture.tmp);
    buf[n] = '\0';
    fclose(capture.tmp);
    capture.active = false;
    return n;
}

static void stderr_end(void)
{
    char buf[256];
    if (stderr_restore(buf, sizeof buf) > 0)
        fail_msg("stderr was written to: %s", buf);
}

static int teardown(void **state)
{
    (void)state;
    char buf[16];
    if (capture.active)
        stderr_restore(buf, sizeof buf);
    return 0;
}

/* Feeds a parser len bytes of body in pieces of at most piece bytes, in full. */
static void feed_pieces(links_parser *lp, const char *body, size_t len, size_t piece)
{
    for (size_t off = 0; off < len; off += piece)
        links_feed(lp, body + off, len - off < piece ? len - off : piece);
    links_finish(lp);
}

/* Parse len bytes of body in pieces of at most piece bytes (0: all at once). */
static found parse_pieces(const char *body, size_t len, const char *base, const char *charset,
                          bool xml, size_t piece)
{
    found f = {0};
    stderr_begin();
    links_parser *lp = links_new(base, charset, xml, collect, &f);
    if (lp) {
        feed_pieces(lp, body, len, piece ? piece : len + 1);
        links_free(lp);
    }
    stderr_end();
    assert_non_null(lp);
    assert_false(f.oom);
    return f;
}

/* The first split point i where feeding [0,i) then [i,len) gives other links than
 * expected, or SIZE_MAX. */
static size_t first_bad_split(const char *body, size_t len, const char *charset,
                              const char *expected)
{
    size_t bad = SIZE_MAX;
    stderr_begin();
    for (size_t i = 0; i <= len && bad == SIZE_MAX; i++) {
        found f = {0};
        links_parser *lp = links_new(PAGE, charset, false, collect, &f);
        if (lp) {
            links_feed(lp, body, i);
            links_feed(lp, body + i, len - i);
            links_finish(lp);
            links_free(lp);
        }
        if (!lp || f.oom || strcmp(text_of(&f), expected) != 0)
            bad = i;
        found_free(&f);
    }
    stderr_end();
    return bad;
}

static found parse_html(const char *body)
{
    return parse_pieces(body, strlen(body), PAGE, NULL, false, 0);
}

/* Parse body as HTML and compare the links with the expected '\n'-separated list. */
static void expect_html(const char *body, const char *expected)
{
    found f = parse_html(body);
    assert_string_equal(text_of(&f), expected);
    found_free(&f);
}

/* ---- media types ------------------------------------------------------------- */

static void test_wanted(void **state)
{
    (void)state;
    assert_true(links_wanted("text/html"));
    assert_true(links_wanted("application/xhtml+xml"));
    assert_true(links_wanted("application/xml"));
    assert_false(links_wanted("text/plain"));
    assert_false(links_wanted("image/png"));
    assert_false(links_wanted("text/html; charset=utf-8"));
    assert_false(links_wanted("text/htmlx"));
    assert_false(links_wanted(""));
    assert_false(links_wanted(NULL));
}

/* ---- what counts as a link ---------------------------------------------------- */

static void test_href_on_any_element(void **state)
{
    (void)state;
    expect_html("<html><head><link rel=stylesheet href=\"/style.css\"></head><body>"
                "<a href=\"a.html\">a</a>"
                "<map><area shape=rect coords=\"0,0,1,1\" href=\"/area\"></map>"
                "<img src=\"/img.png\"><div data-href=\"/not\" title=\"href\">x</div>"
                "<a name=\"anchor\">no href</a>"
                "</body></html>",
                "http://example.com/style.css\n"
                "http://example.com/dir/a.html\n"
                "http://example.com/area\n");
}

static void test_value_forms(void **state)
{
    (void)state;
    expect_html("<A HREF=upper.html>1</A>"
                "<a href=unquoted?x=1>2</a>"
                "<a href = '  spaced.html  '>3</a>"
                "<a href=\"/q?a=1&amp;b=2\">4</a>"
                "<a hReF=\"&#x2F;numeric\">5</a>"
                "<a href=\"\n  /newline\n\">6</a>",
                "http://example.com/dir/upper.html\n"
                "http://example.com/dir/unquoted?x=1\n"
                "http://example.com/dir/spaced.html\n"
                "http://example.com/q?a=1&b=2\n"
                "http://example.com/numeric\n"
                "http://example.com/newline\n");
}

static void test_fragment_dropped(void **state)
{
    (void)state;
    expect_html("<a href=\"/x#frag\">1</a><a href=\"#top\">2</a><a href=\"y.html#\">3</a>",
                "http://example.com/x\n"
                "http://example.com/dir/page.html\n"
                "http://example.com/dir/y.html\n");
}

/* The chapter's regex found duplicates too; the caller's seen set removes them. */
static void test_duplicates_passed_on(void **state)
{
    (void)state;
    expect_html("<a href=/d>1</a><a href=/d>2</a>", "http://example.com/d\nhttp://example.com/d\n");
}

/* Other schemes come out as url_resolve gives them, or not at all when it gives
 * NULL; filtering them is the caller's job. */
static void test_other_schemes_as_resolved(void **state)
{
    (void)state;
    const char *hrefs[] = {"mailto:someone@example.com", "javascript:void(0)",
                           "ftp://files.example.com/x", "http://[bad", "data:,hi"};
    char body[512] = "";
    char expected[1024] = "";
    for (size_t i = 0; i < sizeof hrefs / sizeof *hrefs; i++) {
        snprintf(body + strlen(body), sizeof body - strlen(body), "<a href=\"%s\">x</a>", hrefs[i]);
        char *r = url_resolve(PAGE, hrefs[i]);
        if (r)
            snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "%s\n", r);
        free(r);
    }
    found f = parse_html(body);
    assert_string_equal(text_of(&f), expected);
    assert_non_null(strstr(text_of(&f), "ftp://files.example.com/x\n"));
    found_free(&f);
}

/* ---- <base> ------------------------------------------------------------------ */

static void test_base_absolute(void **state)
{
    (void)state;
    expect_html("<a href=before.html>0</a>"
                "<base href=\"http://other.example.org/sub/\">"
                "<a href=after.html>1</a><a href=/root>2</a>",
                "http://example.com/dir/before.html\n"
                "http://other.example.org/sub/after.html\n"
                "http://other.example.org/root\n");
}

/* A relative base resolves against the page; only the first <base href> counts. */
static void test_base_relative_first_only(void **state)
{
    (void)state;
    expect_html("<base target=_blank>"
                "<base href=\"../other/\">"
                "<base href=\"http://ignored.example/\">"
                "<a href=x.html>1</a>",
                "http://example.com/other/x.html\n");
}

/* ---- chunk-split invariance ---------------------------------------------------- */

static const char SMALL_PAGE[] = "<!DOCTYPE html>\n<html><head><title>t</title>"
                                 "<meta charset=\"utf-8\"><link href=\"/s.css\" rel=stylesheet>"
                                 "<script>var s = \"</b><a href='/no'>\";</SCRIPT >"
                                 "<style>p>a{} /* </p> */</style></head>\n"
                                 "<body><!-- <a href=\"/comment\"> --><p>Text &amp; more"
                                 "<A HREF=up.html>u</A><a href='q.html?a=1&amp;b=2'>q</a>"
                                 "<a\nhref = unq>n</a><base href=\"/b/\"><area href=\"x\">"
                                 "<a href=\"caf\xc3\xa9.html\">c</a></p></body></html>\n";

static void test_split_every_point(void **state)
{
    (void)state;
    size_t len = sizeof SMALL_PAGE - 1;
    found whole = parse_pieces(SMALL_PAGE, len, PAGE, NULL, false, 0);
    assert_int_equal(whole.n, 6);
    assert_non_null(strstr(text_of(&whole), "http://example.com/b/caf%c3%a9.html\n"));
    assert_null(strstr(text_of(&whole), "/no"));
    assert_null(strstr(text_of(&whole), "/comment"));

    size_t bad = first_bad_split(SMALL_PAGE, len, NULL, text_of(&whole));
    if (bad != SIZE_MAX)
        fail_msg("a split at byte %zu gives other links", bad);

    const size_t pieces[] = {1, 7};
    for (size_t k = 0; k < 2; k++) {
        found f = parse_pieces(SMALL_PAGE, len, PAGE, NULL, false, pieces[k]);
        assert_string_equal(text_of(&f), text_of(&whole));
        found_free(&f);
    }
    found_free(&whole);
}

/* ---- XHTML and XML -------------------------------------------------------------- */

static const char XHTML[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" "
    "\"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd\">\n"
    "<html xmlns=\"http://www.w3.org/1999/xhtml\"><head>"
    "<link rel=\"stylesheet\" href=\"/s.css\"/></head>"
    "<body><p><a href=\"one.html\">1</a><br/><a href=\"/two?x=1&amp;y=2\">2</a></p>"
    "<base href=\"/b/\"/><a href=\"three\">3</a></body></html>\n";

/* The same XHTML document read by the HTML parser and by the XML parser. */
static void test_xhtml_both_ways(void **state)
{
    (void)state;
    const char *expected = "http://example.com/s.css\n"
                           "http://example.com/dir/one.html\n"
                           "http://example.com/two?x=1&y=2\n"
                           "http://example.com/b/three\n";
    for (int xml = 0; xml <= 1; xml++) {
        found f = parse_pieces(XHTML, sizeof XHTML - 1, PAGE, NULL, xml, 0);
        assert_string_equal(text_of(&f), expected);
        found_free(&f);
        f = parse_pieces(XHTML, sizeof XHTML - 1, PAGE, NULL, xml, 1);
        assert_string_equal(text_of(&f), expected);
        found_free(&f);
    }
}

/* href attributes of any element and any namespace, in a non-HTML document. */
static void test_xml_document(void **state)
{
    (void)state;
    static const char atom[] = "<?xml version=\"1.0\"?>\n"
                               "<feed xmlns=\"http://www.w3.org/2005/Atom\" "
                               "xmlns:xlink=\"http://www.w3.org/1999/xlink\">"
                               "<link rel=\"self\" href=\"http://example.com/feed.xml\"/>"
                               "<entry><link href=\"/posts/1?a=1&amp;b=2&#38;c=&#x26;#38;\"/>"
                               "<base href=\"/not-xhtml-so-a-link/\"/>"
                               "<thing xlink:href=\"rel/2\"/><HREF>not an attribute</HREF>"
                               "<a HREF=\"/case-sensitive\"/></entry></feed>";
    const char *expected = "http://example.com/feed.xml\n"
                           "http://example.com/posts/1?a=1&b=2&c=&\n" /* "#38;" is a fragment */
                           "http://example.com/not-xhtml-so-a-link/\n"
                           "http://example.com/dir/rel/2\n";
    for (size_t piece = 0; piece <= 7; piece += 7) {
        found f = parse_pieces(atom, sizeof atom - 1, PAGE, NULL, true, piece);
        assert_string_equal(text_of(&f), expected);
        found_free(&f);
    }
}

/* Entities are never expanded: neither external ones (XXE) nor nested ones. */
static void test_xml_entities_not_expanded(void **state)
{
    (void)state;
    static const char doc[] =
        "<?xml version=\"1.0\"?>\n"
        "<!DOCTYPE r [\n"
        "<!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n"
        "<!ENTITY a \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\">\n"
        "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
        "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n"
        "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">\n"
        "<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">\n"
        "]>\n"
        "<r><l href=\"/first\"/><l href=\"/x/&xxe;\"/><l href=\"/y/&e;\"/>"
        "<l href=\"/last\"/></r>";
    found f = parse_pieces(doc, sizeof doc - 1, PAGE, NULL, true, 0);
    assert_non_null(strstr(text_of(&f), "http://example.com/first\n"));
    assert_null(strstr(text_of(&f), "root:"));
    assert_null(strstr(text_of(&f), "aaaa"));
    assert_true(f.len < 1000);
    found_free(&f);
}

/* ---- charsets ---------------------------------------------------------------- */

/* A latin-1 byte in an href comes out as percent-encoded UTF-8, even when the page
 * claims another charset in a <meta>: the HTTP charset wins. */
static void test_latin1_charset(void **state)
{
    (void)state;
    const char *body = "<html><head><meta charset=\"utf-8\">"
                       "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\">"
                       "</head><body><a href=\"/caf\xe9\">c</a></body></html>";
    const char *expected = "http://example.com/caf%c3%a9\n";
    const char *names[] = {"iso-8859-1", "ISO-8859-1", "latin1", "windows-1252"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        found f = parse_pieces(body, strlen(body), PAGE, names[i], false, 0);
        assert_string_equal(text_of(&f), expected);
        found_free(&f);
        f = parse_pieces(body, strlen(body), PAGE, names[i], false, 1);
        assert_string_equal(text_of(&f), expected);
        found_free(&f);
    }
}

/* An HTTP charset also wins over an XML declaration. */
static void test_xml_charset_wins_over_declaration(void **state)
{
    (void)state;
    const char *doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><r href=\"/caf\xe9\"/>";
    found f = parse_pieces(doc, strlen(doc), PAGE, "iso-8859-1", true, 0);
    assert_string_equal(text_of(&f), "http://example.com/caf%c3%a9\n");
    found_free(&f);
}

/* No charset, or one nobody knows: UTF-8, where a byte that is not part of valid
 * UTF-8 is read as latin-1 (and does not turn the rest of the page into latin-1). */
static void test_default_and_unknown_charset(void **state)
{
    (void)state;
    const char *body = "<a href=\"/caf\xc3\xa9\">c</a><a href=\"/caf\xe9\">c</a>"
                       "<a href=\"/\xe2\x82\xac\">euro</a>";
    const char *expected = "http://example.com/caf%c3%a9\n"
                           "http://example.com/caf%c3%a9\n"
                           "http://example.com/%e2%82%ac\n";
    const char *charsets[] = {NULL, "", "no-such-charset", "utf-8", "UTF8"};
    for (size_t i = 0; i < sizeof charsets / sizeof *charsets; i++) {
        found f = parse_pieces(body, strlen(body), PAGE, charsets[i], false, 0);
        assert_string_equal(text_of(&f), expected);
        found_free(&f);
    }
}

/* windows-1252 0x80 is the euro sign: it tells which charset was used. The HTTP
 * charset wins over <meta>, both ways. */
static void test_meta_does_not_override_http(void **state)
{
    (void)state;
    const char *to_utf8 = "<meta charset=\"utf-8\"><a href=\"/\x80\">e</a>";
    found f = parse_pieces(to_utf8, strlen(to_utf8), PAGE, "windows-1252", false, 0);
    assert_string_equal(text_of(&f), "http://example.com/%e2%82%ac\n");
    found_free(&f);

    const char *to_1252 = "<meta charset=\"windows-1252\"><a href=\"/\x80\">e</a>";
    f = parse_pieces(to_1252, strlen(to_1252), PAGE, "utf-8", false, 0);
    assert_string_equal(text_of(&f), "http://example.com/%c2%80\n");
    found_free(&f);
}

/* Bytes a charset does not define become U+FFFD and the parse goes on (libxml2's
 * own decoding would stop at them). */
static void test_invalid_bytes_in_charset(void **state)
{
    (void)state;
    const char *body = "<a href=\"/a\x81\">1</a>\x81\x8d<a href=\"/b\">2</a>";
    found f = parse_pieces(body, strlen(body), PAGE, "windows-1252", false, 0);
    assert_string_equal(text_of(&f), "http://example.com/a%ef%bf%bd\nhttp://example.com/b\n");
    found_free(&f);
}

/* A multi-byte charset, split at every point, including inside its characters. */
static void test_shift_jis_every_split(void **state)
{
    (void)state;
    static const char page[] = "<p>\x83\x65\x83\x58\x83\x67</p>"
                               "<a href=\"/\x83\x65\x83\x58\x83\x67\">t</a><a href=/b>b</a>";
    const char *expected = "http://example.com/%e3%83%86%e3%82%b9%e3%83%88\n"
                           "http://example.com/b\n";
    size_t bad = first_bad_split(page, sizeof page - 1, "Shift_JIS", expected);
    if (bad != SIZE_MAX)
        fail_msg("a split at byte %zu gives other links", bad);
}

/* ---- hostile input ------------------------------------------------------------ */

static uint32_t rng_next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Binary junk (NULs, invalid UTF-8, stray '<' and quotes) never crashes, never
 * prints, whatever the mode, charset and chunking; a link after a run of NUL bytes
 * and invalid UTF-8 is still found. */
static void test_garbage(void **state)
{
    (void)state;
    enum { N = 64 * 1024 };
    char *junk = malloc(N);
    assert_non_null(junk);
    uint32_t seed = 12345;
    const char alphabet[] = "<>\"'=/ &;#ahref\0\x80\xff\xc3\n";
    for (size_t i = 0; i < N; i++) {
        uint32_t r = rng_next(&seed);
        junk[i] = (r & 1) ? (char)(r >> 8) : alphabet[(r >> 8) % (sizeof alphabet - 1)];
    }
    const char *charsets[] = {NULL, "iso-8859-1", "shift_jis"};
    for (int xml = 0; xml <= 1; xml++)
        for (size_t c = 0; c < 3; c++) {
            found f = parse_pieces(junk, N, PAGE, charsets[c], xml, 0);
            found_free(&f);
            f = parse_pieces(junk, N, PAGE, charsets[c], xml, 997);
            found_free(&f);
        }
    free(junk);

    static const char nuls[] = "\0\0\xff\xfe\x80<p>\0x\xc3(</p><a href=\"/after\">a</a>";
    found f = parse_pieces(nuls, sizeof nuls - 1, PAGE, NULL, false, 0);
    assert_string_equal(text_of(&f), "http://example.com/after\n");
    found_free(&f);
}

/* Odd calls do nothing: NULLs, an empty body, feeding after the end. */
static void test_edge_calls(void **state)
{
    (void)state;
    found f = {0};
    assert_null(links_new(PAGE, NULL, false, NULL, NULL));
    links_feed(NULL, "x", 1);
    links_finish(NULL);
    links_free(NULL);

    links_parser *lp = links_new(PAGE, NULL, false, collect, &f);
    assert_non_null(lp);
    links_feed(lp, NULL, 5);
    links_finish(lp);
    links_feed(lp, "<a href=/late>", 14);
    links_finish(lp);
    links_free(lp);
    assert_int_equal(f.n, 0);

    lp = links_new(PAGE, NULL, true, collect, &f); /* freed without finishing */
    assert_non_null(lp);
    links_feed(lp, "<r><a href=\"/x\"/>", 17);
    links_free(lp);
    found_free(&f);
}

/* libxml2 allocates through alloc.h (libmem.h): its failures end the process, they do
 * not stop a parse quietly and make a page look as if it had no more links. */
static void test_libxml2_allocates_through_alloc_h(void **state)
{
    (void)state;
    found f = {0};
    links_free(links_new(PAGE, NULL, false, collect, &f));
    xmlFreeFunc fr;
    xmlMallocFunc m;
    xmlReallocFunc r;
    xmlStrdupFunc d;
    assert_int_equal(xmlMemGet(&fr, &m, &r, &d), 0);
    assert_ptr_equal(m, xmalloc);
    assert_ptr_equal(r, xrealloc);
    assert_ptr_equal(d, xstrdup);
}

/* ---- size ---------------------------------------------------------------------- */

/* Appends text to a growing buffer. */
static void append(char **buf, size_t *len, size_t *cap, const char *text)
{
    size_t n = strlen(text);
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = realloc(*buf, *cap);
        assert_non_null(*buf);
    }
    memcpy(*buf + *len, text, n + 1);
    *len += n;
}

static void test_hundred_thousand_links(void **state)
{
    (void)state;
    enum { N = 100000 };
    char *body = NULL;
    size_t len = 0, cap = 0;
    char tag[64];
    append(&body, &len, &cap, "<html><body><ul>");
    for (int i = 0; i < N; i++) {
        snprintf(tag, sizeof tag, "<li><a href=\"/p/%d\">%d</a>\n", i, i);
        append(&body, &len, &cap, tag);
    }
    append(&body, &len, &cap, "</ul></body></html>");
    found f = parse_pieces(body, len, PAGE, NULL, false, 16384);
    assert_int_equal(f.n, N);
    assert_memory_equal(f.text, "http://example.com/p/0\n", 23);
    assert_non_null(strstr(f.text, "\nhttp://example.com/p/99999\n"));
    found_free(&f);
    free(body);
}

/* 100,000 nested elements: no crash, no time, and the links before the nesting are
 * found. The parse stops past 512 open elements (libxml2 would take quadratic time
 * over end tags that close nothing), so a link under 500 of them still counts. */
static void test_deep_nesting(void **state)
{
    (void)state;
    const char *opens[] = {"<div>", "<b>", "<x>"};
    for (int xml = 0; xml <= 1; xml++)
        for (size_t k = 0; k < 3; k++) {
            char *body = NULL;
            size_t len = 0, cap = 0;
            append(&body, &len, &cap, "<r><a href=\"/top\"/>");
            for (int i = 0; i < 100000; i++)
                append(&body, &len, &cap, opens[k]);
            for (int i = 0; i < 100000; i++)
                append(&body, &len, &cap, "</nothing>");
            append(&body, &len, &cap, "<a href=\"/deep\"/>");
            found f = parse_pieces(body, len, PAGE, NULL, xml, 4096);
            assert_string_equal(text_of(&f), "http://example.com/top\n");
            found_free(&f);
            free(body);
        }

    char *body = NULL;
    size_t len = 0, cap = 0;
    for (int i = 0; i < 500; i++)
        append(&body, &len, &cap, "<div>");
    append(&body, &len, &cap, "<a href=\"/under500\">x</a>");
    found f = parse_pieces(body, len, PAGE, NULL, false, 0);
    assert_string_equal(text_of(&f), "http://example.com/under500\n");
    found_free(&f);
    free(body);
}

/* End tags that close nothing make libxml2 look through all open elements: a page
 * gets a bounded amount of that work, then the parse stops. A few are fine. */
static void test_unmatched_end_tags(void **state)
{
    (void)state;
    const int counts[] = {1000, 250000};
    const char *expected[] = {"http://example.com/after\n", ""};
    for (int k = 0; k < 2; k++) {
        char *body = NULL;
        size_t len = 0, cap = 0;
        for (int i = 0; i < 500; i++)
            append(&body, &len, &cap, "<div>");
        for (int i = 0; i < counts[k]; i++)
            append(&body, &len, &cap, "</x>");
        append(&body, &len, &cap, "<a href=/after>a</a>");
        found f = parse_pieces(body, len, PAGE, NULL, false, 16384);
        assert_string_equal(text_of(&f), expected[k]);
        found_free(&f);
        free(body);
    }
}

/* A start tag longer than 64 KB stops the parse (libxml2 takes quadratic time over
 * its attributes), exactly there whatever the chunks; a long one under that counts. */
static void test_long_tags(void **state)
{
    (void)state;
    enum { BIG = 60 * 1024, HUGE_ATTRS = 20000 };
    char *body = NULL;
    size_t len = 0, cap = 0;
    append(&body, &len, &cap, "<a href=/first>1</a><img alt=\"");
    for (int i = 0; i < BIG; i++)
        append(&body, &len, &cap, i % 80 ? "x" : " ");
    append(&body, &len, &cap, "\" src=/i.png><a href=/second>2</a><p ");
    char attr[32];
    for (int i = 0; i < HUGE_ATTRS; i++) {
        snprintf(attr, sizeof attr, " a%d=\"1\"", i);
        append(&body, &len, &cap, attr);
    }
    append(&body, &len, &cap, " href=/in-huge-tag><a href=/after>3</a>");
    const char *expected = "http://example.com/first\nhttp://example.com/second\n";
    const size_t pieces[] = {0, 1, 4096, 65536};
    for (size_t k = 0; k < sizeof pieces / sizeof *pieces; k++) {
        found f = parse_pieces(body, len, PAGE, NULL, false, pieces[k]);
        assert_string_equal(text_of(&f), expected);
        found_free(&f);
    }
    free(body);
}

/* ---- bounded memory: text libxml2 would hold is dropped -------------------------- */

/* What goes on to libxml2 from a stream given to the skipper in the pieces cut at
 * a and b (a <= b <= len): emit, then the rest from the end on; "" when none. */
static char *skip_through(const char *tail, const char *stream, size_t a, size_t b,
                          const char *end1, const char *end2, bool nocase)
{
    text_skip s;
    text_skip_start(&s, end1, end2, nocase, tail, strlen(tail));
    size_t len = strlen(stream), cuts[] = {a, b, len}, from = 0;
    char *out = calloc(1, len + SKIP_MAX_END + 1);
    assert_non_null(out);
    for (int i = 0; i < 3; i++) {
        bool hit;
        size_t k = text_skip_scan(&s, stream + from, cuts[i] - from, &hit);
        if (hit) {
            memcpy(out, s.emit, s.emit_len);
            strcpy(out + s.emit_len, stream + from + k);
            return out;
        }
        assert_int_equal(k, cuts[i] - from);
        from = cuts[i];
    }
    return out;
}

/* The same answer for every way of cutting the stream in three, and the right one: the
 * stream from the first end on, counting one that began in the bytes libxml2 has. */
static void expect_skip(const char *tail, const char *stream, const char *end1, const char *end2,
                        bool nocase, const char *want)
{
    size_t len = strlen(stream);
    for (size_t a = 0; a <= len; a++)
        for (size_t b = a; b <= len; b++) {
            char *got = skip_through(tail, stream, a, b, end1, end2, nocase);
            if (strcmp(got, want) != 0)
                fail_msg("tail '%s' stream '%s' cut at %zu, %zu: '%s', want '%s'", tail, stream, a,
                         b, got, want);
            free(got);
        }
}

static void test_skip_finds_ends(void **state)
{
    (void)state;
    expect_skip("", "abc<a href=x>", "<", NULL, false, "<a href=x>");
    expect_skip("", "no end here", "<", NULL, false, "");
    expect_skip("", "x--x---x-->rest", "-->", "--!>", false, "-->rest");
    expect_skip("", "x--x--!>rest-->", "-->", "--!>", false, "--!>rest-->");
    expect_skip("", "a</scr</SCRIPT >b", "</script", NULL, true, "</SCRIPT >b");
    expect_skip("", "</scrip", "</script", NULL, true, "");
    expect_skip("", "]]]]>x", "]]>", NULL, false, "]]>x");
    /* an end that began in what libxml2 has: nothing is dropped */
    expect_skip("abc--", ">after", "-->", NULL, false, ">after");
    expect_skip("ab-", "->after", "-->", NULL, false, "->after");
    expect_skip("<", "/script>x", "</script", NULL, true, "/script>x");
    expect_skip("x-", "x-->y", "-->", NULL, false, "-->y");
}

/* A page: head, then filler repeated to about size bytes, then tail. */
static char *hostile_page(const char *head, const char *filler, size_t size, const char *tail,
                          size_t *len)
{
    size_t hl = strlen(head), fl = strlen(filler), tl = strlen(tail);
    char *body = malloc(hl + size + fl + tl + 1);
    assert_non_null(body);
    memcpy(body, head, hl);
    size_t n = hl;
    if (fl == 0) { /* "" stands for NUL bytes */
        memset(body + n, 0, size);
        n += size;
    } else
        for (size_t i = 0; i < size; i += fl, n += fl)
            memcpy(body + n, filler, fl);
    memcpy(body + n, tail, tl + 1);
    *len = n + tl;
    return body;
}

/* Each page of 4 MiB of something libxml2 would hold whole (16 MiB cost it 48 MB for
 * NUL bytes, which become U+FFFD): libxml2's allocations for the parser stay under
 * LINKS_MEMORY_BOUND, the link before counts, and so does the one after when the
 * construct ends; whatever the pieces the body comes in. */
static void test_memory_bounded(void **state)
{
    (void)state;
    static const struct {
        bool xml;
        const char *head, *filler, *tail, *links;
    } pages[] = {
        {false, "<a href=/b>", "", "<a href=/after>", "b after"}, /* NUL bytes */
        {false, "<a href=/b>", "text ", "<a href=/after>", "b after"},
        {false, "<a href=/b><p>", "&&", "<a href=/after>", "b after"},
        {false, "<a href=/b><p>", "<<", "<a href=/after>", "b after"},
        {false, "<a href=/b>", " \n", "<a href=/after>", "b after"},
        {false, "<a href=/b><!--", "<a href=/x>- ", "--!><a href=/after>", "b after"},
        {false, "<a href=/b><script>", "a<b</x ", "</script><a href=/after>", "b after"},
        {false, "<a href=/b><style>", "<a href=/x>", "</STYLE><a href=/after>", "b after"},
        {false, "<a href=/b></a ", "<a href=/x ", "><a href=/after>", "b after"},
        {false, "<a href=/b><?pi ", "<a href=/x ", "><a href=/after>", "b after"},
        {false, "<a href=/b><!DOCTYPE x \"", "text ", "\"><a href=/after>", "b"},
        {false, "<a href=/b><p title=\"", "text ", "\"><a href=/after>", "b"},
        {true, "<r><a href='/b'/><!--", "<a href='/x'/>", "--><a href='/after'/></r>", "b after"},
        {true, "<r><a href='/b'/><![CDATA[", "<a href='/x'/>", "]]><a href='/after'/></r>",
         "b after"},
        {true, "<r><a href='/b'/><?pi ", "<a href='/x'/>", "?><a href='/after'/></r>", "b after"},
        {true, "<r><a href='/b'/>", "&amp", ";<a href='/after'/></r>", "b"},
    };
    const size_t pieces[] = {16384, 65537, 1 << 20};
    xmlMemSetup(memcount_free, memcount_malloc, memcount_realloc, memcount_strdup);
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        size_t len;
        char *body = hostile_page(pages[i].head, pages[i].filler, 4 << 20, pages[i].tail, &len);
        char want[128] = "";
        for (const char *w = pages[i].links; *w;) {
            size_t n = strcspn(w, " ");
            snprintf(want + strlen(want), sizeof want - strlen(want), "http://example.com/%.*s\n",
                     (int)n, w);
            w += n + (w[n] == ' ');
        }
        for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
            memcount_now = memcount_peak = 0;
            found f = parse_pieces(body, len, PAGE, NULL, pages[i].xml, pieces[k]);
            if (memcount_peak >= LINKS_MEMORY_BOUND || strcmp(text_of(&f), want) != 0)
                fail_msg("page %zu (%s...%s) in pieces of %zu: libxml2 peaked at %ld KB "
                         "(bound %d KB); links '%s', want '%s'",
                         i, pages[i].head, pages[i].tail, pieces[k], memcount_peak / 1024,
                         LINKS_MEMORY_BOUND / 1024, text_of(&f), want);
            found_free(&f);
        }
        free(body);
    }
    xmlMemSetup(free, xmalloc, xrealloc, xstrdup);
}

/* Names: libxml2 keeps each element and attribute name once, for the whole page; a page
 * of new names only stops adding names, and the links still count. */
static void test_many_names_bounded(void **state)
{
    (void)state;
    char *body = NULL;
    size_t len = 0, cap = 0;
    char tag[64];
    append(&body, &len, &cap, "<p>");
    for (int i = 0; i < 200000; i++) {
        snprintf(tag, sizeof tag, i % 2 ? "<t%d></t%d>" : "<b x%d=1></b>", i, i);
        append(&body, &len, &cap, tag);
    }
    append(&body, &len, &cap, "<a href=/after>a</a>");
    xmlMemSetup(memcount_free, memcount_malloc, memcount_realloc, memcount_strdup);
    memcount_now = memcount_peak = 0;
    found f = parse_pieces(body, len, PAGE, NULL, false, 16384);
    xmlMemSetup(free, xmalloc, xrealloc, xstrdup);
    assert_true(memcount_peak < LINKS_MEMORY_BOUND);
    assert_string_equal(text_of(&f), "http://example.com/after\n");
    found_free(&f);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_wanted, teardown),
        cmocka_unit_test_teardown(test_href_on_any_element, teardown),
        cmocka_unit_test_teardown(test_value_forms, teardown),
        cmocka_unit_test_teardown(test_fragment_dropped, teardown),
        cmocka_unit_test_teardown(test_duplicates_passed_on, teardown),
        cmocka_unit_test_teardown(test_other_schemes_as_resolved, teardown),
        cmocka_unit_test_teardown(test_base_absolute, teardown),
        cmocka_unit_test_teardown(test_base_relative_first_only, teardown),
        cmocka_unit_test_teardown(test_split_every_point, teardown),
        cmocka_unit_test_teardown(test_xhtml_both_ways, teardown),
        cmocka_unit_test_teardown(test_xml_document, teardown),
        cmocka_unit_test_teardown(test_xml_entities_not_expanded, teardown),
        cmocka_unit_test_teardown(test_latin1_charset, teardown),
        cmocka_unit_test_teardown(test_xml_charset_wins_over_declaration, teardown),
        cmocka_unit_test_teardown(test_default_and_unknown_charset, teardown),
        cmocka_unit_test_teardown(test_meta_does_not_override_http, teardown),
        cmocka_unit_test_teardown(test_invalid_bytes_in_charset, teardown),
        cmocka_unit_test_teardown(test_shift_jis_every_split, teardown),
        cmocka_unit_test_teardown(test_garbage, teardown),
        cmocka_unit_test_teardown(test_edge_calls, teardown),
        cmocka_unit_test_teardown(test_libxml2_allocates_through_alloc_h, teardown),
        cmocka_unit_test_teardown(test_hundred_thousand_links, teardown),
        cmocka_unit_test_teardown(test_deep_nesting, teardown),
        cmocka_unit_test_teardown(test_unmatched_end_tags, teardown),
        cmocka_unit_test_teardown(test_long_tags, teardown),
        cmocka_unit_test_teardown(test_skip_finds_ends, teardown),
        cmocka_unit_test_teardown(test_memory_bounded, teardown),
        cmocka_unit_test_teardown(test_many_names_bounded, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
