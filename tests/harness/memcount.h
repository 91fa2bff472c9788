/* memcount.h — counts what a library allocates, to measure its peak: allocation
 * functions over alloc.h's that keep a running total of the usable sizes. Installed
 * around the code measured, e.g. for libxml2:
 *
 *   xmlMemSetup(memcount_free, memcount_malloc, memcount_realloc, memcount_strdup);
 *   memcount_now = memcount_peak = 0;
 *   ... parse ...
 *   xmlMemSetup(free, xmalloc, xrealloc, xstrdup);     (libmem.c's)
 *   assert_true(memcount_peak < BOUND);
 *
 * Blocks allocated before and freed during the measure count negative: harmless for
 * the peak. Not thread-safe (one test thread). */
#ifndef CRAWL_TEST_MEMCOUNT_H
#define CRAWL_TEST_MEMCOUNT_H

#include <stddef.h>

extern long memcount_now, memcount_peak;

void *memcount_malloc(size_t n);
void *memcount_realloc(void *q, size_t n);
char *memcount_strdup(const char *s);
void memcount_free(void *p);

#endif
