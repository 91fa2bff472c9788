/* test_links_requisites.c — page requisites as the link parser's requisites mode finds
 * them (common/web/links_requisites.c, links.c) and the CSS url() tokenizer
 * (css_urls.c): each kind of requisite, srcset candidates, <style> and style
 * attributes, <base href>, what is not a requisite, and CSS comments, strings,
 * escapes and bad urls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "css_urls.h"
#include "links.h"

/* What a scan found: the URLs, one per line. */
typedef struct found {
    char text[4096];
} found;

static void collect(void *ctx, const char *url)
{
    found *f = ctx;
    size_t n = strlen(f->text);
    snprintf(f->text + n, sizeof f->text - n, "%s\n", url);
}

static void expect_css(const char *css, const char *want)
{
    found f = {""};
    css_urls(css, strlen(css), collect, &f);
    if (strcmp(f.text, want) != 0)
        fail_msg("css_urls(%s):\n got:\n%s want:\n%s", css, f.text, want);
}

static void test_css_urls(void **state)
{
    (void)state;
    expect_css("a{background:url(x.png)}", "x.png\n");
    expect_css("a{background:URL( \"q u.png\" )}", "q u.png\n");
    expect_css("a{background:url(  'y.png'  )}", "y.png\n");
    expect_css("@import 'a.css'; @IMPORT url(b.css); @import \"c.css\" screen;",
               "a.css\nb.css\nc.css\n");
    expect_css("/* url(no.png) */ b{x:url(yes.png)}", "yes.png\n");
    /* an empty <style> hands over no text at all (fuzz_links found the NULL) */
    found none = {""};
    css_urls(NULL, 0, collect, &none);
    assert_string_equal(none.text, "");
    expect_css("b{content:'url(no.png)'} c{x:url(\\28 paren\\29.png)}", "(paren).png\n");
    expect_css("myurl(no.png) x-url(no2.png) url(ok.png)", "ok.png\n");
    expect_css("u{x:url(a b.png)} v{x:url(c.png)}", "c.png\n");    /* a bad url is dropped */
    expect_css("w{x:url()} @import ''; z{x:url(d.png", "d.png\n"); /* empty; unterminated */
    /* a newline ends a string as bad; the quote after it opens another, to the line's end */
    expect_css("s{x:url(\"bad\nstring\")\n} t{x:url(e.png)}", "e.png\n");
    expect_css("@font-face{src:url(f.woff2) format('woff2'),url(f.woff)}", "f.woff2\nf.woff\n");
    expect_css("", "");
}

static void expect_page(const char *html, const char *want)
{
    found f = {""};
    links_parser *lp = links_new_requisites("http://h.test/dir/page.html", NULL, collect, &f);
    links_feed(lp, html, strlen(html));
    links_finish(lp);
    links_free(lp);
    if (strcmp(f.text, want) != 0)
        fail_msg("requisites of %s:\n got:\n%s want:\n%s", html, f.text, want);
}

static void test_each_kind(void **state)
{
    (void)state;
    expect_page("<style></style><img src=a.png>", "http://h.test/dir/a.png\n");
    expect_page("<html><head>"
                "<link rel=stylesheet href=s.css><link rel='shortcut icon' href=/f.ico>"
                "<link rel=next href=/not-a-requisite><link rel=ICON href=i.ico>"
                "<script src=/app.js></script><script>var u='url(no.png)'</script>"
                "<style>body{background:url(/bg.png)} /* url(/no.png) */</style>"
                "</head><body style=\"background:url('b.png')\">"
                "<a href=/link.html>a link</a>"
                "<img src=img.png srcset=\"s1.png 1x, s2.png 2x,s3.png\">"
                "<picture><source srcset='p.webp 100w, q.webp 200w'></picture>"
                "<source src=/audio.ogg><video poster=v.jpg src=v.mp4></video>"
                "<audio src=//other.test/a.mp3></audio>"
                "<img src=\"data:image/png;base64,AAA\"></body></html>",
                "http://h.test/dir/s.css\n"
                "http://h.test/f.ico\n"
                "http://h.test/dir/i.ico\n"
                "http://h.test/app.js\n"
                "http://h.test/bg.png\n"
                "http://h.test/dir/b.png\n"
                "http://h.test/dir/img.png\n"
                "http://h.test/dir/s1.png\n"
                "http://h.test/dir/s2.png\n"
                "http://h.test/dir/s3.png\n"
                "http://h.test/dir/p.webp\n"
                "http://h.test/dir/q.webp\n"
                "http://h.test/audio.ogg\n"
                "http://h.test/dir/v.jpg\n"
                "http://h.test/dir/v.mp4\n"
                "http://other.test/a.mp3\n"); /* data: resolves to no URL */
}

static void test_base_and_srcset_edges(void **state)
{
    (void)state;
    /* <base href> moves what follows; a srcset URL with commas in it; descriptors with
     * parentheses */
    expect_page("<base href=http://cdn.test/x/><img src=a.png>"
                "<img srcset='b,c.png 1x, d.png (max-width: 1px, 2px) 2x, e.png'>",
                "http://cdn.test/x/a.png\nhttp://cdn.test/x/b,c.png\n"
                "http://cdn.test/x/d.png\nhttp://cdn.test/x/e.png\n");
    expect_page("<p>no requisites <a href=x>here</a></p>", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_css_urls),
        cmocka_unit_test(test_each_kind),
        cmocka_unit_test(test_base_and_srcset_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
