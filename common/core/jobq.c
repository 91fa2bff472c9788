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

static void origin_release(jobq_origin *o)
{
    if (o && --o->refs == 0)
        free(o);
}

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* r's referrer and callback as an origin: the last push's when they are the same. */
static jobq_origin *origin_of(jobq *q, const crawl_request *r)
{
    if (!r->referrer && !r->callback)
        return NULL;
    jobq_origin *o = q->last;
    if (!o || !same_text(o->referrer, r->referrer) || !same_text(o->callback, r->callback)) {
        size_t lr = r->referrer ? strlen(r->referrer) + 1 : 0;
        size_t lc = r->callback ? strlen(r->callback) + 1 : 0;
        o = xmalloc(sizeof *o + lr + lc);
        o->refs = 1; /* the queue's own, as last */
        o->referrer = lr ? memcpy(o->text, r->referrer, lr) : NULL;
        o->callback = lc ? memcpy(o->text + lr, r->callback, lc) : NULL;
        origin_release(q->last);
        q->last = o;
    }
    o->refs++;
    return o;
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
    origin_release(q->last);
    free(q->items);
    jobq_init(q);
}

static void grow(jobq *q)
{
    size_t cap = q->cap ? 2 * q->cap : 64;
    job **items = xreallocarray(NULL, cap, sizeof *items);
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
    size_t lu = strlen(r->url) + 1;
    job *j = xmalloc(sizeof *j + lu);
    j->origin = origin_of(q, r);
    j->max_redirect = r->max_redirect;
    j->depth = r->depth;
    memcpy(j->url, r->url, lu);
    q->items[(q->head + q->count) % q->cap] = j;
    q->count++;
}

crawl_request *jobq_pop(jobq *q)
{
    if (q->count == 0)
        return NULL;
    job *j = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    crawl_request view = {j->url, j->max_redirect, j->depth, j->origin ? j->origin->referrer : NULL,
                          j->origin ? j->origin->callback : NULL};
    crawl_request *r = crawl_request_dup(&view);
    origin_release(j->origin);
    free(j);
    return r;
}
