/* memcount.c — see memcount.h. */
#include "memcount.h"

#include <malloc.h>
#include <stdlib.h>

#include "alloc.h"

long memcount_now, memcount_peak;

static void count(long by)
{
    memcount_now += by;
    if (memcount_now > memcount_peak)
        memcount_peak = memcount_now;
}

void *memcount_malloc(size_t n)
{
    void *p = xmalloc(n);
    count((long)malloc_usable_size(p));
    return p;
}

void *memcount_realloc(void *q, size_t n)
{
    if (q)
        count(-(long)malloc_usable_size(q));
    void *p = xrealloc(q, n);
    count((long)malloc_usable_size(p));
    return p;
}

char *memcount_strdup(const char *s)
{
    char *p = xstrdup(s);
    count((long)malloc_usable_size(p));
    return p;
}

void memcount_free(void *p)
{
    if (p)
        count(-(long)malloc_usable_size(p));
    free(p);
}
