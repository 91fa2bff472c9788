/* test_pattern.c — the user regexes (pattern.h): what is refused, in how long; what is
 * accepted, and how long the worst of it takes against a 64 KB URL; the POSIX extended
 * syntax URL patterns use still means what it meant; a limit reached excludes a URL. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "pattern.h"
#include "url.h"

#define LONG_URL_A 65536 /* the 'a's of the long URL */

/* The bounds: the hostile patterns below measured under 10 ms each against the 64 KB
 * URL on a 2-core box (PCRE2 10.42 with its JIT), and compile in well under 1 ms; the
 * bounds asserted have slack for a loaded 2-core CI machine. */
#define COMPILE_BOUND_MS 1000.0
#define MATCH_BOUND_MS   200.0

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* "http://h/" and LONG_URL_A 'a's. */
static char *long_url(void)
{
    const char *head = "http://h/";
    size_t h = strlen(head);
    char *u = malloc(h + LONG_URL_A + 1);
    assert_non_null(u);
    memcpy(u, head, h);
    memset(u + h, 'a', LONG_URL_A);
    u[h + LONG_URL_A] = '\0';
    return u;
}

/* ---- refused ---- */

static void check_refused(const char *src, const char *why_part)
{
    char why[256] = "untouched";
    double t0 = now_ms();
    pattern *p = pattern_compile(src, why, sizeof why);
    double ms = now_ms() - t0;
    if (p)
        fail_msg("'%s' compiled; wanted it refused (%s)", src, why_part);
    if (!strstr(why, why_part))
        fail_msg("'%s': reason '%s', wanted '%s' in it", src, why, why_part);
    if (strchr(why, '\n'))
        fail_msg("'%s': reason '%s' is more than one line", src, why);
    if (ms > COMPILE_BOUND_MS)
        fail_msg("'%s': refused in %.1f ms (bound %.0f)", src, ms, COMPILE_BOUND_MS);
}

static void test_refused_constructs(void **state)
{
    (void)state;
    /* glibc's regcomp took 15 GB for the first */
    check_refused("((a{1,200}){1,200}){1,200}", "repeat count above 100");
    check_refused("(a{1,32767}){1,32767}", "repeat count above 100");
    check_refused("a{101}", "repeat count above 100");
    check_refused("a{0,101}", "repeat count above 100");
    check_refused("a{200,}", "repeat count above 100");
    check_refused("a{,200}", "repeat count above 100");  /* a count in PCRE2 10.43 */
    check_refused("a{ 200 }", "repeat count above 100"); /* the same */
    check_refused("a{1,2,3}b{1000}", "repeat count above 100");
    /* hung glibc's regexec on a 3,000-byte URL */
    check_refused("(.*)(.*)(.*)(.*)(.*)\\5\\4\\3\\2\\1Z", "back-references");
    check_refused("(a)\\1", "back-references");
    check_refused("(a)\\g1", "back-references");
    check_refused("(a)\\g{-1}", "back-references");
    check_refused("(?<n>a)\\k<n>", "\"(?\" groups");
    check_refused("(?P<n>a)(?P=n)", "\"(?\" groups");
    check_refused("(?=.*X)", "lookarounds");
    check_refused("x(?!y)", "lookarounds");
    check_refused("(?<=a)b", "lookarounds");
    check_refused("(?<!a)b", "lookarounds");
    check_refused("(?>a+)b", "atomic");
    check_refused("(a|(?R))", "\"(?\" groups");
    check_refused("(a)(?1)", "\"(?\" groups");
    check_refused("(?C1)a", "\"(?\" groups");
    check_refused("(?(1)a|b)", "\"(?\" groups");
    check_refused("(?#note)a", "\"(?\" groups");
    check_refused("(?x)a b", "\"(?\" groups");
    check_refused("(*FAIL)|a", "\"(*\" verbs");
    check_refused("(*LIMIT_MATCH=99999999)a", "\"(*\" verbs");
    check_refused("a(*SKIP)b", "\"(*\" verbs");
    check_refused("a*+b", "possessive");
    check_refused("a++b", "possessive");
    check_refused("a?+b", "possessive");
    check_refused("a{2}+b", "possessive");
    check_refused("(?:a{1,1000}+)c|b", "repeat count above 100");
    check_refused("(?:a{1,100}+)c|b", "possessive");
    check_refused("\\Ca", "\\C");
    check_refused("a\\Kb", "\\K");
    check_refused("\\Q(?=\\E", "\\Q");
    /* PCRE2's own errors, in one line with the offset */
    check_refused("(", "missing closing parenthesis at offset 1");
    check_refused("a[b", "at offset");
    check_refused("*a", "at offset");
}

/* A pattern of n 'a's, malloc'd. */
static char *run_of_a(size_t n)
{
    char *src = malloc(n + 1);
    assert_non_null(src);
    memset(src, 'a', n);
    src[n] = '\0';
    return src;
}

static void test_too_long(void **state)
{
    (void)state;
    char *src = run_of_a(PATTERN_MAX_LENGTH + 1);
    check_refused(src, "longer than 4096 bytes");
    free(src);
}

/* The compile-memory cap refuses, through PCRE2's allocator: each item of a pattern
 * costs some hundreds of bytes (its callout, the JIT's work), so 1,000 literals compile
 * and 4,096 need more than the default cap; a small cap refuses a small pattern that
 * the default one takes. PCRE2 refuses on its own what would be over 64 KB compiled. */
static void test_memory_cap(void **state)
{
    (void)state;
    char why[256];
    char *src = run_of_a(1000);
    pattern *p = pattern_compile(src, why, sizeof why);
    if (!p)
        fail_msg("1,000 literals refused: %s", why);
    pattern_free(p);
    free(src);
    src = run_of_a(PATTERN_MAX_LENGTH);
    check_refused(src, "needs more than 1048576 bytes to compile");
    free(src);
    const char *small = "((abc|def|ghi){1,20}x){1,20}";
    p = pattern_compile(small, why, sizeof why);
    if (!p)
        fail_msg("'%s' refused under the default cap: %s", small, why);
    pattern_free(p);
    assert_null(pattern_compile_capped(small, 4096, why, sizeof why));
    assert_string_equal(why, "needs more than 4096 bytes to compile");
    check_refused("((a{1,100}){1,100}){1,100}", "too large");
}

/* ---- accepted, and bounded ---- */

typedef struct hostile {
    const char *src;
    int want; /* PATTERN_LIMIT, PATTERN_NO_MATCH, or -2: either (not a match) */
} hostile;

#define NOT_A_MATCH (-2)

/* Against the 64 KB URL of 'a's. Most are built so that PCRE2's quick checks (a literal
 * the match needs, absent from the URL) cannot answer for them: the backtracking runs. */
static const hostile hostiles[] = {
    {"(a*)*b", NOT_A_MATCH},
    {"(a|a)*b", NOT_A_MATCH},
    {"(.*){1,30}Z", NOT_A_MATCH},
    {"(a*)*[bc]", PATTERN_LIMIT},
    {"(a+)+[bc]", PATTERN_LIMIT},
    {"(a|a)*[bc]", PATTERN_LIMIT}, /* the JIT's stack, or the interpreter's heap */
    {"(a|aa)*[bc]", PATTERN_LIMIT},
    {"(.*){1,30}[XZ]", PATTERN_LIMIT},
    {"(.*a){20}[bc]", PATTERN_LIMIT},
    {"a*a*a*a*a*[bc]", PATTERN_LIMIT},
    /* 30 s under any PCRE2 match limit, without the step budget */
    {"a{1,100}a{1,100}a{1,100}c|b", PATTERN_LIMIT},
    {"(?:a{1,100}){1,100}c|b", PATTERN_LIMIT},
    {"(?:a{0,100}){0,100}[bc]", PATTERN_LIMIT},
    {"(a?){100}a{100}[bc]", PATTERN_LIMIT},
    {"a{100,}c|b", PATTERN_LIMIT},
    {"a.*[XY]", PATTERN_LIMIT},
    {"x|a.*a.*a.*[XY]", PATTERN_LIMIT},
    {"a[^/]*[cd]", PATTERN_LIMIT},
    {"[^/]*[cd]", PATTERN_LIMIT},
    /* one step per start, 100 characters compared in it */
    {"a{100}c|b", NOT_A_MATCH},
    {"(?i)A{100}C|B", NOT_A_MATCH},
    {"[^/]{100}[cd]|x", NOT_A_MATCH},
    {"(?:a{1,100}|b){1,100}c|b", PATTERN_LIMIT},
};

static void test_hostile_bounded(void **state)
{
    (void)state;
    char *url = long_url();
    double worst = 0;
    const char *worst_src = "";
    bool jit = true;
    for (size_t i = 0; i < sizeof hostiles / sizeof hostiles[0]; i++) {
        const hostile *h = &hostiles[i];
        char why[256];
        double t0 = now_ms();
        pattern *p = pattern_compile(h->src, why, sizeof why);
        double compile_ms = now_ms() - t0;
        if (!p)
            fail_msg("'%s' refused: %s", h->src, why);
        if (compile_ms > COMPILE_BOUND_MS)
            fail_msg("'%s': compiled in %.1f ms (bound %.0f)", h->src, compile_ms,
                     COMPILE_BOUND_MS);
        t0 = now_ms();
        int rc = pattern_match(p, url);
        double ms = now_ms() - t0;
        if (ms > MATCH_BOUND_MS)
            fail_msg("'%s': %.1f ms on the 64 KB URL (bound %.0f)", h->src, ms, MATCH_BOUND_MS);
        if (h->want == NOT_A_MATCH ? rc == PATTERN_MATCH : rc != h->want)
            fail_msg("'%s': %d, wanted %d", h->src, rc, h->want);
        jit = jit && pattern_jit(p);
        if (ms > worst) {
            worst = ms;
            worst_src = h->src;
        }
        pattern_free(p);
    }
    print_message("slowest: '%s', %.2f ms on the 64 KB URL (%s)\n", worst_src, worst,
                  jit ? "PCRE2's JIT" : "PCRE2's interpreter, for some");
    free(url);
}

/* Where PCRE2 has its JIT (Debian's has, on amd64 and arm64), patterns run on it: the
 * bounds above were measured with it. Skipped where the library has none (the
 * interpreter is slower, still bounded by the same step budget). */
static void test_jit(void **state)
{
    (void)state;
    uint32_t have_jit = 0;
    if (pcre2_config(PCRE2_CONFIG_JIT, &have_jit) < 0 || !have_jit)
        skip();
    char why[256];
    pattern *p = pattern_compile("\\.pdf$", why, sizeof why);
    assert_non_null(p);
    assert_true(pattern_jit(p));
    pattern_free(p);
}

/* ---- the syntax ---- */

static void check_match(const char *src, const char *subject, int want)
{
    char why[256];
    pattern *p = pattern_compile(src, why, sizeof why);
    if (!p)
        fail_msg("'%s' refused: %s", src, why);
    int rc = pattern_match(p, subject);
    if (rc != want)
        fail_msg("'%s' on '%s': %d, wanted %d", src, subject, rc, want);
    pattern_free(p);
}

static void test_posix_syntax(void **state)
{
    (void)state;
    const int Y = PATTERN_MATCH, N = PATTERN_NO_MATCH;
    check_match("\\.pdf$", "http://h/a.pdf", Y);
    check_match("\\.pdf$", "http://h/a.pdf?x", N);
    check_match("/private/|\\.pdf$", "http://h/private/x", Y);
    check_match("^https?://[^/]*example\\.com/", "https://www.example.com/a", Y);
    check_match("^https?://[^/]*example\\.com/", "http://h/?u=http://example.com/", N);
    check_match("[[:digit:]]{4}/[[:alpha:]]+", "http://h/2024/news", Y);
    check_match("[[:digit:]]{4}/[[:alpha:]]+", "http://h/24/news", N);
    check_match("[[:upper:]]", "http://h/a", N);
    check_match("a{2,3}b", "http://h/aab", Y);
    check_match("xa{2,3}b", "http://h/xab", N);
    check_match("[]x]", "http://h/]", Y);
    check_match("[^]x]y", "http://h/xy", N);
    check_match("[a-c]+-(x|y)?z", "http://h/cab-z", Y);
    check_match("a{,2}", "http://h/a{,2}", Y);                  /* not a repeat count: literal */
    check_match("\\x{41}\\o{102}\\x{0043}", "http://h/ABC", Y); /* braces, not counts */
    check_match("\\o{377}", "http://h/a", N);
    check_match("[\\d]", "http://h/1", Y); /* an escape in brackets, unlike ERE */
    check_match("[\\d]", "http://h/d", N);
    check_match("(?i)\\.PDF$", "http://h/a.pdf", Y);
    check_match("(?i:PRIVATE)/", "http://h/private/", Y);
    check_match("(?:docs|blog)/", "http://h/blog/1", Y);
    check_match("", "http://h/", Y);
    /* a "+" after a class or an escaped "+" is a quantifier, not a possessive one */
    check_match("[a+]+b", "http://h/+ab", Y);
    check_match("\\++", "http://h/++", Y);
}

/* ---- limits reached ---- */

static void test_first_limit(void **state)
{
    (void)state;
    char why[256];
    pattern *p = pattern_compile("(a*)*[bc]", why, sizeof why);
    assert_non_null(p);
    assert_true(pattern_first_limit(p));
    assert_false(pattern_first_limit(p));
    pattern_free(p);
}

/* --exclude: a match stopped by a limit is a match — the URL is excluded. */
static void test_exclude_limit_excludes(void **state)
{
    (void)state;
    char err[256];
    url_policy *pol = url_policy_new(true, "(a*)*[bc]", err, sizeof err);
    if (!pol)
        fail_msg("url_policy_new: %s", err);
    char *url = long_url();
    assert_true(url_policy_excluded(pol, url));
    assert_false(url_policy_excluded(pol, "http://h/aaaa"));
    assert_true(url_policy_excluded(pol, "http://h/aaab"));
    free(url);
    url_policy_free(pol);
    assert_null(url_policy_new(true, "(a)\\1", err, sizeof err));
    assert_string_equal(err, "bad exclude regex '(a)\\1': back-references are refused at offset 3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_constructs),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_memory_cap),
        cmocka_unit_test(test_hostile_bounded),
        cmocka_unit_test(test_jit),
        cmocka_unit_test(test_posix_syntax),
        cmocka_unit_test(test_first_limit),
        cmocka_unit_test(test_exclude_limit_excludes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
