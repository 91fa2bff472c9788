/* test_seen.c — the seen set: add / has / count, duplicates, growth to a million, and
 * strings built to collide under FNV-1a (hash flooding). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "fnvflood.h"
#include "hash.h"
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

static void test_intern(void **state)
{
    (void)state;
    seen_set *s = seen_new();
    char buf[32] = "http://a/page";
    bool added;
    const char *copy = seen_intern(s, buf, &added);
    assert_true(added);
    assert_ptr_not_equal(copy, buf);
    assert_string_equal(copy, "http://a/page");
    assert_ptr_equal(seen_intern(s, "http://a/page", &added), copy);
    assert_false(added);
    assert_null(seen_intern(s, NULL, &added));
    assert_false(added);
    assert_int_equal(seen_count(s), 1);
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

/* 4096 URLs that share one FNV-1a hash — the whole 32-bit one, or the low 32 bits of
 * the 64-bit one, which pick a slot in any table under 2^32 slots — as a hostile page
 * can hold them. With the keyed hash they spread: no lookup looks at more than a few
 * slots (about 20 with main's fixed key); hashed with FNV-1a they would all pile up
 * in one run of 4096 slots. */
enum { FLOOD_ROUNDS = 12, FLOOD_MAX_PROBE = 64 };

static void test_fnv_flood(void **state)
{
    (void)state;
    static const fnv_kind kinds[] = {FNV1A_32, FNV1A_64_LOW32};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char **v = fnvflood("http://example.com/", kinds[k], FLOOD_ROUNDS);
        assert_non_null(v);
        uint32_t h = fnvflood_hash(kinds[k], v[0]);
        seen_set *s = seen_new();
        size_t n = 0;
        for (; v[n]; n++) {
            assert_int_equal(fnvflood_hash(kinds[k], v[n]), h); /* they do collide */
            assert_true(seen_add(s, v[n]));
        }
        assert_int_equal(n, (size_t)1 << FLOOD_ROUNDS);
        assert_int_equal(seen_count(s), n);
        size_t probe = seen_longest_probe(s);
        printf("# FNV-1a %s flood: %zu strings, longest probe %zu\n",
               kinds[k] == FNV1A_32 ? "32" : "64 (low 32 bits)", n, probe);
        assert_true(probe >= 1 && probe <= FLOOD_MAX_PROBE);
        for (size_t i = 0; i < n; i++)
            assert_true(seen_has(s, v[i]));
        seen_free(s);
        fnvflood_free(v);
    }
}

static void test_longest_probe(void **state)
{
    (void)state;
    seen_set *s = seen_new();
    assert_int_equal(seen_longest_probe(s), 0);
    assert_int_equal(seen_longest_probe(NULL), 0);
    assert_true(seen_add(s, "x"));
    assert_int_equal(seen_longest_probe(s), 1);
    seen_free(s);
}

int main(void)
{
    /* A fixed key, so that the probe lengths are the same on every run. */
    static const uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    hash_set_seed(key);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fnv_flood),        cmocka_unit_test(test_longest_probe),
        cmocka_unit_test(test_add_has_count),    cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_keeps_own_copy),   cmocka_unit_test(test_intern),
        cmocka_unit_test(test_empty_string),     cmocka_unit_test(test_long_strings),
        cmocka_unit_test(test_null_is_harmless), cmocka_unit_test(test_million),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
