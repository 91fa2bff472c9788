/* task.c — the chapter's Task: a Future that drives a coroutine to completion. */
#include "task.h"

#include <stdlib.h>

#include "alloc.h"

/* Every task not yet freed, newest first, for task_dump_all(). */
static list_node live_tasks = {&live_tasks, &live_tasks};
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
    task *t = xcalloc(1, sizeof *t);
    future_init(&t->fut);
    t->coro = co;
    t->loop = loop;
    t->name = xstrdup(name ? name : co->def->name);
    t->report_errors = 1;
    co->task = t;
    t->start = selector_call_soon(loop, first_step, t);
    list_push_front(&live_tasks, &t->live);
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

/* What task_step subscribes to the future the coroutine waits on: the chapter's
 * `self.step`, with a done-callback's arguments (the future, which the resumed frame
 * reads for itself, and the task). */
static void wakeup(future *f, void *t)
{
    (void)f;
    task_step(t);
}

/* Take back that subscription (the coroutine is cancelled or freed while it waits). */
static void unsubscribe(task *t)
{
    future *next_future = t->coro ? coro_waiting(t->coro) : NULL;
    if (next_future)
        future_remove_done_callback(next_future, wakeup, t);
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
    future *next_future = coro_send(t->coro);
    if (next_future) {
        /* The coroutine waits: step again once that future is resolved. */
        future_add_done_callback(next_future, wakeup, t);
        return;
    }
    /* resolve() runs the done-callbacks, and one of them (a coroutine that awaited
     * this task) may free it: read the flag first, touch t no more afterwards. */
    int detached = t->detached;
    resolve(t);
    if (detached)
        task_free(t);
}
/* EXERCISE stage2-task_step: END */

static void cancel_soon(selector *s, void *arg)
{
    (void)s;
    task *t = arg;
    t->cancel_soon = NULL;
    task_cancel(t);
}

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
        int detached = t->detached; /* a done-callback may free t: see task_step */
        future_cancel(&t->fut);
        if (detached)
            task_free(t);
        return;
    }
    if (!coro_waiting(t->coro)) {
        /* Its coroutine is running: this call comes from inside its own step (the
         * coroutine cancels its own Task, say). Stepping it here would resume frames
         * that are still on the C stack: cancel it from the loop, where it waits. */
        if (!t->cancel_soon)
            t->cancel_soon = selector_call_soon(t->loop, cancel_soon, t);
        return;
    }
    /* As the chapter's cancel: the step throws CancelledError where the coroutine waits. */
    unsubscribe(t);
    coro_throw(t->coro, coro_error_new(CORO_CANCELLED, 0, "task cancelled"));
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
    if (t->cancel_soon)
        selector_cancel(t->loop, t->cancel_soon);
    unsubscribe(t); /* a coroutine that swallowed its cancellation waits again */
    coro_free(t->coro);
    future_clear(&t->fut);
    list_remove(&t->live);
    live_count--;
    free(t->name);
    free(t);
}

void task_free_all(void)
{
    list_node *n;
    while ((n = list_first(&live_tasks))) {
        task *t = list_entry(n, task, live);
        t->detached = 0; /* we free it here, not its last step */
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
    int r = selector_run(loop);
    if (future_done(&t->fut))
        return 0;
    future_remove_done_callback(&t->fut, stop_loop, loop);
    return r < 0 ? -1 : 1;
}

void task_dump(const task *t, FILE *out)
{
    static const char *const state[] = {"pending", "done", "failed", "cancelled"};
    fprintf(out, "Task '%s' (%s)\n", t->name, state[t->fut.state]);
    for (const coro *c = t->coro; c; c = c->child)
        fprintf(out, "  File \"%s\", line %d, in %s%s\n", c->def->file, c->line, c->def->name,
                c->waiting         ? "  <- waiting on a future"
                    : c->line == 0 ? "  <- not started"
                                   : "");
}

void task_dump_all(FILE *out)
{
    fprintf(out, "%zu live task(s):\n", live_count);
    list_for_each(n, &live_tasks) task_dump(list_entry(n, task, live), out);
}

size_t task_live_count(void)
{
    return live_count;
}
