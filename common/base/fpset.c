/* fpset.c — see fpset.h. Slot value 0 means empty; a fingerprint of 0 becomes 1. */
#include "fpset.h"

#include <stdlib.h>

#include "alloc.h"
#include "hash.h"

enum { FPSET_MIN_CAP = 64 };

struct fpset {
    uint64_t *slots;
    size_t cap; /* a power of two */
    size_t count;
};

uint64_t fpset_fingerprint(const char *str)
{
    uint64_t h = hash_str(str);
    return h ? h : 1;
}

/* The slot holding fp, or the empty slot where it belongs (the table is never full). */
static uint64_t *find(uint64_t *slots, size_t cap, uint64_t fp)
{
    size_t mask = cap - 1;
    for (size_t i = (size_t)fp & mask;; i = (i + 1) & mask)
        if (slots[i] == 0 || slots[i] == fp)
            return &slots[i];
}

static void grow(fpset *s)
{
    size_t ncap = s->cap * 2;
    uint64_t *ns = xcalloc(ncap, sizeof *ns);
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i])
            *find(ns, ncap, s->slots[i]) = s->slots[i];
    free(s->slots);
    s->slots = ns;
    s->cap = ncap;
}

fpset *fpset_new(void)
{
    fpset *s = xcalloc(1, sizeof *s);
    s->cap = FPSET_MIN_CAP;
    s->slots = xcalloc(s->cap, sizeof *s->slots);
    return s;
}

void fpset_free(fpset *s)
{
    if (!s)
        return;
    free(s->slots);
    free(s);
}

bool fpset_add_fp(fpset *s, uint64_t fp)
{
    uint64_t *sl = find(s->slots, s->cap, fp);
    if (*sl)
        return false;
    if ((s->count + 1) * 2 > s->cap) {
        grow(s);
        sl = find(s->slots, s->cap, fp);
    }
    *sl = fp;
    s->count++;
    return true;
}

bool fpset_add(fpset *s, const char *str)
{
    return fpset_add_fp(s, fpset_fingerprint(str));
}

bool fpset_has(const fpset *s, const char *str)
{
    return *find(s->slots, s->cap, fpset_fingerprint(str)) != 0;
}

size_t fpset_count(const fpset *s)
{
    return s ? s->count : 0;
}

size_t fpset_longest_probe(const fpset *s)
{
    size_t longest = 0, mask = s ? s->cap - 1 : 0;
    for (size_t i = 0; s && i < s->cap; i++) {
        if (!s->slots[i])
            continue;
        size_t probe = ((i - (size_t)s->slots[i]) & mask) + 1;
        if (probe > longest)
            longest = probe;
    }
    return longest;
}

size_t fpset_bytes(const fpset *s)
{
    return s ? s->cap * sizeof *s->slots : 0;
}
