/* strmap.c — see strmap.h. */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hash.h"

enum { STRMAP_FIRST_BUCKETS = 16 };

void strmap_init(strmap *m)
{
    m->nbuckets = STRMAP_FIRST_BUCKETS;
    m->buckets = xcalloc(m->nbuckets, sizeof *m->buckets);
    m->count = 0;
}

void strmap_free(strmap *m)
{
    free(m->buckets);
    m->buckets = NULL;
    m->nbuckets = m->count = 0;
}

static strmap_node **bucket(const strmap *m, uint64_t hash)
{
    return &m->buckets[hash & (m->nbuckets - 1)];
}

strmap_node *strmap_find(const strmap *m, const char *key)
{
    uint64_t h = hash_str(key);
    for (strmap_node *n = *bucket(m, h); n; n = n->next)
        if (n->hash == h && strcmp(n->key, key) == 0)
            return n;
    return NULL;
}

/* Twice the buckets, each chain spread over its two new buckets. */
static void grow(strmap *m)
{
    strmap old = *m;
    m->nbuckets *= 2;
    m->buckets = xcalloc(m->nbuckets, sizeof *m->buckets);
    for (size_t i = 0; i < old.nbuckets; i++)
        while (old.buckets[i]) {
            strmap_node *n = old.buckets[i];
            old.buckets[i] = n->next;
            strmap_node **b = bucket(m, n->hash);
            n->next = *b;
            *b = n;
        }
    free(old.buckets);
}

void strmap_add(strmap *m, strmap_node *n, const char *key)
{
    if (m->count >= m->nbuckets)
        grow(m);
    n->key = key;
    n->hash = hash_str(key);
    strmap_node **b = bucket(m, n->hash);
    n->next = *b;
    *b = n;
    m->count++;
}

void strmap_remove(strmap *m, strmap_node *n)
{
    strmap_node **p = bucket(m, n->hash);
    while (*p != n)
        p = &(*p)->next;
    *p = n->next;
    n->next = NULL;
    m->count--;
}

void strmap_clear(strmap *m, void (*drop)(strmap_node *n))
{
    for (size_t i = 0; i < m->nbuckets; i++)
        while (m->buckets[i]) {
            strmap_node *n = m->buckets[i];
            m->buckets[i] = n->next;
            n->next = NULL;
            m->count--;
            drop(n);
        }
}
