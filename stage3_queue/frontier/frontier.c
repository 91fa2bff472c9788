/* frontier.c — the Frontier interface (frontier.h), and the chapter's Queue (queue.h)
 * behind it: the default Queue of crawl-queue, one FIFO in memory. */
#include "frontier.h"

#include <stdlib.h>

#include "alloc.h"
#include "queue.h"

void frontier_add(void *ctx, const crawl_request *r)
{
    frontier_put_nowait(ctx, r);
}

static void fifo_put_nowait(void *self, const crawl_request *r)
{
    queue_put_nowait(self, r);
}

static coro *fifo_get(void *self)
{
    return queue_get(self);
}

/* The chapter's task_done counts; it needs no URL. */
static void fifo_task_done(void *self, const char *url)
{
    (void)url;
    queue_task_done(self);
}

static coro *fifo_join(void *self)
{
    return queue_join(self);
}
static size_t fifo_qsize(const void *self)
{
    return queue_qsize(self);
}
static size_t fifo_unfinished(const void *self)
{
    return queue_unfinished(self);
}

static void fifo_free(void *self)
{
    if (!self)
        return;
    queue_clear(self);
    free(self);
}

static const frontier_ops fifo_ops = {
    .name = "queue",
    .takes_back = true,
    .put_nowait = fifo_put_nowait,
    .get = fifo_get,
    .task_done = fifo_task_done,
    .join = fifo_join,
    .qsize = fifo_qsize,
    .unfinished = fifo_unfinished,
    .free = fifo_free,
};

frontier queue_frontier(selector *loop)
{
    queue *q = xmalloc(sizeof *q);
    queue_init(q, loop);
    return (frontier){&fifo_ops, q};
}
