/* crawler.c — crawl-queue: the chapter's final crawler, "Coordinating Coroutines".
 *
 * A Crawler puts its roots in a joinable Queue, starts max_tasks worker coroutines at
 * once (coroutines are cheap), and waits on the queue's join. Each worker loops
 * forever: get a (url, max_redirect) pair, fetch it, task_done. fetch is stage 2's
 * coroutine (stage2_generators/fetch.c): retries, then the shared crawl core records
 * the response and, through put_url, puts each new link or redirect target back in
 * the queue — the redirect join happens there, against seen_urls. When join returns,
 * crawl cancels the workers, which are all waiting in get.
 *
 * HTTP goes through libcurl's multi interface by default (the chapter's aiohttp:
 * connection reuse, gzip, HTTPS); --transport raw runs the same workers over
 * stage 2's socket coroutines.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "fetch.h"
#include "progress.h"
#include "queue.h"
#include "task.h"

typedef struct crawler {
    app *a;
    queue q;
    task **workers;
} crawler;

/* The crawl core's add_url: seen_urls already has it; the queue gets it. */
static void put_url(void *ctx, const char *url, int max_redirect)
{
    crawler *cr = ctx;
    queue_put_nowait(&cr->q, url, max_redirect);
}

/* ---- work: get, fetch, task_done, forever ---- */

typedef struct {
    coro co;
    crawler *cr;
    char *url;
    int max_redirect;
} work_frame;

static int work_body(coro *co)
{
    work_frame *f = (work_frame *)co;
    CORO_BEGIN(co);
    for (;;) {
        AWAIT(co, queue_get(&f->cr->q));
        f->url = co->value.p;
        f->max_redirect = (int)co->value.n;

        /* Download the page and put its new links in the queue. */
        AWAIT(co, fetch(f->cr->a, f->url, f->max_redirect, put_url, f->cr));
        free(f->url);
        f->url = NULL;
        queue_task_done(&f->cr->q);
    }
    CORO_END(co);
}

static void work_finally(coro *co)
{
    free(((work_frame *)co)->url);
}

static const coro_def work_def = {"work", __FILE__, work_body, work_finally,
                                  sizeof(work_frame)};

static coro *work(crawler *cr)
{
    work_frame *f = (work_frame *)coro_new(&work_def);
    if (f)
        f->cr = cr;
    return f ? &f->co : NULL;
}

/* ---- crawl: start the workers, join the queue, cancel the workers ---- */

typedef struct {
    coro co;
    crawler *cr;
} crawl_frame;

static int crawl_body(coro *co)
{
    crawl_frame *f = (crawl_frame *)co;
    crawler *cr = f->cr;
    int n = cr->a->opt.max_tasks;
    CORO_BEGIN(co);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "work-%d", i);
        cr->workers[i] = task_new(cr->a->loop, work(cr), name);
    }

    /* When all work is done, exit. */
    AWAIT(co, queue_join(&cr->q));
    for (int i = 0; i < n; i++)
        task_cancel(cr->workers[i]);
    CORO_END(co);
}

static const coro_def crawl_def = {"crawl", __FILE__, crawl_body, NULL, sizeof(crawl_frame)};

static int crawl_queue(app *a)
{
    crawler cr = {.a = a};
    cr.workers = calloc((size_t)a->opt.max_tasks, sizeof *cr.workers);
    crawl_frame *main_coro = (crawl_frame *)coro_new(&crawl_def);
    if (!cr.workers || !main_coro) {
        free(cr.workers);
        free(main_coro);
        fprintf(stderr, "crawl-queue: out of memory for %d workers\n", a->opt.max_tasks);
        return -1;
    }
    main_coro->cr = &cr;
    queue_init(&cr.q, a->loop);
    crawl_add_roots(a->crawl, put_url, &cr);

    progress *p = progress_start(a, &cr.q);
    task *t = task_new(a->loop, &main_coro->co, "crawl");
    run_until_complete(a->loop, t);
    progress_stop(p);

    a->todo = queue_qsize(&cr.q) + crawl_in_flight(a->crawl);
    task_free_all();     /* the workers, and everything still running if interrupted */
    queue_clear(&cr.q);
    free(cr.workers);
    return 0;
}

int main(int argc, char **argv)
{
    return app_main(argc, argv, "crawl-queue", "queue", "curl", crawl_queue);
}
