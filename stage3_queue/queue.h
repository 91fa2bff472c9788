/* queue.h — the chapter's joinable Queue ("Coordinating Coroutines"), on stage 2's
 * Future and coroutines.
 *
 * Items are requests (crawl_request.h): the chapter's (url, max_redirect) pairs, with
 * the depth, referrer and callback that travel with each URL. put_nowait adds one and
 * counts it as an unfinished task; a worker takes one with the `get` coroutine (which
 * waits while the queue is empty) and, when it has dealt with it, calls task_done. The `join`
 * coroutine waits until every item ever put has been matched by a task_done.
 *
 * Waking a waiting getter or joiner is scheduled on the loop (call_soon), as asyncio
 * does, so that put_nowait and task_done never run another coroutine from inside the
 * caller's own step.
 */
#ifndef CRAWL_QUEUE_H
#define CRAWL_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "coro.h"
#include "future.h"
#include "jobq.h"
#include "list.h"
#include "selector.h"

/* A get() waiting for an item: its future, and its place in the line. Stage 3's other
 * Queues (hostqueue.h, redisqueue.h) keep their waiting getters the same way. */
typedef struct getter {
    future wake;
    sel_timer *wakeup; /* the scheduled set_result, if any */
    list_node link;    /* in the line while waiting */
} getter;

/* Wake the oldest get() waiting in line, if any (at the loop's next turn, call_soon):
 * it leaves the line now. Returns whether one was waiting. */
bool getter_wake_oldest(selector *loop, list_node *line);

typedef struct queue {
    selector *loop;
    jobq items;
    size_t unfinished_tasks;
    future join_future;     /* resolved when unfinished_tasks falls to zero */
    sel_timer *join_wakeup; /* that resolution, scheduled */
    list_node getters;      /* get()s waiting, oldest first */
} queue;

void queue_init(queue *q, selector *loop);
/* Free the items still queued. No coroutine may be waiting in get or join. */
void queue_clear(queue *q);
/* Add a copy of r; wake the oldest waiting get. */
void queue_put_nowait(queue *q, const crawl_request *r);
/* Coroutine: take the oldest item, waiting while there is none. Returns
 * {crawl_request * (the caller frees it, with free), 0}. */
coro *queue_get(queue *q);
/* One item taken with get has been dealt with. */
void queue_task_done(queue *q);
/* Coroutine: wait until every item put has been marked done. */
coro *queue_join(queue *q);
static inline size_t queue_qsize(const queue *q)
{
    return jobq_size(&q->items);
}
/* Items put and not yet marked done. */
static inline size_t queue_unfinished(const queue *q)
{
    return q->unfinished_tasks;
}

#endif
