/* jobq.h — a FIFO of (url, max_redirect) pairs: the chapter's queue items. A crawler
 * keeps the URLs waiting for a free slot under --max-tasks in one, or a Queue stores
 * its items in one. A ring buffer that grows; no fixed capacity. */
#ifndef CRAWL_JOBQ_H
#define CRAWL_JOBQ_H

#include <stdbool.h>
#include <stddef.h>

typedef struct job {
    char *url;              /* owned by the queue while queued, by the taker after */
    int max_redirect;
} job;

typedef struct jobq {
    job *items;
    size_t head, count, cap;
} jobq;

void jobq_init(jobq *q);
/* Free the queue and every URL still in it. */
void jobq_clear(jobq *q);
/* Append a copy of url (out of memory ends the process: alloc.h). */
void jobq_push(jobq *q, const char *url, int max_redirect);
/* Take the oldest job; the caller frees out->url. False when empty. */
bool jobq_pop(jobq *q, job *out);
static inline size_t jobq_size(const jobq *q) { return q->count; }

#endif
