/* list.h — one intrusive doubly linked list, in the manner of the Linux kernel's and
 * libuv's queue.h: the links live inside the listed object, so linking and unlinking
 * never allocate and an object can unlink itself in O(1) knowing only its node.
 *
 *   typedef struct task { ...; list_node live; } task;
 *   list_node live_tasks;  list_init(&live_tasks);
 *   list_push_back(&live_tasks, &t->live);
 *   list_remove(&t->live);
 *   list_for_each(n, &live_tasks) { task *t = list_entry(n, task, live); ... }
 *
 * A list is a sentinel node whose next is the first element and prev the last; an
 * empty list points at itself. A node that is not in a list after list_remove (or
 * list_node_init) points at itself too, so list_linked() tells whether it is in one.
 */
#ifndef CRAWL_LIST_H
#define CRAWL_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct list_node {
    struct list_node *prev, *next;
} list_node;

/* The object that holds node `n` as its member `member`. */
#define list_entry(n, type, member) ((type *)((char *)(n)-offsetof(type, member)))

static inline void list_init(list_node *head)
{
    head->prev = head->next = head;
}
static inline void list_node_init(list_node *n)
{
    n->prev = n->next = n;
}
static inline bool list_empty(const list_node *head)
{
    return head->next == head;
}
/* Whether n is in a list (false after list_node_init or list_remove). */
static inline bool list_linked(const list_node *n)
{
    return n->next != n;
}

static inline void list_insert_between(list_node *n, list_node *prev, list_node *next)
{
    n->prev = prev;
    n->next = next;
    prev->next = n;
    next->prev = n;
}
static inline void list_push_back(list_node *head, list_node *n)
{
    list_insert_between(n, head->prev, head);
}
static inline void list_push_front(list_node *head, list_node *n)
{
    list_insert_between(n, head, head->next);
}
/* Unlink n from its list; n then points at itself. Unlinking an unlinked node is a
 * no-op. */
static inline void list_remove(list_node *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
}
/* The first / last node, or NULL when the list is empty. */
static inline list_node *list_first(const list_node *head)
{
    return list_empty(head) ? NULL : head->next;
}
static inline list_node *list_last(const list_node *head)
{
    return list_empty(head) ? NULL : head->prev;
}
/* Unlink and return the first node, or NULL. */
static inline list_node *list_pop_front(list_node *head)
{
    list_node *n = list_first(head);
    if (n)
        list_remove(n);
    return n;
}

/* Iterate; the body must not remove `n` (use list_for_each_safe for that). */
#define list_for_each(n, head) for (list_node *n = (head)->next; n != (head); n = n->next)
/* Iterate; the body may remove `n` (not its successor). */
#define list_for_each_safe(n, head)                                                                \
    for (list_node *n = (head)->next, *n##_next_ = n->next; n != (head);                           \
         n = n##_next_, n##_next_ = n->next)

#endif
