/* test_list.c — the intrusive list: order, removal while iterating, self-unlinking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "list.h"

typedef struct item {
    int v;
    list_node node;
} item;

static int collect(list_node *head, int *out, int max)
{
    int n = 0;
    list_for_each(it, head)
    {
        if (n < max)
            out[n] = list_entry(it, item, node)->v;
        n++;
    }
    return n;
}

static void test_order_and_remove(void **state)
{
    (void)state;
    list_node head;
    item it[5];
    int got[5];
    list_init(&head);
    assert_true(list_empty(&head));
    assert_null(list_first(&head));
    for (int i = 0; i < 5; i++) {
        it[i].v = i;
        list_push_back(&head, &it[i].node);
    }
    assert_int_equal(collect(&head, got, 5), 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(got[i], i);

    list_remove(&it[2].node);
    assert_false(list_linked(&it[2].node));
    list_remove(&it[2].node); /* a no-op the second time */
    assert_int_equal(collect(&head, got, 5), 4);
    assert_int_equal(got[2], 3);

    list_push_front(&head, &it[2].node);
    assert_int_equal(list_entry(list_first(&head), item, node)->v, 2);
    assert_int_equal(list_entry(list_last(&head), item, node)->v, 4);
    assert_int_equal(list_entry(list_pop_front(&head), item, node)->v, 2);
}

static void test_remove_while_iterating(void **state)
{
    (void)state;
    list_node head;
    item it[6];
    int got[6];
    list_init(&head);
    for (int i = 0; i < 6; i++) {
        it[i].v = i;
        list_push_back(&head, &it[i].node);
    }
    list_for_each_safe(n, &head)
    {
        if (list_entry(n, item, node)->v % 2 == 0)
            list_remove(n);
    }
    assert_int_equal(collect(&head, got, 6), 3);
    assert_int_equal(got[0], 1);
    assert_int_equal(got[1], 3);
    assert_int_equal(got[2], 5);
    list_for_each_safe(n, &head) list_remove(n);
    assert_true(list_empty(&head));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_remove),
        cmocka_unit_test(test_remove_while_iterating),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
