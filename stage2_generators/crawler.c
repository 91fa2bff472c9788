/* crawler.c — crawl-generators: the chapter's stage 2, "Building Coroutines With
 * Generators", as a whole crawler. Every URL gets a Task driving a `fetch` coroutine
 * (fetch.c); the Task steps the coroutine each time the Future it waits on resolves.
 *
 * Beyond the chapter's sketch, --max-tasks caps how many Tasks run at once: URLs that
 * arrive while the cap is reached wait in a FIFO, and each finishing Task starts the
 * next — the same bookkeeping as stage 1's main.c, with Tasks for Fetchers. (Stage 3
 * replaces it with a queue and a fixed pool of workers.)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "fetch.h"
#include "jobq.h"
#include "task.h"

typedef struct crawler {
    app *a;
    jobq pending;   /* URLs waiting for a free slot */
    size_t running; /* Tasks alive */
    bool starting;  /* start_pending is already on the stack */
    bool stopping;  /* interrupted: start nothing more */
} crawler;

static void add_url(void *ctx, const crawl_request *r);
static void task_finished(future *f, void *arg);

/* The chapter's `Task(fetcher.fetch())`. The new Task takes its first step at once, as
 * the chapter's Task does in its constructor: its request leaves now, not after the
 * loop has handled every other socket that was ready. */
static void start_task(crawler *cr, const crawl_request *r)
{
    task *t = task_new(cr->a->loop, fetch(cr->a, r, add_url, cr), r->url);
    cr->running++;
    future_add_done_callback(task_future(t), task_finished, cr);
    task_detach(t);
    task_start_now(t); /* may finish at once: every try failed before any waiting */
}

/* Fill the free slots from the FIFO; with nothing left to do, stop the loop. A Task
 * that ends at once (say on a host that does not resolve) calls back in here from
 * start_task: the outer call's loop goes on instead, so a long queue of such URLs
 * does not nest calls ever deeper. */
static void start_pending(crawler *cr)
{
    if (cr->starting)
        return;
    cr->starting = true;
    crawl_request *r;
    while (cr->running < (size_t)cr->a->opt.max_tasks && (r = jobq_pop(&cr->pending))) {
        start_task(cr, r);
        free(r);
    }
    cr->starting = false;
    if (cr->running == 0 && jobq_size(&cr->pending) == 0)
        selector_stop(cr->a->loop); /* the chapter's `stopped = True` */
}

/* A Task finished (its done-callback): its slot goes to the next URL waiting. */
static void task_finished(future *f, void *arg)
{
    (void)f;
    crawler *cr = arg;
    cr->running--;
    if (!cr->stopping)
        start_pending(cr);
}

/* The crawl core's add_url: url is new and already in seen_urls; schedule it. */
static void add_url(void *ctx, const crawl_request *r)
{
    crawler *cr = ctx;
    if (cr->running < (size_t)cr->a->opt.max_tasks)
        start_task(cr, r);
    else
        jobq_push(&cr->pending, r);
}

static int crawl_generators(app *a)
{
    crawler cr = {.a = a};
    a->dump = task_dump_all; /* kill -USR1: the task tree, as gdb's `info tasks` */
    int r = 0;
    jobq_init(&cr.pending);
    crawl_add_roots(a->crawl, add_url, &cr);
    if (cr.running)
        r = selector_run(a->loop); /* until the last Task stops it */
    if (r < 0)
        fprintf(stderr, "crawl-generators: event loop failed: %s\n", selector_error(a->loop));
    a->todo = jobq_size(&cr.pending) + cr.running;
    cr.stopping = true;
    task_free_all(); /* interrupted: abandon the fetches in flight */
    jobq_clear(&cr.pending);
    return r < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    static const app_stage stage = {
        .cli = {.prog = "crawl-generators",
                .default_transport = "raw",
                .unknown_note = "this is the chapter's stage 2: the engine's flags "
                                "(robots.txt, politeness, storage, ...) are crawl-queue's"},
        .name = "generators",
        .number = 2};
    return app_main(argc, argv, &stage, crawl_generators);
}
