/* test_mirror_links.c — the answers of url_resolve that --mirror's conversion keeps
 * (stage3_queue/pipelines/mirror_links.c, mirror_resolve): through one store, shared
 * by every base, each answer is url_resolve's own, for bases that share a directory, an
 * origin or nothing, and for hrefs of every kind (absolute, "/path", "//host", relative
 * paths with dot segments, queries, schemes of other kinds, bytes that url_resolve
 * cleans); and a conversion through the store gives the same text as one without. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mirror_links.h"
#include "url.h"

static const char *const bases[] = {
    "http://h.example/d/a.html",
    "http://h.example/d/b.html?q=1/2",
    "http://h.example/d/",
    "http://h.example/d/e/f.html",
    "http://h.example/d",
    "http://h.example",
    "http://h.example/d/a.html#top",
    "https://h.example/d/a.html",
    "http://127.0.0.1:8080/d/a.html",
    "http://u:p@h.example/d/a.html",
    "http://mirror.invalid/h.example/d/a.html",
    "http://H.example/D/a.html",
};

static const char *const hrefs[] = {
    "x.html",
    "./x.html",
    "../x.html",
    "../../../x.html",
    ".",
    "..",
    "e/",
    "x.html?a=1",
    "x.html?a=/b",
    "/x.html",
    "/d/../x",
    "//o.example/x",
    "//o.example",
    "http://o.example",
    "HTTPS://O.example/A/../b",
    "https://h.example/d/x#f",
    "?q=2",
    "?",
    "mailto:a@b",
    "javascript:void(0)",
    "data:text/plain,x",
    "http:x",
    "http:?q",
    "a:b/c",
    "c:\\x",
    "\x01?q",
    "a b",
    "a\tb",
    "\\x",
    "/\\o.example/x",
    "%7Euser/",
    "x%2F..%2Fy",
    "\xc3\xa0.html",
    "",
    "#f",
    "x#f",
};

#define N(a) (sizeof a / sizeof a[0])

static void test_same_answers(void **state)
{
    (void)state;
    mirror_resolved *r = mirror_resolved_new();
    size_t checked = 0;
    /* twice over, in two orders: the second round answers from the store */
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < N(bases); i++)
            for (size_t j = 0; j < N(hrefs); j++) {
                const char *base = bases[round ? N(bases) - 1 - i : i], *href = hrefs[j];
                char *want = url_resolve(base, href), *got = mirror_resolve(r, base, href);
                if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0))
                    fail_msg("'%s' against '%s': %s, url_resolve says %s", href, base,
                             got ? got : "NULL", want ? want : "NULL");
                free(want);
                free(got);
                checked++;
            }
    mirror_resolved_free(r);
    assert_int_equal(checked, 2 * N(bases) * N(hrefs));
}

static char *to_saved(void *ctx, const char *url)
{
    (void)ctx;
    return strstr(url, "/d/x") ? strdup("x.html") : NULL;
}

static void test_same_text(void **state)
{
    (void)state;
    static const char page[] = "<a href=x.html>1</a><a href='../x.html'>2</a>"
                               "<img src=/d/x.png srcset='x.png 1x, /e.png 2x'>"
                               "<a href=\"http://o.example/\">3</a><a href=?q>4</a>"
                               "<p style=\"background: url(x.gif)\">";
    mirror_resolved *r = mirror_resolved_new();
    for (size_t i = 0; i < N(bases); i++) {
        size_t n1 = 0, n2 = 0;
        char *a = mirror_convert_html(page, sizeof page - 1, bases[i], "self.html", to_saved, NULL,
                                      NULL, &n1);
        char *b = mirror_convert_html(page, sizeof page - 1, bases[i], "self.html", to_saved, NULL,
                                      r, &n2);
        assert_true((a == NULL) == (b == NULL));
        if (a && (n1 != n2 || memcmp(a, b, n1) != 0))
            fail_msg("against %s: %.*s | %.*s", bases[i], (int)n1, a, (int)n2, b);
        free(a);
        free(b);
    }
    mirror_resolved_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_answers),
        cmocka_unit_test(test_same_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
