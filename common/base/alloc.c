/* alloc.c — see alloc.h. */
#include "alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *progname = "crawlstages";
static alloc_oom_fn oom_handler = alloc_default_oom;

void alloc_set_progname(const char *name)
{
    progname = name ? name : "crawlstages";
}

void alloc_set_oom_handler(alloc_oom_fn fn)
{
    oom_handler = fn ? fn : alloc_default_oom;
}

void alloc_default_oom(size_t size)
{
    /* No stdio buffers: the heap is what just failed. */
    char line[160];
    int n = snprintf(line, sizeof line, "%s: out of memory (%zu bytes)\n", progname, size);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n
                                                                     : sizeof line - 1);
        (void)w;
    }
    abort();
}

static void oom(size_t size)
{
    oom_handler(size);
    abort();            /* a handler must not return */
}

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        oom(size);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        oom(size);
    return q;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        oom(SIZE_MAX);
    return xrealloc(p, n * size);
}

char *xstrdup(const char *s)
{
    return xmemdup(s, strlen(s) + 1);
}

char *xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = xmalloc(len + 1);
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

void *xmemdup(const void *p, size_t n)
{
    void *d = xmalloc(n);
    if (n)
        memcpy(d, p, n);
    return d;
}
