/* threads.c — defer_to_thread: a Future over threadpool_submit. See threads.h. */
#include "threads.h"

#include <stdbool.h>
#include <stdlib.h>

#include "alloc.h"

typedef struct deferred {
    future fut; /* first: the Future face handed out */
    thread_work_fn work;
    void *arg;
    coro_value result; /* written on the pool thread, read on the loop */
    coro_error *err;
    bool over;     /* the pool is done with it */
    bool released; /* the caller is done with it */
    void (*cleanup)(void *arg);
} deferred;

/* On a pool thread. */
static void run_work(void *arg)
{
    deferred *d = arg;
    d->result = d->work(d->arg, &d->err);
}

static void deferred_free(deferred *d)
{
    if (d->cleanup)
        d->cleanup(d->arg);
    coro_error_free(d->err);
    future_clear(&d->fut);
    free(d);
}

/* On the loop thread, once the work returned (or never started: ran is false). The
 * callbacks resolving the Future may release it: mark it over first. */
static void work_over(void *arg, bool ran)
{
    deferred *d = arg;
    d->over = true;
    if (d->released) {
        deferred_free(d);
    } else if (!ran) {
        future_cancel(&d->fut);
    } else if (d->err) {
        coro_error *e = d->err;
        d->err = NULL;
        future_set_error(&d->fut, e);
    } else {
        future_set_result(&d->fut, d->result);
    }
}

future *defer_to_thread(threadpool *p, thread_work_fn work, void *arg)
{
    deferred *d = xcalloc(1, sizeof *d);
    future_init(&d->fut);
    d->work = work;
    d->arg = arg;
    threadpool_submit(p, run_work, work_over, d);
    return &d->fut;
}

void defer_release(future *f, void (*cleanup)(void *arg))
{
    if (!f)
        return;
    deferred *d = (deferred *)f;
    d->cleanup = cleanup;
    if (d->over)
        deferred_free(d);
    else
        d->released = true;
}
