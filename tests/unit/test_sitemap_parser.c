/* test_sitemap_parser.c — the sitemap parser (common/web/sitemap_parser.h): urlsets and sitemap
 * indexes in any namespace, entities, gzip fed a byte at a time, text sitemaps; what it
 * refuses (another root, broken XML, too many URLs, too deep, a construct too long) and
 * what it skips (a loc too long); hostile files (billion laughs, a gzip bomb, a nesting
 * bomb) stopped within the limits, libxml2's memory measured, stderr left silent. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/xmlmemory.h>
#include <zlib.h>

#include "alloc.h"
#include "memcount.h"
#include "sitemap_parser.h"

/* What the callback got: "U loc\n" per URL, "I loc\n" per index entry. */
typedef struct got {
    char *text;
    size_t len, cap, n;
} got;

static void on_loc(void *ctx, sitemap_kind kind, const char *loc)
{
    got *g = ctx;
    char *line = xasprintf("%c %s\n", kind == SITEMAP_URL ? 'U' : 'I', loc);
    xappend(&g->text, &g->len, &g->cap, line, strlen(line) + 1);
    g->len--; /* keep the NUL after, not in, the text */
    g->n++;
    free(line);
}

static const char *text_of(const got *g)
{
    return g->text ? g->text : "";
}

/* One parse of the whole of data in pieces of `piece` bytes (0: at once). */
typedef struct result {
    got g;
    int feed_rc; /* -1 once any feed said so */
    int finish_rc;
    char error[256];
    size_t count;
} result;

static result parse_with(const sitemap_limits *l, const void *data, size_t len, size_t piece)
{
    result r = {.feed_rc = 0};
    sitemap_parser *p = sitemap_parser_new(l, on_loc, &r.g);
    const char *d = data;
    for (size_t off = 0; off < len;) {
        size_t n = piece && piece < len - off ? piece : len - off;
        if (sitemap_parser_feed(p, d + off, n) < 0)
            r.feed_rc = -1;
        off += n;
    }
    r.finish_rc = sitemap_parser_finish(p);
    const char *e = sitemap_parser_error(p);
    snprintf(r.error, sizeof r.error, "%s", e ? e : "");
    r.count = sitemap_parser_count(p);
    assert_int_equal(r.count, r.g.n);
    sitemap_parser_free(p);
    return r;
}

static result parse(const char *text, size_t piece)
{
    return parse_with(NULL, text, strlen(text), piece);
}

/* parse_with, with what libxml2 allocates meanwhile counted: its peak in *peak. */
static result parse_measured(const void *data, size_t len, size_t piece, long *peak)
{
    xmlMemSetup(memcount_free, memcount_malloc, memcount_realloc, memcount_strdup);
    memcount_now = memcount_peak = 0;
    result r = parse_with(NULL, data, len, piece);
    xmlMemSetup(free, xmalloc, xrealloc, xstrdup);
    *peak = memcount_peak;
    return r;
}

static void result_free(result *r)
{
    free(r->g.text);
}

/* The same result whatever the pieces the file comes in. */
static void expect(const char *text, int finish_rc, const char *want, const char *error)
{
    static const size_t pieces[] = {0, 1, 2, 3, 7, 64};
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        result r = parse(text, pieces[i]);
        if (r.finish_rc != finish_rc || strcmp(text_of(&r.g), want) != 0
            || strncmp(r.error, error, strlen(error)) != 0 || (!*error && *r.error))
            fail_msg("in pieces of %zu: finish %d (want %d), got '%s' (want '%s'), "
                     "error '%s' (want '%s...')",
                     pieces[i], r.finish_rc, finish_rc, text_of(&r.g), want, r.error, error);
        result_free(&r);
    }
}

/* ---- gzip, with zlib, streamed: head, `count` copies of filler, tail ------------ */

typedef struct buf {
    char *data;
    size_t len, cap;
} buf;

static void deflate_more(z_stream *zs, buf *out, const void *in, size_t n, int flush)
{
    zs->next_in = (unsigned char *)in;
    zs->avail_in = (uInt)n;
    do {
        unsigned char chunk[16384];
        zs->next_out = chunk;
        zs->avail_out = sizeof chunk;
        int rc = deflate(zs, flush);
        assert_true(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR);
        xappend(&out->data, &out->len, &out->cap, chunk, sizeof chunk - zs->avail_out);
    } while (zs->avail_out == 0);
}

static buf gzip_of(const char *head, const char *filler, size_t count, const char *tail)
{
    z_stream zs = {0};
    assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
    buf out = {0};
    deflate_more(&zs, &out, head, strlen(head), Z_NO_FLUSH);
    size_t fl = strlen(filler) ? strlen(filler) : 1; /* "" stands for a NUL byte */
    char block[65536];
    size_t per = sizeof block / fl;
    for (size_t i = 0; i < per; i++)
        memcpy(block + i * fl, filler, fl);
    for (size_t done = 0; done < count;) {
        size_t k = count - done < per ? count - done : per;
        deflate_more(&zs, &out, block, k * fl, Z_NO_FLUSH);
        done += k;
    }
    deflate_more(&zs, &out, tail, strlen(tail), Z_FINISH);
    deflateEnd(&zs);
    return out;
}

/* ---- well-formed files ------------------------------------------------------------ */

static const char URLSET[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"\n"
    "        xmlns:image=\"http://www.google.com/schemas/sitemap-image/1.1\">\n"
    "  <loc>http://example.com/not-in-a-url</loc>\n"
    "  <url>\n"
    "    <loc>http://example.com/</loc>\n"
    "    <lastmod>2024-01-01</lastmod>\n"
    "  </url>\n"
    "  <url><loc>\n\t  http://example.com/a?x=1&amp;y=2&#38;z=&lt;3&gt;  \n</loc>\n"
    "    <image:image><image:loc>http://example.com/img.png</image:loc></image:image>\n"
    "    <changefreq>daily</changefreq><priority>0.8</priority>\n"
    "  </url>\n"
    "  <!-- a comment --><url><loc><![CDATA[http://example.com/b?c=1&d=2]]></loc></url>\n"
    "  <url><loc>   </loc></url>\n"
    "  <other><url><loc>http://example.com/too-deep</loc></url></other>\n"
    "</urlset>\n";

static void test_urlset(void **state)
{
    (void)state;
    expect(URLSET, 0,
           "U http://example.com/\n"
           "U http://example.com/a?x=1&y=2&z=<3>\n"
           "U http://example.com/b?c=1&d=2\n",
           "");
}

/* Namespaces as real sitemaps get them wrong: none, an old one, a prefix. */
static void test_any_namespace(void **state)
{
    (void)state;
    expect("<urlset><url><loc>http://a/1</loc></url></urlset>", 0, "U http://a/1\n", "");
    expect("<urlset xmlns=\"http://www.google.com/schemas/sitemap/0.84\"><url>"
           "<loc>http://a/1</loc></url></urlset>",
           0, "U http://a/1\n", "");
    expect("<s:urlset xmlns:s=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><s:url>"
           "<s:loc>http://a/1</s:loc></s:url></s:urlset>",
           0, "U http://a/1\n", "");
    /* a prefix never declared: a namespace error, not a well-formedness one */
    expect("<urlset><url><x:loc>http://a/1</x:loc></url></urlset>", 0, "U http://a/1\n", "");
}

static void test_sitemapindex(void **state)
{
    (void)state;
    expect("\xEF\xBB\xBF<?xml version='1.0'?>\r\n"
           "<sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>\r\n"
           "<sitemap><loc>https://example.com/s1.xml.gz</loc>"
           "<lastmod>2024-01-01</lastmod></sitemap>\r\n"
           "<sitemap>\r\n<loc> https://example.com/s2.xml?a=1&amp;b=2 </loc>\r\n</sitemap>\r\n"
           "<url><loc>https://example.com/not-an-entry</loc></url>\r\n"
           "</sitemapindex>",
           0, "I https://example.com/s1.xml.gz\nI https://example.com/s2.xml?a=1&b=2\n", "");
}

/* Leading blank lines before the XML declaration (which XML forbids) are forgiven. */
static void test_leading_blanks(void **state)
{
    (void)state;
    expect("\n\n  <?xml version=\"1.0\"?><urlset><url><loc>http://a/1</loc></url></urlset>", 0,
           "U http://a/1\n", "");
}

static void test_utf16(void **state)
{
    (void)state;
    const char *ascii = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>"
                        "<urlset><url><loc>http://a/\xc3\xa9</loc></url></urlset>";
    /* as UTF-16LE with a BOM; the é (U+00E9) is one unit */
    char u16[512];
    size_t n = 0;
    u16[n++] = (char)0xFF, u16[n++] = (char)0xFE;
    for (const unsigned char *c = (const unsigned char *)ascii; *c; c++) {
        if (*c == 0xc3) {
            u16[n++] = (char)0xE9, u16[n++] = 0;
            c++;
        } else {
            u16[n++] = (char)*c, u16[n++] = 0;
        }
    }
    for (size_t piece = 0; piece < 4; piece++) {
        result r = parse_with(NULL, u16, n, piece);
        assert_int_equal(r.finish_rc, 0);
        assert_string_equal(text_of(&r.g), "U http://a/\xc3\xa9\n");
        result_free(&r);
    }
}

static void test_gzip_bytewise(void **state)
{
    (void)state;
    buf gz = gzip_of(URLSET, "", 0, "");
    assert_true(gz.len > 2 && (unsigned char)gz.data[0] == 0x1f);
    static const size_t pieces[] = {1, 2, 5, 0};
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        result r = parse_with(NULL, gz.data, gz.len, pieces[i]);
        assert_int_equal(r.feed_rc, 0);
        assert_int_equal(r.finish_rc, 0);
        assert_string_equal(text_of(&r.g),
                            "U http://example.com/\n"
                            "U http://example.com/a?x=1&y=2&z=<3>\n"
                            "U http://example.com/b?c=1&d=2\n");
        result_free(&r);
    }
    /* corrupt after the header: refused, nothing delivered */
    gz.data[gz.len / 2] ^= 0x55;
    gz.data[gz.len / 2 + 1] ^= 0x55;
    result r = parse_with(NULL, gz.data, gz.len, 0);
    assert_int_equal(r.finish_rc, -1);
    assert_true(*r.error);
    result_free(&r);
    free(gz.data);
}

/* ---- refused -------------------------------------------------------------------- */

static void test_html_root(void **state)
{
    (void)state;
    static const char html[] = "<!DOCTYPE html>\n<html lang=en><head><title>Not found"
                               "</title></head><body><a href=/x>x</a></body></html>";
    expect(html, -1, "", "root element is <html>, not <urlset> or <sitemapindex>");
    result r = parse(html, 0);
    assert_int_equal(r.feed_rc, -1);
    assert_string_equal(r.error, "root element is <html>, not <urlset> or <sitemapindex>");
    result_free(&r);
    expect("<rss><channel><item><link>http://a/</link></item></channel></rss>", -1, "",
           "root element is <rss>");
}

/* Cut in the third url: the two before are delivered, the file is not whole. */
static void test_truncated(void **state)
{
    (void)state;
    expect("<urlset><url><loc>http://a/1</loc></url><url><loc>http://a/2</loc></url>"
           "<url><loc>http://a/3",
           -1, "U http://a/1\nU http://a/2\n", "not XML: ");
    expect("<urlset><url><loc>http://a/1</loc></url></urlset", -1, "U http://a/1\n", "not XML: ");
    /* broken in the middle: the error is the first one, the feed says stop */
    static const char broken[] = "<urlset><url><loc>http://a/1</loc></url><url></lo"
                                 "c></url><url><loc>http://a/2</loc></url></urlset>";
    expect(broken, -1, "U http://a/1\n", "not XML: line 1: ");
    result r = parse(broken, 0);
    assert_int_equal(r.feed_rc, -1);
    assert_null(strchr(r.error, '\n'));
    result_free(&r);
    expect("", -1, "", "empty file");
    expect(" \n\t", -1, "", "empty file");
    expect("<?xml version=\"1.0\"?>", -1, "", "not XML: ");
}

/* n urls "http://example.com/page/I" in a urlset. */
static char *many_urls(size_t n, size_t *len)
{
    buf b = {0};
    const char *head = "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/"
                       "schemas/sitemap/0.9\">\n";
    xappend(&b.data, &b.len, &b.cap, head, strlen(head));
    for (size_t i = 0; i < n; i++) {
        char line[128];
        int k =
            snprintf(line, sizeof line, "<url><loc>http://example.com/page/%zu</loc></url>\n", i);
        xappend(&b.data, &b.len, &b.cap, line, (size_t)k);
    }
    xappend(&b.data, &b.len, &b.cap, "</urlset>\n", 11);
    *len = b.len - 1;
    return b.data;
}

static void test_max_urls_default(void **state)
{
    (void)state;
    size_t len;
    char *text = many_urls(50001, &len);
    result r = parse_with(NULL, text, len, 65536);
    assert_int_equal(r.count, 50000);
    assert_int_equal(r.feed_rc, -1);
    assert_int_equal(r.finish_rc, -1);
    assert_string_equal(r.error, "more than 50000 URLs: the rest ignored");
    /* the last one delivered is the 50,000th */
    assert_non_null(strstr(text_of(&r.g), "U http://example.com/page/49999\n"));
    assert_null(strstr(text_of(&r.g), "page/50000"));
    result_free(&r);
    free(text);

    text = many_urls(50000, &len);
    r = parse_with(NULL, text, len, 65536);
    assert_int_equal(r.count, 50000);
    assert_int_equal(r.finish_rc, 0);
    assert_string_equal(r.error, "");
    result_free(&r);
    free(text);
}

static void test_max_urls_small(void **state)
{
    (void)state;
    sitemap_limits l;
    sitemap_default_limits(&l);
    l.max_urls = 10;
    size_t len;
    for (size_t n = 9; n <= 12; n++) {
        char *text = many_urls(n, &len);
        result r = parse_with(&l, text, len, 17);
        assert_int_equal(r.count, n < 10 ? n : 10);
        assert_int_equal(r.finish_rc, n <= 10 ? 0 : -1);
        if (n > 10)
            assert_string_equal(r.error, "more than 10 URLs: the rest ignored");
        result_free(&r);
        free(text);
    }
}

/* A loc of max_loc_len bytes (blanks around it do not count) is kept; one byte more
 * and it is skipped, the parse going on. */
static void test_long_loc(void **state)
{
    (void)state;
    char *fits = xmalloc(SITEMAP_MAX_LOC + 1), *over = xmalloc(SITEMAP_MAX_LOC + 2);
    memset(fits, 'a', SITEMAP_MAX_LOC);
    memcpy(fits, "http://", 7);
    fits[SITEMAP_MAX_LOC] = '\0';
    memset(over, 'b', SITEMAP_MAX_LOC + 1);
    memcpy(over, "http://", 7);
    over[SITEMAP_MAX_LOC + 1] = '\0';
    char *text = xasprintf("<urlset><url><loc>http://a/1</loc></url>"
                           "<url><loc>%s</loc></url><url><loc>\n   %s   \n</loc></url>"
                           "<url><loc>http://a/2</loc></url></urlset>",
                           over, fits);
    char *want = xasprintf("U http://a/1\nU %s\nU http://a/2\n", fits);
    expect(text, 0, want, "");
    free(text);
    free(want);

    /* 200 KB of text in a loc: skipped, not held by libxml2 as one construct */
    buf b = {0};
    const char *head = "<urlset><url><loc>http://a/";
    xappend(&b.data, &b.len, &b.cap, head, strlen(head));
    for (int i = 0; i < 200 * 1024; i++)
        xappend(&b.data, &b.len, &b.cap, "x", 1);
    const char *tail = "</loc></url><url><loc>http://a/after</loc></url></urlset>";
    xappend(&b.data, &b.len, &b.cap, tail, strlen(tail));
    result r = parse_with(NULL, b.data, b.len, 65536);
    assert_int_equal(r.finish_rc, 0);
    assert_string_equal(text_of(&r.g), "U http://a/after\n");
    result_free(&r);
    free(b.data);
    free(fits);
    free(over);
}

/* A tag, comment or attribute libxml2 would have to hold whole: refused past
 * SITEMAP_MAX_HELD, the locs before it delivered. */
static void test_long_construct(void **state)
{
    (void)state;
    static const char *const opens[] = {"<!--", "<url a=\"", "<?pi "};
    for (size_t i = 0; i < sizeof opens / sizeof opens[0]; i++) {
        buf b = {0};
        const char *head = "<urlset><url><loc>http://a/1</loc></url>";
        xappend(&b.data, &b.len, &b.cap, head, strlen(head));
        xappend(&b.data, &b.len, &b.cap, opens[i], strlen(opens[i]));
        for (int k = 0; k < 100 * 1024; k++)
            xappend(&b.data, &b.len, &b.cap, "y", 1);
        long peak;
        result r = parse_measured(b.data, b.len, 100 * 1024, &peak);
        assert_int_equal(r.feed_rc, -1);
        assert_int_equal(r.finish_rc, -1);
        assert_string_equal(text_of(&r.g), "U http://a/1\n");
        assert_non_null(strstr(r.error, "over 65536 bytes"));
        if (peak >= SITEMAP_MEMORY_BOUND)
            fail_msg("%s: libxml2 peaked at %ld KB", opens[i], peak / 1024);
        result_free(&r);
        free(b.data);
    }
}

/* ---- hostile files ----------------------------------------------------------------- */

static void test_nesting_bomb(void **state)
{
    (void)state;
    buf b = {0};
    const char *head = "<urlset><url><loc>http://a/1</loc></url>";
    xappend(&b.data, &b.len, &b.cap, head, strlen(head));
    for (int i = 0; i < 100000; i++)
        xappend(&b.data, &b.len, &b.cap, "<x>", 3);
    long peak;
    result r = parse_measured(b.data, b.len, 65536, &peak);
    assert_int_equal(r.feed_rc, -1);
    assert_int_equal(r.finish_rc, -1);
    assert_string_equal(r.error, "nesting deeper than 16");
    assert_string_equal(text_of(&r.g), "U http://a/1\n");
    if (peak >= SITEMAP_MEMORY_BOUND)
        fail_msg("libxml2 peaked at %ld KB", peak / 1024);
    result_free(&r);
    free(b.data);

    /* 16 deep is fine: urlset, url, then 14 more */
    char deep[512] = "<urlset><url><loc>http://a/1</loc>";
    for (int i = 0; i < 14; i++)
        strcat(deep, "<x>");
    for (int i = 0; i < 14; i++)
        strcat(deep, "</x>");
    strcat(deep, "</url></urlset>");
    expect(deep, 0, "U http://a/1\n", "");
}

/* Billion laughs: ten entities of ten references each, 10^9 "lol"s if expanded. They
 * are never declared to libxml2, so the reference is an undeclared entity. */
static void test_billion_laughs(void **state)
{
    (void)state;
    buf b = {0};
    const char *doctype = "<?xml version=\"1.0\"?>\n<!DOCTYPE urlset [\n"
                          "  <!ENTITY lol \"lol\">\n";
    xappend(&b.data, &b.len, &b.cap, doctype, strlen(doctype));
    for (int i = 1; i <= 9; i++) {
        char line[256];
        int n = snprintf(line, sizeof line, "  <!ENTITY lol%d \"", i);
        for (int k = 0; k < 10; k++)
            n += snprintf(line + n, sizeof line - (size_t)n, i == 1 ? "&lol;" : "&lol%d;", i - 1);
        n += snprintf(line + n, sizeof line - (size_t)n, "\">\n");
        xappend(&b.data, &b.len, &b.cap, line, (size_t)n);
    }
    const char *body = "]>\n<urlset><url><loc>http://a/&lol9;</loc></url>"
                       "<url><loc>http://a/2</loc></url></urlset>\n";
    xappend(&b.data, &b.len, &b.cap, body, strlen(body));
    long peak;
    result r = parse_measured(b.data, b.len, 0, &peak);
    assert_int_equal(r.finish_rc, -1);
    assert_int_equal(r.count, 0);
    assert_non_null(strstr(r.error, "lol9"));
    assert_true(peak < SITEMAP_MEMORY_BOUND);
    result_free(&r);
    free(b.data);

    /* an external entity (XXE) is not fetched nor read either */
    expect("<!DOCTYPE urlset [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
           "<urlset><url><loc>http://a/&x;</loc></url></urlset>",
           -1, "", "not XML: ");
}

/* 60 MB of whitespace inside <urlset>, gzipped to about 60 KB: stopped at 50 MB, the
 * url before delivered, and libxml2 never holds more than a little of it. The same with
 * NUL bytes (a text sitemap then: one endless line). */
static void test_gzip_bomb(void **state)
{
    (void)state;
    static const struct {
        const char *head, *filler, *want;
    } bombs[] = {
        {"<urlset><url><loc>http://a/1</loc></url>", " \n", "U http://a/1\n"},
        {"http://a/1\n", "", "U http://a/1\n"},
    };
    for (size_t i = 0; i < sizeof bombs / sizeof bombs[0]; i++) {
        size_t fl = strlen(bombs[i].filler) ? strlen(bombs[i].filler) : 1;
        buf gz = gzip_of(bombs[i].head, bombs[i].filler, (60u << 20) / fl,
                         "<url><loc>http://a/after</loc></url></urlset>");
        assert_true(gz.len < 1024 * 1024);
        long peak;
        result r = parse_measured(gz.data, gz.len, 4096, &peak);
        assert_int_equal(r.feed_rc, -1);
        assert_int_equal(r.finish_rc, -1);
        assert_string_equal(r.error, "over 52428800 bytes: the rest ignored");
        assert_string_equal(text_of(&r.g), bombs[i].want);
        if (peak >= SITEMAP_MEMORY_BOUND)
            fail_msg("bomb %zu: libxml2 peaked at %ld KB", i, peak / 1024);
        result_free(&r);
        free(gz.data);
    }
}

/* ---- text sitemaps --------------------------------------------------------------------- */

static void test_text(void **state)
{
    (void)state;
    expect("http://example.com/\r\n"
           "  https://example.com/a?x=1&amp;y  \n"
           "\n"
           "# a comment\n"
           "ftp://example.com/file\n"
           "HTTPS://EXAMPLE.COM/UPPER\r"
           "\t\thttp://example.com/last",
           0,
           "U http://example.com/\n"
           "U https://example.com/a?x=1&amp;y\n"
           "U HTTPS://EXAMPLE.COM/UPPER\n"
           "U http://example.com/last\n",
           "");
    /* not a sitemap at all */
    expect("{\"error\": \"not found\"}\n", -1, "", "not a sitemap: ");
    /* the limits hold too */
    sitemap_limits l;
    sitemap_default_limits(&l);
    l.max_urls = 2;
    l.max_loc_len = 16;
    static const char text[] = "http://a/1\nhttp://a/too-long-for-16\n"
                               "http://a/2\nhttp://a/3\n";
    result r = parse_with(&l, text, strlen(text), 5);
    assert_string_equal(text_of(&r.g), "U http://a/1\nU http://a/2\n");
    assert_int_equal(r.finish_rc, -1);
    assert_string_equal(r.error, "more than 2 URLs: the rest ignored");
    result_free(&r);
    /* a NUL in a line: not a URL (nor a string) */
    static const char nul[] = "http://a/1\nhttp://a/\0x\nhttp://a/2\n";
    r = parse_with(NULL, nul, sizeof nul - 1, 0);
    assert_int_equal(r.finish_rc, 0);
    assert_string_equal(text_of(&r.g), "U http://a/1\nU http://a/2\n");
    result_free(&r);
    /* gzipped */
    buf gz = gzip_of("http://a/1\nhttp://a/2", "", 0, "");
    r = parse_with(NULL, gz.data, gz.len, 1);
    assert_int_equal(r.finish_rc, 0);
    assert_string_equal(text_of(&r.g), "U http://a/1\nU http://a/2\n");
    result_free(&r);
    free(gz.data);
}

/* ---- libxml2 stays silent ------------------------------------------------------------- */

static void test_stderr_silent(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "<urlset><url></loc></urlset>",
        "<html><body>x",
        "<urlset>&undefined;</urlset>",
        "<?xml version=\"1.0\" encoding=\"bogus-charset\"?><urlset/>",
        "<urlset a='1' a='2'/>",
    };
    fflush(stderr);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(2);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), 2) >= 0);
    int failed = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        result r = parse(bad[i], 3);
        failed += r.finish_rc == -1 && *r.error;
        result_free(&r);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct stat st;
    assert_int_equal(fstat(fileno(tmp), &st), 0);
    fclose(tmp);
    assert_int_equal(failed, (int)(sizeof bad / sizeof bad[0]));
    assert_int_equal(st.st_size, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_urlset),
        cmocka_unit_test(test_any_namespace),
        cmocka_unit_test(test_sitemapindex),
        cmocka_unit_test(test_leading_blanks),
        cmocka_unit_test(test_utf16),
        cmocka_unit_test(test_gzip_bytewise),
        cmocka_unit_test(test_html_root),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_max_urls_default),
        cmocka_unit_test(test_max_urls_small),
        cmocka_unit_test(test_long_loc),
        cmocka_unit_test(test_long_construct),
        cmocka_unit_test(test_nesting_bomb),
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test(test_gzip_bomb),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_stderr_silent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
