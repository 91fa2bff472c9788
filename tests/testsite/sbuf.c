/* sbuf.c — growable byte string (see sbuf.h). */
#include "sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool sbuf_reserve(sbuf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void sbuf_add(sbuf *b, const void *data, size_t len)
{
    if (!sbuf_reserve(b, len))
        return;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void sbuf_adds(sbuf *b, const char *s)
{
    sbuf_add(b, s, strlen(s));
}

void sbuf_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !sbuf_reserve(b, (size_t)n)) {
        b->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sbuf_add_expanded(sbuf *b, const char *s, size_t len, const char *base)
{
    static const char tag[] = "{base}";
    const size_t taglen = sizeof tag - 1;
    size_t i = 0, from = 0;
    while (i + taglen <= len) {
        if (s[i] == '{' && memcmp(s + i, tag, taglen) == 0) {
            sbuf_add(b, s + from, i - from);
            sbuf_adds(b, base);
            i += taglen;
            from = i;
        } else {
            i++;
        }
    }
    sbuf_add(b, s + from, len - from);
}

char *sbuf_take(sbuf *b, size_t *len)
{
    if (b->failed) {
        sbuf_free(b);
        return NULL;
    }
    if (!b->data && !sbuf_reserve(b, 0))
        return NULL;
    char *p = b->data;
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void sbuf_free(sbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}
