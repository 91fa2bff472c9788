/* progress.c — see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "alloc.h"

#define PROGRESS_EVERY_MS 250

struct progress {
    app *a;
    size_t (*queued)(const void *ctx);     /* the Queue's size */
    const void *ctx;
    sel_timer *timer;
    uint64_t t0;
};

static void show(selector *s, void *arg)
{
    progress *p = arg;
    uint64_t now = selector_now_ms(s);
    size_t done = crawl_done_count(p->a->crawl);
    double secs = (double)(now - p->t0) / 1000.0;
    fprintf(stderr, "\r\033[K%zu done, %zu in flight, %zu queued, %.0f urls/sec", done,
            crawl_in_flight(p->a->crawl), p->queued(p->ctx), secs > 0 ? done / secs : 0.0);
    fflush(stderr);
    p->timer = selector_call_later(s, PROGRESS_EVERY_MS, show, p);
}

progress *progress_start(app *a, size_t (*queued)(const void *ctx), const void *ctx)
{
    if (a->opt.quiet || !isatty(STDERR_FILENO))
        return NULL;
    progress *p = xcalloc(1, sizeof *p);
    p->a = a;
    p->queued = queued;
    p->ctx = ctx;
    p->t0 = selector_now_ms(a->loop);
    p->timer = selector_call_later(a->loop, PROGRESS_EVERY_MS, show, p);
    return p;
}

void progress_stop(progress *p)
{
    if (!p)
        return;
    if (p->timer)
        selector_cancel(p->a->loop, p->timer);
    fputs("\r\033[K", stderr);
    fflush(stderr);
    free(p);
}
