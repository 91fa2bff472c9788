/* queue.c — the chapter's Queue: put_nowait, get, task_done, join. */
#include "queue.h"

#include <stdlib.h>

#include "task.h"

/* A get() waiting for an item: its future, and its place in the line. */
struct getter {
    future wake;
    sel_timer *wakeup;       /* the scheduled set_result, if any */
    getter *next, *prev;
};

void queue_init(queue *q, selector *loop)
{
    q->loop = loop;
    jobq_init(&q->items);
    q->unfinished_tasks = 0;
    future_init(&q->join_future);
    q->join_wakeup = NULL;
    q->getters_head = q->getters_tail = NULL;
}

void queue_clear(queue *q)
{
    if (q->join_wakeup)
        selector_cancel(q->loop, q->join_wakeup);
    q->join_wakeup = NULL;
    future_clear(&q->join_future);
    jobq_clear(&q->items);
}

static void unlink_getter(queue *q, getter *g)
{
    if (g->prev)
        g->prev->next = g->next;
    else if (q->getters_head == g)
        q->getters_head = g->next;
    if (g->next)
        g->next->prev = g->prev;
    else if (q->getters_tail == g)
        q->getters_tail = g->prev;
    g->next = g->prev = NULL;
}

static void wake_getter(selector *s, void *arg)
{
    (void)s;
    getter *g = arg;
    g->wakeup = NULL;
    future_set_result(&g->wake, (coro_value){NULL, 0});
}

void queue_put_nowait(queue *q, const char *url, int max_redirect)
{
    if (!jobq_push(&q->items, url, max_redirect))
        abort();   /* out of memory: losing a URL silently is not an option */
    q->unfinished_tasks++;
    getter *g = q->getters_head;
    if (g) {
        unlink_getter(q, g);
        g->wakeup = selector_call_soon(q->loop, wake_getter, g);
    }
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
        f->g.prev = f->q->getters_tail;
        if (f->q->getters_tail)
            f->q->getters_tail->next = &f->g;
        else
            f->q->getters_head = &f->g;
        f->q->getters_tail = &f->g;
        AWAIT_FUTURE(co, &f->g.wake);   /* a worker is cancelled here at the end */
    }
    {
        job j;
        jobq_pop(&f->q->items, &j);
        CORO_RETURN(co, j.url, j.max_redirect);
    }
    CORO_END(co);
}

static void get_finally(coro *co)
{
    get_frame *f = (get_frame *)co;
    unlink_getter(f->q, &f->g);
    if (f->g.wakeup) {
        /* Woken but cancelled before it ran: pass the wake-up on. */
        selector_cancel(f->q->loop, f->g.wakeup);
        getter *next = f->q->getters_head;
        if (next && queue_qsize(f->q) > 0) {
            unlink_getter(f->q, next);
            next->wakeup = selector_call_soon(f->q->loop, wake_getter, next);
        }
    }
    future_clear(&f->g.wake);
}

static const coro_def get_def = {"get", __FILE__, get_body, get_finally, sizeof(get_frame)};

coro *queue_get(queue *q)
{
    get_frame *f = (get_frame *)coro_new(&get_def);
    if (!f)
        return NULL;
    f->q = q;
    future_init(&f->g.wake);
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
            future_clear(&f->q->join_future);    /* resolved before: wait anew */
        AWAIT_FUTURE(co, &f->q->join_future);
    }
    CORO_END(co);
}
/* EXERCISE stage3-queue: END */

static const coro_def join_def = {"join", __FILE__, join_body, NULL, sizeof(join_frame)};

coro *queue_join(queue *q)
{
    join_frame *f = (join_frame *)coro_new(&join_def);
    if (!f)
        return NULL;
    f->q = q;
    return &f->co;
}
