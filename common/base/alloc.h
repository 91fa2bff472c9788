/* alloc.h — the one out-of-memory policy of crawlstages.
 *
 * Every allocation in the project goes through these wrappers. None of them returns
 * NULL: when the C library cannot give the memory, the out-of-memory handler runs
 * (by default: one line on stderr naming the size, then abort()), as redis's zmalloc
 * does. A crawler that silently loses URLs or records when memory runs out would look
 * like success; dying loudly never does.
 *
 * So callers do not check the result, and the files students read have no untested
 * out-of-memory branches.
 *
 * The handler may be replaced (alloc_set_oom_handler) by a program that wants to save
 * what it can first (flush finished records, say). It must not return; if it does,
 * abort() follows anyway.
 */
#ifndef CRAWL_ALLOC_H
#define CRAWL_ALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
/* realloc(p, n * size) with the multiplication checked for overflow. */
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* A copy of the n bytes at p (not NUL-terminated). */
void *xmemdup(const void *p, size_t n);
/* Append n bytes to a growing buffer: *buf holds *len bytes in room for *cap, and grows
 * (doubling, from 256 bytes) when they do not fit. No NUL is added. */
void xappend(char **buf, size_t *len, size_t *cap, const void *data, size_t n);
/* asprintf / vasprintf that return the string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Out of memory somewhere else: a library (libcurl, libxml2) could not allocate, or
 * says so. Runs the handler as a failed xmalloc would; size 0 when unknown. */
_Noreturn void alloc_oom(size_t size);

typedef void (*alloc_oom_fn)(size_t size);
/* Called with the size that could not be had; NULL restores the default. */
void alloc_set_oom_handler(alloc_oom_fn fn);
/* The default handler: "<prog>: out of memory (N bytes)" on stderr (without the size
 * when it is 0), then abort(). */
void alloc_default_oom(size_t size);
/* The program name the default handler prints (a static string; default "crawlstages"). */
void alloc_set_progname(const char *name);

#endif
