/* fuzz_common.h — shared by the libFuzzer targets: chunk sizes taken from the input
 * itself, a growable byte record, and a check that aborts (so libFuzzer keeps the
 * input) without printing anything in the hot path. */
#ifndef CRAWL_FUZZ_COMMON_H
#define CRAWL_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An invariant that must hold: abort() gives libFuzzer a crash and the input. */
/* libFuzzer's entry point, which each target defines, ... */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* ... and its optional set-up, called once before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

/* Chunk sizes for feeding a parser: the input starts with one byte whose low 3 bits
 * say how many size bytes follow (0: no split, the whole payload in one go); each size
 * byte b means a chunk of b+1 bytes, b == 255 a chunk of 0 bytes (of 1 byte right
 * after an empty one); they are used in a cycle. The rest of the input is the payload. */
typedef struct chunker {
    const uint8_t *sizes;
    size_t nsizes, next;
    int last_zero; /* no two empty chunks in a row: the feeding always ends */
} chunker;

/* Takes the chunk spec off the front of *data. */
static inline chunker chunker_take(const uint8_t **data, size_t *size)
{
    chunker c = {0};
    if (*size == 0)
        return c;
    size_t n = (*data)[0] & 7;
    (*data)++, (*size)--;
    if (n > *size)
        n = *size;
    c.sizes = *data;
    c.nsizes = n;
    *data += n, *size -= n;
    return c;
}

/* The next chunk's length, at most left. */
static inline size_t chunker_next(chunker *c, size_t left)
{
    if (c->nsizes == 0)
        return left;
    uint8_t b = c->sizes[c->next++ % c->nsizes];
    size_t n = b != 255 ? (size_t)b + 1 : c->last_zero ? 1 : 0;
    if (n > left)
        n = left;
    c->last_zero = n == 0;
    return n;
}

/* A growable record of bytes (the callbacks' output, to compare two runs). */
typedef struct record {
    char *data;
    size_t len, cap;
} record;

static inline void record_add(record *r, const void *p, size_t n)
{
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 256;
        while (cap < r->len + n + 1)
            cap *= 2;
        char *d = realloc(r->data, cap);
        FUZZ_CHECK(d != NULL);
        r->data = d;
        r->cap = cap;
    }
    if (n)
        memcpy(r->data + r->len, p, n);
    r->len += n;
    r->data[r->len] = '\0';
}

static inline void record_adds(record *r, const char *s)
{
    record_add(r, s, strlen(s));
}

static inline int record_equal(const record *a, const record *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static inline void record_free(record *r)
{
    free(r->data);
    r->data = NULL;
    r->len = r->cap = 0;
}

#endif
