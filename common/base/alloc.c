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
    int n = size ? snprintf(line, sizeof line, "%s: out of memory (%zu bytes)\n", progname, size)
                 : snprintf(line, sizeof line, "%s: out of memory\n", progname);
    if (n > 0) {
        ssize_t w =
            write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w;
    }
    abort();
}

void alloc_oom(size_t size)
{
    oom_handler(size);
    abort(); /* a handler must not return */
}

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        alloc_oom(size);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        alloc_oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        alloc_oom(size);
    return q;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        alloc_oom(SIZE_MAX);
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

void xappend(char **buf, size_t *len, size_t *cap, const void *data, size_t n)
{
    if (n > SIZE_MAX / 2 - *len)
        alloc_oom(SIZE_MAX);
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < *len + n)
            c *= 2;
        *buf = xrealloc(*buf, c);
        *cap = c;
    }
    if (n)
        memcpy(*buf + *len, data, n);
    *len += n;
}

void *xmemdup(const void *p, size_t n)
{
    void *d = xmalloc(n);
    if (n)
        memcpy(d, p, n);
    return d;
}

char *xvasprintf(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0) { /* a bad format or a length past INT_MAX: not memory */
        va_end(again);
        fprintf(stderr, "%s: cannot format '%s'\n", progname, fmt);
        abort();
    }
    char *s = xmalloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    return s;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = xvasprintf(fmt, ap);
    va_end(ap);
    return s;
}
