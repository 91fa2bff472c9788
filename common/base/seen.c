/* seen.c — the seen_urls set: open addressing with linear probing over a power-of-two
 * table of (hash, pointer) slots, FNV-1a 64-bit hashes. The strings themselves are
 * copied into a chunked arena, so a million URLs cost a few hundred mallocs, not a
 * million. */
#include "seen.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SEEN_MIN_CAP = 64, ARENA_CHUNK = 256 * 1024 };

typedef struct {
    uint64_t hash;   /* kept beside the pointer: growth never re-hashes, and a */
    const char *str; /* probe only calls strcmp when the hashes agree. NULL: empty. */
} slot;

typedef struct chunk {
    struct chunk *next;
    size_t used, size;
    char data[]; /* size bytes */
} chunk;

struct seen_set {
    slot *slots;
    size_t cap; /* a power of two */
    size_t count;
    chunk *arena; /* newest chunk first */
};

static uint64_t fnv1a(const char *s, size_t *len)
{
    uint64_t h = 14695981039346656037ULL;
    const unsigned char *p = (const unsigned char *)s;
    for (; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    *len = (size_t)(p - (const unsigned char *)s);
    return h;
}

/* Copy n bytes plus a NUL into the arena; a string longer than a chunk gets a chunk
 * of its own. */
static const char *arena_copy(seen_set *s, const char *str, size_t n)
{
    chunk *c = s->arena;
    if (!c || c->size - c->used < n + 1) {
        size_t size = n + 1 > ARENA_CHUNK ? n + 1 : ARENA_CHUNK;
        c = malloc(sizeof(chunk) + size);
        if (!c)
            return NULL;
        c->size = size;
        c->used = 0;
        c->next = s->arena;
        s->arena = c;
    }
    char *dst = c->data + c->used;
    memcpy(dst, str, n + 1);
    c->used += n + 1;
    return dst;
}

/* The slot holding str, or the empty slot where it belongs. The table is never full
 * (load <= 0.7), so the probe ends. */
static slot *find_slot(slot *slots, size_t cap, uint64_t hash, const char *str)
{
    size_t mask = cap - 1;
    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        slot *sl = &slots[i];
        if (!sl->str || (sl->hash == hash && strcmp(sl->str, str) == 0))
            return sl;
    }
}

static int grow(seen_set *s)
{
    size_t ncap = s->cap * 2;
    slot *ns = calloc(ncap, sizeof(slot));
    if (!ns)
        return -1;
    size_t mask = ncap - 1;
    for (size_t i = 0; i < s->cap; i++) {
        slot *old = &s->slots[i];
        if (!old->str)
            continue;
        size_t j = (size_t)old->hash & mask;
        while (ns[j].str) /* all strings are distinct: just find a hole */
            j = (j + 1) & mask;
        ns[j] = *old;
    }
    free(s->slots);
    s->slots = ns;
    s->cap = ncap;
    return 0;
}

seen_set *seen_new(void)
{
    seen_set *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->cap = SEEN_MIN_CAP;
    s->slots = calloc(s->cap, sizeof(slot));
    if (!s->slots) {
        free(s);
        return NULL;
    }
    return s;
}

void seen_free(seen_set *s)
{
    if (!s)
        return;
    chunk *c = s->arena;
    while (c) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
    free(s->slots);
    free(s);
}

bool seen_add(seen_set *s, const char *str)
{
    if (!s || !str)
        return false;
    size_t len;
    uint64_t h = fnv1a(str, &len);
    slot *sl = find_slot(s->slots, s->cap, h, str);
    if (sl->str)
        return false;
    /* Keep the load factor at or below 0.7. */
    if ((s->count + 1) * 10 > s->cap * 7) {
        if (grow(s) != 0)
            return false;
        sl = find_slot(s->slots, s->cap, h, str);
    }
    const char *copy = arena_copy(s, str, len);
    if (!copy)
        return false;
    sl->hash = h;
    sl->str = copy;
    s->count++;
    return true;
}

bool seen_has(const seen_set *s, const char *str)
{
    if (!s || !str)
        return false;
    size_t len;
    uint64_t h = fnv1a(str, &len);
    return find_slot(s->slots, s->cap, h, str)->str != NULL;
}

size_t seen_count(const seen_set *s)
{
    return s ? s->count : 0;
}
