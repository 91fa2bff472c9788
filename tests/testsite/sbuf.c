/* sbuf.c — growable byte string (see sbuf.h). */
#include "sbuf.h"

#include "alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sbuf_reserve(sbuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2)
            alloc_oom((size_t)-1);
        cap *= 2;
    }
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
}

void sbuf_add(sbuf *b, const void *data, size_t len)
{
    sbuf_reserve(b, len);
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
    if (n < 0)
        alloc_oom((size_t)-1); /* over INT_MAX bytes */
    sbuf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* "{N*c}" at s[i] (N decimal, at most 64 MiB; c any byte): its length, with N and c;
 * 0 when it is not one. */
static size_t repeat_tag(const char *s, size_t i, size_t len, size_t *count, char *c)
{
    size_t j = i + 1, n = 0;
    while (j < len && s[j] >= '0' && s[j] <= '9' && n <= (64u << 20))
        n = n * 10 + (size_t)(s[j++] - '0');
    if (j == i + 1 || n > (64u << 20) || j + 2 >= len || s[j] != '*' || s[j + 2] != '}')
        return 0;
    *count = n;
    *c = s[j + 1];
    return j + 3 - i;
}

void sbuf_add_expanded(sbuf *b, const char *s, size_t len, const char *base)
{
    static const char tag[] = "{base}", hp_tag[] = "{hostport}";
    const size_t taglen = sizeof tag - 1, hp_len = sizeof hp_tag - 1;
    const char *scheme_end = strstr(base, "://");
    const char *hostport = scheme_end ? scheme_end + 3 : base;
    size_t i = 0, from = 0;
    while (i < len) {
        size_t n = 0, count = 0;
        char c = 0;
        const char *with = NULL;
        if (s[i] != '{') {
            i++;
            continue;
        }
        if (i + taglen <= len && memcmp(s + i, tag, taglen) == 0) {
            n = taglen;
            with = base;
        } else if (i + hp_len <= len && memcmp(s + i, hp_tag, hp_len) == 0) {
            n = hp_len;
            with = hostport;
        } else if (!(n = repeat_tag(s, i, len, &count, &c))) {
            i++;
            continue;
        }
        sbuf_add(b, s + from, i - from);
        if (with) {
            sbuf_adds(b, with);
        } else {
            sbuf_reserve(b, count);
            memset(b->data + b->len, c, count);
            b->len += count;
            b->data[b->len] = '\0';
        }
        i += n;
        from = i;
    }
    sbuf_add(b, s + from, len - from);
}

char *sbuf_take(sbuf *b, size_t *len)
{
    if (!b->data) {
        sbuf_reserve(b, 0);
        b->data[0] = '\0';
    }
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
}
