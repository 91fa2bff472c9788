/* crawler.c — crawl-generators: the chapter's stage 2, "Building Coroutines With
 * Generators", as a whole crawler. Every URL gets a Task driving a `fetch` coroutine
 * (fetch.c); the Task steps the coroutine each time the Future it waits on resolves.
 *
 * Beyond the chapter's sketch, --max-tasks caps how many Tasks run at once: URLs that
 * arrive while the cap is reached wait in a FIFO, and each finishing Task starts the
 * next. (Stage 3 replaces this bookkeeping with a queue and a fixed pool of workers.)
 */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "fetch.h"
#include "jobq.h"
#include "task.h"

typedef struct crawler {
    app *a;
    jobq pending;       /* URLs waiting for a free slot */
    size_t running;     /* Tasks alive */
    int stopping;       /* interrupted: start nothing more */
} crawler;

static void start_task(crawler *cr, const char *url, int max_redirect);
static void add_url(void *ctx, const char *url, int max_redirect);

/* A Task finished: its slot goes to the next URL waiting; the last one stops the loop. */
static void task_finished(future *f, void *arg)
{
    (void)f;
    crawler *cr = arg;
    cr->running--;
    if (cr->stopping)
        return;
    job j;
    while (cr->running < (size_t)cr->a->opt.max_tasks && jobq_pop(&cr->pending, &j)) {
        start_task(cr, j.url, j.max_redirect);
        free(j.url);
    }
    if (cr->running == 0)
        selector_stop(cr->a->loop);      /* the chapter's `stopped = True` */
}

/* The new Task takes its first step at once, as the chapter's Task does in its
 * constructor: its request leaves now, not after the loop has handled every other
 * socket that was ready. A Task started while another is being started (one that ended
 * at once, say on a host that does not resolve, starts the next) waits for the loop
 * instead, so a long queue of such URLs cannot nest deeper and deeper. */
static void start_task(crawler *cr, const char *url, int max_redirect)
{
    static int starting;
    coro *co = fetch(cr->a, url, max_redirect, add_url, cr);
    task *t = co ? task_new(cr->a->loop, co, url) : NULL;
    if (!t) {
        coro_free(co);
        crawl_record_failure(cr->a->crawl, url, "out of memory");
        return;
    }
    cr->running++;
    future_add_done_callback(task_future(t), task_finished, cr);
    task_detach(t);
    if (!starting) {
        starting = 1;
        task_start_now(t);
        starting = 0;
    }
}

/* The crawl core's add_url: seen_urls is updated; schedule the fetch. */
static void add_url(void *ctx, const char *url, int max_redirect)
{
    crawler *cr = ctx;
    if (cr->running < (size_t)cr->a->opt.max_tasks)
        start_task(cr, url, max_redirect);
    else if (!jobq_push(&cr->pending, url, max_redirect))
        crawl_record_failure(cr->a->crawl, url, "out of memory");
}

static int crawl_generators(app *a)
{
    crawler cr = {.a = a};
    jobq_init(&cr.pending);
    crawl_add_roots(a->crawl, add_url, &cr);
    if (cr.running)
        selector_run(a->loop);
    a->todo = jobq_size(&cr.pending) + cr.running;
    cr.stopping = 1;
    task_free_all();     /* interrupted: abandon the fetches in flight */
    jobq_clear(&cr.pending);
    return 0;
}

int main(int argc, char **argv)
{
    return app_main(argc, argv, "crawl-generators", "generators", "raw", crawl_generators);
}
