/* jobq.h — a FIFO of requests (crawl_request.h: a URL and what travels with it): the
 * chapter's queue items. A crawler keeps the URLs waiting for a free slot under
 * --max-tasks in one, or a Queue stores its items in one. A ring buffer that grows; no
 * fixed capacity. */
#ifndef CRAWL_JOBQ_H
#define CRAWL_JOBQ_H

#include <stdbool.h>
#include <stddef.h>

#include "crawl_request.h"

typedef struct jobq {
    crawl_request **items;  /* each owned by the queue while queued, by the taker after */
    size_t head, count, cap;
} jobq;

void jobq_init(jobq *q);
/* Free the queue and every request still in it. */
void jobq_clear(jobq *q);
/* Append a copy of r (out of memory ends the process: alloc.h). */
void jobq_push(jobq *q, const crawl_request *r);
/* Take the oldest request (the caller frees it, with free); NULL when empty. */
crawl_request *jobq_pop(jobq *q);
static inline size_t jobq_size(const jobq *q) { return q->count; }

#endif
