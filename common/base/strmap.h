/* strmap.h — one intrusive hash table keyed by strings, in the manner of list.h: the
 * link lives inside the stored object, so adding and removing never allocate an entry
 * and the table never copies or frees a key. Chained buckets, a power of two of them,
 * doubled when there are as many entries as buckets; the hash is the keyed SipHash of
 * hash.h, since keys (host names, origins) come from strangers' links.
 *
 *   typedef struct origin { char *key; ...; strmap_node node; } origin;
 *   strmap origins;  strmap_init(&origins);
 *   strmap_node *n = strmap_find(&origins, "http://example.com:80");
 *   origin *o = n ? strmap_entry(n, origin, node) : NULL;
 *   strmap_add(&origins, &o->node, o->key);      (key: not in the table yet)
 *   strmap_remove(&origins, &o->node);
 *   strmap_clear(&origins, origin_free);          (each entry once, then empty)
 *   strmap_free(&origins);
 *
 * The key is the caller's string and must stay unchanged while its node is in a table.
 */
#ifndef CRAWL_STRMAP_H
#define CRAWL_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct strmap_node {
    struct strmap_node *next; /* in its bucket */
    uint64_t hash;            /* of key: growth never hashes again */
    const char *key;
} strmap_node;

typedef struct strmap {
    strmap_node **buckets;
    size_t nbuckets, count;
} strmap;

/* The object that holds node `n` as its member `member`. */
#define strmap_entry(n, type, member) ((type *)((char *)(n)-offsetof(type, member)))

void strmap_init(strmap *m);
/* Frees the buckets; the entries are the caller's (strmap_clear them first). */
void strmap_free(strmap *m);
strmap_node *strmap_find(const strmap *m, const char *key);
/* Adds n under key, which must not be in m yet. */
void strmap_add(strmap *m, strmap_node *n, const char *key);
/* Takes n, which is in m, out of it. */
void strmap_remove(strmap *m, strmap_node *n);
/* Takes every entry out of m, calling drop(node) for each (it may free the entry). */
void strmap_clear(strmap *m, void (*drop)(strmap_node *n));

#endif
