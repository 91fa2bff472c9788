/* jobq.h — a FIFO of requests (crawl_request.h: a URL and what travels with it): the
 * chapter's queue items. A crawler keeps the URLs waiting for a free slot under
 * --max-tasks in one, or a Queue stores its items in one. A ring buffer that grows; no
 * fixed capacity. Queued, a request costs a few bytes and the part of its URL that
 * differs from the URL queued before it: the referrer and callback of consecutive links
 * of one page are stored once. */
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

/* The requests, packed in chunks (jobq.c). */
typedef struct jobq_chunk jobq_chunk;

typedef struct jobq {
    jobq_chunk *head, *tail; /* read at head, written at tail */
    size_t count;
    jobq_origin *last;      /* the origin of the last push (a reference of its own) */
    jobq_origin *wr_origin; /* the origin the tail's last record carries */
    char *wr_url;           /* the URL of the last push (what the next may share) */
    size_t wr_len, wr_cap;
    jobq_origin *rd_origin; /* the origin of the last record read (a reference) */
    char *rd_url;           /* the URL of the last record read */
    size_t rd_cap;
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
