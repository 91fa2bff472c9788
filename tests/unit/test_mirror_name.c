/* test_mirror_name.c — --mirror's names (stage3_queue/pipelines/mirror_name.c): the
 * rules of docs/mirror.md, the refusals, the escapes given back by mirror_unescape, the
 * short form of long names, and the relative links between two names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mirror_name.h"

static void expect_name(const char *url, mirror_kind kind, const char *want)
{
    char why[256] = "";
    char *got = mirror_name(url, kind, why, sizeof why);
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s: got %s (%s), want %s", url, got ? got : "NULL", why, want);
    free(got);
}

static void expect_refused(const char *url, const char *why_has)
{
    char why[256] = "";
    char *got = mirror_name(url, MIRROR_OTHER, why, sizeof why);
    if (got)
        fail_msg("%s: named %s, want a refusal", url, got);
    if (!strstr(why, why_has))
        fail_msg("%s: why is '%s', want '%s' in it", url, why, why_has);
}

static void test_rules(void **state)
{
    (void)state;
    expect_name("http://h.example/", MIRROR_HTML, "h.example/index.html");
    expect_name("http://h.example/a/", MIRROR_HTML, "h.example/a/index.html");
    expect_name("http://h.example/a/b.png", MIRROR_OTHER, "h.example/a/b.png");
    expect_name("http://127.0.0.1:8080/x.html", MIRROR_HTML, "127.0.0.1:8080/x.html");
    expect_name("https://h.example:443/x.htm", MIRROR_HTML, "h.example/x.htm");
    expect_name("http://h.example:80/x", MIRROR_OTHER, "h.example/x");
    expect_name("http://h.example/page", MIRROR_HTML, "h.example/page.html");
    expect_name("http://h.example/s.css?v=2", MIRROR_CSS, "h.example/s.css?v=2.css");
    expect_name("http://h.example/theme", MIRROR_CSS, "h.example/theme.css");
    expect_name("http://h.example/?p=1", MIRROR_HTML, "h.example/index.html?p=1.html");
    expect_name("http://h.example/a%20b", MIRROR_OTHER, "h.example/a b");
    expect_name("http://h.example/a%3Fb", MIRROR_OTHER, "h.example/a%3Fb");
    expect_name("http://h.example/a?b", MIRROR_OTHER, "h.example/a?b");
    expect_name("http://h.example/a%25b", MIRROR_OTHER, "h.example/a%25b");
    expect_name("http://h.example/q?a=1/2&b=%41", MIRROR_OTHER, "h.example/q?a=1%2F2&b=%2541");
    expect_name("http://h.example/a//b", MIRROR_OTHER, "h.example/a/b");
    expect_name("http://h.example/%0a", MIRROR_OTHER, "h.example/%0A");
    expect_name("http://[::1]:8000/", MIRROR_HTML, "[::1]:8000/index.html");
}

static void test_refusals(void **state)
{
    (void)state;
    expect_refused("http://h.example/%2e%2e/etc/passwd", "dot segment");
    expect_refused("http://h.example/a/%2E/b", "dot segment");
    expect_refused("http://h.example/a%2fb", "'/'");
    expect_refused("http://h.example/a%2F..%2Fb", "'/'");
    expect_refused("http://h.example/a%5cb", "backslash");
    expect_refused("http://h.example/a%00b", "NUL");
    expect_refused("ftp://h.example/a", "http");
    expect_refused("not a url", "http");
    char deep[1024] = "http://h.example";
    for (int i = 0; i < MIRROR_MAX_DEPTH + 1; i++)
        strcat(deep, "/d");
    strcat(deep, "/x");
    expect_refused(deep, "deeper");
}

/* Every component's bytes come back from the name. */
static void test_reversible(void **state)
{
    (void)state;
    const char *const cases[][2] = {
        {"http://h/a%25b%3Fc%0Ad?x=%2F/y", "a%b?c\nd?x=%2F/y"},
        {"http://h/caf%C3%A9", "caf\xc3\xa9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[256];
        char *name = mirror_name(cases[i][0], MIRROR_OTHER, why, sizeof why);
        assert_non_null(name);
        char *leaf = mirror_unescape(strchr(name, '/') + 1);
        assert_string_equal(leaf, cases[i][1]);
        free(leaf);
        free(name);
    }
}

static void test_long_names(void **state)
{
    (void)state;
    char url[1024], url2[1024];
    char seg[400];
    memset(seg, 'a', 300);
    seg[300] = '\0';
    snprintf(url, sizeof url, "http://h/%s/%s.png", seg, seg);
    snprintf(url2, sizeof url2, "http://h/%s/%sb.png", seg, seg);
    char why[256];
    char *a = mirror_name(url, MIRROR_OTHER, why, sizeof why);
    char *again = mirror_name(url, MIRROR_OTHER, why, sizeof why);
    char *b = mirror_name(url2, MIRROR_OTHER, why, sizeof why);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, again); /* stable */
    assert_string_not_equal(a, b);
    const char *leaf = strrchr(a, '/') + 1;
    assert_true(strlen(leaf) <= MIRROR_NAME_MAX);
    assert_true(strlen(leaf) > 4 && strcmp(leaf + strlen(leaf) - 4, ".png") == 0);
    assert_non_null(strchr(leaf, '~'));
    const char *dir = strchr(a, '/') + 1;
    assert_true((size_t)(strchr(dir, '/') - dir) <= MIRROR_NAME_MAX);
    free(a), free(again), free(b);
}

/* Windows' and FAT's device names, and trailing dots and spaces, escaped in any
 * component; names that only look like them kept. */
static void test_reserved(void **state)
{
    (void)state;
    expect_name("http://h/CON", MIRROR_OTHER, "h/%43ON");
    expect_name("http://h/con.html", MIRROR_HTML, "h/%63on.html");
    expect_name("http://h/con", MIRROR_HTML, "h/%63on.html");
    expect_name("http://h/Aux.tar.gz", MIRROR_OTHER, "h/%41ux.tar.gz");
    expect_name("http://h/nul%20.txt", MIRROR_OTHER, "h/%6Eul .txt");
    expect_name("http://h/PRN?x=1", MIRROR_OTHER, "h/PRN?x=1");
    expect_name("http://h/com1", MIRROR_OTHER, "h/%63om1");
    expect_name("http://h/LPT9.png", MIRROR_OTHER, "h/%4CPT9.png");
    expect_name("http://h/com0", MIRROR_OTHER, "h/com0");
    expect_name("http://h/com10", MIRROR_OTHER, "h/com10");
    expect_name("http://h/lpt", MIRROR_OTHER, "h/lpt");
    expect_name("http://h/console", MIRROR_OTHER, "h/console");
    expect_name("http://h/aux/x.png", MIRROR_OTHER, "h/%61ux/x.png");
    expect_name("http://h/a/prn/", MIRROR_HTML, "h/a/%70rn/index.html");
    expect_name("http://h/a.", MIRROR_OTHER, "h/a%2E");
    expect_name("http://h/a.", MIRROR_HTML, "h/a..html");
    expect_name("http://h/a%20", MIRROR_OTHER, "h/a%20");
    expect_name("http://h/d./x", MIRROR_OTHER, "h/d%2E/x");
    expect_name("http://h/CON.", MIRROR_OTHER, "h/%43ON%2E");
    expect_name("http://nul/", MIRROR_HTML, "%6Eul/index.html");
    expect_name("http://nul:8080/", MIRROR_HTML, "%6Eul:8080/index.html");
    char why[256];
    char *name = mirror_name("http://h/CON%2E", MIRROR_OTHER, why, sizeof why);
    assert_non_null(name);
    char *leaf = mirror_unescape(strchr(name, '/') + 1);
    assert_string_equal(leaf, "CON.");
    free(leaf);
    free(name);
}

/* Names that differ only in case: one keeps its name, by a rule on the names alone. */
static void test_case(void **state)
{
    (void)state;
    char *f = mirror_fold("h:80/A/b.HTML");
    assert_string_equal(f, "h:80/a/b.html");
    free(f);
    assert_true(mirror_case_first("h/a.html", "h/A.html"));
    assert_false(mirror_case_first("h/A.html", "h/a.html"));
    assert_true(mirror_case_first("h/Ab.html", "h/AB.html"));
    assert_true(mirror_case_first("h/Ab.html", "h/aB.html")); /* a tie: bytewise */
    assert_false(mirror_case_first("h/aB.html", "h/Ab.html"));
    assert_false(mirror_case_first("h/a.html", "h/a.html"));
    char *v = mirror_case_variant("h/A.html");
    char *again = mirror_case_variant("h/A.html");
    char *other = mirror_case_variant("h/A.HTML");
    assert_string_equal(v, again);               /* stable */
    assert_string_equal(v, "h/A~f9692fd9.html"); /* as docs/mirror.md says */
    assert_string_not_equal(v, other);
    char *port = mirror_case_variant("h:8080/A.html");
    assert_string_equal(port + strlen("h:8080/"), v + strlen("h/")); /* not the host's */
    free(port);
    assert_int_equal(strlen(v), strlen("h/A~12345678.html"));
    assert_memory_equal(v, "h/A~", 4);
    assert_string_equal(v + strlen(v) - 5, ".html");
    f = mirror_fold(v);
    char *fo = mirror_fold(other);
    assert_string_not_equal(f, fo); /* the variants do not collide either */
    free(f), free(fo), free(v), free(again), free(other);
    v = mirror_case_variant("h/D/README");
    assert_int_equal(strlen(v), strlen("h/D/README~12345678"));
    assert_memory_equal(v, "h/D/README~", 11);
    free(v);
    v = mirror_case_variant("h/index.html?Q=1.html");
    assert_memory_equal(v, "h/index.html?Q=1~", 17);
    assert_string_equal(v + strlen(v) - 5, ".html");
    free(v);
}

static void expect_relative(const char *from, const char *to, const char *want)
{
    char *got = mirror_relative(from, to);
    assert_string_equal(got, want);
    free(got);
}

static void test_relative(void **state)
{
    (void)state;
    expect_relative("h/a/b.html", "h/a/c.html", "c.html");
    expect_relative("h/a/b.html", "h/s.css?v=2.css", "../s.css%3Fv=2.css");
    expect_relative("h/index.html", "h/a/b c.png", "a/b%20c.png");
    expect_relative("h/index.html", "g:81/x.js", "../g:81/x.js");
    expect_relative("h/ab/x.html", "h/a/y.html", "../a/y.html");
    expect_relative("h/x.html", "h/a%25b", "a%2525b");
    expect_relative("h/x.html", "h/x.html", "x.html");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),      cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_reversible), cmocka_unit_test(test_long_names),
        cmocka_unit_test(test_relative),   cmocka_unit_test(test_reserved),
        cmocka_unit_test(test_case),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
