/* test_strmap.c — the string-keyed intrusive table: find after add across growth,
 * remove from the middle of a chain, clear visits each entry once, keys compared by
 * content (not by pointer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "strmap.h"

typedef struct item {
    char key[24];
    int v;
    strmap_node node;
} item;

enum { N = 5000 }; /* grows from 16 buckets past 4096 */

static item *lookup(const strmap *m, const char *key)
{
    strmap_node *n = strmap_find(m, key);
    return n ? strmap_entry(n, item, node) : NULL;
}

static void test_add_find_grow(void **state)
{
    (void)state;
    strmap m;
    strmap_init(&m);
    item *it = calloc(N, sizeof *it);
    assert_non_null(it);
    for (int i = 0; i < N; i++) {
        snprintf(it[i].key, sizeof it[i].key, "host-%d.example", i);
        it[i].v = i;
        assert_null(lookup(&m, it[i].key));
        strmap_add(&m, &it[i].node, it[i].key);
    }
    assert_int_equal(m.count, N);
    assert_true(m.nbuckets >= N); /* load at most 1 */
    for (int i = 0; i < N; i++) {
        char key[24]; /* another copy of the same text */
        snprintf(key, sizeof key, "host-%d.example", i);
        item *got = lookup(&m, key);
        assert_non_null(got);
        assert_int_equal(got->v, i);
    }
    assert_null(lookup(&m, "host-5000.example"));
    assert_null(lookup(&m, ""));
    strmap_free(&m);
    free(it);
}

static void test_remove(void **state)
{
    (void)state;
    strmap m;
    strmap_init(&m);
    item it[64];
    for (int i = 0; i < 64; i++) { /* 64 entries over at most 64 buckets: chains */
        snprintf(it[i].key, sizeof it[i].key, "k%d", i);
        it[i].v = i;
        strmap_add(&m, &it[i].node, it[i].key);
    }
    for (int i = 0; i < 64; i += 2)
        strmap_remove(&m, &it[i].node);
    assert_int_equal(m.count, 32);
    for (int i = 0; i < 64; i++) {
        item *got = lookup(&m, it[i].key);
        if (i % 2)
            assert_ptr_equal(got, &it[i]);
        else
            assert_null(got);
    }
    strmap_add(&m, &it[0].node, it[0].key); /* back in after its removal */
    assert_ptr_equal(lookup(&m, "k0"), &it[0]);
    strmap_free(&m);
}

static int dropped[64];

static void drop(strmap_node *n)
{
    dropped[strmap_entry(n, item, node)->v]++;
}

static void test_clear(void **state)
{
    (void)state;
    strmap m;
    strmap_init(&m);
    item it[64];
    for (int i = 0; i < 64; i++) {
        snprintf(it[i].key, sizeof it[i].key, "origin-%d", i);
        it[i].v = i;
        strmap_add(&m, &it[i].node, it[i].key);
    }
    memset(dropped, 0, sizeof dropped);
    strmap_clear(&m, drop);
    for (int i = 0; i < 64; i++)
        assert_int_equal(dropped[i], 1);
    assert_int_equal(m.count, 0);
    assert_null(lookup(&m, "origin-1"));
    strmap_clear(&m, drop); /* empty: nothing more */
    for (int i = 0; i < 64; i++)
        assert_int_equal(dropped[i], 1);
    strmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_find_grow),
        cmocka_unit_test(test_remove),
        cmocka_unit_test(test_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
