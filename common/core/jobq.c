/* jobq.c — see jobq.h. */
#include "jobq.h"

#include "alloc.h"

#include <stdlib.h>
#include <string.h>

void jobq_init(jobq *q)
{
    memset(q, 0, sizeof *q);
}

void jobq_clear(jobq *q)
{
    job j;
    while (jobq_pop(q, &j))
        free(j.url);
    free(q->items);
    jobq_init(q);
}

static void grow(jobq *q)
{
    size_t cap = q->cap ? 2 * q->cap : 64;
    job *items = xreallocarray(NULL, cap, sizeof *items);
    for (size_t i = 0; i < q->count; i++)
        items[i] = q->items[(q->head + i) % q->cap];
    free(q->items);
    q->items = items;
    q->head = 0;
    q->cap = cap;
}

void jobq_push(jobq *q, const char *url, int max_redirect)
{
    if (q->count == q->cap)
        grow(q);
    q->items[(q->head + q->count) % q->cap] = (job){xstrdup(url), max_redirect};
    q->count++;
}

bool jobq_pop(jobq *q, job *out)
{
    if (q->count == 0)
        return false;
    *out = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return true;
}
