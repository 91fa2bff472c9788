/* jobq.h — a FIFO of requests (crawl_request.h: a URL and what travels with it): the
 * chapter's queue items. A crawler keeps the URLs waiting for a free slot under
 * --max-tasks in one, or a Queue stores its items in one. A ring buffer that grows; no
 * fixed capacity. Queued, a request costs its URL and a few words: the referrer of
 * consecutive links of one page is stored once. */
#ifndef CRAWL_JOBQ_H
#define CRAWL_JOBQ_H

#include <stdbool.h>
#include <stddef.h>

#include "crawl_request.h"

/* Where queued requests were found: a referrer and a callback, shared by the
 * requests of one queue put one after the other with the same (a page's links are),
 * stored once and counted. */
typedef struct jobq_origin {
    size_t refs;
    const char *referrer; /* into text, or NULL */
    const char *callback; /* into text, or NULL */
    char text[];
} jobq_origin;

/* A request while queued, compact: one allocation, its URL after it. */
typedef struct job {
    jobq_origin *origin; /* NULL: no referrer, no callback */
    int max_redirect;
    int depth;
    char url[];
} job;

typedef struct jobq {
    job **items;
    size_t head, count, cap;
    jobq_origin *last; /* the origin of the last push (a reference of its own) */
} jobq;

void jobq_init(jobq *q);
/* Free the queue and every request still in it. */
void jobq_clear(jobq *q);
/* Append a copy of r (out of memory ends the process: alloc.h). */
void jobq_push(jobq *q, const crawl_request *r);
/* Take the oldest request, as one allocation (crawl_request_dup: the caller frees it,
 * with free); NULL when empty. */
crawl_request *jobq_pop(jobq *q);
static inline size_t jobq_size(const jobq *q)
{
    return q->count;
}

#endif
