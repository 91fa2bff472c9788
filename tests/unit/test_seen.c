/* test_seen.c — the seen set: add / has / count, duplicates, growth to a million. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "seen.h"

static void test_add_has_count(void **state)
{
    (void)state;
    seen_set *s = seen_new();
    assert_non_null(s);
    assert_int_equal(seen_count(s), 0);
    assert_false(seen_has(s, "http://a/"));

    assert_true(seen_add(s, "http://a/"));
    assert_true(seen_has(s, "http://a/"));
    assert_false(seen_has(s, "http://a"));
    assert_false(seen_has(s, "http://b/"));
    assert_int_equal(seen_count(s), 1);

    assert_true(seen_add(s, "http://b/"));
    assert_int_equal(seen_count(s), 2);
    seen_free(s);
}

static void test_duplicates(void **state)
{
    (void)state;
    seen_set *s = seen_new();
    assert_true(seen_add(s, "x"));
    assert_false(seen_add(s, "x"));
    assert_false(seen_add(s, "x"));
    assert_int_equal(seen_count(s), 1);
    seen_free(s);
}

static void test_keeps_own_copy(void **state)
{
    (void)state;
    seen_set *s = seen_new();
    char buf[32];
    strcpy(buf, "http://a/page");
    assert_true(seen_add(s, buf));
    strcpy(buf, "overwritten");
    assert_true(seen_has(s, "http://a/page"));
    assert_false(seen_has(s, "overwritten"));
    seen_free(s);
}

static void test_empty_string(void **state)
{
    (void)state;
    seen_set *s = seen_new();
    assert_false(seen_has(s, ""));
    assert_true(seen_add(s, ""));
    assert_true(seen_has(s, ""));
    assert_false(seen_add(s, ""));
    assert_int_equal(seen_count(s), 1);
    seen_free(s);
}

static void test_long_strings(void **state)
{
    (void)state;
    /* Longer than an arena chunk, and many of them in between short ones. */
    static char big[600000];
    seen_set *s = seen_new();
    for (int i = 0; i < 3; i++) {
        memset(big, 'a' + i, sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        assert_true(seen_add(s, big));
        assert_true(seen_add(s, i == 0 ? "short0" : i == 1 ? "short1" : "short2"));
    }
    memset(big, 'b', sizeof(big) - 1);
    assert_true(seen_has(s, big));
    assert_true(seen_has(s, "short1"));
    assert_int_equal(seen_count(s), 6);
    seen_free(s);
}

static void test_null_is_harmless(void **state)
{
    (void)state;
    seen_set *s = seen_new();
    assert_false(seen_add(s, NULL));
    assert_false(seen_has(s, NULL));
    assert_false(seen_add(NULL, "x"));
    assert_false(seen_has(NULL, "x"));
    assert_int_equal(seen_count(NULL), 0);
    assert_int_equal(seen_count(s), 0);
    seen_free(s);
    seen_free(NULL);
}

enum { MANY = 1000000 };

static void test_million(void **state)
{
    (void)state;
    seen_set *s = seen_new();
    char url[64];
    for (int i = 0; i < MANY; i++) {
        snprintf(url, sizeof(url), "http://example.com/page/%d", i);
        if (!seen_add(s, url))
            fail_msg("add %s returned false", url);
    }
    assert_int_equal(seen_count(s), MANY);
    for (int i = 0; i < MANY; i++) {
        snprintf(url, sizeof(url), "http://example.com/page/%d", i);
        if (!seen_has(s, url))
            fail_msg("%s lost", url);
        if (i % 1000 == 0 && seen_add(s, url))
            fail_msg("%s added twice", url);
    }
    for (int i = MANY; i < MANY + 1000; i++) {
        snprintf(url, sizeof(url), "http://example.com/page/%d", i);
        if (seen_has(s, url))
            fail_msg("%s found but never added", url);
    }
    assert_int_equal(seen_count(s), MANY);
    seen_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_has_count),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_keeps_own_copy),
        cmocka_unit_test(test_empty_string),
        cmocka_unit_test(test_long_strings),
        cmocka_unit_test(test_null_is_harmless),
        cmocka_unit_test(test_million),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
