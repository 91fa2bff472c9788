/* task.c — the chapter's Task: a Future that drives a coroutine to completion. */
#include "task.h"

#include <stdlib.h>
#include <string.h>

static task *live_tasks;    /* every task not yet freed, for task_dump_all() */
static size_t live_count;

static void first_step(selector *s, void *arg)
{
    (void)s;
    task *t = arg;
    t->start = NULL;
    task_step(t);
}

task *task_new(selector *loop, coro *co, const char *name)
{
    task *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    future_init(&t->fut);
    t->coro = co;
    t->loop = loop;
    t->name = strdup(name ? name : co->def->name);
    t->report_errors = 1;
    co->task = t;
    t->start = selector_call_soon(loop, first_step, t);
    t->next = live_tasks;
    if (live_tasks)
        live_tasks->prev = t;
    live_tasks = t;
    live_count++;
    return t;
}

void task_start_now(task *t)
{
    if (!t->start)
        return;
    selector_cancel(t->loop, t->start);
    t->start = NULL;
    task_step(t);
}

void task_wakeup_(future *f, void *t)
{
    (void)f;
    task_step(t);
}

/* EXERCISE stage2-task_step: BEGIN (docs/exercises.md) */
/* The coroutine finished: resolve the task with its return value or its error. */
static void resolve(task *t)
{
    coro *co = t->coro;
    coro_error *e = co->err;
    coro_value v = co->value;
    co->err = NULL;
    t->coro = NULL;
    coro_free(co);
    if (!e) {
        future_set_result(&t->fut, v);
        return;
    }
    if (e->kind != CORO_CANCELLED && t->report_errors) {
        fprintf(stderr, "Task '%s' raised an exception:\n", t->name);
        coro_error_print(e, stderr);
    }
    future_set_error(&t->fut, e);
}

void task_step(task *t)
{
    if (future_done(&t->fut) || !t->coro)
        return;
    if (coro_resume(t->coro) == CORO_SUSPENDED)
        return;     /* the waiting frame hooked task_wakeup_ onto its future */
    /* resolve() runs the done-callbacks, and one of them (a coroutine that awaited
     * this task) may free it: read the flag first, touch t no more afterwards. */
    int detached = t->detached;
    resolve(t);
    if (detached)
        task_free(t);
}
/* EXERCISE stage2-task_step: END */

void task_cancel(task *t)
{
    if (future_done(&t->fut))
        return;
    if (t->start) {
        /* Never started: nothing to unwind. */
        selector_cancel(t->loop, t->start);
        t->start = NULL;
        coro_free(t->coro);
        t->coro = NULL;
        int detached = t->detached;  /* a done-callback may free t: see task_step */
        future_cancel(&t->fut);
        if (detached)
            task_free(t);
        return;
    }
    t->cancelling = 1;   /* delivered by coro_await_future_ where the coroutine waits */
    task_step(t);
}

void task_free(task *t)
{
    if (!t)
        return;
    if (!future_done(&t->fut)) {
        t->detached = 0;
        task_cancel(t);
    }
    if (t->start)
        selector_cancel(t->loop, t->start);
    coro_free(t->coro);   /* a coroutine that swallowed its cancellation */
    future_clear(&t->fut);
    if (t->prev)
        t->prev->next = t->next;
    else
        live_tasks = t->next;
    if (t->next)
        t->next->prev = t->prev;
    live_count--;
    free(t->name);
    free(t);
}

void task_free_all(void)
{
    while (live_tasks) {
        task *t = live_tasks;
        t->detached = 0;      /* we free it here, not its last step */
        task_free(t);
    }
}

void task_detach(task *t)
{
    if (future_done(&t->fut))
        task_free(t);
    else
        t->detached = 1;
}

static void stop_loop(future *f, void *loop)
{
    (void)f;
    selector_stop(loop);
}

int run_until_complete(selector *loop, task *t)
{
    /* Already done: a stop requested now would be reset by selector_run. */
    if (future_done(&t->fut))
        return 0;
    future_add_done_callback(&t->fut, stop_loop, loop);
    selector_run(loop);
    if (!future_done(&t->fut)) {
        future_remove_done_callback(&t->fut, stop_loop, loop);
        return -1;
    }
    return 0;
}

void task_dump(const task *t, FILE *out)
{
    static const char *const state[] = {"pending", "done", "failed", "cancelled"};
    fprintf(out, "Task '%s' (%s)\n", t->name, state[t->fut.state]);
    for (const coro *c = t->coro; c; c = c->child)
        fprintf(out, "  File \"%s\", line %d, in %s%s\n", c->def->file, c->line,
                c->def->name, c->waiting ? "  <- waiting on a future" : "");
}

void task_dump_all(void)
{
    fprintf(stderr, "%zu live task(s):\n", live_count);
    for (const task *t = live_tasks; t; t = t->next)
        task_dump(t, stderr);
}

size_t task_live_count(void)
{
    return live_count;
}
