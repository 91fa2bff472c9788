/* main.c — crawl-callbacks: the chapter's stage 1, "Programming With Callbacks", as a
 * whole crawler. The chapter's globals are here: urls_todo (the URLs waiting for a
 * Fetcher plus the Fetchers alive), seen_urls (kept by the crawl core, which calls
 * add_url only for new URLs), and `stopped`, set when urls_todo is empty.
 *
 * Beyond the chapter's sketch, which starts a Fetcher per link with no cap,
 * --max-tasks caps the Fetchers alive at once: URLs that arrive while the cap is
 * reached wait in a FIFO, and each finishing Fetcher starts the next.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "fetcher.h"
#include "jobq.h"

typedef struct crawler {
    app *a;
    jobq waiting;  /* urls_todo, part one: no Fetcher yet */
    size_t active; /* urls_todo, part two: the Fetchers at work (fetcher.c lists them) */
    bool starting; /* start_waiting is already on the stack */
} crawler;

static void add_url(void *ctx, const crawl_request *r);
static void fetcher_done(Fetcher *f, void *ctx);

/* The chapter's `Fetcher(link).fetch()`. */
static void start_fetcher(crawler *cr, const crawl_request *r)
{
    Fetcher *f = fetcher_new(cr->a, r, add_url, fetcher_done, cr);
    cr->active++;
    fetch(f); /* may finish at once: every try failed before any waiting */
}

/* Fill the free slots from the FIFO; with nothing left to do, stop the loop. A Fetcher
 * that fails at once calls back in here from start_fetcher: the outer call's loop
 * goes on instead, so a long queue of such URLs does not nest calls ever deeper. */
static void start_waiting(crawler *cr)
{
    if (cr->starting)
        return;
    cr->starting = true;
    crawl_request *r;
    while (cr->active < (size_t)cr->a->opt.max_tasks && (r = jobq_pop(&cr->waiting))) {
        start_fetcher(cr, r);
        free(r);
    }
    cr->starting = false;
    if (cr->active == 0 && jobq_size(&cr->waiting) == 0)
        selector_stop(cr->a->loop); /* urls_todo is empty: the chapter's stopped = True */
}

/* A Fetcher recorded its URL (the chapter's urls_todo.remove(self.url)). */
static void fetcher_done(Fetcher *f, void *ctx)
{
    crawler *cr = ctx;
    cr->active--;
    fetcher_free(f);
    start_waiting(cr);
}

/* The crawl core's add_url: url is new and already in seen_urls; schedule it. */
static void add_url(void *ctx, const crawl_request *r)
{
    crawler *cr = ctx;
    if (cr->active < (size_t)cr->a->opt.max_tasks)
        start_fetcher(cr, r);
    else
        jobq_push(&cr->waiting, r);
}

static int crawl_callbacks(app *a)
{
    crawler cr = {.a = a};
    a->dump = fetcher_dump_all; /* kill -USR1: the live Fetchers, as gdb's `info fetchers` */
    int r = 0;
    jobq_init(&cr.waiting);
    crawl_add_roots(a->crawl, add_url, &cr);
    if (cr.active)
        r = selector_run(a->loop); /* the chapter's loop(): until stopped */
    if (r < 0)
        fprintf(stderr, "crawl-callbacks: event loop failed: %s\n", selector_error(a->loop));
    a->todo = jobq_size(&cr.waiting) + cr.active;
    /* Interrupted: abandon the Fetchers in flight; they are not recorded. */
    fetcher_free_all();
    jobq_clear(&cr.waiting);
    return r < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    static const app_stage stage = {
        .cli = {.prog = "crawl-callbacks",
                .default_transport = "raw",
                .unknown_note = "this is the chapter's stage 1: the engine's flags "
                                "(robots.txt, politeness, storage, ...) are crawl-queue's"},
        .name = "callbacks",
        .number = 1};
    return app_main(argc, argv, &stage, crawl_callbacks);
}
