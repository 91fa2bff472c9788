/* task.h — the chapter's Task: it drives a coroutine, and it is itself a Future.
 *
 * step() resumes the coroutine with the result of the future it waited for; when the
 * coroutine waits again, step hooks itself onto that future as a done-callback; when
 * the coroutine returns, the task resolves itself with the return value (Python: the
 * StopIteration's value); when it raises, the task fails with the error, and an error
 * no one asked about is printed as a Python-style traceback. cancel() resumes the
 * coroutine with a CancelledError at the point where it waits.
 */
#ifndef CRAWL_TASK_H
#define CRAWL_TASK_H

#include <stdio.h>

#include "coro.h"
#include "future.h"
#include "selector.h"

struct task {
    future fut;             /* a Task is a Future: this must stay the first member */
    coro *coro;             /* the outermost frame */
    selector *loop;
    char *name;
    int cancelling;         /* a cancel is to be delivered at the next step */
    int detached;           /* free the task once it is done */
    int report_errors;      /* print the traceback of an error that escapes */
    sel_timer *start;       /* the first step, scheduled with call_soon */
    task *prev, *next;      /* all live tasks, for task_dump_all() */
};

/* Wrap coroutine frame co in a Task; its first step runs from the loop (call_soon).
 * name shows in tracebacks and task_dump_all(). */
task *task_new(selector *loop, coro *co, const char *name);
/* Run the first step now, in the caller, instead of from the loop: what the chapter's
 * Task does in its constructor. The task may be done (and, if detached, freed) when
 * this returns. No-op when the task has started already. */
void task_start_now(task *t);
/* The Future face of a task. */
static inline future *task_future(task *t) { return &t->fut; }
/* Resume the coroutine (the chapter's Task.step). */
void task_step(task *t);
/* Deliver a CancelledError where the coroutine waits. A task not yet started is
 * cancelled without running. */
void task_cancel(task *t);
/* Free a finished task (or, if still running, cancel it first). */
void task_free(task *t);
/* Cancel and free every live task (at exit, after an interruption). */
void task_free_all(void);
/* Let the task free itself when it is done (fire and forget). */
void task_detach(task *t);

/* The done-callback a waiting coroutine hooks onto its future: steps the task. */
void task_wakeup_(future *f, void *t);

/* Run the loop until t is done (the chapter's run_until_complete). Returns 0, or -1
 * if the loop stopped for another reason first (selector_stop, nothing to wait on). */
int run_until_complete(selector *loop, task *t);

/* Print every live task and its chain of frames, outermost first, with the saved line
 * of each: callable from gdb — `call task_dump_all()`. */
void task_dump_all(void);
void task_dump(const task *t, FILE *out);
/* Number of live tasks. */
size_t task_live_count(void);

#endif
