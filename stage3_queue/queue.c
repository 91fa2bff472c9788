/* queue.c — the chapter's Queue: put_nowait, get, task_done, join. */
#include "queue.h"

#include <stdlib.h>

void queue_init(queue *q, selector *loop)
{
    q->loop = loop;
    jobq_init(&q->items);
    q->unfinished_tasks = 0;
    future_init(&q->join_future);
    q->join_wakeup = NULL;
    list_init(&q->getters);
}

void queue_clear(queue *q)
{
    if (q->join_wakeup)
        selector_cancel(q->loop, q->join_wakeup);
    q->join_wakeup = NULL;
    future_clear(&q->join_future);
    jobq_clear(&q->items);
}

static void wake_getter(selector *s, void *arg)
{
    (void)s;
    getter *g = arg;
    g->wakeup = NULL;
    future_set_result(&g->wake, (coro_value){NULL, 0});
}

bool getter_wake_oldest(selector *loop, list_node *line)
{
    list_node *n = list_pop_front(line);
    if (!n)
        return false;
    getter *g = list_entry(n, getter, link);
    g->wakeup = selector_call_soon(loop, wake_getter, g);
    return true;
}

void queue_put_nowait(queue *q, const crawl_request *r)
{
    jobq_push(&q->items, r);
    q->unfinished_tasks++;
    getter_wake_oldest(q->loop, &q->getters); /* the oldest get() waiting */
}

/* ---- get ---- */

typedef struct {
    coro co;
    queue *q;
    getter g;
} get_frame;

static int get_body(coro *co)
{
    get_frame *f = (get_frame *)co;
    CORO_BEGIN(co);
    while (queue_qsize(f->q) == 0) {
        /* Join the line of waiting getters; put_nowait wakes the oldest. */
        future_clear(&f->g.wake);
        list_push_back(&f->q->getters, &f->g.link);
        AWAIT_FUTURE(co, &f->g.wake); /* a worker is cancelled here at the end */
    }
    CORO_RETURN(co, jobq_pop(&f->q->items), 0);
    CORO_END(co);
}

static void get_finally(coro *co)
{
    get_frame *f = (get_frame *)co;
    list_remove(&f->g.link);
    if (f->g.wakeup) {
        /* Woken but cancelled before it ran: pass the wake-up on. */
        selector_cancel(f->q->loop, f->g.wakeup);
        if (queue_qsize(f->q) > 0)
            getter_wake_oldest(f->q->loop, &f->q->getters);
    }
    future_clear(&f->g.wake);
}

static const coro_def get_def = {"get", __FILE__, get_body, get_finally, sizeof(get_frame)};

coro *queue_get(queue *q)
{
    get_frame *f = (get_frame *)coro_new(&get_def);
    f->q = q;
    future_init(&f->g.wake);
    list_node_init(&f->g.link);
    return &f->co;
}

/* ---- task_done and join ---- */

/* EXERCISE stage3-queue: BEGIN (docs/exercises.md) */
static void wake_joiners(selector *s, void *arg)
{
    (void)s;
    queue *q = arg;
    q->join_wakeup = NULL;
    if (q->unfinished_tasks == 0)
        future_set_result(&q->join_future, (coro_value){NULL, 0});
}

void queue_task_done(queue *q)
{
    if (q->unfinished_tasks == 0)
        return;
    q->unfinished_tasks--;
    if (q->unfinished_tasks == 0 && !q->join_wakeup)
        q->join_wakeup = selector_call_soon(q->loop, wake_joiners, q);
}

typedef struct {
    coro co;
    queue *q;
} join_frame;

static int join_body(coro *co)
{
    join_frame *f = (join_frame *)co;
    CORO_BEGIN(co);
    while (f->q->unfinished_tasks > 0) {
        if (future_done(&f->q->join_future))
            future_clear(&f->q->join_future); /* resolved before: wait anew */
        AWAIT_FUTURE(co, &f->q->join_future);
    }
    CORO_END(co);
}
/* EXERCISE stage3-queue: END */

static const coro_def join_def = {"join", __FILE__, join_body, NULL, sizeof(join_frame)};

coro *queue_join(queue *q)
{
    join_frame *f = (join_frame *)coro_new(&join_def);
    f->q = q;
    return &f->co;
}
