/* test_fpset.c — the fingerprint set behind seen_urls: add answers "new?" once per
 * string, across growth; lookups of other copies of a string; probes stay short for
 * strings that would collide under an unkeyed hash; 8 to 16 bytes a string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "fpset.h"

static void test_add_has_grow(void **state)
{
    (void)state;
    fpset *s = fpset_new();
    char url[64];
    for (int i = 0; i < 100000; i++) {
        snprintf(url, sizeof url, "http://example.com/p/%d", i);
        assert_false(fpset_has(s, url));
        assert_true(fpset_add(s, url));
        assert_false(fpset_add(s, url)); /* the second time: seen */
    }
    assert_int_equal(fpset_count(s), 100000);
    for (int i = 0; i < 100000; i++) {
        snprintf(url, sizeof url, "http://example.com/p/%d", i);
        assert_true(fpset_has(s, url));
    }
    assert_false(fpset_has(s, "http://example.com/p/100000"));
    assert_false(fpset_has(s, ""));
    /* at most half full: 16 bytes a string at the most, whatever their length */
    assert_true(fpset_bytes(s) <= 16 * 131072 * 2 && fpset_bytes(s) >= 8 * 100000 * 2);
    assert_true(fpset_longest_probe(s) < 64);
    fpset_free(s);
}

static void test_fingerprint_never_zero_and_by_content(void **state)
{
    (void)state;
    char a[] = "http://example.com/", b[] = "http://example.com/";
    assert_int_equal(fpset_fingerprint(a), fpset_fingerprint(b));
    assert_int_not_equal(fpset_fingerprint(a), fpset_fingerprint("http://example.com/x"));
    assert_int_not_equal(fpset_fingerprint(""), 0);
    fpset *s = fpset_new();
    assert_true(fpset_add_fp(s, fpset_fingerprint(a)));
    assert_false(fpset_add(s, b)); /* a state file's fingerprint, then the URL */
    fpset_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_has_grow),
        cmocka_unit_test(test_fingerprint_never_zero_and_by_content),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
