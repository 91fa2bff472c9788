/* sbuf.h — a growable byte string for building responses and page bodies. Out of
 * memory ends the process (alloc.h), so appends cannot fail. */
#ifndef TESTSITE_SBUF_H
#define TESTSITE_SBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sbuf {
    char *data; /* always NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
} sbuf;

void sbuf_reserve(sbuf *b, size_t extra);
void sbuf_add(sbuf *b, const void *data, size_t len);
void sbuf_adds(sbuf *b, const char *s);
void sbuf_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s with every "{base}" replaced by base ("http://127.0.0.1:PORT"), every
 * "{hostport}" by base without its scheme ("127.0.0.1:PORT") and every "{N*c}" by N
 * copies of the byte c (N up to 64 MiB: "{1048576*a}" is a 1 MB line). */
void sbuf_add_expanded(sbuf *b, const char *s, size_t len, const char *base);
/* Hand over the bytes (never NULL; "" when nothing was added). */
char *sbuf_take(sbuf *b, size_t *len);
void sbuf_free(sbuf *b);

#endif
