/* jobq.c — see jobq.h; and crawl_request_dup (crawl_request.h). */
#include "jobq.h"

#include "alloc.h"

#include <stdlib.h>
#include <string.h>

crawl_request *crawl_request_dup(const crawl_request *r)
{
    size_t lu = strlen(r->url) + 1;
    size_t lr = r->referrer ? strlen(r->referrer) + 1 : 0;
    size_t lc = r->callback ? strlen(r->callback) + 1 : 0;
    crawl_request *c = xmalloc(sizeof *c + lu + lr + lc);
    char *p = (char *)(c + 1);
    *c = *r;
    c->url = memcpy(p, r->url, lu);
    c->referrer = lr ? memcpy(p + lu, r->referrer, lr) : NULL;
    c->callback = lc ? memcpy(p + lu + lr, r->callback, lc) : NULL;
    return c;
}

void jobq_init(jobq *q)
{
    memset(q, 0, sizeof *q);
}

void jobq_clear(jobq *q)
{
    crawl_request *r;
    while ((r = jobq_pop(q)))
        free(r);
    free(q->items);
    jobq_init(q);
}

static void grow(jobq *q)
{
    size_t cap = q->cap ? 2 * q->cap : 64;
    crawl_request **items = xreallocarray(NULL, cap, sizeof *items);
    for (size_t i = 0; i < q->count; i++)
        items[i] = q->items[(q->head + i) % q->cap];
    free(q->items);
    q->items = items;
    q->head = 0;
    q->cap = cap;
}

void jobq_push(jobq *q, const crawl_request *r)
{
    if (q->count == q->cap)
        grow(q);
    q->items[(q->head + q->count) % q->cap] = crawl_request_dup(r);
    q->count++;
}

crawl_request *jobq_pop(jobq *q)
{
    if (q->count == 0)
        return NULL;
    crawl_request *r = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return r;
}
