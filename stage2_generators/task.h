/* task.h — the chapter's Task: it drives a coroutine, and it is itself a Future.
 *
 * step() resumes the coroutine (coro_send); when the coroutine waits again, on the
 * future coro_send returns, step subscribes itself to that future as a done-callback
 * (the chapter's Task.step does the same with its next future); when the coroutine
 * returns, the task resolves itself with the return value (Python: the
 * StopIteration's value); when it raises, the task fails with the error, and an error
 * no one asked about is printed as a Python-style traceback. cancel() throws a
 * CancelledError into the coroutine, at the await where it waits (coro_throw).
 */
#ifndef CRAWL_TASK_H
#define CRAWL_TASK_H

#include <stdio.h>

#include "coro.h"
#include "future.h"
#include "list.h"
#include "selector.h"

struct task {
    future fut; /* a Task is a Future: this must stay the first member */
    coro *coro; /* the outermost frame */
    selector *loop;
    char *name;
    int detached;           /* free the task once it is done */
    int report_errors;      /* print the traceback of an error that escapes */
    sel_timer *start;       /* the first step, scheduled with call_soon */
    sel_timer *cancel_soon; /* a cancel asked for while the coroutine ran, scheduled */
    list_node live;         /* in the list of all live tasks, for task_dump_all() */
};

/* Wrap coroutine frame co in a Task; its first step runs from the loop (call_soon).
 * name shows in tracebacks and task_dump_all(). */
task *task_new(selector *loop, coro *co, const char *name);
/* Run the first step now, in the caller, instead of from the loop: what the chapter's
 * Task does in its constructor. The task may be done (and, if detached, freed) when
 * this returns. No-op when the task has started already. */
void task_start_now(task *t);
/* The Future face of a task. */
static inline future *task_future(task *t)
{
    return &t->fut;
}
/* Resume the coroutine; subscribe to the future it then waits on, or resolve the task
 * when it has finished (the chapter's Task.step). */
void task_step(task *t);
/* Deliver a CancelledError where the coroutine waits (the chapter's Task.cancel). A
 * task not yet started is cancelled without running; one whose coroutine is running
 * (a call from inside its own step) is cancelled from the loop, where it waits. */
void task_cancel(task *t);
/* Free a finished task (or, if still running, cancel it first). */
void task_free(task *t);
/* Cancel and free every live task (at exit, after an interruption). */
void task_free_all(void);
/* Let the task free itself when it is done (fire and forget). */
void task_detach(task *t);

/* Run the loop until t is done (the chapter's run_until_complete). Returns 0; -1 when
 * the loop failed first (selector_run: the message is in selector_error); 1 when it
 * stopped for another reason first (selector_stop, nothing left to wait on). */
int run_until_complete(selector *loop, task *t);

/* Print every live task and its chain of frames, outermost first, with the saved line
 * of each ("N live task(s):", then task_dump of each): what `kill -USR1` shows of
 * crawl-generators and crawl-queue (app.dump). In gdb, `info tasks`
 * (docs/gdb/crawlstages.py) prints the same from memory, calling nothing. */
void task_dump_all(FILE *out);
void task_dump(const task *t, FILE *out);
/* Number of live tasks. */
size_t task_live_count(void);

#endif
