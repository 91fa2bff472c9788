/* seen.c — the seen_urls set: open addressing with linear probing over a power-of-two
 * table of (hash, pointer) slots, keyed SipHash (hash.h). The strings themselves are
 * copied into a chunked arena whose chunks grow from 1 KB to 256 KB, so a set of a few
 * links costs little and a million URLs cost a few hundred mallocs, not a million. */
#include "seen.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hash.h"

enum { SEEN_MIN_CAP = 64, ARENA_FIRST = 1024, ARENA_CHUNK = 256 * 1024 };

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

/* Copy n bytes plus a NUL into the arena. Each chunk is twice the last, up to
 * ARENA_CHUNK; a string longer than that gets a chunk of its own. */
static const char *arena_copy(seen_set *s, const char *str, size_t n)
{
    chunk *c = s->arena;
    if (!c || c->size - c->used < n + 1) {
        size_t size = !c ? ARENA_FIRST : c->size < ARENA_CHUNK ? 2 * c->size : ARENA_CHUNK;
        if (size < n + 1)
            size = n + 1;
        c = xmalloc(sizeof(chunk) + size);
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

static void grow(seen_set *s)
{
    size_t ncap = s->cap * 2;
    slot *ns = xcalloc(ncap, sizeof(slot));
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
}

seen_set *seen_new(void)
{
    seen_set *s = xcalloc(1, sizeof(*s));
    s->cap = SEEN_MIN_CAP;
    s->slots = xcalloc(s->cap, sizeof(slot));
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

const char *seen_intern(seen_set *s, const char *str, bool *added)
{
    *added = false;
    if (!s || !str)
        return NULL;
    size_t len = strlen(str);
    uint64_t h = hash_bytes(str, len);
    slot *sl = find_slot(s->slots, s->cap, h, str);
    if (sl->str)
        return sl->str;
    /* Keep the load factor at or below 0.7. */
    if ((s->count + 1) * 10 > s->cap * 7) {
        grow(s);
        sl = find_slot(s->slots, s->cap, h, str);
    }
    sl->hash = h;
    sl->str = arena_copy(s, str, len);
    s->count++;
    *added = true;
    return sl->str;
}

bool seen_add(seen_set *s, const char *str)
{
    bool added;
    seen_intern(s, str, &added);
    return added;
}

bool seen_has(const seen_set *s, const char *str)
{
    if (!s || !str)
        return false;
    return find_slot(s->slots, s->cap, hash_str(str), str)->str != NULL;
}

size_t seen_count(const seen_set *s)
{
    return s ? s->count : 0;
}

size_t seen_longest_probe(const seen_set *s)
{
    size_t longest = 0, mask = s ? s->cap - 1 : 0;
    for (size_t i = 0; s && i < s->cap; i++) {
        if (!s->slots[i].str)
            continue;
        size_t probe = ((i - (size_t)s->slots[i].hash) & mask) + 1;
        if (probe > longest)
            longest = probe;
    }
    return longest;
}
